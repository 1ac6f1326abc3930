"""PyTorch 1.13's OpInfo database (op_db) as mpsim's conformance suite (docs/conformance.md).

    PYTHONPATH=build/python /usr/bin/python3 tests/python/conformance.py [--markdown FILE] [OP...]

For every op_db entry that supports float32 on torch's CPU (554 names), every float32 sample
input op_db gives is run through torch and through mpsim's op of the same name (module-level
`mpsim.X`, `mpsim.nn.functional.X`, `mpsim.linalg.X`, ... or, for a method or operator, the
mpsim Tensor's), on cpu and on mps. A sample passes on cpu when mpsim computes where torch
computes (raises where torch raises), with the same output structure, shapes and dtypes,
integer and bool outputs equal, and floating outputs at least as close to the exact result
(the same op run by torch in float64) as torch's float32 result or within one float32 ULP of
it (NaN where torch and the exact result are NaN); random ops and `empty` compare shapes and
dtypes. It passes on mps when the mps run gives cpu's bytes.

tests/python/test_conformance.py runs it in CI and fails when an op passes fewer samples than
docs/conformance.md records."""

import argparse
import fractions
import math
import pathlib
import sys
import types
import warnings

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "opdb"))  # expecttest's stand-in: op_db imports it

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

import mp_refs  # noqa: E402
import mpsim  # noqa: E402

# Not mpsim's to have (docs/ops.md, "Not in mpsim"): CUDA-only test helpers and sparse layouts.
EXCLUDED = {"jiterator_2inputs_2outputs", "jiterator_4inputs_with_extra_args",
            "jiterator_binary", "jiterator_binary_return_by_ref", "jiterator_unary",
            "sparse.sampled_addmm", "to_sparse"}
# Values unspecified (random or uninitialised): shapes and dtypes are compared.
UNSPECIFIED = {"bernoulli", "normal", "uniform", "rand_like", "randn", "randn_like",
               "randint_like", "multinomial", "nn.functional.dropout", "nn.functional.dropout2d",
               "nn.functional.dropout3d", "nn.functional.feature_alpha_dropout",
               "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
               "nn.functional.fractional_max_pool3d", "empty", "empty_like", "new_empty",
               "new_empty_strided", "svd_lowrank", "pca_lowrank"}
PROPERTIES = {"T", "H", "mT", "mH"}
# Transforms judged norm-wise too: an output element within 2^-40 of the output's largest exact
# magnitude passes (a double transform rounded once is within about log2(n) 2^-53 ||x|| of the
# exact one, 2^17 times finer than a float32 ulp at the output's scale; an exact zero by symmetry,
# which torch's float32 algorithm may hit and a double one need not, is judged so).
NORMWISE = {"stft", "istft"}
# Samples of a deterministic op that are random (dropout inside): compared as UNSPECIFIED's.
RANDOM_SAMPLE = {"nn.functional._scaled_dot_product_attention":
                 lambda s: s.kwargs.get("dropout_p", 0.0) > 0}
# op_db entries whose op takes its arguments in another order than torch's function
REORDER = {"where": lambda x, condition, other, **k: ((condition, x, other), k),
           "nn.functional.embedding": lambda weight, index, **k: ((index, weight), k),
           "nn.functional.embedding_bag": lambda weight, index, **k: ((index, weight), k),
           "polygamma": lambda x, n, **k: ((n, x), k),
           "special.polygamma": lambda x, n, **k: ((n, x), k)}


class Missing(Exception):
    """mpsim has no op of this name."""


def op_infos():
    """op_db's entries that support float32 on the CPU, outside the exclusions."""
    return [o for o in op_db if torch.float32 in o.supported_dtypes("cpu")
            and o.name not in EXCLUDED]


def names():
    return sorted({o.name for o in op_db if torch.float32 in o.supported_dtypes("cpu")})


def _is_function(f):
    return isinstance(f, (types.FunctionType, types.BuiltinFunctionType, types.MethodType))


def resolve(name):
    """The mpsim callable of an op_db name: f(input, *args, **kwargs), or raises Missing."""
    parts = name.split(".")
    ns = mpsim
    for p in parts[:-1]:
        ns = getattr(ns, p, None)
        if ns is None:
            break
    fn = getattr(ns, parts[-1], None) if ns is not None and not name.startswith("__") else None
    if len(parts) == 1 and not hasattr(torch, name) and hasattr(mpsim.Tensor, name):
        fn = None  # torch has only the method (Tensor.to): mpsim's method, as torch's
    if name in METHOD_OF:
        return lambda x, *a, **k: getattr(x.clone(), METHOD_OF[name])(*a, **k)
    if _is_function(fn):
        if name in REORDER:
            def reordered(*a, **k):
                args, kwargs = REORDER[name](*a, **k)
                return fn(*args, **kwargs)
            return reordered
        return fn
    if len(parts) == 1 and hasattr(mpsim.Tensor, name):
        if name in PROPERTIES:
            return lambda x: getattr(x, name)
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    raise Missing(name)


def _to_mpsim(v, device):
    if isinstance(v, torch.Tensor):
        t = v.detach().resolve_conj().resolve_neg().clone()
        if t.dtype == torch.complex32:
            m = _to_mpsim(t.to(torch.complex64), "cpu").to(mpsim.complex32)
            return m.to(device) if device != "cpu" else m
        m = mpsim.tensor(t.numpy()) if t.dtype == torch.bool or t.dtype == torch.float64 \
            else mpsim.from_dlpack(t)
        return m.to(device) if device != "cpu" else m
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, (list, tuple)):
        return type(v)(_to_mpsim(x, device) for x in v)
    if isinstance(v, dict):
        return {k: _to_mpsim(x, device) for k, x in v.items()}
    if isinstance(v, torch.dtype):
        return getattr(mpsim, str(v).replace("torch.", ""), v)
    if isinstance(v, torch.device):
        return str(v)
    return v


