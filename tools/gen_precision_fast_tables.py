#!/usr/bin/python3
"""Generates kernels_simd/precision_fast_tables.h: the float polynomials of the Precision::Fast
unary kernels (Note [fast float unary] in kernels_simd/unary_fast.cc).

Each polynomial is the least-squares fit, in relative error, at 600 Chebyshev nodes of its
interval (function values from 30-digit mpmath; the fit by tools/mpfit.py, the same on every
machine), rounded to float; the constant term of the
gelu pieces is kept as a float pair (hi + lo). The script measures the relative error of the
rounded coefficients on the nodes and prints it into the header beside each table; the fast
kernels' error budgets quote these numbers. Run:
    /usr/bin/python3 tools/gen_precision_fast_tables.py > kernels_simd/precision_fast_tables.h
"""
import math

import mpmath as mp
import numpy as np

from mpfit import chebyshev_nodes as nodes, fit_powers

mp.mp.dps = 30


def poly(c, x):
    """sum_j c[j] x^j in mpmath, c a dict {j: value} or a list."""
    items = c.items() if isinstance(c, dict) else enumerate(c)
    x = mp.mpf(x)
    return mp.fsum(mp.mpf(v) * x**j for j, v in items)


def f32(v):
    return float(np.float32(v))


def hexf(v):
    return float.hex(f32(v)) + "f"


def log1p_tail():
    """Q(f) with log1p(f) = f + f^2 Q(f) on the reduced range [sqrt(1/2) - 1, sqrt(2) - 1]."""
    f = [v for v in nodes(math.sqrt(0.5) - 1, math.sqrt(2) - 1) if abs(v) > 1e-9]
    q = [(mp.log1p(v) - v) / mp.mpf(v) ** 2 for v in f]
    c = fit_powers(f, q, range(10))
    c = [f32(c[j]) for j in range(10)]
    c[0] = -0.5
    err = max(abs(mp.mpf(v) ** 2 * (poly(c, v) - qv) / mp.log1p(v)) for v, qv in zip(f, q))
    return c, float(mp.log(err, 2))


def mills(z):
    """Q(z) e^(z^2/2), Q(z) = P(N(0,1) > z) = erfc(z/sqrt2)/2."""
    z = mp.mpf(z)
    return mp.erfc(z / mp.sqrt(2)) / 2 * mp.exp(z * z / 2)


GELU_EDGES = [0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15]
GELU_DEG = 7


def gelu_pieces():
    mids, hi, lo, rest, worst = [], [], [], [[] for _ in range(GELU_DEG)], -1e9
    for a, b in zip(GELU_EDGES[:-1], GELU_EDGES[1:]):
        mid = (a + b) / 2
        u = [v - mid for v in nodes(a, b)]
        r = [mills(mp.mpf(v) + mid) for v in u]
        c = fit_powers(u, r, range(GELU_DEG + 1), weights=[1 / v for v in r])
        c0_hi = f32(c[0])
        c0_lo = f32(c[0] - c0_hi)
        cf = [c0_hi] + [f32(c[j]) for j in range(1, GELU_DEG + 1)]
        err = max(abs((poly(cf, v) + c0_lo) / rv - 1) for v, rv in zip(u, r))
        worst = max(worst, float(mp.log(err, 2)))
        mids.append(mid)
        hi.append(c0_hi)
        lo.append(c0_lo)
        for j in range(GELU_DEG):
            rest[j].append(cf[j + 1])
    return mids, hi, lo, rest, worst


def log_phi32(x):
    """32 log2(Phi(x)): Phi(x) = P(N(0,1) <= x) = erfc(-x/sqrt2)/2."""
    x = mp.mpf(x)
    return mp.log(mp.erfc(-x / mp.sqrt(2)) / 2) * 32 / mp.log(2)


GELU32_PIECES = range(-16, 16)  # piece m covers x in [m/2 - 1/4, m/2 + 1/4]
GELU32_DEG = 5
GELU32_GRID = 2.0**-15  # kGelu32B0Hi lies on this grid (the reduction's r1 is then exact)


