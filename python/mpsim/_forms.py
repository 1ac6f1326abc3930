"""torch's call forms of ops that mpsim declares once (docs/ops.md, "Python forms"): overloads
(max(x), max(x, dim), max(x, other)), torch's argument spellings (var's unbiased, clamp_min's
tensor bound), and reductions composed of other ops. Each runs on any device the ops it calls
run on."""

import builtins
import collections

from . import _C

_Pair = {name: collections.namedtuple(name, ["values", "indices"])
         for name in ("max", "min")}
_MeanPair = collections.namedtuple("std_mean", ["std", "mean"])
_MedianPair = {name: collections.namedtuple(name, ["values", "indices"])
               for name in ("median", "nanmedian")}


def _dims(dim):
    if dim is None:
        return None
    return list(dim) if isinstance(dim, (list, tuple)) else [dim]


def _extremum(name, reduce, arg, pairwise):
    def op(input, dim=None, keepdim=False, *, other=None):
        if isinstance(dim, _C.Tensor):  # max(input, other)
            return pairwise(input, dim)
        if other is not None:
            return pairwise(input, other)
        if dim is None:
            return reduce(input)
        values = reduce(input, [dim], keepdim)
        return _Pair[name](values, arg(input, dim, keepdim))
    op.__name__ = name
    op.__doc__ = (f"torch.{name}: the {name}imum of every element; with dim, ({name} values, their "
                  f"first indices) along dim; with another tensor, the elementwise {name}imum "
                  f"(NaN propagates, as torch).")
    return op


max = _extremum("max", _C.amax, _C.argmax, _C.maximum)
min = _extremum("min", _C.amin, _C.argmin, _C.minimum)


def _count(input, dim, keepdim, nonzero):
    hits = _C.ne(input, 0) if nonzero else _C.eq(input, 0)
    return _C.sum(hits, _dims(dim), keepdim)


def _truth(result, input):
    """torch keeps uint8 for any/all of a uint8 tensor (0 or 1); bool for every other dtype."""
    return result.to(_C.uint8) if input.dtype == _C.uint8 else result


def any(input, dim=None, keepdim=False):
    """Whether any element (along dim) is nonzero (NaN counts): a bool tensor (uint8 for a
    uint8 input, as torch)."""
    return _truth(_C.ne(_count(input, dim, keepdim, True), 0), input)


def all(input, dim=None, keepdim=False):
    """Whether every element (along dim) is nonzero (NaN counts): a bool tensor (uint8 for a
    uint8 input, as torch)."""
    return _truth(_C.eq(_count(input, dim, keepdim, False), 0), input)


def count_nonzero(input, dim=None):
    """The number of nonzero elements (along dims): int64."""
    return _count(input, dim, False, True)


def clamp_min(input, min):
    """max(input, min); min a number or a tensor (broadcast)."""
    if isinstance(min, _C.Tensor):
        return _C.clamp(input, min, None)
    return _C.clamp_min(input, min)


def clamp_max(input, max):
    """min(input, max); max a number or a tensor (broadcast)."""
    if isinstance(max, _C.Tensor):
        return _C.clamp(input, None, max)
    return _C.clamp_max(input, max)


