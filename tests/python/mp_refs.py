"""Exact references for the math family (core/math_op_list.h): mpmath at 40 digits, element
by element, as float64 torch tensors (the exact value rounded to double). torch's float64 is not
accurate enough for several of them (its Bessel functions near their zeros, sinc of large
arguments, x - tanh(x) near 0, ndtr's tail). Used by test_ops.py and conformance.py."""

import math

import mpmath
import numpy as np
import torch

mpmath.mp.dps = 40


def _elementwise_mp(fn):
    def ref(x, **kwargs):
        v = x.detach().double().numpy()
        out = np.empty_like(v)
        for i, xi in np.ndenumerate(v):
            try:
                r = fn(mpmath.mpf(float(xi)), **kwargs)
            except (ValueError, ZeroDivisionError):
                r = mpmath.mpf("nan")
            out[i] = math.nan if isinstance(r, mpmath.mpc) else float(r)  # complex: outside
        return torch.from_numpy(out)
    return ref


def _logit(x, eps=None):
    z = x if eps is None else min(max(x, eps), 1 - mpmath.mpf(eps))
    return mpmath.log(z / (1 - z))


_FUNCTIONS = {
    "acos": mpmath.acos, "asin": mpmath.asin, "atan": mpmath.atan, "acosh": mpmath.acosh,
    "asinh": mpmath.asinh, "atanh": mpmath.atanh, "cosh": mpmath.cosh, "sinh": mpmath.sinh,
    "tan": mpmath.tan, "exp2": lambda x: mpmath.power(2, x), "log2": lambda x: mpmath.log(x, 2),
    "log10": mpmath.log10, "erfc": mpmath.erfc, "erfinv": mpmath.erfinv,
    "lgamma": lambda x: mpmath.inf if x <= 0 and x == int(x) else mpmath.log(abs(mpmath.gamma(x))),
    "digamma": mpmath.digamma,
    "i0": lambda x: mpmath.besseli(0, x),
    "sinc": lambda x: 1 if x == 0 else mpmath.sinpi(x) / (mpmath.pi * x),
    "deg2rad": lambda x: x * mpmath.pi / 180, "rad2deg": lambda x: x * 180 / mpmath.pi,
    "special_ndtr": mpmath.ncdf,
    "special_ndtri": lambda p: mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1),
    "special_log_ndtr": lambda x: mpmath.log(mpmath.ncdf(x)),
    "special_erfcx": lambda x: mpmath.exp(x * x) * mpmath.erfc(x),
    "special_entr": lambda x: -x * mpmath.log(x) if x > 0 else 0 if x == 0 else -mpmath.inf,
    "special_i0e": lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(0, x),
    "special_i1": lambda x: mpmath.besseli(1, x),
    "special_i1e": lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(1, x),
    "special_bessel_j0": lambda x: mpmath.besselj(0, x),
    "special_bessel_j1": lambda x: mpmath.besselj(1, x),
    "special_bessel_y0": lambda x: mpmath.bessely(0, x),
    "special_bessel_y1": lambda x: mpmath.bessely(1, x),
    "special_spherical_bessel_j0": lambda x: 1 if x == 0 else mpmath.sin(x) / x,
    "special_airy_ai": mpmath.airyai,
    "softsign": lambda x: x / (1 + abs(x)), "tanhshrink": lambda x: x - mpmath.tanh(x),
    "selu": lambda x: mpmath.mpf("1.0507009873554804934193349852946") * (
        x if x > 0 else mpmath.mpf("1.6732632423543772848170429916717") * mpmath.expm1(x)),
    "mish": lambda x: x * mpmath.tanh(mpmath.log1p(mpmath.exp(x))),
    "hardsigmoid": lambda x: 0 if x <= -3 else 1 if x >= 3 else x / 6 + mpmath.mpf(0.5),
    "hardswish": lambda x: 0 if x <= -3 else x if x >= 3 else x * (x + 3) / 6,
    "logsigmoid": lambda x: -mpmath.log1p(mpmath.exp(-x)),
    "elu": lambda x, alpha=1.0, scale=1.0, input_scale=1.0:
        scale * x if x > 0 else scale * alpha * mpmath.expm1(x * input_scale),
    "celu": lambda x, alpha=1.0: x if x > 0 else alpha * mpmath.expm1(x / alpha),
    "logit": _logit,
}
REFS = {name: _elementwise_mp(fn) for name, fn in _FUNCTIONS.items()}
