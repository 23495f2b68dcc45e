#!/bin/bash
# SPDX-License-Identifier: MIT
# The spec tier: tests/spec/run.sh BUILD FUZZER [--regen]
#  1. every examples/*.yaml passes `llmnet lint` (text and -o json);
#  2. every tests/spec/CASE.yaml fails with exit 3 and exactly the messages
#     in CASE.err (stderr; stdout stays empty), and -o json reports the same
#     count of errors; at least 40 cases;
#  3. specs/llmnet.schema.json is what `llmnet lint --dump-schema` prints,
#     accepts every example and rejects the cases in schema-rejects.list;
#  4. docs/spec.md names every key of the schema;
#  5. the fuzz target replays tests/fuzz/corpus (each input once).
#     Each lint runs under `ulimit -t 20` (CPU seconds): a hang fails.
#     An unreadable spec exits 3 and -o json prints {"errors": [...]}.
# --regen rewrites the .err files from the current output: review the diff.
set -u
build=$1 fuzzer=$2 regen=${3:-}
cd "$(dirname "$0")/../.."
llmnet=$build/llmnet
. tests/lib/tap.sh
tap_init spec
TAP_QUIET=1	# a line for each failure only

for f in examples/*.yaml; do
	out=$("$llmnet" lint "$f" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$f: lint exited $rc"
		echo "$out"
		continue
	fi
	if "$llmnet" -o json lint "$f" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["nodes"] else 1)'; then
		ok
	else
		fail "$f: lint -o json did not print a model with nodes"
	fi
done

n=0
for y in tests/spec/*.yaml; do
	n=$((n + 1))
	golden=${y%.yaml}.err
	# under a CPU-time limit, not a clock: a case that makes lint spin
	# (a range expanded without a bound) is killed and fails (rc 137)
	out=$(ulimit -t 20; "$llmnet" lint "$y" 2>&1 >/dev/null)
	rc=$?
	stdout=$(ulimit -t 20; "$llmnet" lint "$y" 2>/dev/null)
	if [ "$regen" = --regen ]; then
		printf '%s\n' "$out" > "$golden"
	fi
	if [ ! -f "$golden" ]; then
		fail "$y: no golden $golden"
		continue
	fi
	if [ $rc -ne 3 ]; then
		fail "$y: lint exited $rc, not 3"
	elif [ -n "$stdout" ]; then
		fail "$y: lint printed on stdout: $stdout"
	elif ! diff -u "$golden" <(printf '%s\n' "$out"); then
		fail "$y: messages differ from $golden"
	else
		want=$(wc -l < "$golden")
		got=$("$llmnet" -o json lint "$y" 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["errors"]))')
		if [ "$got" = "$want" ]; then ok; else fail "$y: -o json has $got errors, the golden $want"; fi
	fi
done
if [ $n -ge 40 ]; then ok; else fail "the invalid corpus has $n cases, fewer than 40"; fi

# a spec that cannot be read (missing, a directory): exit 3, and with
# -o json still {"errors": [...]} on stdout naming why (docs/llmnet.1)
for y in tests/spec/no-such-spec.yaml tests/spec; do
	out=$("$llmnet" -o json lint "$y" 2>/dev/null)
	rc=$?
	if [ $rc -eq 3 ] && printf '%s' "$out" | python3 -c '
import json, sys
e = json.load(sys.stdin)["errors"]
sys.exit(0 if len(e) == 1 and e[0]["file"] == sys.argv[1] and e[0]["line"] == 0
         and "cannot open spec" in e[0]["message"] else 1)' "$y"; then
		ok
	else
		fail "$y: -o json lint exited $rc and printed: $out"
	fi
done

if diff -u specs/llmnet.schema.json <("$llmnet" lint --dump-schema) > /dev/null; then
	ok
else
	fail "specs/llmnet.schema.json differs from 'llmnet lint --dump-schema' (regenerate it)"
fi
while read -r line; do
	case $line in
	PASS*) ok ;;
	*) fail "$line" ;;
	esac
done < <(python3 tests/spec/schema_check.py specs/llmnet.schema.json examples \
	tests/spec/schema-rejects.list tests/spec 2>&1)

# docs/spec.md documents every key the parser knows
missing=$(python3 - <<'PY'
import json
def keys(o, out):
    if isinstance(o, dict):
        for k, v in o.get("properties", {}).items():
            out.add(k)
        for v in o.values():
            keys(v, out)
    elif isinstance(o, list):
        for v in o:
            keys(v, out)
    return out
doc = open("docs/spec.md").read()
print(" ".join(sorted(k for k in keys(json.load(open("specs/llmnet.schema.json")), set())
                   if "`%s`" % k not in doc)))
PY
)
if [ -z "$missing" ]; then ok; else fail "docs/spec.md does not document: $missing"; fi

if [ ! -x "$fuzzer" ]; then
	fail "fuzz target $fuzzer was not built"
else
	log=$build/check/fuzz-replay.log
	mkdir -p "$build/check"
	if timeout 60 "$fuzzer" tests/fuzz/corpus/* > "$log" 2>&1; then
		ok
		echo "  fuzz replay: $(ls tests/fuzz/corpus | wc -l) inputs, no finding"
	else
		fail "fuzz replay failed (see $log)"
		tail -20 "$log"
	fi
fi

echo "  $n invalid specs"
tap_done "$build/check/spec.counts"
