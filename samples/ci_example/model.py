"""The model a CI job guards with tcprof check (docs/ci.md).

usage: python3 model.py OUT.pt
"""
import sys

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        h = torch.relu(self.proj(x))
        h = self.norm(h)
        if h.abs().max() > 10:  # a known graph break, recorded in baseline.json
            h = h / 10
        return self.head(h)


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(Classifier().eval()), sys.argv[1])
