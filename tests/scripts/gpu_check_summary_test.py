"""scripts/gpu_check_summary.py: the GPU check's summary reads what tcprof's commands write, and judges
each GPU issue's target from what was measured only.

usage: gpu_check_summary_test.py TCPROF FUZZ_GRAPHS MODEL INPUT

TCPROF and FUZZ_GRAPHS are this build's programs, MODEL a small sample model and INPUT its --input
spec: the first case feeds the summary the JSON that `tcprof bench` and `fuzz_graphs` really write
(on the CPU), so a renamed field shows here and not in a GPU machine's few minutes.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUMMARY = os.path.join(ROOT, "scripts", "gpu_check_summary.py")
TCPROF, FUZZ_GRAPHS, MODEL, INPUT = sys.argv[1:5] if len(sys.argv) >= 5 else (None,) * 4


def summarize(out):
    done = subprocess.run([sys.executable, SUMMARY, out, "2.11.0", "13.0", "NVIDIA H200", "300"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"gpu_check_summary.py failed: {done.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f), done.stdout


def target(summary, words):
    found = [t for t in summary["targets"] if words in t["target"]]
    assert len(found) == 1, f"one target with {words!r}, found {found}"
    return found[0]


def write(out, name, data):
    os.makedirs(os.path.dirname(os.path.join(out, name)), exist_ok=True)
    with open(os.path.join(out, name), "w") as f:
        f.write(data if isinstance(data, str) else json.dumps(data))


class FromWhatTcprofWrites(unittest.TestCase):
    """The benches' and fuzz_graphs' own output, made on this machine's CPU."""

    @unittest.skipUnless(TCPROF, "needs tcprof, fuzz_graphs and a sample model")
    def test_every_figure_the_commands_give_reaches_its_target(self):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, OMP_NUM_THREADS="1")
            def run(args, name):
                done = subprocess.run(args, capture_output=True, text=True, env=env)
                self.assertEqual(done.returncode, 0, f"{args}: {done.stderr}")
                write(out, name, done.stdout)
                return done.stdout
            bench = json.loads(run([TCPROF, "bench", MODEL, "--input", INPUT, "--iters", "3", "--db", "none", "--json"],
                                   "bench_gpt_cuda.json"))
            run([TCPROF, "bench", MODEL, "--input", INPUT, "--recording-cost", "--iters", "4", "--db", "none", "--json"],
                "recording_cost_gpt.json")
            run([FUZZ_GRAPHS, "--seed", "7", "--n", "1"], "fuzz/shard-0.log")
            write(out, "fuzz/seed", "7\n")
            # The training step with the cuda backend's forward and backward (in emulation here).
            train = json.loads(run([TCPROF, "bench", MODEL, "--train", "--backend", "cuda", "--input", INPUT, "--target", INPUT,
                                    "--loss", "cross_entropy", "--optimizer", "adam", "--iters", "1", "--db", "none", "--json"],
                                   "bench_train_gpt_cuda.json"))
            run([FUZZ_GRAPHS, "--backend", "cuda", "--backward", "--seed", "7", "--n", "1"], "fuzz_backward/shard-0.log")
            write(out, "steps.tsv", "build\tpassed\t120\nbench_resnet18_cuda\tskipped: no CUDA device\t0\n")
            summary, text = summarize(out)

        speedup = target(summary, "GPT 8x256: the cuda backend")
        self.assertEqual(speedup["measured"], f"{bench['speedup']:.2f}x")
        self.assertEqual(speedup["verdict"], "met" if bench["speedup"] >= 1.25 else "not met")
        self.assertEqual(target(summary, "GPT 8x256: cold compile")["measured"], f"{bench['compile_s']:.2f} s")
        self.assertNotEqual(target(summary, "GPT 8x256: warm start")["verdict"], "not measured")
        for profile in ("summary", "full"):
            self.assertNotEqual(target(summary, f"GPT 8x256: --profile {profile}")["verdict"], "not measured")
        fuzz = target(summary, "fuzz_graphs")
        self.assertEqual(fuzz["measured"], "1 cases, 0 mismatches, 0 errors")
        self.assertEqual(fuzz["verdict"], "not met", "one case is not the 2,000 the target asks")
        step = summary["timings"]["gpt_train_step_cuda_backend"]
        self.assertEqual(step["tcprof_step_ms"], train["compiled_ms"])
        self.assertEqual(step["tcprof_forward_backward_ms"], train["forward_backward"]["compiled_ms"])
        self.assertEqual(step["warm_start_s"], train["warm_compile_s"])
        self.assertEqual(summary["fuzz_gpu_backward"]["cases"], 1)
        self.assertEqual(summary["fuzz_gpu_backward"]["mismatches"], 0)
        self.assertIn("compiled_backward_cases", summary["fuzz_gpu_backward"])
        self.assertNotIn("compiled_backward_cases", summary["fuzz_gpu"])
        self.assertIn("fuzz_graphs --device cuda --backward (seed ?): 1 cases in 1 of 1 shards", text)
        self.assertIn("gpt_train_step_cuda_backend: eager_step_ms", text)
        # What no step measured is said so, never counted as met.
        for words in ("ResNet18 b32: the cuda backend", "GPT 8x256: faster than torch.compile", "torchvision", "fused Adam"):
            self.assertEqual(target(summary, words)["verdict"], "not measured", words)
        self.assertIn("bench_resnet18_cuda", text)
        self.assertIn("[not measured] issue 33: ResNet18 b32: the cuda backend >= 1.45x eager LibTorch", text)


