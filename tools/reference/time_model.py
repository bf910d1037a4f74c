#!/usr/bin/python3
"""Times the Python reference Informer (tools/reference/informer_ref.py, PyTorch CPU, eval mode,
no_grad) on the default config of informer-model.md §1 with random weights; prints one JSON line
like bench_model's (style.md §5). Its ProbSparse materialises the sampled keys as the official code
does, so it stands in for the official implementation's CPU speed.

Usage: /usr/bin/python3 tools/reference/time_model.py --seq_len 96 --batch 32 [--runs 5] [--threads 2]
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import informer_ref as ref  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seq_len", type=int, default=96)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    cfg = dict(ref.DEFAULT_CONFIG, seq_len=args.seq_len)
    model = ref.Informer(cfg).float().eval()
    b, l_dec = args.batch, cfg["label_len"] + cfg["pred_len"]
    x_enc = torch.randn(b, args.seq_len, 7)
    x_mark_enc = torch.rand(b, args.seq_len, 4) - 0.5
    x_dec = torch.cat([x_enc[:, -cfg["label_len"]:, :], torch.zeros(b, cfg["pred_len"], 7)], dim=1)
    x_mark_dec = torch.rand(b, l_dec, 4) - 0.5
    times = []
    with torch.no_grad():
        model(x_enc, x_mark_enc, x_dec, x_mark_dec)  # warm-up
        for _ in range(args.runs):
            t0 = time.perf_counter()
            model(x_enc, x_mark_enc, x_dec, x_mark_dec)
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    median = times[len(times) // 2]
    print(json.dumps({"bench": "forecast", "backend": "pytorch", "seq_len": args.seq_len, "batch": b,
                      "runs": len(times), "median_ms": round(median, 2), "min_ms": round(times[0], 2),
                      "max_ms": round(times[-1], 2), "samples_per_s": round(1000 * b / median, 1),
                      "torch": torch.__version__, "threads": args.threads}, separators=(",", ":")))


if __name__ == "__main__":
    main()
