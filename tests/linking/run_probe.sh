#!/usr/bin/env bash
# run_probe.sh EXPECT PROBE [LIBRARY]: runs a remove_all probe and checks what happened.
#   removes        exit 0 having removed its tree, without a restart
#   restarts       the same, after the guard restarted it with libstdc++ first; its children
#                  would not inherit the guard's LD_PRELOAD
#   reaches-copy   its std::filesystem calls go to the library's copies instead of libstdc++'s
#                  (the stand-in's copy then exits 86, 2.11's crashes, 2.15's works)
#   copy-exits     the stand-in's copy took the call and exited 86 (a probe that cannot say where
#                  its calls go: static_remove_all_probe.cpp)
# With LIBRARY (a LibTorch library: its folder's libtorch*/libc10* are read), the expectation is
# what that LibTorch calls for. `restarts` applies when one of them exports libstdc++'s
# std::filesystem functions the guard checks (official LibTorch 2.11 exports remove_all from
# libtorch.so, 2.15 path functions from libtorch_cpu.so; Debian's nothing), else the probe must
# simply remove its tree. `reaches-copy` applies when one exports remove_all; else there is
# nothing to reproduce and the test is skipped (77).
set -u
expect=$1 probe=$2 library=${3:-}
if [[ -n $library ]]; then
  exports=$(for f in "$(dirname "$library")"/lib{torch,c10}*.so*; do nm -D --defined-only "$f" 2>/dev/null; done |
            grep -oE 'remove_all|_M_split_cmpts' | sort -u | tr '\n' ' ')
  echo "LibTorch in $(dirname "$library") exports: ${exports:-none of the checked std::filesystem functions}"
  if [[ $expect == reaches-copy && $exports != *remove_all* ]]; then exit 77; fi
  if [[ $expect == restarts && -z $exports ]]; then expect=removes; fi
fi
output=$(env -u LD_PRELOAD "$probe" 2>&1); status=$?
echo "$output"; echo "exit status $status (expected: $expect)"
case $expect in
  removes)      [[ $status -eq 0 && $output == *"removed "* && $output != *restarted* ]] ;;
  restarts)     [[ $status -eq 0 && $output == *"restarted with libstdc++ first"* &&
                   $output == *"children's LD_PRELOAD: <unset>"* ]] ;;
  reaches-copy) [[ $output == *"instead of libstdc++"* && ( $status -ne 0 || $library ) ]] ;;
  copy-exits)   [[ $status -eq 86 && $output == *"LibTorch-like copy"* ]] ;;
  *) echo "unknown expectation $expect"; exit 2 ;;
esac
