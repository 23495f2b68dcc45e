# SPDX-License-Identifier: MIT
#
# The allow lists of make lint's rules (scripts/sizes.allow,
# scripts/callcircles.allow): what still breaks a rule, one key a line
# ("#" starts a comment), kept until it is fixed. A list only shrinks: a
# key that no longer breaks the rule must leave it. Source it, then:
#
#   allow_check LIST NAME BREACH GONE < FOUND
#
# FOUND holds one line per breach, "KEY<tab>LINE". Prints "known: LINE"
# for a listed key, "BREACH: LINE" for one that is not, and "NAME: 'KEY'
# GONE: remove it from the list" for a listed key that FOUND lacks; returns
# 1 when it printed any but "known:" lines, 2 when LIST cannot be read.

allow_check() {
	local list=$1 name=$2 breach=$3 gone=$4 found allowed keys key line rc=0

	allowed=$(sed 's/[[:space:]]*#.*//; s/[[:space:]]*$//; /^$/d' "$list") || return 2
	found=$(cat)
	keys=$(cut -f1 <<< "$found")
	while IFS=$'\t' read -r key line; do
		[ -n "$key" ] || continue
		if grep -qxF -- "$key" <<< "$allowed"; then
			echo "known: $line"
		else
			echo "$breach: $line"
			rc=1
		fi
	done <<< "$found"
	while IFS= read -r key; do
		[ -n "$key" ] || continue
		if ! grep -qxF -- "$key" <<< "$keys"; then
			echo "$name: '$key' $gone: remove it from the list"
			rc=1
		fi
	done <<< "$allowed"
	return "$rc"
}