def gelu32_pieces():
    """B(m/2 + u) = 32 log2 Phi(m/2 + u) on u in [-1/4, 1/4], table slot m mod 32: B0 and B1 as
    float pairs (B0's hi on a 2^-15 grid), B2..B5 floats, each rounded coefficient followed by a
    refit of the higher ones. Returns the tables and the largest error in natural log units (the
    relative error it puts on Phi)."""
    tabs = {k: [0.0] * 32 for k in ["b0h", "b0l", "b1h", "b1l"] + [f"b{i}" for i in range(2, GELU32_DEG + 1)]}
    worst = -1e9
    for m in GELU32_PIECES:
        u = nodes(-0.25, 0.25)
        exact = [log_phi32(mp.mpf(m) / 2 + mp.mpf(v)) for v in u]
        fixed = {}  # power -> value already rounded (the sum of a pair's parts)
        slot = m % 32

        def fit():
            free = [k for k in range(GELU32_DEG + 1) if k not in fixed]
            rhs = [e - poly(fixed, v) for v, e in zip(u, exact)]
            return fit_powers(u, rhs, free)

        if m == 0:
            fixed[0] = -32.0  # B(0) = 32 log2(1/2) exactly: gelu(-0) keeps its sign
            tabs["b0h"][slot], tabs["b0l"][slot] = -32.0, 0.0
        else:
            c0 = fit()[0]
            h = f32(round(f32(c0) / GELU32_GRID) * GELU32_GRID)
            l = f32(c0 - h)
            fixed[0] = h + l
            tabs["b0h"][slot], tabs["b0l"][slot] = h, l
        c1 = fit()[1]
        h = f32(c1)
        l = f32(c1 - h)
        fixed[1] = h + l
        tabs["b1h"][slot], tabs["b1l"][slot] = h, l
        for k in range(2, GELU32_DEG + 1):
            fixed[k] = f32(fit()[k])
            tabs[f"b{k}"][slot] = fixed[k]
        err = max(abs(poly(fixed, v) - e) for v, e in zip(u, exact)) * mp.log(2) / 32
        worst = max(worst, float(mp.log(err, 2)))
    return tabs, worst


SIG32_PIECES = range(-16, 16)  # piece m covers x in [m/2 - 1/4, m/2 + 1/4]; the last [7.25, 9]
SIG32_LAST = 9.0
SIG32_DEG = 6


def sigmoid32_pieces():
    """sigmoid(m/2 + u) on u in [-1/4, 1/4] (piece 15: [-1/4, 1.5]), slot m mod 32: c0 and c1 as
    float pairs (c0 = 1/2 exactly at m = 0), c2..c6 floats, each rounded coefficient followed by
    a refit of the higher ones, in relative error. Returns the tables and the largest relative
    error of the rounded coefficients."""
    tabs = {k: [0.0] * 32 for k in ["c0h", "c0l", "c1h", "c1l"] + [f"c{i}" for i in range(2, SIG32_DEG + 1)]}
    worst = -1e9
    for m in SIG32_PIECES:
        u = nodes(-0.25, SIG32_LAST - 7.5 if m == SIG32_PIECES[-1] else 0.25)
        exact = [1 / (1 + mp.exp(-(mp.mpf(m) / 2 + mp.mpf(v)))) for v in u]
        w = [1 / e for e in exact]
        fixed = {}
        slot = m % 32

        def fit():
            free = [k for k in range(SIG32_DEG + 1) if k not in fixed]
            rhs = [e - poly(fixed, v) for v, e in zip(u, exact)]
            return fit_powers(u, rhs, free, weights=w)

        for k in (0, 1):
            c = 0.5 if (m, k) == (0, 0) else fit()[k]  # sigmoid(0) = 1/2 exactly
            h = f32(c)
            l = f32(c - h)
            fixed[k] = h + l
            tabs[f"c{k}h"][slot], tabs[f"c{k}l"][slot] = h, l
        for k in range(2, SIG32_DEG + 1):
            fixed[k] = f32(fit()[k])
            tabs[f"c{k}"][slot] = fixed[k]
        err = max(abs((poly(fixed, v) - e) / e) for v, e in zip(u, exact))
        worst = max(worst, float(mp.log(err, 2)))
    return tabs, worst


