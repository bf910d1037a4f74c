"""Informer reference model in PyTorch, written from ../shared/docs/informer-model.md.

Contract
  * Module and parameter names reproduce the official state_dict (§4), so a
    state_dict saved here loads in the official code and in kinformer's C++ loader.
  * ProbSparse attention follows §3.4 step by step; the key sample and the query
    selection go through a `ProbSparseHook` so a caller can capture or replay them.
  * No pandas, no safetensors package: Debian 12 ships neither with python3-torch,
    so safetensors I/O, time features and the ETT split are implemented here.
Run with Debian's own /usr/bin/python3 (it has python3-torch).
Not here: training (tools/train_informer.py), golden files (make_goldens.py).
"""
import datetime
import json
import math
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import baselines  # the naive forecasts' one numpy rule (tools/reference/baselines.py)

# -- configuration (§1; keys are main_informer.py's argument names) -----------------

DEFAULT_CONFIG = dict(enc_in=7, dec_in=7, c_out=7, seq_len=96, label_len=48, pred_len=24,
                      factor=5, d_model=512, n_heads=8, e_layers=2, d_layers=1, d_ff=2048,
                      dropout=0.05, attn="prob", embed="timeF", freq="h", activation="gelu",
                      distil=True, mix=True, instance_norm="none", instance_norm_affine=False,
                      naive_base="last_value")
INSTANCE_NORMS = ("none", "mean_std", "last_value", "naive_residual", "linear_residual")
STEPS_PER_DAY = {"h": 24, "t": 96}  # models/naive_forecast.cpp steps_per_day()
TIME_FEATURES = {"h": 4, "t": 5, "s": 6, "m": 1, "a": 1, "w": 2, "d": 3, "b": 3}


def full_config(overrides):
    cfg = dict(DEFAULT_CONFIG)
    cfg.update({k: v for k, v in overrides.items() if k in DEFAULT_CONFIG})
    return cfg


def config_json(cfg):
    """The config as models/informer_config.cpp writes it: naive_base only where it means
    something (the C++ parser refuses it beside any other instance_norm)."""
    return {k: v for k, v in cfg.items() if k != "naive_base" or cfg["instance_norm"] == "naive_residual"}


# -- ProbSparse sampling hook ---------------------------------------------------------

class ProbSparseHook:
    """Default: draws key samples with torch.randint and keeps the computed top-u.
    capture=True records every idx and top; replay lists feed them back in call order."""

    def __init__(self, capture=False, replay_idx=None, replay_top=None):
        self.capture = capture
        self.replay_idx = list(replay_idx) if replay_idx is not None else None
        self.replay_top = list(replay_top) if replay_top is not None else None
        self.idx, self.top = [], []

    def sample_keys(self, l_q, l_k, sample_k):
        if self.replay_idx is not None:
            idx = self.replay_idx.pop(0)
        else:
            idx = torch.randint(l_k, (l_q, sample_k))
        if self.capture:
            self.idx.append(idx.clone())
        return idx

    def select(self, top):
        if self.replay_top is not None:
            top = self.replay_top.pop(0)
        if self.capture:
            self.top.append(top.clone())
        return top


DEFAULT_HOOK = ProbSparseHook()


# -- attention -------------------------------------------------------------------------

class FullAttention(nn.Module):
    def __init__(self, mask_flag):
        super().__init__()
        self.mask_flag = mask_flag

    def forward(self, q, k, v, hook):
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = torch.einsum("blhe,bshe->bhls", q, k) * scale
        if self.mask_flag:
            l_q, l_k = q.shape[1], k.shape[1]
            causal = torch.ones(l_q, l_k, dtype=torch.bool, device=q.device).triu(1)
            scores = scores.masked_fill(causal, float("-inf"))
        return torch.einsum("bhls,bshd->blhd", torch.softmax(scores, dim=-1), v)


