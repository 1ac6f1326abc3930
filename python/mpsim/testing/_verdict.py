"""error_bound, check, Verdict and assert_golden (docs/verdicts.md)."""

import json

import numpy as np

from . import _bounds
from ._model import model, ulp

# mpsim's own bound against the exact result, in ULPs of the result's dtype (docs/ops.md: the
# golden float32 and 16-bit results are correctly rounded or within one ULP; float64 results
# of glibc's functions within 5), plus 2^-50 of a sum's or product's scale.
GOLDEN_ULPS = {"float64": 5.0}
GOLDEN_SCALE = 2.0 ** -50
UNDERFLOW_ROUNDINGS = 4
FLOATS = ("float64", "float32", "float16", "bfloat16")


def _mpsim():
    import mpsim
    return mpsim


def op_name(op):
    """The op's name in mpsim from a torch name ("nn.functional.gelu", "torch.matmul",
    "Tensor.add", "gelu") or an mpsim function."""
    name = op if isinstance(op, str) else getattr(op, "__name__", None)
    if not isinstance(name, str):
        raise TypeError(f"op must be an op's name or an mpsim function, got {op!r}")
    if name.startswith(("fft.", "torch.fft.")):  # torch.fft.rfft -> mpsim's fft_rfft
        name = "fft_" + name.rsplit(".", 1)[-1]
    name = name.rsplit(".", 1)[-1]
    if name not in _mpsim().ops:
        raise ValueError(f"{op!r} is not an op of mpsim (mpsim.ops lists them)")
    return name


def _signature(name):
    for s in _mpsim()._C._signatures:
        if s["name"] == name:
            return s
    raise ValueError(f"{name} has no signature")


def _is_tensor_like(v):
    mod = type(v).__module__
    return isinstance(v, np.ndarray) or mod.startswith("torch") and hasattr(v, "detach") \
        or isinstance(v, _mpsim().Tensor)


def _to_mpsim(v):
    """A tensor-like as an mpsim cpu tensor with its dtype (torch bfloat16 exactly)."""
    mpsim = _mpsim()
    if isinstance(v, mpsim.Tensor):
        return v.to("cpu") if v.device != "cpu" else v
    if isinstance(v, np.ndarray):
        return mpsim.tensor(v)
    t = v.detach().cpu().resolve_conj()
    name = str(t.dtype).replace("torch.", "")
    if name == "bfloat16":
        return mpsim.tensor(t.float().numpy(), dtype=mpsim.bfloat16)
    return mpsim.tensor(t.numpy())


def _dtype_name(t):
    return str(t.dtype).replace("mpsim.", "")


def _float64(t):
    """A tensor's values as float64 NumPy; a complex tensor as its [..., 2] parts."""
    if t.dtype.is_complex:
        t = _mpsim().view_as_real(t)
    return np.asarray(t.to(_mpsim().float64).numpy() if _dtype_name(t) in FLOATS
                      else t.numpy(), dtype=np.float64)


def _part_dtype(t):
    """The dtype name an output's elements are judged in (a complex one: its parts')."""
    return {"complex32": "float16", "complex64": "float32", "complex128": "float64"}.get(
        _dtype_name(t), _dtype_name(t))


class _Context:
    def __init__(self, op, a, m, golden, input_format, out_format, mask_is_bool):
        self.op, self.a, self.m, self.golden = op, a, m, golden
        self.input_format, self.out_format = input_format, out_format
        self.mask_is_bool = mask_is_bool


