#!/bin/sh
# The CI gate for samples/ci_example/model.py: build the TorchScript archive, run the workload
# compiled and compare with the committed baseline.json. Exit 0 pass or improved, 1 regression,
# 2 bad input (missing or malformed baseline, bad spec).
#
# usage: ci_check.sh [tcprof check options...]   e.g. --format github, --update-baseline
# env:   TCPROF (default: tcprof on PATH), PYTHON (a python3 with torch), OUT_DIR (default: temp)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
TCPROF=${TCPROF:-tcprof}
if [ -z "${PYTHON:-}" ]; then
  # Debian's python3-torch lives in /usr/bin; a python3 earlier on PATH may lack torch.
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"

"$PYTHON" "$here/model.py" "$out/model.pt"
"$TCPROF" check "$out/model.pt" --input 'f32[8,16]' --iters 8 \
  --baseline "$here/baseline.json" --db "$out/check.db" "$@"
