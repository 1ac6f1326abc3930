"""Per-element error bounds, one function per op family (docs/verdicts.md derives each).

A bound function gets the op's bound arguments (tensors as float64 NumPy arrays), the compute
model and mpsim's golden outputs (float64), and returns, per output, the kernel's bound in the
model's math format (its last rounding included) and the scale of the golden's own residual
(the 2^-50 S term of mpsim's sums and products, docs/ops.md)."""

import math

import numpy as np

from ._model import MATH_BUDGETS, gamma, ulp

# Ops whose every output is exact: data movement, selection, comparisons, casts (rounding to
# nearest even, as every backend), integer results, max/min, fills.
EXACT = {
    "abs", "neg", "relu", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "where",
    "clamp", "clamp_min", "clamp_max", "amax", "amin", "argmax", "argmin", "cat", "stack",
    "split", "chunk", "index_select", "gather", "flip", "repeat", "pad", "tril", "triu",
    "permute", "transpose", "t", "reshape", "expand", "flatten", "narrow", "select", "squeeze",
    "unsqueeze", "clone", "contiguous", "to", "zeros", "ones", "full", "max_pool2d", "copy",
    "fill", "relu6", "hardtanh", "threshold", "isnan", "isinf", "isfinite", "logical_not",
    "positive", "zeros_like", "ones_like", "full_like", "sign", "hardshrink", "nan_to_num",
    "fmax", "fmin", "logical_and", "logical_or", "logical_xor", "expand_as", "reshape_as",
    "type_as", "copysign", "nextafter", "fmod", "heaviside", "isposinf", "isneginf", "isreal",
    "ravel", "broadcast_to", "fliplr", "flipud", "atleast_1d", "atleast_2d", "atleast_3d",
    "movedim", "tile", "roll", "rot90", "unflatten", "unbind", "split_with_sizes", "hstack",
    "vstack", "dstack", "column_stack", "meshgrid", "cartesian_prod", "floor", "ceil", "trunc",
    "frac", "sort", "argsort", "msort", "topk", "kthvalue", "cummax", "cummin",
    "index_copy", "index_fill", "masked_scatter", "masked_select", "nonzero", "argwhere",
    "diagonal", "diag", "diag_embed", "diagflat", "select_scatter", "slice_scatter",
    "diagonal_scatter", "as_strided", "as_strided_scatter", "tensor_split", "hsplit", "vsplit",
    "dsplit", "block_diag", "repeat_interleave", "combinations", "searchsorted", "bucketize",
    "unique", "unique_consecutive", "isin",
    # the complex views and constructors: parts moved or negated, exactly
    "view_as_real", "view_as_complex", "real", "imag", "conj", "complex",
    # histc: counts of bins chosen by torch's expression, each step rounded in the input's dtype
    "histc",
}
# Random ops: no per-element bound exists (the values are the generator's); error_bound says so.
RANDOM = {"rand", "randn", "normal", "uniform", "randint", "bernoulli", "dropout", "random"}
# Dense linear algebra (factorizations, solves, inverses, spectral decompositions, norms,
# powers): the error of a backward-stable algorithm is its backward error times the problem's
# condition, which no per-element formula of the inputs states a priori; error_bound says so
# (docs/verdicts.md, "Linear algebra"). mpsim's own results: docs/ops.md, "Linear algebra in
# double".
# Math functions whose CUDA kernels' errors are not measured yet (tools/verdicts/math_ulps.py
# covers the unary family): error_bound says so; mpsim's own results are within 1 ULP of the
# exact value (docs/ops.md, "Math functions").
UNMEASURED = {
    "special_modified_bessel_k0", "special_modified_bessel_k1",
    "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1", "special_zeta",
    "igamma", "igammac", "special_chebyshev_polynomial_t", "special_chebyshev_polynomial_u",
    "special_chebyshev_polynomial_v", "special_chebyshev_polynomial_w",
    "special_shifted_chebyshev_polynomial_t", "special_shifted_chebyshev_polynomial_u",
    "special_shifted_chebyshev_polynomial_v", "special_shifted_chebyshev_polynomial_w",
    "special_hermite_polynomial_h", "special_hermite_polynomial_he",
    "special_laguerre_polynomial_l", "special_legendre_polynomial_p",
}
# polar: not judged yet, error_bound says so; mpsim's own result is rounded once from double
# (docs/ops.md, "Complex tensors and Fourier transforms"). The complex views and constructors
# are exact (EXACT); the Fourier transforms have bounds (_fourier).
COMPLEX = {"polar"}
CONDITIONED = {
    "linalg_lu_factor_ex", "linalg_lu_factor", "linalg_lu", "lu", "lu_unpack", "linalg_eig",
    "linalg_eigvals",
    "linalg_lu_solve", "lu_solve", "linalg_det", "det", "linalg_slogdet", "slogdet", "logdet",
    "linalg_inv_ex", "linalg_inv", "inverse", "linalg_solve_ex", "linalg_solve",
    "linalg_solve_triangular", "triangular_solve", "linalg_cholesky_ex", "linalg_cholesky",
    "cholesky", "cholesky_solve", "cholesky_inverse", "geqrf", "linalg_householder_product",
    "orgqr", "ormqr", "linalg_qr", "qr", "linalg_eigh", "linalg_eigvalsh", "symeig",
    "linalg_svd", "linalg_svdvals", "svd", "linalg_lstsq", "linalg_pinv", "pinverse",
    "linalg_matrix_rank", "linalg_matrix_norm", "linalg_cond", "linalg_matrix_power",
    "matrix_power", "linalg_matrix_exp", "matrix_exp", "linalg_multi_dot", "linalg_tensorinv",
    "linalg_tensorsolve", "linalg_vander", "linalg_cross", "cross",
}


def _reduce_dims(x, dim):
    if dim is None:
        return tuple(range(x.ndim))
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    return tuple(d % x.ndim for d in dims) if x.ndim else ()


def _keep(v, x, dims, keepdim):
    return v if keepdim else np.squeeze(v, axis=dims) if dims else v


# ---- elementwise -------------------------------------------------------------------------

