"""A small CNN: conv/batch-norm/ReLU stages, max pooling, global pooling and a classifier."""
import torch
import torch.nn as nn


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
            nn.Conv2d(32, 32, 3, padding=1, groups=32), nn.BatchNorm2d(32), nn.ReLU6(inplace=True),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.features(x)
        x = self.pool(x).flatten(1)
        return self.fc(x)


class ConvChains(nn.Module):
    """Every pattern the layout pass handles, each where it is hardest: a residual that is also the
    convolution's own input, one read again after the add, a downsample branch that runs after the
    main branch (ResNet), grouped and dilated convolutions, odd sizes with stride 2, each activation
    that fuses as a post-op, a squeeze-and-excitation block (EfficientNet's: pool, two 1x1
    convolutions, a per-channel scale before the projection; its squeeze width is not a multiple of
    a block), a fire module (SqueezeNet's: two convolutions concatenated, then a ceil-mode max pool
    another convolution reads; a second cat whose first part is not a whole block, one part read
    by both cats, a max pool with padding and the default stride), ConvNeXt's channels-last
    convolutions (a layer norm between two permutes hands the convolution a channels-last input,
    eager then writes its output channels-last too, and a residual arrives that way), and chain
    values that leave as graph outputs."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        self.same = nn.Conv2d(16, 16, 3, padding=1)
        self.a = nn.Conv2d(16, 32, 3, padding=1)
        self.b = nn.Conv2d(32, 32, 3, padding=2, dilation=2, groups=4)
        self.main1 = nn.Sequential(nn.Conv2d(32, 48, 3, stride=2, padding=1), nn.BatchNorm2d(48), nn.ReLU())
        self.main2 = nn.Sequential(nn.Conv2d(48, 48, 3, padding=1), nn.BatchNorm2d(48))
        self.down = nn.Sequential(nn.Conv2d(32, 48, 1, stride=2), nn.BatchNorm2d(48))
        self.dw = nn.Conv2d(48, 48, 3, padding=1, groups=48)
        self.pw = nn.Conv2d(48, 24, 1)
        self.head = nn.Conv2d(24, 24, 1)
        self.head2 = nn.Conv2d(24, 24, 3, padding=1)
        self.squeeze = nn.Conv2d(48, 12, 1)
        self.excite = nn.Conv2d(12, 48, 1)
        self.project = nn.Conv2d(48, 24, 1)
        self.expand1 = nn.Conv2d(24, 16, 1)
        self.expand3 = nn.Conv2d(24, 16, 3, padding=1)
        self.after_pool = nn.Conv2d(32, 16, 3, padding=1)
        self.odd = nn.Conv2d(24, 12, 1)
        self.norm_in = nn.LayerNorm(24)
        self.down_cl = nn.Conv2d(24, 32, 2, stride=2)
        self.norm_mid = nn.LayerNorm(32)
        self.dw7 = nn.Conv2d(32, 32, 7, padding=3, groups=32)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(self.same(x) + x)              # the residual is the conv's own input
        a = torch.nn.functional.silu(self.a(x))
        b = self.b(a) + a                             # grouped, dilated; `a` is read again below
        b = b * a.mean()
        m = self.main2(self.main1(b))
        out = torch.relu(m + self.down(b))            # fused into the downsample conv, which runs last
        d = torch.nn.functional.relu6(self.dw(out))
        s = torch.sigmoid(self.excite(torch.nn.functional.silu(self.squeeze(torch.nn.functional.adaptive_avg_pool2d(d, 1)))))
        e = self.project(s * d)                       # torchvision's order: scale * input
        p = torch.sigmoid(self.pw(d))
        h = torch.nn.functional.gelu(self.head2(p))
        t = torch.tanh(self.head(p) * 0.5)
        f1 = torch.relu(self.expand1(p))
        f = torch.cat([f1, torch.relu(self.expand3(p))], 1)
        g = torch.relu(self.after_pool(torch.nn.functional.max_pool2d(f, 3, 2, ceil_mode=True)))
        q = torch.nn.functional.max_pool2d(torch.cat([self.odd(p), f1], 1), 2, padding=1)
        fire = torch.cat([g.flatten(1), q.flatten(1), f.amax(dim=(2, 3))], 1)  # f is read densely too
        c = self.down_cl(self.norm_in(e.permute(0, 2, 3, 1)).permute(0, 3, 1, 2))  # a channels-last input
        r = self.norm_mid(c.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        z = self.dw7(r) + r                           # input and residual channels-last, dense
        return h, t, torch.nn.functional.adaptive_avg_pool2d(d, 1).flatten(1), e, fire, z


def build(outdir):
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(SmallCNN().eval()), f"{outdir}/cnn.pt")
    chains = ConvChains()
    for bn in chains.modules():  # batch norm statistics that make folding change the weights
        if isinstance(bn, nn.BatchNorm2d):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.2, 0.2)
    torch.jit.save(torch.jit.script(chains.eval()), f"{outdir}/conv_chains.pt")