class ProbAttention(nn.Module):
    def __init__(self, mask_flag, factor):
        super().__init__()
        self.mask_flag = mask_flag
        self.factor = factor

    def forward(self, q, k, v, hook):
        b, l_q, h, e = q.shape
        l_k = k.shape[1]
        Q, K, V = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # [B,H,L,E]
        sample_k = min(self.factor * math.ceil(math.log(l_k)), l_k)
        n_top = min(self.factor * math.ceil(math.log(l_q)), l_q)
        idx = hook.sample_keys(l_q, l_k, sample_k).to(q.device)              # [L_Q, sample_k], drawn on CPU (§9.14)
        # Gather-dot (§3.4 step 3) instead of materialising the sampled keys per batch.
        k_sample = K[:, :, idx, :]                                             # [B,H,L_Q,sk,E]
        qk = torch.einsum("bhle,bhlse->bhls", Q, k_sample)
        m = qk.max(dim=-1)[0] - qk.sum(dim=-1) / l_k                           # divisor L_K (§9.2)
        top = hook.select(m.topk(n_top, dim=-1, sorted=False)[1]).to(q.device)  # [B,H,u]
        gather = top.unsqueeze(-1).expand(-1, -1, -1, e)
        q_reduced = torch.gather(Q, 2, gather)
        scores = torch.matmul(q_reduced, K.transpose(-2, -1)) / math.sqrt(e)   # [B,H,u,L_K]
        if self.mask_flag:
            context = V.cumsum(dim=-2)                                          # a sum (§9.1)
            hidden = torch.arange(l_k, device=q.device).view(1, 1, 1, l_k) > top.unsqueeze(-1)
            scores = scores.masked_fill(hidden, float("-inf"))
        else:
            context = V.mean(dim=-2, keepdim=True).expand(b, h, l_q, e).clone()
        context = context.scatter(2, gather, torch.matmul(torch.softmax(scores, dim=-1), V))
        return context.transpose(1, 2)                                          # [B,L,H,E]


class AttentionLayer(nn.Module):
    def __init__(self, inner, d_model, n_heads, mix):
        super().__init__()
        d_k = d_model // n_heads
        self.inner_attention = inner
        self.query_projection = nn.Linear(d_model, d_k * n_heads)
        self.key_projection = nn.Linear(d_model, d_k * n_heads)
        self.value_projection = nn.Linear(d_model, d_k * n_heads)
        self.out_projection = nn.Linear(d_k * n_heads, d_model)
        self.n_heads = n_heads
        self.mix = mix

    def forward(self, xq, xkv, hook):
        b, l, _ = xq.shape
        s, h = xkv.shape[1], self.n_heads
        q = self.query_projection(xq).view(b, l, h, -1)
        k = self.key_projection(xkv).view(b, s, h, -1)
        v = self.value_projection(xkv).view(b, s, h, -1)
        out = self.inner_attention(q, k, v, hook)
        if self.mix:  # head-major reinterpretation, not a transpose back (§3.2)
            out = out.transpose(2, 1).contiguous()
        return self.out_projection(out.reshape(b, l, -1))


def make_attention(cfg, mask_flag, kind):
    return ProbAttention(mask_flag, cfg["factor"]) if kind == "prob" else FullAttention(mask_flag)


# -- instance normalisation (issue 28; models/instance_norm.hpp is the C++ twin) ---------

