#!/usr/bin/python3
"""Evaluate committed Informer weights with `kinformer eval-ett` and record or check the figures.

Usage:
  tools/record_eval_ett.py --kinformer build/bin/kinformer --data ../shared/data/ett/ETTh1.csv \
      [--check] models/weights/NAME [models/weights/NAME ...]

NAME is a weights prefix: NAME.json, NAME.safetensors, NAME.scaler.json and NAME.metrics.json.
Without --check, the scaled test MSE/MAE that eval-ett prints (onednn backend, fp32, batch 32,
drop_last, ProbSparse sampling seeded with --seed) are written into NAME.metrics.json under
"eval_ett". With --check, each recorded "eval_ett" MSE and MAE must be reproduced to 3 decimals (within 5e-4);
a model without a recorded figure fails the check, so no committed model goes unchecked.
"""
import argparse
import json
import os
import re
import subprocess
import sys

LINE = re.compile(r"mse (?P<mse>[0-9.]+) mae (?P<mae>[0-9.]+) over (?P<windows>[0-9]+) windows")


def eval_ett(kinformer, data, prefix, seed):
    cmd = [kinformer, "eval-ett", "--config", prefix + ".json", "--weights", prefix + ".safetensors",
           "--scaler", prefix + ".scaler.json", "--data", data, "--backend", "onednn", "--seed", str(seed)]
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    found = LINE.search(run.stdout)
    if run.returncode != 0 or not found:
        sys.exit("record_eval_ett: %s failed (exit %d):\n%s%s" % (" ".join(cmd), run.returncode, run.stdout, run.stderr))
    return {"mse": float(found["mse"]), "mae": float(found["mae"]), "windows": int(found["windows"]),
            "backend": "onednn", "precision": "fp32", "seed": seed}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kinformer", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--check", action="store_true")
    p.add_argument("models", nargs="+")
    args = p.parse_args()
    failures = 0
    for prefix in args.models:
        with open(prefix + ".metrics.json") as f:
            metrics = json.load(f)
        name = os.path.basename(prefix)
        recorded = metrics.get("eval_ett")
        if args.check and recorded is None:
            print("%s: FAIL, no eval_ett figure is recorded in %s.metrics.json" % (name, prefix))
            failures += 1
            continue
        got = eval_ett(args.kinformer, args.data, prefix, args.seed)
        if not args.check:
            metrics["eval_ett"] = got
            with open(prefix + ".metrics.json", "w") as f:
                json.dump(metrics, f, indent=1)
                f.write("\n")
            print("%s: recorded mse %.6f mae %.6f over %d windows" % (name, got["mse"], got["mae"], got["windows"]))
            continue
        # "To 3 decimals" as a tolerance, so a figure near a rounding boundary does not flip.
        same = all(abs(got[k] - recorded[k]) < 5e-4 for k in ("mse", "mae"))
        same = same and got["windows"] == recorded["windows"]
        print("%s: %s, recorded mse %.6f mae %.6f (%d windows), eval-ett now mse %.6f mae %.6f (%d windows)" %
              (name, "ok" if same else "FAIL", recorded["mse"], recorded["mae"], recorded["windows"],
               got["mse"], got["mae"], got["windows"]))
        failures += 0 if same else 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