def _to_double(v):
    if isinstance(v, torch.Tensor):
        if v.is_complex():
            return v.detach().resolve_conj().to(torch.complex128)
        return v.detach().double() if v.is_floating_point() else v.detach().clone()
    if v in (torch.float32, torch.float16, torch.bfloat16):  # a factory's dtype (logspace)
        return torch.float64
    if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
        return type(v)(_to_double(x) for x in v)
    if isinstance(v, dict):
        return {k: _to_double(x) for k, x in v.items()}
    return v


def _integer_in_float_out(sample, theirs):
    inp = sample.input
    if not isinstance(inp, torch.Tensor) or inp.is_floating_point() or inp.is_complex():
        return False
    outs = [t for t in _leaves(theirs) if isinstance(t, torch.Tensor)]
    return bool(outs) and all(t.dtype in (torch.float32, torch.complex64) for t in outs)


def _ints_to_double(v, dtype):
    """v with the tensors of the sample's integer dtype as float64."""
    if isinstance(v, torch.Tensor):
        return v.detach().double() if v.dtype == dtype else v
    if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
        return type(v)(_ints_to_double(x, dtype) for x in v)
    if isinstance(v, dict):
        return {k: _ints_to_double(x, dtype) for k, x in v.items()}
    return v


def _leaves(v):
    if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
        return [x for item in v for x in _leaves(item)]
    return [v]


def _dtype_name(v):
    return str(v.dtype).split(".")[-1]


def _array(v):
    """A leaf as (NumPy array, dtype name); a complex one as its [..., 2] real parts."""
    if isinstance(v, torch.Tensor):
        t = v.detach().cpu().resolve_conj().resolve_neg()
        name = _dtype_name(v)
        if t.is_complex():
            return torch.view_as_real(t.to(torch.complex128)).numpy(), name
        return t.double().numpy() if t.dtype in (torch.bfloat16, torch.float16) else \
            t.numpy(), name
    if isinstance(v, mpsim.Tensor):
        t = v.to("cpu") if v.device != "cpu" else v
        name = _dtype_name(t)
        if t.dtype.is_complex:
            return mpsim.view_as_real(t.to(mpsim.complex128)).numpy(), name
        if name in ("bfloat16", "float16"):
            t = t.to(mpsim.float64)
        return t.numpy(), name
    if isinstance(v, torch.Size):
        return np.array(tuple(v)), "size"
    if isinstance(v, (bool, int, float)):
        return np.array(v), type(v).__name__
    raise TypeError(f"an output of type {type(v).__name__}")


# A complex dtype's parts are judged in their real dtype.
PART_FORMAT = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}


# (fraction bits, lowest normal exponent) of each floating dtype: its ULP at a value
FLOAT_FORMATS = {"float32": (23, -126), "float": (23, -126), "float64": (52, -1022),
                 "float16": (10, -14), "bfloat16": (7, -126)}


def _ulp(x, dtype="float32"):
    bits, emin = FLOAT_FORMATS[dtype]
    x = np.abs(x.astype(np.float64))
    _, e = np.frexp(np.where(np.isfinite(x), x, 0.0))
    return np.ldexp(1.0, np.maximum(e - 1, emin) - bits)


def _tolerance(ref, dtype):
    """How far from the reference a value may be whatever torch's error: one ulp of the dtype;
    for float64, whose reference is torch's own float64 result (no more exact one at hand),
    2^-40 of the value plus 2^-40 of the output's largest magnitude (backward-stable results,
    a singular value or a sum that cancels, are accurate relative to the whole output), which a
    float64 computation meets and one that rounds to float32 inside does not."""
    ulp = _ulp(ref, dtype)
    if dtype != "float64":
        return ulp
    with np.errstate(invalid="ignore"):
        a = np.abs(np.where(np.isfinite(ref), ref, 0.0))
        scale = a.max() if a.size else 0.0
        return np.maximum(ulp, 2.0 ** -40 * (a + scale))


