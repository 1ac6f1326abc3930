"""mpsim.special: torch.special's functions under their torch names (docs/ops.md, "Math
functions"). Each is an op of mpsim (the name in brackets where it differs), on cpu and mps."""

from . import _C

bessel_j0 = _C.special_bessel_j0
bessel_j1 = _C.special_bessel_j1
bessel_y0 = _C.special_bessel_y0
bessel_y1 = _C.special_bessel_y1
digamma = psi = _C.digamma
entr = _C.special_entr
erf = _C.erf
erfc = _C.erfc
erfcx = _C.special_erfcx
erfinv = _C.erfinv
exp2 = _C.exp2
expit = _C.sigmoid
expm1 = _C.expm1
gammaln = _C.lgamma
i0 = modified_bessel_i0 = _C.i0
i0e = _C.special_i0e
i1 = modified_bessel_i1 = _C.special_i1
i1e = _C.special_i1e
log1p = _C.log1p
log_ndtr = _C.special_log_ndtr
log_softmax = _C.log_softmax
logit = _C.logit
logsumexp = _C.logsumexp
ndtr = _C.special_ndtr
ndtri = _C.special_ndtri
sinc = _C.sinc
softmax = _C.softmax
spherical_bessel_j0 = _C.special_spherical_bessel_j0
modified_bessel_k0 = _C.special_modified_bessel_k0
modified_bessel_k1 = _C.special_modified_bessel_k1
scaled_modified_bessel_k0 = _C.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _C.special_scaled_modified_bessel_k1
gammainc = _C.igamma
gammaincc = _C.igammac


def _number_first(op, name, doc, second="other"):
    """op(input, second) where input may also be a number (a tensor of the second's shape);
    the second argument by position or by its torch name."""
    def call(input, *args, **kwargs):
        other = args[0] if args else kwargs.pop(second)
        if args[1:] or kwargs:
            raise _C.SignatureError(f"[{name}] takes (input, {second})")
        if not isinstance(input, _C.Tensor):
            dtype = other.dtype if other.dtype.is_floating_point else _C.float32
            input = _C.full(list(other.shape), float(input), dtype, other.device)
        return op(input, other)
    call.__name__, call.__doc__ = name, doc
    return call


zeta = _number_first(_C.special_zeta, "zeta", "The Hurwitz zeta function sum_k (k + other)^-input"
                     " (input may be a number).")


def _polynomial(op):
    name = op.__name__.replace("special_", "")
    return _number_first(op, name, f"{op.__doc__} (x may be a number)", "n")


chebyshev_polynomial_t = _polynomial(_C.special_chebyshev_polynomial_t)
chebyshev_polynomial_u = _polynomial(_C.special_chebyshev_polynomial_u)
chebyshev_polynomial_v = _polynomial(_C.special_chebyshev_polynomial_v)
chebyshev_polynomial_w = _polynomial(_C.special_chebyshev_polynomial_w)
shifted_chebyshev_polynomial_t = _polynomial(_C.special_shifted_chebyshev_polynomial_t)
shifted_chebyshev_polynomial_u = _polynomial(_C.special_shifted_chebyshev_polynomial_u)
shifted_chebyshev_polynomial_v = _polynomial(_C.special_shifted_chebyshev_polynomial_v)
shifted_chebyshev_polynomial_w = _polynomial(_C.special_shifted_chebyshev_polynomial_w)
hermite_polynomial_h = _polynomial(_C.special_hermite_polynomial_h)
hermite_polynomial_he = _polynomial(_C.special_hermite_polynomial_he)
laguerre_polynomial_l = _polynomial(_C.special_laguerre_polynomial_l)
legendre_polynomial_p = _polynomial(_C.special_legendre_polynomial_p)


def polygamma(n, input):
    """The n-th derivative of digamma: digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1,
    input), evaluated in float64 (on the cpu) and rounded once."""
    import math
    if n < 0:
        raise _C.InvalidArgumentError("[polygamma] polygamma(n, x) does not support negative n")
    if n == 0:
        return _C.digamma(input)
    x = input.to("cpu").to(_C.float64)
    dtype = input.dtype if input.dtype.is_floating_point else _C.float32
    z = _C.special_zeta(_C.full(list(x.shape), float(n + 1), _C.float64, "cpu"), x)
    return _C.mul(z, (-1.0) ** (n + 1) * math.factorial(n)).to(dtype).to(input.device)


# Double-double arithmetic (pairs hi + lo of float64 NumPy arrays, about 106 bits): Dekker's
# splitting and the error-free sum and product, for airy_ai's power series.
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = 134217729.0 * a  # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _dd_mul(ah, al, bh, bl):
    p = ah * bh
    a1, a2 = _split(ah)
    b1, b2 = _split(bh)
    e = ((a1 * b1 - p) + a1 * b2 + a2 * b1) + a2 * b2
    e = e + (ah * bl + al * bh)
    s = p + e
    return s, e - (s - p)


