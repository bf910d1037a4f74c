#!/usr/bin/python3
"""Train several Informer configurations and keep the one with the lowest validation loss (issue 28).

Usage:
  /usr/bin/python3 tools/sweep_informer.py --out models/weights/etth1_s_24 --work /tmp/sweep_s24 \
      [--parallel 2] -- --data ../shared/data/ett/ETTh1.csv --features S --pred_len 24 ... \
      --grid instance_norm=last_value,mean_std learning_rate=5e-4,1e-3

Everything after `--` up to `--grid` is passed to tools/train_informer.py for every candidate; each
`KEY=V1,V2` after `--grid` is one axis of the grid (train_informer.py option names). Candidates run
`--parallel` at a time, one torch thread each. The choice uses each candidate's best validation loss
only (train_informer.py keeps the best-validation epoch); the test figures are never looked at. The
winner's files are copied to --out, and its metrics.json gets "selection": every candidate's
arguments, validation losses and training minutes, so the choice can be checked. --previous adds
candidates an earlier sweep finished (their prefixes) to the choice.
"""
import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse():
    argv = sys.argv[1:]
    if "--" not in argv or "--grid" not in argv:
        sys.exit(__doc__)
    own, rest = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    base, grid = rest[:rest.index("--grid")], rest[rest.index("--grid") + 1:]
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--previous", nargs="*", default=[],
                   help="prefixes of candidates an earlier sweep finished, chosen among too")
    args = p.parse_args(own)
    axes = []
    for item in grid:
        key, _, values = item.partition("=")
        axes.append([(key, v) for v in values.split(",")])
    return args, base, [dict(c) for c in itertools.product(*axes)]


def main():
    args, base, candidates = parse()
    os.makedirs(args.work, exist_ok=True)
    running, done = [], []
    for prefix in args.previous:
        with open(prefix + ".metrics.json") as f:
            m = json.load(f)
        done.append({"prefix": prefix, "grid": m.get("grid", {}), "best_val_loss": m["best_val_loss"],
                     "val_losses": m["val_losses"], "kept_epoch": m["kept_epoch"], "minutes": m["minutes"],
                     "args": m.get("args")})
    queue = list(enumerate(candidates))
    while queue or running:
        while queue and len(running) < args.parallel:
            i, cand = queue.pop(0)
            prefix = os.path.join(args.work, "c%02d" % i)
            cmd = [sys.executable, os.path.join(HERE, "train_informer.py"), *base, "--threads", "1", "--out", prefix]
            for k, v in cand.items():
                cmd += ["--" + k, v]
            log = open(prefix + ".log", "w")
            print("sweep: start %s %s" % (prefix, json.dumps(cand)), flush=True)
            running.append((prefix, cand, subprocess.Popen(cmd, stdout=log, stderr=subprocess.DEVNULL)))
        time.sleep(2)
        for item in list(running):
            prefix, cand, proc = item
            if proc.poll() is None:
                continue
            running.remove(item)
            if proc.returncode != 0:
                print("sweep: %s failed (exit %d), see %s.log" % (prefix, proc.returncode, prefix), flush=True)
                continue
            with open(prefix + ".metrics.json") as f:
                m = json.load(f)
            done.append({"prefix": prefix, "grid": cand, "best_val_loss": m["best_val_loss"],
                         "val_losses": m["val_losses"], "kept_epoch": m["kept_epoch"], "minutes": m["minutes"],
                         "args": m.get("args")})
            print("sweep: %s val %.5f (%s)" % (prefix, m["best_val_loss"], json.dumps(cand)), flush=True)
    if not done:
        sys.exit("sweep: no candidate finished")
    best = min(done, key=lambda d: d["best_val_loss"])
    print("sweep: chose %s by validation loss %.5f" % (best["prefix"], best["best_val_loss"]), flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    for ext in (".safetensors", ".json", ".scaler.json"):
        shutil.copyfile(best["prefix"] + ext, args.out + ext)
    with open(best["prefix"] + ".metrics.json") as f:
        metrics = json.load(f)
    metrics["selection"] = {"by": "lowest best_val_loss; test figures not consulted", "base_args": base,
                            "chosen": best["grid"], "candidates": done,
                            "sweep_minutes": sum(d["minutes"] for d in done)}
    with open(args.out + ".metrics.json", "w") as f:
        json.dump(metrics, f, indent=1)


if __name__ == "__main__":
    main()