def sincos_pi16_tables():
    """sin(j pi/16) and cos(j pi/16), j = 0..31, as float pairs hi + lo (sin(0) = sin(pi) = 0
    and cos(pi/2) = cos(3 pi/2) = 0 exactly)."""
    out = {"sh": [], "sl": [], "ch": [], "cl": []}
    for j in range(32):
        for key, v in (("s", mp.sin(mp.pi * j / 16)), ("c", mp.cos(mp.pi * j / 16))):
            v = mp.mpf(0) if abs(v) < mp.mpf(2) ** -90 else v
            h = f32(float(v))
            out[key + "h"].append(h)
            out[key + "l"].append(f32(float(v - mp.mpf(h))))
    return out


def exp2_32_table():
    """2^(j/32), j = 0..31, as float pairs hi + lo."""
    hi, lo = [], []
    for j in range(32):
        v = mp.mpf(2) ** (mp.mpf(j) / 32)
        h = f32(float(v))
        hi.append(h)
        lo.append(f32(float(v - mp.mpf(h))))
    return hi, lo


def exp2_32_poly():
    """2^(r/32) - 1 = r (a1 + a2 r + a3 r^2) on |r| <= 0.52: a1..a3 and the relative error."""
    r = [v for v in nodes(-0.52, 0.52) if abs(v) > 1e-9]
    exact = [mp.mpf(2) ** (mp.mpf(v) / 32) - 1 for v in r]
    c = fit_powers(r, exact, (1, 2, 3), weights=[1 / e for e in exact])
    c = [f32(c[j]) for j in (1, 2, 3)]
    err = max(abs(poly([0] + c, v) / e - 1) * abs(e) / (1 + e) for v, e in zip(r, exact))
    return c, float(mp.log(err, 2))


EXPM1_SMALL = 0.36  # |x| below this: expm1(x) = x + x^2 P(x) (the table path cancels there)


def expm1_small(deg):
    """P with expm1(x) = x + x^2 P(x) on |x| <= EXPM1_SMALL; error relative to expm1(x)."""
    x = [v for v in nodes(-EXPM1_SMALL, EXPM1_SMALL) if abs(v) > 1e-9]
    exact = [mp.expm1(v) for v in x]
    p = [(e - v) / mp.mpf(v) ** 2 for v, e in zip(x, exact)]
    c = fit_powers(x, p, range(deg + 1), weights=[mp.mpf(v) ** 2 / e for v, e in zip(x, exact)])
    c = [f32(c[j]) for j in range(deg + 1)]
    c[0] = 0.5
    err = max(abs(mp.mpf(v) ** 2 * (poly(c, v) - pv) / e) for v, pv, e in zip(x, p, exact))
    return c, float(mp.log(err, 2))


def table(name, values):
    return f"alignas(64) inline constexpr float {name}[{len(values)}] = {{{', '.join(hexf(v) for v in values)}}};"


def exp2_table():
    """2^(j/16), j = 0..15, as float pairs hi + lo."""
    hi, lo = [], []
    for j in range(16):
        v = mp.mpf(2) ** (mp.mpf(j) / 16)
        h = f32(float(v))
        hi.append(h)
        lo.append(f32(float(v - mp.mpf(h))))
    return hi, lo