class Verdicts(unittest.TestCase):
    """The H200's figures of 2026-11-28 (docs/cuda_backend.md) and a GPU run that meets some targets."""

    def test_each_target_is_judged_from_its_figure(self):
        with tempfile.TemporaryDirectory() as out:
            write(out, "steps.tsv", "bench_gpt_cuda\tpassed\t20\nfuzz_gpu\ttimed out after 150s\t150\n")
            write(out, "models/torch_timings.json",
                  {"models": {"gpt_gpu": {"torch_compile_ms": 2.974}, "resnet18": {"torch_compile_ms": 1.874}}})
            write(out, "bench_gpt_cuda.json", {"eager_ms": 3.570, "compiled_ms": 3.127, "speedup": 3.570 / 3.127,
                                               "compile_s": 0.49, "warm_beyond_eager_s": 0.023})
            write(out, "bench_resnet18_cuda.json", {"eager_ms": 2.006, "compiled_ms": 1.380, "speedup": 2.006 / 1.380,
                                                    "compile_s": 3.4, "warm_beyond_eager_s": 0.004})
            write(out, "recording_cost_gpt.json", {"recording_cost": [
                {"profile": "off", "ms_per_call": 3.1, "rows_per_call": 0},
                {"profile": "summary", "ms_per_call": 3.15, "percent_over_off": 1.6, "mean_percent_over_off": 4.2,
                 "rows_per_call": 12},
                {"profile": "full", "ms_per_call": 3.3, "percent_over_off": 6.5, "rows_per_call": 900}]})
            write(out, "bench_train_gpt.json", {"eager_ms": 17.0, "compiled_ms": 14.0, "optimizer": {
                "eager_ms": 5.19, "compiled_ms": 0.25, "compiled": "fused adam (tcprof CUDA)",
                "kernels": [{"name": "fused adam (tcprof CUDA)", "ms": 0.25}, {"name": "fused adam (LibTorch)", "ms": 0.46}]}})
            write(out, "vision/resnet18_bf16.json", {"eager_ms": 2.0, "compiled_ms": 1.5, "speedup": 1.33})
            write(out, "vision/vit_b_16_f32.json", {"eager_ms": 9.0, "compiled_ms": 9.3, "speedup": 0.97})
            for name in ("resnet18_bf16", "vit_b_16_f32", "convnext_tiny_f32"):  # saved by the models step
                write(out, f"models/vision/{name}.pt", "")
            line = ("fuzz_graphs: 50 cases, 400 ops, 100 calls compared: {} mismatches, 0 errors, 0 invalid cases; "
                    "60 kernels with 150 fused ops, 0 fallback calls\n")
            for first in range(0, 2000, 50):  # one shard cut short by the limit: no summary line
                write(out, f"fuzz/shard-{first}.log", line.format(1 if first == 100 else 0) if first != 1950 else "")
            summary, text = summarize(out)

        verdicts = {t["target"]: (t["verdict"], t["measured"]) for t in summary["targets"]}
        self.assertEqual(verdicts["GPT 8x256: the cuda backend >= 1.25x eager LibTorch"], ("not met", "1.14x"))
        self.assertEqual(verdicts["GPT 8x256: faster than torch.compile"], ("not met", "0.95x torch.compile's speed"))
        self.assertEqual(verdicts["ResNet18 b32: the cuda backend >= 1.45x eager LibTorch"], ("met", "1.45x"))
        self.assertEqual(verdicts["ResNet18 b32: faster than torch.compile"][0], "met")
        self.assertEqual(verdicts["ResNet18 b32: cold compile <= 3 s"], ("not met", "3.40 s"))
        self.assertEqual(verdicts["GPT 8x256: warm start <= 0.3 s beyond the eager forward"], ("met", "0.023 s"))
        # Summary is judged by its mean (a sampling summary pays on some calls only), full by its
        # median where the bench gave no mean.
        self.assertEqual(verdicts["GPT 8x256: --profile summary costs <= 3% over off"], ("not met", "+4.2%"))
        self.assertEqual(verdicts["GPT 8x256: --profile full costs <= 10% over off"], ("met", "+6.5%"))
        self.assertEqual(verdicts["ResNet18 b32: --profile summary costs <= 3% over off"][0], "not measured")
        self.assertEqual(verdicts["GPT training step: the fused Adam <= 0.3 ms"],
                         ("met", "0.250 ms (tcprof's CUDA kernel alone)"))
        self.assertEqual(verdicts["every torchvision sample, f32 and bf16: never slower than eager"],
                         ("not met", "2 of 3 timed; slower: vit_b_16_f32 0.97x; not timed: convnext_tiny_f32"))
        self.assertEqual(verdicts["fuzz_graphs --backend cuda on the GPU: 2000 cases, 0 mismatches"],
                         ("not met", "1950 cases, 1 mismatches, 0 errors"))
        self.assertEqual(summary["fuzz_gpu"]["shards_finished"], 39)
        self.assertEqual(verdicts["the GPT sample 8x256: the cuda backend >= 1.25x eager LibTorch"][0], "not measured")
        self.assertIn("targets: 7 met, 6 not met, 6 not measured", text)
        self.assertIn("timed out after 150s", text)

    def test_a_figure_on_its_target_meets_it_and_a_tie_with_torch_compile_does_not(self):
        with tempfile.TemporaryDirectory() as out:
            write(out, "steps.tsv", "bench_gpt_cuda\tpassed\t20\n")
            write(out, "models/torch_timings.json", {"models": {"gpt_gpu": {"torch_compile_ms": 2.0}}})
            write(out, "bench_gpt_cuda.json", {"eager_ms": 2.5, "compiled_ms": 2.0, "speedup": 1.25,
                                               "compile_s": 3.0, "warm_beyond_eager_s": 0.3})
            write(out, "recording_cost_gpt.json", {"recording_cost": [
                {"profile": "off", "ms_per_call": 2.0, "rows_per_call": 0},
                {"profile": "summary", "ms_per_call": 2.06, "percent_over_off": 3.0, "mean_percent_over_off": 3.0,
                 "rows_per_call": 1},
                {"profile": "full", "ms_per_call": 2.2, "percent_over_off": 10.0, "mean_percent_over_off": 10.0,
                 "rows_per_call": 9}]})
            write(out, "bench_train_gpt.json", {"optimizer": {"kernels": [{"name": "fused adam (tcprof CUDA)", "ms": 0.3}]}})
            write(out, "vision/resnet18_f32.json", {"eager_ms": 2.0, "compiled_ms": 2.0, "speedup": 1.0})
            summary, _ = summarize(out)
        verdicts = {t["target"]: t["verdict"] for t in summary["targets"]}
        for met in ("GPT 8x256: the cuda backend >= 1.25x eager LibTorch", "GPT 8x256: cold compile <= 3 s",
                    "GPT 8x256: warm start <= 0.3 s beyond the eager forward",
                    "GPT 8x256: --profile summary costs <= 3% over off", "GPT 8x256: --profile full costs <= 10% over off",
                    "GPT training step: the fused Adam <= 0.3 ms",
                    "every torchvision sample, f32 and bf16: never slower than eager"):
            self.assertEqual(verdicts[met], "met", met)
        self.assertEqual(verdicts["GPT 8x256: faster than torch.compile"], "not met")


class TheCheckItself(unittest.TestCase):
    """scripts/gpu-check.sh with no time left: every step skipped, and the summary still written."""

    @unittest.skipUnless(subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0,
                         "gpu-check.sh needs a Python with torch (ctest runs this with Debian's)")
    def test_an_exhausted_budget_still_writes_the_summary_and_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            env = dict(os.environ, GPU_CHECK_BUDGET_S="0", TORCH_PYTHON=sys.executable,
                       GPU_CHECK_BUILD=os.path.join(tmp, "build"))
            done = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-check.sh"), out],
                                  capture_output=True, text=True, env=env, timeout=240)
            self.assertEqual(done.returncode, 1, "a step with no time left fails the check: " + done.stderr)
            with open(os.path.join(out, "summary.json")) as f:
                summary = json.load(f)
        status = {s["step"]: s["status"] for s in summary["steps"]}
        self.assertTrue(status["configure"].startswith("skipped: out of time"), status["configure"])
        self.assertTrue(status["bench_gpt_cuda"].startswith("skipped"), status["bench_gpt_cuda"])
        self.assertTrue(status["ctest"].startswith("skipped"), status["ctest"])
        self.assertEqual({t["verdict"] for t in summary["targets"]}, {"not measured"})


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
