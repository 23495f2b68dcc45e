# SPDX-License-Identifier: MIT
# Sourced by tests/docs/run.sh. docs/exit-codes.md is the one place exit codes are documented (issue 12,
# point 8). Checks, for llmnet (enum ln_exit, common/error.h) and for
# llmnet-agent (enum ln_agent_exit, common/proto.h):
#  1. every code the enum defines is a row of the page's table, and every
#     row is a code the enum defines;
#  2. every defined code is used by the program (a documented code nothing
#     returns is a stale promise);
#  3. no program exits with a bare number (exit(3)): codes go through the
#     enums (an _exit() in a forked child is the child's status, not the
#     program's: the agent's exec child exits 127 when execve fails);
#  4. no other page carries its own exit-code table; the man page's EXIT
#     STATUS lists exactly llmnet's codes.
page=docs/exit-codes.md

# "NAME VALUE" lines of an enum's NAME = VALUE members.
enum_codes() { # FILE ENUM PREFIX
	sed -n "/^enum $2 {/,/^};/p" "$1" |
		sed -n "s/^[[:space:]]*\($3[A-Z_]*\) = \([0-9]*\),.*/\1 \2/p"
}

# The code column of the table under heading "## SECTION" of the page.
doc_codes() { # SECTION
	awk -v h="## $1" '$0 == h { on = 1; next } /^## / { on = 0 }
		on && /^\| [0-9]+ \|/ { print $2 }' "$page" | sort -n
}

check_program() { # NAME HEADER ENUM PREFIX SOURCES...
	local name=$1 header=$2 enum=$3 prefix=$4 defs code sym users
	shift 4
	defs=$(enum_codes "$header" "$enum" "$prefix")
	if [ -z "$defs" ]; then
		fail "$name: no $prefix* codes found in $header (enum $enum)"
		return
	fi
	check "$name: the codes of enum $enum are the rows of $page (## $name)" \
		"$(awk '{ print $2 }' <<< "$defs" | sort -n | tr '\n' ' ')" \
		"$(doc_codes "$name" | tr '\n' ' ')"
	while read -r sym code; do
		users=$(grep -rlw "$sym" "$@" --include='*.c' | head -1)
		if [ -n "$users" ]; then
			ok "$name: $sym ($code) is used"
		else
			fail "$name: $sym ($code) is documented but nothing in $* returns it"
		fi
	done <<< "$defs"
	users=$(grep -rnE '(^|[^a-z_])exit\( *[0-9]+ *\)' "$@" --include='*.c')
	check "$name: no bare exit(N) in $*" "" "$users"
}

check_program llmnet common/error.h ln_exit LN_EXIT_ cmd orchestrator common
check_program llmnet-agent common/proto.h ln_agent_exit LN_AGENT_EXIT_ agents/agent common

# One place: no other page has a table keyed by exit code.
others=$(grep -lE '^\| *(code|exit|status)[a-z ]* *\| *meaning' docs/*.md README.md |
	grep -vx "$page")
check "no exit-code table outside $page" "" "$others"
# The man page's EXIT STATUS names llmnet's codes, no more, no fewer.
man=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' docs/llmnet.1 | sed -n 's/^\.B \([0-9][0-9]*\)$/\1/p' |
	sort -n | tr '\n' ' ')
check "docs/llmnet.1 EXIT STATUS lists llmnet's codes" "$(doc_codes llmnet | tr '\n' ' ')" "$man"

