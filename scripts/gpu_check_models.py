"""The GPU check's models and its torch.compile side (scripts/gpu-check.sh).

usage: gpu_check_models.py OUTDIR [--iters N] [--vision]

Builds the GPU samples as TorchScript files in OUTDIR (gpt_gpu.pt: the sample GPT scaled up as on
the H200, 6 blocks, d=512, 8 heads, vocab 8192; gpt_gpu_loss.pt: the same with its cross-entropy
loss in forward, for training; gpt.pt: the sample GPT as bundled; resnet18.pt: torchvision's; vision/NAME_f32.pt and NAME_bf16.pt:
the torchvision samples in f32 and with bf16 weights, for the cuda backend's "never slower than
eager" check), then times the very same Python
modules on the GPU in eager mode and under torch.compile (Inductor), CUDA-event medians, and
writes OUTDIR/torch_timings.json. Without a GPU the models are still built and the timings are
reported as skipped.
"""
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples", "models"))
import gpt  # noqa: E402

GPT_CONFIG = dict(vocab=8192, d_model=512, n_heads=8, n_layers=6, max_len=256)


def models():
    torch.manual_seed(0)
    out = {"gpt_gpu": (gpt.GPT(**GPT_CONFIG).eval(), lambda dev: (torch.randint(0, 8192, (8, 256), device=dev),))}
    out["gpt_gpu_loss"] = (gpt.GPTWithLoss(**GPT_CONFIG).eval(), None)
    try:
        import torchvision
        out["resnet18"] = (torchvision.models.resnet18().eval(), lambda dev: (torch.randn(32, 3, 224, 224, device=dev),))
    except ImportError:
        print("gpu_check_models: no torchvision: resnet18 left out", file=sys.stderr)
    # The sample GPT as bundled (4 blocks, d=256, vocab 512) at batch 8 x 256: the cuda backend's
    # other GPT target, a model small enough that launches, not GEMMs, set its time. Its own seed,
    # so that the models above keep the weights earlier GPU runs had.
    torch.manual_seed(1)
    out["gpt"] = (gpt.GPT().eval(), lambda dev: (torch.randint(0, 512, (8, 256), device=dev),))
    return out


# The torchvision samples (samples/models/vision.py's set), batch 32 on the GPU.
VISION = ("resnet18", "mobilenet_v2", "efficientnet_b0", "shufflenet_v2_x1_0", "squeezenet1_1", "convnext_tiny",
          "vit_b_16")


def save_vision(outdir):
    try:
        import torchvision
    except ImportError:
        return
    os.makedirs(os.path.join(outdir, "vision"), exist_ok=True)
    for name in VISION:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)().eval()
        torch.jit.save(torch.jit.script(model), os.path.join(outdir, "vision", f"{name}_f32.pt"))
        torch.jit.save(torch.jit.script(model.to(torch.bfloat16)), os.path.join(outdir, "vision", f"{name}_bf16.pt"))


def median_ms(fn, args, iters):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    outdir = sys.argv[1]
    iters = int(sys.argv[sys.argv.index("--iters") + 1]) if "--iters" in sys.argv else 30
    os.makedirs(outdir, exist_ok=True)
    built = models()
    for name, (module, _) in built.items():
        torch.jit.save(torch.jit.script(module), os.path.join(outdir, f"{name}.pt"))
    if "--vision" in sys.argv:
        save_vision(outdir)
    result = {"torch": torch.__version__, "cuda": torch.version.cuda, "models": {}}
    if not torch.cuda.is_available():
        result["skipped"] = "no CUDA device visible to PyTorch"
    else:
        result["device"] = torch.cuda.get_device_name(0)
        for name, (module, make_inputs) in built.items():
            if make_inputs is None:
                continue
            module = module.cuda()
            args = make_inputs("cuda")
            with torch.no_grad():
                eager = median_ms(module, args, iters)
                begin = time.perf_counter()
                compiled = torch.compile(module)
                compiled(*args)
                torch.cuda.synchronize()
                compile_s = time.perf_counter() - begin
                inductor = median_ms(compiled, args, iters)
            result["models"][name] = {"python_eager_ms": eager, "torch_compile_ms": inductor,
                                      "torch_compile_first_call_s": compile_s}
            print(f"{name}: Python eager {eager:.3f} ms, torch.compile {inductor:.3f} ms "
                  f"(first call {compile_s:.1f} s)")
    with open(os.path.join(outdir, "torch_timings.json"), "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
