"""A GPT-style decoder: token + position embedding, N identical blocks (layer norm, causal
self-attention with masked_fill/softmax, GELU MLP), final norm and LM head."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, max_len: int):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        mask = torch.tril(torch.ones(max_len, max_len)).view(1, 1, max_len, max_len)
        self.register_buffer("mask", mask)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        hd = C // self.n_heads
        q = q.view(B, T, self.n_heads, hd).transpose(1, 2)
        k = k.view(B, T, self.n_heads, hd).transpose(1, 2)
        v = v.view(B, T, self.n_heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.out(y)


class MLP(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, d_model: int, n_heads: int, max_len: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, max_len)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = MLP(d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab: int = 512, d_model: int = 256, n_heads: int = 8, n_layers: int = 4,
                 max_len: int = 256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_heads, max_len) for _ in range(n_layers)])
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class GPTWithLoss(nn.Module):
    """The training script's usual shape: forward(idx, targets) returns the cross-entropy loss, so
    the loss is part of the compiled graph (and of its backward)."""

    def __init__(self, **config):
        super().__init__()
        self.gpt = GPT(**config)

    def forward(self, idx, targets):
        logits = self.gpt(idx)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class LossesInForward(nn.Module):
    """Every loss the derivative rules cover, in f64, for the rule test against LibTorch autograd:
    cross-entropy (mean, sum with an ignored class, none), nll over log-softmax (F.nll_loss's
    nll_loss_nd and the nll_loss under it), mse with a broadcast target."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 10, dtype=torch.float64))
        self.v = nn.Parameter(torch.randn(10, dtype=torch.float64))

    def forward(self, x, t):
        y = x * self.w
        a = F.cross_entropy(y, t)
        b = F.cross_entropy(y, t, reduction="sum", ignore_index=3)
        c = F.cross_entropy(y, t, reduction="none")
        d = F.nll_loss(F.log_softmax(y, 1), t, ignore_index=2)
        e = F.mse_loss(y, x * 2.0) + F.mse_loss(y, self.v.expand(5, 10), reduction="sum") * 0.1
        f = torch._C._nn.nll_loss(F.log_softmax(y * 0.5, 1), t, None, 2, -100)  # sum; what F.nll_loss wraps
        return a + b * 0.1 + c.sum() * 0.3 + d + e + f * 0.2


class AttentionPatterns(nn.Module):
    """Every form of attention tcprof's fused kernel computes, and one it must leave alone (the
    weights are returned too). Input x [B, T, 48] with T <= 32; 4 heads of 12. Each form has its
    own projection: shared ones would be computed once (CSE) and read by several forms."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(48, 8 * 3 * 48)
        self.register_buffer("causal", torch.tril(torch.ones(32, 32)).view(1, 1, 32, 32))
        # a sliding window: row i keeps keys i-3 .. i
        self.register_buffer("band", torch.ones(32, 32).tril(0).triu(-3) == 0)
        # key padding: the last 8 keys of a 32-long sequence are masked from every row
        self.register_buffer("padding", torch.arange(32).view(1, 32) >= 24)
        # row 0 keeps no key at all: eager's softmax makes it NaN
        blank = torch.tril(torch.ones(32, 32)) == 0
        blank[0, :] = True
        self.register_buffer("blank", blank)
        # cross-attention over a memory of T + 8 tokens: keys of width 12, values of width 20
        self.mem_k = nn.Linear(48, 4 * 12)
        self.mem_v = nn.Linear(48, 4 * 20)

    def forward(self, x):
        B, T, C = x.size()
        p = [t.view(B, T, 4, 12).transpose(1, 2) for t in self.qkv(x).split(C, dim=2)]
        scale = 1.0 / math.sqrt(12)
        causal = F.softmax((p[0] @ p[1].transpose(-2, -1) * scale).masked_fill(self.causal[:, :, :T, :T] == 0,
                                                                               float("-inf")), dim=-1) @ p[2]
        band = F.softmax((p[3] @ p[4].transpose(-2, -1) / math.sqrt(12)).masked_fill(self.band[:T, :T], float("-inf")),
                         dim=-1) @ p[5]
        full = (p[6] @ p[7].transpose(-2, -1) * scale).softmax(-1) @ p[8]
        keys = F.softmax((p[9] @ p[10].transpose(-2, -1)).masked_fill(self.padding[:, :T], float("-inf")), dim=-1) @ p[11]
        blank = F.softmax((p[12] @ p[13].transpose(-2, -1) * scale).masked_fill(self.blank[:T, :T], float("-inf")),
                          dim=-1) @ p[14]
        q3, k3, v3 = p[15].reshape(B * 4, T, 12), p[16].reshape(B * 4, T, 12), p[17].reshape(B * 4, T, 12)
        folded = F.softmax(q3 @ k3.transpose(1, 2) * scale, dim=-1) @ v3
        memory = torch.cat([x, x[:, :8]], dim=1)
        mk = self.mem_k(memory).view(B, T + 8, 4, 12).permute(0, 2, 3, 1)
        mv = self.mem_v(memory).view(B, T + 8, 4, 20).transpose(1, 2)
        cross = F.softmax(p[18] @ mk * scale, dim=-1) @ mv
        w = F.softmax(p[21] @ p[22].transpose(-2, -1) * scale, dim=-1)
        seen = w @ p[23]
        return causal, band, full, keys, blank, folded, cross, seen, w


class MultiHeadSelfAttention(nn.Module):
    """nn.MultiheadAttention as ViT uses it: batch first, self-attention, no weights. In eval mode
    without grad its forward is one aten::_native_multi_head_attention."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(48, 4, batch_first=True)

    def forward(self, x):
        y, _ = self.attn(x, x, x, need_weights=False)
        return y


def build(outdir):
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(GPT().eval()), f"{outdir}/gpt.pt")
    torch.jit.save(torch.jit.script(GPT(n_layers=2, d_model=64, n_heads=4).eval()), f"{outdir}/gpt_tiny.pt")
    torch.jit.save(torch.jit.script(GPTWithLoss(n_layers=2, d_model=64, n_heads=4).eval()),
                   f"{outdir}/gpt_tiny_loss.pt")
    torch.jit.save(torch.jit.script(LossesInForward()), f"{outdir}/losses_in_forward.pt")
    torch.jit.save(torch.jit.script(AttentionPatterns().eval()), f"{outdir}/attention_patterns.pt")
    torch.jit.save(torch.jit.script(MultiHeadSelfAttention().eval()), f"{outdir}/multi_head_attention.pt")