class InstanceNorm(nn.Module):
    """Each window is normalised per channel by its own encoder rows' statistics before the
    embeddings, and the forecast is mapped back: mean_std subtracts the mean and divides by
    sqrt(var + EPS) (RevIN), last_value subtracts the last encoder row. The decoder's label rows
    are normalised with the encoder's statistics; its last pred_len rows (the placeholder) are
    zero in the normalised space, whatever the caller put there. With affine, a learned
    per-channel weight and bias follow the normalisation and are undone first on the way out.
    naive_residual normalises as mean_std, but maps the output back onto the window's naive_base
    forecast (baselines.naive_forecasts) instead of its mean: the network forecasts the
    correction to that naive forecast. linear_residual does the same onto a linear forecast,
    last + (window - last) @ linear_base, with linear_base [seq_len, pred_len] shared by the
    channels (a buffer: tools/train_informer.py fits it as baselines.RidgeBaseline does)."""

    EPS = 1e-5

    def __init__(self, mode, channels, affine, pred_len=None, naive_base=None, period=None, seq_len=None):
        super().__init__()
        if mode not in INSTANCE_NORMS[1:]:
            raise ValueError("instance_norm must be one of %s" % (INSTANCE_NORMS,))
        self.mode, self.pred_len, self.naive_base, self.period = mode, pred_len, naive_base, period
        if affine:
            self.weight = nn.Parameter(torch.ones(channels))
            self.bias = nn.Parameter(torch.zeros(channels))
        else:
            self.weight = self.bias = None
        if mode == "linear_residual":
            self.register_buffer("linear_base", torch.zeros(seq_len, pred_len))

    def statistics(self, x_enc):
        if self.mode == "last_value":
            return x_enc[:, -1:, :], torch.ones_like(x_enc[:, -1:, :]), x_enc[:, -1:, :]
        mean = x_enc.mean(dim=1, keepdim=True)
        std = torch.sqrt(x_enc.var(dim=1, keepdim=True, unbiased=False) + self.EPS)
        if self.mode == "mean_std":
            return mean, std, mean
        if self.mode == "linear_residual":
            last = x_enc[:, -1:, :]
            # [B, L, C] -> [B, C, L] @ [L, pred_len] -> [B, pred_len, C]
            base = ((x_enc - last).transpose(1, 2) @ self.linear_base).transpose(1, 2) + last
            return mean, std, base
        base = baselines.naive_forecasts(x_enc.detach().cpu().numpy(), self.pred_len, self.period)[self.naive_base]
        return mean, std, torch.from_numpy(base).to(x_enc.dtype)

    def normalize(self, x, stats):
        x = (x - stats[0]) / stats[1]
        return x if self.weight is None else x * self.weight + self.bias

    def denormalize(self, y, stats):
        if self.weight is not None:
            y = (y - self.bias) / (self.weight + self.EPS * self.EPS)
        return y * stats[1] + stats[2]


# -- embedding ------------------------------------------------------------------------

class TokenEmbedding(nn.Module):
    def __init__(self, c_in, d_model):
        super().__init__()
        self.tokenConv = nn.Conv1d(c_in, d_model, 3, padding=1, padding_mode="circular")
        nn.init.kaiming_normal_(self.tokenConv.weight, mode="fan_in", nonlinearity="leaky_relu")

    def forward(self, x):
        return self.tokenConv(x.permute(0, 2, 1)).transpose(1, 2)


class PositionalEmbedding(nn.Module):
    def __init__(self, d_model, max_len=5000):
        super().__init__()
        # Built in float32 like the official table (§3.1); it is saved in the state_dict.
        position = torch.arange(0, max_len).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.pe[:, : x.shape[1]]


class TimeFeatureEmbedding(nn.Module):
    def __init__(self, d_model, freq):
        super().__init__()
        self.embed = nn.Linear(TIME_FEATURES[freq], d_model)

    def forward(self, x):
        return self.embed(x)


class DataEmbedding(nn.Module):
    def __init__(self, c_in, cfg):
        super().__init__()
        if cfg["embed"] != "timeF":
            raise ValueError("only embed=timeF is implemented")
        self.value_embedding = TokenEmbedding(c_in, cfg["d_model"])
        self.position_embedding = PositionalEmbedding(cfg["d_model"])
        self.temporal_embedding = TimeFeatureEmbedding(cfg["d_model"], cfg["freq"])
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x, x_mark):
        return self.dropout(self.value_embedding(x) + self.position_embedding(x)
                            + self.temporal_embedding(x_mark))


# -- encoder / decoder ----------------------------------------------------------------

def activation(cfg):
    return F.gelu if cfg["activation"] == "gelu" else F.relu


