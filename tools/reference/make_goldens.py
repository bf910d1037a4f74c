#!/usr/bin/python3
"""Writes the golden files kinformer's models tests compare against (tests/models/).

Usage: /usr/bin/python3 tools/reference/make_goldens.py --out DIR

DIR/weights.safetensors  default-config (§1) model, seed 0, with non-trivial LayerNorm and
                         BatchNorm parameters and running statistics (default ones would hide a
                         missing normalisation), official state_dict names.
DIR/<case>/config.json   the config (main_informer.py names) of that case
DIR/<case>/*.npy         inputs (x_enc, x_mark_enc, x_dec, x_mark_dec), the captured ProbSparse
                         key samples idx<k> and selected queries top<k> (k = call order, §3.4),
                         every intermediate of §2 and the output.
Cases: s96 (96/48/24), s720 (720/48/24), s97 (97/30/11, odd lengths),
full_nomix (96/48/24 with attn=full, mix=False), s96_mean_std and s96_last_value (96/48/24 with
instance_norm; x_enc has a per-window offset and scale so the normalisation matters, the x_dec
placeholder holds noise the model must ignore; s96_mean_std is affine and has its own
DIR/<case>/weights.safetensors with instance_norm.weight/bias), s96_naive_residual (pred_len 30)
and s96_linear_residual (the correction to the last day repeated, and to a random linear map kept
as instance_norm.linear_base in the case's own weights file).
The forward pass runs in float64 (then saved as float32), so the goldens are the exact math and
the tests measure the C++ fp32 error alone. B = 2 everywhere.
DIR/MANIFEST is written last; its presence means the set is complete. It records a hash of the
generator sources, and a run whose sources match an existing MANIFEST returns at once.
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import informer_ref as ref  # noqa: E402

CASES = {
    "s96": dict(seq_len=96, label_len=48, pred_len=24),
    "s720": dict(seq_len=720, label_len=48, pred_len=24),
    "s97": dict(seq_len=97, label_len=30, pred_len=11),  # odd lengths: distil 97 -> 49
    "full_nomix": dict(seq_len=96, label_len=48, pred_len=24, attn="full", mix=False),
    # instance normalisation (issue 28): the placeholder rows of x_dec get noise, which the
    # model must ignore; the affine case has its own weights file with the two extra tensors
    "s96_mean_std": dict(seq_len=96, label_len=48, pred_len=24, instance_norm="mean_std", instance_norm_affine=True),
    "s96_last_value": dict(seq_len=96, label_len=48, pred_len=24, instance_norm="last_value"),
    # the correction to the last day repeated: pred_len 30 wraps past one day (24 rows)
    "s96_naive_residual": dict(seq_len=96, label_len=48, pred_len=30, instance_norm="naive_residual",
                               instance_norm_affine=True, naive_base="last_day"),
    # the correction to a linear forecast; the map is random here, fitted by ridge in training
    "s96_linear_residual": dict(seq_len=96, label_len=48, pred_len=24, instance_norm="linear_residual",
                                instance_norm_affine=True),
}
BATCH = 2


def perturb_norms(model, gen):
    """LayerNorm/BatchNorm statistics as informer-model.md §10 item 12 asks."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.LayerNorm, torch.nn.BatchNorm1d)):
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=gen))


def save(folder, name, tensor):
    arr = tensor.detach().numpy()
    arr = arr.astype(np.float32) if arr.dtype.kind == "f" else arr.astype(np.int64)
    np.save(os.path.join(folder, name + ".npy"), arr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for name in ("make_goldens.py", "informer_ref.py"):
        with open(os.path.join(here, name), "rb") as f:
            digest.update(f.read())
    stamp = "torch %s, cases %s, batch %d, sources %s\n" % (
        torch.__version__, " ".join(CASES), BATCH, digest.hexdigest()[:16])
    manifest = os.path.join(args.out, "MANIFEST")
    if os.path.exists(manifest) and open(manifest).read() == stamp:
        print("make_goldens: %s is up to date" % args.out)
        return
    if os.path.exists(manifest):
        os.remove(manifest)
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    base = ref.Informer(dict(ref.DEFAULT_CONFIG))
    perturb_norms(base, gen)
    state = base.state_dict()
    ref.save_safetensors(os.path.join(args.out, "weights.safetensors"), state,
                         {"format": "pt", "source": "kinformer tools/reference/make_goldens.py"})
    for case, overrides in CASES.items():
        cfg = dict(ref.DEFAULT_CONFIG, **overrides)
        model = ref.Informer(cfg)
        folder = os.path.join(args.out, case)
        os.makedirs(folder, exist_ok=True)
        if cfg.get("instance_norm_affine") or cfg["instance_norm"] == "linear_residual":
            model.load_state_dict(state, strict=False)
            with torch.no_grad():
                if cfg.get("instance_norm_affine"):
                    model.instance_norm.weight.copy_(1 + 0.1 * torch.randn(cfg["enc_in"], generator=gen))
                    model.instance_norm.bias.copy_(0.1 * torch.randn(cfg["enc_in"], generator=gen))
                if cfg["instance_norm"] == "linear_residual":
                    shape = model.instance_norm.linear_base.shape
                    model.instance_norm.linear_base.copy_(0.05 * torch.randn(shape, generator=gen))
            ref.save_safetensors(os.path.join(folder, "weights.safetensors"), model.state_dict(),
                                 {"format": "pt", "source": "kinformer tools/reference/make_goldens.py"})
        else:
            model.load_state_dict(state)
        model = model.double().eval()
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(ref.config_json(cfg), f, indent=1)
        l_dec = cfg["label_len"] + cfg["pred_len"]
        x_enc = torch.randn(BATCH, cfg["seq_len"], cfg["enc_in"], generator=gen)
        placeholder = torch.zeros(BATCH, cfg["pred_len"], cfg["dec_in"])
        if cfg.get("instance_norm", "none") != "none":
            x_enc = 3 * x_enc + 5 * torch.randn(BATCH, 1, cfg["enc_in"], generator=gen)
            placeholder = torch.randn(BATCH, cfg["pred_len"], cfg["dec_in"], generator=gen)
        x_mark_enc = torch.rand(BATCH, cfg["seq_len"], 4, generator=gen) - 0.5
        x_dec = torch.cat([x_enc[:, -cfg["label_len"]:, :], placeholder], dim=1)
        x_mark_dec = torch.rand(BATCH, l_dec, 4, generator=gen) - 0.5
        inputs = dict(x_enc=x_enc, x_mark_enc=x_mark_enc, x_dec=x_dec, x_mark_dec=x_mark_dec)
        for name, t in inputs.items():
            save(folder, name, t)
        hook, trace = ref.ProbSparseHook(capture=True), {}
        with torch.no_grad():
            model(*[t.double() for t in inputs.values()], hook=hook, trace=trace)
        for k, (idx, top) in enumerate(zip(hook.idx, hook.top)):
            save(folder, "idx%d" % k, idx)
            save(folder, "top%d" % k, top)
        for name, t in trace.items():
            save(folder, name, t)
        print("make_goldens: %s: %d sampler calls, %s" % (case, len(hook.idx), ", ".join(trace)))
    with open(manifest, "w") as f:
        f.write(stamp)


if __name__ == "__main__":
    main()
