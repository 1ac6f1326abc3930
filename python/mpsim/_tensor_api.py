"""torch's everyday Tensor API on mpsim's tensors (docs/python.md, "Tensor methods and
operators"): the in-place variants (x.add_(y); x += 1 writes through a view into its base),
the bitwise functions and operators (&, |, ^, ~, <<, >>), advanced indexing as torch does it
(boolean masks, several index tensors, negative indices in lists, x[[]], x[True], assignment
through an index list), 3-d x.T with torch 1.13's warning, detach, is_floating_point,
repeat(*sizes), to("float16"), and torch's bool tensors from DLPack (torch 1.13 does not
export bool: they come through the array interface). Installed on mpsim.Tensor by install()."""

import warnings

import numpy as np

from . import _C

# torch.Tensor's in-place methods whose out-of-place form mpsim has (same name without the
# underscore): each computes that form and writes the result into self (copy_, which writes
# through views), after torch's checks (the result must have self's shape, and a floating
# result cannot go into an integer tensor). Methods that change metadata in place (t_,
# squeeze_, resize_, ...) are not among them.
INPLACE = """abs_ absolute_ acos_ acosh_ add_ addbmm_ addcdiv_ addcmul_ addmm_ addmv_ addr_
arccos_ arccosh_ arcsin_ arcsinh_ arctan2_ arctan_ arctanh_ asin_ asinh_ atan2_ atan_ atanh_
baddbmm_ bitwise_and_ bitwise_left_shift_ bitwise_not_ bitwise_or_ bitwise_right_shift_
bitwise_xor_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ conj_physical_ copysign_ cos_ cosh_
cumprod_ cumsum_ deg2rad_ digamma_ div_ divide_ eq_ erf_ erfc_ erfinv_ exp2_ exp_ expm1_ fix_
float_power_ floor_ floor_divide_ fmod_ frac_ gcd_ ge_ greater_ greater_equal_ gt_ heaviside_
hypot_ i0_ igamma_ igammac_ lcm_ ldexp_ le_ lerp_ less_ less_equal_ lgamma_ log10_ log1p_ log2_
log_ logical_and_ logical_not_ logical_or_ logical_xor_ logit_ lt_ mul_ multiply_ mvlgamma_
nan_to_num_ ne_ neg_ negative_ nextafter_ not_equal_ polygamma_ pow_ rad2deg_ reciprocal_
relu_ remainder_ renorm_ round_ rsqrt_ sgn_ sigmoid_ sign_ sin_ sinc_ sinh_ sqrt_ square_ sub_
subtract_ tan_ tanh_ tril_ triu_ true_divide_ trunc_ xlogy_""".split()

_ALIASES = {"moveaxis": "movedim", "swapaxes": "transpose", "swapdims": "transpose",
            "unsafe_chunk": "chunk", "unsafe_split": "split", "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
            "arcsinh": "asinh", "arctan": "atan", "arctanh": "atanh", "arctan2": "atan2",
            "clip": "clamp", "divide": "div", "multiply": "mul", "negative": "neg",
            "subtract": "sub", "fix": "trunc", "greater": "gt", "greater_equal": "ge",
            "less": "lt", "less_equal": "le", "not_equal": "ne", "true_divide": "div"}


def _function(name):
    import mpsim
    name = _ALIASES.get(name, name)
    fn = getattr(mpsim, name, None)
    if fn is None:
        fn = getattr(mpsim.special, name, None)
    return fn


def _write(self, out, name):
    out_shape = tuple(out.shape)
    if out_shape != tuple(self.shape):
        raise _C.ShapeError(f"[{name}] output with shape {list(self.shape)} doesn't match the "
                            f"broadcast shape {list(out_shape)}")
    if out.dtype.is_floating_point and not self.dtype.is_floating_point:
        raise _C.DTypeError(f"[{name}] result type {out.dtype} can't be cast to the desired "
                            f"output type {self.dtype}")
    self.copy_(out)
    return self


def _inplace(name):
    base = name[:-1]

    def method(self, *args, **kwargs):
        fn = _function(base)
        if fn is None:
            raise _C.UnsupportedError(f"[{name}] mpsim has no {base}")
        if base == "polygamma":  # polygamma(n, x)
            return _write(self, fn(args[0], self), name)
        result, wrote = _call_into(self, _ALIASES.get(base, base), fn, self, *args, **kwargs)
        return self if wrote else _write(self, result, name)
    method.__name__ = name
    method.__doc__ = f"{base}, written into self (torch's in-place {name})."
    return method