def _unary(name):
    def bound(c):
        x, (f,) = c.a["input"], c.golden
        m = c.m
        af = np.abs(f)
        if name in ("sigmoid", "silu"):
            # 1 / (1 + e), e = exp(-x) (x / (1 + e) for silu): e's budget, the add, the divide
            # (and silu's product): relative to the result.
            b = (m.ulps("exp") * 2 + 3) * m.u * af
        elif name == "softplus":
            beta, thr = c.a["beta"], c.a["threshold"]
            over = beta * x > thr
            b = np.where(over, 0.0, (m.ulps("exp") * 2 + m.ulps("log1p") * 2 + 3) * m.u * af)
        elif name == "gelu" and c.a.get("approximate", "none") == "tanh":
            # x/2 (1 + tanh(s)), s = sqrt(2/pi) (x + 0.044715 x^3): s within 5 roundings, tanh's
            # budget on t, then 1 + t and two products.
            s = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
            t = np.tanh(s)
            inner = 2 * m.ulps("tanh") * m.u * np.abs(t) + 5 * m.u * np.abs(s) * (1 - t * t)
            b = 0.5 * np.abs(x) * (inner + m.u * np.abs(1 + t)) + 2 * m.u * af
        elif name == "gelu":
            # x/2 (1 + erf(z)), z = x / sqrt(2) rounded: erf's budget on erf(z) (absolute, which
            # 1 + erf(z) does not shrink for x << 0; at least that of |erf| = 1: a kernel may
            # evaluate erf accurately in absolute terms only, as PyTorch's vectorized CPU gelu
            # does), z's rounding through erf's slope.
            z = x / math.sqrt(2)
            e = np.vectorize(math.erf, otypes=[np.float64])(z) if x.size else z
            slope = 2 / math.sqrt(math.pi) * np.exp(-z * z)
            inner = 2 * m.ulps("gelu_erf") * m.u * np.maximum(np.abs(e), 1.0) + \
                m.u * np.abs(z) * slope
            b = 0.5 * np.abs(x) * (inner + m.u * np.abs(1 + e)) + 2 * m.u * af
        else:
            b = 2 * m.ulps(name) * m.u * af  # k ULP <= 2 k u |f|
            b = np.maximum(b, m.ulps(name) * ulp(f, m.math))  # subnormal results: k ULP there
        return [b], [0.0]
    return bound


def _math(name):
    """A math-family function (core/math_op_list.h): its measured budget, k ULPs of the result
    (2 k u |f| above the smallest normal) plus an absolute error near its zeros and below the
    smallest normal (_model.MATH_BUDGETS)."""
    def bound(c):
        (f,) = c.golden
        k, absolute = c.m.math_budget(name)
        b = np.maximum(2 * k * c.m.u * np.abs(f), k * ulp(f, c.m.math)) + absolute
        return [b], [0.0]
    return bound


def _ndtr(c):
    """0.5 erfc(y), y = -x / sqrt2 rounded once: erfc's budget, y's rounding through erfc's
    relative slope (2 |y| max(|y|, 1) for y's relative error u), the halving exact; results
    below the smallest normal off by up to that normal."""
    x, (f,) = c.a["input"], c.golden
    m = c.m
    y = np.abs(np.asarray(x, dtype=np.float64)) / math.sqrt(2)
    k = m.math_budget("erfc")[0]
    tiny = float(np.finfo(np.float32 if m.math == "float32" else np.float64).tiny)
    return [(2 * k + 1 + 2 * y * np.maximum(y, 1.0)) * m.u * np.abs(f) + tiny], [0.0]


def _log_ndtr(c):
    """log of ndtr (above): ndtr's relative error is an absolute one in its log (x <= 0, plus
    log's budget), and for x > 0, where log_ndtr(x) = log1p(-ndtr(-x)) ~ -ndtr(-x), relative
    as ndtr's own."""
    x, (f,) = c.a["input"], c.golden
    m = c.m
    x = np.asarray(x, dtype=np.float64)
    y = np.abs(x) / math.sqrt(2)
    k = m.math_budget("erfc")[0]
    chain = (2 * k + 1 + 2 * y * np.maximum(y, 1.0)) * m.u
    b = np.where(x > 0, (chain + 2 * m.u) * np.abs(f), chain + 2 * m.ulps("log") * m.u * np.abs(f))
    return [b + ulp(f, m.math)], [0.0]


def _tanhshrink(c):
    """x - tanh(x): tanh's budget relative to tanh(x) (at most |x|) and the subtraction's
    rounding: absolute in |x|, which the result (x^3/3 near 0) does not shrink."""
    x, (f,) = c.a["input"], c.golden
    m = c.m
    k = m.ulps("tanh")
    return [(2 * k + 1) * m.u * np.abs(np.asarray(x, dtype=np.float64)) + m.u * np.abs(f)], [0.0]


def _logit(c):
    """log(z / (1 - z)): log's budget on the result, and the roundings of 1 - z and of the
    quotient (relative u each) through log's slope: absolute 2u (the result nears 0 at 1/2)."""
    (f,) = c.golden
    m = c.m
    return [2 * m.ulps("log") * m.u * np.abs(f) + 2 * m.u], [0.0]