def _correction(name, dim, unbiased, correction):
    if isinstance(dim, bool):  # var(x, unbiased)
        if unbiased is not None:
            raise _C.SignatureError(f"[{name}] unbiased given twice")
        unbiased, dim = dim, None
    if unbiased is not None and correction is not None:
        raise _C.SignatureError(f"[{name}] takes unbiased or correction, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def _moment(name, base):
    def op(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        dim, correction = _correction(name, dim, unbiased, correction)
        return base(input, _dims(dim), correction, keepdim)
    op.__name__ = name
    op.__doc__ = (f"torch.{name} with either spelling: unbiased (True: correction 1, False: 0, "
                  f"also as var(x, unbiased)) or correction.")
    return op


var = _moment("var", _C.var)
std = _moment("std", _C.std)
var_mean = _moment("var_mean", _C.var_mean)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) along dims: std's and mean's golden results."""
    dim, correction = _correction("std_mean", dim, unbiased, correction)
    return _MeanPair(_C.std(input, _dims(dim), correction, keepdim),
                     _C.mean(input, _dims(dim), keepdim))


def signbit(input):
    """Whether the sign bit is set (true for -0.0 and for a NaN with its sign bit): bool."""
    one = _C.ones_like(input, "float32" if not _floating(input) else None)
    return _C.lt(_C.copysign(one, input), 0)


def _floating(t):
    return str(t.dtype).replace("mpsim.", "") in ("float16", "bfloat16", "float32", "float64")


def sgn(input):
    """sign(input): the same for real dtypes."""
    return _C.sign(input)


def eye(n, m=None, *, dtype=None, device="cpu", requires_grad=False):
    """The n x m identity (ones on the diagonal), float32 unless dtype says otherwise."""
    if requires_grad:
        raise _C.UnsupportedError("[eye] requires_grad=True: mpsim has no autograd")
    m = n if m is None else m
    if n < 0 or m < 0:
        raise _C.InvalidArgumentError(f"[eye] n and m must be non-negative, got {n} and {m}")
    ones = _C.ones([n, m], dtype or "float32", device)
    return _C.triu(_C.tril(ones, 0), 0)


def _named_pair(op):
    """The op's (values, indices) as torch's named pair (x.values, x.indices)."""
    pair = collections.namedtuple(op.__name__, ["values", "indices"])

    def call(*args, **kwargs):
        return pair(*op(*args, **kwargs))
    call.__name__, call.__doc__ = op.__name__, op.__doc__
    return call


sort = _named_pair(_C.sort)
topk = _named_pair(_C.topk)
kthvalue = _named_pair(_C.kthvalue)
cummax = _named_pair(_C.cummax)
cummin = _named_pair(_C.cummin)


def _median(name, skip_nan):
    def op(input, dim=None, keepdim=False):
        x = _C.reshape(input, [-1]) if dim is None else input
        d = 0 if dim is None else dim
        scalar = x.dim() == 0
        if scalar:
            x, d = _C.reshape(x, [1]), 0
        n = x.shape[d]
        if n == 0:
            raise _C.InvalidArgumentError(f"[{name}] expected a non-empty input along dim")
        values, indices = _C.sort(x, d)  # ascending, NaN last
        nans = _C.sum(_C.ne(x, x), [d], True)  # NaN != NaN
        numbers = _C.sub(_C.full_like(nans, n), nans)
        if skip_nan:  # the lower median of the numbers; all NaN: the first NaN
            pos = _C.div(_C.clamp_min(_C.sub(numbers, 1), 0), 2, rounding_mode="floor")
        else:  # a NaN in the row gives the first NaN
            lower = _C.div(_C.full_like(nans, n - 1), 2, rounding_mode="floor")
            pos = _C.where(_C.gt(nans, 0), numbers, lower)
        value = _C.gather(values, d, pos)
        index = _C.gather(indices, d, pos)
        if dim is None:
            return _C.reshape(value, [])
        if not keepdim or scalar:
            value, index = _C.squeeze(value, d), _C.squeeze(index, d)
        return _MedianPair[name](value, index)
    op.__name__ = name
    op.__doc__ = (f"torch.{name}: the lower median ({'NaN ignored' if skip_nan else 'NaN if any'})"
                  f"; with dim, (values, indices) along dim. From sort: exact.")
    return op


median = _median("median", False)
nanmedian = _median("nanmedian", True)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: p = 2 or 'fro' is mpsim's golden norm; other orders (a number, inf, -inf,
    0) are computed in float64 (on the cpu: MPS has no float64) and rounded once: sum(|x|^p)^(1/p),
    max |x|, min |x|, the count of nonzeros."""
    if p == "fro" or p == 2 or p == 2.0:
        out = _C.norm(input, 2.0, _dims(dim), keepdim)
        return out if dtype is None else out.to(dtype)
    if p == "nuc":  # the sum of the singular values (linalg.matrix_norm, in double)
        dims = _dims(dim) or [-2, -1]
        if len(dims) != 2:
            raise _C.InvalidArgumentError("[norm] the nuclear norm needs two dims")
        out = _C.linalg_matrix_norm(input, "nuc", dims, keepdim)
        return out if dtype is None else out.to(dtype)
    if isinstance(p, str):
        raise _C.InvalidArgumentError(f"[norm] p must be a number, 'fro' or 'nuc', got {p!r}")
    device = input.device
    x = _C.abs(input.to("cpu").to(_C.float64))
    dims = _dims(dim)
    if p == float("inf"):
        out = _C.amax(x, dims or [], keepdim)
    elif p == float("-inf"):
        out = _C.amin(x, dims or [], keepdim)
    elif p == 0:
        out = _C.sum(_C.ne(x, 0).to(_C.float64), dims, keepdim)
    else:
        out = _C.pow(_C.sum(_C.pow(x, float(p)), dims, keepdim), 1.0 / float(p))
    return out.to(dtype or input.dtype).to(device)


def narrow(input, dim, start, length):
    """start may be a 0-dim integer tensor, as torch's."""
    if isinstance(start, _C.Tensor):
        start = int(start.item())
    return _C.narrow(input, dim, start, length)


def normal(mean=0.0, std=1.0, size=None, *, dtype=None, device="cpu", generator=None):
    """torch.normal: mean and std numbers (with size) or tensors (broadcast): mean + std z with
    z from mpsim's normal stream."""
    if isinstance(mean, _C.Tensor) or isinstance(std, _C.Tensor):
        ref = mean if isinstance(mean, _C.Tensor) else std
        shape = list(_C.add(_C.mul(_C.zeros_like(ref), 0), _C.mul(std, 0) if isinstance(
            std, _C.Tensor) else 0).shape)
        z = _C.randn(shape, dtype or ref.dtype, ref.device)
        return _C.add(_C.mul(z, std), mean)
    return _C.normal(mean, std, list(size), dtype, device)


def masked_fill(input, mask, value):
    """value where mask is true, else input (broadcast together, as torch's out-of-place
    masked_fill); input's dtype."""
    if isinstance(value, _C.Tensor):
        if value.dim() != 0:
            raise _C.InvalidArgumentError(
                f"[masked_fill] only supports a 0-dimensional value tensor, but got a tensor "
                f"with {value.dim()} dimension(s)")
        value = value.item()
    return _C.where(mask, value, input).to(input.dtype)


def take(input, index):
    """input's elements, read as one flat row, at index (negative indices count from the
    end); index's shape."""
    flat = _C.reshape(input, [-1])
    idx = _C.reshape(index, [-1])
    idx = _C.where(_C.lt(idx, 0), _C.add(idx, flat.shape[0]), idx)
    return _C.reshape(_C.index_select(flat, 0, idx), list(index.shape))


def nonzero(input, *, as_tuple=False):
    """[count, ndim] int64 coordinates of the nonzero elements in row-major order (NaN is
    nonzero); as_tuple: one 1-d tensor per dim (a 0-d input counts as 1-d)."""
    coords = _C.nonzero(input)
    if not as_tuple:
        return coords
    if input.dim() == 0:
        coords = _C.nonzero(_C.reshape(input, [1]))
    return tuple(_C.select(coords, 1, k) for k in range(coords.shape[1]))


def _unique_form(name, op):
    def call(input, *args, return_inverse=False, return_counts=False, dim=None, **kwargs):
        values, inverse, counts = op(input, dim)
        out = (values,) + ((inverse,) if return_inverse else ()) + \
            ((counts,) if return_counts else ())
        return out[0] if len(out) == 1 else out
    call.__name__, call.__doc__ = name, op.__doc__
    return call


# torch's sorted=False leaves the order unspecified: mpsim's unique is always sorted.
unique = _unique_form("unique", _C.unique)
unique_consecutive = _unique_form("unique_consecutive", _C.unique_consecutive)


def _sections(indices_or_sections):
    """A tensor of split indices (torch's form) as an int (0-d) or a list (1-d)."""
    if isinstance(indices_or_sections, _C.Tensor):
        if indices_or_sections.dtype not in (_C.int64, _C.int32):
            raise _C.DTypeError("[tensor_split] indices_or_sections must be an integer tensor, "
                                f"got {indices_or_sections.dtype}")
        values = indices_or_sections.tolist()
        return values if indices_or_sections.dim() > 0 else int(values)
    return indices_or_sections


def tensor_split(input, indices_or_sections, dim=0):
    """views along dim: n sections (an int or a 0-d tensor) or cut at the given indices."""
    return _C.tensor_split(input, _sections(indices_or_sections), dim)


def _split_form(name, op):
    def call(input, indices_or_sections):
        return op(input, _sections(indices_or_sections))
    call.__name__, call.__doc__ = name, op.__doc__
    return call


hsplit = _split_form("hsplit", _C.hsplit)
vsplit = _split_form("vsplit", _C.vsplit)
dsplit = _split_form("dsplit", _C.dsplit)


def _inplace(name, op):
    """torch's in-place method: the op's result written into self (views included)."""
    def method(self, *args, **kwargs):
        self.copy_(op(self, *args, **kwargs))
        return self
    method.__name__ = name
    method.__doc__ = f"{name[:-1]} written into self; returns self."
    return method


index_add_ = _inplace("index_add_", _C.index_add)
index_copy_ = _inplace("index_copy_", _C.index_copy)
index_fill_ = _inplace("index_fill_", _C.index_fill)
index_reduce_ = _inplace("index_reduce_", _C.index_reduce)
index_put_ = _inplace("index_put_", _C.index_put)
scatter_ = _inplace("scatter_", _C.scatter)
scatter_add_ = _inplace("scatter_add_", _C.scatter_add)
scatter_reduce_ = _inplace("scatter_reduce_", _C.scatter_reduce)
masked_scatter_ = _inplace("masked_scatter_", _C.masked_scatter)
put_ = _inplace("put_", _C.put)
masked_fill_ = _inplace("masked_fill_", masked_fill)
_INPLACE = ["index_add_", "index_copy_", "index_fill_", "index_reduce_", "index_put_", "scatter_",
            "scatter_add_", "scatter_reduce_", "masked_scatter_", "put_", "masked_fill_"]


def take_along_dim(input, indices, dim=None):
    """gather along dim with input and indices broadcast against each other elsewhere; no dim:
    take of the flattened input."""
    if dim is None:
        return take(_C.reshape(input, [-1]), _C.reshape(indices, [-1]))
    if input.dim() != indices.dim():
        raise _C.InvalidArgumentError(
            "[take_along_dim] input and indices should have the same number of dimensions, but "
            f"got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    d = dim % input.dim()
    sizes = [builtins.max(a, b) for a, b in zip(input.shape, indices.shape)]
    shape_x = [input.shape[k] if k == d else sizes[k] for k in range(input.dim())]
    shape_i = [indices.shape[k] if k == d else sizes[k] for k in range(input.dim())]
    return _C.gather(_C.expand(input, shape_x), d, _C.expand(indices, shape_i))


# ---- factories with torch's keywords (requires_grad only as False: mpsim has no autograd) ----

def _size(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        return list(size[0])
    return list(size)


def _no_grad(name, requires_grad):
    if requires_grad:
        raise _C.UnsupportedError(f"[{name}] requires_grad=True: mpsim has no autograd")


def _placed(t, device):
    return t if device is None else t.to(device)


def empty(*size, dtype=None, device="cpu", requires_grad=False, layout=None, pin_memory=False,
          memory_format=None):
    """A tensor of the size whose values are unspecified (mpsim gives zeros)."""
    _no_grad("empty", requires_grad)
    return _C.zeros(_size(size), dtype, device)


def randn(*size, dtype=None, device="cpu", requires_grad=False, generator=None, layout=None,
          pin_memory=False):
    _no_grad("randn", requires_grad)
    if generator is not None:
        raise _C.UnsupportedError("[randn] generator: mpsim's stream is mpsim.manual_seed's")
    return _C.randn(_size(size), dtype, device)


def _like(name, make):
    def op(input, dtype=None, *, device=None, requires_grad=False, layout=None,
           pin_memory=False, memory_format=None):
        _no_grad(name, requires_grad)
        return _placed(make(input, dtype), device)
    op.__name__ = name
    op.__doc__ = f"torch.{name}: input's shape, its dtype unless given, on device (input's)."
    return op


empty_like = _like("empty_like", lambda x, d: _C.zeros_like(x, d))
zeros_like = _like("zeros_like", lambda x, d: _C.zeros_like(x, d))
ones_like = _like("ones_like", lambda x, d: _C.ones_like(x, d))
rand_like = _like("rand_like", lambda x, d: _C.rand(list(x.shape), d or x.dtype, x.device))
randn_like = _like("randn_like", lambda x, d: _C.randn(list(x.shape), d or x.dtype, x.device))


def full_like(input, fill_value, dtype=None, *, device=None, requires_grad=False, layout=None,
              pin_memory=False, memory_format=None):
    _no_grad("full_like", requires_grad)
    return _placed(_C.full_like(input, fill_value, dtype), device)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 layout=None, pin_memory=False, memory_format=None):
    """randint_like(input, high) or (input, low, high): integers in [low, high) in input's
    shape and dtype (unless given)."""
    _no_grad("randint_like", requires_grad)
    if high is None:
        low, high = 0, low
    return _placed(_C.randint(int(low), int(high), list(input.shape), dtype or input.dtype,
                              input.device), device)


def _new(name, make):
    def method(self, *args, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
        _no_grad(name, requires_grad)
        return make(self, args, dtype or self.dtype, device or self.device)
    method.__name__ = name
    method.__doc__ = f"Tensor.{name}: a new tensor of self's dtype and device unless given."
    return method


new_zeros = _new("new_zeros", lambda x, a, d, dev: _C.zeros(_size(a), d, dev))
new_ones = _new("new_ones", lambda x, a, d, dev: _C.ones(_size(a), d, dev))
new_empty = _new("new_empty", lambda x, a, d, dev: _C.zeros(_size(a), d, dev))
new_full = _new("new_full", lambda x, a, d, dev: _C.full(list(a[0]), a[1], d, dev))
new_empty_strided = _new("new_empty_strided", lambda x, a, d, dev: _C.zeros(list(a[0]), d, dev))

# Tensor methods among the above (the factories of no tensor are module functions only)
_METHODS = ["masked_fill", "take", "nonzero", "unique", "unique_consecutive", "tensor_split",
            "hsplit", "vsplit", "dsplit", "take_along_dim", "norm", "narrow", "sort", "topk",
            "kthvalue", "cummax", "cummin", "median", "nanmedian", "max", "min", "any", "all",
            "count_nonzero", "clamp_min", "clamp_max", "var", "std", "var_mean", "std_mean",
            "signbit", "sgn", "new_zeros", "new_ones", "new_empty", "new_full",
            "new_empty_strided"]
_METHODS += _INPLACE

__all__ = ["masked_fill", "take", "nonzero", "unique", "unique_consecutive", "tensor_split",
           "hsplit", "vsplit", "dsplit", "take_along_dim", "norm", "narrow", "normal", "empty",
           "randn", "empty_like", "zeros_like", "ones_like", "rand_like", "randn_like",
           "full_like", "randint_like", "sort", "topk", "kthvalue", "cummax", "cummin", "median",
           "nanmedian", "max", "min", "any", "all", "count_nonzero", "clamp_min", "clamp_max",
           "var", "std", "var_mean", "std_mean", "signbit", "sgn", "eye"]