def _evaluate(op, args, kwargs, compute):
    """(name, golden outputs as mpsim tensors, per-output bound terms) of op(*args, **kwargs)."""
    mpsim = _mpsim()
    name = op_name(op)
    if name in _bounds.RANDOM:
        raise ValueError(
            f"{name} is a random op: its values are its generator's, so no per-element bound "
            "exists; compare distributions (docs/verdicts.md, 'Random ops')")
    if name in _bounds.UNMEASURED:
        raise ValueError(
            f"{name}: the errors of the GPU kernels of this function are not measured yet, so "
            "no compute model has a budget for it; mpsim's golden result is within 1 ULP of "
            "the exact value (docs/verdicts.md, 'Limits')")
    if name in _bounds.COMPLEX:
        raise ValueError(
            f"{name} is not judged yet (a GPU's polar has no measured budget); mpsim's golden "
            "result is rounded once from its double computation (docs/verdicts.md, 'Limits')")
    if name in _bounds.CONDITIONED:
        raise ValueError(
            f"{name} is dense linear algebra: its error is the algorithm's backward error times "
            "the matrix's condition, which no per-element bound states a priori; compare "
            "against mpsim's golden result with a tolerance scaled by the condition number "
            "(docs/verdicts.md, 'Linear algebra')")
    if name not in _bounds.BOUNDS and name not in _bounds.EXACT:
        raise ValueError(f"{name} has no error bound (mpsim/testing/_bounds.py)")
    sig = _signature(name)
    names = [a[0] for a in sig["args"]]
    if len(args) > len(names):
        raise TypeError(f"{name}() takes {len(names)} arguments, {len(args)} given")
    bound_args = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{name}() has no argument {k!r}")
        if k in bound_args:
            raise TypeError(f"{name}() got argument {k!r} twice")
        bound_args[k] = v

    def convert(v):
        if type(v).__module__ == "torch" and type(v).__name__ == "dtype":
            return str(v).replace("torch.", "")  # torch.float16 -> "float16"
        if _is_tensor_like(v):
            return _to_mpsim(v)
        if isinstance(v, (list, tuple)) and v and all(_is_tensor_like(x) for x in v):
            return [_to_mpsim(x) for x in v]
        return v

    margs = {k: convert(v) for k, v in bound_args.items()}
    with mpsim.precision("golden"):
        out = getattr(mpsim, name)(**margs)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    # a complex output is judged as its [..., 2] parts, in its part dtype
    outs = [mpsim.view_as_real(t) if t.dtype.is_complex else t for t in outs]
    out_dtypes = [_part_dtype(t) for t in outs]

    floats = [t for v in margs.values() for t in (v if isinstance(v, list) else [v])
              if isinstance(v, (mpsim.Tensor, list)) and isinstance(t, mpsim.Tensor)
              and _part_dtype(t) in FLOATS]
    input_format = _part_dtype(floats[0]) if floats else \
        next((d for d in out_dtypes if d in FLOATS), "float32")
    m = model(compute, input_format)

    exact = name in _bounds.EXACT or (name == "interpolate" and
                                      margs.get("mode", "nearest") == "nearest")
    if exact or all(d not in FLOATS for d in out_dtypes):
        zeros = [np.zeros(tuple(t.shape)) for t in outs]
        return name, outs, [(z, z, z) for z in zeros], m

    # the arguments with defaults, tensors as float64 arrays
    a = {}
    for arg_name, _kind, has_default, default in sig["args"]:
        v = margs.get(arg_name, default if has_default else None)
        if isinstance(v, mpsim.Tensor) and v.dtype.is_complex:
            v = v.to(mpsim.complex128).numpy()  # a transform's complex input, exactly
        elif isinstance(v, mpsim.Tensor):
            v = _float64(v)
        elif isinstance(v, list) and v and isinstance(v[0], mpsim.Tensor):
            v = [_float64(t) for t in v]
        a[arg_name] = v
    mask = margs.get("attn_mask")
    mask_is_bool = isinstance(mask, mpsim.Tensor) and _dtype_name(mask) == "bool"
    golden = [_float64(t) for t in outs]
    with np.errstate(over="ignore", invalid="ignore"):
        kernels, scales = _bounds.BOUNDS[name](_Context(name, a, m, golden, input_format,
                                                        out_dtypes[0], mask_is_bool))
    terms = []
    for t, g, kb, s in zip(outs, golden, kernels, scales):
        d = _part_dtype(t)
        if d not in FLOATS:
            z = np.zeros(g.shape)
            terms.append((z, z, z))
            continue
        # the model's bound, plus the underflow a few roundings may add below the smallest
        # normal (absolute, half the smallest subnormal each)
        kb = np.broadcast_to(np.asarray(kb, dtype=np.float64), g.shape) + \
            UNDERFLOW_ROUNDINGS * ulp(0.0, m.math)
        fin = np.where(np.isfinite(g), np.abs(g), 0.0)
        # rounding the math format's result to a narrower output dtype
        rounding = 0.5 * ulp(fin + kb, d) if d in ("float16", "bfloat16") and \
            m.math != d else np.zeros(g.shape)
        own = GOLDEN_ULPS.get(d, 1.0) * ulp(fin, d) + GOLDEN_SCALE * np.broadcast_to(
            np.asarray(s, dtype=np.float64), g.shape)
        terms.append((np.array(kb), rounding, own))
    return name, outs, terms, m


