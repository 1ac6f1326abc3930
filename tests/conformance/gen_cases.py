#!/usr/bin/python3
"""Writes the PyTorch conformance cases for tests/conformance/conformance_test.cc.

Usage: /usr/bin/python3 gen_cases.py OUTDIR

For every case: random inputs drawn with a seed derived from the case name (adding a case
changes no other case), the op run by PyTorch on those inputs in their own dtype (the
"torch" result: float32 for every case but the bfloat16 ones) and again on the same values
converted to float64 (the reference). Exact cases (data movement, casts, argmax/argmin,
amax/amin) have no reference: mpsim must equal PyTorch's result bit for bit.

PyTorch 1.13 has no rms_norm: both of its results are the formula
x * rsqrt(mean(x^2) + eps) * weight, written with torch ops in float32 and in float64.
Where PyTorch's own float64 kernel cancels (gelu and gelu tanh for negative x, log_softmax of a
dominant element) the reference is a cancellation-free formula in float64 torch ops instead:
gelu_ref, gelu_tanh_ref, log_softmax_ref. The means (mean, var_mean's mean) take the exactly
computed mean rounded once (exact_mean): PyTorch's float64 mean rounds twice, which moves a mean
that is an exact tie of the float32 grid off the tie and would mark a correct result wrong.

Files are raw little-endian arrays (bfloat16 as its 16 bits, bool as one byte). The manifest,
OUTDIR/manifest.txt, has one line per case of space-separated tokens:
  NAME OP [exact] key=value... in:NAME=DTYPE:SHAPE:FILE... out:I=DTYPE:SHAPE:TORCH_FILE:F64_FILE...
SHAPE is sizes joined by 'x' ('-' for a 0-dim tensor); lists are '[a,b]'; F64_FILE is '-' for
exact cases. Value tokens contain no spaces.
"""
import math
from fractions import Fraction
import os
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(2)

DTYPE_NAMES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.bool: "bool",
}


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def shape_str(t):
    return "x".join(str(s) for s in t.shape) if t.dim() > 0 else "-"


