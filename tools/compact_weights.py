#!/usr/bin/python3
"""Rewrite trained Informer weights so that they fit the 10 MB a committed model may take.

Usage:
  tools/compact_weights.py IN.safetensors OUT.safetensors [--dtype f16|f32]

Two things shrink the file, and neither changes the model's structure:
- the `*.position_embedding.pe` buffers are left out: they are a fixed [5000, d_model] sinusoid
  table that the official code computes in __init__ and kinformer's loader recomputes when absent
  (models::fill_positional_table); at d_model 256 they are 10.2 MB of a 21.6 MB file;
- with --dtype f16 every float tensor is stored as IEEE half (kinformer widens it to fp32 on load),
  which rounds each weight to 11 significant bits.
Rounding changes the forecasts slightly, so a compacted model's test figures must be measured on the
compacted file (tools/record_eval_ett.py), never copied from the fp32 training run.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
import informer_ref as ref  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source")
    p.add_argument("target")
    p.add_argument("--dtype", choices=["f16", "f32"], default="f16")
    args = p.parse_args()
    tensors = ref.load_safetensors(args.source)
    kept = {}
    for name, t in tensors.items():
        if name.endswith(".position_embedding.pe"):
            continue
        kept[name] = t.to(torch.float16) if args.dtype == "f16" and t.is_floating_point() else t
    ref.save_safetensors(args.target, kept, {"format": "pt", "source": "kinformer tools/compact_weights.py",
                                             "dtype": args.dtype, "dropped": "position_embedding.pe"})
    print("%s: %d of %d tensors, %.1f MB -> %.1f MB" % (args.target, len(kept), len(tensors),
                                                        os.path.getsize(args.source) / 1e6,
                                                        os.path.getsize(args.target) / 1e6))


if __name__ == "__main__":
    main()