def _binary_math(name):
    """The binary math family (core/math_op_list.h). atan2 and hypot: CUDA's budgets (atan2f
    and hypotf, 3 ULP); remainder: fmod is exact, adding other rounds once; xlogy and xlog1py:
    the function's budget, then the product's rounding; logaddexp(2) as PyTorch writes it,
    m + log(1 + e^-d) with m = max, d = |input - other|: the sum's rounding, 1 + e's rounding
    (absolute u through log's slope, at most 1), and exp's and log's budgets on the log term
    (at most log 2); base 2 the same over ln 2."""
    def bound(c):
        (f,) = c.golden
        m = c.m
        af = np.abs(f)
        if name in ("atan2", "hypot"):
            b = np.maximum(2 * 3 * m.u * af, 3 * ulp(f, m.math))
        elif name == "remainder":
            b = m.u * af
        elif name in ("xlogy", "special_xlog1py"):
            k = m.ulps("log" if name == "xlogy" else "log1p")
            b = (2 * k + 1) * m.u * af
        else:  # logaddexp, logaddexp2
            x = np.asarray(c.a["input"], dtype=np.float64)
            y = np.asarray(c.a["other"], dtype=np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                d = np.abs(x - y)
                tail = np.log1p(np.exp(-d)) if name == "logaddexp" else \
                    np.log1p(np.exp2(-d)) / math.log(2)
            tail = np.where(np.isfinite(tail), tail, 0.0)
            scale = 1.0 if name == "logaddexp" else 1 / math.log(2)
            b = m.u * af + 2 * m.u * scale + (2 * m.ulps("log") + 2 * m.ulps("exp") + 2) * \
                m.u * tail
        return [np.broadcast_to(b, f.shape)], [0.0]
    return bound


def _scan(name):
    """Running reductions along dim, as a GPU kernel chains them: cumsum's i-th output within
    the blocked sum bound of its i + 1 terms (times the prefix sum of |x|); cumprod's within
    gamma_(i+1) |f|; logcumsumexp's, each step a logaddexp (exp's and log1p's budgets and 3
    roundings) relative to max(|f|, 1), i + 1 of them."""
    def bound(c):
        x, (f,) = np.asarray(c.a["input"], dtype=np.float64), c.golden
        m = c.m
        if x.ndim == 0:
            x = x.reshape(1)
        d = c.a["dim"] % x.ndim
        count = np.arange(1, x.shape[d] + 1, dtype=np.float64).reshape(
            [-1 if k == d else 1 for k in range(x.ndim)])
        if name == "cumsum":
            b = m.gamma_sum(count) * np.cumsum(np.abs(x), axis=d) + m.u * np.abs(
                np.asarray(f).reshape(x.shape))
        elif name == "cumprod":
            b = gamma(count + 1, m.u_acc) * np.abs(np.asarray(f).reshape(x.shape))
        else:
            b = count * (2 * m.ulps("exp") + 2 * m.ulps("log1p") + 3) * m.u * np.maximum(
                np.abs(np.asarray(f).reshape(x.shape)), 1.0)
        return [np.asarray(b).reshape(np.shape(f))], [0.0]
    return bound


def _diff(c):
    """n-th differences as a GPU kernel computes them, each order rounded once (as torch): the
    first order u |f|; order k adds u |its result| and carries the previous order's bound twice
    (a difference of two neighbours), so at most (2^n - 1) u times the largest |input| along
    the way, bounded here by 2^n u max |x| plus u |f|. (mpsim's golden diff rounds once.)"""
    x, (f,) = c.a["input"], c.golden
    n = c.a.get("n", 1)
    if n <= 1:
        return [c.m.u * np.abs(f)], [0.0]
    scale = float(np.max(np.abs(x))) if np.size(x) else 0.0
    return [c.m.u * np.abs(f) + 2.0 ** n * c.m.u * scale], [0.0]


def _binary(name):
    def bound(c):
        (r,) = c.golden
        m = c.m
        other = c.a.get("other", c.a.get("exponent"))
        if name in ("add", "sub"):
            alpha = c.a.get("alpha", 1)
            y = np.broadcast_to(np.asarray(other, dtype=np.float64), r.shape)
            b = m.u * np.abs(r) + (0 if alpha == 1 else m.u * np.abs(alpha * y))
        elif name == "pow":
            b = 2 * m.ulps("pow") * m.u * np.abs(r)
            b = np.maximum(b, m.ulps("pow") * ulp(r, m.math))
        elif name == "div" and c.a.get("rounding_mode") in ("floor", "trunc"):
            # An integer result: exact unless the quotient is within its rounding of an integer,
            # where a correct kernel may land on either side.
            x = np.broadcast_to(np.asarray(c.a["input"], dtype=np.float64), r.shape)
            y = np.broadcast_to(np.asarray(other, dtype=np.float64), r.shape)
            with np.errstate(divide="ignore", invalid="ignore"):
                q = x / y
            near = np.abs(q - np.round(q)) <= 4 * m.u * np.abs(q)
            b = np.where(near, 1.0, 0.0)
        else:  # mul, div: one rounding
            b = m.u * np.abs(r)
        return [b], [0.0]
    return bound


def _square(c):
    (r,) = c.golden
    return [c.m.u * np.abs(r)], [0.0]


# ---- reductions --------------------------------------------------------------------------

def _sum_mean(mean):
    def bound(c):
        x, (r,) = c.a["input"], c.golden
        dims = _reduce_dims(x, c.a.get("dim"))
        n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
        s = _keep(np.sum(np.abs(x), axis=dims, keepdims=True), x, dims, c.a.get("keepdim", False))
        if mean:
            s = s / max(n, 1)
        b = c.m.gamma_sum(n) * s + c.m.u * np.abs(r) * (2 if mean else 1)
        return [np.broadcast_to(b, r.shape)], [np.broadcast_to(s, r.shape)]
    return bound


def _prod(c):
    x, (r,) = c.a["input"], c.golden
    dims = _reduce_dims(x, c.a.get("dim"))
    n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
    return [gamma(n + 1, c.m.u_acc) * np.abs(r)], [np.abs(r)]


def _scatter(c):
    """The scatter family's reductions as a GPU kernel computes them, the sources of an output
    in any order: a sum of the k values reaching it (the input's own when it takes part) within
    gamma_sum(k) times their sum of magnitudes, plus its rounding (a mean: divided by k, two
    roundings); a product within gamma_(k+1) |f|. Writes, amax and amin are exact."""
    a, (r,) = c.a, c.golden
    op = c.op
    x = np.atleast_1d(np.asarray(a["input"], dtype=np.float64))
    reduce = a.get("reduce")
    if op == "scatter":
        reduce = {"add": "sum", "multiply": "prod"}.get(reduce)
    elif op in ("scatter_add", "index_add"):
        reduce = "sum"
    elif op in ("put", "index_put"):
        reduce = "sum" if a.get("accumulate") else None
    if reduce not in ("sum", "mean", "prod"):
        return [np.zeros(np.shape(r))], [0.0]
    include = a.get("include_self", True)
    k = np.full(x.shape, 1.0 if include else 0.0)
    s = np.abs(x) if include else np.zeros(x.shape)
    src = a.get("src", a.get("source", a.get("values")))
    if op in ("scatter", "scatter_add", "scatter_reduce"):
        index = np.atleast_1d(np.asarray(a["index"])).astype(np.int64)
        d = a["dim"] % x.ndim
        vals = np.broadcast_to(np.abs(np.asarray(src, dtype=np.float64)), index.shape) \
            if np.ndim(src) == 0 else np.atleast_1d(np.abs(np.asarray(src)))[
                tuple(slice(0, n) for n in index.shape)]
        at = list(np.indices(index.shape))
        at[d] = index
    elif op in ("index_add", "index_reduce"):
        vals = np.atleast_1d(np.abs(np.asarray(src, dtype=np.float64))) * abs(a.get("alpha", 1))
        d = a["dim"] % x.ndim
        at = list(np.indices(vals.shape))
        at[d] = np.atleast_1d(np.asarray(a["index"])).astype(np.int64).reshape(-1)[at[d]]
    elif op == "put":
        flat_k, flat_s = k.reshape(-1), s.reshape(-1)
        index = np.asarray(a["index"]).astype(np.int64).reshape(-1)
        np.add.at(flat_k, index, 1.0)
        np.add.at(flat_s, index, np.abs(np.asarray(src, dtype=np.float64)).reshape(-1))
        at = None
    else:  # index_put
        at = [np.asarray(i).astype(np.int64) for i in a["indices"]]
        vals = np.broadcast_to(np.abs(np.asarray(src, dtype=np.float64)), x[tuple(at)].shape)
    if at is not None:
        np.add.at(k, tuple(at), 1.0)
        np.add.at(s, tuple(at), vals)
    k, s = k.reshape(np.shape(r)), s.reshape(np.shape(r))
    m = c.m
    if reduce == "prod":
        return [np.where(k > 0, gamma(k + 1, m.u_acc) * np.abs(r), 0.0)], [np.abs(r)]
    if reduce == "mean":
        s = s / np.maximum(k, 1)
    b = m.gamma_sum(np.maximum(k, 1)) * s + m.u * np.abs(r) * (2 if reduce == "mean" else 1)
    return [np.where(k > 0, b, 0.0)], [s]


def _trace(c):
    """The sum of the n diagonal elements: the sum's bound."""
    x, (r,) = np.asarray(c.a["input"], dtype=np.float64), c.golden
    diag = np.abs(np.diagonal(x))
    return [c.m.gamma_sum(max(diag.size, 1)) * diag.sum() + c.m.u * np.abs(r)], [diag.sum()]


def _moments(c, x, dims, n):
    """Per-row mean, sum of squared deviations S and the bounds of their errors (keepdims)."""
    mu = np.mean(x, axis=dims, keepdims=True)
    dev = x - mu
    S = np.sum(dev * dev, axis=dims, keepdims=True)
    d_mu = c.m.gamma_sum(n) * np.sum(np.abs(x), axis=dims, keepdims=True) / max(n, 1) \
        + c.m.u * np.abs(mu)
    # S from deviations of a mean off by d_mu: each deviation rounded, squared, summed; the
    # mean's error enters linearly through sum |x - mu| and quadratically (n d_mu^2).
    d_S = (c.m.gamma_sum(n) + 3 * c.m.u) * S + 2 * d_mu * np.sum(np.abs(dev), axis=dims,
                                                                  keepdims=True) \
        + n * d_mu * d_mu
    return mu, dev, S, d_mu, d_S


def _var_std(which):
    def bound(c):
        x = c.a["input"]
        dims = _reduce_dims(x, c.a.get("dim"))
        n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
        corr = c.a.get("correction", 1)
        corr = 1 if corr is None else corr
        _, _, S, d_mu, d_S = _moments(c, x, dims, n)
        den = max(n - corr, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = S / den
            d_var = d_S / den + c.m.u * var
            sd = np.sqrt(var)
            d_sd = np.minimum(np.where(sd > 0, d_var / (2 * sd), np.inf), np.sqrt(d_var)) \
                + c.m.ulps("sqrt") * 2 * c.m.u * sd
        keep = c.a.get("keepdim", False)
        out_var = _keep(d_var, x, dims, keep)
        if which == "var":
            return [out_var], [_keep(S / max(den, 1), x, dims, keep)]
        if which == "std":
            return [_keep(d_sd, x, dims, keep)], [0.0]
        mu_b = _keep(d_mu + c.m.u * np.abs(np.mean(x, axis=dims, keepdims=True)), x, dims, keep)
        return [out_var, mu_b], [0.0, 0.0]
    return bound


def _norm(c):
    x, (r,) = c.a["input"], c.golden
    p = c.a.get("p", 2)
    dims = _reduce_dims(x, c.a.get("dim"))
    n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
    keep = c.a.get("keepdim", False)
    if p in (math.inf, -math.inf, "inf", "-inf"):
        return [np.zeros_like(r)], [0.0]
    if p == 1:
        s = _keep(np.sum(np.abs(x), axis=dims, keepdims=True), x, dims, keep)
        return [c.m.gamma_sum(n) * s + c.m.u * np.abs(r)], [s]
    ss = _keep(np.sum(x * x, axis=dims, keepdims=True), x, dims, keep)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(r > 0, (c.m.gamma_sum(n) + c.m.u) * ss / (2 * r), 0.0)
    return [d + 2 * c.m.u * np.abs(r)], [ss]


def _logsumexp(c):
    x, (r,) = c.a["input"], c.golden
    dims = _reduce_dims(x, c.a.get("dim"))
    n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
    mx = np.max(x, axis=dims, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - mx)
        p = e / np.sum(e, axis=dims, keepdims=True)
        # each exp(x - m): the subtraction's rounding through exp, exp's budget; the sum's;
        # log's on log(sum); the final add.
        rel = np.sum(p * np.where(np.isfinite(x), c.m.u * np.abs(x - mx), 0.0), axis=dims,
                     keepdims=True) \
            + 2 * c.m.ulps("exp") * c.m.u + c.m.gamma_sum(n)
        lse = np.log(np.sum(e, axis=dims, keepdims=True))
    b = rel + 2 * c.m.ulps("log") * c.m.u * np.abs(lse) + c.m.u * np.abs(mx)
    b = _keep(b, x, dims, c.a.get("keepdim", False)) + c.m.u * np.abs(r)
    return [np.where(np.isfinite(b), b, 0.0)], [0.0]


def _softmax(log):
    def bound(c):
        x, (r,) = c.a["input"], c.golden
        dim = c.a["dim"] % x.ndim if x.ndim else 0
        n = x.shape[dim] if x.ndim else 1
        mx = np.max(x, axis=dim, keepdims=True)
        with np.errstate(invalid="ignore", over="ignore"):
            e = np.exp(x - mx)
            s = np.sum(e, axis=dim, keepdims=True)
            p = e / s
            # x - m rounded, through exp (relative); none where x is -inf (a masked logit)
            own = np.where(np.isfinite(x), c.m.u * np.abs(x - mx), 0.0)
            rel_sum = np.sum(p * own, axis=dim, keepdims=True) + 2 * c.m.ulps("exp") * c.m.u \
                + c.m.gamma_sum(n)
            if log:
                b = own + rel_sum + 2 * c.m.ulps("log") * c.m.u * np.abs(np.log(s)) \
                    + c.m.u * np.abs(r)
            else:
                b = p * (own + 2 * c.m.ulps("exp") * c.m.u + rel_sum + 2 * c.m.u)
        return [np.where(np.isfinite(b), b, 0.0)], [0.0]
    return bound


# ---- normalization -----------------------------------------------------------------------

def _affine(c, y_hat, d_y_hat, weight, bias, shape_w):
    """y = y_hat * w + b: y_hat's error through |w|, a rounding for each of the two steps."""
    w = 1.0 if weight is None else np.reshape(weight, shape_w)
    b = 0.0 if bias is None else np.reshape(bias, shape_w)
    y = y_hat * w + b
    return np.abs(w) * d_y_hat + c.m.u * np.abs(y_hat * w) + c.m.u * np.abs(y)


def _stat_rounding(c):
    """The unit roundoff of statistics stored in the input's dtype (PyTorch's CUDA group_norm
    keeps mean and rstd in a 16-bit input's dtype), else 0."""
    return {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}.get(c.input_format, 0.0)


def _normalized(c, x, dims, n, eps, stats_rounded=False):
    mu, dev, S, d_mu, d_S = _moments(c, x, dims, n)
    var = S / n
    d_var = d_S / n + c.m.u * var
    rstd = 1 / np.sqrt(var + eps)
    # rsqrt(var + eps): var's error relative to var + eps, halved; the add; rsqrt's budget.
    rel_rstd = d_var / (2 * (var + eps)) + c.m.u + 2 * c.m.ulps("rsqrt") * c.m.u
    if stats_rounded:
        u_s = _stat_rounding(c)
        d_mu = d_mu + u_s * np.abs(mu)
        rel_rstd = rel_rstd + u_s
    y_hat = dev * rstd
    d_y_hat = rstd * (d_mu + c.m.u * np.abs(dev)) + np.abs(y_hat) * (rel_rstd + c.m.u) \
        + _fused_form(c, x, mu, rstd)
    return y_hat, d_y_hat


def _fused_form(c, x, mu, rstd):
    """Kernels that fold the statistics into y = x a + (b - mu a), a = rstd w, round x a and
    mu a, whose sizes rstd (|x| + |mu|) exceed y_hat's when the mean is far from 0: their
    roundings (and a's, relative) in units of |w| (docs/verdicts.md)."""
    return (2 * c.m.ulps("rsqrt") + 4) * c.m.u * rstd * (np.abs(x) + np.abs(mu))


def _layer_norm(c):
    x = c.a["input"]
    k = len(c.a["normalized_shape"])
    dims = tuple(range(x.ndim - k, x.ndim))
    n = int(np.prod(x.shape[x.ndim - k:]))
    y_hat, d = _normalized(c, x, dims, n, c.a["eps"])
    shape_w = x.shape[x.ndim - k:]
    return [_affine(c, y_hat, d, c.a.get("weight"), c.a.get("bias"), shape_w)], [0.0]


def _group_norm(c, x=None, groups=None, weight=None, bias=None, eps=None, channels_last=False):
    x = c.a["input"] if x is None else x
    groups = c.a["num_groups"] if groups is None else groups
    weight = c.a.get("weight") if weight is None and not channels_last else weight
    bias = c.a.get("bias") if bias is None and not channels_last else bias
    eps = c.a["eps"] if eps is None else eps
    N, C = x.shape[0], x.shape[1]
    g = x.reshape(N, groups, -1)
    y_hat, d = _normalized(c, g, (2,), g.shape[2], eps, stats_rounded=True)
    y_hat, d = y_hat.reshape(x.shape), d.reshape(x.shape)
    shape_w = (C,) + (1,) * (x.ndim - 2)
    return _affine(c, y_hat, d, weight, bias, shape_w)


def _rms_norm(c):
    x = c.a["input"]
    k = len(c.a["normalized_shape"])
    dims = tuple(range(x.ndim - k, x.ndim))
    n = int(np.prod(x.shape[x.ndim - k:]))
    eps = c.a.get("eps")
    eps = np.finfo(np.float32).eps if eps is None else eps
    ms = np.sum(x * x, axis=dims, keepdims=True) / n
    d_ms = (c.m.gamma_sum(n) + 2 * c.m.u) * ms
    rstd = 1 / np.sqrt(ms + eps)
    rel = d_ms / (2 * (ms + eps)) + c.m.u + 2 * c.m.ulps("rsqrt") * c.m.u
    y_hat = x * rstd
    d = np.abs(y_hat) * (rel + c.m.u)
    return [_affine(c, y_hat, d, c.a.get("weight"), None, x.shape[x.ndim - k:])], [0.0]


def _batch_norm(c):
    x = c.a["input"]
    shape_w = (x.shape[1],) + (1,) * (x.ndim - 2)
    rm = np.reshape(c.a["running_mean"], shape_w)
    rv = np.reshape(c.a["running_var"], shape_w)
    rstd = 1 / np.sqrt(rv + c.a["eps"])
    dev = x - rm
    y_hat = dev * rstd
    d = rstd * c.m.u * np.abs(dev) + np.abs(y_hat) * (3 * c.m.u + 2 * c.m.ulps("rsqrt") * c.m.u) \
        + _fused_form(c, x, rm, rstd)
    return [_affine(c, y_hat, d, c.a.get("weight"), c.a.get("bias"), shape_w)], [0.0]


# ---- products ----------------------------------------------------------------------------

def _abs_call(c, fn, *tensors, **kwargs):
    """fn on |tensors| in float64 through mpsim: the sums of |a||b| of a product, exactly
    enough (float64 with its own 2^-50 relative error, far below the bounds)."""
    import mpsim
    return fn(*[mpsim.tensor(np.abs(t)) if t is not None else None for t in tensors],
              **kwargs).numpy().astype(np.float64)


def _product_bound(c, r, sab, k, extra=0.0):
    return c.m.gamma_dot(k) * sab + c.m.u * np.abs(r) + extra


def _bias_rounding(c, r, bias):
    """A 16-bit product whose bias is added by a second kernel (PyTorch's convolutions) is
    rounded to the output's dtype before the add: half an ULP of the product without bias."""
    if bias is None or c.out_format not in ("float16", "bfloat16"):
        return 0.0
    return 0.5 * ulp(np.abs(r - bias), c.out_format)


def _matmul(name):
    def bound(c):
        import mpsim
        (r,) = c.golden
        a = c.a["input"]
        b = c.a["mat2"] if "mat2" in c.a else c.a.get("other")
        if name in ("addmm", "baddbmm"):
            a, b = c.a["mat1" if name == "addmm" else "batch1"], \
                c.a["mat2" if name == "addmm" else "batch2"]
            alpha, beta = c.a.get("alpha", 1), c.a.get("beta", 1)
            sab = _abs_call(c, mpsim.matmul, a, b)
            k = a.shape[-1]
            m_in = np.broadcast_to(np.abs(beta) * np.abs(c.a["input"]), r.shape)
            extra = c.m.u * (np.abs(alpha) * sab + m_in)
            return [_product_bound(c, r, abs(alpha) * sab, k, extra)], [abs(alpha) * sab + m_in]
        if name == "linear":
            w = c.a["weight"]
            sab = _abs_call(c, mpsim.matmul, a, np.swapaxes(w, -1, -2))
            k = w.shape[-1]
            bias = c.a.get("bias")
            extra = 0.0 if bias is None else c.m.u * (sab + np.abs(bias)) + \
                _bias_rounding(c, r, bias)
            return [_product_bound(c, r, sab, k, extra)], [sab]
        sab = _abs_call(c, mpsim.matmul, a, b)
        k = a.shape[-1]
        return [_product_bound(c, r, sab, k)], [sab]
    return bound


def _vector_product(a_name, b_name, lead_arg=None):
    """dot, vdot, mv, inner, vecdot, addmv, addr, addbmm: one golden chain of exact products
    per output (docs/ops.md), bounded as matmul's with sum |a||b| (float64 NumPy) and, for the
    add forms, beta * input and alpha's rounding as addmm's."""
    def bound(c):
        (r,) = c.golden
        a, b = np.abs(c.a[a_name]), np.abs(c.a[b_name])
        name = c.op
        if name in ("dot", "vdot"):
            sab, k = np.sum(a * b), a.shape[-1]
        elif name in ("mv", "addmv"):
            sab, k = a @ b, a.shape[-1]
        elif name == "inner":
            if a.ndim == 0 or b.ndim == 0:
                return [c.m.u * np.abs(r)], [np.abs(r)]
            sab, k = np.tensordot(a, b, axes=([-1], [-1])), a.shape[-1]
        elif name == "linalg_vecdot":
            d = c.a.get("dim", -1)
            sab, k = np.sum(a * b, axis=d), np.broadcast_shapes(a.shape, b.shape)[d]
        elif name == "addr":
            sab, k = np.multiply.outer(a, b), 1
        else:  # addbmm
            sab, k = np.sum(a @ b, axis=0), a.shape[0] * a.shape[-1]
        sab = np.broadcast_to(sab, np.shape(r))
        if lead_arg is None:
            return [_product_bound(c, r, sab, k)], [sab]
        alpha, beta = abs(c.a.get("alpha", 1)), abs(c.a.get("beta", 1))
        m_in = np.broadcast_to(beta * np.abs(c.a[lead_arg]), np.shape(r))
        extra = c.m.u * (alpha * sab + m_in)
        return [_product_bound(c, r, alpha * sab, k, extra)], [alpha * sab + m_in]
    return bound


def _conv(transposed):
    def bound(c):
        import mpsim
        (r,) = c.golden
        x, w = c.a["input"], c.a["weight"]
        kw = {k: c.a[k] for k in ("stride", "padding", "dilation", "groups") if k in c.a}
        if transposed:
            kw["output_padding"] = c.a.get("output_padding", 0)
            sab = _abs_call(c, mpsim.conv_transpose2d, x, w, None, **kw)
            k = w.shape[0] // c.a.get("groups", 1) * w.shape[2] * w.shape[3]
        else:
            sab = _abs_call(c, mpsim.conv2d, x, w, None, **kw)
            k = w.shape[1] * w.shape[2] * w.shape[3]
        bias = c.a.get("bias")
        extra = 0.0
        if bias is not None:
            b = np.reshape(bias, (-1,) + (1,) * 2)
            extra = c.m.u * (sab + np.abs(b)) + _bias_rounding(c, r, b)
        return [_product_bound(c, r, sab, k, extra)], [sab]
    return bound


def _attention_core(c, q, k, v, mask, causal, scale, out):
    """softmax(q k^T scale + mask) v, per element of `out` ([..., L, Ev])."""
    E, S = q.shape[-1], k.shape[-2]
    s = np.einsum("...le,...se->...ls", q, k) * scale
    sab = np.einsum("...le,...se->...ls", np.abs(q), np.abs(k)) * abs(scale)
    if mask is not None and mask.dtype == bool:
        s = np.where(mask, s, -np.inf)
    elif mask is not None:
        s = s + mask
    if causal:
        keep = np.tril(np.ones((q.shape[-2], S), dtype=bool))
        s = np.where(keep, s, -np.inf)
    mx = np.max(s, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - mx)
        p = e / np.sum(e, axis=-1, keepdims=True)
    p = np.nan_to_num(p)
    # the scores' error: the q k^T product, the scale, the mask's add
    d_s = c.m.gamma_dot(E) * sab + 2 * c.m.u * np.abs(np.where(np.isfinite(s), s, 0))
    d_s = np.where(np.isfinite(s), d_s, 0.0)
    d_max = np.max(d_s + c.m.u * np.abs(np.where(np.isfinite(s), s - mx, 0)), axis=-1,
                   keepdims=True)
    pv = np.einsum("...ls,...se->...le", p, np.abs(v))
    # sum_j p_j |v_j - o| <= sum_j p_j |v_j| + |o| (the exact spread would take L S E memory)
    spread = pv + np.abs(out)
    # 16-bit inputs: the probabilities are rounded to the input's format before the product.
    u_p = c.m.u if c.input_format == c.m.math else 2.0 ** -{"float16": 11, "bfloat16": 8}.get(
        c.input_format, 24)
    rel = 2 * c.m.ulps("exp") * c.m.u + c.m.gamma_sum(S) + 2 * c.m.u + u_p + c.m.gamma_dot(S)
    return 2 * d_max * spread + rel * pv + c.m.u * np.abs(out)


def _sdpa(c):
    q, k, v = c.a["query"], c.a["key"], c.a["value"]
    scale = c.a.get("scale")
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    mask = c.a.get("attn_mask")
    if mask is not None and c.mask_is_bool:
        mask = mask.astype(bool)
    (o,) = c.golden
    return [_attention_core(c, q, k, v, mask, c.a.get("is_causal", False), scale, o)], [0.0]


def _mha(c):
    (o,) = c.golden
    query, key = c.a["query"], c.a.get("key")
    if key is None:
        q, k, v = (np.moveaxis(query[..., i, :], 1, 2) for i in range(3))  # [B, H, S, D]
    else:
        k, v = (np.moveaxis(key[..., i, :], 1, 2) for i in range(2))
        B, L = query.shape[:2]
        q = np.moveaxis(query.reshape(B, L, k.shape[1], k.shape[-1]), 1, 2)
    scale = c.a.get("scale")
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    B, H, L, D = q.shape
    out = np.moveaxis(o.reshape(B, L, H, D), 1, 2)
    b = _attention_core(c, q, k, v, None, False, scale, out)
    return [np.moveaxis(b, 1, 2).reshape(o.shape)], [0.0]


# ---- pooling, resizing, creation ---------------------------------------------------------

def _avg_pool(adaptive):
    def bound(c):
        import mpsim
        (r,) = c.golden
        x = c.a["input"]
        if adaptive:
            s = _abs_call(c, mpsim.adaptive_avg_pool2d, x, output_size=c.a["output_size"])
            osz = np.atleast_1d(c.a["output_size"])
            oh, ow = (osz[0], osz[-1])
            k = (math.ceil(x.shape[-2] / oh) + 1) * (math.ceil(x.shape[-1] / ow) + 1)
        else:
            kw = {n: c.a[n] for n in ("kernel_size", "stride", "padding", "ceil_mode",
                                      "count_include_pad", "divisor_override") if n in c.a}
            s = _abs_call(c, mpsim.avg_pool2d, x, **kw)
            ks = np.atleast_1d(c.a["kernel_size"])
            k = int(ks[0] * ks[-1])
        return [c.m.gamma_sum(k) * s + 2 * c.m.u * np.abs(r)], [s]
    return bound


def _interpolate(c):
    (r,) = c.golden
    x = c.a["input"]
    mode = c.a.get("mode", "nearest")
    if mode == "nearest":
        return [np.zeros_like(r)], [0.0]
    # bilinear: the source coordinate and the weights in the math format (their error grows with
    # the input's size), four products and three adds; against the plane's largest |value|.
    big = np.max(np.abs(x), axis=(-2, -1), keepdims=True) if x.size else 0.0
    size = max(x.shape[-2], x.shape[-1])
    b = (gamma(8, c.m.u) + 8 * c.m.u * size) * big + c.m.u * np.abs(r)
    return [np.broadcast_to(b, r.shape)], [big]


def _range(c):
    (r,) = c.golden
    n = r.size
    i = np.arange(n, dtype=np.float64)
    if c.op == "arange":
        start, step = (0.0, 1.0) if c.a.get("end") is None else (c.a["start"], c.a["step"])
        if c.a.get("end") is None:
            step = 1.0
        b = 2 * c.m.u * (abs(start) + np.abs(i * step)) + c.m.u * np.abs(r)
    else:
        start, end = c.a["start"], c.a["end"]
        steps = c.a["steps"]
        step = (end - start) / max(steps - 1, 1)
        # start + i step, or end - (steps - 1 - i) step from the other end: as large as either
        b = 2 * c.m.u * (max(abs(start), abs(end)) + np.abs(i * step) + abs(steps * step)) \
            + c.m.u * np.abs(r)
        u_out = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}.get(c.out_format, 0.0)
        # PyTorch's CUDA linspace computes a 16-bit result's step, product and sum in that
        # dtype: three more roundings of the output's format
        b = b + u_out * (2 * (np.abs(i * step) + abs(steps * step)) + np.abs(r))
    return [b], [0.0]


# ---- Stable Diffusion fusions ------------------------------------------------------------

def _bias_add(c):
    (r,) = c.golden
    s1 = c.a["input"] + c.a["bias"]
    return [c.m.u * (np.abs(s1) + np.abs(r))], [0.0]


def _bias_split_gelu(c):
    (r,) = c.golden
    h = c.a["input"] + c.a["bias"]
    a, g = np.split(h, 2, axis=-1)
    inner = _Sub(c, {"input": g, "approximate": "none"}, [np.vectorize(
        lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))), otypes=[np.float64])(g)
        if g.size else g])
    (bg,), _ = _unary("gelu")(inner)
    z = g / math.sqrt(2)
    slope = np.abs(0.5 * (1 + np.vectorize(math.erf, otypes=[np.float64])(z)) +
                   g * np.exp(-z * z) / math.sqrt(2 * math.pi)) if g.size else g
    gel = inner.golden[0]
    d_g = bg + slope * c.m.u * np.abs(g)  # h's rounding through gelu's slope
    return [np.abs(a) * d_g + np.abs(gel) * c.m.u * np.abs(a) + c.m.u * np.abs(r)], [0.0]


