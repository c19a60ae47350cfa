"""Builds every sample model into OUTDIR. Run with Debian's python3-torch: /usr/bin/python3.

usage: build_all.py OUTDIR [--skip-vision]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import breaks  # noqa: E402
import cnn  # noqa: E402
import gpt  # noqa: E402
import gate_variants  # noqa: E402
import numerics  # noqa: E402


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    breaks.build(outdir)
    breaks.build_extra(outdir)
    breaks.build_stateful(outdir)
    gpt.build(outdir)
    cnn.build(outdir)
    gate_variants.build(outdir)
    numerics.build(outdir)
    if "--skip-vision" not in sys.argv:
        import vision
        vision.build(outdir)
    with open(os.path.join(outdir, "stamp"), "w") as f:
        f.write("ok\n")


if __name__ == "__main__":
    main()
