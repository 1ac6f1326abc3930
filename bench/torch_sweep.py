#!/usr/bin/python3
"""Common ops beside PyTorch 1.13 in one process, one thread both (torch.set_num_threads(1),
MPSIM_NUM_THREADS=1), best of a few calls each: SD feature maps [2, 320, 64, 64] in both memory
formats, SD attention and norm shapes, float16/bfloat16/float64/integer inputs, pow exponents,
fills and small tensors. Flags rows where mpsim takes more than 1.3x (<) or 2x (<<<) PyTorch's
time. PyTorch has no float16 kernel for some ops on the CPU: those rows time its float32 op and
say so in the name. mpsim runs Golden unless --fast (PyTorch's float32 kernels are Fast-like).

Usage: MPSIM_NUM_THREADS=1 /usr/bin/python3 bench/torch_sweep.py [--build build] [--fast]
           [--filter SUBSTRING]
(the build needs the Python module: scripts/build.sh -DMPSIM_BUILD_PYTHON=ON). PyTorch runs its
best kernels on this CPU (bench/torch_env.py sets ATEN_CPU_CAPABILITY and OPENBLAS_CORETYPE).
"""
import argparse
import operator
import os
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build", help="the build directory holding python/mpsim")
ap.add_argument("--fast", action="store_true", help="run mpsim under Precision::Fast")
ap.add_argument("--filter", default="", help="only the cases whose name contains this")
args = ap.parse_args()
sys.path.insert(0, os.path.join(args.build, "python"))
os.environ.setdefault("MPSIM_NUM_THREADS", "1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_env  # noqa: E402,F401  (before torch loads)
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import mpsim  # noqa: E402

torch.set_num_threads(1)
if args.fast:
    mpsim.set_precision("fast")
rng = np.random.default_rng(0)


def best(f, n=7):
    b = 1e9
    for _ in range(n):
        t = time.perf_counter()
        f()
        b = min(b, time.perf_counter() - t)
    return b * 1e3


ARRAYS = {
    "x": rng.standard_normal((2, 320, 64, 64)).astype(np.float32),
    "y": rng.standard_normal((2, 320, 64, 64)).astype(np.float32),
    "x32": rng.standard_normal((2, 320, 32, 32)).astype(np.float32),
    "temb": rng.standard_normal((2, 320, 1, 1)).astype(np.float32),
    "h": rng.standard_normal((2, 4096, 320)).astype(np.float32),
    "h4": rng.standard_normal((2, 4096, 1280)).astype(np.float32),
    "rows": rng.standard_normal((8192, 320)).astype(np.float32),
    "s77": rng.standard_normal((2, 8, 4096, 77)).astype(np.float32),
    "d": rng.standard_normal((1 << 20,)).astype(np.float64),
    "i64": rng.integers(-1000, 1000, (1 << 21,)).astype(np.int64),
    "i32": rng.integers(-1000, 1000, (1 << 21,)).astype(np.int32),
    "idx": rng.integers(0, 64, (2, 320, 64, 64)).astype(np.int64),
    "i1": np.arange(0, 320, 2).astype(np.int64),
    "ones": np.ones(320, np.float32),
    "zeros": np.zeros(320, np.float32),
    "small": rng.standard_normal((64,)).astype(np.float32),
    "xm": np.where(np.arange(64) % 2 == 0, -np.inf, rng.standard_normal((2, 320, 64, 64))).astype(
        np.float32),  # a mask: -inf in every other element
    "xn": np.where(np.arange(64) % 2 == 0, np.nan, rng.standard_normal((2, 320, 64, 64))).astype(
        np.float32),  # missing values: NaN in every other element
    "big": (rng.uniform(1, 2, 1 << 20) * np.exp2(rng.integers(19, 100, 1 << 20))).astype(
        np.float32),  # beyond sin's vector range (2^18)
}


def tensors(lib):
    t = (lambda a: mpsim.tensor(a)) if lib is mpsim else (lambda a: torch.from_numpy(a.copy()))
    d = {k: t(v) for k, v in ARRAYS.items()}
    d["xc"] = d["x"].permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    d["x32c"] = d["x32"].permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    d["xh"] = d["x"].to(lib.float16)
    d["xb"] = d["x"].to(lib.bfloat16)
    d["xbp"] = lib.abs(d["xb"])  # log's and rsqrt's domain
    d["xhp"] = lib.abs(d["xh"])
    d["hh"] = d["h"].to(lib.float16)
    d["dp"] = lib.abs(d["d"])  # log1p's domain
    d["o"] = lib.empty_like(d["x"])  # out=
    d["w"] = d["x"].clone()  # written in place
    return d


M, T = tensors(mpsim), tensors(torch)


def fn(lib, name):
    """mpsim.name, or torch.nn.functional.name (else torch.name) for PyTorch."""
    return getattr(lib, name) if lib is mpsim else getattr(F, name, None) or getattr(torch, name)


def half_as_float(lib, op, t):
    """op of a float16 tensor; PyTorch 1.13 has no float16 CPU kernel: its float32 op."""
    return op(t) if lib is mpsim else op(t.float()).half()


CASES = {
    # [2, 320, 64, 64] float32, NCHW and channels-last (cl)
    "sum dim1": lambda L, d: L.sum(d["x"], 1),
    "sum dim1 cl": lambda L, d: L.sum(d["xc"], 1),
    "sum dim(2,3)": lambda L, d: L.sum(d["x"], (2, 3)),
    "mean dim(2,3) cl": lambda L, d: L.mean(d["xc"], (2, 3)),
    "amax dim1": lambda L, d: L.amax(d["x"], 1),
    "argmax dim1": lambda L, d: L.argmax(d["x"], 1),
    "var dim(2,3)": lambda L, d: L.var(d["x"], (2, 3)),
    "softmax dim1": lambda L, d: L.softmax(d["x"], 1),
    "softmax dim1 cl": lambda L, d: L.softmax(d["xc"], 1),
    "logsumexp dim1": lambda L, d: L.logsumexp(d["x"], 1),
    "prod dim1": lambda L, d: L.prod(d["x"], 1),
    "norm": lambda L, d: L.norm(d["x"]),
    "cat dim1": lambda L, d: L.cat([d["x"], d["x"]], 1),
    "cat dim1 cl": lambda L, d: L.cat([d["xc"], d["xc"]], 1),
    "stack": lambda L, d: L.stack([d["x"], d["x"]], 0),
    "flip dim3": lambda L, d: L.flip(d["x"], (3,)),
    "flip dim1 cl": lambda L, d: L.flip(d["xc"], (1,)),
    "gather dim3": lambda L, d: L.gather(d["x"], 3, d["idx"]),
    "index_select dim1": lambda L, d: L.index_select(d["x"], 1, d["i1"]),
    "where cl": lambda L, d: L.where(d["xc"] > 0, d["xc"], d["xc"] * 2),
    "where broadcast": lambda L, d: L.where(d["x"] > 0, d["x"], d["temb"]),
    "clamp cl": lambda L, d: L.clamp(d["xc"], -1.0, 1.0),
    "tril": lambda L, d: L.tril(d["x"]),
    "group_norm": lambda L, d: fn(L, "group_norm")(d["x"], 32, d["ones"], d["zeros"]),
    "group_norm cl": lambda L, d: fn(L, "group_norm")(d["xc"], 32, d["ones"], d["zeros"]),
    "batch_norm cl": lambda L, d: fn(L, "batch_norm")(d["xc"], d["zeros"], d["ones"], d["ones"],
                                                      d["zeros"]),
    "pad 1 cl": lambda L, d: fn(L, "pad")(d["xc"], (1, 1, 1, 1)),
    "to f16 cl": lambda L, d: d["xc"].to(L.float16),
    "contiguous cl": lambda L, d: d["xc"].contiguous(),
    "add time embedding": lambda L, d: L.add(d["x"], d["temb"]),
    "silu": lambda L, d: fn(L, "silu")(d["x"]),
    "exp": lambda L, d: L.exp(d["x"]),
    "sigmoid": lambda L, d: L.sigmoid(d["x"]),
    "tanh": lambda L, d: L.tanh(d["x"]),
    "log (half negative)": lambda L, d: L.log(d["x"]),
    "rsqrt (half negative)": lambda L, d: L.rsqrt(d["x"]),
    "sigmoid out=": lambda L, d: L.sigmoid(d["x"], out=d["o"]),
    "sigmoid_ in place": lambda L, d: d["w"].sigmoid_(),
    "add out=": lambda L, d: L.add(d["x"], d["y"], out=d["o"]),
    "+= in place": lambda L, d: operator.iadd(d["w"], d["y"]),
    "mul_ in place": lambda L, d: d["w"].mul_(1.0),
    "exp (masked: -inf every other)": lambda L, d: L.exp(d["xm"]),
    "sigmoid (masked)": lambda L, d: L.sigmoid(d["xm"]),
    "silu (masked)": lambda L, d: fn(L, "silu")(d["xm"]),
    "softplus (masked)": lambda L, d: fn(L, "softplus")(d["xm"]),
    "gelu (masked)": lambda L, d: fn(L, "gelu")(d["xm"]),
    "gelu tanh (masked)": lambda L, d: fn(L, "gelu")(d["xm"], approximate="tanh"),
    "expm1 (masked)": lambda L, d: L.expm1(d["xm"]),
    "sin (masked)": lambda L, d: L.sin(d["xm"]),
    "cos (masked)": lambda L, d: L.cos(d["xm"]),
    "tan (masked)": lambda L, d: L.tan(d["xm"]),
    "sinh (masked)": lambda L, d: L.sinh(d["xm"]),
    "cosh (masked)": lambda L, d: L.cosh(d["xm"]),
    "asinh (masked)": lambda L, d: L.asinh(d["xm"]),
    "atan (masked)": lambda L, d: L.atan(d["xm"]),
    "exp (NaN every other)": lambda L, d: L.exp(d["xn"]),
    "sigmoid (NaN every other)": lambda L, d: L.sigmoid(d["xn"]),
    "silu (NaN every other)": lambda L, d: fn(L, "silu")(d["xn"]),
    "softplus (NaN every other)": lambda L, d: fn(L, "softplus")(d["xn"]),
    "asin (a third outside [-1, 1])": lambda L, d: L.asin(d["x"]),
    "acos (a third outside [-1, 1])": lambda L, d: L.acos(d["x"]),
    "pow 2": lambda L, d: L.pow(d["x"], 2.0),
    "pow 3": lambda L, d: L.pow(d["x"], 3.0),
    "pow 0.5": lambda L, d: L.pow(d["x"], 0.5),
    "pow 1.5": lambda L, d: L.pow(d["x"], 1.5),
    "max_pool 2x2": lambda L, d: fn(L, "max_pool2d")(d["x"], 2, 2),
    "avg_pool 2x2 cl": lambda L, d: fn(L, "avg_pool2d")(d["xc"], 2, 2),
    "nearest x2": lambda L, d: fn(L, "interpolate")(d["x32"], scale_factor=2.0, mode="nearest"),
    "nearest x2 cl": lambda L, d: fn(L, "interpolate")(d["x32c"], scale_factor=2.0,
                                                       mode="nearest"),
    "zeros": lambda L, d: L.zeros((2, 320, 64, 64)),
    "full": lambda L, d: L.full((2, 320, 64, 64), 1.5),
    "expand contiguous": lambda L, d: (d["temb"].expand(2, 320, 64, 64).contiguous() if L is torch
                                       else L.contiguous(L.expand(d["temb"], (2, 320, 64, 64)))),
    # attention and norm shapes
    "layer_norm 320": lambda L, d: fn(L, "layer_norm")(d["h"], (320,)),
    "gelu [2,4096,1280]": lambda L, d: fn(L, "gelu")(d["h4"]),
    "softmax [.,64]": lambda L, d: L.softmax(d["x"], -1),
    "softmax [.,77]": lambda L, d: L.softmax(d["s77"], -1),
    "log_softmax [.,77]": lambda L, d: L.log_softmax(d["s77"], -1),
    "sum rows [8192,320]": lambda L, d: L.sum(d["rows"], -1),
    "mean rows [8192,320]": lambda L, d: L.mean(d["rows"], -1),
    # 16-bit, float64, integers
    "f16 add": lambda L, d: L.add(d["xh"], d["xh"]),
    "bf16 add": lambda L, d: L.add(d["xb"], d["xb"]),
    "bf16 silu": lambda L, d: fn(L, "silu")(d["xb"]),
    "bf16 exp": lambda L, d: L.exp(d["xb"]),
    "bf16 log": lambda L, d: L.log(d["xbp"]),
    "bf16 sigmoid": lambda L, d: L.sigmoid(d["xb"]),
    "bf16 tanh": lambda L, d: L.tanh(d["xb"]),
    "bf16 gelu": lambda L, d: fn(L, "gelu")(d["xb"]),
    "bf16 erf": lambda L, d: L.erf(d["xb"]),
    "bf16 sin": lambda L, d: L.sin(d["xb"]),
    "bf16 rsqrt": lambda L, d: L.rsqrt(d["xbp"]),
    "bf16 sqrt": lambda L, d: L.sqrt(d["xbp"]),
    "bf16 reciprocal": lambda L, d: L.reciprocal(d["xb"]),
    "bf16 square": lambda L, d: L.square(d["xb"]),
    "bf16 abs": lambda L, d: L.abs(d["xb"]),
    "bf16 relu": lambda L, d: L.relu(d["xb"]),
    "bf16 tan": lambda L, d: L.tan(d["xb"]),
    "f16 exp (torch f32)": lambda L, d: half_as_float(L, L.exp, d["xh"]),
    "f16 gelu (torch f32)": lambda L, d: half_as_float(L, fn(L, "gelu"), d["xh"]),
    "f16 rsqrt (torch f32)": lambda L, d: half_as_float(L, L.rsqrt, d["xhp"]),
    "f16 sqrt (torch f32)": lambda L, d: half_as_float(L, L.sqrt, d["xhp"]),
    "f16 layer_norm (torch f32)": lambda L, d: half_as_float(
        L, lambda t: fn(L, "layer_norm")(t, (320,)), d["hh"]),
    "f16 softmax (torch f32)": lambda L, d: half_as_float(L, lambda t: L.softmax(t, -1), d["xh"]),
    "sin |x| in [2^19, 2^100]": lambda L, d: L.sin(d["big"]),
    "cos |x| in [2^19, 2^100]": lambda L, d: L.cos(d["big"]),
    "tan |x| in [2^19, 2^100]": lambda L, d: L.tan(d["big"]),
    "f64 sqrt": lambda L, d: L.sqrt(d["d"]),
    "f64 exp": lambda L, d: L.exp(d["d"]),
    "f64 log": lambda L, d: L.log(d["d"]),
    "f64 expm1": lambda L, d: L.expm1(d["d"]),
    "f64 log1p": lambda L, d: L.log1p(d["dp"]),
    "f64 sigmoid": lambda L, d: L.sigmoid(d["d"]),
    "f64 tanh": lambda L, d: L.tanh(d["d"]),
    "f64 erf": lambda L, d: L.erf(d["d"]),
    "f64 sum": lambda L, d: L.sum(d["d"]),
    "i32 add": lambda L, d: L.add(d["i32"], d["i32"]),
    "i64 add": lambda L, d: L.add(d["i64"], d["i64"]),
    "i64 sum": lambda L, d: L.sum(d["i64"]),
    "f32 -> i64": lambda L, d: d["x"].to(L.int64),
    "div trunc": lambda L, d: L.div(d["x"], d["y"], rounding_mode="trunc"),
    "sub alpha 2": lambda L, d: (L.sub(d["x"], d["y"], alpha=2) if L is torch
                                 else L.sub(d["x"], d["y"], 2)),
    # per-call cost
    "small add [64]": lambda L, d: L.add(d["small"], d["small"]),
}

for name, f in CASES.items():
    if args.filter not in name:
        continue
    try:
        tm = best(lambda: f(mpsim, M))
        tt = best(lambda: f(torch, T))
        flag = "  <<<" if tm > 2 * tt else ("  <" if tm > 1.3 * tt else "")
        print(f"{name:28s} mpsim {tm:8.3f}  torch {tt:8.3f}  ratio {tm / tt:6.2f}{flag}",
              flush=True)
    except Exception as e:  # an op one side lacks: say so, go on
        print(f"{name:28s} error {type(e).__name__}: {str(e)[:80]}", flush=True)
