"""Small models with one graph break each, one per break type (PRODUCT.md).

Line numbers matter: tests assert the line tcprof reports for each break.
"""
import warnings

import torch
import torch.nn as nn


class PrintInForward(nn.Module):
    def forward(self, x):
        y = x * 2
        print("debug", y.shape)
        return y + 1


class DataDependentBranch(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        if y.sum() > 0:
            y = y * 3
        return y - 1


class ScalarOutput(nn.Module):
    def forward(self, x):
        scale = x.max().item()
        return x / (scale + 1.0)


class DynamicOutputShape(nn.Module):
    def forward(self, x):
        idx = torch.nonzero(x > 0)
        return idx.float().sum() + x.sum()


class ModuleStateMutation(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * 2


class WarnInForward(nn.Module):
    def forward(self, x):
        warnings.warn("checking input")
        return x + 1


class ShapeGuardedBranch(nn.Module):
    def forward(self, x):
        if x.size(0) > 4:
            x = x * 2
        else:
            x = x + 2
        for i in range(x.size(1)):
            x = x + i
        return x


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        y = self.proj(x)
        print("attention output", y.shape)
        return y


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(x + self.attn(x))


class SubmoduleBreak(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


MODELS = {
    "print_in_forward": PrintInForward,
    "data_dependent_branch": DataDependentBranch,
    "scalar_output": ScalarOutput,
    "dynamic_output_shape": DynamicOutputShape,
    "module_state_mutation": ModuleStateMutation,
    "warn_in_forward": WarnInForward,
    "shape_guarded_branch": ShapeGuardedBranch,
    "submodule_break": SubmoduleBreak,
}


def build(outdir):
    torch.manual_seed(0)
    for name, cls in MODELS.items():
        model = cls().eval()
        torch.jit.save(torch.jit.script(model), f"{outdir}/{name}.pt")


class FourInputs(nn.Module):
    """Four small tensor inputs and a few pointwise ops: the runtime's per-call overhead dominates."""

    def forward(self, a, b, c, d):
        return a + b * c - d


class RaiseInForward(nn.Module):
    def forward(self, x, strict: bool):
        if strict:
            raise RuntimeError("strict mode rejects this input")
        return x + 1


class DictInForward(nn.Module):
    def forward(self, x):
        parts = {"double": x * 2, "half": x / 2}
        return parts["double"] + parts["half"]


class NoShapeRule(nn.Module):
    """cumprod has no symbolic shape rule: with dimension 1 dynamic, reading its size breaks."""

    def forward(self, x):
        y = torch.cumprod(x, dim=1)
        return y.reshape(y.size(0) * y.size(1))


def build_extra(outdir):
    torch.jit.save(torch.jit.script(FourInputs().eval()), f"{outdir}/four_inputs.pt")
    torch.jit.save(torch.jit.script(RaiseInForward().eval()), f"{outdir}/raise_in_forward.pt")
    torch.jit.save(torch.jit.script(DictInForward().eval()), f"{outdir}/dict_in_forward.pt")
    torch.jit.save(torch.jit.script(NoShapeRule().eval()), f"{outdir}/no_shape_rule.pt")


class StatefulCounter(nn.Module):
    """Keeps state across calls and returns it: an uncompiled reference must be its own copy."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * self.calls


def build_stateful(outdir):
    torch.jit.save(torch.jit.script(StatefulCounter().eval()), f"{outdir}/stateful_counter.pt")
