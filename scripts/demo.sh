#!/usr/bin/env bash
# The main job on a bundled sample. Until the compiler frontend lands that is `tcprof report` on a
# sample run database written through the real store.
set -euo pipefail
build=${1:-build}
db="$build/demo/sample-run.db"
mkdir -p "$build/demo"
"$build/samples/tcprof-sample-db" "$db"
echo "\$ tcprof report $db"
"$build/cli/tcprof" report "$db"
