#!/usr/bin/env bash
# How stable a cold compile's speed is across processes (issue 36: autotune decisions that noise
# cannot flip). Runs `tcprof bench` PROCESSES times, each with an empty kernel and autotune cache,
# so every process compiles and autotunes anew, and prints each process's times and the spread.
#   scripts/bench-repeat.sh BUILD [MODEL [INPUT [PROCESSES [THREADS]]]]
#   default: mobilenet_v2 f32[1,3,224,224], 10 processes, 1 thread
# Run it on a quiet machine: the spread it reports is the machine's as well as the compiler's.
set -euo pipefail
build=${1:?usage: bench-repeat.sh BUILD [MODEL [INPUT [PROCESSES [THREADS]]]]}
model=${2:-mobilenet_v2}
input=${3:-f32[1,3,224,224]}
processes=${4:-10}
threads=${5:-1}
tcprof="$build/cli/tcprof"
[[ -x $tcprof ]] || { echo "bench-repeat: $tcprof not built (make build first)" >&2; exit 2; }
path="$build/samples/models/$model.pt"
[[ -f $path ]] || path=$model
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((p = 1; p <= processes; p++)); do
  rm -rf "$tmp/cache"
  TCPROF_CACHE_DIR="$tmp/cache" OMP_NUM_THREADS=$threads "$tcprof" bench "$path" --input "$input" \
    --threads "$threads" --db none --json > "$tmp/$p.json" 2> "$tmp/$p.err" || { cat "$tmp/$p.err" >&2; exit 1; }
done
/usr/bin/python3 - "$tmp" "$processes" "$model" <<'PY'
import json, statistics, sys
tmp, n, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [json.load(open(f"{tmp}/{p}.json")) for p in range(1, n + 1)]
comp = [r["compiled_ms"] for r in rows]
eager = [r["eager_ms"] for r in rows]
for p, r in enumerate(rows, 1):
    print(f"process {p:2d}: tcprof {r['compiled_ms']:.3f} ms, eager {r['eager_ms']:.3f} ms, "
          f"speedup {r['eager_ms'] / r['compiled_ms']:.2f}x, load {r.get('load_average_before', 0):.2f}")
def spread(xs):
    return (max(xs) - min(xs)) / statistics.median(xs) * 100
print(f"{model}: tcprof median {statistics.median(comp):.3f} ms, {min(comp):.3f}-{max(comp):.3f} "
      f"(spread {spread(comp):.1f}% of the median); eager {min(eager):.3f}-{max(eager):.3f} (spread {spread(eager):.1f}%)")
PY
