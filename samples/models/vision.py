"""torchvision classification models, scripted with random weights (nothing is downloaded)."""
import torch
import torchvision


def build(outdir):
    torch.manual_seed(0)
    for name in ["resnet18", "mobilenet_v2", "efficientnet_b0", "shufflenet_v2_x1_0", "squeezenet1_1",
                 "convnext_tiny", "vit_b_16"]:
        model = getattr(torchvision.models, name)().eval()
        torch.jit.save(torch.jit.script(model), f"{outdir}/{name}.pt")
