#!/usr/bin/python3
"""Train an Informer on an hourly ETT CSV on the CPU, the way the official exp_informer does (§6).

Usage (Debian's python3, which has python3-torch):
  /usr/bin/python3 tools/train_informer.py --data ../shared/data/ett/ETTh1.csv --features S \
      --pred_len 24 --out models/weights/etth1_s_24 [--d_model 512 ... any main_informer.py arg]

What follows §6 exactly: borders (train [0,8640), val [8640-seq_len,11520), test
[11520-seq_len,14400)), a scaler fitted on the train rows only (population std), features S or M
(target OT), decoder input = label_len true rows + zeros, MSE loss, Adam, lr halved every epoch
(lradj type1), early stopping on the validation loss (patience), shuffled train/val loaders with
drop_last, test loader batch 32 without shuffle and with drop_last, metrics on scaled data.
The CSV is read by path and never copied (CC BY-ND).

Writes <out>.safetensors (official state_dict names), <out>.json (config, main_informer.py names),
<out>.scaler.json (train mean/std per used column) and <out>.metrics.json (test MSE/MAE).
--max_minutes stops training after the epoch that crosses the limit (the best-validation weights
are kept), so a run fits a machine shared with compile jobs.
With --instance_norm linear_residual the network forecasts the correction to a frozen linear
forecast: the ridge map of tools/reference/baselines.py, fitted here on the train split (penalty
by validation) and saved as instance_norm.linear_base; the output projection starts at zero.

The committed models' configurations, every candidate tried and why each was chosen (validation
loss only): models/weights/README.md and each model's metrics.json ("selection"). Small models
(d_model 64, 4-8 heads, d_ff 256) because the paper's ETTh1-S setting (seq_len 720, label_len 168,
d_model 512) takes ~19 s per step on this 2-core machine.
"""
import argparse
import json
import math
import os
import sys
import time

# Set before torch loads its BLAS and OpenMP runtimes (they read these once). Measured on this
# 2-core box, seq_len 336 / d_model 128, batch 32, 2 torch threads: 1.86 s per step as Debian ships
# it, 1.61 s with OpenBLAS single-threaded (its own pthreads oversubscribe torch's OpenMP threads),
# 1.32 s with libgomp's waiting threads also sleeping instead of spinning.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# glibc hands each large tensor (ProbSparse's sampled keys are ~100-400 MB at seq_len 720) a fresh
# mmap, so every step faults its pages in again: a third of the process time was system time.
# With malloc's transparent huge pages those faults are 512x fewer. glibc reads its tunables only at
# start-up, hence the re-exec. Measured at seq_len 720 / label_len 336 / d_model 64, horizon 168,
# 1 thread, the same load for both: 7.6 s per step without, 2.0 s with.
if "glibc.malloc.hugetlb" not in os.environ.get("GLIBC_TUNABLES", ""):
    tunables = [t for t in os.environ.get("GLIBC_TUNABLES", "").split(":") if t]
    os.environ["GLIBC_TUNABLES"] = ":".join(tunables + ["glibc.malloc.hugetlb=1"])
    os.execv(sys.executable, [sys.executable] + sys.argv)

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
import baselines  # noqa: E402
import informer_ref as ref  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="path of ETTh1.csv / ETTh2.csv")
    p.add_argument("--out", required=True, help="output prefix")
    p.add_argument("--features", default="S", choices=["S", "M"])
    p.add_argument("--target", default="OT")
    for key, value in ref.DEFAULT_CONFIG.items():
        if key in ("enc_in", "dec_in", "c_out"):
            continue
        kind = (lambda s: s.lower() in ("1", "true", "yes")) if isinstance(value, bool) else type(value)
        p.add_argument("--" + key, type=kind, default=value)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--learning_rate", type=float, default=1e-4)
    p.add_argument("--train_epochs", type=int, default=6)
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--max_minutes", type=float, default=0, help="0 = no limit")
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--threads", type=int, default=2)
    return p.parse_args()


