#!/usr/bin/env python3
"""Constants of the double exp of the float32 softmax rows (ExpTable16 in
kernels_simd/vec_math-inl.h): 2^(j/16) for j = 0..15, each correctly rounded to double, and a
degree-5 polynomial 1 + r + c2 r^2 + ... + c5 r^5 for exp(r) on |r| <= ln2/32 whose c2..c5 are
fitted for the least maximum relative error (Lawson's iteratively reweighted least squares on
Chebyshev nodes, 40-digit mpmath), then rounded to double. Prints C++ and the measured error.

Run: /usr/bin/python3 tools/gen_exp16_table.py
"""
import mpmath as mp

mp.mp.dps = 40
H = mp.log(2) / 32


def hexd(v):
    return float(v).hex()


def fit():
    n = 400
    xs = [H * mp.cos(mp.pi * (k + 0.5) / n) for k in range(n)]
    # exp(r) = 1 + r + r^2 q(r): fit q of degree 3 to (exp(r) - 1 - r) / r^2, weighted so that
    # the error r^2 (q - target) / exp(r) is the relative error of exp.
    target = [(mp.exp(x) - 1 - x) / x**2 for x in xs]
    scale = [x**2 / mp.exp(x) for x in xs]
    w = [mp.mpf(1)] * n
    coef = None
    for _ in range(60):
        A = mp.matrix(n, 4)
        b = mp.matrix(n, 1)
        for i, x in enumerate(xs):
            s = mp.sqrt(w[i]) * scale[i]
            for j in range(4):
                A[i, j] = s * x**j
            b[i] = s * target[i]
        coef = mp.lu_solve(A.T * A, A.T * b)
        err = [abs(scale[i] * (sum(coef[j] * xs[i]**j for j in range(4)) - target[i]))
               for i in range(n)]
        tot = sum(w[i] * err[i] for i in range(n))
        w = [w[i] * err[i] / tot for i in range(n)]
    return [float(c) for c in coef]


def main():
    table = [mp.power(2, mp.mpf(j) / 16) for j in range(16)]
    c = fit()
    worst = 0
    for k in range(-4000, 4001):
        r = H * k / 4000
        p = 1 + r + r**2 * (mp.mpf(c[0]) + r * (mp.mpf(c[1]) + r * (mp.mpf(c[2]) + r * mp.mpf(c[3]))))
        worst = max(worst, abs(p / mp.exp(r) - 1))
    print("// 2^(j/16), j = 0..15, correctly rounded.")
    print("alignas(64) constexpr double kExp2Sixteenths[16] = {")
    for j in range(0, 16, 2):
        print(f"    {hexd(table[j])}, {hexd(table[j + 1])},")
    print("};")
    print("// exp(r) ~ 1 + r + c2 r^2 + ... + c5 r^5 on |r| <= ln2/32.")
    print("constexpr double kExpR[6] = {1.0, 1.0, " + ", ".join(hexd(v) for v in c) + "};")
    print(f"// max relative error of the polynomial: 2^{float(mp.log(worst, 2)):.2f}")


if __name__ == "__main__":
    main()
