#!/usr/bin/python3
"""Test MSE/MAE of a trained model with the Python reference, the way train_informer.py evaluates
(official §6 pipeline: scaled data, batch 32, drop_last). Used to cross-check `kinformer eval-ett`.

Usage: /usr/bin/python3 tools/reference/eval_ett.py --config C.json --weights W.safetensors \
           --scaler S.json --data ../shared/data/ett/ETTh1.csv [--seed 2021]
The ProbSparse key sample is random (torch.randint, seeded), so figures differ slightly from the C++
ones unless the config's factor selects every query (then both are deterministic and must agree).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import informer_ref as ref  # noqa: E402
from train_informer import evaluate  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    for name in ("config", "weights", "scaler", "data"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--split", default="test")
    args = p.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    with open(args.config) as f:
        cfg = ref.full_config(json.load(f))
    with open(args.scaler) as f:
        scaler = json.load(f)
    model = ref.Informer(cfg)
    model.load_state_dict(ref.load_safetensors(args.weights))
    split = ref.EttSplit(args.data, args.split, cfg["seq_len"], cfg["label_len"], cfg["pred_len"],
                         scaler["features"], scaler["target"])
    mse, mae, n = evaluate(model, cfg, split, 32)
    print("%s split: mse %.6f mae %.6f over %d windows (python reference)" % (args.split, mse, mae, n))


if __name__ == "__main__":
    main()