# ---- Bitwise functions: exact, computed on the cpu with NumPy for integer and bool tensors.

def _int_operands(name, a, b):
    for v in (a, b):
        if isinstance(v, _C.Tensor) and v.dtype.is_floating_point:
            raise _C.DTypeError(f"[{name}] is only implemented for integer and bool tensors, "
                                f"got {v.dtype}")
        if isinstance(v, float):
            raise _C.DTypeError(f"[{name}] is only implemented for integer and bool operands, "
                                "got a float")


def _to_numpy(v):
    return v.to("cpu").numpy() if isinstance(v, _C.Tensor) else v


def _bitwise(name, op):
    def fn(input, other):
        _int_operands(name, input, other)
        ref = input if isinstance(input, _C.Tensor) else other
        a, b = _to_numpy(input), _to_numpy(other)
        dtype = np.result_type(*(x.dtype if isinstance(x, np.ndarray) else ref.numpy().dtype
                                 for x in (a, b)))
        if name.endswith("shift") and np.any(np.asarray(b) < 0):
            r = np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)), dtype)
        else:
            r = op(np.asarray(a, dtype), np.asarray(b, dtype))
        from . import tensor
        return tensor(np.ascontiguousarray(r).astype(dtype)).to(ref.device)
    fn.__name__ = name
    fn.__doc__ = f"torch.{name}: exact, on integer and bool tensors."
    return fn


def _shift(op):
    def shifted(a, b):
        bits = a.dtype.itemsize * 8
        with np.errstate(over="ignore"):
            r = op(a, np.minimum(b, bits - 1).astype(a.dtype))
        if op is np.left_shift:
            return np.where(b >= bits, 0, r)
        return np.where(b >= bits, np.where(a < 0, -1, 0), r)
    return shifted


bitwise_and = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", _shift(np.left_shift))
bitwise_right_shift = _bitwise("bitwise_right_shift", _shift(np.right_shift))
gcd = _bitwise("gcd", np.gcd)
lcm = _bitwise("lcm", np.lcm)


def bitwise_not(input):
    """~input: exact, on integer and bool tensors."""
    _int_operands("bitwise_not", input, 0)
    from . import tensor
    a = input.to("cpu").numpy()
    return tensor(np.logical_not(a) if a.dtype == bool else np.invert(a)).to(input.device)


BITWISE = {"bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
           "bitwise_not": bitwise_not, "bitwise_left_shift": bitwise_left_shift,
           "bitwise_right_shift": bitwise_right_shift, "gcd": gcd, "lcm": lcm}


# ---- Advanced indexing.

def _is_advanced(part):
    return isinstance(part, (list, np.ndarray, bool, _C.Tensor))


def _numpy_key(key):
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for p in parts:
        if isinstance(p, _C.Tensor):
            a = p.to("cpu").numpy()
            if a.dtype != bool and not np.issubdtype(a.dtype, np.integer):
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            out.append(a)
        elif isinstance(p, list):
            a = np.asarray([q.to("cpu").numpy() if isinstance(q, _C.Tensor) else q for q in p])
            out.append(a.astype(np.int64) if a.size == 0 else a)
        else:
            out.append(p)
    return tuple(out)


def _positions(self, key):
    """The flat positions (as if self were contiguous) that key selects, shaped as the
    result: NumPy's advanced indexing, which is torch's."""
    shape = tuple(self.shape)
    numel = int(np.prod(shape)) if shape else 1
    try:
        return np.arange(numel, dtype=np.int64).reshape(shape)[_numpy_key(key)]
    except IndexError as err:
        raise IndexError(f"[index] {err}") from None


def _as_tuple(key):
    """torch's (NumPy's former) rule: a list holding a slice, Ellipsis, None or a sequence is
    the tuple of its items (x[[slice(0, 3), 1]] is x[0:3, 1])."""
    if isinstance(key, list) and any(
            p is None or p is Ellipsis or isinstance(p, (slice, list, tuple, np.ndarray,
                                                         _C.Tensor)) for p in key):
        return tuple(key)
    return key


def _advanced(key):
    parts = key if isinstance(key, tuple) else (key,)
    return any(_is_advanced(p) for p in parts)


