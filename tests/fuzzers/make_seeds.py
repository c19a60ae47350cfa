#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz harness (tests/fuzzers/corpus/<harness>/seed-*).

Seeds are small, real inputs: excerpts of the TORCH_TRACE logs and Kineto traces in
tests/fixtures, the input specs the docs show, a baseline and a run database written by tcprof
itself, a kernel library and an autotune file as the cache holds them. Findings of `make fuzz`
are kept beside them as crash-*/leak-* files and are never rewritten by this script.

usage: make_seeds.py BUILD_DIR   (after `make build`: its tcprof and sample models are used)
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzzers", "corpus")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "torch_trace")


def put(harness, name, data):
    folder = os.path.join(CORPUS, harness)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def log_excerpt(name, max_bytes):
    """Whole records (a V line and its tab-indented payload) from the start of a log."""
    lines = gzip.open(os.path.join(FIXTURES, name), "rt").read().splitlines(keepends=True)
    out, size = [], 0
    for line in lines:
        if size + len(line) > max_bytes and not line.startswith("\t"):
            break
        out.append(line)
        size += len(line)
    return "".join(out)


def trace_seeds():
    killed = log_excerpt("killed_torch2.6_cpu.log.gz", 6000)
    mlp = log_excerpt("mlp_torch2.11_h100.log.gz", 8000)
    for harness in ("trace_lines", "torch_trace"):
        put(harness, "killed-torch2.6.log", killed)
        put(harness, "mlp-torch2.11.log", mlp)
    put("torch_trace", "truncated-record.log", killed[: len(killed) // 2])


def kineto_seeds():
    trace = json.load(gzip.open(os.path.join(FIXTURES, "kineto_trace_torch2.6_cpu.json.gz"), "rt"))
    trace["traceEvents"] = trace["traceEvents"][:24]
    put("kineto", "torch2.6-cpu.json", json.dumps(trace, indent=1))
    gpu = json.load(gzip.open(os.path.join(FIXTURES, "mlp_kineto_torch2.11_h100.json.gz"), "rt"))
    events = gpu["traceEvents"]
    keep = [e for e in events if e.get("cat") in ("kernel", "cuda_runtime", "gpu_memcpy")][:12]
    gpu["traceEvents"] = [e for e in events if e.get("cat") == "cpu_op"][:12] + keep
    put("kineto", "torch2.11-h100.json", json.dumps(gpu, indent=1))


def input_spec_seeds():
    for i, spec in enumerate(["f32[8,3,224,224]", "i64[4,128](0,1024)", "int:3", "float:0.5", "bool:true",
                              "bf16[2,s0,64]", "0:1=1..64", "0.1", "f64[]", "u8[3](-1,2)"]):
        put("input_spec", f"{i}", spec)


def tcprof_seeds(build):
    work = tempfile.mkdtemp()
    try:
        db = os.path.join(work, "run.db")
        baseline = os.path.join(work, "baseline.json")
        subprocess.run([os.path.join(build, "cli", "tcprof"), "check",
                        os.path.join(build, "samples", "models", "submodule_break.pt"), "--input", "f32[4,8]",
                        "--db", db, "--baseline", baseline, "--update-baseline"], check=True, capture_output=True)
        put("baseline", "check.json", open(baseline, "rb").read())
        # Small pages keep the seed small (a fuzzer mutates every byte of it).
        subprocess.run(["sqlite3", db, "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;"], check=True,
                       capture_output=True)
        put("run_db", "check.db", open(db, "rb").read())
    finally:
        shutil.rmtree(work)


def kernel_cache_seeds():
    work = tempfile.mkdtemp()
    try:
        src = os.path.join(work, "k.cpp")
        open(src, "w").write('extern "C" void tcprof_kernel(float* o, const float* a) { o[0] = a[0] * 2.0f; }\n')
        subprocess.run(["g++", "-shared", "-fPIC", "-O2", "-s", src, "-o", os.path.join(work, "k.so")], check=True)
        put("kernel_cache", "kernel.so", open(os.path.join(work, "k.so"), "rb").read())
    finally:
        shutil.rmtree(work)
    put("kernel_cache", "autotune.txt", "tcprof-autotune 3\n120500 98000 libtorch 0.012 0.02 0.02 -1 0\n"
                                        "4000 9000 kernel 0.01 0.015 0.02 1 2 1 4000 0.01 0 4600 0.02\n"
                                        "0 0 unmeasured 0 0 0 -1 0\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    trace_seeds()
    kineto_seeds()
    input_spec_seeds()
    tcprof_seeds(os.path.abspath(sys.argv[1]))
    kernel_cache_seeds()
