"""Forecasts that need no model, on exactly the windows a model is judged on (issue 28).

Contract
  * `naive_forecasts(enc, pred_len, period)`: for encoder windows enc [N, L, C] the three naive
    forecasts [N, pred_len, C]: `last_value` (the last row repeated), `last_day` (the last `period`
    rows repeated, period = 24 for hourly data) and `last_day_mean` (their mean repeated).
  * `RidgeBaseline`: one linear map, shared by all channels, from a window minus its last value to
    the horizon minus that value; fitted on the train split's windows by ridge regression, with
    the penalty chosen on the validation split's windows from PENALTIES (never on test).
  * `evaluate_baselines(splits, pred_len, period)`: MSE and MAE of each of them on the test
    split's windows as the test loader sees them (batch 32, drop_last, in order), plus the name
    and MSE of the best naive forecast. kinformer eval-ett computes the same figures in C++.
Numpy only (float64).
"""
import numpy as np

PENALTIES = [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5]
NAIVE = ("last_value", "last_day", "last_day_mean")


def windows(split, count=None):
    """Encoder windows [N, L, C] and truths [N, pred_len, C] of an ref.EttSplit, in order."""
    n = len(split) if count is None else count
    enc = np.stack([split.x[s:s + split.seq_len] for s in range(n)]).astype(np.float64)
    truth = np.stack([split.x[s + split.seq_len:s + split.seq_len + split.pred_len] for s in range(n)])
    return enc, truth.astype(np.float64)


def naive_forecasts(enc, pred_len, period):
    last = enc[:, -1:, :]
    day = enc[:, -period:, :]
    reps = -(-pred_len // period)
    return {
        "last_value": np.repeat(last, pred_len, axis=1),
        "last_day": np.tile(day, (1, reps, 1))[:, :pred_len, :],
        "last_day_mean": np.repeat(day.mean(axis=1, keepdims=True), pred_len, axis=1),
    }


def _design(enc, truth=None):
    """Rows of all channels: x = window - last, y = horizon - last."""
    n, l, c = enc.shape
    flat = enc.transpose(0, 2, 1).reshape(n * c, l)
    last = flat[:, -1:]
    x = flat - last
    y = None if truth is None else truth.transpose(0, 2, 1).reshape(n * c, -1) - last
    return x, y, last


class RidgeBaseline:
    def fit(self, train_enc, train_truth, val_enc, val_truth):
        x, y, _ = _design(train_enc, train_truth)
        gram, cross = x.T @ x, x.T @ y
        scale = np.trace(gram) / gram.shape[0]  # penalties are relative to the mean feature power
        best = None
        for penalty in PENALTIES:
            w = np.linalg.solve(gram + penalty * scale * np.eye(gram.shape[0]), cross)
            self.w = w
            mse = float(np.mean((self.predict(val_enc) - val_truth) ** 2))
            if best is None or mse < best[0]:
                best = (mse, penalty, w)
        self.val_mse, self.penalty, self.w = best
        return self

    def predict(self, enc):
        x, _, last = _design(enc)
        n, _, c = enc.shape
        return (x @ self.w + last).reshape(n, c, -1).transpose(0, 2, 1)


def _errors(pred, truth):
    return float(np.mean((pred - truth) ** 2)), float(np.mean(np.abs(pred - truth)))


def evaluate_baselines(splits, pred_len, period=24, batch=32):
    """splits: {"train", "val", "test"} of ref.EttSplit. Returns a dict for metrics.json."""
    test = splits["test"]
    n = len(test) // batch * batch  # drop_last
    enc, truth = windows(test, n)
    out = {}
    for name, pred in naive_forecasts(enc, pred_len, period).items():
        mse, mae = _errors(pred, truth)
        out[name] = {"mse": mse, "mae": mae}
    best = min(NAIVE, key=lambda k: out[k]["mse"])
    ridge = RidgeBaseline().fit(*windows(splits["train"]), *windows(splits["val"]))
    mse, mae = _errors(ridge.predict(enc), truth)
    out["ridge"] = {"mse": mse, "mae": mae, "penalty": ridge.penalty, "val_mse": ridge.val_mse}
    out["naive_best"] = best
    out["naive_mse"] = out[best]["mse"]
    out["windows"] = n
    return out
