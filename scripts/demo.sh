#!/usr/bin/env bash
# The main job on bundled samples: `tcprof explain` on a model whose submodules break the graph,
# then a run whose sequence length varies (automatic dynamic shapes), and its report.
set -euo pipefail
build=${1:-build}
tcprof="$build/cli/tcprof"
models="$build/samples/models"
out="$build/demo"
mkdir -p "$out"
rm -f "$out"/*.db "$out"/*.db-wal "$out"/*.db-shm

echo "\$ tcprof explain submodule_break.pt --input 'f32[4,8]'"
"$tcprof" explain "$models/submodule_break.pt" --input 'f32[4,8]' --db "$out/explain.db"
echo
echo "\$ tcprof run gpt_tiny.pt --input 'i64[2,32](0,512)' --vary 0:1=8..64 --iters 12 --verify"
"$tcprof" run "$models/gpt_tiny.pt" --input 'i64[2,32](0,512)' --vary 0:1=8..64 --iters 12 --verify \
  --db "$out/run.db"
echo
echo "\$ tcprof report run.db"
"$tcprof" report "$out/run.db"