class ConvLayer(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.downConv = nn.Conv1d(d_model, d_model, 3, padding=1, padding_mode="circular")
        self.norm = nn.BatchNorm1d(d_model)
        self.activation = nn.ELU()
        self.maxPool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        y = self.activation(self.norm(self.downConv(x.permute(0, 2, 1))))
        return self.maxPool(y).transpose(1, 2)


class EncoderLayer(nn.Module):
    def __init__(self, attention, cfg):
        super().__init__()
        d, d_ff = cfg["d_model"], cfg["d_ff"]
        self.attention = attention
        self.conv1 = nn.Conv1d(d, d_ff, 1)
        self.conv2 = nn.Conv1d(d_ff, d, 1)
        self.norm1 = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(cfg["dropout"])
        self.act = activation(cfg)

    def forward(self, x, hook):
        x = self.norm1(x + self.dropout(self.attention(x, x, hook)))
        y = self.dropout(self.act(self.conv1(x.transpose(-1, 1))))
        y = self.dropout(self.conv2(y).transpose(-1, 1))
        return self.norm2(x + y)


class Encoder(nn.Module):
    def __init__(self, attn_layers, conv_layers, d_model):
        super().__init__()
        self.attn_layers = nn.ModuleList(attn_layers)
        self.conv_layers = nn.ModuleList(conv_layers) if conv_layers else None
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, hook, trace=None):
        if self.conv_layers is not None:
            for i, (attn, conv) in enumerate(zip(self.attn_layers, self.conv_layers)):
                x = attn(x, hook)
                _record(trace, "enc_layer%d" % i, x)
                x = conv(x)
                _record(trace, "enc_distil%d" % i, x)
            x = self.attn_layers[-1](x, hook)
            _record(trace, "enc_layer%d" % (len(self.attn_layers) - 1), x)
        else:
            for i, attn in enumerate(self.attn_layers):
                x = attn(x, hook)
                _record(trace, "enc_layer%d" % i, x)
        return self.norm(x)


class DecoderLayer(nn.Module):
    def __init__(self, self_attention, cross_attention, cfg):
        super().__init__()
        d, d_ff = cfg["d_model"], cfg["d_ff"]
        self.self_attention = self_attention
        self.cross_attention = cross_attention
        self.conv1 = nn.Conv1d(d, d_ff, 1)
        self.conv2 = nn.Conv1d(d_ff, d, 1)
        self.norm1 = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm(d)
        self.norm3 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(cfg["dropout"])
        self.act = activation(cfg)

    def forward(self, x, cross, hook):
        x = self.norm1(x + self.dropout(self.self_attention(x, x, hook)))
        x = self.norm2(x + self.dropout(self.cross_attention(x, cross, hook)))
        y = self.dropout(self.act(self.conv1(x.transpose(-1, 1))))
        y = self.dropout(self.conv2(y).transpose(-1, 1))
        return self.norm3(x + y)


class Decoder(nn.Module):
    def __init__(self, layers, d_model):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, cross, hook, trace=None):
        for i, layer in enumerate(self.layers):
            x = layer(x, cross, hook)
            _record(trace, "dec_layer%d" % i, x)
        return self.norm(x)


def _record(trace, name, x):
    if trace is not None:
        trace[name] = x.detach().clone()


class Informer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg = full_config(cfg)
        d, h = cfg["d_model"], cfg["n_heads"]
        self.pred_len = cfg["pred_len"]
        self.enc_embedding = DataEmbedding(cfg["enc_in"], cfg)
        self.dec_embedding = DataEmbedding(cfg["dec_in"], cfg)
        self.encoder = Encoder(
            [EncoderLayer(AttentionLayer(make_attention(cfg, False, cfg["attn"]), d, h, False), cfg)
             for _ in range(cfg["e_layers"])],
            [ConvLayer(d) for _ in range(cfg["e_layers"] - 1)] if cfg["distil"] else None, d)
        self.decoder = Decoder(
            [DecoderLayer(AttentionLayer(make_attention(cfg, True, cfg["attn"]), d, h, cfg["mix"]),
                          AttentionLayer(FullAttention(False), d, h, False), cfg)
             for _ in range(cfg["d_layers"])], d)
        self.projection = nn.Linear(d, cfg["c_out"])
        if cfg["instance_norm"] != "none":
            if cfg["c_out"] != cfg["enc_in"] or cfg["dec_in"] != cfg["enc_in"]:
                raise ValueError("instance_norm needs enc_in == dec_in == c_out")
            self.instance_norm = InstanceNorm(cfg["instance_norm"], cfg["enc_in"], cfg["instance_norm_affine"],
                                              cfg["pred_len"], cfg["naive_base"], STEPS_PER_DAY.get(cfg["freq"], 24),
                                              cfg["seq_len"])
        else:
            self.instance_norm = None

    def forward(self, x_enc, x_mark_enc, x_dec, x_mark_dec, hook=None, trace=None):
        hook = hook or DEFAULT_HOOK
        if self.instance_norm is not None:
            stats = self.instance_norm.statistics(x_enc)
            x_enc = self.instance_norm.normalize(x_enc, stats)
            label = self.instance_norm.normalize(x_dec[:, :-self.pred_len, :], stats)
            x_dec = torch.cat([label, torch.zeros_like(x_dec[:, -self.pred_len:, :])], dim=1)
        x = self.enc_embedding(x_enc, x_mark_enc)
        _record(trace, "enc_embedding", x)
        enc_out = self.encoder(x, hook, trace)
        _record(trace, "enc_out", enc_out)
        y = self.dec_embedding(x_dec, x_mark_dec)
        _record(trace, "dec_embedding", y)
        y = self.decoder(y, enc_out, hook, trace)
        _record(trace, "dec_out", y)
        out = self.projection(y)[:, -self.pred_len:, :]
        if self.instance_norm is not None:
            out = self.instance_norm.denormalize(out, stats)
        _record(trace, "output", out)
        return out


