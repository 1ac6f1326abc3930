"""mpsim.masked: torch.masked's reductions and normalizations on strided tensors, under their
torch names. The masked-out elements (mask False; mask broadcast to input's shape) are replaced
by the operation's identity (0 for sums, 1 for products, -inf for amax/argmax/logsumexp/
softmax, +inf for amin/argmin/softmin, NaN for median), then mpsim's op of the same name runs
(golden sums, softmax, ...); mean, var and std divide by the count of kept elements, as torch's.
A slice with nothing kept gives what torch gives (the identity, or NaN for 0/0). var, std and
normalize are evaluated in float64 and rounded once."""

from . import _C, _forms

_F64 = _C.float64


def _dims(dim, ndim):
    """torch's canonical dims: every dim for None or (), sorted, wrapped, checked."""
    if dim is None or dim == ():
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    n = max(ndim, 1)
    out = []
    for d in dims:
        if d >= n or d < -n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        if d % n in out:
            raise _C.InvalidArgumentError(f"dim={d} appears multiple times in the list of dims")
        out.append(d % n)
    return sorted(out)


def _mask(input, mask):
    if mask is None:
        return None
    if mask.dim() > input.dim():
        raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                         "higher than of the input)")
    return mask.broadcast_to(list(input.shape)).to(_C.bool)


def _identity(kind, input):
    floating = input.dtype.is_floating_point
    if kind in ("sum", "cumsum", "norm"):
        return 0
    if kind in ("prod", "cumprod"):
        return 1
    if kind in ("amax", "argmax", "logsumexp"):
        return float("-inf") if floating else _int_limit(input.dtype, False)
    if kind in ("amin", "argmin", "norm_neg_inf"):
        return float("inf") if floating else _int_limit(input.dtype, True)
    if kind == "median":
        return float("nan")
    raise _C.UnsupportedError(f"identity of {kind} on {input.dtype} input")


def _int_limit(dtype, largest):
    import numpy as np
    info = np.iinfo({_C.uint8: np.uint8, _C.int8: np.int8, _C.int16: np.int16,
                     _C.int32: np.int32, _C.int64: np.int64}[dtype]
                    if dtype != _C.bool else np.uint8)
    return int(info.max if largest else info.min)


def _combine(kind, input, mask):
    m = _mask(input, mask)
    if m is None:
        return input
    return _C.where(m, input, _identity(kind, input))


def _int_sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return _C.int64 if input.dtype in (_C.uint8, _C.bool, _C.int8, _C.int16, _C.int32) \
        else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _C.sum(_combine("sum", input, mask), _dims(dim, input.dim()), keepdim,
                  _int_sum_dtype(input, dtype))


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _combine("prod", input, mask).to(_int_sum_dtype(input, dtype))
    for d in reversed(_dims(dim, input.dim())):
        x = _C.prod(x, d, keepdim)
    return x


def cumsum(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, input.dim())[0]
    return _C.cumsum(_combine("sum", input, mask), d, dtype or input.dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, input.dim())[0]
    return _C.cumprod(_combine("prod", input, mask), d, dtype or input.dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _combine("amax", input, mask)
    return _C.amax(x, _dims(dim, x.dim()), keepdim).to(dtype or input.dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _combine("amin", input, mask)
    return _C.amin(x, _dims(dim, x.dim()), keepdim).to(dtype or input.dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _C.argmax(_combine("argmax", input, mask), dim, keepdim).to(dtype or input.dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _C.argmin(_combine("argmin", input, mask), dim, keepdim).to(dtype or input.dtype)


def _count(input, mask, dim, keepdim):
    ones = _C.ones(list(input.shape), _C.int64, input.device)
    return sum(ones, dim, keepdim=keepdim, mask=mask)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """sum of the kept elements / their count (0 / 0: NaN)."""
    dtype = dtype or input.dtype
    if dtype == _C.bool:  # torch's bool sum is "any kept element true"
        total = _C.ne(sum(input, dim, keepdim=keepdim, dtype=_C.int64, mask=mask), 0)
    else:
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    count = _count(input, mask, dim, keepdim)
    return _C.div(total, count)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """nanmedian of the kept elements (NaN where none is kept)."""
    dtype = dtype or input.dtype
    d = _dims(dim, input.dim())[0]
    floating = input.dtype.is_floating_point
    x = input if floating else input.to(_C.float32)
    out = _forms.nanmedian(_combine("median", x, mask), d, keepdim)[0]
    if floating:
        return out
    if bool(_forms.any(_C.isnan(out)).item()):
        raise _C.InvalidArgumentError("masked median expects no fully masked out rows if dtype "
                                      "is not floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _combine("logsumexp", input, mask)
    return _C.logsumexp(x, _dims(dim, input.dim()), keepdim).to(dtype or input.dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    a = _combine("logsumexp", input, input_mask)
    b = _combine("logsumexp", other, other_mask)
    return _C.logaddexp(a, b).to(dtype or input.dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The vector norm of the kept elements (masked-out ones count as 0; +inf for ord=-inf)."""
    kind = "norm_neg_inf" if ord == float("-inf") else "norm"
    x = _combine(kind, input, mask)
    if dtype is not None:
        x = x.to(dtype)
    return _forms.norm(x, float(ord), _dims(dim, input.dim()), keepdim)


def _std_var(input, dim, unbiased, keepdim, dtype, mask, take_sqrt):
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else _C.float32
    # In float64 on the cpu, rounded once at the end (the mean, the squares and the sums).
    device, input = input.device, input.to("cpu").to(_F64)
    mask = None if mask is None else mask.to("cpu")
    compute = _F64
    count = _count(input, mask, dim, True)
    total = sum(input, dim, keepdim=True, dtype=dtype, mask=mask)
    x = _C.sub(input, _C.div(total, count))
    sq = _C.mul(x, x)
    total = sum(sq, dim, keepdim=keepdim, dtype=compute, mask=mask)
    if not keepdim:
        count = count.reshape(list(total.shape))
    if unbiased:
        count = _C.clamp(_C.sub(count, 1), 0, None)
    out = _C.div(total, count)
    return (_C.sqrt(out) if take_sqrt else out).to(dtype).to(device)


def var(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, input.dim())[0]
    return _C.softmax(_combine("amax", input, mask), d, dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, input.dim())[0]
    return _C.log_softmax(_combine("amax", input, mask), d, dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, input.dim())[0]
    return _C.softmax(_C.neg(_combine("amin", input, mask)), d, dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """The kept elements divided by their norm (at least eps); masked-out ones 0."""
    dtype, device = dtype or input.dtype, input.device
    wide = input.to("cpu").to(_F64)
    mask = None if mask is None else mask.to("cpu")
    x = _combine("sum", wide, mask)
    nrm = norm(wide, ord, dim, keepdim=True, mask=mask)
    return _C.div(x, _C.clamp(nrm, eps, None)).to(dtype).to(device)
