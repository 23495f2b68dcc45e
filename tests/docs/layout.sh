# SPDX-License-Identifier: MIT
# Sourced by tests/docs/run.sh. docs/hacking.md's layout ("## Where things
# live") names every product source, so a newcomer finds each file there:
#  1. every .c under agents/, cmd/, common/ and orchestrator/, and every
#     header there with no .c of its own name, stands under its folder;
#  2. every file the layout names exists.
# In the layout's code block a line whose first word ends in "/" opens a
# folder; a word ending in .c or .h below it (or after it on its line)
# names FOLDER/WORD; a word with a "/" in it names that path.
layout_names() {
	awk '/^## Where things live/ { on = 1; next } /^## / { on = 0 }
		on && /^```/ { inblock = !inblock; next }
		on && inblock {
			for (i = 1; i <= NF; i++) {
				w = $i; gsub(/[`(),;:]/, "", w)
				if (i == 1 && w ~ /\/$/) { dir = w; continue }
				if (w !~ /^[A-Za-z0-9_.\/-]+\.[ch]$/) continue
				if (w ~ /\//) print w; else if (dir != "") print dir w
			}
		}' docs/hacking.md | sort -u
}
layout_sources() {
	local f
	git ls-files 'agents/*.[ch]' 'cmd/*.[ch]' 'common/*.[ch]' 'orchestrator/*.[ch]' |
		while read -r f; do
			case $f in *.h) [ -f "${f%.h}.c" ] && continue ;; esac
			echo "$f"
		done | sort -u
}
listed=$(layout_names)
check "docs/hacking.md's layout names every product source" "" \
	"$(comm -23 <(layout_sources) <(echo "$listed") | tr '\n' ' ')"
check "every file docs/hacking.md's layout names exists" "" \
	"$(echo "$listed" | while read -r f; do [ -n "$f" ] && [ ! -f "$f" ] && printf '%s ' "$f"; done)"
