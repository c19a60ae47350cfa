"""Models whose right answer eager f32 itself rounds: tcprof run --verify judges them against f64."""
import torch
from torch import nn


class ConstantRowsLayerNorm(nn.Module):
    """LayerNorm(28) over x * 0 + y with y of shape [N, 1]: every row is constant, so the exact result
    is the bias. Eager's f32 mean of such a row is off by an ulp, which the normalisation amplifies
    by 1/sqrt(eps) ~ 316 (3e-5 at |y| ~ 2); tcprof sums rows in double and gets the bias."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(28)

    def forward(self, x, y):
        return self.ln(x * 0.0 + y)


def build(outdir):
    torch.jit.save(torch.jit.script(ConstantRowsLayerNorm().eval()), f"{outdir}/constant_rows_layer_norm.pt")