def _call_into(out, op, fn, *args, **kwargs):
    """(fn(*args, **kwargs), wrote): an elementwise op of the C++ registry named `op` writes its
    result straight into out where out has the result's shape, dtype and layout and may be
    written while the arguments are read (Note [out destination], core/ops.cc); wrote says it
    did. Any other function, or out that does not qualify: the result, for the caller to copy."""
    target = getattr(fn, "__wrapped__", fn)
    if isinstance(out, _C.Tensor) and isinstance(target, type(_C.exp)):
        return _C._call_into(out, op, target, *args, **kwargs)
    return fn(*args, **kwargs), False


def _with_out(fn, op):
    """fn with torch's out=: the result (or each of a tuple's) written into out, which must
    have the result's shape (mpsim does not resize a tensor in place) and takes its values
    converted to out's dtype. An elementwise op writes into out directly where it can
    (_call_into), sparing the copy."""
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        result, wrote = _call_into(out, op, fn, *args, **kwargs)
        if wrote:
            return out
        name = getattr(fn, "__name__", "op")
        results = result if isinstance(result, tuple) else (result,)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if len(outs) != len(results):
            raise _C.InvalidArgumentError(f"[{name}] out= takes {len(results)} tensors, got "
                                          f"{len(outs)}")
        for o, r in zip(outs, results):
            if tuple(o.shape) != tuple(r.shape):
                raise _C.ShapeError(f"[{name}] out has shape {list(o.shape)} but the result "
                                    f"has shape {list(r.shape)} (mpsim does not resize out)")
            if r.dtype.is_floating_point and not o.dtype.is_floating_point:
                raise _C.DTypeError(f"[{name}] result type {r.dtype} can't be cast to the "
                                    f"desired output type {o.dtype}")
            o.copy_(r)
        return out
    call.__name__ = getattr(fn, "__name__", "op")
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn
    return call


def _sizes(name, sizes):
    shape = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    shape = tuple(shape)
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape):
        raise _C.SignatureError(f"[{name}] expects a sequence of ints, got {shape!r}")
    if any(n < 0 for n in shape):
        raise _C.InvalidArgumentError(f"[{name}] negative dimension in {list(shape)}")
    return tuple(int(n) for n in shape)


def resize_(self, *sizes, memory_format=None):
    """torch's Tensor.resize_: self keeps its shape when `sizes` is it; else it takes `sizes`
    with contiguous strides over its storage from its offset (the storage read as C-contiguous,
    ignoring self's strides, as torch's) where the storage reaches that far, and otherwise
    moves to new storage that starts with its elements in row-major order (the new ones are
    zero where torch leaves them uninitialised)."""
    import mpsim
    shape = _sizes("resize_", sizes)
    if shape == tuple(self.shape):
        return self
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    try:
        view = _C.as_strided(self, list(shape), strides, self.storage_offset())
    except _C.ShapeError:  # beyond the storage: new storage
        n = int(np.prod(shape, dtype=np.int64))
        view = mpsim.zeros(list(shape), dtype=self.dtype, device=self.device)
        keep = min(n, self.numel())
        if keep:
            view.reshape(-1)[:keep].copy_(self.reshape(-1)[:keep])
    if memory_format is not None:  # channels_last: NHWC strides
        view = view.to(memory_format=memory_format)
    return self.set_(view)


def resize_as_(self, the_template, memory_format=None):
    """resize_ to the_template's shape."""
    return resize_(self, tuple(the_template.shape), memory_format=memory_format)


