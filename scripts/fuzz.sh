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
found=0
summary=()
for h in "${chosen[@]}"; do
  seeds="$root/tests/fuzzers/corpus/$h"
  work="$build/corpus/$h"
  log="$build/fuzz-$h.log"
  mkdir -p "$work"
  rc=0
  # -max_len: the largest seed (a run database) plus room to grow.
  "$build/tests/fuzzers/fuzz_$h" "$work" "$seeds" -max_total_time="$seconds" -max_len=131072 \
    -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 -artifact_prefix="$seeds/" >"$log" 2>&1 || rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  artifacts=$(grep -o "Test unit written to [^ ]*" "$log" | sed 's/Test unit written to //' || true)
  if [[ $rc -ne 0 || -n "$artifacts" ]]; then
    found=1
    summary+=("$h: FINDING after $runs runs (exit $rc): ${artifacts:-see $log}")
  else
    summary+=("$h: $runs runs in ${seconds}s, $cov coverage edges, corpus $(ls "$work" | wc -l) inputs, no finding")
  fi
done
printf 'fuzz: %s\n' "${summary[@]}"
exit $found
