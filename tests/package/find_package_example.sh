#!/usr/bin/env bash
# find_package_example.sh CMAKE BUILD_DIR MODEL: installs this build into a fresh prefix, builds the
# installed example (samples/cpp_api) against it as a LibTorch user would, with find_package(tcprof),
# runs it on MODEL and reads the run it recorded with the installed tcprof.
set -euo pipefail
cmake=$1 build=$2 model=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tcprof-package-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"
example=$prefix/share/doc/tcprof/examples/cpp_api
"$cmake" -S "$example" -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/example" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
echo "readelf: $(readelf -d "$work/example/record_calls" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | head -3 | tr '\n' ' ')"
TCPROF_CACHE_DIR=$work/cache "$work/example/record_calls" "$model" "$work/run.db"
"$prefix/bin/tcprof" report --json "$work/run.db" > "$work/report.json"
# Six calls, recorded under the example's own command, the sequence length symbolic from the start
# (one compile, no recompile), the run closed as finished.
python3 - "$work/report.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
s = run["summary"]
print(run["command"], run["status"], {k: s[k] for k in ("calls", "compiles", "recompiles", "graph_breaks")})
assert run["command"] == "record_calls" and run["status"] == "finished", run
assert s["calls"] == 6 and s["compiles"] == 1 and s["recompiles"] == 0, s
PY