def compare(theirs, ours, exact, unspecified=False, normwise=False):
    """None when ours is acceptable against theirs (torch float32) and exact (float64 run or
    None), else why not."""
    if isinstance(theirs, torch.Size) and isinstance(ours, tuple):
        ours = torch.Size(ours)  # a shape: mpsim's is a tuple
    t_leaves, o_leaves = _leaves(theirs), _leaves(ours)
    e_leaves = _leaves(exact) if exact is not None else [None] * len(t_leaves)
    if len(t_leaves) != len(o_leaves):
        return f"{len(o_leaves)} outputs, torch {len(t_leaves)}"
    if len(e_leaves) != len(t_leaves):
        e_leaves = [None] * len(t_leaves)
    for i, (t, o, e) in enumerate(zip(t_leaves, o_leaves, e_leaves)):
        if t is None or o is None:
            if (t is None) != (o is None):
                return f"output {i}: {o!r}, torch {t!r}"
            continue
        try:
            ta, tdt = _array(t)
            oa, odt = _array(o)
        except TypeError as err:
            return f"output {i}: {err}"
        if ta.shape != oa.shape:
            return f"output {i}: shape {list(oa.shape)}, torch {list(ta.shape)}"
        if isinstance(t, torch.Tensor) and tdt != odt:
            return f"output {i}: dtype {odt}, torch {tdt}"
        if unspecified:
            continue
        tdt = PART_FORMAT.get(tdt, tdt)
        if tdt not in FLOAT_FORMATS:
            if not np.array_equal(ta, oa):
                return f"output {i}: values differ"
            continue
        ta, oa = ta.astype(np.float64), oa.astype(np.float64)
        ea = None
        if e is not None:
            try:
                ea, _ = _array(e)
                ea = ea.astype(np.float64)
                if ea.shape != ta.shape:
                    ea = None
            except TypeError:
                ea = None
        same = (oa == ta) | (np.isnan(oa) & np.isnan(ta))
        if ea is None:
            ok = same | (np.abs(oa - ta) <= _tolerance(ta, tdt))
        else:
            with np.errstate(invalid="ignore"):
                fin = np.isfinite(ea)
                err_o, err_t = np.abs(oa - ea), np.abs(ta - ea)
                # fmax: where torch gives NaN for a finite exact value, the ulp decides
                allowed = _tolerance(ea, tdt)
                if normwise and ea[fin].size:
                    allowed = np.maximum(allowed, 2.0 ** -40 * np.abs(ea[fin]).max())
                close = fin & np.isfinite(oa) & (err_o <= np.fmax(err_t, allowed))
                # an exact value beyond the dtype's range rounds to inf of its sign
                bits, _ = FLOAT_FORMATS[tdt]
                top = np.finfo(np.float64).max if tdt == "float64" else float(
                    {"float16": 65504.0, "bfloat16": 3.3895313892515355e38}.get(
                        tdt, np.finfo(np.float32).max))
                overflow = fin & (np.abs(ea) >= top + _ulp(np.array(top), tdt) / 2) & \
                    np.isinf(oa) & (np.sign(oa) == np.sign(ea))
                close = close | overflow
                special = ~fin & ((oa == ea) | (np.isnan(oa) & np.isnan(ea)))
                # torch NaN/inf where the exact result is finite: ours may be either
                ok = same | close | special
        if not ok.all():
            j = np.flatnonzero(~ok.reshape(-1))[0]
            got, want = oa.reshape(-1)[j], ta.reshape(-1)[j]
            ex = f", exact {ea.reshape(-1)[j]:.9g}" if ea is not None else ""
            return f"output {i}: {int((~ok).sum())} values off ({got:.9g}, torch {want:.9g}{ex})"
    return None


def _mp_exact(name, sample):
    """mpmath's value (tests/python/mp_refs.py) for a math function of one tensor, where
    torch's float64 is not exact enough to judge by (its Bessel functions near their zeros,
    sinc of large arguments, x - tanh x near 0); None for the other ops."""
    key = name.replace("special.", "special_").replace("nn.functional.", "")
    ref = mp_refs.REFS.get(key) or mp_refs.REFS.get("special_" + key)
    if ref is None or sample.args or not isinstance(sample.input, torch.Tensor):
        return None
    try:
        return ref(sample.input, **sample.kwargs)
    except TypeError:  # keywords the reference does not take (inplace=)
        return None


def _as_torch(v):
    if isinstance(v, mpsim.Tensor):
        t = v.to("cpu") if v.device != "cpu" else v
        name = _dtype_name(t)
        if name in ("bfloat16", "float16", "complex32"):
            return torch.from_numpy(t.to(mpsim.complex128 if name == "complex32" else
                                         mpsim.float64).numpy()).to(getattr(torch, name))
        return torch.from_numpy(t.numpy().copy())
    return v


def _signs(u, k):
    """+1/-1 per column i < k of u [..., m, n]: the sign of its first entry of largest
    magnitude."""
    cols = u[..., :k]
    if cols.shape[-2] == 0:
        return torch.ones(cols.shape[:-2] + (k,), dtype=u.dtype)
    at = cols.abs().argmax(dim=-2, keepdim=True)
    s = torch.sign(torch.gather(cols, -2, at)).squeeze(-2)
    return torch.where(s == 0, torch.ones_like(s), s)


def _canon_svd(out, vh):
    """(U, S, V or Vh) with each singular pair's sign fixed as mpsim fixes it (the largest
    component of U's column positive) and the columns beyond min(m, n) dropped: singular
    vectors are unique only up to sign, the rest of a full basis not at all (torch's own
    tests compare them so)."""
    u, s, v = (_as_torch(x) for x in out)
    k = s.shape[-1]
    if u.numel() == 0 or not u.is_floating_point() or (u == 0).all():
        return u, s, v
    sign = _signs(u, k)
    u = u[..., :k] * sign.unsqueeze(-2)
    v = v[..., :k, :] * sign.unsqueeze(-1) if vh else v[..., :k] * sign.unsqueeze(-2)
    return u, s, v


def _canon_eigh(out):
    w, v = (_as_torch(x) for x in out)
    if v.numel() == 0:
        return w, v
    return w, v * _signs(v, v.shape[-1]).unsqueeze(-2)


def _canon_eig(out, vectors=True):
    """linalg.eig's (values, vectors) as LAPACK and Eigen leave them unspecified: the pairs in
    the order of the values (real part, then imaginary), each vector's phase such that its
    first component of largest modulus is real and positive."""
    w, v = (_as_torch(x) for x in out) if vectors else (_as_torch(out), None)
    if w.numel() == 0:
        return (w, v) if vectors else w
    w128 = w.to(torch.complex128)
    key = w128.real  # sorted by real part, then imaginary part (stable sorts)
    order = torch.argsort(w128.imag, dim=-1, stable=True)
    order = order.gather(-1, torch.argsort(key.gather(-1, order), dim=-1, stable=True))
    w = w.gather(-1, order)
    if not vectors:
        return w
    v = v.gather(-1, order.unsqueeze(-2).expand(v.shape))
    top = v.abs().argmax(dim=-2, keepdim=True)
    c = v.gather(-2, top)
    v = v * (c.conj() / c.abs())
    return w, v


