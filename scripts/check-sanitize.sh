#!/usr/bin/env bash
# Builds tcprof with AddressSanitizer (LeakSanitizer included) and UndefinedBehaviorSanitizer and
# runs the tests under them, in a build folder of its own.
#   scripts/check-sanitize.sh BUILD          the suites of the libraries that load no LibTorch (core,
#                                            analysis, the importers, the profiler's record processing,
#                                            the toolchain); their CLI cases run BUILD's tcprof. CI.
#   scripts/check-sanitize.sh --all BUILD    everything, LibTorch's suites included (before an issue
#                                            that touches compiler/ or cli/ is resolved)
# Any report fails the run: undefined behaviour is not recovered from, and a leak fails the process.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
all=0
if [[ "${1:-}" == "--all" ]]; then all=1; shift; fi
build=$(realpath -m "${1:-$src/build}")
# A sibling of BUILD: the same depth, so that ccache's base folder maps the same relative paths.
suffix=-sanitize
[[ $all == 1 ]] && suffix=-sanitize-all
dir=$(dirname "$build")/$(basename "$build")$suffix
cmake=${CMAKE:-cmake}
ctest=${cmake%cmake}ctest
args=(-DTCPROF_SANITIZE=address,undefined -DTCPROF_BUILD_BENCHMARKS=OFF)
if [[ $all == 0 ]]; then
  [[ -x $build/cli/tcprof ]] || { echo "check-sanitize: $build/cli/tcprof is missing: run make build first" >&2; exit 2; }
  args+=(-DTCPROF_BUILD_GUI=OFF -DTCPROF_TEST_BIN="$build/cli/tcprof")
fi
mkdir -p "$dir"
"$cmake" -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${args[@]}" > "$dir/configure.log" ||
  { cat "$dir/configure.log"; exit 2; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$src/scripts/lsan.supp:print_suppressions=0
if [[ $all == 0 ]]; then
  "$cmake" --build "$dir" -j "$(nproc)" --target core_tests analysis_tests import_tests profiler_tests toolchain_tests \
    fuzz_regression_tests
  cd "$dir" && QT_QPA_PLATFORM=offscreen "$ctest" -L no_libtorch --output-on-failure -j "$(nproc)" --timeout 900
else
  "$cmake" --build "$dir" -j "$(nproc)"
  cd "$dir" && QT_QPA_PLATFORM=offscreen "$ctest" --output-on-failure -j "$(nproc)" --timeout 1800
fi
