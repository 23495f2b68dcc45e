#!/bin/bash
# SPDX-License-Identifier: MIT
#
# No call circles between product files (docs/hacking.md): file A must not
# use a function defined in file B while B, directly or through other
# files, uses one defined in A. Run by make lint (scripts/lint.sh).
#
# The calls are read from the objects a build left, not from the source
# text: `nm` lists what each object defines (T, W: a static function is t,
# file-local, and never counts) and what it leaves to the linker (U), so a
# call a macro or a static inline of a header makes is charged to the file
# that expands it, and a function only named in a table counts as used. A
# reference is resolved within the binary its file links into, as the
# linker does (see BINARIES below): the agent and the controller may each
# define a function of the same name, and a probe is a program of one file.
#
# Prints one line per circle, the files from the first in sort order, each
# step with one function it uses (the first in sort order):
#   known: A -> B (ln_b_x) -> back (ln_a_y)
#   call circle: A -> B (ln_b_x) -> C (ln_c_z) -> back (ln_a_y)
# and exits 1 when one is not in the allow list, or when a line of that list
# no longer applies (the list only shrinks). A line of the list is a circle
# without its functions: "A -> B -> back". Every elementary circle is one
# line, a 2-cycle and each longer one apart, since fixing one leaves the
# others. Exits 2 when an object is missing or older than its source.
#
#   scripts/callcircles.sh [-C TREE] [-a ALLOW] [BUILD]
# BUILD holds the objects as the Makefile lays them out (BUILD/obj/SRC.o;
# default build), relative to TREE (default: this repository), whose
# product sources are those of BINARIES; ALLOW defaults to
# scripts/callcircles.allow. The whole list of circles, to start a list:
#   scripts/callcircles.sh -a /dev/null build/lint |
#	sed -n 's/^call circle: //p' | sed 's/ ([^)]*)//g'
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$here allow=$here/scripts/callcircles.allow name=scripts/callcircles.allow
while getopts C:a: opt; do
	case $opt in
	C) tree=$OPTARG ;;
	a) allow=$OPTARG name=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
