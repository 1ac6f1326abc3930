"""torch functions mpsim computes as compositions of its ops (docs/ops.md, "Compositions in
float64"): the floating ones evaluated in float64 on the cpu and rounded once into the result's
dtype, so each is within half an ulp of its double evaluation (addcmul's product and sum,
lerp, logspace's powers, the sums of trapezoid and cov, ...); the comparisons (isclose,
equal) use torch's own float arithmetic so that their booleans are torch's."""

import math

import numpy as np

from . import _C

_F64 = _C.float64


def _wide(t):
    return t.to("cpu").to(_F64) if isinstance(t, _C.Tensor) else t


def _floating(*values):
    """The floating result dtype of the tensors (and numbers) as torch promotes them."""
    dtypes = [v.dtype for v in values if isinstance(v, _C.Tensor)]
    floats = [d for d in dtypes if d.is_floating_point]
    order = [_C.float16, _C.bfloat16, _C.float32, _C.float64]
    if floats:
        if _C.float16 in floats and _C.bfloat16 in floats:
            return _C.float32
        return max(floats, key=order.index)
    return _C.float32


def _device(*values):
    for v in values:
        if isinstance(v, _C.Tensor):
            return v.device
    return "cpu"


def _back(r, dtype, device):
    return r.to(dtype).to(device)


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, rounded once."""
    dtype, device = _floating(input, tensor1, tensor2), _device(input)
    if not any(t.dtype.is_floating_point for t in (input, tensor1, tensor2)):
        # integer tensors: value converted to their type (truncated), as torch
        return _C.add(input, _C.mul(_C.mul(tensor1, tensor2), int(value)))
    if not all(t.dtype.is_floating_point for t in (input, tensor1, tensor2)):
        return _C.add(input, _C.mul(_C.mul(tensor1, tensor2), value))
    r = _C.add(_wide(input), _C.mul(_C.mul(_wide(tensor1), _wide(tensor2)), float(value)))
    return _back(r, dtype, device)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2, in float64, rounded once (integer operands raise,
    as torch)."""
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise _C.DTypeError("[addcdiv] integer division with addcdiv is no longer supported")
    dtype, device = _floating(input, tensor1, tensor2), _device(input)
    r = _C.add(_wide(input), _C.mul(_C.div(_wide(tensor1), _wide(tensor2)), float(value)))
    return _back(r, dtype, device)


def lerp(input, end, weight):
    """input + weight (end - input), in float64, rounded once."""
    dtype, device = _floating(input, end), _device(input)
    r = _C.add(_wide(input), _C.mul(_C.sub(_wide(end), _wide(input)), _wide(weight)))
    return _back(r, dtype, device)


def float_power(input, exponent):
    """input^exponent in float64 (torch's result dtype)."""
    base = _wide(input) if isinstance(input, _C.Tensor) else float(input)
    exp = _wide(exponent) if isinstance(exponent, _C.Tensor) else float(exponent)
    return _C.pow(base, exp).to(_device(input, exponent))


def ldexp(input, other):
    """input * 2^other, exact in float64, rounded once."""
    dtype, device = _floating(input, other), _device(input)
    r = _C.mul(_wide(input), _C.pow(2.0, _wide(other)))
    return _back(r, dtype, device)