def batches(split, batch_size, shuffle, rng):
    order = rng.permutation(len(split)) if shuffle else np.arange(len(split))
    for b in range(len(split) // batch_size):  # drop_last=True everywhere (§6)
        items = [split[i] for i in order[b * batch_size:(b + 1) * batch_size]]
        yield [torch.from_numpy(np.stack(col)) for col in zip(*items)]


def predict(model, cfg, batch):
    x, y, xm, ym = batch
    dec = ref.decoder_input(y, cfg["label_len"], cfg["pred_len"])
    return model(x, xm, dec, ym), y[:, -cfg["pred_len"]:, :]


def progress(prefix, done, total, loss, started):
    width = 30
    filled = int(width * done / max(total, 1))
    rate = done / max(time.time() - started, 1e-9)
    eta = (total - done) / max(rate, 1e-9)
    sys.stderr.write("\r%s [%s%s] %d/%d loss %.4f %.1f it/s eta %ds " %
                     (prefix, "#" * filled, "." * (width - filled), done, total, loss, rate, eta))
    sys.stderr.flush()


def evaluate(model, cfg, split, batch_size, rng=None, shuffle=False):
    model.eval()
    preds, trues = [], []
    with torch.no_grad():
        for batch in batches(split, batch_size, shuffle, rng):
            p, t = predict(model, cfg, batch)
            preds.append(p.numpy())
            trues.append(t.numpy())
    p, t = np.concatenate(preds), np.concatenate(trues)
    return float(np.mean((p - t) ** 2)), float(np.mean(np.abs(p - t))), len(p)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    channels = 1 if args.features == "S" else 7
    cfg = {k: getattr(args, k) for k in ref.DEFAULT_CONFIG if hasattr(args, k)}
    cfg.update(enc_in=channels, dec_in=channels, c_out=channels)
    if cfg["freq"] != "h":
        sys.exit("train_informer: only hourly ETT files (freq h) are supported")
    splits = {s: ref.EttSplit(args.data, s, cfg["seq_len"], cfg["label_len"], cfg["pred_len"],
                              args.features, args.target) for s in ("train", "val", "test")}
    model = ref.Informer(cfg)
    linear_base = None
    if cfg["instance_norm"] == "linear_residual":
        # The base the network corrects: the ridge map of baselines.RidgeBaseline, fitted on the
        # train split's windows with its penalty chosen on the validation split's (never test),
        # and frozen. The projection starts at zero, so the untrained model is that linear
        # forecast and training moves away from it only where the training loss says so.
        ridge = baselines.RidgeBaseline().fit(*baselines.windows(splits["train"]), *baselines.windows(splits["val"]))
        with torch.no_grad():
            model.instance_norm.linear_base.copy_(torch.from_numpy(ridge.w).float())
            model.projection.weight.zero_()
            model.projection.bias.zero_()
        linear_base = {"fitted_on": "train windows", "penalty": ridge.penalty, "penalty_chosen_by": "validation MSE",
                       "val_mse": ridge.val_mse}
        print("linear base: ridge penalty %g, val mse %.5f" % (ridge.penalty, ridge.val_mse), flush=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
    loss_fn = torch.nn.MSELoss()
    best, best_state, best_epoch, bad_epochs, started = math.inf, None, 0, 0, time.time()
    steps = len(splits["train"]) // args.batch_size
    print("config %s\nparameters %d, %d train windows, %d steps/epoch" %
          (json.dumps(cfg), sum(p.numel() for p in model.parameters()), len(splits["train"]), steps))
    epochs_run, val_losses = 0, []
    for epoch in range(1, args.train_epochs + 1):
        model.train()
        t0, losses = time.time(), []
        for i, batch in enumerate(batches(splits["train"], args.batch_size, True, rng)):
            optimizer.zero_grad()
            p, t = predict(model, cfg, batch)
            loss = loss_fn(p, t)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if i % 5 == 0 or i + 1 == steps:
                progress("epoch %d" % epoch, i + 1, steps, float(np.mean(losses[-50:])), t0)
        sys.stderr.write("\n")
        val_loss = evaluate(model, cfg, splits["val"], args.batch_size, rng, shuffle=True)[0]
        epochs_run = epoch
        val_losses.append(val_loss)
        print("epoch %d: train loss %.5f, val loss %.5f, %.0f s" %
              (epoch, np.mean(losses), val_loss, time.time() - t0), flush=True)
        if val_loss < best:
            best, best_epoch, bad_epochs = val_loss, epoch, 0
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        else:
            bad_epochs += 1
            if bad_epochs >= args.patience:
                print("early stopping")
                break
        for group in optimizer.param_groups:  # lradj type1: lr0 * 0.5^epoch
            group["lr"] = args.learning_rate * 0.5 ** epoch
        if args.max_minutes and time.time() - started > args.max_minutes * 60:
            print("stopping: --max_minutes %.1f reached" % args.max_minutes)
            break
    model.load_state_dict(best_state)
    mse, mae, n = evaluate(model, cfg, splits["test"], 32)
    minutes = (time.time() - started) / 60
    print("test: mse %.4f mae %.4f over %d windows (drop_last), %.1f min" % (mse, mae, n, minutes))
    # The forecasts that need no model, on the same windows and scale (issue 28).
    base = baselines.evaluate_baselines(splits, cfg["pred_len"], period=24)
    print("naive: best %s mse %.4f (model/naive %.3f); ridge mse %.4f (model/ridge %.3f)" %
          (base["naive_best"], base["naive_mse"], mse / base["naive_mse"], base["ridge"]["mse"],
           mse / base["ridge"]["mse"]), flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    ref.save_safetensors(args.out + ".safetensors", model.state_dict(),
                         {"format": "pt", "source": "kinformer tools/train_informer.py"})
    with open(args.out + ".json", "w") as f:
        json.dump(ref.config_json(cfg), f, indent=1)
    train = splits["train"]
    with open(args.out + ".scaler.json", "w") as f:
        json.dump({"features": args.features, "target": args.target,
                   "mean": train.mean.tolist(), "std": train.std.tolist()}, f, indent=1)
    with open(args.out + ".metrics.json", "w") as f:
        json.dump({"test_mse": mse, "test_mae": mae, "test_windows": n, "epochs": epochs_run,
                   "kept_epoch": best_epoch, "best_val_loss": best, "minutes": minutes, "seed": args.seed,
                   "threads": args.threads, "batch_size": args.batch_size,
                   "learning_rate": args.learning_rate, "val_losses": val_losses,
                   "args": sys.argv[1:],
                   "selected_by": "validation loss (epoch; configuration by tools/sweep_informer.py)",
                   "baselines": base, "ratio": mse / base["naive_mse"],
                   "ratio_ridge": mse / base["ridge"]["mse"], "linear_base": linear_base}, f, indent=1)


if __name__ == "__main__":
    main()