# op_db variants whose op is a small wrapper around the function (lstsq's solution alone,
# pinv of a @ b.mT): mpsim runs the same wrapper around its function.
VARIANT_CALL = {
    ("linalg.lstsq", "grad_oriented"): lambda fn: lambda a, b, driver: fn(a, b, driver=driver)[0],
    ("linalg.pinv", "singular"): lambda fn: lambda a, b: fn(a @ b.mT),
    ("svd_lowrank", ""): lambda fn: lambda a, b, **k: fn(a @ b.mT, **k),
    ("pca_lowrank", ""): lambda fn: lambda a, b, **k: fn(a @ b.mT, **k),
}
def _pinv_of_product(a, b):
    """pinv in float64 of the float32 matrix a @ b.mT that mpsim's wrapper forms, with the
    float32 input's default cutoff eps(float32) max(m, n)."""
    m = (_to_mpsim(a, "cpu") @ _to_mpsim(b, "cpu").mT).numpy()
    return torch.linalg.pinv(torch.from_numpy(m).double(),
                             rtol=torch.finfo(a.dtype).eps * max(m.shape[-2:]))


# The exact result of such a wrapped op: the op in float64 on the float32 input mpsim's
# wrapper forms. pinv of op_db's rank-deficient a @ b.mT amplifies the rounding of that
# product beyond float32's ulp, so the op is judged on its own input, as every other op is.
VARIANT_EXACT = {("linalg.pinv", "singular"): _pinv_of_product}
# op_db entries that are a Tensor method under another name (uniform: Tensor.uniform_)
METHOD_OF = {"uniform": "uniform_"}

def _canon_unique(out, sample):
    """unique(sorted=False): torch leaves the order of the values unspecified (its cpu kernel
    returns hash-set order), so both sides are compared sorted, the inverse indices and counts
    following the values."""
    if sample.kwargs.get("sorted", True) or sample.kwargs.get("dim") is not None:
        return out
    parts = [_as_torch(x) for x in (out if isinstance(out, tuple) else (out,))]
    values = parts[0]
    if values.dim() != 1:
        return out
    order = torch.argsort(values.to(torch.int64) if values.dtype == torch.bool else values,
                          stable=True)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel())
    result, rest = [values[order]], parts[1:]
    if sample.kwargs.get("return_inverse", False):
        result.append(rank[rest[0]])
        rest = rest[1:]
    if sample.kwargs.get("return_counts", False):
        result.append(rest[0][order])
    return tuple(result) if isinstance(out, tuple) else result[0]


def _vector_norm_exact(sample):
    """vector_norm of a fractional order in float64 with that order: torch 1.13 rounds the
    order to float32 inside its float64 kernel (ord 0.9 gives sum |x|^0.899999976^...)."""
    ord = sample.args[0] if sample.args else sample.kwargs.get("ord", 2)
    x = sample.input
    if not x.is_floating_point() or isinstance(ord, torch.Tensor) or \
            float(ord) in (0.0, float("inf"), float("-inf")) or float(ord).is_integer():
        return None
    dim, keepdim = sample.kwargs.get("dim"), sample.kwargs.get("keepdim", False)
    p = x.detach().double().abs().pow(float(ord))
    total = p.sum() if dim is None else p.sum(dim, keepdim=keepdim)
    if dim is None and keepdim:
        total = total.reshape([1] * x.dim())
    return total.pow(1.0 / float(ord))


def _soft_margin_exact(sample):
    """log1p(e^(-y x)) in float64: torch computes log(1 + e^(-y x)), which loses the small
    losses (1 + 1.8e-14 rounds to a multiple of 2^-52)."""
    x, y = sample.input.detach().double(), sample.args[0].detach().double()
    loss = torch.log1p(torch.exp(-y * x))
    reduction = sample.kwargs.get("reduction", "mean")
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _polygamma_exact(sample):
    """mpmath's polygamma (torch's float64 trigamma is off by 1e-12 relative near 7); at the
    poles x = 0, -1, ... the value torch gives at 0 and at every pole for n >= 2: -inf for
    digamma at 0 (NaN at the negative poles), (-1)^(n+1) inf for n >= 1 (torch's float64
    trigamma gives finite values there, 6.6e32 at -1)."""
    import mpmath
    n = sample.args[0]
    x = sample.input.detach().double().reshape(-1).tolist()
    out = []
    for v in x:
        if v == int(v) and v <= 0:
            out.append((float("-inf") if v == 0 else float("nan")) if n == 0 else
                       float("inf") * (-1) ** (n + 1))
        elif math.isnan(v):
            out.append(v)
        else:
            out.append(float(mpmath.polygamma(n, mpmath.mpf(v))))
    return torch.tensor(out, dtype=torch.float64).reshape(sample.input.shape)


def _native_layer_norm_exact(sample):
    """(out, mean, rstd) with the mean and variance of each row exact (fractions) and one
    rounding each: torch's float64 kernel leaves x - mean nonzero for a one-element or
    constant row (4e-13 where the exact value is 0)."""
    from fractions import Fraction
    x = sample.input.detach().double()
    shape, weight, bias, eps = sample.args
    if not torch.isfinite(x).all() or x.numel() == 0:
        return None
    n = int(np.prod(shape))
    lead = tuple(x.shape[:x.dim() - len(shape)])
    outs, means, rstds = [], [], []
    for row in x.reshape(-1, n).tolist():
        fr = [Fraction(v) for v in row]
        mean = sum(fr) / n
        var = sum((v - mean) ** 2 for v in fr) / n
        rstd = 1.0 / math.sqrt(float(var) + eps)
        outs.append([float(v - mean) * rstd for v in fr])
        means.append(float(mean))
        rstds.append(rstd)
    out = torch.tensor(outs, dtype=torch.float64).reshape(x.shape)
    if weight is not None:
        out = out * weight.detach().double()
    if bias is not None:
        out = out + bias.detach().double()
    stat_shape = lead + (1,) * len(shape)
    return (out, torch.tensor(means, dtype=torch.float64).reshape(stat_shape),
            torch.tensor(rstds, dtype=torch.float64).reshape(stat_shape))


