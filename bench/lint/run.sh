#!/bin/bash
# SPDX-License-Identifier: MIT
# The lint benchmark (make bench-lint): llmnet lint on a written-out
# 4,096-node spec against the floor, a bare libyaml event parse of the
# same file. Prints CPU time (median of 9) and peak RSS for both, and the
# ratios; the figures go to docs/benchmarks.md.
#   bench/lint/run.sh BUILD [NODES]
set -eu
build=$1 nodes=${2:-4096}
cd "$(dirname "$0")/../.."
out=$build/bench
mkdir -p "$out"
spec=$out/lint-$nodes.yaml
python3 bench/lint/gen.py "$spec" "$nodes"
"$build/llmnet" lint "$spec"
echo "spec: $spec, $(wc -c < "$spec") bytes, $(wc -l < "$spec") lines"
floor=$("$build/bench/runstat" 9 "$build/bench/yaml_events" "$spec")
floor_mem=$("$build/bench/runstat" 9 "$build/bench/yaml_events" --in-memory "$spec")
docapi=$("$build/bench/runstat" 3 "$build/bench/yaml_events" --document "$spec")
lint=$("$build/bench/runstat" 9 "$build/llmnet" -q lint "$spec")
base=$("$build/bench/runstat" 9 "$build/llmnet" -q lint examples/te-lab.yaml)
parser=$("$build/bench/runstat" 9 "$build/bench/spec_only" "$spec")
echo "floor (libyaml events, streamed as lint reads): $floor"
echo "floor (libyaml events, file read whole first): $floor_mem"
echo "libyaml document API (for comparison):          $docapi"
echo "llmnet lint:                                    $lint"
echo "llmnet lint of te-lab.yaml (process baseline):  $base"
echo "the spec parser alone (libyaml + json-c only):   $parser"
python3 - "$floor" "$floor_mem" "$lint" "$base" "$parser" <<'PY'
import sys
f, fm, l, b, p = (dict(kv.split("=") for kv in a.split()) for a in sys.argv[1:6])
def r(x, y, k, conv):
    return conv(x[k]) / conv(y[k])
print("ratio to the streamed floor:   cpu %.2fx, peak rss %.2fx"
      % (r(l, f, "cpu_s", float), r(l, f, "maxrss_kib", int)))
print("ratio to the in-memory floor:  cpu %.2fx, peak rss %.2fx"
      % (r(l, fm, "cpu_s", float), r(l, fm, "maxrss_kib", int)))
print("parser alone to the streamed floor: cpu %.2fx, peak rss %.2fx"
      % (r(p, f, "cpu_s", float), r(p, f, "maxrss_kib", int)))
print("model and parse state above llmnet's own baseline: %d KiB"
      % (int(l["maxrss_kib"]) - int(b["maxrss_kib"])))
PY
