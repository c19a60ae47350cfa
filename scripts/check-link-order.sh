#!/usr/bin/env bash
# Checks that each executable given needs libstdc++ before any LibTorch library (see the top-level
# CMakeLists.txt: official LibTorch builds export libstdc++'s std::filesystem functions, and the
# first library in this order that defines a symbol is the one the program calls).
set -euo pipefail
status=0
for exe in "$@"; do
  needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  stdcxx=$(grep -n '^libstdc++' <<<"$needed" | head -1 | cut -d: -f1 || true)
  torch=$(grep -nE '^lib(torch|c10)' <<<"$needed" | head -1 | cut -d: -f1 || true)
  if [[ -z "$stdcxx" ]] && nm -C --defined-only "$exe" 2>/dev/null | grep -q ' std::filesystem::remove_all('; then
    # A toolchain with only a static libstdc++: its filesystem functions are linked into the
    # program, in front of LibTorch (cmake/TcprofLibTorch.cmake), so its calls stay inside it.
    echo "link order: $exe has libstdc++'s std::filesystem functions linked in statically"
  elif [[ -z "$stdcxx" ]]; then
    echo "link order: $exe does not need libstdc++ directly"; status=1
  elif [[ -n "$torch" && "$torch" -lt "$stdcxx" ]]; then
    echo "link order: $exe needs $(sed -n "${torch}p" <<<"$needed") before libstdc++:"; echo "$needed"; status=1
  else
    echo "link order: $exe: libstdc++ is needed at position $stdcxx${torch:+, LibTorch from $torch}"
  fi
done
exit $status
