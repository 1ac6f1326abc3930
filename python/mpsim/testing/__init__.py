"""Comparisons for tests that use mpsim as the oracle (torch.testing's rules and messages)."""

import numpy as _np

from .._C import Tensor as _Tensor

# torch.testing's default (rtol, atol) per dtype; integer and bool dtypes compare exactly.
DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def _values(x):
    """(values as an ndarray, dtype name, is a Python scalar) of a tensor-like."""
    if isinstance(x, _Tensor):
        return x.numpy(), str(x.dtype).replace("mpsim.", ""), False
    if type(x).__module__.startswith("torch") and hasattr(x, "detach"):
        name = str(x.dtype).replace("torch.", "")
        t = x.detach().cpu()
        if name == "bfloat16":
            t = t.float()  # exact: NumPy has no bfloat16
        return t.numpy(), name, False
    if isinstance(x, (_np.ndarray, _np.generic)):
        a = _np.asarray(x)
        return a, a.dtype.name, False
    if isinstance(x, (bool, int, float)):
        a = _np.asarray(x)  # int -> int64, float -> float64, as torch wraps Python numbers
        return a, a.dtype.name, True
    a = _np.asarray(x)
    return a, a.dtype.name, False


def default_tolerances(*dtype_names):
    """The largest (rtol, atol) of torch.testing's defaults over the given dtype names."""
    rtols, atols = zip(*(DEFAULT_TOLERANCES.get(n, (0.0, 0.0)) for n in dtype_names))
    return max(rtols), max(atols)


def _fmt(v):
    return repr(v.item()) if isinstance(v, _np.generic) else repr(v)


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False, check_dtype=True,
                 msg=None):
    """Raises AssertionError unless actual and expected are close, elementwise:
    |actual - expected| <= atol + rtol * |expected| (equal infinities match; NaN matches NaN only
    with equal_nan). Accepts mpsim tensors, torch tensors, NumPy arrays and Python numbers.

    rtol and atol default to torch.testing's per-dtype values (float16 1e-3/1e-5, bfloat16
    1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7; integers and bool exactly) for the
    less precise of the two dtypes. As torch.testing.assert_close: shapes must match, and dtypes
    too unless check_dtype=False. The message lists the mismatched elements, the greatest
    absolute and relative differences with their indices, and the tolerances; `msg` replaces it.
    """
    a, a_dtype, a_scalar = _values(actual)
    e, e_dtype, e_scalar = _values(expected)
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: "
                             f"{a.shape} != {e.shape}.")
    if check_dtype and a_dtype != e_dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: "
                             f"{a_dtype} != {e_dtype}.")
    if rtol is None:
        rtol, atol = default_tolerances(a_dtype, e_dtype)

    floating = a.dtype.kind in "fc" or e.dtype.kind in "fc"
    if floating:
        af = a.astype(_np.float64)
        ef = e.astype(_np.float64)
    else:  # integers and bools: exact differences in int64 (bools as 0 / 1)
        af = a.astype(_np.int64)
        ef = e.astype(_np.int64)
    with _np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_diff = _np.abs(af - ef)
        close = af == ef  # equal values, equal infinities included
        if floating:
            finite = _np.isfinite(af) & _np.isfinite(ef)
            close |= finite & (abs_diff <= atol + rtol * _np.abs(ef))
            if equal_nan:
                close |= _np.isnan(af) & _np.isnan(ef)
        else:
            close |= abs_diff <= atol + rtol * _np.abs(ef)
    if close.all():
        return
    if msg is not None:
        raise AssertionError(msg)

    with _np.errstate(invalid="ignore", divide="ignore"):
        abs_diff = _np.where(close, 0, abs_diff).astype(_np.float64 if floating else _np.int64)
        rel_diff = _np.where(close, 0.0, abs_diff / _np.abs(ef.astype(_np.float64)))

    def greatest(diff):
        flat = diff.reshape(-1)
        nan = _np.isnan(flat) if flat.dtype.kind == "f" else _np.zeros(flat.shape, bool)
        i = int(_np.argmax(nan)) if nan.any() else int(_np.argmax(flat))
        index = tuple(int(k) for k in _np.unravel_index(i, diff.shape))
        return flat[i], index

    exact = rtol == 0 and atol == 0
    max_abs, abs_index = greatest(abs_diff)
    max_rel, rel_index = greatest(rel_diff)
    if a_scalar and e_scalar:
        raise AssertionError(
            f"Scalars are not {'equal' if exact else 'close'}!\n\n"
            f"Expected {_fmt(e.reshape(()))} but got {_fmt(a.reshape(()))}.\n"
            f"Absolute difference: {_fmt(max_abs)} (up to {atol} allowed)\n"
            f"Relative difference: {_fmt(max_rel)} (up to {rtol} allowed)")
    mismatched = int(close.size - _np.count_nonzero(close))
    raise AssertionError(
        f"Tensor-likes are not {'equal' if exact else 'close'}!\n\n"
        f"Mismatched elements: {mismatched} / {close.size} ({mismatched / close.size:.1%})\n"
        f"Greatest absolute difference: {_fmt(max_abs)} at index {abs_index} "
        f"(up to {atol} allowed)\n"
        f"Greatest relative difference: {_fmt(max_rel)} at index {rel_index} "
        f"(up to {rtol} allowed)")


from ._verdict import Verdict, assert_golden, check, error_bound  # noqa: E402,F401