def _skip_layer_norm(c):
    x, skip = c.a["input"], c.a["skip"]
    bias = c.a.get("bias")
    s = x + skip if bias is None else x + skip + bias
    d_s = c.m.u * np.abs(s) * (1 if bias is None else 2)
    y_hat, d = _normalized(c, s, (s.ndim - 1,), s.shape[-1], c.a["eps"])
    n = s.shape[-1]
    var = np.var(s, axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(var + c.a["eps"])
    # the rounded sum through the normalization: its own error and its effect on mean and var
    d = d + rstd * (d_s + np.sum(d_s, axis=-1, keepdims=True) / n) \
        + np.abs(y_hat) * rstd * rstd * np.sum(np.abs(s - np.mean(s, -1, keepdims=True)) * d_s,
                                              axis=-1, keepdims=True) / n
    y = _affine(c, y_hat, d, c.a["gamma"], c.a.get("beta"), (n,))
    if c.a.get("return_sum"):
        return [y, d_s], [0.0, 0.0]
    return [y], [0.0]


def _group_norm_nhwc(c):
    x = np.moveaxis(c.a["input"], -1, 1)  # NCHW view
    b = _group_norm(c, x, c.a["num_groups"], c.a["gamma"], c.a["beta"], c.a["eps"],
                    channels_last=True)
    if c.a.get("activation", "none") == "silu":
        # silu of y: y's error through silu's slope (at most 1.1), silu's own rounding
        (r,) = c.golden
        b = 1.1 * np.moveaxis(b, 1, -1) + (c.m.ulps("exp") * 2 + 3) * c.m.u * np.abs(r)
        return [b], [0.0]
    return [np.moveaxis(b, 1, -1)], [0.0]


class _Sub:
    """A context for a composition's inner op (same model, other arguments)."""

    def __init__(self, c, a, golden):
        self.m, self.a, self.golden, self.op = c.m, a, golden, c.op
        self.input_format, self.out_format = c.input_format, c.out_format


def _fourier(kind, forward, form):
    """The Fourier transforms (docs/verdicts.md, "Fourier transforms"): every output is a sum of
    the (zero-padded or trimmed) inputs times unit twiddles. A radix-2 kernel's log2 M stages
    each add at most about 5u relative to partial sums bounded by S = sum |x| over the
    transformed dims (a complex addition sqrt(2) u, a product by a twiddle sqrt(5) u plus the
    twiddle's own rounding u); a length that is not a power of two counts as the power-of-two
    convolution of Bluestein's algorithm, M >= 2n - 1 (mixed-radix kernels do no worse). So
    |X^ - X| <= (5 log2 M + 2) u S times the norm mode's scale, both parts of each output; c2r
    (irfft, hfft) counts the Hermitian extension, twice the one-sided input's sum."""
    def bound(c):
        a = c.a
        x = np.abs(np.asarray(a["input"]))
        nd = x.ndim
        if form == "1d":
            dims = [a["dim"] % nd]
            given = [a["n"]] if a["n"] is not None else None
        else:
            s_arg, d_arg = a["s"], a["dim"]
            if d_arg is not None:
                dims = [d % nd for d in d_arg]
            elif s_arg is not None:
                dims = list(range(nd - len(s_arg), nd))
            else:
                dims = list(range(nd))
            given = list(s_arg) if s_arg is not None else None
        sizes = []
        for i, d in enumerate(dims):
            n = given[i] if given is not None and given[i] != -1 else x.shape[d]
            if kind == "c2r" and i == len(dims) - 1 and (given is None or given[i] == -1):
                n = 2 * (x.shape[d] - 1)
            sizes.append(n)
        # the input as the transform reads it: trimmed (padding adds zeros, nothing to S)
        index = [slice(None)] * nd
        for i, d in enumerate(dims):
            keep = sizes[i] // 2 + 1 if kind == "c2r" and i == len(dims) - 1 else sizes[i]
            index[d] = slice(0, keep)
        total = np.sum(x[tuple(index)], axis=tuple(dims), keepdims=True)
        if kind == "c2r":
            total = 2 * total
        count = float(np.prod(sizes))
        mode = a.get("norm") or "backward"
        scale = {"backward": 1.0 if forward else 1.0 / count,
                 "forward": 1.0 / count if forward else 1.0,
                 "ortho": 1.0 / math.sqrt(count)}[mode]
        log_m = sum(math.log2(n) if n & (n - 1) == 0 else
                    math.ceil(math.log2(2 * n - 1)) for n in sizes)
        g = c.golden[0]
        big = scale * (total[..., None] if kind != "c2r" else total)
        kernel = np.broadcast_to((5 * log_m + 2) * c.m.u * big, g.shape)
        return [kernel], [np.broadcast_to(max(log_m, 1.0) * big, g.shape)]
    return bound


BOUNDS = {
    **{n: _unary(n) for n in ("exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
                              "tanh", "erf", "sigmoid", "silu", "gelu", "softplus",
                              "reciprocal")},
    "square": _square,
    **{f"fft_{name}{form}": _fourier(kind, forward, "1d" if form == "" else form)
       for name, kind, forward in (("fft", "c2c", True), ("ifft", "c2c", False),
                                   ("rfft", "r2c", True), ("irfft", "c2r", False),
                                   ("hfft", "c2r", True), ("ihfft", "r2c", False))
       for form in ("", "2", "n")},
    **{n: _math(n) for n in MATH_BUDGETS},
    "special_ndtr": _ndtr, "special_log_ndtr": _log_ndtr, "tanhshrink": _tanhshrink,
    "logit": _logit,
    **{n: _binary(n) for n in ("add", "sub", "mul", "div", "pow")},
    **{n: _binary_math(n) for n in ("atan2", "hypot", "remainder", "xlogy", "special_xlog1py",
                                    "logaddexp", "logaddexp2")},
    "leaky_relu": _square,  # x or negative_slope x: one rounding, u |f|
    "diff": _diff,
    **{n: _scan(n) for n in ("cumsum", "cumprod", "logcumsumexp")},
    "round": lambda c: ([np.zeros(np.shape(c.golden[0])) if c.a.get("decimals", 0) == 0 else
                         c.m.u * np.abs(c.golden[0])], [0.0]),  # exact; with decimals the
    # scaling back (a division or product) rounds once
    "softshrink": _square,  # x -+ lambd or 0: one rounding, u |f|
    "kron": _square,  # one product per element: one rounding, u |f|
    "trace": _trace,
    **{n: _scatter for n in ("scatter", "scatter_add", "scatter_reduce", "index_add",
                             "index_reduce", "index_put", "put")},
    "sum": _sum_mean(False), "mean": _sum_mean(True), "prod": _prod,
    "var": _var_std("var"), "std": _var_std("std"), "var_mean": _var_std("var_mean"),
    "norm": _norm, "logsumexp": _logsumexp,
    "softmax": _softmax(False), "log_softmax": _softmax(True),
    "layer_norm": _layer_norm, "group_norm": lambda c: ([_group_norm(c)], [0.0]),
    "rms_norm": _rms_norm, "batch_norm": _batch_norm,
    **{n: _matmul(n) for n in ("matmul", "mm", "bmm", "addmm", "baddbmm", "linear")},
    "dot": _vector_product("input", "other"), "vdot": _vector_product("input", "other"),
    "inner": _vector_product("input", "other"), "mv": _vector_product("input", "vec"),
    "linalg_vecdot": _vector_product("x", "y"),
    "addmv": _vector_product("mat", "vec", "input"),
    "addr": _vector_product("vec1", "vec2", "input"),
    "addbmm": _vector_product("batch1", "batch2", "input"),
    "outer": _square, "ger": _square,  # one product rounded once: u |f|
    "conv2d": _conv(False), "conv_transpose2d": _conv(True),
    "scaled_dot_product_attention": _sdpa, "multi_head_attention": _mha,
    "avg_pool2d": _avg_pool(False), "adaptive_avg_pool2d": _avg_pool(True),
    "interpolate": _interpolate, "arange": _range, "linspace": _range,
    "bias_add": _bias_add, "bias_split_gelu": _bias_split_gelu,
    "skip_layer_norm": _skip_layer_norm, "group_norm_nhwc": _group_norm_nhwc,
}