def frexp(input):
    """(mantissa in [0.5, 1) with input's sign, int32 exponent): input = mantissa 2^exponent
    (exact)."""
    if not input.dtype.is_floating_point:
        raise _C.DTypeError("[frexp] supports floating point inputs only, got "
                            f"{input.dtype}")
    t = input.to("cpu")
    wide = t.to(_F64).numpy()
    m, e = np.frexp(wide)
    from . import tensor
    return (tensor(m, dtype=_F64).to(input.dtype).to(input.device),
            tensor(e.astype(np.int32)).to(input.device))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol |other| in the operands' dtype (torch's arithmetic), equal
    values (infinities) close, NaN close to NaN with equal_nan."""
    if input.dtype != other.dtype:
        raise _C.DTypeError(f"[isclose] {input.dtype} did not match {other.dtype}")
    eq = _C.eq(input, other)
    if equal_nan:
        eq = _C.logical_or(eq, _C.logical_and(_C.isnan(input), _C.isnan(other)))
    if not input.dtype.is_floating_point:
        diff = _C.abs(_C.sub(input.to(_F64), other.to(_F64)))
        return _C.logical_or(eq, _C.le(diff, _C.add(_C.mul(_C.abs(other.to(_F64)), rtol),
                                                   atol)))
    tol = _C.add(_C.mul(_C.abs(other), rtol), atol)
    close = _C.le(_C.abs(_C.sub(input, other)), tol)
    finite = _C.logical_and(_C.isfinite(input), _C.isfinite(other))
    return _C.logical_or(eq, _C.logical_and(finite, close))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    from ._forms import all as _all
    return bool(_all(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input, other):
    """True when the shapes and every element are equal (NaN never equals)."""
    from ._forms import all as _all
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(_all(_C.eq(input, other)).item())


def _dims(dim):
    if dim is None:
        return None
    return [dim] if isinstance(dim, int) else list(dim)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum with NaN taken as 0 (golden sum)."""
    x = _C.where(_C.isnan(input), 0, input) if input.dtype.is_floating_point else input
    return _C.sum(x, _dims(dim), keepdim, dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the values that are not NaN (NaN where all are), in float64, rounded
    once."""
    if not input.dtype.is_floating_point:
        raise _C.DTypeError("[nanmean] expected a floating point input, got "
                            f"{input.dtype}")
    x = _wide(input)
    keep = _C.logical_not(_C.isnan(x))
    total = _C.sum(_C.where(keep, x, 0.0), _dims(dim), keepdim)
    count = _C.sum(keep.to(_F64), _dims(dim), keepdim)
    return _back(_C.div(total, count), dtype or input.dtype, input.device)


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) over dim (None: every element)."""
    import collections
    pair = collections.namedtuple("aminmax", ["min", "max"])
    if input.numel() == 0 and dim is None:
        raise _C.InvalidArgumentError("[aminmax] cannot compute aminmax over an empty input")
    dims = [] if dim is None else [dim]
    if dim is None and keepdim:  # torch reduces the flattened input: [1] for a 0-d one
        shape = [1] * max(input.dim(), 1)
        lo = _C.amin(input, dims, False).reshape(shape)
        hi = _C.amax(input, dims, False).reshape(shape)
        return pair(lo, hi)
    lo, hi = _C.amin(input, dims, keepdim), _C.amax(input, dims, keepdim)
    if input.dim() == 0 and keepdim:  # torch keeps a dim of size 1
        lo, hi = lo.reshape([1]), hi.reshape([1])
    return pair(lo, hi)


def logspace(start, end, steps, base=10.0, *, dtype=None, device="cpu", requires_grad=False,
             layout=None, out=None):
    """base^(start + i (end - start) / (steps - 1)), each power in float64 rounded once (an
    integer dtype takes start and end converted to it first and truncates the powers, as
    torch)."""
    if requires_grad:
        raise _C.UnsupportedError("[logspace] requires_grad=True: mpsim has no autograd")
    if steps < 0:
        raise _C.InvalidArgumentError("[logspace] number of steps must be non-negative")
    target = dtype or _C.float32
    if not target.is_floating_point:
        start, end = (float(_C.full([], float(v), _F64, "cpu").to(target).item())
                      for v in (start, end))
    exponents = _C.linspace(float(start), float(end), steps, _F64, "cpu")
    r = _C.pow(float(base), exponents)
    if not target.is_floating_point:
        r = _C.trunc(r)
    return r.to(target).to(device)


def _trapezoid_parts(y, x, dx, dim):
    yw = _wide(y)
    d = dim if dim >= 0 else y.dim() + dim
    n = y.shape[d]
    left = _C.narrow(yw, d, 0, max(n - 1, 0))
    right = _C.narrow(yw, d, 1, max(n - 1, 0))
    mids = _C.mul(_C.add(left, right), 0.5)
    if x is None:
        return _C.mul(mids, 1.0 if dx is None else float(dx)), d
    xw = _wide(x)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[d] = x.shape[0]
        xw = xw.reshape(shape)
    spacing = _C.sub(_C.narrow(xw, d, 1, max(n - 1, 0)), _C.narrow(xw, d, 0, max(n - 1, 0)))
    return _C.mul(mids, spacing), d


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim (x's spacings or dx), in float64, rounded once."""
    if isinstance(x, (int, float)):
        x, dx = None, x
    parts, d = _trapezoid_parts(y, x, dx, dim)
    return _back(_C.sum(parts, [d]), _floating(y), y.device)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule (one element fewer along dim)."""
    if isinstance(x, (int, float)):
        x, dx = None, x
    parts, d = _trapezoid_parts(y, x, dx, dim)
    return _back(_C.cumsum(parts, d), _floating(y), y.device)


def dist(input, other, p=2):
    """|input - other|_p over every element, the difference exact in float64."""
    from ._forms import norm
    d = _C.sub(_wide(input), _wide(other))
    return _back(norm(d, float(p)), _floating(input, other), input.device)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the rows (variables) of input over its columns (observations), with
    frequency and analytic weights, in float64 (torch's formula)."""
    if input.dim() > 2:
        raise _C.ShapeError(f"[cov] expected input to have two or fewer dimensions but got "
                            f"{input.dim()}")
    x = _wide(input)
    x = x.reshape([1, -1]) if x.dim() < 2 else x
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _wide(fweights)
    if aweights is not None:
        w = _wide(aweights) if w is None else _C.mul(w, _wide(aweights))
    if w is None:
        w_sum = float(n)
        avg = _C.mean(x, [1], True)
    else:
        w_sum = _C.sum(w)
        avg = _C.div(_C.sum(_C.mul(x, w), [1], True), w_sum)
    if w is None:
        norm = w_sum - correction
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = _C.sub(w_sum, float(correction))
    else:
        norm = _C.sub(w_sum, _C.div(_C.mul(_C.sum(_C.mul(w, _wide(aweights))), correction),
                                    w_sum))
    xc = _C.sub(x, avg)
    xw = xc if w is None else _C.mul(xc, w)
    c = _C.div(_C.matmul(xw, xc.transpose(0, 1)), _C.clamp(norm, 0.0, None)
               if isinstance(norm, _C.Tensor) else max(norm, 0.0))
    dtype = _floating(input) if aweights is None else _floating(input, aweights)
    return _back(c.squeeze(), dtype, input.device)  # torch squeezes


def corrcoef(input):
    """Pearson's correlation of the rows, from cov in float64, clipped to [-1, 1]."""
    c = cov(input.to("cpu").to(_F64))
    if c.dim() == 0:
        return _back(_C.div(c, c), _floating(input), input.device)
    d = _C.sqrt(_C.diagonal(c) if hasattr(_C, "diagonal") else _diag(c))
    r = _C.div(_C.div(c, d.unsqueeze(1)), d.unsqueeze(0))
    return _back(_C.clamp(r, -1.0, 1.0), _floating(input), input.device)


def _diag(m):
    n = m.shape[0]
    from . import tensor
    idx = tensor([i * n + i for i in range(n)], dtype=_C.int64)
    return _C.index_select(m.reshape([-1]), 0, idx)


def renorm(input, p, dim, maxnorm):
    """Each slice along dim scaled to p-norm maxnorm where its norm exceeds it (torch's factor
    maxnorm / (norm + 1e-7)), in float64."""
    from ._forms import norm
    x = _wide(input)
    d = dim if dim >= 0 else input.dim() + dim
    others = [i for i in range(input.dim()) if i != d]
    n = norm(x, float(p), others, True)
    factor = _C.where(_C.gt(n, maxnorm), _C.mul(_C.reciprocal(_C.add(n, 1e-7)),
                                                  float(maxnorm)), 1.0)
    return _back(_C.mul(x, factor), input.dtype, input.device)


def _quantile(name, input, q, dim, keepdim, interpolation, skip_nan):
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise _C.InvalidArgumentError(f"[{name}] interpolation must be one of linear, lower, "
                                      f"higher, midpoint and nearest, got '{interpolation}'")
    qs = q.to("cpu").to(_F64).numpy() if isinstance(q, _C.Tensor) else np.asarray(q, float)
    if np.any((qs < 0) | (qs > 1)):
        raise _C.InvalidArgumentError(f"[{name}] q values must be in the range [0, 1]")
    x = input.to("cpu").to(_F64).numpy()
    if x.ndim == 0:
        if dim is not None and dim not in (0, -1):
            raise IndexError(f"[{name}] dim {dim} out of range for a 0-d input")
        x, dim, keepdim = x.reshape(1), None, False
    if dim is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = dim if dim >= 0 else x.ndim + dim
    method = {"linear": "linear", "lower": "lower", "higher": "higher",
              "midpoint": "midpoint", "nearest": "nearest"}[interpolation]
    if x.shape[axis] == 0 if x.ndim else False:
        raise _C.InvalidArgumentError(f"[{name}] input tensor must be non-empty")
    fn = np.nanquantile if skip_nan else np.quantile
    with np.errstate(invalid="ignore"):
        r = fn(x, qs, axis=axis, keepdims=keepdim and dim is not None, method=method)
    if not skip_nan:
        has_nan = np.isnan(x).any(axis=axis, keepdims=keepdim and dim is not None)
        r = np.where(has_nan, np.nan, r)
    if keepdim and dim is None:
        r = np.reshape(r, np.shape(qs) + (1,) * input.dim())
    from . import tensor
    return tensor(np.asarray(r, dtype=np.float64), dtype=_F64).to(input.dtype).to(input.device)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles along dim (None: every element) by sorting, torch's interpolations,
    NaN where the slice holds one; in float64, rounded once."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile over the values that are not NaN."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def mvlgamma(input, p):
    """sum_{i<p} lgamma(x - i / 2) + p (p - 1) / 4 log(pi), in float64 (every x > (p - 1) / 2,
    as torch requires)."""
    if p < 1:
        raise _C.InvalidArgumentError("[mvlgamma] p has to be greater than or equal to 1")
    x = _wide(input)
    from ._forms import all as _all
    if not bool(_all(_C.gt(x, (p - 1) / 2)).item()):
        raise _C.InvalidArgumentError(
            f"[mvlgamma] All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    total = _C.zeros_like(x)
    for i in range(p):
        total = _C.add(total, _C.lgamma(_C.sub(x, i / 2)))
    total = _C.add(total, p * (p - 1) / 4 * math.log(math.pi))
    return _back(total, _floating(input), input.device)


def einsum(equation, *operands):
    """Sums of products over the equation's indices (NumPy's einsum in float64), rounded once."""
    if not isinstance(equation, str) and operands and isinstance(operands[0], str):
        equation, operands = operands[0], (equation,)  # einsum(operands, equation)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    dtype, device = _floating(*operands), _device(*operands)
    arrays = [_wide(t).numpy() for t in operands]
    try:
        eq = equation.replace(" ", "")
        lhs, arrow, out = eq.partition("->")
        summed = 0
        if arrow and "..." in lhs and "..." not in out:  # torch sums the ellipsis dims
            summed = max(a.ndim - len(t.replace("...", "")) for a, t in
                         zip(arrays, lhs.split(",")))
            eq = lhs + "->..." + out
        r = np.einsum(eq, *arrays)
        if summed:
            r = np.sum(r, axis=tuple(range(summed)))
    except ValueError as err:
        raise _C.ShapeError(f"[einsum] {err}") from None
    from . import tensor
    return tensor(np.asarray(r, dtype=np.float64), dtype=_F64).to(dtype).to(device)


def tensordot(a, b, dims=2, out=None):
    """Sums of products over dims (a count of trailing/leading dims or two lists), as matmul's
    golden chain."""
    if isinstance(dims, _C.Tensor):
        dims = dims.tolist() if hasattr(dims, "tolist") else dims.numpy().tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise _C.InvalidArgumentError("[tensordot] tensordot expects dims >= 0")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    da = [d % a.dim() for d in da] if a.dim() else da
    db = [d % b.dim() for d in db] if b.dim() else db
    if len(da) != len(db) or any(a.shape[i] != b.shape[j] for i, j in zip(da, db)):
        raise _C.ShapeError(f"[tensordot] contracted dims of a {tuple(a.shape)} and b "
                            f"{tuple(b.shape)} differ")
    free_a = [i for i in range(a.dim()) if i not in da]
    free_b = [j for j in range(b.dim()) if j not in db]
    k = 1
    for i in da:
        k *= a.shape[i]
    ma = a.permute(free_a + da).reshape([-1, k])
    mb = b.permute(db + free_b).reshape([k, -1])
    shape = [a.shape[i] for i in free_a] + [b.shape[j] for j in free_b]
    return _C.mm(ma, mb).reshape(shape)


def angle(input):
    """The argument: of a complex number atan2(imag, real) in the part dtype (atan2's
    rounding); of a real one 0 for x >= 0, pi for x < 0, NaN for NaN (float result)."""
    if input.dtype.is_complex:
        return _C.atan2(_C.imag(input), _C.real(input))
    dtype = input.dtype if input.dtype.is_floating_point else _C.float32
    x = input.to(dtype)
    r = _C.mul(_C.lt(x, 0).to(dtype), math.pi)  # pi rounded once, to the dtype
    return _C.where(_C.isnan(x), x, r)


def _identity(name):
    def same(input):
        return input
    same.__name__ = name
    same.__doc__ = f"{name}: the input itself (mpsim has no lazy conjugate or negative bits)"
    return same


resolve_conj = _identity("resolve_conj")
resolve_neg = _identity("resolve_neg")


def conj_physical(input):
    """The conjugate as a new tensor (a real tensor: a copy)."""
    return _C.conj(input) if input.dtype.is_complex else input.clone()


def sum_to_size(input, *size):
    """The sum over the dims that broadcasting size to input's shape would expand."""
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    size = list(size)
    if not size:  # torch's sum_to of an empty shape is the full sum (integers: int64)
        return _C.sum(input)
    lead = input.dim() - len(size)
    if lead < 0 or any(s != 1 and s != input.shape[lead + i] for i, s in enumerate(size)):
        raise _C.ShapeError(f"[sum_to_size] size {size} is not expandable to size "
                            f"{list(input.shape)}")
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and input.shape[lead + i] != 1]
    if not dims:
        return input
    return _C.sum(input, dims, True).reshape(size)


def view_as(input, other):
    return input.view(list(other.shape))


def narrow_copy(input, dim, start, length):
    return _C.narrow(input, dim, start, length).clone()


def fill(input, value):
    """A tensor of input's shape and dtype holding value (torch.fill, out of place)."""
    if isinstance(value, _C.Tensor):
        if value.dim() != 0:
            raise _C.InvalidArgumentError("[fill] fill only supports 0-dimension value tensor "
                                          f"but got tensor with {value.dim()} dimensions")
        value = value.item()
    return _C.full(list(input.shape), value, input.dtype, input.device)


def uniform_(input, from_=0.0, to=1.0, *, generator=None):
    """input filled with uniform values in [from_, to) from mpsim's stream; returns input."""
    input.copy_(_C.uniform(list(input.shape), float(from_), float(to), input.dtype,
                           input.device))
    return input


def zero_(input):
    input.copy_(_C.zeros_like(input))
    return input


def fill_(input, value):
    input.copy_(fill(input, value))
    return input


def mode(input, dim=-1, keepdim=False):
    """(the most frequent value along dim, its last index), the smallest value among equally
    frequent ones (torch's CPU rule)."""
    import collections
    pair = collections.namedtuple("mode", ["values", "indices"])
    x = input.to("cpu")
    wide = x.to(_F64).numpy() if input.dtype.is_floating_point else x.numpy()
    if input.dim() == 0:
        from . import tensor
        return pair(input.clone(), tensor(np.int64(0)).to(input.device))
    d = dim % input.dim()
    moved = np.moveaxis(wide, d, -1)
    flat = moved.reshape(-1, moved.shape[-1]) if moved.shape[-1] else moved.reshape(-1, 0)
    if flat.shape[1] == 0:
        raise _C.InvalidArgumentError("[mode] expected a non-empty dim")
    vals = np.empty(flat.shape[0], wide.dtype)
    idx = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        order = np.argsort(row, kind="stable")
        s = row[order]
        best_v, best_n, i = s[0], 0, 0
        while i < len(s):
            j = i
            while j + 1 < len(s) and (s[j + 1] == s[i] or (s[j + 1] != s[j + 1] and
                                                            s[i] != s[i])):
                j += 1
            if j - i + 1 > best_n:
                best_v, best_n = s[i], j - i + 1
            i = j + 1
        same = np.nonzero((row == best_v) | (np.isnan(row) & np.isnan(best_v)))[0]
        vals[r], idx[r] = best_v, same[-1]
    out_shape = moved.shape[:-1]
    values = vals.reshape(out_shape)
    indices = idx.reshape(out_shape)
    if keepdim:
        values = np.expand_dims(values, d)
        indices = np.expand_dims(indices, d)
    from . import tensor
    v = tensor(np.asarray(values)).to(input.dtype).to(input.device)
    return pair(v, tensor(np.asarray(indices, np.int64)).to(input.device))


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm, mean, rstd): the statistics over the trailing normalized_shape dims in
    float64 (rstd = 1 / sqrt(var + eps)), shaped with those dims kept as 1."""
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != tuple(normalized_shape):
        raise _C.ShapeError(f"[native_layer_norm] normalized_shape {list(normalized_shape)} "
                            f"does not end input's shape {list(input.shape)}")
    out = _C.layer_norm(input, list(normalized_shape), weight, bias, eps)
    x = _wide(input)
    dims = list(range(input.dim() - k, input.dim()))
    mean = _C.mean(x, dims, True) if dims else x
    var = _C.var(x, dims, 0, True) if dims else _C.mul(x, 0.0)
    rstd = _C.rsqrt(_C.add(var, float(eps)))
    return out, _back(mean, input.dtype, input.device), _back(rstd, input.dtype, input.device)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(batch_norm, save_mean, save_invstd): with training, the normalization by the batch
    statistics over every dim but 1, all in float64 (invstd = 1 / sqrt(var + eps), biased var)
    and rounded once, the running stats updated as torch does (unbiased var); without, the
    golden batch_norm with the running stats and empty statistics."""
    if not training:
        out = _C.batch_norm(input, running_mean, running_var, weight, bias, False, momentum,
                            eps)
        empty = _C.zeros([0], input.dtype, input.device)
        return out, empty, empty
    if input.numel() == 0:  # nothing to normalize (torch returns the empty input's like)
        empty = _C.zeros([0], input.dtype, input.device)
        return input.clone(), empty, empty
    x = _wide(input)
    dims = [d for d in range(input.dim()) if d != 1]
    shape = [1] * input.dim()
    shape[1] = input.shape[1]
    mean = _C.mean(x, dims)
    var = _C.var(x, dims, 0)
    invstd = _C.rsqrt(_C.add(var, float(eps)))
    y = _C.mul(_C.sub(x, mean.reshape(shape)), invstd.reshape(shape))
    if weight is not None:
        y = _C.mul(y, _wide(weight).reshape(shape))
    if bias is not None:
        y = _C.add(y, _wide(bias).reshape(shape))
    count = input.numel() // max(input.shape[1], 1)
    if running_mean is not None:
        running_mean.copy_(_C.add(_C.mul(_wide(running_mean), 1 - momentum),
                                  _C.mul(mean, momentum)).to(running_mean.dtype))
    if running_var is not None and count > 1:
        unbiased = _C.mul(var, count / (count - 1))
        running_var.copy_(_C.add(_C.mul(_wide(running_var), 1 - momentum),
                                 _C.mul(unbiased, momentum)).to(running_var.dtype))
    return (_back(y, input.dtype, input.device), _back(mean, input.dtype, input.device),
            _back(invstd, input.dtype, input.device))


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central differences inside, one-sided (edge_order 1 or 2) at the ends, along each dim
    (NumPy's gradient in float64; spacing a number, a list of numbers or of coordinate
    tensors), one tensor per dim."""
    if edge_order not in (1, 2):
        raise _C.InvalidArgumentError("[gradient] torch.gradient only supports edge_order=1 "
                                      "and edge_order=2.")
    x = _wide(input).numpy()
    dims = list(range(input.dim())) if dim is None else ([dim] if isinstance(dim, int)
                                                         else list(dim))
    dims = [d % input.dim() for d in dims]
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise _C.InvalidArgumentError(
                "[gradient] torch.gradient expected each dimension size to be at least "
                "edge_order+1")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (int, float)):
        args = [float(spacing)] * len(dims)
    else:
        items = list(spacing)
        args = [(_wide(v).numpy() if isinstance(v, _C.Tensor) else float(v)) for v in items]
        if len(args) == 1 and len(dims) > 1:
            args = args * len(dims)
    out = np.gradient(x, *args, axis=dims, edge_order=edge_order)
    if len(dims) == 1:
        out = [out]
    from . import tensor
    dtype = input.dtype if input.dtype.is_floating_point else _C.float32
    return tuple(tensor(np.ascontiguousarray(o)).to(dtype).to(input.device) for o in out)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of rank q of A - M, here from the full SVD in double (torch's randomized
    method approximates the same subspace; the values are exact, not random)."""
    x = A if M is None else _C.sub(A, M.broadcast_to(list(A.shape)))
    from .linalg import svd
    k = min(int(q), x.shape[-1], x.shape[-2]) if q is not None else min(x.shape[-2:])
    u, s, vh = svd(x, full_matrices=False)
    return (_C.narrow(u, -1, 0, k), _C.narrow(s, -1, 0, k),
            _C.narrow(vh, -2, 0, k).transpose(-2, -1))


def pca_lowrank(A, q=None, center=True, niter=2):
    """svd_lowrank of A with each column's mean removed (center)."""
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    x = _C.sub(A, _C.mean(A, [-2], True)) if center else A
    return svd_lowrank(x, q, niter)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """num_samples category indices per row drawn with the row's weights (without replacement:
    each category at most once, by exponential races), from mpsim's counter-based stream."""
    if input.dim() not in (1, 2):
        raise _C.ShapeError("[multinomial] prob_dist must be 1 or 2 dim")
    w = _wide(input)
    rows = w if w.dim() == 2 else w.unsqueeze(0)
    k = rows.shape[-1]
    from ._forms import any as _any
    if bool(_any(_C.lt(rows, 0.0)).item()) or bool(_any(_C.isnan(rows)).item()):
        raise _C.InvalidArgumentError("[multinomial] probability tensor contains either inf, "
                                      "nan or element < 0")
    if not replacement and num_samples > k:
        raise _C.InvalidArgumentError("[multinomial] cannot sample n_sample > prob_dist.size(-1) "
                                      "samples without replacement")
    n = rows.shape[0]
    if replacement:
        cdf = _C.cumsum(rows, -1)
        total = _C.narrow(cdf, -1, k - 1, 1)
        u = _C.mul(_C.rand([n, num_samples], _F64, "cpu"), total)
        idx = _C.searchsorted(cdf, u, right=True)
        idx = _C.clamp(idx, None, k - 1)
    else:
        e = _C.neg(_C.log(_C.rand([n, k], _F64, "cpu")))
        keys = _C.div(e, rows)
        idx = _C.sort(keys, -1)[1]
        idx = _C.narrow(idx, -1, 0, num_samples)
    if input.dim() == 1:
        idx = idx.squeeze(0)
    return idx.to(_C.int64).to(input.device)


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """The 'sum', 'mean', 'max', 'min' or 'prod' of consecutive segments of data along axis
    (lengths or offsets), an empty segment giving initial (or the reduction's NaN/identity),
    in float64."""
    if reduce not in ("sum", "mean", "max", "min", "prod"):
        raise _C.InvalidArgumentError(f"[segment_reduce] reduce argument {reduce!r} is not "
                                      "supported")
    x = np.moveaxis(_wide(data).numpy(), axis, -1) if data.dim() else _wide(data).numpy()
    if lengths is not None:
        lens = lengths.to("cpu").to(_C.int64).numpy()
    elif offsets is not None:
        off = offsets.to("cpu").to(_C.int64).numpy()
        lens = np.diff(off, axis=-1)
    else:
        raise _C.InvalidArgumentError("[segment_reduce] lengths or offsets is required")
    if np.any(lens < 0):
        raise _C.InvalidArgumentError("[segment_reduce] lengths contains negative value!")
    if lens.ndim > 1:  # one row of lengths per index of the dims before axis (torch's)
        data_np = _wide(data).numpy()
        from . import tensor
        rows = []
        for idx in np.ndindex(*lens.shape[:-1]):
            sub = tensor(np.ascontiguousarray(data_np[idx]))
            rows.append(segment_reduce(sub, reduce, lengths=tensor(lens[idx]),
                                       axis=axis - len(idx), unsafe=unsafe,
                                       initial=initial).to(_F64).numpy())
        res = np.stack(rows).reshape(lens.shape[:-1] + rows[0].shape)
        return tensor(np.ascontiguousarray(res)).to(data.dtype).to(data.device)
    lead = x.shape[:-1]
    out = []
    start = 0
    segs = lens
    if not unsafe and int(segs.sum()) != x.shape[-1]:  # unsafe: torch skips the check
        raise _C.InvalidArgumentError("[segment_reduce] Expected all rows of lengths along "
                                      "axis to sum to data.size(lengths.dim()-1)")
    identity = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf, "mean": np.nan}
    for length in segs:
        seg = x[..., start:start + length]
        start += length
        if length == 0:
            out.append(np.full(lead, identity[reduce] if initial is None else float(initial)))
            continue
        if initial is not None and reduce != "mean":
            seg = np.concatenate([seg, np.full(lead + (1,), float(initial))], -1)
        fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
              "mean": np.mean}[reduce]
        with np.errstate(invalid="ignore"):
            if reduce == "mean" and initial is not None:  # torch's: (initial + sum) / length
                r = (seg.sum(-1) + float(initial)) / length
            else:
                r = fn(seg, axis=-1)
        if reduce in ("max", "min"):
            r = np.where(np.isnan(seg).any(-1), np.nan, r)
        out.append(r)
    res = np.moveaxis(np.stack(out, -1), -1, axis) if data.dim() else np.stack(out)
    from . import tensor
    return tensor(np.ascontiguousarray(res)).to(data.dtype).to(data.device)