def main():
    logc, log_err = log1p_tail()
    exp_hi, exp_lo = exp2_table()
    mids, hi, lo, rest, gelu_err = gelu_pieces()
    print("// Generated by tools/gen_precision_fast_tables.py: do not edit by hand.")
    print("// Float polynomials of the Precision::Fast unary kernels (Note [fast float unary],")
    print("// kernels_simd/unary_fast.cc).")
    print("#pragma once\n")
    print("namespace mpsim::simd {\n")
    print("// 2^(j/16) = kExp2Hi[j] + kExp2Lo[j] (|error| < 2^-48 relative), j = 0..15.")
    print(table("kExp2Hi", exp_hi))
    print(table("kExp2Lo", exp_lo))
    print()
    print("// log1p(f) = f + f^2 Q(f) on [sqrt(1/2) - 1, sqrt(2) - 1]: coefficients of f^0 .. f^9 of Q.")
    print(f"// Largest relative error in log1p(f) of the rounded coefficients: 2^{log_err:.2f}.")
    print(f"inline constexpr float kFastLogQ[10] = {{{', '.join(hexf(v) for v in logc)}}};\n")
    print("// Q(z) e^(z^2/2) (Q: the upper normal tail) on 16 pieces of [0, 15): piece j covers")
    print(f"// [{', '.join(str(e) for e in GELU_EDGES)}] (j and j + 1), u = z - kGeluMid[j];")
    print(f"// degree {GELU_DEG}, constant term hi + lo. Largest relative error of the rounded coefficients: 2^{gelu_err:.2f}.")
    print(table("kGeluMid", mids))
    print(table("kGeluC0Hi", hi))
    print(table("kGeluC0Lo", lo))
    for j in range(GELU_DEG):
        print(table(f"kGeluC{j + 1}", rest[j]))
    e32_hi, e32_lo = exp2_32_table()
    e32_poly, e32_err = exp2_32_poly()
    g32, g32_err = gelu32_pieces()
    print()
    print("// 2^(j/32) = kExp2x32Hi[j] + kExp2x32Lo[j], j = 0..31, and 2^(r/32) - 1 = r (a1 + a2 r + a3 r^2)")
    print(f"// on |r| <= 0.52 (relative error of the rounded coefficients in 2^(r/32): 2^{e32_err:.2f}).")
    print(table("kExp2x32Hi", e32_hi))
    print(table("kExp2x32Lo", e32_lo))
    print(f"inline constexpr float kExp2x32Poly[3] = {{{', '.join(hexf(v) for v in e32_poly)}}};\n")
    print("// B(m/2 + u) = 32 log2 Phi(m/2 + u) (Phi: the normal distribution function) on pieces")
    print(f"// m = {GELU32_PIECES.start}..{GELU32_PIECES.stop - 1}, u in [-1/4, 1/4], in slot m mod 32; degree {GELU32_DEG},")
    print("// B0 and B1 as pairs hi + lo with B0's hi a multiple of 2^-15, B(0) = -32 exactly. Largest")
    print(f"// error of the rounded coefficients in natural log units (relative, in Phi): 2^{g32_err:.2f}.")
    em1, em1_err = expm1_small(7)
    print()
    print(f"// expm1(x) = x + x^2 P(x) on |x| <= {EXPM1_SMALL}: coefficients of x^0 .. x^7 of P.")
    print(f"// Largest relative error in expm1(x) of the rounded coefficients: 2^{em1_err:.2f}.")
    print(f"inline constexpr float kFastExpm1Small = {hexf(EXPM1_SMALL)};")
    print(f"inline constexpr float kFastExpm1P[8] = {{{', '.join(hexf(v) for v in em1)}}};\n")
    names = {"b0h": "kGelu32B0Hi", "b0l": "kGelu32B0Lo", "b1h": "kGelu32B1Hi", "b1l": "kGelu32B1Lo"}
    for key, values in g32.items():
        print(table(names.get(key, f"kGelu32B{key[1:]}"), values))
    s32, s32_err = sigmoid32_pieces()
    print()
    print(f"// sigmoid(m/2 + u) on pieces m = {SIG32_PIECES.start}..{SIG32_PIECES.stop - 1}, u in [-1/4, 1/4] (the last piece: u in")
    print(f"// [-1/4, {SIG32_LAST - 7.5}]), slot m mod 32; degree {SIG32_DEG}, c0 and c1 as pairs hi + lo, c0 = 1/2 exactly at m = 0.")
    print(f"// Largest relative error of the rounded coefficients: 2^{s32_err:.2f}.")
    names = {"c0h": "kSig32C0Hi", "c0l": "kSig32C0Lo", "c1h": "kSig32C1Hi", "c1l": "kSig32C1Lo"}
    for key, values in s32.items():
        print(table(names.get(key, f"kSig32C{key[1:]}"), values))
    sc = sincos_pi16_tables()
    print()
    print("// sin(j pi/16) = kSinPi16Hi[j] + kSinPi16Lo[j] and cos(j pi/16) likewise, j = 0..31 (|error| < 2^-48")
    print("// relative).")
    names = {"sh": "kSinPi16Hi", "sl": "kSinPi16Lo", "ch": "kCosPi16Hi", "cl": "kCosPi16Lo"}
    for key, values in sc.items():
        print(table(names[key], values))
    print("\n}  // namespace mpsim::simd")


if __name__ == "__main__":
    main()