def install(Tensor):
    """Adds the API above to mpsim.Tensor (called once by mpsim/__init__.py)."""
    import mpsim

    Tensor.resize_ = resize_
    Tensor.resize_as_ = resize_as_
    for name in INPLACE:
        if not hasattr(Tensor, name) and _function(name[:-1]) is not None:
            setattr(Tensor, name, _inplace(name))
    for name in ("pow", "float_power"):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, lambda self, e, _n=name: getattr(mpsim, _n)(self, e))

    for name, fn in BITWISE.items():
        setattr(Tensor, name, lambda self, *a, _f=fn: _f(self, *a))
        for inplace in (name + "_",):
            setattr(Tensor, inplace, _inplace(inplace))

    def _logical_or_bitwise(logical, bitwise):
        def op(self, other):
            if self.dtype == _C.bool and (isinstance(other, bool) or (
                    isinstance(other, _C.Tensor) and other.dtype == _C.bool)):
                return logical(self, other if isinstance(other, _C.Tensor) else
                               mpsim.full([], other, _C.bool, self.device))
            return bitwise(self, other)
        return op

    Tensor.__and__ = _logical_or_bitwise(mpsim.logical_and, bitwise_and)
    Tensor.__or__ = _logical_or_bitwise(mpsim.logical_or, bitwise_or)
    Tensor.__xor__ = _logical_or_bitwise(mpsim.logical_xor, bitwise_xor)
    Tensor.__rand__ = Tensor.__and__
    Tensor.__ror__ = Tensor.__or__
    Tensor.__rxor__ = Tensor.__xor__
    Tensor.__invert__ = lambda self: bitwise_not(self)
    Tensor.__lshift__ = lambda self, other: bitwise_left_shift(self, other)
    Tensor.__rshift__ = lambda self, other: bitwise_right_shift(self, other)
    Tensor.__rlshift__ = lambda self, other: bitwise_left_shift(other, self)
    Tensor.__rrshift__ = lambda self, other: bitwise_right_shift(other, self)

    # x += y, -=, *=, /=: the op writes into x where it can (_call_into), as x.add_(y) does.
    direct = {"__iadd__": "add", "__isub__": "sub", "__imul__": "mul", "__itruediv__": "div"}

    def _iop(op, name):
        def method(self, other):
            if name in direct:
                result, wrote = _call_into(self, direct[name], getattr(_C, direct[name]),
                                           self, other)
                return self if wrote else _write(self, result, name)
            return _write(self, op(self, other), name)
        return method
    for dunder, op in (("__iadd__", lambda a, b: a + b), ("__isub__", lambda a, b: a - b),
                       ("__imul__", lambda a, b: a * b), ("__itruediv__", lambda a, b: a / b),
                       ("__ifloordiv__", lambda a, b: a // b), ("__imod__", lambda a, b: a % b),
                       ("__ipow__", lambda a, b: a ** b), ("__iand__", lambda a, b: a & b),
                       ("__ior__", lambda a, b: a | b), ("__ixor__", lambda a, b: a ^ b),
                       ("__ilshift__", lambda a, b: a << b),
                       ("__irshift__", lambda a, b: a >> b),
                       ("__imatmul__", lambda a, b: a @ b)):
        setattr(Tensor, dunder, _iop(op, dunder))

    basic_get, basic_set = Tensor.__getitem__, Tensor.__setitem__

    def getitem(self, key):
        key = _as_tuple(key)
        if not _advanced(key):
            return basic_get(self, key)
        pos = _positions(self, key)
        from . import tensor
        flat = self.reshape([-1])
        index = tensor(pos.reshape(-1)).to(self.device)
        return mpsim.take(flat, index).reshape(list(pos.shape))

    def setitem(self, key, value):
        key = _as_tuple(key)
        if not _advanced(key):
            return basic_set(self, key, value)
        pos = _positions(self, key)
        from . import tensor
        if isinstance(value, _C.Tensor):
            v = value.to(self.dtype).to(self.device).broadcast_to(list(pos.shape))
        else:
            v = mpsim.full(list(pos.shape), value, self.dtype, self.device)
        if pos.size:
            self.put_(tensor(pos.reshape(-1)).to(self.device), v.reshape([-1]))
        return None

    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem

    def transpose_all(self):
        if self.dim() != 2 and self.dim() != 0:
            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse "
                          "their shape is deprecated and it will throw an error in a future "
                          "release (torch 1.13's warning).", UserWarning, stacklevel=2)
        return self.permute(list(range(self.dim() - 1, -1, -1)))
    Tensor.T = property(transpose_all)
    Tensor.detach = lambda self: self[...]
    Tensor.is_floating_point = lambda self: self.dtype.is_floating_point

    basic_repeat = Tensor.repeat

    def repeat(self, *sizes):
        if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
            sizes = tuple(sizes[0])
        return basic_repeat(self, list(sizes))
    Tensor.repeat = repeat

    basic_to = Tensor.to

    def to(self, *args, **kwargs):
        if args and isinstance(args[0], str):
            dtype = getattr(mpsim, args[0].replace("torch.", ""), None)
            if isinstance(dtype, type(mpsim.float32)):
                args = (dtype,) + args[1:]
        return basic_to(self, *args, **kwargs)
    Tensor.to = to

    basic_from_dlpack = mpsim.from_dlpack

    def from_dlpack(obj, *args, **kwargs):
        if type(obj).__module__.startswith("torch") and str(getattr(obj, "dtype", "")) == \
                "torch.bool":  # torch 1.13 exports no bool over DLPack: the array interface
            return mpsim.tensor(obj.detach().cpu().numpy())
        return basic_from_dlpack(obj, *args, **kwargs)
    mpsim.from_dlpack = from_dlpack

    basic_gather = mpsim.gather

    def gather(input, dim, index, *, sparse_grad=False):
        """torch.gather, also on a 0-d input (as a 1-element vector, torch's) and with an empty
        index of any integer dtype."""
        if index.numel() == 0 and not index.dtype.is_floating_point:
            index = index.to(_C.int64)
        if input.dim() == 0 and index.dim() <= 1:
            if dim not in (0, -1):
                raise IndexError(f"[gather] dim {dim} out of range for a 0-d input")
            return basic_gather(input.reshape([1]), 0, index.reshape([-1])).reshape(
                list(index.shape))
        return basic_gather(input, dim, index)
    mpsim.gather = gather
    Tensor.gather = lambda self, dim, index, **k: gather(self, dim, index, **k)

    # torch's other names of mpsim's ops, as functions and methods (torch.clip, x.divide, ...)
    for alias, base in _ALIASES.items():
        fn = _function(base)
        if fn is None:
            continue
        if not hasattr(mpsim, alias):
            setattr(mpsim, alias, fn)
        if not hasattr(Tensor, alias):
            setattr(Tensor, alias, lambda self, *a, _f=fn, **k: _f(self, *a, **k))

    def bincount(input, weights=None, minlength=0):
        """The count (or the sum of weights, in float64 rounded once) of each value of a 1-d
        non-negative integer tensor."""
        if input.dim() != 1 or input.dtype.is_floating_point or input.dtype == _C.bool:
            raise _C.InvalidArgumentError("[bincount] bincount only supports 1-d non-negative "
                                          "integral inputs.")
        x = input.to("cpu").numpy()
        if x.size and x.min() < 0:
            raise _C.InvalidArgumentError("[bincount] bincount only supports 1-d non-negative "
                                          "integral inputs.")
        from . import tensor
        if weights is None:
            return tensor(np.bincount(x, minlength=minlength).astype(np.int64)).to(
                input.device)
        w = weights.to("cpu").to(_C.float64).numpy()
        dtype = weights.dtype if weights.dtype.is_floating_point else _C.float64
        return tensor(np.bincount(x, w, minlength=minlength)).to(dtype).to(input.device)

    def is_nonzero(input):
        if input.numel() != 1:
            raise _C.InvalidArgumentError("[is_nonzero] Boolean value of Tensor with more than "
                                          "one value is ambiguous" if input.numel() else
                                          "[is_nonzero] Boolean value of Tensor with no values "
                                          "is ambiguous")
        return bool(input.reshape([]).item() != 0)

    extras = {
        "bincount": bincount, "is_nonzero": is_nonzero,
        "is_same_size": lambda input, other: tuple(input.shape) == tuple(other.shape),
        "is_signed": lambda input: input.dtype not in (_C.uint8, _C.bool),
        "is_complex": lambda input: input.dtype.is_complex,
    }
    for name, fn in extras.items():
        setattr(mpsim, name, fn)
        setattr(Tensor, name, lambda self, *a, _f=fn, **k: _f(self, *a, **k))
    Tensor.polygamma = lambda self, n: mpsim.polygamma(n, self)
    Tensor.ndimension = lambda self: self.dim()
    Tensor.nelement = lambda self: self.numel()
    Tensor.get_device = lambda self: -1 if self.device == "cpu" else 0
    Tensor.new_tensor = lambda self, data, dtype=None, device=None, requires_grad=False: \
        mpsim.tensor(np.asarray(data), dtype=dtype or self.dtype).to(device or self.device)
    for name, value in (("is_cuda", False), ("is_leaf", True), ("requires_grad", False),
                        ("grad", None), ("is_sparse", False), ("is_quantized", False),
                        ("is_meta", False)):
        setattr(Tensor, name, property(lambda self, _v=value: _v))
    Tensor.data = property(lambda self: self[...])

    # out= on every op of the registry (module functions; the Tensor methods have none).
    for sig in _C._signatures:
        name = sig["name"]
        fn = getattr(mpsim, name, None)
        if fn is not None and not any(a[0] == "out" for a in sig["args"]):
            setattr(mpsim, name, _with_out(fn, name))
    # and on the compositions that take it in torch (they compute, then copy into out)
    for name in ("addcmul", "addcdiv", "lerp", "float_power", "ldexp"):
        fn = getattr(mpsim, name, None)
        if fn is not None:
            setattr(mpsim, name, _with_out(fn, name))
    for name, fn in BITWISE.items():
        setattr(mpsim, name, fn)