# ops whose float64 run in torch is not exact enough to judge by: formulas written here
def _det_exact(sample):
    """The determinant of each matrix as an exact rational (Gaussian elimination in Fractions of
    the input's values), rounded once to float64: torch's float64 det of a near-singular matrix
    is LU's rounding noise, not a reference."""
    x = sample.input
    if not isinstance(x, torch.Tensor) or x.numel() == 0 or sample.args or sample.kwargs:
        return None
    mats = x.detach().double().reshape(-1, x.shape[-2], x.shape[-1]).numpy()
    if not np.isfinite(mats).all():
        return None

    def det(a):
        n = a.shape[0]
        m = [[fractions.Fraction(float(a[i, j])) for j in range(n)] for i in range(n)]
        d = fractions.Fraction(1)
        for c in range(n):
            p = next((r for r in range(c, n) if m[r][c] != 0), None)
            if p is None:
                return 0.0
            if p != c:
                m[c], m[p], d = m[p], m[c], -d
            d *= m[c][c]
            for r in range(c + 1, n):
                f = m[r][c] / m[c][c]
                for k in range(c, n):
                    m[r][k] -= f * m[c][k]
        return float(d)

    return torch.tensor([det(a) for a in mats], dtype=torch.float64).reshape(x.shape[:-2])


EXACT_FORMULA = {"linalg.vector_norm": _vector_norm_exact, "linalg.det": _det_exact,
                 "nn.functional.soft_margin_loss": _soft_margin_exact,
                 "polygamma": _polygamma_exact, "special.polygamma": _polygamma_exact,
                 "native_layer_norm": _native_layer_norm_exact}


def _integer_factory(sample):
    dtype = sample.kwargs.get("dtype")
    return dtype is not None and not dtype.is_floating_point and not dtype.is_complex


def _scalar_space(log):
    """torch's linspace/logspace of an integer dtype by its scalar loop, written here in
    NumPy: the ends converted to the dtype, each value in double (start + step i below
    steps / 2, end - step (steps - 1 - i) from there; logspace: base to that power), then
    converted to the dtype. Its vectorized loop casts the step to the integer type inside a
    vector and repeats a vector's first value across its lanes (and its float64 loop adds
    step per lane to a vector's base), so torch's own results depend on the SIMD width
    (linspace(0, -3, 50) in int64 differs between AVX2 and AVX-512 builds); the scalar loop
    is its definition, and mpsim's."""
    def reference(sample):
        args, kwargs = list(sample.args), dict(sample.kwargs)
        dtype = kwargs["dtype"]
        start, end = (torch.tensor(float(v), dtype=torch.float64).to(dtype).item()
                      for v in (sample.input, args[0]))
        steps = args[1] if len(args) > 1 else kwargs["steps"]
        base = (args[2] if len(args) > 2 else kwargs.get("base", 10.0)) if log else None
        step = (float(end) - float(start)) / (steps - 1) if steps > 1 else 0.0
        i = np.arange(steps, dtype=np.float64)
        half = 1 if steps == 1 else steps // 2  # one step: start
        values = np.where(i < half, float(start) + step * i,
                          float(end) - step * (steps - 1 - i))
        if log:
            values = np.power(float(base), values)
        return torch.from_numpy(values).to(dtype)
    return reference


# integer linspace/logspace: compared with torch's scalar formula (_scalar_space)
SCALAR_FORMULA = {"linspace": _scalar_space(False), "logspace": _scalar_space(True)}

def _arg(sample, pos, name, default):
    return sample.args[pos] if len(sample.args) > pos else sample.kwargs.get(name, default)


def _picked(sample, indices, dim, keepdim, unique):
    """The input's values at indices along dim (and NaN everywhere if unique indices along dim
    repeat): indices that pick equal values are equally right where values tie."""
    x = sample.input.detach()
    idx = _as_torch(indices)
    if x.dim() == 0:
        return x.expand(idx.shape).clone() if idx.numel() else idx.to(x.dtype)
    d = dim % x.dim()
    i = idx if keepdim else idx.unsqueeze(d)
    got = torch.gather(x, d, i)
    if unique and i.numel():
        ordered = torch.sort(i, dim=d).values
        if (ordered.narrow(d, 1, max(i.shape[d] - 1, 0)) ==
                ordered.narrow(d, 0, max(i.shape[d] - 1, 0))).any():
            got = torch.full_like(got, float("nan"), dtype=torch.float64)
    return (got if keepdim else got.squeeze(d)).double() if x.is_floating_point() else \
        (got if keepdim else got.squeeze(d))


def _canon_ties(dim_pos, keepdim_pos, unique, indices_only=False):
    """sort/topk/kthvalue/mode/argsort: torch leaves which of several equal elements' index is
    returned unspecified (its topk selects with a partial sort), so an index output is
    compared by the values it picks (distinct indices where the op permutes); stable=True
    sorts compare indices exactly."""
    def canon(out, sample):
        if sample.kwargs.get("stable", False) or not isinstance(sample.input, torch.Tensor):
            return out
        dim = _arg(sample, dim_pos, "dim", -1)
        keepdim = True if keepdim_pos is None else _arg(sample, keepdim_pos, "keepdim", False)
        if indices_only:
            return _picked(sample, out, dim, keepdim, unique)
        values, indices = out
        return (_as_torch(values), _picked(sample, indices, dim, keepdim, unique))
    return canon


# Outputs unique only up to sign (or a basis) or order: compared in a canonical form.
CANONICAL = {
    "topk": _canon_ties(1, None, True), "kthvalue": _canon_ties(1, 2, False),
    "mode": _canon_ties(0, 1, False), "sort": _canon_ties(0, None, True),
    "argsort": _canon_ties(0, None, True, indices_only=True),
    "linalg.svd": lambda o, s: _canon_svd(o, True), "svd": lambda o, s: _canon_svd(o, False),
    "linalg.eigh": lambda o, s: _canon_eigh(o),
    "linalg.eig": lambda o, s: _canon_eig(o), "linalg.eigvals": lambda o, s: _canon_eig(o, False), "symeig": lambda o, s: _canon_eigh(o),
    "unique": _canon_unique}


