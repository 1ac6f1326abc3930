"""The arithmetic of a kernel under test (`compute=` of error_bound and check), and the
floating-point quantities the bounds are made of (docs/verdicts.md, "Compute models")."""

import math

import numpy as np

# Significand bits (with the implicit one) and the smallest normal exponent of each float dtype.
FORMATS = {"float64": (53, -1022), "float32": (24, -126), "float16": (11, -14),
           "bfloat16": (8, -126), "tf32": (11, -126)}


def unit_roundoff(fmt):
    """u = 2^-p: the largest relative error of one rounding to nearest in the format."""
    return 2.0 ** -FORMATS[fmt][0]


def ulp(v, fmt):
    """The spacing of the format's numbers at |v| (float64 array): 2^(e - p + 1), e the exponent
    of |v| (at least the smallest normal's, so subnormal spacing below)."""
    bits, emin = FORMATS[fmt]
    v = np.abs(np.asarray(v, dtype=np.float64))
    finite = np.where(np.isfinite(v), v, 0.0)
    _, e = np.frexp(finite)
    exponent = np.where(finite == 0, emin, np.maximum(e - 1, emin))
    return np.ldexp(1.0, (exponent - (bits - 1)).astype(np.int64))


def gamma(n, u):
    """Higham's gamma_n = n u / (1 - n u): the relative error bound of n roundings in a chain
    (infinite when n u >= 1: the model promises nothing there)."""
    nu = np.asarray(n, dtype=np.float64) * u
    with np.errstate(divide="ignore"):
        return np.where(nu < 1, nu / (1 - nu), np.inf)


# The ULP budgets of the float32 math functions of PyTorch's CUDA kernels (CUDA's libdevice, not
# fast math: the CUDA C Programming Guide's table of maximum ULP errors), for compute=None.
# Compositions PyTorch writes out (sigmoid, silu, softplus, gelu) are bounded term by term in
# _bounds.py from these and one rounding per operation.
# gelu_erf: erf inside gelu.
CUDA_ULPS = {"exp": 2, "expm1": 1, "log": 1, "log1p": 1, "sqrt": 0.5, "rsqrt": 2,
             "reciprocal": 0.5, "square": 0.5, "sin": 2, "cos": 2, "tanh": 2, "erf": 2,
             "gelu_erf": 2, "pow": 4}
# float64 (libdevice's double functions)
CUDA_ULPS_F64 = {"exp": 1, "expm1": 1, "log": 1, "log1p": 1, "sqrt": 0.5, "rsqrt": 1,
                 "reciprocal": 0.5, "square": 0.5, "sin": 2, "cos": 2, "tanh": 2, "erf": 2,
                 "gelu_erf": 2, "pow": 2}
# PyTorch's CPU kernels (compute="torch_cpu"): CUDA's budgets but for gelu, whose vectorized
# float32 kernel is up to 12 u off near 0 (python3-torch 1.13 on AVX-512:
# tools/verdicts/torch_cpu_ulps.py; docs/verdicts.md).
TORCH_CPU_ULPS = dict(CUDA_ULPS, gelu_erf=6)

# The math family (core/math_op_list.h): (CUDA ULPs, CPU ULPs, absolute error) of PyTorch's
# float32 kernels, twice the largest measured by tools/verdicts/math_ulps.py (16384 inputs
# across each op's domain; CUDA: an H100 with PyTorch 2.11; CPU: python3-torch 1.13 on
# AVX-512), rounded up: ULPs of the exact value, and, below float32's smallest normal or
# (for functions with zeros) where |exact| < 2^-6, an absolute error. Measured, not derived:
# a kernel may exceed them on inputs the sweep missed. Where the CPU kernel overflowed before
# the exact value (cosh, sinh), the CUDA figure. float64 inputs take the same ULP counts in
# float64 ULPs (not measured). ndtr, log_ndtr, tanhshrink and logit are derived in _bounds.py
# instead: their errors come from cancellation or an argument's rounding, not from a budget.
MATH_BUDGETS = {
    "acos": (3, 2, 0.0),
    "asin": (3, 2, 0.0),
    "atan": (3, 2, 0.0),
    "acosh": (3, 3, 0.0),
    "asinh": (3, 3, 0.0),
    "atanh": (6, 3, 0.0),
    "cosh": (4, 4, 0.0),
    "sinh": (4, 4, 0.0),
    "tan": (6, 2, 2.0 ** -29),
    "exp2": (4, 2, 0.0),
    "log2": (2, 1, 0.0),
    "log10": (4, 2, 0.0),
    "erfc": (8, 3, 2.0 ** -147),
    "erfinv": (4, 64, 0.0),
    "lgamma": (128, 2, 2.0 ** -22),
    "digamma": (384, 384, 2.0 ** -20),
    "i0": (12, 12, 0.0),
    "sinc": (96, 96, 2.0 ** -22),
    "deg2rad": (2, 2, 0.0),
    "rad2deg": (2, 2, 0.0),
    "special_ndtri": (8, 8, 0.0),
    "special_erfcx": (128, 128, 0.0),
    "special_entr": (3, 3, 0.0),
    "special_i0e": (8, 8, 0.0),
    "special_i1": (32, 32, 0.0),
    "special_i1e": (24, 24, 0.0),
    "special_bessel_j0": (256, 256, 2.0 ** -21),
    "special_bessel_j1": (192, 192, 2.0 ** -21),
    "special_bessel_y0": (256, 256, 2.0 ** -20),
    "special_bessel_y1": (768, 768, 2.0 ** -20),
    "special_spherical_bessel_j0": (6, 3, 2.0 ** -27),
    "softsign": (3, 3, 0.0),
    "selu": (3, 256, 0.0),
    "mish": (8, 6, 0.0),
    "hardsigmoid": (3, 2, 0.0),
    "hardswish": (6, 4, 0.0),
    "logsigmoid": (4, 3, 2.0 ** -147),
    "elu": (2, 192, 0.0),
    "celu": (2, 128, 0.0),
}