def attr_str(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(str(int(e)) for e in v) + "]"
    if isinstance(v, float):
        return repr(v)
    if v is None:
        return "none"
    return str(v)


def with_layout(t, layout):
    """The same values in another memory order: "cl" channels-last (NHWC) for 4-d NCHW, "t"
    the last two dims swapped in memory (a transposed view), "nchw" as given."""
    if layout == "cl":
        return t.contiguous(memory_format=torch.channels_last)
    if layout == "t":
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    assert layout == "nchw", layout
    return t


class Writer:
    def __init__(self, outdir):
        self.outdir = outdir
        self.lines = []
        self.names = set()

    def _write(self, tag, t):
        fname = f"c{len(self.lines):04d}_{tag}.bin"
        t = t.detach().contiguous()
        if t.dtype == torch.bfloat16:
            arr = t.view(torch.int16).numpy().astype("<i2")
        elif t.dtype == torch.bool:
            arr = t.numpy().astype(np.uint8)
        else:
            arr = t.numpy()
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        arr.tofile(os.path.join(self.outdir, fname))
        return fname

    def case(self, name, op, inputs, fn, exact=False, ref=None, layout=None, **attrs):
        """inputs: dict name -> tensor (None: absent); fn(dict) -> tensor or tuple of tensors.

        ref, when given, computes the float64 reference in place of fn (a formula free of the
        cancellation that PyTorch's own float64 kernel has for that op). layout stores input
        "x" in another memory order, the same values (see with_layout), for both runs."""
        assert name not in self.names, name
        self.names.add(name)
        inputs = {k: v for k, v in inputs.items() if v is not None}
        if layout is not None:
            attrs["layout"] = layout

        def run(f, ins):
            ins = dict(ins, x=with_layout(ins["x"], layout)) if layout else ins
            outs = f(ins)
            return list(outs) if isinstance(outs, (tuple, list)) else [outs]

        outs = run(fn, inputs)
        outs64 = None
        if not exact:
            wide = {k: v.double() if v.is_floating_point() else v for k, v in inputs.items()}
            outs64 = run(ref or fn, wide)
        toks = [name, op] + (["exact"] if exact else [])
        toks += [f"{k}={attr_str(v)}" for k, v in attrs.items()]
        for k, v in inputs.items():
            toks.append(f"in:{k}={DTYPE_NAMES[v.dtype]}:{shape_str(v)}:{self._write('in_' + k, v)}")
        for i, o in enumerate(outs):
            f64 = "-"
            if outs64 is not None:
                assert outs64[i].dtype == torch.float64 and outs64[i].shape == o.shape, name
                f64 = self._write(f"f64_{i}", outs64[i])
            torch_file = self._write(f"torch_{i}", o)
            toks.append(f"out:{i}={DTYPE_NAMES[o.dtype]}:{shape_str(o)}:{torch_file}:{f64}")
        assert all(" " not in t for t in toks), toks
        self.lines.append(" ".join(toks))

    def finish(self):
        with open(os.path.join(self.outdir, "manifest.txt"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


def f32(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


def normal(name, shape, scale=1.0, offset=0.0):
    return f32(offset + scale * rng_for(name).standard_normal(shape))


def uniform(name, shape, lo, hi):
    return f32(rng_for(name).uniform(lo, hi, shape))


def dims_arg(dims):
    return None if len(dims) == 0 else dims


# ---------------------------------------------------------------------------------------------
# Reductions

ODD = (5, 7, 11)
ODD_DIMS = [[], [0], [1], [2], [-1], [0, 2], [1, 2]]


def exact_mean(x, dims, keepdim):
    """The correctly rounded float64 mean of each group: math.fsum gives the exact sum of the
    float32 inputs (it fits 53 bits for these data), one exact rational division, one rounding.
    PyTorch's float64 mean rounds twice, which turns an exact tie of the float32 grid (a mean
    that lies halfway between two floats) into a value a few float64 ulps to one side."""
    a = x.detach().numpy().astype(np.float64)
    nd = a.ndim
    red = sorted(d % nd for d in dims) if dims else list(range(nd))
    kept = [d for d in range(nd) if d not in red]
    rows = np.transpose(a, kept + red).reshape(-1, math.prod(a.shape[d] for d in red))
    n = rows.shape[1]
    out = np.array([float(Fraction(math.fsum(r)) / n) for r in rows])
    out = out.reshape([a.shape[d] for d in kept])
    if keepdim:
        for d in red:
            out = np.expand_dims(out, d)
    return torch.from_numpy(out.copy())  # copy: contiguous, and 0-d stays 0-d


def reductions(w):
    def data(op, name, shape):
        if op == "prod":
            # Factors near 1 keep products of thousands of terms inside float32's range.
            if math.prod(shape) > 1000:
                return f32(np.exp(0.02 * rng_for(name).standard_normal(shape)))
            return uniform(name, shape, 0.5, 2.0)
        if op in ("sum", "mean", "var", "std", "var_mean"):
            # A large common offset: cancellation in the variance, long carries in the sum.
            return normal(name, shape, 1.0, 1000.0 if "offset" in name else 0.0)
        if op in ("logsumexp",):
            return normal(name, shape, 10.0)
        return normal(name, shape)

    def fn_for(op, dims, keepdim, correction):
        d = dims_arg(dims)
        if op == "sum":
            return lambda i: torch.sum(i["x"], dim=d, keepdim=keepdim) if d else torch.sum(i["x"])
        if op == "mean":
            return lambda i: torch.mean(i["x"], dim=d, keepdim=keepdim) if d else torch.mean(i["x"])
        if op == "prod":
            # torch.prod takes one dim or none.
            return lambda i: (torch.prod(i["x"], dim=d[0], keepdim=keepdim) if d
                              else torch.prod(i["x"]))
        if op == "var":
            return lambda i: torch.var(i["x"], dim=d, correction=correction, keepdim=keepdim)
        if op == "std":
            return lambda i: torch.std(i["x"], dim=d, correction=correction, keepdim=keepdim)
        if op == "var_mean":
            return lambda i: torch.var_mean(i["x"], dim=d, correction=correction, keepdim=keepdim)
        if op == "norm":
            return lambda i: torch.linalg.vector_norm(i["x"], 2, dim=d, keepdim=keepdim)
        if op == "logsumexp":
            return lambda i: torch.logsumexp(i["x"], dim=d, keepdim=keepdim)
        if op == "amax":
            return lambda i: torch.amax(i["x"], dim=d if d else (), keepdim=keepdim)
        if op == "amin":
            return lambda i: torch.amin(i["x"], dim=d if d else (), keepdim=keepdim)
        raise ValueError(op)

    for op in ("sum", "mean", "prod", "var", "std", "var_mean", "norm", "logsumexp", "amax",
               "amin"):
        exact = op in ("amax", "amin")
        has_corr = op in ("var", "std", "var_mean")
        variants = []
        for k, dims in enumerate(ODD_DIMS):
            if op == "prod" and len(dims) > 1:
                continue
            if op == "logsumexp" and not dims:
                continue
            keepdim = k % 2 == 1
            corrections = [1, 0, 2] if has_corr and k < 3 else [1]
            for c in corrections:
                variants.append((ODD, dims, keepdim, c, ""))
        # One larger shape over the last dim (rows of 4096) and one over the leading dim.
        variants.append(((24, 4096), [-1], False, 1, ""))
        variants.append(((4096, 13), [0], True, 1, ""))
        # Strided inputs: the last two dims transposed in memory.
        variants.append((ODD, [-1], False, 1, "t"))
        variants.append((ODD, [1], True, 1, "t"))
        variants.append(((96, 512), [-1], False, 1, "t"))
        if op in ("sum", "mean", "var", "std", "var_mean"):
            variants.append(((16, 4096), [-1], False, 1, "offset"))
            variants.append(((3, 2000, 5), [1], False, 1, "offset"))
            variants.append((ODD, [], False, 1, "offset"))
        for shape, dims, keepdim, c, tag in variants:
            name = f"{op}/{'x'.join(map(str, shape))}/dims{attr_str(dims)}/k{int(keepdim)}"
            if has_corr:
                name += f"/c{c}"
            if tag:
                name += "/" + tag
            attrs = dict(dims=dims, keepdim=keepdim)
            if has_corr:
                attrs["correction"] = c
            ref = None
            if op == "mean":
                ref = lambda i, d=dims, k=keepdim: exact_mean(i["x"], d, k)
            elif op == "var_mean":
                ref = lambda i, f=fn_for(op, dims, keepdim, c), d=dims, k=keepdim: (
                    f(i)[0], exact_mean(i["x"], d, k))
            w.case(name, op, {"x": data(op, name, shape)}, fn_for(op, dims, keepdim, c),
                   exact=exact, ref=ref, layout="t" if tag == "t" else None, **attrs)

    # NaN propagates through amax/amin; rows with ties and NaNs for argmax/argmin.
    x = normal("amax/nan", ODD)
    x[1, 3, 4] = float("nan")
    x[4, 0, 0] = float("nan")
    for op, f in (("amax", torch.amax), ("amin", torch.amin)):
        w.case(f"{op}/nan/dims[2]", op, {"x": x}, lambda i, f=f: f(i["x"], dim=2), exact=True,
               dims=[2], keepdim=False)

    def arg_fn(f, dim, keepdim):
        return lambda i: f(i["x"]) if dim is None else f(i["x"], dim=dim, keepdim=keepdim)

    for op, f in (("argmax", torch.argmax), ("argmin", torch.argmin)):
        for dim, keepdim in ((None, False), (0, False), (1, True), (2, False), (-1, True)):
            name = f"{op}/5x7x11/dim{attr_str(dim)}/k{int(keepdim)}"
            w.case(name, op, {"x": normal(name, ODD)}, arg_fn(f, dim, keepdim), exact=True,
                   dim=dim, keepdim=keepdim)
        # Small integers: many ties, where the first index must win.
        name = f"{op}/ties"
        x = f32(rng_for(name).integers(0, 4, (13, 64)))
        w.case(name, op, {"x": x}, arg_fn(f, 1, False), exact=True, dim=1, keepdim=False)
        name = f"{op}/nan"
        x = normal(name, (6, 33))
        x[2, 7] = x[2, 20] = x[4, 0] = float("nan")
        w.case(name, op, {"x": x}, arg_fn(f, 1, False), exact=True, dim=1, keepdim=False)
        name = f"{op}/4096x13/dim0"
        w.case(name, op, {"x": normal(name, (4096, 13))}, arg_fn(f, 0, False), exact=True, dim=0,
               keepdim=False)
        name = f"{op}/96x512/dim-1/t"
        w.case(name, op, {"x": normal(name, (96, 512))}, arg_fn(f, -1, False), exact=True,
               layout="t", dim=-1, keepdim=False)


def reduction_specials(w):
    """Empty reductions, too few elements for the correction, infinities and NaN."""
    empty = torch.zeros((0, 5))
    for op, f in (("sum", torch.sum), ("mean", torch.mean), ("prod", torch.prod)):
        w.case(f"{op}/empty", op, {"x": empty}, lambda i, f=f: f(i["x"], 0), dims=[0],
               keepdim=False)
    one = normal("var/one", (1, 5))
    for op, f in (("var", torch.var), ("std", torch.std)):
        for c in (0, 1, 2):
            w.case(f"{op}/one/c{c}", op, {"x": one},
                   lambda i, f=f, c=c: f(i["x"], 0, correction=c), dims=[0], correction=c,
                   keepdim=False)
    inf, nan = math.inf, math.nan
    x = f32([[1.0, -inf, 2.0, 0.5], [-inf, -inf, -inf, -inf], [1.0, inf, 2.0, 3.0],
             [inf, -inf, 1.0, 1.0], [nan, 1.0, 2.0, 3.0], [-inf, 3.0, -inf, -inf]])
    for op, fn in (("sum", lambda i: torch.sum(i["x"], 1)),
                   ("mean", lambda i: torch.mean(i["x"], 1)),
                   ("prod", lambda i: torch.prod(i["x"], 1)),
                   ("var", lambda i: torch.var(i["x"], 1)),
                   ("norm", lambda i: torch.linalg.vector_norm(i["x"], 2, 1)),
                   ("logsumexp", lambda i: torch.logsumexp(i["x"], 1))):
        attrs = dict(dims=[1], keepdim=False)
        if op == "var":
            attrs["correction"] = 1
        w.case(f"{op}/inf_nan", op, {"x": x}, fn, **attrs)
    for op, f in (("amax", torch.amax), ("amin", torch.amin)):
        w.case(f"{op}/inf_nan", op, {"x": x}, lambda i, f=f: f(i["x"], 1), exact=True, dims=[1],
               keepdim=False)
    for op, f in (("argmax", torch.argmax), ("argmin", torch.argmin)):
        w.case(f"{op}/inf_nan", op, {"x": x}, lambda i, f=f: f(i["x"], 1), exact=True, dim=1,
               keepdim=False)
    # Masked rows for softmax: -inf entries, one row all -inf (NaN in PyTorch), one +inf.
    w.case("softmax/inf_nan", "softmax", {"x": x}, lambda i: torch.softmax(i["x"], 1), dim=1)
    w.case("log_softmax/inf_nan", "log_softmax", {"x": x},
           lambda i: torch.log_softmax(i["x"], 1), dim=1)


# ---------------------------------------------------------------------------------------------
# softmax, log_softmax

def log_softmax_ref(x, dim):
    """log_softmax without log's rounding of 1 + tail: s - log1p(sum of the other terms).

    PyTorch's float64 kernel computes s - log(sum(exp(s))), s = x - max, which rounds a tail
    below 2^-53 away and returns 0 for the maximum where the exact value is -tail."""
    s = x - x.amax(dim, keepdim=True)
    rest = torch.exp(s).scatter(dim, s.argmax(dim, keepdim=True), 0.0)  # drop one exp(0) = 1
    return s - torch.log1p(rest.sum(dim, keepdim=True))


def softmaxes(w):
    for op, f in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
        for shape, dim, scale, layout in ((ODD, 0, 3.0, None), (ODD, 1, 3.0, None),
                                          (ODD, -1, 3.0, None), (ODD, 2, 30.0, None),
                                          ((8, 4096), -1, 10.0, None), ((4096, 6), 0, 1.0, None),
                                          (ODD, -1, 3.0, "t"), ((96, 512), -1, 10.0, "t")):
            name = f"{op}/{'x'.join(map(str, shape))}/dim{dim}/s{scale:g}"
            name += "/t" if layout else ""
            ref = None
            if op == "log_softmax":
                ref = lambda i, dim=dim: log_softmax_ref(i["x"], dim)  # noqa: E731
            w.case(name, op, {"x": normal(name, shape, scale)},
                   lambda i, f=f, dim=dim: f(i["x"], dim), ref=ref, layout=layout, dim=dim)


# ---------------------------------------------------------------------------------------------
# Normalization

def norms(w):
    for shape, ns, affine, offset, layout in (
            (ODD, [11], "wb", 0.0, None), (ODD, [7, 11], "wb", 0.0, None),
            (ODD, [11], "none", 0.0, None), (ODD, [11], "w", 1000.0, None),
            ((16, 4096), [4096], "wb", 1000.0, None), ((64, 768), [768], "wb", 0.0, None),
            (ODD, [11], "wb", 0.0, "t"), ((96, 512), [512], "wb", 0.0, "t")):
        name = f"layer_norm/{'x'.join(map(str, shape))}/ns{attr_str(ns)}/{affine}/o{offset:g}"
        name += "/t" if layout else ""
        x = normal(name, shape, 1.0, offset)
        wt = uniform(name + "w", ns, 0.5, 2.0) if "w" in affine else None
        b = normal(name + "b", ns) if "b" in affine else None
        w.case(name, "layer_norm", {"x": x, "weight": wt, "bias": b},
               lambda i, ns=ns: F.layer_norm(i["x"], ns, i.get("weight"), i.get("bias"), 1e-5),
               layout=layout, normalized_shape=ns, eps=1e-5)

    # Constant rows (zero variance: the output is the bias) next to ordinary ones.
    name = "layer_norm/constant_rows"
    x = normal(name, (6, 33), 1.0, 1000.0)
    x[1, :] = 1000.1
    x[4, :] = -3.0
    w.case(name, "layer_norm", {"x": x, "weight": uniform(name + "w", (33,), 0.5, 2.0),
                                "bias": normal(name + "b", (33,))},
           lambda i: F.layer_norm(i["x"], [33], i["weight"], i["bias"], 1e-5),
           normalized_shape=[33], eps=1e-5)

    def rms(ns, eps):
        def f(i):
            x = i["x"]
            dims = tuple(range(-len(ns), 0))
            y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
            return y * i["weight"] if "weight" in i else y
        return f

    f32_eps = torch.finfo(torch.float32).eps
    for shape, ns, affine, eps in ((ODD, [11], "w", 1e-6), (ODD, [7, 11], "w", None),
                                   (ODD, [11], "none", None), ((16, 4096), [4096], "w", 1e-6),
                                   ((64, 768), [768], "w", None)):
        name = f"rms_norm/{'x'.join(map(str, shape))}/ns{attr_str(ns)}/{affine}/eps{eps}"
        x = normal(name, shape, 2.0, 0.5)
        wt = uniform(name + "w", ns, 0.5, 2.0) if affine == "w" else None
        w.case(name, "rms_norm", {"x": x, "weight": wt}, rms(ns, f32_eps if eps is None else eps),
               normalized_shape=ns, eps=eps)

    def gn(groups):
        return lambda i: F.group_norm(i["x"], groups, i.get("weight"), i.get("bias"), 1e-5)

    for shape, groups, affine, offset in (((2, 6, 5, 7), 3, "wb", 0.0),
                                          ((3, 32, 9, 11), 8, "wb", 0.0),
                                          ((2, 12, 7, 5), 4, "none", 100.0),
                                          ((2, 64, 32, 32), 32, "wb", 10.0)):
        for layout in ("nchw", "cl"):
            name = f"group_norm/{'x'.join(map(str, shape))}/g{groups}/{affine}/{layout}"
            x = normal(name, shape, 1.0, offset)
            wt = uniform(name + "w", shape[1:2], 0.5, 2.0) if "w" in affine else None
            b = normal(name + "b", shape[1:2]) if "b" in affine else None
            w.case(name, "group_norm", {"x": x, "weight": wt, "bias": b}, gn(groups),
                   num_groups=groups, eps=1e-5, layout=layout)
    name = "group_norm/constant_group"
    x = normal(name, (2, 6, 5, 7), 1.0, 10.0)
    x[1, 2:4] = 10.3  # one whole group of the second sample
    w.case(name, "group_norm", {"x": x, "weight": uniform(name + "w", (6,), 0.5, 2.0),
                                "bias": normal(name + "b", (6,))}, gn(3),
           num_groups=3, eps=1e-5)
    # group_norm of a 3-d input [N, C, L].
    name = "group_norm/4x10x13/g5"
    w.case(name, "group_norm", {"x": normal(name, (4, 10, 13)),
                                "weight": uniform(name + "w", (10,), 0.5, 2.0),
                                "bias": normal(name + "b", (10,))}, gn(5),
           num_groups=5, eps=1e-5, layout="nchw")

    def bn(i):
        return F.batch_norm(i["x"], i["running_mean"], i["running_var"], i.get("weight"),
                            i.get("bias"), False, 0.1, 1e-5)

    for shape, affine, layout in (((4, 6, 5, 7), "wb", "nchw"), ((4, 6, 5, 7), "wb", "cl"),
                                  ((4, 6, 5, 7), "none", "nchw"), ((8, 13), "wb", "nchw"),
                                  ((3, 5, 11), "wb", "nchw"), ((2, 64, 32, 32), "wb", "nchw")):
        name = f"batch_norm/{'x'.join(map(str, shape))}/{affine}/{layout}"
        c = shape[1]
        w.case(name, "batch_norm",
               {"x": normal(name, shape, 2.0, 0.5), "running_mean": normal(name + "m", (c,)),
                "running_var": uniform(name + "v", (c,), 0.25, 4.0),
                "weight": uniform(name + "w", (c,), 0.5, 2.0) if "w" in affine else None,
                "bias": normal(name + "b", (c,)) if "b" in affine else None},
               bn, eps=1e-5, layout=layout)


# ---------------------------------------------------------------------------------------------
# Elementwise: unary and binary

def gelu_ref(x):
    """x/2 erfc(-x/sqrt(2)): PyTorch's float64 gelu, x/2 (1 + erf(x/sqrt(2))), cancels to 0
    below x = -8 and loses digits from x = -3 on."""
    return 0.5 * x * torch.special.erfc(-x / math.sqrt(2.0))


def gelu_tanh_ref(x):
    """x sigmoid(2z), z = sqrt(2/pi) (x + 0.044715 x^3): the same function as PyTorch's
    x/2 (1 + tanh(z)), without its cancellation for negative x."""
    return x * torch.sigmoid(2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x))


# Special and boundary float32 values: signed zeros, infinities, NaN, subnormals, the overflow
# and underflow edges of exp, softplus's thresholds.
SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1.1754944e-38, 1e-30, -1e-30,
            3.4e38, -3.4e38, 1e30, -1e30, 1e10, -1e10, 88.72, 89.0, -87.34, -103.97, -150.0, 1e-7,
            -1e-7, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 5.0, 20.0, 20.5, -20.0, 1e4, -1e4]
# For binary ops: all pairs of these.
BINARY_SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2.5, -2.5, math.inf,
                   -math.inf, math.nan, 1e-45, 1e30, -1e30]


def elementwise(w):
    n = (3, 5, 7, 11)  # 1155 elements; plus one larger 1-d shape per op
    big = (33, 1027)

    def domain(op, name, shape):
        r = rng_for(name)
        if op == "exp":
            return f32(r.uniform(-87, 88, shape))
        if op == "expm1":
            return f32(np.where(r.random(shape) < 0.5, r.uniform(-1, 1, shape),
                                r.uniform(-20, 20, shape)))
        if op in ("log", "sqrt", "rsqrt", "reciprocal"):
            return f32(np.exp(r.uniform(-30, 30, shape)))
        if op == "log1p":
            return f32(np.where(r.random(shape) < 0.5, r.uniform(-0.999, 1, shape),
                                np.exp(r.uniform(-20, 20, shape))))
        if op in ("sin", "cos"):
            return f32(np.where(r.random(shape) < 0.7, r.uniform(-10, 10, shape),
                                r.uniform(-1e4, 1e4, shape)))
        if op in ("gelu", "gelu_tanh", "silu", "sigmoid", "softplus", "softplus_b2"):
            return f32(r.standard_normal(shape) * 6)
        return f32(r.standard_normal(shape) * 3)

    unary = {
        "exp": torch.exp, "log": torch.log, "log1p": torch.log1p, "expm1": torch.expm1,
        "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos,
        "tanh": torch.tanh, "erf": torch.erf, "relu": torch.relu, "sigmoid": torch.sigmoid,
        "silu": F.silu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
        "softplus": F.softplus, "softplus_b2": lambda x: F.softplus(x, 2.0, 5.0),
        "reciprocal": torch.reciprocal,
    }
    refs = {"gelu": lambda i: gelu_ref(i["x"]), "gelu_tanh": lambda i: gelu_tanh_ref(i["x"])}
    attrs = {"gelu": dict(approximate="none"), "gelu_tanh": dict(approximate="tanh"),
             "softplus": dict(beta=1.0, threshold=20.0),
             "softplus_b2": dict(beta=2.0, threshold=5.0)}
    for key, f in unary.items():
        op = {"gelu_tanh": "gelu", "softplus_b2": "softplus"}.get(key, key)
        for shape, layout in ((n, None), (big, None), (n, "t")):
            name = f"{key}/{'x'.join(map(str, shape))}" + ("/t" if layout else "")
            w.case(name, op, {"x": domain(key, name, shape)}, lambda i, f=f: f(i["x"]),
                   ref=refs.get(key), layout=layout, **attrs.get(key, {}))
        w.case(f"{key}/specials", op, {"x": f32(SPECIALS)}, lambda i, f=f: f(i["x"]),
               ref=refs.get(key), **attrs.get(key, {}))

    binary = {"add": torch.add, "mul": torch.mul, "div": torch.div, "pow": torch.pow}
    for op, f in binary.items():
        for sa, sb in (((5, 7, 11), (5, 7, 11)), ((5, 7, 11), (7, 1)), ((13, 1, 9), (1, 17, 9))):
            name = f"{op}/{'x'.join(map(str, sa))}/{'x'.join(map(str, sb))}"
            if op == "pow":
                a = uniform(name + "a", sa, 0.1, 10.0)
                b = normal(name + "b", sb, 3.0)
            else:
                a, b = normal(name + "a", sa, 3.0), normal(name + "b", sb, 3.0)
            w.case(name, op, {"x": a, "y": b}, lambda i, f=f: f(i["x"], i["y"]))
    for op, f in binary.items():
        v = f32(BINARY_SPECIALS)
        w.case(f"{op}/specials", op, {"x": v[:, None], "y": v[None, :]},
               lambda i, f=f: f(i["x"], i["y"]))
    name = "add/t"
    w.case(name, "add", {"x": normal(name + "x", ODD), "y": normal(name + "y", (7, 1))},
           lambda i: torch.add(i["x"], i["y"]), layout="t")
    name = "add/alpha"
    w.case(name, "add", {"x": normal(name + "x", ODD), "y": normal(name + "y", ODD)},
           lambda i: torch.add(i["x"], i["y"], alpha=0.3), alpha=0.3)
    for e in (2.0, 0.5, -1.5, 3.0):
        name = f"pow/scalar{e:g}"
        w.case(name, "pow", {"x": uniform(name, ODD, 0.01, 100.0)},
               lambda i, e=e: torch.pow(i["x"], e), exponent=e)


# ---------------------------------------------------------------------------------------------
# Data movement and casts: exact

def movement(w):
    for dim in (0, 1, -1):
        name = f"cat/dim{dim}"
        sizes = [3, 1, 6]
        ts = {}
        for k, s in enumerate(sizes):
            shape = list(ODD)
            shape[dim] = s
            ts[f"t{k}"] = normal(f"{name}/{k}", shape)
        w.case(name, "cat", ts, lambda i, dim=dim: torch.cat(list(i.values()), dim), exact=True,
               dim=dim)
    # Type promotion: float32, bfloat16 and int64 pieces give float32 (exact widening).
    name = "cat/promote"
    w.case(name, "cat", {"t0": normal(name + "0", (2, 5)),
                         "t1": normal(name + "1", (3, 5)).to(torch.bfloat16),
                         "t2": torch.from_numpy(rng_for(name + "2").integers(-1000, 1000, (1, 5)))},
           lambda i: torch.cat(list(i.values()), 0), exact=True, dim=0)
    for dim in (0, 1, 3, -1):
        name = f"stack/dim{dim}"
        ts = {f"t{k}": normal(f"{name}/{k}", ODD) for k in range(3)}
        w.case(name, "stack", ts, lambda i, dim=dim: torch.stack(list(i.values()), dim),
               exact=True, dim=dim)
    for dim in (0, 1, 2):
        name = f"index_select/dim{dim}"
        idx = torch.from_numpy(rng_for(name + "i").integers(0, ODD[dim], 9))
        w.case(name, "index_select", {"x": normal(name, ODD), "index": idx},
               lambda i, dim=dim: torch.index_select(i["x"], dim, i["index"]), exact=True,
               dim=dim)
    for dim in (0, 1, -1):
        name = f"gather/dim{dim}"
        ishape = [4, 6, 9]
        idx = torch.from_numpy(rng_for(name + "i").integers(0, ODD[dim], ishape))
        w.case(name, "gather", {"x": normal(name, ODD), "index": idx},
               lambda i, dim=dim: torch.gather(i["x"], dim, i["index"]), exact=True, dim=dim)
    for dims in ([0], [-1], [0, 2], [0, 1, 2]):
        name = f"flip/dims{attr_str(dims)}"
        w.case(name, "flip", {"x": normal(name, ODD)},
               lambda i, dims=dims: torch.flip(i["x"], dims), exact=True, dims=dims)
    for reps in ([2, 1, 3], [1, 2, 1, 2], [3, 1, 1]):
        name = f"repeat/{attr_str(reps)}"
        w.case(name, "repeat", {"x": normal(name, ODD)},
               lambda i, reps=reps: i["x"].repeat(*reps), exact=True, repeats=reps)
    for mode, shape, p, value in (("constant", ODD, [1, 2], 0.0),
                                  ("constant", ODD, [2, 0, -1, 3], 1.5),
                                  ("constant", ODD, [0, 1, 1, 0, 2, 2], -2.0),
                                  ("reflect", ODD, [3, 4], 0.0),
                                  ("reflect", (2, 5, 7, 11), [2, 3, 1, 4], 0.0),
                                  ("replicate", ODD, [3, 4], 0.0),
                                  ("replicate", (2, 5, 7, 11), [2, 3, 1, 4], 0.0)):
        name = f"pad/{mode}/{'x'.join(map(str, shape))}/{attr_str(p)}"
        w.case(name, "pad", {"x": normal(name, shape)},
               lambda i, p=p, mode=mode, value=value: (
                   F.pad(i["x"], p, mode, value) if mode == "constant" else F.pad(i["x"], p, mode)),
               exact=True, pad=p, mode=mode, value=value)
    for op, f in (("tril", torch.tril), ("triu", torch.triu)):
        for diag in (-1, 0, 2):
            name = f"{op}/diag{diag}"
            w.case(name, op, {"x": normal(name, ODD)}, lambda i, f=f, d=diag: f(i["x"], d),
                   exact=True, diagonal=diag)

    # Casts: random magnitudes across the formats' ranges, ties of the target grids, specials.
    def cast_input(name, dtype):
        r = rng_for(name)
        lo, hi = (-30, 18) if dtype == "f16" else (-130, 120)  # subnormals to overflow
        mags = np.exp2(r.uniform(lo, hi, 4096))
        x = (r.standard_normal(4096) * mags).astype(np.float32)
        bits = x.view(np.uint32).copy()
        half = 1 << (12 if dtype == "f16" else 15)  # exactly halfway between two grid points
        bits[:512] = (bits[:512] & ~np.uint32(2 * half - 1)) | np.uint32(half)
        x = bits.view(np.float32)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.0, 65520.0,
                             6.0e-8, 2.9e-8, 3.0e-8, 1e-45, 3.4e38, -3.4e38], dtype=np.float32)
        return f32(np.concatenate([x, specials]))

    for dtype, tdt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        name = f"to/{dtype}"
        w.case(name, "to", {"x": cast_input(name, dtype)}, lambda i, tdt=tdt: i["x"].to(tdt),
               exact=True, dtype=dtype)
    name = "to/i32"
    r = rng_for(name)
    x = r.standard_normal(4096) * np.exp2(r.uniform(-4, 30, 4096))
    x = f32(np.concatenate([x, [-0.5, 0.5, -0.0, 2147483520.0, -2147483648.0, -1.99, 1.99]]))
    w.case(name, "to", {"x": x}, lambda i: i["x"].to(torch.int32), exact=True, dtype="i32")