def run_sample(fn, info, sample, devices=("cpu", "mps")):
    """{device: None (pass) or why not} of one sample."""
    args, kwargs = sample.args, sample.kwargs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = info.op(sample.input.clone() if isinstance(sample.input, torch.Tensor)
                             else sample.input, *args, **kwargs)
            torch_error = None
        except Exception as err:  # noqa: BLE001 - whatever torch raises, mpsim must raise
            theirs, torch_error = None, err
        replace = SCALAR_FORMULA.get(info.name)
        if theirs is not None and replace is not None and _integer_factory(sample):
            theirs = replace(sample)
        exact = _mp_exact(info.name, sample)
        exact_written = exact is not None
        if exact is None and info.name in EXACT_FORMULA:
            exact = EXACT_FORMULA[info.name](sample)
            exact_written = exact is not None
        variant_exact = VARIANT_EXACT.get((info.name, info.variant_test_name))
        if variant_exact is not None:
            exact = variant_exact(sample.input, *args, **kwargs)
        if exact is None:
            try:
                exact = info.op(_to_double(sample.input), *_to_double(args),
                                **_to_double(kwargs))
            except Exception:  # noqa: BLE001 - no float64 reference: compared with torch
                exact = None
        if theirs is not None and not exact_written and _integer_in_float_out(sample, theirs):
            # an integer sample with floating results (sqrt of an int64 tensor): the op on
            # the same values in float64 is the exact result (None where it does not run so)
            dtype = sample.input.dtype
            exact = None
            # every tensor of the sample's dtype in float64, else the input alone (cov's
            # fweights must stay integers)
            for rest in (lambda v: _ints_to_double(v, dtype), lambda v: v):
                try:
                    exact = info.op(_to_double(_ints_to_double(sample.input, dtype)),
                                    *_to_double(rest(args)), **_to_double(rest(kwargs)))
                    if len(_leaves(exact)) != len(_leaves(theirs)):
                        exact = None
                    break
                except Exception:  # noqa: BLE001 - compared with torch's result alone
                    exact = None
        result, cpu_out = {}, None
        for device in devices:
            try:
                wrap = VARIANT_CALL.get((info.name, info.variant_test_name))
                call = fn if wrap is None else wrap(fn)
                ours = call(_to_mpsim(sample.input, device), *_to_mpsim(args, device),
                            **_to_mpsim(kwargs, device))
                error = None
            except Exception as err:  # noqa: BLE001 - judged below
                ours, error = None, err
            if torch_error is not None:
                result[device] = None if error is not None else \
                    f"computes where torch raises {type(torch_error).__name__}"
                continue
            if device == "mps" and result.get("cpu") is not None:
                result[device] = result["cpu"]
                continue
            if error is not None:
                if device == "mps" and isinstance(error, mpsim.Error) and "MPS" in str(error):
                    result[device] = None  # MPS's own refusal (float64, sizes)
                    continue
                result[device] = f"raises {type(error).__name__}: {str(error)[:90]}"
                continue
            if device == "cpu":
                cpu_out = ours
                canon = CANONICAL.get(info.name)
                if canon is not None:
                    result[device] = compare(canon(theirs, sample), canon(ours, sample),
                                             canon(exact, sample) if exact is not None else None)
                    continue
                random = info.name in UNSPECIFIED or RANDOM_SAMPLE.get(
                    info.name, lambda s: False)(sample)
                result[device] = compare(theirs, ours, exact, random,
                                         info.name in NORMWISE or info.name.startswith("fft."))
            elif info.name in UNSPECIFIED or RANDOM_SAMPLE.get(info.name,
                                                               lambda s: False)(sample):
                result[device] = compare(theirs, ours, None, True)
            else:
                result[device] = _same_bytes(cpu_out, ours)
    return result


def _same_bytes(cpu, mps):
    c, m = _leaves(cpu), _leaves(mps)
    if len(c) != len(m):
        return "mps: another output structure"
    for a, b in zip(c, m):
        if isinstance(a, mpsim.Tensor) and isinstance(b, mpsim.Tensor):
            ab = a.numpy().tobytes() if _dtype_name(a) not in ("bfloat16", "float16") else \
                a.to(mpsim.float64).numpy().tobytes()
            bb = b.to("cpu")
            bb = bb.numpy().tobytes() if _dtype_name(bb) not in ("bfloat16", "float16") else \
                bb.to(mpsim.float64).numpy().tobytes()
            if ab != bb:
                return "mps: other bits than cpu"
        elif a != b:
            return "mps: another value than cpu"
    return None


class Row:
    def __init__(self, name, samples=0, cpu=0, mps=0, why=""):
        self.name, self.samples, self.cpu, self.mps, self.why = name, samples, cpu, mps, why
        self.by_dtype = {}  # dtype name: [samples, passed on cpu and mps]
        self.why_by_dtype = {}  # dtype name: its first failure


# The dtypes of the second table: every one torch supports on cpu but float32 (the first
# table's) and the complex ones (docs/conformance.md).
OTHER_DTYPES = (torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                torch.int16, torch.int8, torch.uint8, torch.bool)


def _dtype_label(dtype):
    return str(dtype).replace("torch.", "")


