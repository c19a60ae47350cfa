#!/usr/bin/env bash
# The layering rules of the architecture (README "Layout"), checked on every #include of the
# project's own headers: each folder may include only the folders listed for it. No arrow points
# back up: core/ knows nothing of the rest, analysis/ only core/, importers/ core/ and analysis/,
# the GUI never sees the compiler.
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"

declare -A allowed=(
  [core]="core"
  [analysis]="core analysis"
  [profiler]="core analysis profiler"
  [importers]="core analysis importers"
  [compiler]="core profiler compiler"
  [gui]="core analysis importers gui"
  [api]="core profiler compiler api"
  [cli]="core analysis importers profiler compiler api cli"
)

status=0
for folder in "${!allowed[@]}"; do
  while IFS= read -r hit; do
    file="${hit%%:*}"
    target="$(sed -E 's/.*#include "([^/"]+)\/.*/\1/' <<<"$hit")"
    if [[ " ${allowed[$folder]} " != *" $target "* ]]; then
      echo "layering: $file includes $target/ (allowed for $folder/: ${allowed[$folder]})"
      status=1
    fi
  done < <(grep -rHn -E '^#include "[a-z_]+/' "$folder" --include='*.h' --include='*.cpp' || true)
done
[[ $status -eq 0 ]] && echo "layering: every include follows the rules"
exit $status
