#!/usr/bin/env bash
# Regenerates the benchmark table of docs/backend.md (issue 16's rows): `tcprof bench --threads 1`
# on the GPT sample and every torchvision model in the tests, medians, ratios to eager measured in
# the same process, TorchScript's freeze+optimize_for_inference beside them, cold and warm compile.
# The table goes between the bench-table markers; the machine's load average is written with it,
# because timings on a busy 2-core machine are not worth keeping (bench warns then).
#
#   scripts/bench-table.sh [BUILD_DIR]      (make bench-table; ITERS=N, THREADS=N)
#
# THREADS=2 writes the 2-thread table (its own block). Before each model the script waits (up to
# 150 s) for the 1-minute load average to fall below 0.5: the previous model's run keeps it up,
# and bench calls a machine that is not quiet noisy.
#
# A build against a PyTorch 2 wheel (`make bench-table TORCH_PYTHON=...`, or make bench-inductor)
# writes the Inductor table instead (blocks bench-table-inductor[-threads2]): each model's tcprof
# bench, then bench/inductor_bench.py with that same Python on the same module (torch.compile's
# INDUCTOR_MODES, default all four: default and max-autotune, each with and without freezing),
# both sides on the same ATen.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
iters=${ITERS:-30}
threads=${THREADS:-1}
block=bench-table
[[ $threads == 1 ]] || block=bench-table-threads$threads
tcprof="$build/cli/tcprof"
models="$build/samples/models"
doc="$src/docs/backend.md"
# The Python whose torch the build links (CMake's cache); Inductor's columns when it has torch.compile.
source "$src/scripts/torch-wheel-venv.sh"
torch_python=$(torch_wheel_compile_python "$build")
inductor_modes=""
if [[ -n $torch_python ]]; then
  inductor_modes=${INDUCTOR_MODES:-default,max-autotune,default+freezing,max-autotune+freezing}
  block=${block/bench-table/bench-table-inductor}
  # Every GEMM library raced per linear, MKL's packed GEMM included: Inductor's freezing packs
  # every linear for MKL, so the memory is like for like (docs/backend.md).
  export TCPROF_LINEAR_GEMM=${TCPROF_LINEAR_GEMM:-fastest}
fi
[[ -x $tcprof ]] || { echo "bench-table: $tcprof not built (make build first)" >&2; exit 2; }
grep -q "<!-- $block:begin -->" "$doc" || { echo "bench-table: no $block markers in $doc" >&2; exit 2; }

wait_for_quiet() {
  for _ in $(seq 30); do
    awk '{ exit !($1 < 0.5) }' /proc/loadavg && return
    sleep 5
  done
}

# model | input | target ratio to eager ("" when the issue sets none beyond beating TorchScript)
rows=(
  "gpt|i64[4,128](0,512)|1.15"
  "resnet18|f32[1,3,224,224]|1.4"
  "mobilenet_v2|f32[1,3,224,224]|1.8"
  "efficientnet_b0|f32[1,3,224,224]|"
  "shufflenet_v2_x1_0|f32[1,3,224,224]|"
  "squeezenet1_1|f32[1,3,224,224]|"
  "convnext_tiny|f32[1,3,224,224]|"
  "vit_b_16|f32[1,3,224,224]|"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table="$tmp/table.md"
if [[ -z $inductor_modes ]]; then
  {
    echo "| model | eager ms | tcprof ms | speedup | target | TorchScript opt. ms | vs TorchScript | cold compile s | warm start s | warm, beyond eager s |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
  } > "$table"
else
  "$torch_python" "$src/scripts/inductor_table.py" header "$inductor_modes" > "$table"
fi
load_max=0
for row in "${rows[@]}"; do
  IFS='|' read -r name input target <<< "$row"
  [[ $threads == 1 ]] || target=""  # the issue's targets are for one thread
  wait_for_quiet
  echo "bench-table: $name ($threads thread(s), load $(cut -d' ' -f1 /proc/loadavg))" >&2
  # The Inductor table leaves TorchScript out (the Debian table has it): a third executor per round.
  OMP_NUM_THREADS=$threads "$tcprof" bench "$models/$name.pt" --input "$input" --threads "$threads" --iters "$iters" \
    ${inductor_modes:+--no-torchscript} --db none --json > "$tmp/$name.json" 2> "$tmp/$name.err" || { cat "$tmp/$name.err" >&2; exit 1; }
  if [[ -n $inductor_modes ]]; then
    wait_for_quiet
    echo "bench-table: $name under torch.compile ($inductor_modes)" >&2
    OMP_NUM_THREADS=$threads "$torch_python" "$src/bench/inductor_bench.py" "$name" --threads "$threads" --iters "$iters" \
      --modes "$inductor_modes" --json > "$tmp/$name.inductor.json" 2> "$tmp/$name.inductor.err" \
      || { tail -20 "$tmp/$name.inductor.err" >&2; exit 1; }
    "$torch_python" "$src/scripts/inductor_table.py" row "$name" "$tmp/$name.json" "$tmp/$name.inductor.json" \
      "$tmp/loads" >> "$table"
    continue
  fi
  /usr/bin/python3 - "$tmp/$name.json" "$name" "$target" "$tmp/loads" >> "$table" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); name, target = sys.argv[2], sys.argv[3]
eager, comp = j["eager_ms"], j["compiled_ms"]
ts = j["baselines"].get("torchscript_optimized")
speed = eager / comp
met = "" if not target else (f"≥{target}x: met" if speed >= float(target) else f"≥{target}x: **not met**")
vs_ts = "-" if ts is None else (f"{ts / comp:.2f}x" + ("" if ts >= comp else " **slower**"))
print(f"| {name} | {eager:.2f} | {comp:.2f} | {speed:.2f}x | {met} | {'-' if ts is None else f'{ts:.2f}'} | {vs_ts} "
      f"| {j['compile_s']:.2f} | {j['warm_compile_s']:.3f} | {j['warm_beyond_eager_s']:.3f} |")
print(max(j.get("load_average_before", 0), j.get("load_average_after", 0)), file=open(sys.argv[4], "a"))
PY
done
load=$(sort -g "$tmp/loads" | tail -1)
{
  echo "<!-- $block:begin -->"
  cmd='make bench-table'
  [[ $threads == 1 ]] || cmd="THREADS=$threads scripts/bench-table.sh"
  against=""
  if [[ -n $inductor_modes ]]; then
    cmd='make bench-inductor'
    against=$(torch_wheel_against "$torch_python")
  fi
  echo "Generated by \`$cmd\`$against on $(date -u +%Y-%m-%d) ($(nproc) cores, $(uname -m), highest 1-minute load"
  plural=s; [[ $threads == 1 ]] && plural=""
  echo "average during the runs: ${load}; $threads thread$plural, f32, medians of ${iters} round-robin calls):"
  echo
  cat "$table"
  echo "<!-- $block:end -->"
} > "$tmp/block.md"
/usr/bin/python3 "$src/scripts/splice_doc_block.py" "$doc" "$block" "$tmp/block.md"
echo "bench-table: wrote the table into $doc" >&2