def error_bound(op, *args, compute=None, **kwargs):
    """For each element of op(*args, **kwargs), an upper bound on |r - exact| that any correct
    kernel computing it in the arithmetic `compute` can reach, plus mpsim's own documented
    bound: a float64 NumPy array of the output's shape (a tuple for several outputs).

    op: the torch name ("matmul", "nn.functional.gelu", "gelu") or an mpsim function.
    compute: None (PyTorch's CUDA kernels: float32 math for float32, float16 and bfloat16
    inputs, one final rounding), "tf32", "float16_accumulate", "bfloat16_accumulate",
    ("fast_math", k) (math functions within k ULP) or "sequential" (sums in one chain).
    docs/verdicts.md derives each op family's bound."""
    _, outs, terms, _ = _evaluate(op, args, kwargs, compute)
    bounds = [k + r + o for k, r, o in terms]
    return bounds[0] if len(bounds) == 1 else tuple(bounds)


def _actual_values(x):
    """A result's values as float64 NumPy; a complex result as its [..., 2] parts."""
    mpsim = _mpsim()
    if isinstance(x, mpsim.Tensor):
        return _float64(x.to("cpu") if x.device != "cpu" else x)
    if type(x).__module__.startswith("torch") and hasattr(x, "detach"):
        t = x.detach().cpu().resolve_conj()
        if t.is_complex():
            import torch
            return torch.view_as_real(t.to(torch.complex128)).numpy()
        return t.double().numpy() if t.is_floating_point() else t.numpy().astype(np.float64)
    a = np.asarray(x)
    if np.iscomplexobj(a):
        return np.stack([a.real, a.imag], -1).astype(np.float64)
    return np.asarray(a, dtype=np.float64)