# -- safetensors (format: u64 LE header size, JSON header, raw little-endian data) --------

_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.int64: "I64"}
_NP = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64}


def save_safetensors(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        raw = t.numpy().astype(_NP[_DTYPES[t.dtype]]).tobytes()
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        arr = np.frombuffer(data[b:e], dtype=_NP[info["dtype"]]).reshape(info["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


# -- ETT data (§5, §6) ------------------------------------------------------------------

def time_features_h(stamps):
    """freq h: [hour/23-0.5, weekday/6-0.5, (day-1)/30-0.5, (day_of_year-1)/365-0.5]."""
    out = np.empty((len(stamps), 4), dtype=np.float64)
    for i, s in enumerate(stamps):
        out[i] = [s.hour / 23.0 - 0.5, s.weekday() / 6.0 - 0.5, (s.day - 1) / 30.0 - 0.5,
                  (s.timetuple().tm_yday - 1) / 365.0 - 0.5]
    return out.astype(np.float32)


def read_ett_csv(path):
    with open(path) as f:
        columns = f.readline().strip().split(",")
        stamps, values = [], []
        for line in f:
            parts = line.strip().split(",")
            if len(parts) < 2:
                continue
            stamps.append(datetime.datetime.strptime(parts[0], "%Y-%m-%d %H:%M:%S"))
            values.append([float(v) for v in parts[1:]])
    return columns[1:], stamps, np.array(values, dtype=np.float64)


class EttSplit:
    """Scaled windows of one split of ETTh1/ETTh2 (hourly borders of §6)."""

    def __init__(self, path, split, seq_len, label_len, pred_len, features="S", target="OT"):
        columns, stamps, values = read_ett_csv(path)
        month = 30 * 24
        starts = [0, 12 * month - seq_len, 16 * month - seq_len]
        ends = [12 * month, 16 * month, 20 * month]
        i = {"train": 0, "val": 1, "test": 2}[split]
        data = values[:, [columns.index(target)]] if features == "S" else values
        train = data[starts[0]:ends[0]]
        self.mean, self.std = train.mean(axis=0), train.std(axis=0)  # ddof 0, train rows only
        scaled = ((data - self.mean) / self.std).astype(np.float32)
        self.x = scaled[starts[i]:ends[i]]
        self.marks = time_features_h(stamps[starts[i]:ends[i]])
        self.seq_len, self.label_len, self.pred_len = seq_len, label_len, pred_len

    def __len__(self):
        return len(self.x) - self.seq_len - self.pred_len + 1

    def __getitem__(self, s):
        e = s + self.seq_len
        r0, r1 = e - self.label_len, e + self.pred_len
        return self.x[s:e], self.x[r0:r1], self.marks[s:e], self.marks[r0:r1]


def decoder_input(batch_y, label_len, pred_len):
    zeros = torch.zeros(batch_y.shape[0], pred_len, batch_y.shape[-1], dtype=batch_y.dtype)
    return torch.cat([batch_y[:, :label_len, :], zeros], dim=1)
