"""Products of integer tensors (torch computes matmul, mm, addmm, einsum, ... on int64, int32,
int16, int8 and uint8 tensors on its cpu): exact in int64 (NumPy), wrapped to the operands'
dtype, which is torch's result (its dtype accumulator wraps the same way, as integer
arithmetic is modular). The golden matmul kernels take floating tensors only; every product op
below runs them for floating operands and takes this path when its tensors are integers
(docs/ops.md, "Linear algebra, convolution and attention"). The op itself, run on float64
copies of the operands, checks the call (shapes, arguments) and gives the result's shape, so
errors are the op's own."""

import numpy as np

from . import _C


def _tensors(values):
    for v in values:
        if isinstance(v, _C.Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _integer_call(name, args, kwargs):
    """Whether the call's tensors are integers (bool: addr only, torch's one bool product)."""
    ts = list(_tensors(list(args) + list(kwargs.values())))
    if any(t.dtype.is_complex for t in ts):  # the float op refuses complex tensors itself
        return False
    return bool(ts) and any(not t.dtype.is_floating_point and
                            (t.dtype != _C.bool or name == "addr") for t in ts)


def _as_float64(v):
    if isinstance(v, _C.Tensor):
        return v.to("cpu").to(_C.float64)
    if isinstance(v, (list, tuple)):
        return type(v)(_as_float64(x) for x in v)
    return v


def _np(v):
    if isinstance(v, _C.Tensor):
        return v.to("cpu").contiguous().numpy().astype(np.int64)
    if isinstance(v, (list, tuple)):
        return type(v)(_np(x) for x in v)
    return v


def _int(name, value, what):
    """beta/alpha converted to the integer type, as torch (truncated: 0.6 -> 0)."""
    return int(value)


def _scaled_sum(name, input, product, beta, alpha):
    beta, alpha = _int(name, beta, "beta"), _int(name, alpha, "alpha")
    r = alpha * product
    return r if beta == 0 else r + beta * input


def _einsum_parts(equation, operands):
    if not isinstance(equation, str) and operands and isinstance(operands[0], str):
        equation, operands = operands[0], (equation,)  # einsum(operands, equation)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return equation.replace(" ", ""), operands


def _einsum(equation, operands):
    eq, operands = _einsum_parts(equation, operands)
    lhs, arrow, out = eq.partition("->")
    if arrow and "..." in lhs and "..." not in out:  # torch sums the ellipsis dims
        r = np.einsum(f"{lhs}->...{out}", *operands)
        return r.sum(axis=tuple(range(r.ndim - len(out)))) if r.ndim > len(out) else r
    return np.einsum(eq, *operands)


def einsum_dtype(dtype, equation, operands):
    """torch's einsum sums an index that only one operand has (and the output lacks) with sum,
    which makes an integer result int64; bmm keeps the dtype otherwise."""
    eq, operands = _einsum_parts(equation, operands)
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:
        return dtype
    for i, term in enumerate(terms):
        others = "".join(t for j, t in enumerate(terms) if j != i) + out
        if any(c.isalpha() and c not in others for c in term):
            return _C.int64
    return dtype


# name: NumPy formula over int64 arrays (the call's arguments in torch's order)
FORMULAS = {
    "matmul": lambda a, b: np.matmul(a, b),
    "mm": lambda a, b: np.matmul(a, b),
    "bmm": lambda a, b: np.matmul(a, b),
    "mv": lambda a, b: np.matmul(a, b),
    "dot": lambda a, b: np.dot(a, b),
    "vdot": lambda a, b: np.dot(a, b),
    "inner": lambda a, b: np.inner(a, b),
    "outer": lambda a, b: np.outer(a, b),
    "ger": lambda a, b: np.outer(a, b),
    "addmm": lambda i, a, b, beta=1, alpha=1: _scaled_sum("addmm", i, a @ b, beta, alpha),
    "addmv": lambda i, a, b, beta=1, alpha=1: _scaled_sum("addmv", i, a @ b, beta, alpha),
    "addr": lambda i, a, b, beta=1, alpha=1: _scaled_sum("addr", i, np.outer(a, b), beta,
                                                        alpha),
    "baddbmm": lambda i, a, b, beta=1, alpha=1: _scaled_sum("baddbmm", i, np.matmul(a, b),
                                                           beta, alpha),
    "addbmm": lambda i, a, b, beta=1, alpha=1: _scaled_sum(
        "addbmm", i, np.matmul(a, b).sum(axis=0), beta, alpha),
    "linear": lambda x, w, bias=None: np.matmul(x, w.T) + (0 if bias is None else bias),
    "tensordot": lambda a, b, dims=2: np.tensordot(a, b, axes=dims),
    "einsum": lambda equation, *operands: _einsum(equation, operands),
    "multi_dot": lambda tensors: np.linalg.multi_dot(list(tensors)) if len(tensors) > 1
    else tensors[0],
}


def integer_aware(name, fn):
    """fn, taking FORMULAS[name] where its tensors are integers."""
    formula = FORMULAS[name]

    def call(*args, **kwargs):
        if not _integer_call(name, args, kwargs):
            return fn(*args, **kwargs)
        tensors = list(_tensors(list(args) + list(kwargs.values())))
        dtypes = {t.dtype for t in tensors}
        if len(dtypes) > 1:
            listed = " and ".join(sorted(str(d) for d in dtypes))
            raise _C.DTypeError(f"[{name}] expected all operands to have the same dtype, got "
                                f"{listed}")
        dtype, device = tensors[0].dtype, tensors[0].device
        shaped = fn(*_as_float64(args), **_as_float64(kwargs))  # the op's checks and shape
        values = formula(*_np(args), **_np(kwargs))
        result = np.asarray(values).astype(np.int64).reshape(tuple(shaped.shape))
        if dtype == _C.bool:  # addr: (beta and input) or (alpha and v1 v2^T)
            result = result != 0
        if name == "einsum":
            dtype = einsum_dtype(dtype, args[0], args[1:])
        return _C.tensor(result).to(dtype).to(device)

    call.__name__ = getattr(fn, "__name__", name)
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn
    return call


def install(mpsim, Tensor):
    """Wraps mpsim's product functions, their Tensor methods and operators, F.linear and
    linalg.multi_dot (called by mpsim/__init__.py before out= is added)."""
    for name in FORMULAS:
        if name == "multi_dot":
            continue
        fn = getattr(mpsim, name, None)
        if fn is None:
            continue
        wrapped = integer_aware(name, fn)
        setattr(mpsim, name, wrapped)
        if hasattr(Tensor, name):
            setattr(Tensor, name, lambda self, *a, _f=wrapped, **k: _f(self, *a, **k))
    matmul = mpsim.matmul
    Tensor.__matmul__ = lambda self, other: matmul(self, other)
    Tensor.__rmatmul__ = lambda self, other: matmul(other, self)
    mpsim.nn.functional.linear = integer_aware("linear", mpsim.nn.functional.linear)
    mpsim.linalg.multi_dot = integer_aware("multi_dot", mpsim.linalg.multi_dot)
