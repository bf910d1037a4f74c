#!/usr/bin/python3
"""Times the Python reference Informer (tools/reference/informer_ref.py, eval mode, no_grad) on the
default config of informer-model.md §1 with random weights; prints one JSON line per point like
bench_model's (style.md §5). Its ProbSparse materialises the sampled keys as the official code
does, so it stands in for the official implementation's speed (PyTorch eager).

Usage: /usr/bin/python3 tools/reference/time_model.py --seq_len 96 --batch 32 [--runs 5] [--threads 2]
       python3 tools/reference/time_model.py --device cuda --seq_lens 96,720 --batch 64 \\
           --precisions fp32,tf32,fp16,bf16 [--runs 20]
Precisions on CUDA: fp32 = TF32 off for matmul and cuDNN (informer-model.md §9.13); tf32 = both on;
default = PyTorch's own defaults (cuDNN convs in TF32, matmul not); fp16/bf16 = torch.autocast.
CUDA timings synchronise the device before reading the clock. Exit status 3 with one JSON line
{"error":"backend_unavailable",...} when --device cuda is asked for and torch has no usable GPU.
"""
import argparse
import contextlib
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import informer_ref as ref  # noqa: E402


def set_precision(device, precision):
    """Returns the autocast context for `precision` after setting the TF32 switches."""
    if device != "cuda":
        return contextlib.nullcontext()
    tf32 = {"fp32": False, "tf32": True}.get(precision)
    if precision == "default":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = True
    elif tf32 is not None:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[precision]
        return torch.autocast(device_type="cuda", dtype=dtype)
    return contextlib.nullcontext()


def time_point(model, device, seq_len, batch, runs, precision, threads):
    cfg = model.cfg
    l_dec = cfg["label_len"] + cfg["pred_len"]
    x_enc = torch.randn(batch, seq_len, 7)
    x_mark_enc = torch.rand(batch, seq_len, 4) - 0.5
    x_dec = torch.cat([x_enc[:, -cfg["label_len"]:, :], torch.zeros(batch, cfg["pred_len"], 7)], dim=1)
    x_mark_dec = torch.rand(batch, l_dec, 4) - 0.5
    args = [t.to(device) for t in (x_enc, x_mark_enc, x_dec, x_mark_dec)]
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    times = []
    with torch.no_grad(), set_precision(device, precision):
        for _ in range(3 if device == "cuda" else 1):  # warm-up (cuDNN/cuBLAS plans on CUDA)
            model(*args)
        sync()
        for _ in range(runs):
            t0 = time.perf_counter()
            model(*args)
            sync()
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    median = times[len(times) // 2]
    line = {"bench": "forecast", "backend": "pytorch", "device": device, "seq_len": seq_len, "batch": batch,
            "runs": len(times), "median_ms": round(median, 3), "min_ms": round(times[0], 3),
            "max_ms": round(times[-1], 3), "samples_per_s": round(1000 * batch / median, 1),
            "torch": torch.__version__}
    if device == "cuda":
        line["precision"] = precision
        line["gpu"] = torch.cuda.get_device_name(0)
    else:
        line["threads"] = threads
    print(json.dumps(line, separators=(",", ":")), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seq_len", type=int, default=96)
    p.add_argument("--seq_lens", default=None, help="comma-separated; overrides --seq_len")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--precisions", default="fp32", help="cuda only: fp32,tf32,default,fp16,bf16")
    args = p.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print(json.dumps({"bench": "forecast", "backend": "pytorch", "device": "cuda", "error": "backend_unavailable",
                          "reason": "torch %s has no usable CUDA device (cuda build: %s)"
                          % (torch.__version__, torch.version.cuda)}, separators=(",", ":")), flush=True)
        return 3
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    seq_lens = [int(s) for s in args.seq_lens.split(",")] if args.seq_lens else [args.seq_len]
    precisions = args.precisions.split(",") if args.device == "cuda" else ["fp32"]
    for seq_len in seq_lens:
        cfg = dict(ref.DEFAULT_CONFIG, seq_len=seq_len)
        model = ref.Informer(cfg).float().eval().to(args.device)
        for precision in precisions:
            time_point(model, args.device, seq_len, args.batch, args.runs, precision, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