class Model:
    """What a correct kernel of the compute model may do.

    name: the compute argument as given. math: the format elementwise math and accumulation
    run in (float32 for float32/float16/bfloat16 inputs, float64 for float64). acc: the format of
    accumulations (sums, products' sums). product_inputs: the format product operands are rounded
    to before multiplying (tf32), or None. fast_ulps: the ULP budget of every math function
    (fast_math), or None for the library's (CUDA_ULPS). sequential: sums are one chain (depth n)
    rather than PyTorch's blocked and tree reductions (depth at most 2 ceil(sqrt(n)))."""

    def __init__(self, name, math, acc, product_inputs=None, fast_ulps=None, sequential=False,
                 table=None):
        self.name, self.math, self.acc = name, math, acc
        self.table = table
        self.product_inputs, self.fast_ulps, self.sequential = product_inputs, fast_ulps, sequential
        self.u = unit_roundoff(math)
        self.u_acc = unit_roundoff(acc)

    def ulps(self, fn):
        if self.fast_ulps is not None:
            return self.fast_ulps
        if self.math == "float64":
            return CUDA_ULPS_F64[fn]
        return (self.table or CUDA_ULPS)[fn]

    def math_budget(self, fn):
        """(ULPs, absolute error) of a math-family function (MATH_BUDGETS): the CPU figures for
        torch_cpu, the CUDA ones otherwise; fast_math's k replaces the ULPs."""
        cuda, cpu, absolute = MATH_BUDGETS[fn]
        k = cpu if self.table is TORCH_CPU_ULPS else cuda
        return (self.fast_ulps if self.fast_ulps is not None else k), absolute

    def depth(self, n):
        """Roundings a sum of n terms may chain: n - 1 in one chain; with PyTorch's CUDA
        reductions (each thread sums a strided share serially, then a tree of warps and blocks)
        at most 2 ceil(sqrt(n))."""
        n = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
        if self.sequential:
            return n
        return np.minimum(n, 2 * np.ceil(np.sqrt(n)))

    def gamma_sum(self, n):
        return gamma(self.depth(n), self.u_acc)

    def gamma_dot(self, k):
        """Products of k terms summed: one rounding of each product (none with fused
        multiply-adds, counted anyway) and the sum's depth (cuBLAS and cuDNN accumulate
        k-tiles, so the blocked depth of depth(); sequential: gamma_K)."""
        g = gamma(self.depth(k) + 1, self.u_acc)
        if self.product_inputs is not None:
            g = g + 2 * unit_roundoff(self.product_inputs)
        return g

    def describe(self):
        parts = [f"math in {self.math}", f"accumulation in {self.acc}"]
        if self.product_inputs:
            parts.append(f"product inputs rounded to {self.product_inputs}")
        if self.fast_ulps is not None:
            parts.append(f"math functions within {self.fast_ulps} ULP")
        parts.append("sequential sums" if self.sequential else "blocked sums")
        return f"{self.name}: " + ", ".join(parts)


COMPUTES = ("tf32", "float16_accumulate", "bfloat16_accumulate", "fast_math", "sequential",
            "torch_cpu")


def model(compute, input_dtype):
    """The Model for `compute` and the op's floating input dtype."""
    math_fmt = "float64" if input_dtype == "float64" else "float32"
    if compute is None:
        return Model("default", math_fmt, math_fmt)
    name, arg = (compute[0], compute[1]) if isinstance(compute, tuple) else (compute, None)
    if name == "tf32":
        return Model("tf32", math_fmt, math_fmt, product_inputs="tf32")
    if name == "float16_accumulate":
        return Model(name, math_fmt, "float16")
    if name == "bfloat16_accumulate":
        return Model(name, math_fmt, "bfloat16")
    if name == "fast_math":
        if arg is None or not (isinstance(arg, (int, float)) and math.isfinite(arg) and arg >= 0):
            raise ValueError("compute=('fast_math', k) needs the ULP budget k, a number >= 0")
        return Model(f"fast_math({arg:g} ULP)", math_fmt, math_fmt, fast_ulps=float(arg))
    if name == "sequential":
        return Model(name, math_fmt, math_fmt, sequential=True)
    if name == "torch_cpu":
        return Model(name, math_fmt, math_fmt, table=TORCH_CPU_ULPS)
    raise ValueError(f"unknown compute {compute!r}: None, " + ", ".join(repr(c) for c in COMPUTES))