build=${1:-build}
case $allow in /*) ;; *) allow=$PWD/$allow ;; esac
export LC_ALL=C
. "$here/scripts/allowlist.sh"
[ -r "$allow" ] || { echo "callcircles: cannot read $allow"; exit 2; }
cd "$tree" || exit 2

# The product's binaries and the folders each links, as the Makefile builds
# them: the agent (agents/agent and common) and the controller (orchestrator,
# cmd and common). The probes in agents/probes are programs of one file.
BINARIES="llmnet-agent=agents/agent/,common/ llmnet=orchestrator/,cmd/,common/"
dirs=
for b in $BINARIES; do dirs="$dirs ${b#*=}"; done
dirs=$(tr ', ' '\n\n' <<< "$dirs" | sed -n 's|/$||p' | sort -u)
mapfile -t sources < <(for d in $dirs; do [ ! -d "$d" ] || find "$d" -name '*.c'; done | sort)
if [ ${#sources[@]} -eq 0 ]; then
	echo "callcircles: no product source under $(echo $dirs) in $tree"
	exit 2
fi
objects=() bad=0
for f in "${sources[@]}"; do
	o=$build/obj/${f%.c}.o
	if [ ! -f "$o" ] || [ "$f" -nt "$o" ]; then
		echo "callcircles: $o is missing or older than $f: build first (make BUILD=$build)"
		bad=1
	fi
	objects+=("$o")
done
[ "$bad" -eq 0 ] || exit 2

# "BINARY FROM TO FUNCTION": FROM uses FUNCTION, defined in TO, both linked
# into BINARY; one line per pair of files, with the first function
edges=$(nm -P -A "${objects[@]}" | awk -v binaries="$BINARIES" -v objdir="$build/obj/" '
	BEGIN {
		nb = split(binaries, bl, " ")
		for (i = 1; i <= nb; i++) {
			bname[i] = substr(bl[i], 1, index(bl[i], "=") - 1)
			np[i] = split(substr(bl[i], index(bl[i], "=") + 1), pl, ",")
			for (j = 1; j <= np[i]; j++)
				pre[i, j] = pl[j]
		}
	}
	{
		f = substr($1, length(objdir) + 1)
		sub(/\.o:$/, ".c", f)
		sym = $2; t = $3
		if (t != "T" && t != "W" && t != "U")
			next
		for (i = 1; i <= nb; i++)
			for (j = 1; j <= np[i]; j++)
				if (index(f, pre[i, j]) == 1) {
					if (t == "U")
						use[++nu] = i SUBSEP f SUBSEP sym
					else if (!((i, sym) in def))
						def[i, sym] = f
				}
	}
	END {
		for (k = 1; k <= nu; k++) {
			split(use[k], u, SUBSEP)
			if (!((u[1], u[3]) in def))
				continue
			to = def[u[1], u[3]]
			if (to != u[2])
				print bname[u[1]], u[2], to, u[3]
		}
	}' | sort -k1,1 -k2,2 -k3,3 -k4,4 | awk '
	$1 != b || $2 != f || $3 != t { print; b = $1; f = $2; t = $3 }')

# Every elementary circle of each binary's graph, once: from its first file
# in sort order, through files after it only, along edges in sort order, and
# only into files that can still reach the first (so no walk is wasted).
circles=$(awk '
	function out(k, s, key, line) {
		line = path[1]; key = path[1]
		for (s = 2; s <= k; s++) {
			line = line " -> " path[s] " (" fn[path[s - 1], path[s]] ")"
			key = key " -> " path[s]
		}
		line = line " -> back (" fn[path[k], path[1]] ")"
		print key " -> back\t" line
		if (++found >= 2000)
			toomany = 1
	}
	function binary(  i, j, k, s, v, w, q, head, tail) {
		for (i = 1; i <= nn && !toomany; i++) {
			s = node[i]
			# the files after s that can reach s
			split("", reach)
			reach[s] = 1; q[1] = s; head = 1; tail = 1
			while (head <= tail) {
				v = q[head++]
				for (j = 1; j <= nin[v]; j++) {
					w = in_[v, j]
					if (w > s && !(w in reach)) { reach[w] = 1; q[++tail] = w }
				}
			}
			# depth-first, the next edge of each level in at[]
			split("", onpath)
			k = 1; path[1] = s; at[1] = 0; onpath[s] = 1
			while (k > 0 && !toomany) {
				v = path[k]
				if (++at[k] > nout[v]) { delete onpath[v]; k--; continue }
				w = out_[v, at[k]]
				if (w == s) { out(k); continue }
				if (!(w in reach) || (w in onpath))
					continue
				path[++k] = w; at[k] = 0; onpath[w] = 1
			}
		}
		split("", node); split("", nout); split("", nin); split("", fn); nn = 0
	}
	$1 != bin { if (bin != "") binary(); bin = $1 }
	{
		if (!($2 in nout)) { node[++nn] = $2; nout[$2] = 0; nin[$2] = 0 }
		if (!($3 in nout)) { node[++nn] = $3; nout[$3] = 0; nin[$3] = 0 }
		out_[$2, ++nout[$2]] = $3; in_[$3, ++nin[$3]] = $2
		fn[$2, $3] = $4
	}
	END {
		if (bin != "") binary()
		if (toomany) print "!\t2,000 call circles or more: fix the 2-cycles first"
	}' <<< "$edges" | sort -u -t '	' -k1,1)

# more circles than the walk lists: say so, and stop
if grep -q '^!' <<< "$circles"; then
	sed -n 's/^!\t/callcircles: /p' <<< "$circles"
	exit 1
fi
allow_check "$allow" "$name" "call circle" "is no longer a call circle" <<< "$circles"
