#!/usr/bin/python3
"""Prints the approximations of the double-lane sin, cos and tan (Note [correctly rounded float
lanes], sin and cos, and tan, kernels_simd/unary_cr-inl.h).

sin r = r (1 + r^2 G(r^2)), G(s) = (sin(sqrt s) - sqrt s) / s^(3/2), and cos r = 1 + r^2 C(r^2),
C(s) = (cos(sqrt s) - 1)/s, on |r| <= R: a Chebyshev interpolant at 60 digits (mpmath) in s,
converted to monomials, each coefficient rounded to double; then the maximum relative error of
the approximation against sin r (cos r), measured on 4001 points.

tan r = r P(r^2) / Q(r^2), P of degree M, Q of degree N with Q(0) = 1, on |r| <= R: the minimax
rational function for relative error (Remez: the linearized system on M + N + 2 points, its
error's extrema on 2001 points of [0, R^2] as the next points), each coefficient rounded to
double; then the maximum relative error of the rounded one, measured on 20001 points.

Usage: /usr/bin/python3 tools/gen_sin_lanes.py sin|cos DEGREE R
       /usr/bin/python3 tools/gen_sin_lanes.py tan M N R
  sin and cos: sin 5 1.5708 (pi/2 and the reduction's slack); tan: tan 2 3 0.7854
"""
import sys

import mpmath as mp

from gen_asin_lanes import interpolant

mp.mp.dps = 60


def g(s):
    if s == 0:
        return -mp.mpf(1) / 6
    r = mp.sqrt(s)
    return (mp.sin(r) - r) / (s * r)


def c(s):
    if s == 0:
        return -mp.mpf(1) / 2
    return (mp.cos(mp.sqrt(s)) - 1) / s


def horner(coef, s):
    v = mp.mpf(0)
    for k in reversed(coef):
        v = v * s + k
    return v


def tan_over_r(s):
    if s == 0:
        return mp.mpf(1)
    r = mp.sqrt(s)
    return mp.tan(r) / r


def tan_rational(m, n, b, rounds=12):
    """P (degree m) and Q (degree n, Q(0) = 1) minimizing max |P/(Q f) - 1| on s in [0, b],
    f(s) = tan(sqrt s)/sqrt s."""
    count = m + n + 2
    points = [b / 2 - b / 2 * mp.cos(mp.pi * i / (count - 1)) for i in range(count)]
    q = [mp.mpf(1)] + [mp.mpf(0)] * n
    rel = lambda p, q, s: horner(p, s) / (horner(q, s) * tan_over_r(s)) - 1
    for _ in range(rounds):
        # P(s_i) - f_i Q(s_i) = (-1)^i E f_i Q(s_i), E's factor Q taken from the last solve
        for _ in range(6):
            rows, rhs = [], []
            for i, s in enumerate(points):
                fi = tan_over_r(s)
                rows.append([s ** j for j in range(m + 1)] +
                            [-fi * s ** j for j in range(1, n + 1)] +
                            [-(-1) ** i * fi * horner(q, s)])
                rhs.append(fi)
            sol = mp.lu_solve(mp.matrix(rows), mp.matrix(rhs))
            p = [sol[j] for j in range(m + 1)]
            q = [mp.mpf(1)] + [sol[m + 1 + j] for j in range(n)]
        grid = [b * i / 2000 for i in range(2001)]
        errs = [rel(p, q, s) for s in grid]
        extrema = [0] + [i for i in range(1, 2000)
                         if (errs[i] - errs[i - 1]) * (errs[i + 1] - errs[i]) <= 0] + [2000]
        chosen = []  # alternating in sign, the largest of each run
        for i in extrema:
            if chosen and mp.sign(errs[i]) == mp.sign(errs[chosen[-1]]):
                if abs(errs[i]) > abs(errs[chosen[-1]]):
                    chosen[-1] = i
            else:
                chosen.append(i)
        while len(chosen) > count:
            chosen.pop(0 if abs(errs[chosen[0]]) < abs(errs[chosen[-1]]) else -1)
        if len(chosen) == count:
            points = [grid[i] for i in chosen]
    p = [mp.mpf(float(k)) for k in p]
    q = [mp.mpf(float(k)) for k in q]
    worst = max(abs(rel(p, q, b * i / 20000)) for i in range(20001))
    return p, q, worst


def main_tan(m, n, R):
    b = R * R
    p, q, worst = tan_rational(m, n, b)
    print(f"tan r = r P(r^2)/Q(r^2), P of degree {m}, Q of degree {n}, |r| <= {R}: relative "
          f"error 2^{float(mp.log(worst, 2)):.2f}; sums of |coefficients| R^2j: P "
          f"{float(sum(abs(k) * b ** j for j, k in enumerate(p))):.3f} (P >= "
          f"{float(horner(p, b)):.3f}), Q {float(sum(abs(k) * b ** j for j, k in enumerate(q))):.3f}"
          f" (Q >= {float(horner(q, b)):.3f})")
    print("  p0..p%d: " % m + ", ".join(float(k).hex() for k in p))
    print("  q0..q%d: " % n + ", ".join(float(k).hex() for k in q))


def main():
    if sys.argv[1] == "tan":
        main_tan(int(sys.argv[2]), int(sys.argv[3]), mp.mpf(sys.argv[4]))
        return
    kind, n, R = sys.argv[1], int(sys.argv[2]), mp.mpf(sys.argv[3])
    f = g if kind == "sin" else c
    b = R * R
    coef = interpolant(f, mp.mpf(0), b, n)
    worst = mp.mpf(0)
    for i in range(1, 4001):
        r = R * i / 4000
        p = mp.mpf(0)
        for k in reversed(coef):
            p = p * r * r + k
        approx, exact = (r * (1 + r * r * p), mp.sin(r)) if kind == "sin" else \
            (1 + r * r * p, mp.cos(r))
        worst = max(worst, abs(approx / exact - 1))
    name = "G" if kind == "sin" else "C"
    print(f"{kind}, {name} of degree {n}, |r| <= {R}: relative error "
          f"2^{float(mp.log(worst, 2)):.2f}; sum of |coefficients| R^2j: "
          f"{float(sum(abs(k) * b ** j for j, k in enumerate(coef))):.3f}")
    print(f"  {name.lower()}0..{name.lower()}{n}: " + ", ".join(float(k).hex() for k in coef))


if __name__ == "__main__":
    main()
