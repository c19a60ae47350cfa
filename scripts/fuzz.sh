#!/usr/bin/env bash
# Coverage-guided fuzzing of every input format tcprof reads (tests/fuzzers/harnesses.h), with
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer (clang 14).
#   scripts/fuzz.sh [SECONDS] [HARNESS...]    (make fuzz FUZZ_SECONDS=1800)
# Each harness runs SECONDS (default 60) from its seeds in tests/fuzzers/corpus/<harness>/ and the
# inputs it found before (build-fuzz/corpus/<harness>/). A finding is written into the seed folder
# as crash-*/leak-*/timeout-*: the regular test suite (FuzzRegressions) then runs it until it is fixed.
# Prints one line per harness: runs, coverage, findings; exits 1 when anything was found.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
all=(trace_lines torch_trace kineto input_spec baseline run_db kernel_cache)
chosen=("$@")
[[ ${#chosen[@]} -eq 0 ]] && chosen=("${all[@]}")
jobs=${FUZZ_JOBS:-1}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_JOBS=$jobs: give a number of harnesses to run at once, such as 2" >&2; exit 2; }

bash "$root/scripts/install-deps.sh" --fuzz
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DTCPROF_LIBFUZZER=ON -DTCPROF_BUILD_GUI=OFF -DTCPROF_BUILD_BENCHMARKS=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 2; }
cmake --build "$build" --target "${chosen[@]/#/fuzz_}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)}
# One harness: its result line in $build/fuzz-$h.result ("FINDING ..." when it found something).
# The CPU seconds beside the wall seconds tell a quiet run (one core each) from a starved one.
fuzz_one() {
  local h=$1 seeds="$root/tests/fuzzers/corpus/$1" work="$build/corpus/$1" log="$build/fuzz-$1.log"
  local rc=0 cpu runs cov artifacts
  mkdir -p "$work"
  local TIMEFORMAT=%U+%S
  # -max_len: the largest seed (a run database) plus room to grow.
  { time "$build/tests/fuzzers/fuzz_$h" "$work" "$seeds" -max_total_time="$seconds" -max_len=131072 \
    -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 -artifact_prefix="$seeds/" >"$log" 2>&1; } \
    2>"$build/fuzz-$h.cpu" || rc=$?
  cpu=$(tail -1 "$build/fuzz-$h.cpu" | awk -F+ '{ printf "%d", $1 + $2 }')
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  artifacts=$(grep -o "Test unit written to [^ ]*" "$log" | sed 's/Test unit written to //' || true)
  if [[ $rc -ne 0 || -n "$artifacts" ]]; then
    echo "$h: FINDING after $runs runs (exit $rc): ${artifacts:-see $log}" >"$build/fuzz-$h.result"
  else
    echo "$h: $runs runs in ${seconds}s (${cpu}s of CPU), $cov coverage edges, corpus $(ls "$work" | wc -l) inputs, no finding" \
      >"$build/fuzz-$h.result"
  fi
}
# FUZZ_JOBS harnesses at a time, each on its own core.
for h in "${chosen[@]}"; do
  rm -f "$build/fuzz-$h.result"
  while (( $(jobs -rp | wc -l) >= jobs )); do wait -n || true; done
  fuzz_one "$h" &
done
wait
found=0
for h in "${chosen[@]}"; do
  line=$(cat "$build/fuzz-$h.result" 2>/dev/null || echo "$h: FINDING: no result (see $build/fuzz-$h.log)")
  [[ $line == *FINDING* ]] && found=1
  echo "fuzz: $line"
done
exit $found