def run(selected=None, devices=("cpu", "mps"), dtypes=(torch.float32,)):
    """A Row per op_db name, in name order, on mpsim's golden path: the samples of each of
    `dtypes` the op supports on torch's cpu, added up (a failure names its dtype when more
    than float32 runs)."""
    rows = {}
    tag = tuple(dtypes) != (torch.float32,)
    for info in op_infos():
        if selected and info.name not in selected:
            continue
        row = rows.setdefault(info.name, Row(info.name))
        supported = info.supported_dtypes("cpu")
        try:
            fn = resolve(info.name)
        except Missing:
            fn = None
            row.why = "missing"
        for dtype in dtypes:
            if dtype not in supported:
                continue
            # op_db draws sample values from torch's generator: the same inputs whatever ran
            # before
            torch.manual_seed(0)
            if fn is None:
                row.samples += sum(1 for _ in info.sample_inputs("cpu", dtype))
                continue
            for sample in info.sample_inputs("cpu", dtype):
                row.samples += 1
                mpsim.manual_seed(0)
                try:
                    r = run_sample(fn, info, sample, devices)
                except TypeError as err:  # a sample mpsim cannot take (complex inputs)
                    r = {d: str(err) for d in devices}
                row.cpu += r.get("cpu") is None
                row.mps += r.get("mps") is None
                counts = row.by_dtype.setdefault(_dtype_label(dtype), [0, 0])
                counts[0] += 1
                counts[1] += r.get("cpu") is None and r.get("mps") is None
                failure = r.get("cpu") or r.get("mps")
                if failure:
                    row.why_by_dtype.setdefault(_dtype_label(dtype), failure)
                if failure and not row.why:
                    row.why = f"{_dtype_label(dtype)}: {failure}" if tag else failure
    return [rows[n] for n in sorted(rows)]


def markdown(rows):
    present = [r for r in rows if r.why != "missing"]
    full = [r for r in present if r.cpu == r.samples and r.mps == r.samples]
    lines = [
        "| op | samples | cpu | mps | first failure |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        why = r.why.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.name} | {r.samples} | {r.cpu if r.why != 'missing' else '-'} | "
                     f"{r.mps if r.why != 'missing' else '-'} | {why} |")
    total = sum(r.samples for r in rows)
    head = (f"{len(present)} of {len(rows)} op_db names present, {len(full)} passing every "
            f"sample on cpu and mps; samples passed: cpu {sum(r.cpu for r in rows)}, mps "
            f"{sum(r.mps for r in rows)} of {total}.")
    per = {}
    for r in rows:
        for d, (n, ok) in r.by_dtype.items():
            per.setdefault(d, [0, 0])
            per[d][0] += n
            per[d][1] += ok
    if len(per) > 1:
        head += " Passed on cpu and mps, by dtype (of the present ops' samples): " + ", ".join(
            f"{d} {ok} of {n}" for d, (n, ok) in per.items()) + "."
    return head, "\n".join(lines)


def _where(name):
    """mpsim's callable of an op_db name, as a user writes it."""
    parts = name.split(".")
    if name in METHOD_OF:
        return f"`Tensor.{METHOD_OF[name]}`"
    ns = mpsim
    for p in parts[:-1]:
        ns = getattr(ns, p, None)
    fn = getattr(ns, parts[-1], None) if ns is not None and not name.startswith("__") else None
    if _is_function(fn) and (len(parts) > 1 or hasattr(torch, name)):
        return f"`mpsim.{name}`"
    return f"`Tensor.{name}`"


def _bound(name):
    """The op's bound as docs/verdicts.md and docs/ops.md state it, by family."""
    from mpsim.testing import _bounds as b
    key = _registry_key(name)
    if name in UNSPECIFIED or key in b.RANDOM:
        return "random: shapes, dtypes and distribution"
    if key in b.EXACT:
        return "exact"
    if key in b.CONDITIONED or name.startswith("linalg.") or key in (
            "pinverse", "matrix_rank", "ldl_factor"):
        return "double algorithm, rounded once: 1 ulp while cond < 2^25"
    if key in b.UNMEASURED:
        return "<= 1 ulp"
    if (name.startswith("fft.") and name not in ("fft.fftshift", "fft.ifftshift")) or \
            name in ("stft", "istft"):
        return "the double transform rounded once: 1/2 ulp + log2(n) 2^-53 \\|\\|x\\|\\|"
    if key in b.BOUNDS or key.replace("1d", "2d") in b.BOUNDS:
        return "per element: `mpsim.testing.error_bound`"
    if key in _EXACT_TOO or key.endswith("_") or key.startswith(("new_", "is_")):
        return "exact"
    return "float64 evaluation rounded once (its section)"


# Tensor methods, views and integer-valued ops whose results are exact (beyond _bounds.EXACT)
_EXACT_TOO = {"H", "T", "mH", "mT", "__getitem__", "view", "view_as", "reshape_as", "byte",
              "char", "short", "int", "long", "bool", "float", "double", "half", "bfloat16",
              "any", "all", "count_nonzero", "aminmax", "allclose", "equal", "isclose",
              "bincount", "histogram", "histogramdd", "take", "take_along_dim", "masked_fill",
              "index_put", "scatter", "index_select", "gather", "narrow", "narrow_copy",
              "split", "chunk", "squeeze", "unsqueeze", "t", "transpose", "swapaxes",
              "swapdims", "moveaxis", "movedim", "permute", "expand", "expand_as", "flatten",
              "unflatten", "ravel", "resize_", "resize_as_", "contiguous", "clone", "to",
              "zero_", "fill_", "empty", "empty_like", "zeros", "zeros_like", "ones",
              "ones_like", "full", "full_like", "eye", "signbit", "sgn", "bitwise_and",
              "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
              "bitwise_right_shift", "gcd", "lcm", "logical_and", "logical_or", "logical_xor",
              "logical_not", "max", "min", "median", "nanmedian", "mode", "tril_indices",
              "triu_indices", "unfold", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
              "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d",
              "max_unpool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
              "adaptive_max_pool3d", "embedding", "one_hot", "floor_divide", "__rmod__",
              "remainder", "fmod", "trunc", "fix", "round", "sign", "positive", "negative",
              "neg", "nonzero", "flip", "diag", "tril", "triu", "stack", "cat", "chalf",
              "view_as_complex", "view_as_real", "complex", "real", "imag", "conj",
              "fft_fftshift", "fft_ifftshift"}