# ---------------------------------------------------------------------------------------------
# bfloat16: the same check in the other storage type PyTorch's CPU kernels support widely.

def bfloat16_cases(w):
    def bf(t):
        return t.to(torch.bfloat16)

    for op, fn, ref, shape, attrs in (
            ("sum", lambda i: torch.sum(i["x"], dim=-1), None, (24, 4096),
             dict(dims=[-1], keepdim=False)),
            ("mean", lambda i: torch.mean(i["x"], dim=1), None, ODD, dict(dims=[1], keepdim=False)),
            ("softmax", lambda i: torch.softmax(i["x"], -1), None, (8, 1000), dict(dim=-1)),
            ("log_softmax", lambda i: torch.log_softmax(i["x"], -1),
             lambda i: log_softmax_ref(i["x"], -1), (8, 1000), dict(dim=-1)),
            ("exp", lambda i: torch.exp(i["x"]), None, (4096,), {}),
            ("gelu", lambda i: F.gelu(i["x"]), lambda i: gelu_ref(i["x"]), (4096,),
             dict(approximate="none")),
            ("silu", lambda i: F.silu(i["x"]), None, (4096,), {}),
            ("tanh", lambda i: torch.tanh(i["x"]), None, (4096,), {})):
        name = f"{op}/bf16/{'x'.join(map(str, shape))}"
        w.case(name, op, {"x": bf(normal(name, shape, 3.0))}, fn, ref=ref, **attrs)
    name = "layer_norm/bf16/64x768"
    w.case(name, "layer_norm", {"x": bf(normal(name, (64, 768), 1.0, 3.0)),
                                "weight": bf(uniform(name + "w", (768,), 0.5, 2.0)),
                                "bias": bf(normal(name + "b", (768,)))},
           lambda i: F.layer_norm(i["x"], [768], i["weight"], i["bias"], 1e-5),
           normalized_shape=[768], eps=1e-5)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_cases.py OUTDIR")
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    w = Writer(outdir)
    reductions(w)
    reduction_specials(w)
    softmaxes(w)
    norms(w)
    elementwise(w)
    movement(w)
    bfloat16_cases(w)
    w.finish()
    print(f"gen_cases.py: {len(w.lines)} cases, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")


if __name__ == "__main__":
    main()
