#!/usr/bin/env bash
# run_probe.sh EXPECT PROBE [LIBRARY]: runs a remove_all probe and checks what happened.
#   removes        exit 0 having removed its tree, without a restart
#   restarts       the same, after the guard restarted it with libstdc++ first; its children
#                  would not inherit the guard's LD_PRELOAD
#   reaches-copy   its call reached the LibTorch-like copy (exit 86) or crashed in it
# With LIBRARY, `restarts` and `reaches-copy` apply when LIBRARY exports std::filesystem::remove_all
# (official LibTorch does, Debian's does not); otherwise the probe must simply remove its tree, or
# for reaches-copy, there is nothing to reproduce and the test is skipped (77).
set -u
expect=$1 probe=$2 library=${3:-}
if [[ -n $library ]] && ! nm -D --defined-only "$library" | grep -q remove_all; then
  echo "$library exports no std::filesystem::remove_all"
  [[ $expect == reaches-copy ]] && exit 77
  expect=removes
fi
output=$(env -u LD_PRELOAD "$probe" 2>&1); status=$?
echo "$output"; echo "exit status $status (expected: $expect)"
case $expect in
  removes)      [[ $status -eq 0 && $output == *"removed "* && $output != *restarted* ]] ;;
  restarts)     [[ $status -eq 0 && $output == *"restarted with libstdc++ first"* &&
                   $output == *"children's LD_PRELOAD: <unset>"* ]] ;;
  reaches-copy) [[ $status -ne 0 && $output != *"removed "* ]] ;;
  *) echo "unknown expectation $expect"; exit 2 ;;
esac