# torch's reflected operators: the op they compute
_REFLECTED = {"__radd__": "add", "__rsub__": "sub", "__rmul__": "mul", "__rdiv__": "div",
              "__rpow__": "pow", "__rmatmul__": "matmul"}


def _registry_key(name):
    name = _REFLECTED.get(name, name)
    return name.replace("nn.functional.", "").replace("special.", "special_") \
        .replace("linalg.", "linalg_").replace("_refs.", "").replace("fft.", "fft_")


_WHAT = {"chalf": "self converted to complex32", "H": "the transpose of a 2-d tensor", "T": "the dims reversed",
         "mH": "the last two dims swapped", "mT": "the last two dims swapped",
         "__getitem__": "torch's indexing (basic and advanced)", "__rmod__": "other % self",
         "narrow_copy": "a copy of narrow", "polygamma": "the n-th derivative of digamma",
         "special.polygamma": "the n-th derivative of digamma", "trapz": "trapezoid's old name",
         "randint_like": "random integers in [low, high) of input's shape",
         "resize_": "self resized in place (torch's storage rules)",
         "resize_as_": "resize_ to other's shape", "sum_to_size": "sum down to size",
         "unfold": "the windows of size step along dim, as a new last dim",
         "view": "the same storage with another shape (or dtype)",
         "view_as": "view with other's shape", "zero_": "zeros written in place",
         "conj_physical": "the conjugate (a copy for real dtypes)",
         "allclose": "isclose everywhere", "nn.functional.embedding": "rows of weight by index",
         "nn.functional.dropout3d": "whole channels zeroed with probability p"}
_CONVERSIONS = {"bfloat16", "bool", "byte", "char", "double", "float", "half", "int", "long",
                "short"}


def _first_line(name):
    docs = {sig["name"]: sig.get("doc", "") for sig in mpsim._C._signatures}
    line = docs.get(_registry_key(name), "") or _WHAT.get(name, "")
    base = name.split(".")[-1]
    if not line and name in _CONVERSIONS:
        line = f"self converted to torch.{name}"
    elif not line and name.startswith("new_"):
        line = f"{base[4:]} with self's dtype and device"
    elif not line and name.startswith("masked."):
        line = f"{base} over the elements mask keeps (torch.masked)"
    elif not line and name.startswith("nn.functional."):
        line = docs.get(base.replace("1d", "2d").replace("3d", "2d"), "")
        line = f"the {base[-2:]} form: " + line if line else ""
    if not line:
        try:
            fn = resolve(name)
        except Missing:
            return ""
        doc = getattr(getattr(fn, "__wrapped__", fn), "__doc__", None) or ""
        line = doc.strip().split("\n")[0].strip()
        if "(self" in line or line.startswith(name.split(".")[-1] + "("):  # pybind signature
            line = ""
    return line.replace("|", "\\|")[:110]


def op_index(rows32, rows_other):
    """docs/ops.md's index: one row per op_db name."""
    other = {r.name: r for r in rows_other}
    lines = ["| torch op | mpsim | dtypes passing every sample (cpu and mps) | bound | what |",
             "|---|---|---|---|---|"]
    for r in rows32:
        if r.why == "missing":
            lines.append(f"| {r.name} | - | - | - | not in mpsim (complex results) |")
            continue
        ok, failing = [], []
        for row in (r, other.get(r.name)):
            for d, (n, passed) in (row.by_dtype.items() if row else []):
                (ok if passed == n else failing).append(d if passed == n else
                                                        f"{d} {passed}/{n}")
        dtypes = ", ".join(ok) + (f" (not all: {', '.join(failing)})" if failing else "")
        lines.append(f"| {r.name} | {_where(r.name)} | {dtypes} | {_bound(r.name)} | "
                     f"{_first_line(r.name)} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("ops", nargs="*", help="op_db names (default: all)")
    p.add_argument("--markdown", help="write the table into this file, between its markers")
    p.add_argument("--op-index", help="write docs/ops.md's index of op_db's ops (both runs) "
                   "into this file, between its markers")
    p.add_argument("--other-dtypes", action="store_true",
                   help="run the samples of every dtype but float32 (and complex) instead: "
                        "the second table of docs/conformance.md")
    a = p.parse_args(argv)
    if a.op_index:
        with mpsim.precision("golden"):
            rows32, rows_other = run(), run(dtypes=OTHER_DTYPES)
        path = pathlib.Path(a.op_index)
        text = path.read_text()
        start, end = "<!-- op index -->", "<!-- end of op index -->"
        before, rest = text.split(start)
        _, after = rest.split(end)
        path.write_text(f"{before}{start}\n{op_index(rows32, rows_other)}\n{end}{after}")
        return
    dtypes = OTHER_DTYPES if a.other_dtypes else (torch.float32,)
    with mpsim.precision("golden"):
        rows = run(set(a.ops) or None, dtypes=dtypes)
    head, table = markdown(rows)
    if a.markdown:
        path = pathlib.Path(a.markdown)
        text = path.read_text()
        marker = "dtypes table" if a.other_dtypes else "conformance table"
        start, end = f"<!-- {marker} -->", f"<!-- end of {marker} -->"
        before, rest = text.split(start)
        _, after = rest.split(end)
        path.write_text(f"{before}{start}\n{head}\n\n{table}\n{end}{after}")
    print(head)
    print(table)


if __name__ == "__main__":
    main()
