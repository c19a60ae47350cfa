"""One small model in four versions, for the CI gate (tests/gates, docs/ci.md).

gate_base: the committed baseline, one data-dependent branch (line 17).
gate_print: the same with a print() added (line 25): a new graph break.
gate_fixed: the branch replaced by torch.where: the break is gone.
gate_shifted: gate_base with a comment added above, so its branch moves (line 45).
Line numbers matter: tests assert them.
"""
import torch
import torch.nn as nn


class GateBase(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        z = y * 2
        if y.sum() > 0:
            z = z + 1
        return z - 1


class GatePrint(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        print("debug", y.shape)
        z = y * 2
        if y.sum() > 0:
            z = z + 1
        return z - 1


class GateFixed(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        z = y * 2
        z = torch.where(y.sum() > 0, z + 1, z)
        return z - 1


class GateShifted(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        z = y * 2  # scale before the branch
        # a comment that moves the branch one line down
        if y.sum() > 0:
            z = z + 1
        return z - 1


class GateAligned(nn.Module):
    # A branch on divisibility: graphs specialise on aligned sizes (shape advice flags it).
    def forward(self, x):
        if x.size(1) % 8 == 0:
            return x * 2
        return x * 2 + 1


class GateChanged(nn.Module):
    # gate_base with the branch's condition rewritten (line 63): a new break site.
    def forward(self, x):
        y = torch.relu(x)
        z = y * 2
        if y.mean() > 0:
            z = z + 1
        return z - 1


MODELS = {
    "gate_base": GateBase,
    "gate_print": GatePrint,
    "gate_fixed": GateFixed,
    "gate_shifted": GateShifted,
    "gate_aligned": GateAligned,
    "gate_changed": GateChanged,
}


def build(outdir):
    for name, cls in MODELS.items():
        torch.jit.save(torch.jit.script(cls().eval()), f"{outdir}/{name}.pt")