def _bin_of(edges, x):
    """The bin of each x (inside [edges[0], edges[-1]]) as torch's histogram kernel finds it:
    std::upper_bound's binary search over the edges, minus one, the last edge in the last bin.
    For edges that are not increasing (torch does not check) the search's own steps decide,
    so they are libstdc++'s: halve the range, go right past every edge <= x."""
    first = np.zeros(x.shape, np.int64)
    count = np.full(x.shape, len(edges), np.int64)
    while (count > 0).any():
        half = count >> 1
        middle = first + half
        right = (count > 0) & ~(x < edges[np.minimum(middle, len(edges) - 1)])
        first = np.where(right, middle + 1, first)
        count = np.where(count > 0, np.where(right, count - half - 1, half), 0)
    pos = first - 1
    return np.where(pos == len(edges) - 1, pos - 1, pos)


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """The D-dimensional histogram of the rows of input [*, D] (NumPy's histogramdd in float64:
    bins a count, counts per dim or edge tensors), as (hist, bin_edges)."""
    import collections
    result = collections.namedtuple("histogramdd", ["hist", "bin_edges"])
    x = _wide(input).numpy()
    d = x.shape[-1]
    pts = x.reshape(-1, d)
    if isinstance(bins, _C.Tensor):
        bins = int(bins.item())
    if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], _C.Tensor):
        b = [_wide(e).numpy() for e in bins]
    else:
        b = bins
    rng = None
    if range is not None:
        r = list(range)
        rng = [(r[2 * i], r[2 * i + 1]) for i in builtins_range(d)]
    w = None if weight is None else _wide(weight).numpy().reshape(-1)
    if rng is None and pts.shape[0] == 0:
        rng = [(0.0, 1.0)] * d
    if isinstance(b, list) and b and isinstance(b[0], np.ndarray):  # edges, in any order
        edges = b
        shape = tuple(max(len(e) - 1, 0) for e in edges)
        hist = np.zeros(shape)
        ok = np.ones(pts.shape[0], bool)
        pos = []
        for k, e in enumerate(edges):
            nb = len(e) - 1
            col = pts[:, k]
            p = _bin_of(e, col)
            ok &= (col >= e[0]) & (col <= e[-1]) & (p >= 0) & (p < nb)
            pos.append(p)
        if all(shape):
            np.add.at(hist, tuple(p[ok] for p in pos), 1.0 if w is None else w[ok])
        if density:
            widths = np.ones(shape)
            for k, e in enumerate(edges):
                s = [1] * d
                s[k] = shape[k]
                widths = widths * np.diff(e).reshape(s)
            with np.errstate(invalid="ignore", divide="ignore"):
                hist = hist / (hist.sum() * widths)
    else:
        hist, edges = np.histogramdd(pts, bins=b, range=rng, weights=w, density=density)
    from . import tensor
    dt = input.dtype
    return result(tensor(hist).to(dt).to(input.device),
                  [tensor(e).to(dt).to(input.device) for e in edges])