class Verdict:
    """The outcome of check(): truthy when every element passes."""

    def __init__(self, op, model_text, actual, golden, kernel, rounding, own):
        self.op, self.compute = op, model_text
        bound = kernel + rounding + own
        g_fin = np.isfinite(golden)
        a_fin = np.isfinite(actual)
        same_special = (~g_fin) & ((np.isnan(golden) & np.isnan(actual)) | (actual == golden))
        mismatch = (g_fin != a_fin) | ((~g_fin) & ~same_special)
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = np.where(g_fin & a_fin, np.abs(actual - golden), 0.0)
            ratio = np.where(bound > 0, diff / bound, np.where(diff > 0, np.inf, 0.0))
        ratio = np.where(mismatch, np.inf, ratio)
        self._actual, self._golden, self._bound, self._ratio = actual, golden, bound, ratio
        self._terms = (kernel, rounding, own)
        self._mismatch = mismatch
        self.nan_mismatch = int(mismatch.sum())
        self.failures = int((ratio > 1).sum())
        self.ok = self.failures == 0
        if ratio.size:
            flat = int(np.argmax(np.where(np.isnan(ratio), np.inf, ratio)))
            self.worst_index = tuple(int(i) for i in np.unravel_index(flat, ratio.shape))
            self.worst_ratio = float(ratio.reshape(-1)[flat])
        else:
            self.worst_index, self.worst_ratio = (), 0.0

    def __bool__(self):
        return self.ok

    def _dominant(self, idx):
        names = ("the kernel's arithmetic", "rounding to the output dtype", "mpsim's own bound")
        values = [float(t[idx]) for t in self._terms]
        return names[int(np.argmax(values))]

    def rows(self, n=5):
        order = np.argsort(-np.nan_to_num(self._ratio, posinf=np.finfo(float).max).reshape(-1),
                           kind="stable")[:n]
        out = []
        for flat in order:
            idx = tuple(int(i) for i in np.unravel_index(int(flat), self._ratio.shape))
            out.append({"index": idx, "actual": float(self._actual[idx]),
                        "golden": float(self._golden[idx]), "bound": float(self._bound[idx]),
                        "ratio": float(self._ratio[idx]), "dominant": self._dominant(idx),
                        "nan_mismatch": bool(self._mismatch[idx])})
        return out

    def report(self):
        head = (f"{self.op}: {'pass' if self.ok else 'FAIL'}, {self.failures} of "
                f"{self._ratio.size} elements beyond the bound ({self.nan_mismatch} NaN/inf "
                f"mismatches), worst |actual - golden| / bound = {self.worst_ratio:.3g} at "
                f"{self.worst_index}; compute {self.compute}")
        lines = [head]
        for r in (self.rows() if not self.ok else []):
            why = "NaN or inf where the result is finite, or the reverse" if \
                r["nan_mismatch"] else f"ratio {r['ratio']:.3g}; the bound is mostly " \
                f"{r['dominant']}"
            lines.append(f"  {r['index']}: actual {r['actual']!r}, golden {r['golden']!r}, "
                         f"bound {r['bound']:.3g} ({why})")
        return "\n".join(lines)

    def to_json(self):
        return json.dumps({"op": self.op, "ok": self.ok, "worst_ratio": self.worst_ratio,
                           "worst_index": list(self.worst_index), "failures": self.failures,
                           "nan_mismatch": self.nan_mismatch, "compute": self.compute,
                           "worst": self.rows()})

    def __repr__(self):
        return f"Verdict(ok={self.ok}, worst_ratio={self.worst_ratio:.3g}, " \
            f"failures={self.failures}, nan_mismatch={self.nan_mismatch})"


def check(actual, op, *args, compute=None, indices=None, **kwargs):
    """Judges `actual` (a kernel's result of op(*args, **kwargs): an mpsim tensor, a torch
    tensor on any device, or a NumPy array; a tuple for several outputs) against mpsim's golden
    result within error_bound's bound. Returns a Verdict (of the worst output when several).

    indices: flat indices into the (single) output when `actual` holds only those elements, a
    sample of a large output; elements outside the sample are not judged."""
    name, outs, terms, m = _evaluate(op, args, kwargs, compute)
    actuals = list(actual) if isinstance(actual, (list, tuple)) else [actual]
    if len(actuals) != len(outs):
        raise ValueError(f"{name} gives {len(outs)} outputs, actual has {len(actuals)}")
    if indices is not None and len(outs) != 1:
        raise ValueError(f"{name}: indices= takes an op with one output")
    verdicts = []
    for a, g, (k, r, o) in zip(actuals, outs, terms):
        av, gv = _actual_values(a), _float64(g)
        if indices is not None:
            idx = np.asarray(indices, dtype=np.int64)
            if idx.size and (idx.min() < 0 or idx.max() >= gv.size):
                raise ValueError(f"{name}: indices outside the output's {gv.size} elements")
            gv, k, r, o = (np.reshape(t, -1)[idx] for t in (gv, k, r, o))
            av = np.reshape(av, -1)
        if tuple(av.shape) != tuple(gv.shape):
            raise ValueError(f"{name}: actual has shape {tuple(av.shape)}, the result "
                             f"{tuple(gv.shape)}")
        verdicts.append(Verdict(name, m.describe(), av, gv, k, r, o))
    return max(verdicts, key=lambda v: (not v.ok, v.worst_ratio))


def assert_golden(actual, op, *args, compute=None, **kwargs):
    """Raises AssertionError with check()'s report when the verdict fails."""
    v = check(actual, op, *args, compute=compute, **kwargs)
    if not v:
        raise AssertionError(v.report())
    return v