def _dd_add(ah, al, bh, bl):
    s, e = _two_sum(ah, bh)
    e = e + (al + bl)
    t = s + e
    return t, e - (t - s)


def _airy_series(z):
    """Ai(z) for |z| <= 8 by its Maclaurin series c1 f(z) - c2 g(z) in double-double: the terms
    reach about 10^7 times the result at -8, so float64 would lose 7 of its 16 digits; 106 bits
    keep more than float64's 53 (each coefficient a rational rounded to double-double once)."""
    import fractions

    import numpy as np
    t_hi, t_lo = _dd_mul(*_dd_mul(z, np.zeros_like(z), z, np.zeros_like(z)), z,
                         np.zeros_like(z))  # z^3
    terms = 40
    a, b = [fractions.Fraction(1)], [fractions.Fraction(1)]
    for k in range(1, terms):
        a.append(a[-1] / ((3 * k - 1) * (3 * k)))
        b.append(b[-1] / ((3 * k) * (3 * k + 1)))

    def dd(q):
        hi = float(q)
        return hi, float(q - fractions.Fraction(hi))

    def horner(coef):
        h, lo = dd(coef[-1])
        h, lo = np.full_like(z, h), np.full_like(z, lo)
        for c in reversed(coef[:-1]):
            ch, cl = dd(c)
            h, lo = _dd_mul(h, lo, t_hi, t_lo)
            h, lo = _dd_add(h, lo, np.full_like(z, ch), np.full_like(z, cl))
        return h, lo

    f = horner(a)
    g = _dd_mul(*horner(b), z, np.zeros_like(z))
    # Ai(0) = 3^(-2/3) / Gamma(2/3) and -Ai'(0) = 3^(-1/3) / Gamma(1/3), as double-doubles
    c1 = (0.3550280538878172, 2.05233632436212e-17)
    c2 = (0.2588194037928068, -2.522243111610832e-17)
    p = _dd_mul(np.full_like(z, c1[0]), np.full_like(z, c1[1]), *f)
    q = _dd_mul(np.full_like(z, c2[0]), np.full_like(z, c2[1]), *g)
    h, lo = _dd_add(p[0], p[1], -q[0], -q[1])
    return h + lo


def airy_ai(input):
    """The Airy function Ai(x) in float64 (NumPy, on the cpu), rounded once: its power series
    in double-double for -8 <= x <= 2 (the cancellation of its terms at -8 costs 7 of its 32
    digits), (1 / pi) sqrt(x / 3) K_(1/3)(2/3 x^(3/2)) above 2 (K by the trapezoidal rule of
    its integral, as modified_bessel_k0), the asymptotic expansion in 2/3 |x|^(3/2) below -8."""
    import math

    import numpy as np
    from . import tensor
    x = input.to("cpu").to(_C.float64).numpy()
    out = np.full(x.shape, np.nan)
    mid = (x >= -8) & (x <= 2)
    out[mid] = _airy_series(x[mid])
    hi = x > 2
    for i in np.flatnonzero(hi):
        xi = x.flat[i]
        zeta = 2.0 / 3.0 * xi ** 1.5
        if zeta > 800:
            out.flat[i] = 0.0
            continue
        h, total, t = min(1.0 / 16, 0.25 / math.sqrt(zeta)), 0.5, 0.0
        for j in range(1, 100000):
            t = j * h
            term = math.exp(-zeta * (math.cosh(t) - 1.0)) * math.cosh(t / 3.0)
            total += term
            if term < 2.0 ** -60 * total:
                break
        out.flat[i] = math.sqrt(xi / 3.0) / math.pi * math.exp(-zeta) * total * h
    lo = x < -8
    zz = -x[lo]
    zeta = 2.0 / 3.0 * zz ** 1.5
    u = [1.0]
    for k in range(1, 30):
        u.append(u[-1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k))
    p = np.zeros_like(zeta)
    q = np.zeros_like(zeta)
    for k in range(0, 14):
        p += (-1) ** k * u[2 * k] / zeta ** (2 * k)
        q += (-1) ** k * u[2 * k + 1] / zeta ** (2 * k + 1)
    phase = zeta + math.pi / 4
    out[lo] = (np.sin(phase) * p - np.cos(phase) * q) / (math.sqrt(math.pi) * zz ** 0.25)
    out[np.isposinf(x)] = 0.0
    out[np.isneginf(x)] = 0.0
    dtype = input.dtype if input.dtype.is_floating_point else _C.float32
    return tensor(out).to(dtype).to(input.device)
xlog1py = _C.special_xlog1py