builtins_range = __builtins__["range"] if isinstance(__builtins__, dict) else \
    __builtins__.range

def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (torch's rules), as a tuple."""
    dims = [tuple([int(s)]) if isinstance(s, int) else tuple(int(v) for v in s)
            for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*dims))
    except ValueError as err:
        raise _C.ShapeError(f"[broadcast_shapes] {err}") from None


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = list(broadcast_shapes(*(tuple(t.shape) for t in tensors)))
    return tuple(t.broadcast_to(shape) for t in tensors)


def constant_pad_nd(input, pad, value=0):
    """pad with value (negative pads crop), as nn.functional.pad's 'constant' mode."""
    return _C.pad(input, list(pad), "constant", float(value))


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the flattened input: bins equal-width bins over range (default the
    input's min and max) or the given edges; counts exact, edges and densities in float64,
    rounded once (NumPy's histogram)."""
    import collections
    result = collections.namedtuple("histogram", ["hist", "bin_edges"])
    if not input.dtype.is_floating_point:
        raise _C.DTypeError(f"[histogram] expected a floating point input, got {input.dtype}")
    x = _wide(input).numpy().reshape(-1)
    b = _wide(bins).numpy() if isinstance(bins, _C.Tensor) else int(bins)
    w = None if weight is None else _wide(weight).numpy().reshape(-1)
    rng = tuple(range) if range is not None else None
    if rng is None and not isinstance(b, np.ndarray):
        rng = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
    if rng is not None and rng[0] == rng[1]:
        rng = (rng[0] - 0.5, rng[1] + 0.5) if x.size or range is None else rng
        if range is None and x.size == 0:
            rng = (0.0, 1.0)
    if isinstance(b, np.ndarray):  # given edges, searched as torch does (any order)
        edges = b
        nb = max(len(edges) - 1, 0)
        hist = np.zeros(nb)
        if nb and x.size:
            inside = (x >= edges[0]) & (x <= edges[-1])
            pos = _bin_of(edges, x)
            ok = inside & (pos >= 0) & (pos < nb)
            np.add.at(hist, pos[ok], 1.0 if w is None else w[ok])
        if density:  # torch divides even a zero total (NaN)
            with np.errstate(invalid="ignore", divide="ignore"):
                hist = hist / (hist.sum() * np.diff(edges))
    else:
        try:
            hist, edges = np.histogram(x, bins=b, range=rng, weights=w, density=density)
        except ValueError as err:
            raise _C.InvalidArgumentError(f"[histogram] {err}") from None
    from . import tensor
    return result(tensor(hist.astype(np.float64)).to(input.dtype).to(input.device),
                  tensor(edges).to(input.dtype).to(input.device))


def slice(input, dim=0, start=None, end=None, step=1):
    """aten.slice: input[..., start:end:step, ...] along dim (a view)."""
    d = dim % max(input.dim(), 1)
    index = [builtins_slice(None)] * input.dim()
    index[d] = builtins_slice(start, end, step)
    return input[tuple(index)]


def unfold(input, dimension, size, step):
    """Tensor.unfold: every slice of `size` elements along dimension, `step` apart, as a new
    last dim (a view)."""
    if input.dim() == 0:
        if size > 1:
            raise _C.ShapeError(f"[unfold] maximum size for tensor at dimension 0 is 1 but "
                                f"size is {size}")
        return input.reshape([1])
    d = dimension % input.dim()
    length = input.shape[d]
    if size > length:
        raise _C.ShapeError(f"[unfold] maximum size for tensor at dimension {d} is {length} "
                            f"but size is {size}")
    if step <= 0:
        raise _C.InvalidArgumentError(f"[unfold] step is {step} but must be > 0")
    sizes = list(input.shape)
    strides = list(input.stride())
    sizes[d] = (length - size) // step + 1
    strides[d] = strides[d] * step
    return _C.as_strided(input, sizes + [size], strides + [input.stride()[d]],
                         input.storage_offset())


builtins_slice = __builtins__["slice"] if isinstance(__builtins__, dict) else \
    __builtins__.slice

_METHODS = ["addcmul", "addcdiv", "lerp", "float_power", "ldexp", "frexp", "isclose",
            "allclose", "equal", "nansum", "nanmean", "aminmax", "dist", "renorm", "quantile",
            "nanquantile", "mvlgamma", "angle", "resolve_conj", "resolve_neg",
            "conj_physical", "sum_to_size", "view_as", "narrow_copy", "zero_", "fill_", "mode",
            "uniform_", "unfold", "histogram", "cov", "corrcoef"]

__all__ = ["addcmul", "addcdiv", "lerp", "float_power", "ldexp", "frexp", "isclose",
           "allclose", "equal", "nansum", "nanmean", "aminmax", "logspace", "trapezoid",
           "trapz", "cumulative_trapezoid", "dist", "cov", "corrcoef", "renorm", "quantile",
           "nanquantile", "mvlgamma", "einsum", "tensordot", "angle",
           "resolve_conj", "resolve_neg", "conj_physical", "sum_to_size", "view_as",
           "narrow_copy", "fill", "zero_", "fill_", "mode", "native_layer_norm",
           "native_batch_norm", "gradient", "svd_lowrank", "pca_lowrank", "multinomial",
           "segment_reduce", "histogramdd", "broadcast_shapes", "broadcast_tensors",
           "constant_pad_nd", "histogram", "slice"]
