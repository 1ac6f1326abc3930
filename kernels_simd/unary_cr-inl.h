// The golden float32 unary kernels in float lanes (Note [correctly rounded float lanes]): each
// op's value as a float pair with a proven error bound, a per-lane test that the pair rounds to
// the correctly rounded float, and the value-by-value kernel for the lanes the test cannot
// certify. Ops: exp, expm1, log, log1p, sigmoid, silu, tanh, softplus, gelu(tanh), gelu (erf
// form, AVX-512 and AVX2), sin, cos and rsqrt (their failing lanes: the double-lane golden row,
// unary.cc), pow with a scalar exponent (the double-lane pow row, binary.cc), and of the math
// family exp2, log2, log10, sinh, cosh, asinh, acosh, atanh, atan, tan, and asin and acos on
// AVX-512 (the math family's double-lane or scalar row, math_unary.cc); sin, cos and tan
// evaluate in double lanes under the same frame. The others, and targets without FMA, take the
// value-by-value or double-lane kernels for every lane (unary_cr_row_f32, math_cr_row_f32 and
// pow_cr_lanes_row_f32 return false): asin and acos run math_lanes.cc's double lanes on the
// other targets, and tan does on targets without FMA.
//
// unary_cr_exp.cc, unary_cr_log.cc (Note [scheduled float lanes]) and unary_cr.cc instantiate
// the ops; this header holds the ops themselves, their proofs and the row loop. Included after
// `hwy/foreach_target.h`; opens HWY_NAMESPACE itself.

// Note [correctly rounded float lanes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Ziv's strategy, vectorized. An op computes, in float lanes (twice a double vector's lanes), an
// unevaluated pair hi + lo (|lo| <= |hi|) with |hi + lo - f(x)| <= eps |hi + lo|, before any
// power-of-two scaling. Fast2Sum turns it into y + e exactly, y = RN(hi + lo), |e| <= ulp(y)/2.
// The exact value lies within eps |y|' of y + e, and rounds to y when that interval lies
// strictly between y's neighbouring midpoints y + u and y - u' (u = ulp(y)/2; u' = u, or u/2
// when y is a power of two). The test (RoundCertified) is one FMA and one compare:
//     fma(e, C, y) == y,   C = 1 + 2^-8,
// which holds exactly when e C lies in (-u', u) (or on a tie that rounds to y). Since
// |y| < 2^25 u, eps |y| < 2^25 eps u; for eps 2^25 < 1 - 1/C (eps < 2^-33.01) the interval
// e +- eps |y| lies inside e C's, so a passing lane is the correctly rounded value of the
// exact one (ties included: e C = u gives e + eps |y| < u (1/C + 2^-8) < u). The budgets
// below are all under 2^-33.19 (softplus the tightest); an op whose budget is under
// 2^-(33.01 + k) may take C = 1 + 2^-(8 + k), and fails k times less often. Scaled by 2^k
// (exactly: certified lanes keep their results normal) y is the correctly rounded f(x).
//
// A lane fails when |e| >= u/C: for e roughly uniform in [-u, u], one lane in 256 at
// C = 1 + 2^-8; and always outside the op's certified range (non-finite inputs, results that
// overflow or are subnormal, the ranges below). Failing lanes are compressed into a buffer
// with their positions and recomputed, 256 at a time and at the end of the row, by the
// value-by-value kernel (unary_row_f32, math_row_f32), which tests its own results and
// recomputes the few near a boundary in long double (Note [hard lanes] in vec_math-inl.h, Note
// [math family hard lanes] in math_hard.h). So every output is the correctly rounded value (the
// exhaustive sweep checks all 2^32 inputs on every target: docs/numerics.md); only the time
// depends on how many lanes fail (bench/elementwise_bench unary_cache/exp, and unary_cr_slow/exp
// whose inputs nearly all fail).
//
// exp: x = N ln2/32 + r, N = round(32 x / ln2) = 32 k + j, j in [0, 32), from
// t = x/ln2 + 1.5 2^18, whose low 5 bits are j and kf = t - 1.5 2^18 = N/32. r = r1 + rl with
// r1 = x - N L1 exact (L1 = ln2/32 to 21 bits: N L1 and x are multiples of 2^-30 wherever
// N != 0, and |r1| <= 2^-6.5; kf times 32 L1 is the same real) and rl = -N L2 (L2 = the next
// 24 bits; with what L2 leaves out, absolute error < 2^-45). e^x = 2^k T e^r, T = 2^(j/32) =
// th e^rho (kCrExp2Hi, kCrExp2Rho: rho to 2^-49, |rho| < 2^-24.1), so e^x = 2^k th e^r' with
// r' = r1 + rl', rl' = rl + rho by one FMA (a low part xl of the argument joins rho first,
// 2^-42). th e^r' = y1 + lo (ExpCore): y1 = RN(th + th r1), lo = th q + (th r1 + (th - y1))
// with th - y1 exact (Sterbenz: y1/th in [0.98, 1.02]), q = rl' + rr^2 (1/2 + rr (1/6 +
// r1/24)), rr = RN(r1 + rl'), truncation below 2^-39.5 (|r'| <= 0.01084). Roundings, absolute
// on th e^r' in [0.989, 2.02]: rr in q 2^-36.56, the coefficient 1/2 + ... 2^-37.1, rr^2 and q
// 2^-38.03 each, lo 2^-38 (|lo| < 2^-13), truncation 2^-38.57, and rho, L2, rl', r1 for rr in
// the last coefficient and the remainder's FMA below 2^-43.2 together: 8.27 2^-38 =
// 2^-34.95 absolute, eps < 2^-34.94. The ops built on exp take the pair normalized by a
// Fast2Sum (ExpUnscaled), scaled by 2^k: the same eps, below the 2^-34.6 their budgets below
// assume.
// exp itself tests the unnormalized pair: y+ = RN(y1 + RN(lo + D)) and y- = RN(y1 + RN(lo -
// D)). Rounding is monotone, so when D covers the error of y1 + lo and the rounding of lo +- D
// (2^-38 more: 9.27 2^-38 = 2^-34.79 < D = 2^-34.68), y- <= RN(exact) <= y+, and y+ == y-
// certifies y+, with no Fast2Sum and no bound on |lo|/|y1|. A lane fails where y1 + lo lies
// within D of a midpoint: one in 1640 for results in [1, 2), one in 820 below 1 (measured on
// random inputs: one in 1500). The scaling by 2^k is vscalefps on AVX-512 (v 2^floor(N/32)),
// a product with 2^k elsewhere (ScaleExp; both exact where certified).
// Certified range: |x| <= 87 (e^x normal, k in [-126, 126]).
//
// log1p: below |x| = 2^-5 log's core on r = x itself (the near-1 case above: eps < 2^-33.9);
// above, 1 + x = uh + ul exactly (TwoSum), log uh reduced as above, and ul c 2^-E (c 2^-E
// exact, |ul c 2^-E| <= 2^-24) added to pl: the identity log(uh + ul) = E ln2 - log c +
// log1p(m c - 1 + ul c 2^-E) is exact, |pl| <= 2^-23, and the result is at least 2^-5.04, so
// the absolute errors stay below 2^-41: eps < 2^-35. Certified: -1 < x < inf, |x| >= 2^-126.
//
// softplus (beta 1, a threshold T that is a float; other parameters take the double path):
// x > T gives x (the double path's switch, x b > T in double, is the same compare). Else
// t = e^-|x| = th + tl (exp's pair scaled by 2^k, exact for |x| <= 86; |tl| <= 2^-22.4 th),
// L = log1p(th + tl) as above with tl joining ul (or pl below 2^-5): t's 2^-34.6 carries into
// L at most once (t/((1 + t) log1p t) <= 1) and the core adds 2^-33.9: eps < 2^-33.19, inside
// the 2^-33.006 the test needs. x > 0 adds x by TwoSum, which only shrinks the relative error.
// Certified: |x| <= 86 or T < x < inf.
//
// sigmoid, silu: 1/d for both signs of x, d = 1 + t, t = e^-x = 2^k (y1 + lo), ExpCore's pair
// unnormalized (scaled exactly for |x| <= 69; |lo| <= 2^-14.02 y1: lo is th q plus y1's
// rounding error, |q| <= 5.93e-5 and th/y1 <= 1.0112). d = dh + dl: Fast2Sum of max(2^k y1, 1)
// and min(2^k y1, 1), then 2^k lo joins dl (|dl| <= 2^-14.01 dh, rounding 2^-38.02 of d).
// q ~ 1/dh (AVX-512's 2^-14 estimate; within 2^-22 elsewhere, Reciprocal24), s = (1 - dh q) -
// dl q (|s| < 2^-13.01 on AVX-512, 2^-14 elsewhere) and 1/d = q + q u, u = s + s^2, dropping
// q s^3 (2^-39.03); the roundings of 1 - dh q, s and u are 2^-39, 2^-38 and 2^-38 on AVX-512
// (2^-46, 2^-39 and 2^-39 elsewhere). t's 2^-34.87 is carried at most once (d's relative error
// is t/(1 + t) of t's): eps < 2^-34.33 on AVX-512, 2^-34.56 elsewhere. exp's pair normalized
// by a Fast2Sum (three operations more) would keep |s| below 2^-13.99 and D 0.9 times as
// large; without it sigmoid runs 1.05x as fast and silu 1.09x (64Ki floats, one AVX-512
// thread: `build/bench/ab_rows --ops sigmoid,silu`). sigmoid tests as exp does:
// y+- = RN(q + RN(q u +- D)), D = q 2^-34.093 >= eps (1 + 2^-13) + 2^-37 (the rounding of
// q u +- D) = q 2^-34.12. silu multiplies the pair by x: ph = RN(x q) with x q - ph exact by
// FMA, lo = RN(ph u + (x q - ph)) (2^-37, and ph for x q in the product 2^-37): eps <
// 2^-33.94, |lo| <= 2^-12.99 |ph|, and the monotone test (RoundMonotone) takes K = 2^-33.75 >=
// eps (1 + 2^-12.99) + 2^-24 (2^-12.99 + K) = 2^-33.78. silu is certified for 2^-90 <= |x| <=
// 69, where the product's error is exact and |ph| >= 2^-94, so D >= 2^-128: its own rounding
// and that of lo +- D (2^-150 where subnormal) stay below 2^-21 of it. gelu(tanh) hands the
// same steps exp's pair normalized (|lo| <= 2^-24 y1): there |s| <= 2^-13.99 and eps < 2^-34.5.
//
// gelu(tanh): x/2 (1 + tanh z) = x sigmoid(2z), 2z = w = C (|x| + K |x|^3) sign(x) with the real
// constants C = 2 sqrt(2/pi) and K = 0.044715 as float pairs (2^-53.5, 2^-49.6). |x|^3 and
// K |x|^3 are pairs from exact FMA products (2^-47 each), s = |x| + K |x|^3 by TwoSum, w = C s:
// w = wh + wl within 2^-45.5 of itself, 2^-39.4 absolute for w <= 69, |wl| <= 2^-17.9. The
// exp of the sigmoid takes wl into its rl (one FMA more, rounding below 2^-42), so the sigmoid
// pair of the previous paragraph stays within 2^-34 and the product with x within 2^-33.9.
// w > 69 is capped at 69: for x > 0 that moves the result by less than 2^-99 of itself;
// x < 0 there (a result e^-w below 2^-96) is redone. Certified: 2^-90 <= |x| < inf, and x > 0
// or w <= 69 (|x| <= 9.1).
//
// gelu (erf form, AVX-512 and AVX2): x Phi(x) = x Q(|x|) for x < 0 and x (1 - Q(x)) for x >= 0,
// Q(z) = Phi(-z) = e^L, L = log Q(z) for z = min(|x|, 8.25) on 32 pieces (kCrGelu*: m = round(4z)
// capped at 31, u = z - m/4 exact, |u| <= 1/8, up to 1/2 in the last piece): L = c0 + c1 u +
// c2 u^2 + u^3 s, c0..c2 float pairs, s = c3 + ... + c6 u^3 (fit 2^-40.8 absolute, |u^3 s| <
// 2^-13.8: tools/gen_cr_tables.py). c1 u and c2 u^2 (u^2 = u2 + u2e by FMA) are exact FMA
// pairs, summed with c0's hi by two Fast2Sums (|c1 u| <= 0.144 |c0|, |c2 u^2| <= 0.0084 of the
// first sum); the low parts (|c0 lo| <= 2^-18.8) sum to 2^-42 each, and u^3 s, rounded in u^2,
// u^3, s and the FMA that adds it, to 2^-35.8 with 2^-37.7 for that FMA's sum; the Fast2Sums'
// errors join it (2^-37.6): L = b + l (L in [-37.2, -0.69]), b = RN(c0 + c1 u + c2 u^2) the
// second Fast2Sum's sum and l the rest, |l| < 2^-13.67, within 2^-35.1 absolute. exp's core
// takes l as its low part unnormalized: with |rl'| < 2^-13.66 its roundings of rl', rl, q and lo
// come to 2^-37.03, 2^-37.03, 2^-36.03 and 2^-36.0 of th e^r', r1 for rr in the last
// coefficient to 2^-36.76 and rr in q to 2^-36.52; with the rest as for exp, 2^-33.61 (relative),
// and |lo| < 2^-11.82 y1. A third Fast2Sum, l into b, would keep exp's 2^-34.9 and a K half as
// large, and runs 1.07x slower with half the failing lanes (0.18% of uniform [-8, 8] inputs
// against 0.35%; `build/bench/ab_rows --ops gelu`). So Q = (y1 + lo) 2^k, k in [-55, -1],
// scaled exactly, is within 2^-33.17 of itself. x Phi(x) = max(x, 0) - |x| Q: hh = RN(-|x| qh)
// and hl = RN(-|x| ql + (-|x| qh - hh)) (|hl| <= 2^-11.8 |hh|, 2^-35.8 for its rounding), then
// Fast2Sum(max(x, 0), hh) = hi + err exactly (|x| Q <= x/2 for x > 0, and err = 0 for x < 0)
// and lo = RN(err + hl) (2^-35.8 of hi); Q's error is at most the result's (|x| Q <= x (1 -
// Q)). eps < 2^-32.77, and RoundMonotone's K = 2^-32.57 >= eps (1 + 2^-11.8) + 2^-24 (2^-11.8 +
// K) = 2^-32.60. Beyond 8.25, Q(8.25) < 2^-53 stands in for Q(x) (1 - Q moves by less).
// Certified: -8.25 <= x < inf, |x| >= 2^-100 (x Phi(x) normal, D far above the subnormals; the
// double lanes give x/2 below with the x^2 term that breaks its ties). On AVX2 each of the ten
// table lookups is four permutes and three blends, and the lanes still run 1.9x as fast as the
// double lanes (64Ki floats, one thread: `build/bench/ab_rows --ops gelu,gelu/h`); on other
// targets each would be a gather, and the double lanes take every lane.
//
// pow(x, y) for a finite scalar y (Note [correctly rounded pow]; not the integral 4 <= |y| <= 64
// of Note [integer powers], nor y = -1/2, the rsqrt row): t = y log x with log's pair (hi, lo,
// eps_L < 2^-33.9, |lo| <= 2^-12.4 |hi|): th = RN(y hi) and tl = RN(y lo + (y hi - th)) (the
// product's error exact by FMA, one rounding of 2^-36.4 |t|), normalized by Fast2Sum (|tl| <=
// 2^-19 for |t| < 128), so |t - (th + tl)| <= |t| (2^-33.9 + 2^-36.4) = |t| 2^-33.66. exp's core
// takes tl as its low part: x^y = (y1 + lo) 2^k within 2^-34.93 + |t| 2^-33.66 of itself, the
// error of t carried whole (e^dt - 1 ~ dt). The monotone test with D = y1 (K0 + K1 |th|), K0 =
// 2^-34.5 >= 2^-34.93 (1 + 2^-13) + 2^-24 (2^-13 + K) = 2^-34.67 and K1 = 2^-33.5 >= 2^-33.66 (1
// + 2^-13): the bound grows with |t|, and so does the failure rate (about 2 K 2^23.5: one lane
// in 400 for |t| near 0, 1 in 100 at |t| = 5, most lanes near |t| = 87). Exact results pass
// (they are floats, not midpoints), exact midpoints always fail. The lanes evaluate |x|: a
// negative x takes x's sign for an odd y, and for a non-integral y gives glibc's (x - x) /
// (x - x) in the vector, as the double-lane row does (a row of mixed signs stays here:
// `unary_signed/pow_1.5` 0.082 ms per 64Ki). Certified: normal |x| and |th| <= 87 (x^y
// normal, exp's certified range); every other lane (zeros, infinities, NaN, subnormal x,
// results near overflow or below the normal floats) and those the
// test leaves open take the double-lane row (binary.cc: pow_cr_row_f32), whose bits are the
// correctly rounded ones and glibc's for the special values. 2.6M values in [0.01, 8], y = 1.5,
// one thread: `unary_cache/pow_1.5` 932 M/s against 325 in the double-lane row.
//
// log: x = 2^E m, m in [0.6953125, 1.390625): x's bits minus kCrLogOff give E (the top 9 bits)
// and m's slot i (the next 5: 32 slots of equal bit width, 2^-6 wide below 1 and 2^-5 above, 1
// the centre of slot 19); c = kCrLogC[i] ~ 1/(slot centre), c = 1 on slot 19, and
// log x = E ln2 + log(1/c) + log1p(r), r = m c - 1 = rh + pl exactly (m c by FMA, ph - 1 by
// Sterbenz), |r| <= 2^-6 (log1p's lanes below 2^-5 take r = x: the bounds here hold to 2^-5).
// The table is accurate in Gal's sense: each c is the float near 1/(slot centre) whose
// log(1/c) lies within 2^-27 of a multiple of 2^-15, lh, so that E ln2_hi + lh is exact in
// float (ln2_hi = 0x1.62e4p-1 is one too, the sum below 2^22 of them) and ll = log(1/c) - lh
// is below 2^-27 (tools/gen_cr_tables.py searches 2^13 floats per slot).
// log1p(r) = rh - rh^2/2 + rh^3 q(rh) + pl (1 - rh + rh^2), q to
// rh^4/7 (truncation 2^-38 of the result; Estrin's scheme), rh^2 an exact FMA pair;
// |pl| <= 2^-24 (0 where c = 1), so pl rh^2 (2^-36 absolute, 2^-29 of a result of 2^-7) must
// stay and pl rh^3 (2^-42) may go. The large terms E ln2_hi + lh (one exact FMA), rh and
// -rh^2/2 are summed by two exact Fast2Sums, the rest in float, the last Fast2Sum's error
// added last (it is ready last). Near 1 (c = 1, E = 0) the result is ~rh and the float
// roundings of rh^3 q are worth 3 x 2^-35.6 of it: eps < 2^-33.9; elsewhere |log x| >= 2^-7.01,
// the absolute errors stay below 2^-41 and eps < 2^-34. |lo| <= 2^-12.4 |hi| (2^-11.5 for
// log1p's r up to 2^-5). Certified: normal positive x. log2 and log10 multiply the pair by
// 1/ln 2 or 1/ln 10 as float pairs (2^-51.6): eps < 2^-33.8.
// log, log2 and log10 take the monotone test of exp's paragraph with D = hi K (RoundMonotone),
// K = 2^-33.5 >= eps (1 + 2^-12.3) + 2^-24 (2^-12.3 + K) = 2^-33.56; log1p K = 2^-33.42 >=
// 2^-33.49 (its |lo/hi| up to 2^-11.5). A lane fails where hi + lo lies within D of a midpoint,
// about 2 K 2^23.5 = one in 500 (unary_cache/log on [0.01, 8]: 0.21%, against 0.38% for
// RoundCertified's scale 1 + 2^-8); and the test's chain is 3 additions against a Fast2Sum, an
// FMA and a compare (unary_cache/log +10%, log2 +17%). D = hi K stays far above 2^-149 only
// for |hi| >= 2^-100 or so (RoundCertified's FMA does not round e C, so it has no such
// floor). Of these pairs only log1p's for |x| < 2^-92 lie below: there hi = x and
// |lo| <= x^2, far below half an ulp, so y+ = x, which is RN(log1p x) for 0 < |x| < 2^-23.
//
// exp2: e^w, w = x ln 2 = wh + wl (ln 2 as a pair to 2^-52.8, x lo's rounding 2^-47 of w), wl
// folded into exp's rl (rounding below 2^-42): eps < 2^-34.4, certified for |x ln 2| <= 87.
// cosh: (e^|x| + e^-|x|)/2 from two exp pairs scaled by 2^k, a Fast2Sum of positive terms:
// eps < 2^-34.5, certified for |x| <= 87.
//
// sin, cos run in double lanes under the same frame (LowerToDouble and UpperToDouble: the
// float vector's halves promoted exactly; FromDoubleLanes: the results rounded once to float;
// the float-pair form with a 32-entry table took 95 vector instructions per 16 outputs, this
// one about 48). sin x = (-1)^n sin r, r = x - n pi, n = round(x/pi); cos x = (-1)^m sin r,
// r = (m + 1/2) pi - x, m = round(x/pi - 1/2) (rounded once before the shift: |r| <= pi/2 +
// 2^-38 either way). pi/2 = A + B + (2^-92.8), A pi/2 rounded down to 39 bits (B > 0: with
// n = 0, r = x - 0 A - 0 B keeps a zero's sign): j A (j = 2n or 2m + 1, |j| < 2^14 for
// |x| <= 2^14) is exact and so is x - j A (a multiple of 2^-38 below 2); r = x - j A - j B
// rounds once (2^-53) and leaves j (pi/2 - A - B) < 2^-78.8 out. Every float in [0.78, 2^14]
// lies at least 2^-27.83 from a multiple of pi/2 (a search over all of them in __float128), so
// r is within 2^-50.7 relative (smaller x have n = 0, r = x exactly). sin r = r (1 + r^2 G(r^2)) on
// |r| <= 1.5708 (a product, so sin(-0) = -0), G of degree 5 (tools/gen_sin_lanes.py: 2^-41.53);
// the roundings of r^2, G's Horner (|g_i| R^2i sum to 0.188 against |G| >= 0.147; r^2 G is at
// most 0.57 of 1 + r^2 G) and the last FMA and product add 2^-49.6, r's error carries at most
// once (|r cot r| <= 1): eps < 2^-41.5. The double result rounds to the
// correctly rounded float where its low 29 bits lie more than 2^13 from 2^28
// (FarFromFloatMidpoints, vec_math-inl.h: 2^-40 relative, 2.8x the bound); one lane in 2^15
// fails. Results are normal floats but for subnormal x, where sin's y is x exactly (1 + x^2 G
// rounds to 1): it passes and rounds to x, sin x's correctly rounded value.
// Certified: |x| <= 2^14 (CrRow sends vectors with a larger lane, an infinity or NaN to the
// double path).
//
// tan (double lanes too): x = k pi/2 + r, k = round(x 2/pi), reduced as sin's (|k| < 2^14, r
// within 2^-50.7), |r| <= pi/4 + 2^-38; r' = r or -r (k's parity moved to the sign:
// -cot r = cot(-r)), tan x = r' P(s)/Q(s) for even k and its reciprocal Q(s)/(r' P(s)) for odd
// k, s = r'^2, with the minimax rational function of degrees 2 and 3 on |r'| <= 0.7854
// (tools/gen_sin_lanes.py tan 2 3 0.7854: 2^-45.25 relative, so for the reciprocal too; 5
// FMAs against 10 for sin and cos polynomials divided, 70 vector instructions per 16 outputs
// in all on AVX-512). Roundings: P's Horner 2^-51.8 (|p_j| R^2j sum to 1.076
// against P >= 0.926), Q's 2^-50.6 (1.288 against Q >= 0.727), s carried 2^-54, the product
// r' P and the division 2^-53 each, r's error carried at most 1.57 times (r/(sin r cos r) <=
// pi/2): eps < 2^-45.1, under sin's test and margin. |tan x| lies in [2^-27.9, 2^27.9] but for
// subnormal x, which pass as sin's do (r' P rounds to x, Q to 1).
// Certified: |x| <= 2^14.
//
// expm1: x = N ln2/32 + r as for exp, r = rh + rle exactly (TwoSum of r1 and -N L2), and
// e^r - 1 = rh + rh^2/2 + [rle + l2/2 + rh rle + r^3 (1/6 + r/24 + r^2/120)] with rh^2 = h2 + l2
// exact and rh + h2/2 a Fast2Sum: the bracket's roundings are 2^-45.5 of e^r - 1, truncation
// 2^-48.9. N = 0 (|x| < 0.0108): that pair is the result, eps < 2^-45. Else
// 2^k T e^r - 1 = 2^k (th + th m1 + [th em_lo + tl (1 + m1) + ...]) - 1, th + th m1 an exact
// product and Fast2Sum, scaled by 2^k (exact for |x| <= 87) and 1 subtracted by TwoSum: e^x's
// pair is within 2^-44 of itself and |e^x - 1| >= e^x/94, so eps < 2^-37.5, and the test
// takes scale 1 + 2^-11. x < -87 is clamped to -87 (both round to -1). Certified:
// 2^-126 <= |x|, x <= 87.
//
// tanh |x| = u/(u + 2), u = e^(2|x|) - 1 (expm1's pair; u/(u + 2) only shrinks u's relative
// error), the quotient q = RN(uh/dh) and (uh - q dh + ul - q dl)/dh with d = u + 2 = dh + dl:
// eps < 2^-37.4, scale 1 + 2^-11. |x| >= 10 gives tanh 10's result, 1 (tanh rounds to 1 from
// 9.02). sinh |x| = (u + u/(u + 1))/2, u = e^|x| - 1: two positive terms carrying u's error,
// eps < 2^-37.4, scale 1 + 2^-11, certified for 2^-126 <= |x| <= 87.
//
// atanh, acosh, asinh: log1p of an argument t formed as a normalized pair within 2^-45 of
// itself (log1p's core then carries t's error at most once: t/((1 + t) log1p t) <= 1), so
// eps < 2^-33.8 (log1p's 2^-33.9 near 0). atanh |x| = log1p(2|x|/(1 - |x|))/2 (1 - |x| by
// TwoSum, the quotient by DivPair), certified for 2^-125 <= |x| < 1. acosh x =
// log1p(a + sqrt(a (a + 2))), a = x - 1 exact below 2^24, a + 2 by TwoSum, the product and
// SqrtPair exact but for float roundings of the low parts; certified for 1 < x < 2^24. asinh |x|
// = log1p(|x| + x^2/(1 + sqrt(1 + x^2))), no cancellation; certified for 2^-125 <= |x| < 2^60.
//
// atan: x >= 0, and above 1 the result pi/2 - atan(1/x) (pi/2 as a pair; atan(1/x) <= pi/4,
// so no cancellation). y = x, or y ~ 1/x (AVX-512's 14-bit estimate, Reciprocal24 elsewhere)
// picks c = i/32 nearest y (31/32 above 31.5/32, so that the table has 32 entries), and one
// DivPair (2^-43) gives d = (x - c)/(1 + x c), or above 1 d = (1/x - c)/(1 + c/x) = (1 - c x)/(x
// + c): both are (p - c q)/(q + c p) with (p, q) = (x, 1) or (1, x). c q = RN(c q) + e exactly
// by FMA; p - RN(c q) is exact (Sterbenz: x - c, or c x in [1/2, 3]; or c = 0) and at least |e|
// unless 0, so a Fast2Sum normalizes the numerator; the denominator is a Fast2Sum (q >= c p)
// plus c p's error. |d| <= 1/64 + 2^-14 < 1/63 (the top slot: d rises with y to 1/63 at y =
// 1). atan x or atan(1/x) = atan c (a 32-entry pair table, 2^-50.0) + d - d^3/3 + d^5/5 - d^7/7
// (truncation 2^-51 of d), the cube's terms in float: d^2/3 <= 2^-13.6 of the result where c =
// 0 (2^-19 where c = 31/32: the result is above 0.75), with three roundings, 2^-36, so eps <
// 2^-35.8 and the test takes scale 1 + 2^-10. atan |x| certified for 2^-125 <= |x| < 2^126.
// SqrtPair and DivPair use the estimate instructions with a Newton step (AVX-512, AVX2) rather
// than the divider and square-root unit, 4x slower on these inputs.
//
// asin and acos (AVX-512: on AVX2 the nine table lookups, four permutes and three blends
// each, ran 0.64x as fast as math_lanes.cc's double lanes (64Ki floats, one thread:
// `build/bench/ab_rows --ops asin,acos`), and elsewhere each costs a gather; the double lanes
// take every lane there): a = |x|; asin a = r for
// a <= 1/2 and pi/2 - 2r above, acos x = pi/2 - r sign(x) for a <= 1/2, 2r for x > 1/2 and
// pi - 2r for x < -1/2, where r = asin t, t = a or, above 1/2, t = sqrt(z), z = (1 - a)/2
// (exact). sqrt(z) = sh + tl: sh = RN(sqrt z), tl = (z - sh^2) q, the residual exact by FMA and
// q the 2^-14 estimate of 1/(2 sh), so |tl| <= 2^-24 sh within 2^-38 sh. t in [0, 1/2] falls in
// piece m = min(floor(64 t), 31) (kCrAsin*, tools/gen_cr_tables.py: about c = 0 for t < 1/64,
// (m + 1/2)/64 above), u = t - c exactly (|u| <= 2^-7 but 2^-6 in piece 0, where c = 0), and
// r = A0 + A1 u + u^2 P(u) + (A1 + 2 A2 u) tl, P = A2 + A3 u + A4 u^2 + A5 u^3: asin's Taylor
// series at c, A0 and A1 float pairs (fit 2^-39.2 relative over 2001 points a piece); the
// series' other terms in tl, 3 A3 u^2 tl and on, are below 2^-37.4 r. rh + rl: A0's hi plus
// A1's hi times u by an exact FMA pair and a Fast2Sum (A0 = 0, or |A0| > |A1 u|); the rest summed
// apart, |u^2 P| < 2^-14.5 r. Roundings, relative to r: P, u^2, the FMA that adds u^2 P and rl's
// sum 2^-38.4 each (2^-38.5 for u^2), the rest below 2^-44: with the fit and tl's two, r is
// within 2^-35.12 of itself above 1/2 and 2^-35.9 below. The result y = K + g r, g in {+-1, +-2},
// K in {0, pi/2, pi} (pi/2 as a float pair, 2^-50) with |K| >= |g r|: s = RN(K + g rh) and its
// error by a Fast2Sum (g r exact), yl = that error + (K's lo + g rl), |yl| <= 2^-13.4 |y|. The
// subtractions cost at most a factor 2 (pi/2 - 2r >= pi/6 >= r), the sums of yl 2^-37.4:
// eps < 2^-33.85, and the monotone test takes K = 2^-33.74 >= eps (1 + 2^-13.4) + 2^-24
// (2^-13.4 + K) = 2^-33.77 (one lane in 480 fails: unary_cache/asin 0.21%). Certified for
// |x| <= 1, and asin for |x| >= 2^-100 (a normal result; asin(+-0) keeps its sign on the slow
// path). a = 1 keeps 2 sh from 0 in the estimate, so tl = 0 rather than 0 times inf.
//
// rsqrt: y0 ~ x^-1/2 and e = 1 - x y0^2 = RN(RN(1 - ph y0) - pl y0) by two FMAs from x y0 = ph + pl
// exact (|pl y0| <= 2^-23.99; two stages meeting at y0 and e, Note [two-stage float lanes]), and
// x^-1/2 = y0 (1 - e)^-1/2. Without AVX-512, y0 is within 2^-20.5 (AVX2's 1.5 2^-12 estimate with a
// Newton step in float; elsewhere 1/sqrt(x) by division, 2^-23), |e| <= 2^-19.4, and x^-1/2 = y0 +
// (y0/2) e, dropping 3 e^2/8 < 2^-40.2. Roundings, relative to y0: e's two (2^-44 each, halved),
// the product (2^-44.4): eps < 2^-40.03, |lo/hi| <= 2^-20.4, and the monotone test (RoundMonotone)
// takes K = 2^-39.5 >= eps (1 + 2^-20.4) + 2^-24 (2^-20.4 + K) = 2^-39.96: one lane in 33000 fails
// (`MPSIM_SIMD_TARGETS=avx2`, unary_cache/rsqrt: 0.003%). Certified: x in [2^-126, 2^100) (y0 >=
// 2^-50: x y0 - ph is exact and pl y0 far above the subnormals). AVX-512 skips the Newton step (its
// chain of three): y0 the 2^-14 estimate, |e| <= 2^-12.99 (each rounding of e at most 2^-37), and
// x^-1/2 = y0 + (y0/2) (e + 3 e^2/4), dropping y0 5 e^3/16 < 2^-40.65 y0. Roundings, relative to
// y0: e's two (half of 2^-36: 2^-37), e + 3 e^2/4 (2^-38 after the halving; e^2's own is 2^-51),
// the product (2^-37.99): eps < 2^-35.94, |lo/hi| <= 2^-13.99, K = 2^-35.61 >= 2^-35.94 + 2^-24
// (2^-13.99 + K) = 2^-35.63; one lane in 2000 fails (unary_cache/rsqrt: 0.050%). Against e from
// y0^2 and x y0^2 as exact pairs (six operations to e in place of three) in one stage,
// unary_cache/rsqrt runs 1.13x as fast on AVX-512 and 1.21x on AVX2 (`build/bench/ab_rows --ops
// rsqrt`, with MPSIM_SIMD_TARGETS=avx2 for the second), and that ran 17% faster on AVX-512 than
// with the Newton step.

#if defined(MPSIM_KERNELS_SIMD_UNARY_CR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_UNARY_CR_INL_H_
#undef MPSIM_KERNELS_SIMD_UNARY_CR_INL_H_
#else
#define MPSIM_KERNELS_SIMD_UNARY_CR_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/cr_tables.h"
#include "kernels_simd/exact_power.h"
#include "kernels_simd/float_pair-inl.h"
#include "kernels_simd/libm_special-inl.h"
#include "kernels_simd/math_unary.h"
#include "kernels_simd/pow_cr.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_NATIVE_FMA
namespace {

// One value per lane from a 32-entry table at the low 5 bits of idx: one vpermt2ps on AVX-512,
// four vpermps and three blends on AVX2, a gather elsewhere.
HWY_INLINE VF Lookup32(DF d, const float* table, VI idx) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)d;
  return VF{_mm512_permutex2var_ps(_mm512_load_ps(table), idx.raw, _mm512_load_ps(table + 16))};
#elif HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
  // Four 8-entry permutes, then blends on bits 3 and 4 of idx (moved to the sign bit): cheaper
  // than a gather here.
  const DI di;
  const auto i8 = hn::IndicesFromVec(d, hn::And(idx, hn::Set(di, 7)));
  const VF bit3 = hn::BitCast(d, hn::ShiftLeft<28>(idx));
  const VF bit4 = hn::BitCast(d, hn::ShiftLeft<27>(idx));
  const VF lo = hn::IfNegativeThenElse(bit3, hn::TableLookupLanes(hn::Load(d, table + 8), i8),
                                       hn::TableLookupLanes(hn::Load(d, table), i8));
  const VF hi = hn::IfNegativeThenElse(bit3, hn::TableLookupLanes(hn::Load(d, table + 24), i8),
                                       hn::TableLookupLanes(hn::Load(d, table + 16), i8));
  return hn::IfNegativeThenElse(bit4, hi, lo);
#else
  return hn::GatherIndex(d, table, hn::And(idx, hn::Set(DI(), 31)));
#endif
}

// An op's slow path: the lanes the rounding test leaves open, recomputed by the double-lane
// golden row of the unary family, or the math family's double-lane row where it has one and
// its scalar row otherwise.
template <UnaryKind K>
struct UnaryCr {
  static void Slow(const float* in, float* out, std::size_t n, const UnaryParams& p) {
    unary_row_f32(K, in, out, n, p);
  }
};
template <MathKind K>
struct MathCr {
  static void Slow(const float* in, float* out, std::size_t n, const UnaryParams&) {
    if (!math_lanes_row_f32(K, in, out, n)) math_row_f32(K, in, out, n);
  }
};

// Note [correctly rounded float lanes]: y = RN(hi + lo), and `ok` marks the lanes where y is
// the correctly rounded value of every real within 2^-33.01 |y| of hi + lo. Needs |hi| >= |lo|.
// An op whose budget is below 2^-(33.01 + k) may take scale 1 + 2^-(8 + k): the test passes
// for |e| < u/scale, so the share of failing lanes falls with it.
constexpr float kTestScale = 1.0f + 0x1p-8f;
HWY_INLINE VF RoundCertified(DF d, VF hi, VF lo, MF& ok, float scale = kTestScale) {
  VF y, e;
  Fast2Sum(hi, lo, y, e);
  ok = hn::Eq(hn::MulAdd(e, hn::Set(d, scale), y), y);
  return y;
}

// The monotone test (Note [correctly rounded float lanes], the monotone test): y+ = RN(hi +
// RN(lo + D)) and y- = RN(hi + RN(lo - D)) with D = hi K; ok where they agree, and then y+ is
// RN(f(x)). K must cover the pair's eps (times 1 + |lo/hi|) and the rounding of lo +- D
// (2^-24 (|lo/hi| + K)). D takes hi's sign, which only swaps y+ and y-. lo must be finite: a
// NaN fails, but an infinite lo passes (RoundCertified fails both); and D must stay far above
// the subnormals' 2^-149 steps (silu: D >= 2^-128), or the pair must round to f(x)'s value
// without it (the log paragraph).
HWY_INLINE VF RoundMonotone(DF d, VF hi, VF lo, MF& ok, float k) {
  const VF dd = hn::Mul(hi, hn::Set(d, k));
  const VF yp = hn::Add(hi, hn::Add(lo, dd));
  const VF ym = hn::Add(hi, hn::Sub(lo, dd));
  ok = hn::Eq(yp, ym);
  return yp;
}
// a == b where m, else false: on AVX-512 one compare under the mask m, in place of a compare
// and an AND of masks (64Ki floats, one thread: rsqrt, log and sigmoid 1.03-1.05x as fast,
// log2, log10 and silu 1.01-1.02x; `build/bench/ab_rows`).
HWY_INLINE MF EqWhere(DF d, MF m, VF a, VF b) {
  (void)d;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return MF{_mm512_mask_cmp_ps_mask(m.raw, a.raw, b.raw, _CMP_EQ_OQ)};
#else
  return hn::And(m, hn::Eq(a, b));
#endif
}
// RoundMonotone with ok also false outside `within` (the op's certified inputs).
HWY_INLINE VF RoundMonotone(DF d, VF hi, VF lo, MF& ok, float k, MF within) {
  const VF dd = hn::Mul(hi, hn::Set(d, k));
  const VF yp = hn::Add(hi, hn::Add(lo, dd));
  const VF ym = hn::Add(hi, hn::Sub(lo, dd));
  ok = EqWhere(d, within, yp, ym);
  return yp;
}

// Where lo <= x < hi, for finite floats 0 < lo < hi, or lo = 0 and x never -0 (an Abs): false
// for NaN and negative x. On AVX-512 one subtraction and one unsigned compare of x's bits (the
// bits of non-negative floats order as their values; negative ones and NaN lie above hi's).
// In place of two compares and the AND of their masks, 64Ki floats on one AVX-512 thread ran
// rsqrt 1.09x as fast, log 1.07x, log2, log10 and silu 1.04-1.06x, pow and gelu(tanh) 1.02x;
// exp's single compare of |x| stays a compare (0.96x this way). `build/bench/ab_rows`.
HWY_INLINE MF Within(DF d, VF x, float lo, float hi) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const hn::RebindToUnsigned<DF> du;
  const std::uint32_t lo_bits = std::bit_cast<std::uint32_t>(lo);
  const auto span = hn::Sub(hn::BitCast(du, x), hn::Set(du, lo_bits));
  return hn::RebindMask(d, hn::Lt(span, hn::Set(du, std::bit_cast<std::uint32_t>(hi) - lo_bits)));
#else
  return hn::And(hn::Ge(x, hn::Set(d, lo)), hn::Lt(x, hn::Set(d, hi)));
#endif
}

// Pairs of vectors a software-pipelined step for the ops that run faster so on AVX-512
// (Note [two-stage float lanes]); one pair on targets of 16 registers.
constexpr std::size_t kPairsWide = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3 ? 2 : 1;

// An unevaluated sum hi + lo.
struct Pair {
  VF hi, lo;
};

// th e^r' = e^(x + xl) 2^-k as the pair y1 + lo, within 2^-34.89 of itself (absolute; th e^r'
// in [0.989, 2.02]), |lo| < 2^-13 (Note [correctly rounded float lanes], exp). kf = N/32, so
// 2^k = 2^floor(kf); kbits: the bits of t = N/32 + 1.5 2^18, N in the low bits. xl: a low part
// |xl| <= 2^-17.9, read when kLow, folded into rl. kNeg: e^-(x + xl), the bits of
// ExpCore(-x, -xl) without negating x: r1, rl and rr are then the negations of that one's
// (RN(-v) = -RN(v)), and each step that takes them flips its sign to match.
struct ExpCorePair {
  VF y1, lo, kf;
  VI kbits;
};
template <bool kNeg = false, bool kLow = false>
HWY_INLINE ExpCorePair ExpCore(DF d, VF x, VF xl) {
  const DI di;
  const VF magic = hn::Set(d, 0x1.8p18f);
  const VF inv_ln2 = hn::Set(d, 0x1.715476p+0f);
  const VF t = kNeg ? hn::NegMulAdd(x, inv_ln2, magic) : hn::MulAdd(x, inv_ln2, magic);
  const VF kf = hn::Sub(t, magic);
  const VI kbits = hn::BitCast(di, t);
  const VF th = Lookup32(d, kCrExp2Hi, kbits);
  VF rho = Lookup32(d, kCrExp2Rho, kbits);
  if constexpr (kLow) rho = kNeg ? hn::Sub(rho, xl) : hn::Add(rho, xl);
  const VF l1 = hn::Set(d, 0x1.62e430p-1f), l2 = hn::Set(d, 0x1.05c610p-29f);
  // r1 = x - kf L1 (exact), rl = kf L2 + rho (+ xl); kNeg: their negations
  const VF r1 = kNeg ? hn::MulAdd(kf, l1, x) : hn::NegMulAdd(kf, l1, x);
  const VF rl = kNeg ? hn::NegMulSub(kf, l2, rho) : hn::MulAdd(kf, l2, rho);
  const VF rr = hn::Add(r1, rl);
  const VF c24 = hn::Set(d, 0x1.555556p-5f), c6 = hn::Set(d, 0x1.555556p-3f);  // 1/24, 1/6
  const VF half = hn::Set(d, 0.5f);
  VF y1, lo;
  // q = e^r' - 1 - r1 = rl + rr^2 (1/2 + rr (1/6 + r1/24)): r1 for rr in the last
  // coefficient (2^-45.8), so that it need not wait for rr
  const VF rr2 = hn::Mul(rr, rr);
  if constexpr (kNeg) {
    const VF c = hn::NegMulAdd(rr, hn::NegMulAdd(r1, c24, c6), half);
    const VF q = hn::MulSub(rr2, c, rl);
    y1 = hn::NegMulAdd(th, r1, th);
    lo = hn::MulAdd(th, q, hn::NegMulAdd(th, r1, hn::Sub(th, y1)));
  } else {
    const VF c = hn::MulAdd(rr, hn::MulAdd(r1, c24, c6), half);
    const VF q = hn::MulAdd(rr2, c, rl);
    y1 = hn::MulAdd(th, r1, th);
    lo = hn::MulAdd(th, q, hn::MulAdd(th, r1, hn::Sub(th, y1)));
  }
  return {y1, lo, kf, kbits};
}

// e^x = (y1 + e) 2^k, y1 + e = ExpCore's pair by Fast2Sum: within 2^-34.87 of itself
// (relative), y1 in [0.98, 2.03], |e| <= ulp(y1)/2.
struct ExpPair {
  VF y1, e, kf;
  VI kbits;
};
template <bool kNeg = false, bool kLow = false>
HWY_INLINE ExpPair ExpUnscaled(DF d, VF x, VF xl) {
  const ExpCorePair c = ExpCore<kNeg, kLow>(d, x, xl);
  VF y1, e;
  Fast2Sum(c.y1, c.lo, y1, e);
  return {y1, e, c.kf, c.kbits};
}

// 2^k, k = N >> 5 in [-126, 127] (kbits: the bits of N + kMagic, or of N/32 + 1.5 2^18 as
// ExpCore's t): (kbits with j cleared) << 18 is k in the exponent field, the magic number's
// bits leaving the word.
HWY_INLINE VF TwoToK(DF d, VI kbits) {
  const DI di;
  return hn::BitCast(
      d, hn::Add(hn::ShiftLeft<18>(hn::And(kbits, hn::Set(di, ~31))), hn::Set(di, 127 << 23)));
}

// v 2^k for ExpCore's kf and kbits (2^k = 2^floor(kf)): vscalefps on AVX-512, a product with
// TwoToK elsewhere; both round v 2^k once, so they agree bit for bit.
HWY_INLINE VF ScaleExp(DF d, VF v, VF kf, VI kbits) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)d;
  (void)kbits;
  return VF{_mm512_maskz_scalef_ps(0xFFFF, v.raw, kf.raw)};
#else
  (void)kf;
  return hn::Mul(v, TwoToK(d, kbits));
#endif
}

// e^x - 1 for |x| <= 87 as an unrounded pair (Note [correctly rounded float lanes], expm1):
// within 2^-45 of itself where N = 0 (|x| < 0.0108), 2^-37.5 elsewhere.
HWY_INLINE Pair Expm1Unrounded(DF d, VF x) {
  const DI di;
  const VF t = hn::MulAdd(x, hn::Set(d, 0x1.715476p+5f), hn::Set(d, kMagic));  // 32/ln2
  const VF kf = hn::Sub(t, hn::Set(d, kMagic));
  const VF r1 = hn::NegMulAdd(kf, hn::Set(d, 0x1.62e430p-6f), x);  // exact
  VF rh, rle;
  TwoSum(r1, hn::Mul(kf, hn::Set(d, 0x1.05c610p-34f)), rh, rle);
  // e^r - 1 = rh + rle + r^2/2 + r^3/6 + r^4/24 + r^5/120: rh^2/2 = h2/2 + l2/2 exactly, the
  // rest in float (below 2^-21.5, truncation 2^-48.9).
  const VF h2 = hn::Mul(rh, rh);
  const VF l2 = hn::MulSub(rh, rh, h2);
  const VF cpoly =
      hn::MulAdd(rh, hn::MulAdd(rh, hn::Set(d, 0x1.111112p-7f), hn::Set(d, 0x1.555556p-5f)),
                 hn::Set(d, 0x1.555556p-3f));  // 1/120, 1/24, 1/6
  const VF qlo =
      hn::MulAdd(hn::Mul(rh, h2), cpoly, hn::MulAdd(rh, rle, hn::Mul(l2, hn::Set(d, 0.5f))));
  VF m1, m2;
  Fast2Sum(rh, hn::Mul(h2, hn::Set(d, 0.5f)), m1, m2);
  const VF em_lo = hn::Add(m2, hn::Add(rle, qlo));
  // 2^k T e^r - 1 = 2^k (th + th em + tl (1 + em)) - 1: th + th m1 by exact products and a
  // Fast2Sum, scaled by 2^k (exact for |x| <= 87), and 1 subtracted by TwoSum.
  const VI kbits = hn::BitCast(di, t);
  const VF th = Lookup32(d, kCrExp2Hi, kbits);
  const VF tl = Lookup32(d, kCrExp2Lo, kbits);
  const VF ph = hn::Mul(th, m1);
  const VF pl = hn::MulSub(th, m1, ph);
  VF a1, a2;
  Fast2Sum(th, ph, a1, a2);
  const VF low = hn::Add(hn::Add(a2, pl), hn::MulAdd(th, em_lo, hn::MulAdd(tl, m1, tl)));
  const VF scale = TwoToK(d, kbits);
  VF c1, c2;
  TwoSum(hn::Mul(a1, scale), hn::Set(d, -1.0f), c1, c2);
  const VF lo = hn::MulAdd(low, scale, c2);
  const MF direct = hn::Eq(kf, hn::Zero(d));
  return {hn::IfThenElse(direct, m1, c1), hn::IfThenElse(direct, em_lo, lo)};
}

// Special lanes' values by x's class (Note [special lanes in vectors]): on AVX-512 one
// vfixupimmps, each lane's response to x's class from `responses` (4 bits a class, QNaN's
// lowest; response 0 keeps `dest`); elsewhere `generic()`, the same bits.
template <class Generic>
HWY_INLINE VF ByClass(VF dest, VF x, std::uint32_t responses, const Generic& generic) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)generic;
  const __m512i table = _mm512_set1_epi32(static_cast<std::int32_t>(responses));
  return VF{_mm512_fixupimm_ps(dest.raw, x.raw, table, 0)};
#else
  (void)dest;
  (void)x;
  (void)responses;
  return generic();
#endif
}
// x quieted with its sign bit set where x is a NaN, else v: the NaN of the ops whose slow path
// passes e^-|x| on (sigmoid, softplus).
HWY_INLINE VF NegativeQuietNaNOr(DF d, VF x, VF v) {
  return hn::IfThenElse(hn::IsNaN(x), hn::Or(hn::Add(x, x), hn::SignBit(d)), v);
}
// Special's value on the special lanes of sigmoid (kKeepX false: +1 for x > 0, +0 for x < 0)
// and softplus (kKeepX: x for x > 0, +0 for x < 0), NaN as NegativeQuietNaNOr.
template <bool kKeepX>
HWY_INLINE VF SigmoidSpecialLanes(DF d, VF x) {
  // positive and +inf: +1 (0xa) or x (1), negative and -inf: +0 (8), NaNs: dest, x quieted
  // with its sign set
  return ByClass(hn::Or(hn::Add(x, x), hn::SignBit(d)), x,
                 kKeepX ? 0x18180000u : 0xa8a80000u, [&] {
                   return NegativeQuietNaNOr(d, x, hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)),
                                                 kKeepX ? x : hn::Set(d, 1.0f)));
                 });
}
// Special's value on the special lanes of exp and exp2: +inf for x > 0, +0 for x < 0, a NaN
// quieted.
HWY_INLINE VF ExpSpecialLanes(DF d, VF x) {
  // positive and +inf: +inf (5), negative and -inf: +0 (8), NaNs: QNaN(x) (2)
  return ByClass(x, x, 0x58580022u, [&] {
    return QuietNaNOr(x, hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)), hn::Inf(d)));
  });
}
// Special's value on the special lanes of silu and gelu: x for x > 0 (+inf included), -0 for
// finite x < 0, -inf * 0 (the default NaN) at -inf, a NaN quieted.
HWY_INLINE VF XOrMinusZeroSpecialLanes(DF d, VF x) {
  // positive and +inf: x (1), negative: -0 (7), -inf: default NaN (3), NaNs: QNaN(x) (2)
  return ByClass(x, x, 0x17130022u, [&] {
    const VF low = hn::IfThenElse(hn::Eq(x, hn::Neg(hn::Inf(d))), hn::Mul(x, hn::Zero(d)),
                                  hn::Set(d, -0.0f));
    return QuietNaNOr(x, hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, low));
  });
}

struct CrExpm1 : UnaryCr<UnaryKind::Expm1> {
  // Note [special lanes in vectors]: e^x - 1 is +inf from x = 89 on; NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x), hn::Ge(x, hn::Set(d, 89.0f)));
  }
  static HWY_INLINE VF Special(DF d, VF x) {
    return QuietNaNOr(x, hn::Inf(d));
  }
  using State = Pair;
  static HWY_INLINE State Stage1(DF d, VF x) {
    // Below -87 e^x - 1 rounds to -1 as e^-87 - 1 does: x is clamped there.
    return Expm1Unrounded(d, hn::Max(x, hn::Set(d, -87.0f)));
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& m, MF& ok) {
    const VF y = RoundCertified(d, m.hi, m.lo, ok, 1.0f + 0x1p-11f);
    // x <= 87 (NaN fails), |x| >= 2^-126 (zeros keep their sign on the double path)
    ok = hn::And(ok,
                 hn::And(hn::Le(x, hn::Set(d, 87.0f)), hn::Ge(hn::Abs(x), hn::Set(d, 0x1p-126f))));
    return y;
  }
};

// tanh |x| = u/(u + 2), u = e^(2|x|) - 1 (Note [correctly rounded float lanes], tanh), with
// x's sign.
struct CrTanh : UnaryCr<UnaryKind::Tanh> {
  // Note [special lanes in vectors]: a NaN is quieted (Eval's lanes take +-inf to +-1).
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF, VF x) { return hn::IsNaN(x); }
  static HWY_INLINE VF Special(DF, VF x) { return hn::Add(x, x); }
  using State = Pair;  // u
  static HWY_INLINE State Stage1(DF d, VF x) {
    // From |x| = 9.02 tanh rounds to 1, as tanh 10 does: |x| is clamped at 10 (u < 2^29).
    return Expm1Unrounded(d, hn::Mul(hn::Min(hn::Abs(x), hn::Set(d, 10.0f)), hn::Set(d, 2.0f)));
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& u, MF& ok) {
    const VF ax = hn::Abs(x);
    const VF two = hn::Set(d, 2.0f);
    VF dh, dl;
    TwoSum(u.hi, two, dh, dl);
    dl = hn::Add(dl, u.lo);
    const VF q = hn::Div(u.hi, dh);
    const VF rem = hn::Add(hn::NegMulAdd(q, dh, u.hi), hn::NegMulAdd(q, dl, u.lo));
    const VF sign = hn::And(x, hn::Set(d, -0.0f));
    const VF y =
        RoundCertified(d, hn::Xor(q, sign), hn::Xor(hn::Div(rem, dh), sign), ok, 1.0f + 0x1p-11f);
    ok = hn::And(ok, hn::Ge(ax, hn::Set(d, 0x1p-126f)));  // NaN fails; zeros keep their sign
    return y;
  }
};

struct CrExp : UnaryCr<UnaryKind::Exp> {
  // Note [special lanes in vectors]: e^x is +inf from x = 89 on, +0 up to x = -104 (-inf
  // included: below half the least subnormal); a NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x),
                  hn::Or(hn::Ge(x, hn::Set(d, 89.0f)), hn::Le(x, hn::Set(d, -104.0f))));
  }
  static HWY_INLINE VF Special(DF d, VF x) { return ExpSpecialLanes(d, x); }
  using State = ExpCorePair;
  static HWY_INLINE State Stage1(DF d, VF x) { return ExpCore(d, x, hn::Zero(d)); }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& c, MF& ok) {
    // y1 + lo +- D round alike (Note [correctly rounded float lanes], exp)
    const VF dd = hn::Set(d, 0x1.4p-35f);
    const VF yp = hn::Add(c.y1, hn::Add(c.lo, dd));
    const VF ym = hn::Add(c.y1, hn::Sub(c.lo, dd));
    ok = EqWhere(d, hn::Le(hn::Abs(x), hn::Set(d, 87.0f)), yp, ym);
    return ScaleExp(d, yp, c.kf, c.kbits);
  }
};

// 2^x = e^w, w = x ln2 = wh + wl (ln2 as a pair to 2^-52.8, the product exact but x lo's
// rounding: 2^-47 of w), |wl| <= 2^-17.9 for |wh| <= 87: exp's pair with wl in its rl
// (rounding below 2^-42): eps < 2^-34.4. Certified: |x ln2| <= 87.
struct CrExp2 : MathCr<MathKind::exp2> {
  static constexpr std::size_t kPipelinedPairs = kPairsWide;  // Note [two-stage float lanes]
  // Note [special lanes in vectors]: 2^x is +inf from x = 128 on, +0 below x = -150; a NaN is
  // quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x),
                  hn::Or(hn::Ge(x, hn::Set(d, 128.0f)), hn::Lt(x, hn::Set(d, -150.0f))));
  }
  static HWY_INLINE VF Special(DF d, VF x) { return ExpSpecialLanes(d, x); }
  static constexpr float kLn2Hi = 0x1.62e430p-1f;
  using State = ExpPair;
  static HWY_INLINE State Stage1(DF d, VF x) {
    const VF lh = hn::Set(d, kLn2Hi), ll = hn::Set(d, -0x1.05c610p-29f);
    const VF wh = hn::Mul(x, lh);
    const VF wl = hn::MulAdd(x, ll, hn::MulSub(x, lh, wh));
    return ExpUnscaled<false, true>(d, wh, wl);
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& ep, MF& ok) {
    const VF y = RoundCertified(d, ep.y1, ep.e, ok);
    ok = hn::And(ok, hn::Le(hn::Abs(hn::Mul(x, hn::Set(d, kLn2Hi))), hn::Set(d, 87.0f)));  // wh
    return ScaleExp(d, y, ep.kf, ep.kbits);
  }
};

// sinh |x| = (u + u/(u + 1))/2, u = e^|x| - 1 (Note [correctly rounded float lanes], sinh),
// with x's sign.
struct CrSinh : MathCr<MathKind::sinh> {
  // Note [special lanes in vectors]: sinh x is +-inf from |x| = 89.5 on; NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x), hn::Ge(hn::Abs(x), hn::Set(d, 89.5f)));
  }
  static HWY_INLINE VF Special(DF d, VF x) {
    return QuietNaNOr(x, hn::CopySign(hn::Inf(d), x));
  }
  using State = Pair;  // u
  static HWY_INLINE State Stage1(DF d, VF x) {
    return Expm1Unrounded(d, hn::Min(hn::Abs(x), hn::Set(d, 87.0f)));
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& u, MF& ok) {
    const VF ax = hn::Abs(x);
    const VF one = hn::Set(d, 1.0f);
    VF dh, dl;
    TwoSum(u.hi, one, dh, dl);
    dl = hn::Add(dl, u.lo);
    const VF q = hn::Div(u.hi, dh);
    const VF ql = hn::Div(hn::Add(hn::NegMulAdd(q, dh, u.hi), hn::NegMulAdd(q, dl, u.lo)), dh);
    VF sh, sl;
    Fast2Sum(u.hi, q, sh, sl);  // u >= u/(u + 1)
    const VF half = hn::Set(d, 0.5f);
    const VF sign = hn::And(x, hn::Set(d, -0.0f));
    const VF y = RoundCertified(d, hn::Xor(hn::Mul(sh, half), sign),
                                hn::Xor(hn::Mul(hn::Add(sl, hn::Add(u.lo, ql)), half), sign), ok,
                                1.0f + 0x1p-11f);
    ok = hn::And(ok, Within(d, ax, 0x1p-126f, 0x1.5c0002p6f));  // |x| <= 87
    return y;
  }
};

// cosh x = (e^|x| + e^-|x|)/2: both exp pairs scaled by their 2^k (exact: |x| <= 87 keeps the
// scales normal; e^-|x|'s pair may lose bits below 2^-126, 2^-250 of the sum), summed by a
// Fast2Sum: eps < 2^-34.5. Certified: |x| <= 87.
struct CrCosh : MathCr<MathKind::cosh> {
  static constexpr bool kPlainLoop = true;  // Note [special lanes in vectors], blocks
  // Note [special lanes in vectors]: cosh x is +inf from |x| = 89.5 on; NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x), hn::Ge(hn::Abs(x), hn::Set(d, 89.5f)));
  }
  static HWY_INLINE VF Special(DF d, VF x) {
    return QuietNaNOr(x, hn::Inf(d));
  }
  struct State {
    ExpPair e, f;  // e^|x|, e^-|x|
  };
  static HWY_INLINE State Stage1(DF d, VF x) {
    const VF ax = hn::Abs(x);
    return {ExpUnscaled(d, ax, hn::Zero(d)), ExpUnscaled<true>(d, ax, hn::Zero(d))};
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& st, MF& ok) {
    const VF ax = hn::Abs(x);
    auto scaled = [&](const ExpPair& ep, VF& hi, VF& lo) {
      hi = ScaleExp(d, ep.y1, ep.kf, ep.kbits);
      lo = ScaleExp(d, ep.e, ep.kf, ep.kbits);
    };
    VF eh, el, fh, fl, sh, sl;
    scaled(st.e, eh, el);
    scaled(st.f, fh, fl);
    Fast2Sum(eh, fh, sh, sl);
    const VF half = hn::Set(d, 0.5f);
    const VF y =
        RoundCertified(d, hn::Mul(sh, half), hn::Mul(hn::Add(sl, hn::Add(el, fl)), half), ok);
    ok = hn::And(ok, Within(d, ax, 0.0f, 0x1.5c0002p6f));  // |x| <= 87
    return y;
  }
};

// log x = E ln2 + log(1/c) + log1p(r), Note [correctly rounded float lanes] (log).
// x = 2^E m, c ~ 1/m from the table (log(1/c) = lh + ll), and m c - 1 = rh + pl exactly.
struct LogReduced {
  VF ef, lh, ll, rh, pl, c;
};
// The tables by Lookup32: on AVX2 four permutes and three blends each. On an AMD EPYC without
// AVX-512 (Zen 3, whose gathers are slow) that ran log1p 1.18-1.26x as fast as gathers, acosh
// 1.13-1.19x, asinh 1.10-1.18x, atanh 1.10-1.21x, softplus 1.09-1.16x, and log, log2, log10 and
// pow (Lookup32 before too) alike (64Ki floats, one thread, three runs: `build/bench/ab_rows
// --ops log1p,asinh,acosh,atanh,softplus`); the AVX2 kernels on a CPU with AVX-512
// (`MPSIM_SIMD_TARGETS=avx2`) had run log1p 0.90x and asinh 0.80x as fast so.
HWY_INLINE LogReduced LogReduce(DF d, VF x) {
  const DI di;
  const VF one = hn::Set(d, 1.0f);
  const VI bits = hn::BitCast(di, x);
  const VI tmp = hn::Sub(bits, hn::Set(di, kCrLogOff));
  const VI ei = hn::ShiftRight<23>(tmp);
  const VF m = hn::BitCast(d, hn::Sub(bits, hn::ShiftLeft<23>(ei)));
  const VI idx = hn::ShiftRight<18>(tmp);  // the slot in its low 5 bits
  const VF c = Lookup32(d, kCrLogC, idx);
  const VF lh = Lookup32(d, kCrLogLHi, idx);
  const VF ll = Lookup32(d, kCrLogLLo, idx);
  const VF ef = hn::ConvertTo(d, ei);
  // r = m c - 1 = rh + pl exactly: m c = ph + pl (FMA), ph - 1 exact (Sterbenz).
  const VF ph = hn::Mul(m, c);
  const VF pl = hn::MulSub(m, c, ph);
  const VF rh = hn::Sub(ph, one);
  return {ef, lh, ll, rh, pl, c};
}
// LogReduced with E ln2 + log(1/c) as a = E ln2_hi + lh (exact: see LogCore) and t1 = E ln2_lo
// + ll: four vectors where log's two stages meet instead of five (log, log2 and log10 spilled
// less: 16M floats of log ran 1.2x as fast).
struct LogFolded {
  VF a, t1, rh, pl;
};
HWY_INLINE LogFolded LogFold(DF d, const LogReduced& red) {
  return {hn::MulAdd(red.ef, hn::Set(d, 0x1.62e4p-1f), red.lh),
          hn::MulAdd(red.ef, hn::Set(d, 0x1.7f7d1cp-20f), red.ll), red.rh, red.pl};
}
// log x = E ln2 + log(1/c) + log1p(rh + pl) as an unrounded pair, |pl| <= 2^-24.
HWY_INLINE Pair LogCoreFolded(DF d, const LogFolded& red) {
  const VF rh = red.rh, pl = red.pl;
  const VF h2 = hn::Mul(rh, rh);
  const VF l2 = hn::MulSub(rh, rh, h2);  // rh^2 = h2 + l2 exactly
  const VF qa = hn::MulAdd(rh, hn::Set(d, -0.25f), hn::Set(d, 0x1.555556p-2f));  // 1/3
  const VF qb = hn::MulAdd(rh, hn::Set(d, -0x1.555556p-3f), hn::Set(d, 0x1.99999ap-3f));  // 1/5
  const VF q = hn::MulAdd(h2, hn::MulAdd(h2, hn::Set(d, 0x1.249250p-3f), qb), qa);  // 1/7
  const VF r3 = hn::Mul(h2, rh);
  // a = E ln2_hi + lh exactly (ln2_hi and lh are multiples of 2^-15, the sum below 2^22 of
  // them), then + rh, then - h2/2, each an exact Fast2Sum pair: |a| >= 0.69 - 0.36 > |rh| unless
  // E = 0; |lh| > 2^-5.97 > 2^-6.03 > |rh| unless lh = 0 (the slot around 1; cr_tables.h prints
  // both bounds); |rh| >= h2/2.
  VF s1, e1, s2, e2;
  Fast2Sum(red.a, rh, s1, e1);
  Fast2Sum(s1, hn::Mul(h2, hn::Set(d, -0.5f)), s2, e2);
  // The rest: E ln2_lo + ll + e1 + e2 - l2/2 + pl (1 - rh + rh^2) + r^3 q (pl reaches 2^-24
  // where c != 1, so pl rh^2 counts; pl rh^3 < 2^-42 does not), e2 last: it comes last.
  const VF t1 = red.t1;
  const VF pg = hn::NegMulAdd(pl, hn::NegMulAdd(rh, rh, rh), pl);  // pl (1 - rh (1 - rh))
  const VF t3 = hn::MulAdd(l2, hn::Set(d, -0.5f), pg);
  const VF lo = hn::Add(hn::MulAdd(r3, q, hn::Add(hn::Add(t1, t3), e1)), e2);
  return {s2, lo};
}
HWY_INLINE Pair LogCore(DF d, const LogReduced& red) { return LogCoreFolded(d, LogFold(d, red)); }
HWY_INLINE Pair LogUnrounded(DF d, VF x) { return LogCore(d, LogReduce(d, x)); }
// RoundMonotone's K for log, log2 and log10 (Note [correctly rounded float lanes], log): 2^-33.5.
constexpr float kLogTestK = 0x1.6ap-34f;
// Normal positive finite x (the others: the double path's special values, subnormal x).
HWY_INLINE MF LogCertifiedRange(DF d, VF x) { return Within(d, x, 0x1p-126f, HUGE_VALF); }

// Note [special lanes in vectors]
// log, log1p and rsqrt give their special lanes (log: x <= 0, +inf, NaN; log1p: x <= -1, +inf,
// NaN; rsqrt: x <= 0, +inf, NaN) the golden kernel's values in the vector, by the IEEE operations
// glibc uses (Note [libm special lanes], libm_special-inl.h), instead of sending them to the
// slow path: a row of which half is negative costs what a positive one does. So do log2,
// log10, acosh and atanh with glibc's conventions; exp, exp2, expm1, sigmoid, silu, softplus,
// sinh, cosh, gelu and gelu(tanh) for the inputs whose results are +-0, -1, 1, x or +-inf (a
// masked row of -inf); sin, cos and tan at +-inf (inf - inf, the default NaN), atan there
// (+-pi/2 rounded) and asinh (x + x); and, in math_lanes.cc, asin and acos outside [-1, 1].
// NaN inputs: exp, exp2, expm1, tanh, sinh, cosh, asinh, atan, sin, cos, tan, silu, gelu, asin
// and acos quiet them in the vector (x + x, QuietNaNOr) as the slow path does, sigmoid and
// softplus also set the sign bit (their slow path's e^-|x|), gelu(tanh) gives the slow path's
// one quiet NaN (0x7fc00000), and the glibc functions their IEEE operations. CrRow applies
// SpecialLanes and Special to the lanes Eval leaves uncertified, and for the ops with a bound
// on their float lanes (sin, cos, tan) keeps a vector whose lanes beyond it are all special: a
// row with +-inf every other lane took 36 ms on [2, 320, 64, 64] (every vector on the double
// path, and its special lanes one by one), 3 ms in the vector.
// Every special lane's bits are the slow path's, NaN bits included: bits_digest over every
// 64th float32 pattern on every target, and correct_rounding_test
// (SpecialLanesInVectorsGiveTheValueByValueBits), which also counts the slow lanes of a row with
// -inf, and of one with NaN, in every other lane.
//
// On AVX-512 the special lanes' values are one vfixupimmps (ByClass), which answers by x's
// class (QNaN, SNaN, +-0, +1, -inf, +inf, negative, positive) from a table of 4-bit responses,
// the bits of the selects elsewhere (its default NaN, QNaN_Indefinite, is the one that (x - x)
// inf and -inf * 0 give on x86): log (and log2, log10), rsqrt, exp, exp2, sigmoid, softplus,
// silu and gelu; and log's and rsqrt's special lanes (x <= 0, +-inf, NaN) are one vfpclassps.
// Against the IEEE operations and selects, 64Ki floats on one thread (`build/bench/ab_rows`):
// N(0, 1) (half negative) rsqrt 1.34x as fast, log 1.21x, log2 and log10 1.13-1.15x; -inf or
// NaN in every other element silu 1.11x, exp and sigmoid 1.07x, gelu 1.04x, softplus 0.99x;
// the ordinary rows within 2%.
//
// x <= 0, +-inf or NaN.
HWY_INLINE MF NotPositiveFinite(DF d, VF x) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)d;
  // QNaN 0x01, +0 0x02, -0 0x04, +inf 0x08, -inf 0x10, negative 0x40, SNaN 0x80
  return MF{_mm512_fpclass_ps_mask(x.raw, 0xdf)};
#else
  return hn::Not(hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, hn::Inf(d))));
#endif
}
// log x for x <= 0, +-inf or NaN: LogSpecial's bits.
HWY_INLINE VF LogSpecialLanes(DF d, VF x) {
  // positive: x, negative: default NaN, +inf: +inf, -inf: default NaN, +1: x, +-0: -inf,
  // SNaN and QNaN: QNaN(x)
  return ByClass(x, x, 0x13530422u, [&] { return LogSpecial(d, x); });
}
struct CrLogSpecials {
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) { return NotPositiveFinite(d, x); }
  static HWY_INLINE VF Special(DF d, VF x) { return LogSpecialLanes(d, x); }
};

struct CrLog : UnaryCr<UnaryKind::Log>, CrLogSpecials {
  using State = LogFolded;
  static HWY_INLINE State Stage1(DF d, VF x) { return LogFold(d, LogReduce(d, x)); }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& red, MF& ok) {
    const Pair l = LogCoreFolded(d, red);
    const VF y = RoundMonotone(d, l.hi, l.lo, ok, kLogTestK, LogCertifiedRange(d, x));
    return y;
  }
};

// log(1 + th + tl) for th > -1 and |tl| <= 2^-24 |th| as an unrounded pair (Note [correctly
// rounded float lanes], log1p): below 2^-5 the core's series on r = th + tl itself; above,
// 1 + th = uh + ul exactly (TwoSum), log uh's reduction, and ul + tl carried into its pl.
HWY_INLINE LogReduced Log1pReduce(DF d, VF th, VF tl) {
  const DI di;
  VF uh, ul;
  TwoSum(hn::Set(d, 1.0f), th, uh, ul);
  LogReduced red = LogReduce(d, uh);
  // (ul + tl) c 2^-E joins pl: c 2^-E is exact, the sum rounds below 2^-48 (|ul + tl| c 2^-E
  // <= 2^-23). From E = 127 on the scale is 0 (there ul/uh < 2^-100).
  const VI ei = hn::ConvertTo(di, red.ef);
  const VF scale = hn::BitCast(
      d, hn::ShiftLeft<23>(hn::Max(hn::Sub(hn::Set(di, 127), ei), hn::Zero(di))));  // 2^-E
  red.pl = hn::MulAdd(hn::Add(ul, tl), hn::Mul(red.c, scale), red.pl);
  const MF small = hn::Lt(hn::Abs(th), hn::Set(d, 0x1p-5f));
  red.ef = hn::IfThenZeroElse(small, red.ef);
  red.lh = hn::IfThenZeroElse(small, red.lh);
  red.ll = hn::IfThenZeroElse(small, red.ll);
  red.rh = hn::IfThenElse(small, th, red.rh);
  red.pl = hn::IfThenElse(small, tl, red.pl);
  return red;
}

struct CrLog1p : UnaryCr<UnaryKind::Log1p> {
  static constexpr bool kVectorSpecials = true;  // Note [special lanes in vectors]
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Set(d, -1.0f)), hn::Lt(x, hn::Inf(d))));
  }
  static HWY_INLINE VF Special(DF d, VF x) { return Log1pSpecial(d, x); }
  using State = LogReduced;
  static HWY_INLINE State Stage1(DF d, VF x) { return Log1pReduce(d, x, hn::Zero(d)); }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& red, MF& ok) {
    const Pair l = LogCore(d, red);
    const VF y = RoundMonotone(d, l.hi, l.lo, ok, 0x1.8p-34f);  // 2^-33.42
    // x > -1, finite, |x| >= 2^-126 (zeros keep their sign on the double path)
    ok = hn::And(ok, hn::And(hn::Gt(x, hn::Set(d, -1.0f)), hn::Lt(x, hn::Inf(d))));
    ok = hn::And(ok, hn::Ge(hn::Abs(x), hn::Set(d, 0x1p-126f)));
    return y;
  }
};

// softplus with beta 1 and a threshold T that is a float: x where x > T, else
// max(x, 0) + log1p(e^-|x|) (Note [correctly rounded float lanes], softplus).
struct CrSoftplus : UnaryCr<UnaryKind::Softplus> {
  // Note [special lanes in vectors]: softplus(x) is +0 up to x = -104 (-inf included: e^x below
  // 2^-150) unless x is above the threshold (Eval's own lanes), +inf at +inf, and a NaN
  // quieted with its sign set (the slow path's e^-|x|).
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x), hn::Or(hn::Le(x, hn::Set(d, -104.0f)), hn::Eq(x, hn::Inf(d))));
  }
  static HWY_INLINE VF Special(DF d, VF x) { return SigmoidSpecialLanes<true>(d, x); }
  float threshold;
  using State = LogReduced;  // log1p's reduction of e^-|x|
  static HWY_INLINE State Stage1(DF d, VF x) {
    const ExpPair ep = ExpUnscaled<true>(d, hn::Abs(x), hn::Zero(d));
    return Log1pReduce(d, ScaleExp(d, ep.y1, ep.kf, ep.kbits),
                       ScaleExp(d, ep.e, ep.kf, ep.kbits));
  }
  HWY_INLINE VF Stage2(DF d, VF x, const State& red, MF& ok) const {
    const VF ax = hn::Abs(x);
    const Pair l = LogCore(d, red);
    // x > 0: x + L as a TwoSum pair (L <= ln 2 may exceed a small x)
    VF sh, sl;
    TwoSum(x, l.hi, sh, sl);
    const MF pos = hn::Gt(x, hn::Zero(d));
    const VF hi = hn::IfThenElse(pos, sh, l.hi);
    const VF lo = hn::IfThenElse(pos, hn::Add(sl, l.lo), l.lo);
    const VF y = RoundCertified(d, hi, lo, ok);
    // Above the threshold: x itself. Certified: |x| <= 86 (e^-|x| normal), or x > T.
    const MF above = hn::Gt(x, hn::Set(d, threshold));
    ok = hn::Or(hn::And(ok, hn::Le(ax, hn::Set(d, 86.0f))), hn::And(above, hn::Lt(x, hn::Inf(d))));
    return hn::IfThenElse(above, x, y);
  }
};

// 1/v to 2^-22 or better (the residual corrections of SigmoidPair and DivPair): AVX-512's
// 14-bit and AVX2's 12-bit estimates take a Newton step; elsewhere (NEON's estimate has 8 bits)
// a division.
HWY_INLINE VF Reciprocal24(DF d, VF v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  const VF r = hn::ApproximateReciprocal(v);
  return hn::MulAdd(r, hn::NegMulAdd(v, r, hn::Set(d, 1.0f)), r);
#else
  return hn::Div(hn::Set(d, 1.0f), v);
#endif
}

// sqrt(wh + wl) (wh > 0 normal, |wl| <= 2^-23 wh) as a pair within 2^-40 of itself: y ~
// wh^-1/2 to 2^-21 (RsqrtEstimate), s = wh y, and s + (wh - s^2 + wl) y/2, Newton's correction:
// its factor y's 2^-21 of a correction below 2^-19.9 s, and the omitted second-order term
// (2^-43) and roundings.
HWY_INLINE Pair SqrtPair(DF d, VF wh, VF wl) {
  const VF y = RsqrtEstimate(d, wh);
  const VF sq = hn::Mul(wh, y);
  const VF r = hn::Add(hn::NegMulAdd(sq, sq, wh), wl);
  VF hi, lo;
  Fast2Sum(sq, hn::Mul(hn::Mul(r, y), hn::Set(d, 0.5f)), hi, lo);
  return {hi, lo};
}

// The quotient (ah + al)/(bh + bl) (|bl| <= 2^-23 |bh|, |al| <= 2^-23 |ah|) as a normalized
// pair within 2^-43 of itself: q = ah rb, rb ~ 1/bh to 2^-22 (Reciprocal24), the remainder
// ah - q bh + al - q bl (FMAs, rounding 2^-24 of a remainder below 2^-21 ah) times rb again
// (2^-22 of it).
HWY_INLINE Pair DivPair(DF d, VF ah, VF al, VF bh, VF bl) {
  const VF rb = Reciprocal24(d, bh);
  const VF q = hn::Mul(ah, rb);
  const VF r = hn::Add(hn::NegMulAdd(q, bh, ah), hn::NegMulAdd(q, bl, al));
  VF hi, lo;
  Fast2Sum(q, hn::Mul(r, rb), hi, lo);
  return {hi, lo};
}

// atanh |x| = log1p(2|x|/(1 - |x|))/2 (Note [correctly rounded float lanes], atanh), with x's
// sign.
struct CrAtanh : MathCr<MathKind::atanh> {
  // Note [special lanes in vectors]: glibc's atanh gives |x| = 1 x / 0 (+-inf), |x| > 1 and NaN
  // (x - x) / (x - x).
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Not(hn::Lt(hn::Abs(x), hn::Set(d, 1.0f)));
  }
  static HWY_INLINE VF Special(DF d, VF x) {
    return hn::IfThenElse(hn::Eq(hn::Abs(x), hn::Set(d, 1.0f)), hn::Div(x, hn::Zero(d)),
                          LibmInvalid(d, x));
  }
  using State = LogReduced;  // log1p's reduction
  static HWY_INLINE State Stage1(DF d, VF x) {
    const VF ax = hn::Abs(x);
    VF bh, bl;
    TwoDiff(hn::Set(d, 1.0f), ax, bh, bl);  // 1 - |x| (exact: bl = 0 from 1/2)
    const Pair t = DivPair(d, hn::Add(ax, ax), hn::Zero(d), bh, bl);
    return Log1pReduce(d, t.hi, t.lo);
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& red, MF& ok) {
    const VF ax = hn::Abs(x);
    const Pair l = LogCore(d, red);
    const VF half = hn::Set(d, 0.5f);
    const VF sign = hn::And(x, hn::Set(d, -0.0f));
    const VF y = RoundCertified(d, hn::Xor(hn::Mul(l.hi, half), sign),
                                hn::Xor(hn::Mul(l.lo, half), sign), ok);
    ok = hn::And(ok, Within(d, ax, 0x1p-125f, 1.0f));
    return y;
  }
};

// acosh x = log1p(a + sqrt(a (a + 2))), a = x - 1 (exact below 2^24), for 1 < x < 2^24.
struct CrAcosh : MathCr<MathKind::acosh> {
  // Note [special lanes in vectors]: glibc's acosh gives x < 1 (and -inf) (x - x) / (x - x),
  // 1 +0, +inf and NaN x + x.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Set(d, 1.0f)), hn::Lt(x, hn::Inf(d))));
  }
  static HWY_INLINE VF Special(DF d, VF x) {
    const MF doubled = hn::Or(hn::IsNaN(x), hn::Eq(x, hn::Inf(d)));
    const VF r = hn::IfThenElse(doubled, hn::Add(x, x), LibmInvalid(d, x));
    return hn::IfThenZeroElse(hn::Eq(x, hn::Set(d, 1.0f)), r);
  }
  using State = LogReduced;  // log1p's reduction
  static HWY_INLINE State Stage1(DF d, VF x) {
    const VF a = hn::Sub(x, hn::Set(d, 1.0f));
    VF a2h, a2l;
    TwoSum(a, hn::Set(d, 2.0f), a2h, a2l);
    const VF wh = hn::Mul(a, a2h);
    const VF wl = hn::MulAdd(a, a2l, hn::MulSub(a, a2h, wh));  // a (a + 2) = wh + wl
    const Pair s = SqrtPair(d, wh, wl);
    VF th, tl;
    TwoSum(a, s.hi, th, tl);
    tl = hn::Add(tl, s.lo);
    Fast2Sum(th, tl, th, tl);
    return Log1pReduce(d, th, tl);
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& red, MF& ok) {
    const Pair l = LogCore(d, red);
    const VF y = RoundCertified(d, l.hi, l.lo, ok);
    ok = hn::And(ok, Within(d, x, 0x1.000002p0f, 0x1p24f));  // 1 < x < 2^24
    return y;
  }
};

// asinh |x| = log1p(|x| + x^2/(1 + sqrt(1 + x^2))), with x's sign, for 2^-125 <= |x| < 2^60.
struct CrAsinh : MathCr<MathKind::asinh> {
  // Note [special lanes in vectors]: asinh(+-inf) = +-inf = x + x, which also quiets a NaN.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x), hn::Eq(hn::Abs(x), hn::Inf(d)));
  }
  static HWY_INLINE VF Special(DF, VF x) { return hn::Add(x, x); }
  using State = LogReduced;  // log1p's reduction
  static HWY_INLINE State Stage1(DF d, VF x) {
    const VF one = hn::Set(d, 1.0f);
    const VF ax = hn::Abs(x);
    const VF x2h = hn::Mul(x, x);
    const VF x2l = hn::MulSub(x, x, x2h);
    VF wh, wl;
    TwoSum(one, x2h, wh, wl);
    wl = hn::Add(wl, x2l);
    const Pair s = SqrtPair(d, wh, wl);  // sqrt(1 + x^2)
    VF dh, dl;
    Fast2Sum(s.hi, one, dh, dl);  // s >= 1
    dl = hn::Add(dl, s.lo);
    const Pair q = DivPair(d, x2h, x2l, dh, dl);
    VF th, tl;
    Fast2Sum(ax, q.hi, th, tl);  // |x| >= x^2/(1 + sqrt(1 + x^2))
    tl = hn::Add(tl, q.lo);
    Fast2Sum(th, tl, th, tl);
    return Log1pReduce(d, th, tl);
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& red, MF& ok) {
    const VF ax = hn::Abs(x);
    const Pair l = LogCore(d, red);
    const VF sign = hn::And(x, hn::Set(d, -0.0f));
    const VF y = RoundCertified(d, hn::Xor(l.hi, sign), hn::Xor(l.lo, sign), ok);
    ok = hn::And(ok, Within(d, ax, 0x1p-125f, 0x1p60f));
    return y;
  }
};

// atan x for x >= 0 as an unrounded pair within 2^-37 of itself (Note [correctly rounded float
// lanes], atan), in two stages: AtanReduce gives d as a pair, the slot and the lanes above 1,
// AtanFinish the pair.
struct AtanReduced {
  Pair q;
  VI idx;
  MF inv;
};
HWY_INLINE AtanReduced AtanReduce(DF d, VF x) {
  const DI di;
  const VF one = hn::Set(d, 1.0f);
  // above 1, atan x = pi/2 - atan(1/x); y = x or about 1/x (to 2^-14) picks the table slot
  const MF inv = hn::Gt(x, one);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const VF rx = hn::ApproximateReciprocal(x);
#else
  const VF rx = Reciprocal24(d, x);
#endif
  const VF y = hn::IfThenElse(inv, rx, x);
  // c = i/32 nearest y but 31/32 for y > 31.5/32 (a 32-entry table)
  const VF t =
      hn::Min(hn::MulAdd(y, hn::Set(d, 32.0f), hn::Set(d, kMagic)), hn::Set(d, kMagic + 31.0f));
  const VF c = hn::Mul(hn::Sub(t, hn::Set(d, kMagic)), hn::Set(d, 1.0f / 32));
  const VI idx = hn::BitCast(di, t);
  // d = (p - c q)/(q + c p), (p, q) = (x, 1), or (1, x) above 1 (d = (1/x - c)/(1 + c/x)),
  // |d| <= 1/63: p - RN(c q) exact (Sterbenz, or c = 0), c q's error exact by FMA
  const VF p = hn::IfThenElse(inv, one, x), qv = hn::IfThenElse(inv, x, one);
  const VF cq = hn::Mul(c, qv), cp = hn::Mul(c, p);
  VF nh, nl, dh, dl;
  Fast2Sum(hn::Sub(p, cq), hn::NegMulAdd(c, qv, cq), nh, nl);  // |c q - RN(c q)| <= |p - RN(c q)|
  Fast2Sum(qv, cp, dh, dl);                                   // q >= c p
  dl = hn::Add(dl, hn::MulSub(c, p, cp));
  return {DivPair(d, nh, nl, dh, dl), idx, inv};
}
HWY_INLINE Pair AtanFinish(DF d, const AtanReduced& red) {
  const DI di;
  const Pair q = red.q;
  const VI idx = red.idx;
  const MF inv = red.inv;
  // atan d = d - d^3/3 + d^5/5 - d^7/7 (truncation 2^-51 of d), the cube's terms in float
  const VF q2 = hn::Mul(q.hi, q.hi);
  VF poly = hn::MulAdd(q2, hn::Set(d, -0x1.24924ap-3f), hn::Set(d, 0x1.99999ap-3f));  // -1/7, 1/5
  poly = hn::MulAdd(q2, poly, hn::Set(d, -0x1.555556p-2f));                           // -1/3
  const VF alo = hn::MulAdd(hn::Mul(q2, q.hi), poly, q.lo);
  // atan(c) + atan(d): |atan c| >= 2^-5 > |d| unless c = 0
  // the tables by one permute each on AVX-512, gathers elsewhere (on AVX2 Lookup32's permutes
  // and blends took unary_cache/atan to 0.151 ms against 0.127, and ran it 0.72x as fast on an
  // AMD EPYC without AVX-512: `build/bench/ab_rows --ops atan`)
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const VF ah = Lookup32(d, kCrAtanHi, idx), al = Lookup32(d, kCrAtanLo, idx);
#else
  const VI slot = hn::And(idx, hn::Set(di, 31));
  const VF ah = hn::GatherIndex(d, kCrAtanHi, slot), al = hn::GatherIndex(d, kCrAtanLo, slot);
#endif
  VF s1, e1;
  Fast2Sum(ah, q.hi, s1, e1);
  const VF lo = hn::Add(hn::Add(e1, al), alo);
  // pi/2 - (s1 + lo): pi/2 >= 2 s1, so no cancellation
  VF u1, u2;
  Fast2Diff(hn::Set(d, 0x1.921fb6p+0f), s1, u1, u2);
  const VF ilo = hn::Sub(hn::Add(u2, hn::Set(d, -0x1.777a5cp-25f)), lo);
  return {hn::IfThenElse(inv, u1, s1), hn::IfThenElse(inv, ilo, lo)};
}

// atan |x| with x's sign, for 2^-125 <= |x| < 2^126 (1/|x| stays normal).
struct CrAtan : MathCr<MathKind::atan> {
  static constexpr std::size_t kPipelinedPairs = kPairsWide;  // Note [two-stage float lanes]
  // Note [special lanes in vectors]: atan(+-inf) = +-pi/2 rounded; NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x), hn::Eq(hn::Abs(x), hn::Inf(d)));
  }
  static HWY_INLINE VF Special(DF d, VF x) {
    return QuietNaNOr(x, hn::CopySign(hn::Set(d, 0x1.921fb6p+0f), x));
  }
  using State = AtanReduced;
  static HWY_INLINE State Stage1(DF d, VF x) { return AtanReduce(d, hn::Abs(x)); }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& red, MF& ok) {
    const VF ax = hn::Abs(x);
    const Pair a = AtanFinish(d, red);
    const VF sign = hn::And(x, hn::Set(d, -0.0f));
    const VF y = RoundCertified(d, hn::Xor(a.hi, sign), hn::Xor(a.lo, sign), ok, 1.0f + 0x1p-10f);
    ok = hn::And(ok, Within(d, ax, 0x1p-125f, 0x1p126f));
    return y;
  }
};

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// asin x or acos x (Note [correctly rounded float lanes], asin and acos): asin |x| = r for
// |x| <= 1/2, pi/2 - 2r above, r = asin t for t = |x| or sqrt((1 - |x|)/2), from kCrAsin*'s
// piece of t. AVX-512 only: elsewhere math_lanes.cc's double lanes run faster than the nine
// lookups (the Note).
template <bool kAcos>
struct CrAsinAcos : MathCr<kAcos ? MathKind::acos : MathKind::asin> {
  static constexpr std::size_t kPipelinedPairs = kPairsWide;  // Note [two-stage float lanes]
  // Note [special lanes in vectors]: |x| > 1 (+-inf included) gives the value-by-value row's
  // quiet NaN (0x7fc00000); a NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Not(hn::Le(hn::Abs(x), hn::Set(d, 1.0f)));
  }
  static HWY_INLINE VF Special(DF d, VF x) {
    return QuietNaNOr(x, hn::Set(d, std::numeric_limits<float>::quiet_NaN()));
  }
  // The piece m of t, u = t - c and tl (Stage1); the pair and the result (Stage2).
  struct State {
    VF u, tl;
    VI m;
  };
  static HWY_INLINE State Stage1(DF d, VF x) {
    const DI di;
    const VF half = hn::Set(d, 0.5f);
    const VF a = hn::Abs(x);
    const MF big = hn::Gt(a, half);
    // Above 1/2, t = sqrt(z) = sh + sl for z = (1 - a)/2 (exact): sl = (z - sh^2)/(2 sh), the
    // residual exact by FMA, the quotient by the 2^-14 reciprocal (2 sh kept from 0: a = 1
    // gives sl = 0, not 0 inf).
    const VF z = hn::NegMulAdd(a, half, half);
    const VF sh = hn::Sqrt(z);
    const VF q = hn::ApproximateReciprocal(hn::Max(hn::Add(sh, sh), hn::Set(d, 0x1p-30f)));
    const VF t = hn::IfThenElse(big, sh, a);
    const VF tl = hn::IfThenElseZero(big, hn::Mul(hn::NegMulAdd(sh, sh, z), q));
    // piece m = min(floor(64 t), 31) (NaN: any piece), u = t - c exactly
    const VI floor64t{_mm512_maskz_cvttps_epi32(0xFFFF, hn::Mul(t, hn::Set(d, 64.0f)).raw)};
    const VI m = hn::Min(floor64t, hn::Set(di, 31));
    return {hn::Sub(t, Lookup32(d, kCrAsinC, m)), tl, m};
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& st, MF& ok) {
    const VF u = st.u, tl = st.tl;
    const VI m = st.m;
    const VF half = hn::Set(d, 0.5f);
    const VF a = hn::Abs(x);
    const MF big = hn::Gt(a, half);
    const VF a2 = Lookup32(d, kCrAsinA2, m);
    VF p = hn::MulAdd(Lookup32(d, kCrAsinA5, m), u, Lookup32(d, kCrAsinA4, m));
    p = hn::MulAdd(p, u, Lookup32(d, kCrAsinA3, m));
    p = hn::MulAdd(p, u, a2);
    // r = A0 + A1 u + u^2 p + (A1 + 2 A2 u) tl = rh + rl: A0's hi plus A1's hi times u as a
    // Fast2Sum of an exact FMA pair (A0 = 0 or |A0| > |A1 u|), the rest summed apart.
    const VF a1 = Lookup32(d, kCrAsinA1Hi, m);
    const VF h1 = hn::Mul(a1, u);
    VF lo = hn::MulAdd(Lookup32(d, kCrAsinA1Lo, m), u, Lookup32(d, kCrAsinA0Lo, m));
    lo = hn::MulAdd(hn::MulAdd(hn::Add(a2, a2), u, a1), tl,
                    hn::Add(lo, hn::MulSub(a1, u, h1)));
    lo = hn::MulAdd(hn::Mul(u, u), p, lo);
    VF rh, e;
    Fast2Sum(Lookup32(d, kCrAsinA0Hi, m), h1, rh, e);
    const VF rl = hn::Add(lo, e);
    // y = K + g r, g in {+-1, +-2} and K in {0, pi/2, pi} with |K| >= |g r|: asin |x| is r or
    // pi/2 - 2r (x's sign after); acos x is pi/2 - r sign(x), 2r (x > 1/2) or pi - 2r (x < -1/2).
    const VF pio2h = hn::Set(d, 0x1.921fb6p+0f), pio2l = hn::Set(d, -0x1.777a5cp-25f);
    const VF sign = hn::And(x, hn::Set(d, -0.0f));
    VF kh, kl, g;
    if constexpr (kAcos) {
      const MF neg = hn::Lt(x, hn::Zero(d));
      kh = hn::IfThenElse(big, hn::IfThenElseZero(neg, hn::Add(pio2h, pio2h)), pio2h);
      kl = hn::IfThenElse(big, hn::IfThenElseZero(neg, hn::Add(pio2l, pio2l)), pio2l);
      g = hn::Xor(hn::IfThenElse(big, hn::Set(d, 2.0f), hn::Set(d, -1.0f)), sign);
    } else {
      kh = hn::IfThenElseZero(big, pio2h);
      kl = hn::IfThenElseZero(big, pio2l);
      g = hn::IfThenElse(big, hn::Set(d, -2.0f), hn::Set(d, 1.0f));
    }
    // Fast2Sum of kh and g rh (exact: g is a power of 2)
    const VF s = hn::MulAdd(g, rh, kh);
    const VF se = hn::MulSub(g, rh, hn::Sub(s, kh));
    const VF yl = hn::Add(se, hn::MulAdd(g, rl, kl));
    VF y;
    if constexpr (kAcos) {
      y = RoundMonotone(d, s, yl, ok, kTestK);
      ok = hn::And(ok, hn::Le(a, hn::Set(d, 1.0f)));
    } else {
      y = RoundMonotone(d, hn::Xor(s, sign), hn::Xor(yl, sign), ok, kTestK);
      // 2^-100 <= |x| <= 1: the result normal (and asin(+-0) keeps its sign in the slow path)
      ok = hn::And(ok, Within(d, a, 0x1p-100f, 0x1.000002p0f));  // |x| <= 1
    }
    return y;
  }
  static constexpr float kTestK = 0x1.32p-34f;  // 2^-33.74
};
#endif

// c log x for c = kHi + kLo (1/ln 2 or 1/ln 10 to 2^-48): the log pair times c, its
// products exact but lo kHi and hi kLo (2^-47).
template <MathKind K>
struct CrLogBase : MathCr<K>, CrLogSpecials {
  static constexpr std::size_t kPipelinedPairs = kPairsWide;  // Note [two-stage float lanes]
  // glibc's log2 shares log's special values; its log10 (a wrapper's domain error) returns the
  // NAN constant, +NaN, for every x < 0, where (x - x) / (x - x) gives the default NaN
  // (negative on x86).
  static HWY_INLINE VF Special(DF d, VF x) {
    const VF r = LogSpecialLanes(d, x);
    if constexpr (K != MathKind::log10) return r;
    return hn::IfThenElse(hn::Lt(x, hn::Zero(d)),
                          hn::Set(d, std::numeric_limits<float>::quiet_NaN()), r);
  }
  using State = LogFolded;
  static HWY_INLINE State Stage1(DF d, VF x) { return LogFold(d, LogReduce(d, x)); }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& red, MF& ok) {
    constexpr bool kTwo = K == MathKind::log2;
    const VF kh = hn::Set(d, kTwo ? 0x1.715476p+0f : 0x1.bcb7b2p-2f);
    const VF kl = hn::Set(d, kTwo ? 0x1.4ae0cp-26f : -0x1.5b235ep-27f);
    const Pair l = LogCoreFolded(d, red);
    const VF ph = hn::Mul(l.hi, kh);
    const VF pl = hn::MulAdd(l.lo, kh, hn::MulAdd(l.hi, kl, hn::MulSub(l.hi, kh, ph)));
    const VF y = RoundMonotone(d, ph, pl, ok, kLogTestK, LogCertifiedRange(d, x));
    return y;
  }
};

// sigmoid(x) = hi + hi u within 2^-34.33 of itself, for |x| <= 69 (Note [correctly rounded
// float lanes], sigmoid): 1/d for both signs, d = 1 + t, t = e^-x = 2^k (y1 + lo) (exp's pair
// unnormalized, |lo| <= 2^-14.03 y1, or normalized; |k| <= 100: exact), d = dh + dl (Fast2Sum
// of max(2^k y1, 1) and min(2^k y1, 1), then 2^k lo joins dl), q ~ 1/dh, s = (1 - dh q) - dl q
// and 1/d = q (1 + s + s^2), dropping q s^3. (t/(1 + t) for x < 0, with th q as an exact FMA
// pair and a select per part, took 7 more instructions per vector.)
struct SigmoidPair {
  VF hi, u;  // sigmoid = hi + hi u
};
// The sigmoid pair of w + wl from ExpCore<true, kLow>(w, wl) or ExpUnscaled<true, kLow> (kLow:
// |wl| <= 2^-17.9 |w|), |w| <= 69 where certified. AVX-512: q the 2^-14 estimate of 1/dh,
// |s| < 2^-13.01; elsewhere q within 2^-22 of 1/dh (Reciprocal24), |s| < 2^-14.
HWY_INLINE SigmoidPair SigmoidOfExp(DF d, VF y1, VF lo, VF kf, VI kbits) {
  const VF one = hn::Set(d, 1.0f);
  const VF th = ScaleExp(d, y1, kf, kbits), tl = ScaleExp(d, lo, kf, kbits);
  VF dh, dl;
  Fast2Sum(hn::Max(th, one), hn::Min(th, one), dh, dl);
  dl = hn::Add(dl, tl);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const VF q = hn::ApproximateReciprocal(dh);
#else
  const VF q = Reciprocal24(d, dh);
#endif
  const VF s = hn::NegMulAdd(dl, q, hn::NegMulAdd(dh, q, one));
  return {q, hn::MulAdd(s, s, s)};
}

struct CrSigmoid : UnaryCr<UnaryKind::Sigmoid> {
  static constexpr std::size_t kPipelinedPairs = kPairsWide;  // Note [two-stage float lanes]
  // Note [special lanes in vectors]: sigmoid(x) is 1 from x = 70 on (1 - e^-70 rounds to 1),
  // +0 up to x = -104 (-inf included: below e^x < 2^-150), and a NaN quieted with its sign set
  // (the slow path's e^-|x|).
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x),
                  hn::Or(hn::Ge(x, hn::Set(d, 70.0f)), hn::Le(x, hn::Set(d, -104.0f))));
  }
  static HWY_INLINE VF Special(DF d, VF x) { return SigmoidSpecialLanes<false>(d, x); }
  using State = ExpCorePair;  // e^-x, unnormalized
  static HWY_INLINE State Stage1(DF d, VF x) { return ExpCore<true, false>(d, x, hn::Zero(d)); }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& st, MF& ok) {
    const SigmoidPair sp = SigmoidOfExp(d, st.y1, st.lo, st.kf, st.kbits);
    // y+- = RN(hi + RN(hi u +- D)) round alike (Note [correctly rounded float lanes], sigmoid)
    const VF dd = hn::Mul(sp.hi, hn::Set(d, 0x1.ep-35f));
    const VF yp = hn::Add(sp.hi, hn::MulAdd(sp.hi, sp.u, dd));
    const VF ym = hn::Add(sp.hi, hn::MulSub(sp.hi, sp.u, dd));
    ok = EqWhere(d, Within(d, hn::Abs(x), 0.0f, 0x1.140002p6f), yp, ym);  // |x| <= 69
    return yp;
  }
};

// silu(x) = x sigmoid(x): x hi exact by FMA, x lo added. Certified for 2^-90 <= |x| <= 69
// (the product's error is exact only above the subnormals).
struct CrSilu : UnaryCr<UnaryKind::Silu> {
  // Note [special lanes in vectors]: silu(x) is x from x = 70 on (+inf included), -0 for finite
  // x up to -112 (|x| e^x < 2^-154), silu(-inf) = -inf * 0, the default NaN, and a NaN
  // quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x),
                  hn::Or(hn::Ge(x, hn::Set(d, 70.0f)), hn::Le(x, hn::Set(d, -112.0f))));
  }
  static HWY_INLINE VF Special(DF d, VF x) { return XOrMinusZeroSpecialLanes(d, x); }
  using State = ExpCorePair;  // e^-x, unnormalized
  static HWY_INLINE State Stage1(DF d, VF x) { return CrSigmoid::Stage1(d, x); }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& st, MF& ok) {
    const SigmoidPair sp = SigmoidOfExp(d, st.y1, st.lo, st.kf, st.kbits);
    const VF ph = hn::Mul(x, sp.hi);
    // within 2^-33.94 of itself, K = 2^-33.75 (Note [correctly rounded float lanes], silu)
    return RoundMonotone(d, ph, hn::MulAdd(ph, sp.u, hn::MulSub(x, sp.hi, ph)), ok, 0x1.3p-34f,
                         Within(d, hn::Abs(x), 0x1p-90f, 0x1.140002p6f));  // |x| <= 69
  }
};

// gelu(tanh) = x sigmoid(w), w = 2 sqrt(2/pi) (x + 0.044715 x^3) (Note [correctly rounded float
// lanes], gelu_tanh).
struct CrGeluTanh : UnaryCr<UnaryKind::GeluTanh> {
  static constexpr std::size_t kPipelinedPairs = kPairsWide;  // Note [two-stage float lanes]
  static constexpr bool kPlainLoop = true;  // Note [special lanes in vectors], blocks
  // Note [special lanes in vectors]: gelu(tanh) is x at +inf, -0 for finite x up to -11
  // (|x| sigmoid(w) < 2^-151), and the double path's quiet NaN (0x7fc00000) at -inf and NaN.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::Or(hn::IsNaN(x), hn::Le(x, hn::Set(d, -11.0f))), hn::Eq(x, hn::Inf(d)));
  }
  static HWY_INLINE VF Special(DF d, VF x) {
    const MF nan = hn::Or(hn::IsNaN(x), hn::Eq(x, hn::Neg(hn::Inf(d))));
    return hn::IfThenElse(nan, hn::Set(d, std::numeric_limits<float>::quiet_NaN()),
                          hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Set(d, -0.0f)));
  }
  struct State {
    ExpPair ep;  // e^-w
    MF capped;
  };
  static HWY_INLINE State Stage1(DF d, VF x) {
    const VF ax = hn::Abs(x);
    // |x|^3 = x3h + x3l: x^2 = x2h + x2l exactly, then times |x| (x2l |x| rounded: 2^-48).
    const VF x2h = hn::Mul(x, x);
    const VF x2l = hn::MulSub(x, x, x2h);
    const VF x3h = hn::Mul(x2h, ax);
    const VF x3l = hn::MulAdd(x2l, ax, hn::MulSub(x2h, ax, x3h));
    // K |x|^3 = th + tl with K = Kh + Kl = 0.044715 within 2^-49.6.
    const VF kh = hn::Set(d, 0x1.6e4e26p-5f), kl = hn::Set(d, 0x1.a9003ep-30f);
    const VF th = hn::Mul(kh, x3h);
    const VF tl = hn::MulAdd(kl, x3h, hn::MulAdd(kh, x3l, hn::MulSub(kh, x3h, th)));
    VF sh, sl;
    TwoSum(ax, th, sh, sl);
    sl = hn::Add(sl, tl);
    // w = 2 sqrt(2/pi) s = wh + wl, 2 sqrt(2/pi) = Ch + Cl within 2^-53.5.
    const VF ch = hn::Set(d, 0x1.988454p+0f), cl = hn::Set(d, -0x1.857936p-25f);
    VF wh = hn::Mul(ch, sh);
    VF wl = hn::MulAdd(cl, sh, hn::MulAdd(ch, sl, hn::MulSub(ch, sh, wh)));
    // Beyond w = 69 sigmoid(w) is 1 - 2^-99.5 or nearer 1: w = 69 there moves x sigmoid(w) by
    // less than 2^-99 of itself (certified for x > 0 only; the other side is x e^-w).
    const VF kCap = hn::Set(d, 69.0f);
    const MF capped = hn::Not(hn::Le(wh, kCap));  // NaN too: the cap keeps the exp finite
    wh = hn::IfThenElse(capped, kCap, wh);
    wl = hn::IfThenZeroElse(capped, wl);
    const VF sign = hn::And(x, hn::Set(d, -0.0f));
    return {ExpUnscaled<true, true>(d, hn::Xor(wh, sign), hn::Xor(wl, sign)), capped};
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& st, MF& ok) {
    const VF ax = hn::Abs(x);
    const MF neg = hn::Lt(x, hn::Zero(d));
    const SigmoidPair sp = SigmoidOfExp(d, st.ep.y1, st.ep.e, st.ep.kf, st.ep.kbits);
    const VF ph = hn::Mul(x, sp.hi);
    const VF y = RoundCertified(
        d, ph, hn::MulAdd(hn::Mul(x, sp.hi), sp.u, hn::MulSub(x, sp.hi, ph)), ok);
    // 2^-90 <= |x| (the product's error is exact), x finite, and x > 0 or w <= 69.
    ok = hn::And(ok, Within(d, ax, 0x1p-90f, HUGE_VALF));
    ok = hn::AndNot(hn::And(neg, st.capped), ok);
    return y;
  }
};

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// gelu (erf form) = x Phi(x): x Q(|x|) for x < 0, x (1 - Q(x)) for x >= 0, Q(z) = Phi(-z) =
// e^L, L = log Q(z) a piecewise polynomial (kCrGelu*, one permute per coefficient on AVX-512,
// four and three blends on AVX2) taken to exp's pair (Note [correctly rounded float lanes],
// gelu). Elsewhere each of the ten lookups costs a gather, and the double lanes take every
// lane.
struct CrGelu : UnaryCr<UnaryKind::GeluErf> {
  static constexpr std::size_t kPipelinedPairs = kPairsWide;  // Note [two-stage float lanes]
  // Note [special lanes in vectors]: gelu is x at +inf, -0 for finite x up to -14.5 (|x Phi(x)|
  // < 2^-151), -inf * 0 (the default NaN) at -inf; a NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::Or(hn::IsNaN(x), hn::Le(x, hn::Set(d, -14.5f))), hn::Eq(x, hn::Inf(d)));
  }
  static HWY_INLINE VF Special(DF d, VF x) { return XOrMinusZeroSpecialLanes(d, x); }
  using State = Pair;  // L = log Q(z)
  static HWY_INLINE State Stage1(DF d, VF x) {
    const DI di;
    const VF z = hn::Min(hn::Abs(x), hn::Set(d, 8.25f));
    // m = round(4z) capped at 31, u = z - m/4 exactly (|u| <= 1/8; 1/2 in the last piece).
    const VI mbits =
        hn::Min(hn::BitCast(di, hn::MulAdd(z, hn::Set(d, 4.0f), hn::Set(d, kMagic))),
                hn::Set(di, kMagicBits + 31));
    const VF mf = hn::Sub(hn::BitCast(d, mbits), hn::Set(d, kMagic));
    const VF u = hn::NegMulAdd(mf, hn::Set(d, 0.25f), z);
    VF s = Lookup32(d, kCrGeluC6, mbits);
    s = hn::MulAdd(s, u, Lookup32(d, kCrGeluC5, mbits));
    s = hn::MulAdd(s, u, Lookup32(d, kCrGeluC4, mbits));
    s = hn::MulAdd(s, u, Lookup32(d, kCrGeluC3, mbits));
    // c1 u and c2 u^2 as exact pairs (u^2 = u2 + u2e), the low parts and u^3 s summed apart.
    const VF c1 = Lookup32(d, kCrGeluC1Hi, mbits), c2 = Lookup32(d, kCrGeluC2Hi, mbits);
    const VF u2 = hn::Mul(u, u), u2e = hn::MulSub(u, u, u2);
    const VF h1 = hn::Mul(c1, u), h2 = hn::Mul(c2, u2);
    VF w = hn::MulAdd(Lookup32(d, kCrGeluC1Lo, mbits), u, Lookup32(d, kCrGeluC0Lo, mbits));
    w = hn::MulAdd(Lookup32(d, kCrGeluC2Lo, mbits), u2, w);
    w = hn::MulAdd(c2, u2e, w);
    w = hn::Add(w, hn::Add(hn::MulSub(c1, u, h1), hn::MulSub(c2, u2, h2)));
    w = hn::MulAdd(hn::Mul(u2, u), s, w);
    VF a, ae, b, be;
    Fast2Sum(Lookup32(d, kCrGeluC0Hi, mbits), h1, a, ae);  // |c0| > |c1 u|, |c0| > |c2 u^2|
    Fast2Sum(a, h2, b, be);
    return {b, hn::Add(w, hn::Add(ae, be))};  // exp's core takes the low part unnormalized
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& l, MF& ok) {
    // Q = (y1 + lo) 2^k (k in [-55, -1]).
    const ExpCorePair e = ExpCore<false, true>(d, l.hi, l.lo);
    // x Phi(x) = max(x, 0) - |x| Q: -|x| Q = hh + hl (the product's error exact by FMA), then
    // Fast2Sum with max(x, 0) (|x| Q <= x/2 for x > 0, and exact beside 0). 2^k scales -|x|,
    // exactly where the lanes are certified (|x| 2^k >= |x| Q/2 is normal).
    const VF v = hn::Or(x, hn::Set(d, -0.0f));  // -|x|
    const VF vk = ScaleExp(d, v, e.kf, e.kbits);
    const VF hh = hn::Mul(vk, e.y1);
    const VF hl = hn::MulAdd(vk, e.lo, hn::MulSub(vk, e.y1, hh));
    VF hi, err;
    Fast2Sum(hn::Max(x, hn::Zero(d)), hh, hi, err);
    const VF y = RoundMonotone(d, hi, hn::Add(err, hl), ok, kGeluTestK);
    // -8.25 <= x (NaN fails), |x| >= 2^-100 (x Phi(x) normal, D above the subnormals); +inf
    // fails on hi's NaN.
    ok = hn::And(ok, hn::And(hn::Ge(x, hn::Set(d, -8.25f)), hn::Le(v, hn::Set(d, -0x1p-100f))));
    return y;
  }
  static constexpr float kGeluTestK = 0x1.58p-33f;
};
#endif

using DD = hn::Repartition<double, DF>;
using VD = hn::Vec<DD>;
using MD = hn::Mask<DD>;
// x's lower and upper halves in double lanes (exactly).
HWY_INLINE VD LowerToDouble(DF, VF x) {
  return hn::PromoteTo(DD(), hn::LowerHalf(hn::Half<DF>(), x));
}
HWY_INLINE VD UpperToDouble(DF, VF x) {
  return hn::PromoteTo(DD(), hn::UpperHalf(hn::Half<DF>(), x));
}
// The float vector of y0 (lower half) and y1, each rounded once, and ok from their marks.
HWY_INLINE VF FromDoubleLanes(DF d, VD y0, MD ok0, VD y1, MD ok1, MF& ok) {
  const hn::Half<DF> dh;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  ok = MF{static_cast<__mmask16>(_mm512_kunpackb(ok1.raw, ok0.raw))};  // one mask instruction
  return hn::Combine(d, hn::DemoteTo(dh, y1), hn::DemoteTo(dh, y0));
#else
  // The failing lanes as NaN, found again in the float vector.
  const auto nan = hn::NaN(DD());
  const VF y = hn::Combine(d, hn::DemoteTo(dh, hn::IfThenElse(ok1, y1, nan)),
                           hn::DemoteTo(dh, hn::IfThenElse(ok0, y0, nan)));
  ok = hn::Eq(y, y);
  return y;
#endif
}

// A double-lane function's reduced argument: r, and kd with the parity of the multiple taken
// (sin's n, cos's m, tan's k) in its lowest bit.
struct DoubleReduced {
  VD kd, r;
};
// The two stages (Note [two-stage float lanes]) of an op in double lanes: Op::Reduce each half
// of x, promoted exactly, then Op::Finish each to its double result and mark, rounded once
// to float by FromDoubleLanes.
template <class Op>
struct DoubleLaneStages {
  struct State {
    DoubleReduced lower, upper;
  };
  static HWY_INLINE State Stage1(DF d, VF x) {
    return {Op::Reduce(LowerToDouble(d, x)), Op::Reduce(UpperToDouble(d, x))};
  }
  static HWY_INLINE VF Stage2(DF d, VF, const State& st, MF& ok) {
    MD ok0, ok1;
    const VD y0 = Op::Finish(st.lower, ok0);
    const VD y1 = Op::Finish(st.upper, ok1);
    return FromDoubleLanes(d, y0, ok0, y1, ok1, ok);
  }
};

// The double-lane trigonometric functions' reduction: pi/2 = kPio2A + kPio2B (+ 2^-92.8),
// kPio2A rounded down to 39 bits, so j kPio2A is exact for |j| < 2^14 and kPio2B > 0. Their
// rounding test's margin: 2^13 double ulps, 2^-40 of the result (2.6x and more the bounds);
// one lane in 2^15 fails.
constexpr double kPio2A = 0x1.921fb5444p+0;
constexpr double kPio2B = 0x1.68c234c4c6629p-39;
constexpr double kInvPi = 0x1.45f306dc9c883p-2;
constexpr std::uint64_t kTrigMarginUlps = std::uint64_t{1} << 13;

// sin x or cos x in double lanes (Note [correctly rounded float lanes], sin and cos):
// sin x = (-1)^n sin r, r = x - n pi; cos x = (-1)^m sin r, r = (m + 1/2) pi - x.
template <bool kCos>
struct CrSinCos : UnaryCr<kCos ? UnaryKind::Cos : UnaryKind::Sin>,
                  DoubleLaneStages<CrSinCos<kCos>> {
  static constexpr float kFloatLanesBound = 0x1p14f;  // Eval certifies no larger lane
  // Note [special lanes in vectors]: sin and cos of +-inf are inf - inf, the default NaN; a
  // NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x), hn::Eq(hn::Abs(x), hn::Inf(d)));
  }
  static HWY_INLINE VF Special(DF, VF x) {
    return QuietNaNOr(x, hn::Sub(x, x));
  }
  // sin r = r (1 + r^2 G(r^2)) on |r| <= 1.5708 within 2^-41.53 (tools/gen_sin_lanes.py sin 5
  // 1.5708).
  static constexpr double kG[6] = {-0x1.55555555549cbp-3,  0x1.1111110fc0475p-7,
                                   -0x1.a01a0011bb5e3p-13, 0x1.71dd8de25c7d5p-19,
                                   -0x1.ae20c4b670554p-26, 0x1.54e75a5abfed1p-33};

  // x's half in double lanes reduced: r, and kd with n's (m's) parity in its lowest bit.
  static HWY_INLINE DoubleReduced Reduce(VD x) {
    const DD dd;
    const auto shift = hn::Set(dd, 0x1.8p52);  // rounds to an integer, kept in the low bits
    VD kd, r;
    if constexpr (kCos) {
      kd = hn::Add(hn::MulAdd(x, hn::Set(dd, kInvPi), hn::Set(dd, -0.5)), shift);
      const auto j = hn::MulAdd(hn::Sub(kd, shift), hn::Set(dd, 2.0), hn::Set(dd, 1.0));
      r = hn::MulSub(j, hn::Set(dd, kPio2A), x);  // exact
      r = hn::MulAdd(j, hn::Set(dd, kPio2B), r);
    } else {
      kd = hn::MulAdd(x, hn::Set(dd, kInvPi), shift);
      const auto n = hn::Sub(kd, shift);
      r = hn::NegMulAdd(n, hn::Set(dd, 2 * kPio2A), x);  // exact
      r = hn::NegMulAdd(n, hn::Set(dd, 2 * kPio2B), r);
    }
    return {kd, r};
  }
  static HWY_INLINE VD Finish(const DoubleReduced& red, MD& ok) {
    const DD dd;
    const hn::RebindToUnsigned<DD> du;
    const VD kd = red.kd, r = red.r;
    const auto s = hn::Mul(r, r);
    // r (1 + s G): a product keeps -0's sign (r + r s G would give +0 for r = -0)
    auto y = hn::Mul(r, hn::MulAdd(s, Horner(dd, s, kG), hn::Set(dd, 1.0)));
    y = hn::Xor(y, hn::BitCast(dd, hn::ShiftLeft<63>(hn::BitCast(du, kd))));  // n's, m's parity
    ok = FarFromFloatMidpoints<kTrigMarginUlps>(dd, y);
    return y;
  }
};

// tan x in double lanes (Note [correctly rounded float lanes], tan): x = k pi/2 + r,
// tan x = r' P/Q for even k, Q/(r' P) for odd k (r' = r or -r).
struct CrTan : MathCr<MathKind::tan>, DoubleLaneStages<CrTan> {
  static constexpr float kFloatLanesBound = 0x1p14f;  // Eval certifies no larger lane
  // Note [special lanes in vectors]: tan(+-inf) is inf - inf, the default NaN; a NaN is quieted.
  static constexpr bool kVectorSpecials = true;
  static HWY_INLINE MF SpecialLanes(DF d, VF x) {
    return hn::Or(hn::IsNaN(x), hn::Eq(hn::Abs(x), hn::Inf(d)));
  }
  static HWY_INLINE VF Special(DF, VF x) {
    return QuietNaNOr(x, hn::Sub(x, x));
  }
  // tan r = r P(r^2)/Q(r^2) on |r| <= 0.7854 within 2^-45.25 (tools/gen_sin_lanes.py tan 2 3
  // 0.7854: the minimax rational function, Q(0) = 1).
  static constexpr double kP[3] = {0x1.fffffffffff29p-1, -0x1.f106e893329ccp-4,
                                   0x1.0a731ab370830p-9};
  static constexpr double kQ[4] = {1.0, -0x1.d1970f7a2d77cp-2, 0x1.4beb82bb920fep-6,
                                   -0x1.98d6dd7e3f329p-14};

  // x's half in double lanes reduced: r' and kd with k's parity in its lowest bit.
  static HWY_INLINE DoubleReduced Reduce(VD x) {
    const DD dd;
    const hn::RebindToUnsigned<DD> du;
    const auto shift = hn::Set(dd, 0x1.8p52);
    const auto kd = hn::MulAdd(x, hn::Set(dd, 2 * kInvPi), shift);
    const auto k = hn::Sub(kd, shift);
    auto r = hn::NegMulAdd(k, hn::Set(dd, kPio2A), x);  // exact
    r = hn::NegMulAdd(k, hn::Set(dd, kPio2B), r);
    r = hn::Xor(r, hn::BitCast(dd, hn::ShiftLeft<63>(hn::BitCast(du, kd))));  // -r for odd k
    return {kd, r};
  }
  static HWY_INLINE VD Finish(const DoubleReduced& red, MD& ok) {
    const DD dd;
    const hn::RebindToUnsigned<DD> du;
    const VD r = red.r;
    const auto kbits = hn::BitCast(du, red.kd);
    const auto s = hn::Mul(r, r);
    const auto num = hn::Mul(r, Horner(dd, s, kP));
    const auto den = Horner(dd, s, kQ);
    const auto odd = hn::RebindMask(dd, hn::TestBit(kbits, hn::Set(du, 1)));
    const auto y = hn::Div(hn::IfThenElse(odd, den, num), hn::IfThenElse(odd, num, den));
    ok = FarFromFloatMidpoints<kTrigMarginUlps>(dd, y);
    return y;
  }
};

// x^-1/2 (Note [correctly rounded float lanes], rsqrt).
struct CrRsqrt : UnaryCr<UnaryKind::Rsqrt> {
  static constexpr std::size_t kPipelinedPairs = kPairsWide;  // Note [two-stage float lanes]
  static constexpr bool kVectorSpecials = true;  // Note [special lanes in vectors]
  static HWY_INLINE MF SpecialLanes(DF d, VF x) { return NotPositiveFinite(d, x); }
  static HWY_INLINE VF Special(DF d, VF x) {
    // positive: x, negative: default NaN, +inf: +0, -inf: default NaN, +1: x, +-0: +-inf,
    // SNaN and QNaN: QNaN(x)
    return ByClass(x, x, 0x13830622u, [&] { return RsqrtSpecialLanes(d, x); });
  }
  // y0 ~ x^-1/2 and e = 1 - x y0^2 from x y0 = ph + pl by FMA (Note [correctly rounded float
  // lanes], rsqrt).
  struct State {
    VF y0, e;
  };
  static HWY_INLINE State Stage1(DF d, VF x) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    const VF y0 = hn::ApproximateReciprocalSqrt(x);  // 2^-14
#else
    const VF y0 = RsqrtEstimate(d, x);  // 2^-20.5
#endif
    const VF ph = hn::Mul(x, y0);
    const VF pl = hn::MulSub(x, y0, ph);
    const VF e = hn::NegMulAdd(pl, y0, hn::NegMulAdd(ph, y0, hn::Set(d, 1.0f)));
    return {y0, e};
  }
  static HWY_INLINE VF Stage2(DF d, VF x, const State& st, MF& ok) {
    const VF half_y0 = hn::Mul(st.y0, hn::Set(d, 0.5f));
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    // x^-1/2 = y0 + (y0/2) (e + 3 e^2/4)
    const VF lo = hn::Mul(half_y0, hn::MulAdd(hn::Mul(st.e, st.e), hn::Set(d, 0.75f), st.e));
    // Normal x below 2^100 (y0 >= 2^-50: x y0 - ph is exact, far above the subnormals).
    return RoundMonotone(d, st.y0, lo, ok, 0x1.5p-36f, Within(d, x, 0x1p-126f, 0x1p100f));
#else
    // x^-1/2 = y0 + (y0/2) e
    return RoundMonotone(d, st.y0, hn::Mul(half_y0, st.e), ok, 0x1.6ap-40f,
                         Within(d, x, 0x1p-126f, 0x1p100f));
#endif
  }
};

// x^-0.5 (pow with the scalar exponent -1/2): rsqrt's lanes, which certify only normal
// positive x below 2^100, so every zero, infinity, NaN and negative x reaches Slow: glibc's pow
// conventions there (pow(+-0, -0.5) = inf where rsqrt(-0) = -inf; NaN for x < 0) through
// pow_correctly_rounded, the rsqrt row's double path for the rest.
struct CrPowMinusHalf : CrRsqrt {
  // Note [special lanes in vectors], with glibc's pow conventions for y = -1/2: x^y of +-0 is
  // +inf, of +-inf +0, of a finite negative x __math_invalid(x), of a NaN x + y (x quieted).
  static HWY_INLINE VF Special(DF d, VF x) {
    VF r = hn::IfThenElse(hn::IsNaN(x), hn::Add(x, hn::Set(d, -0.5f)), LibmInvalid(d, x));
    r = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Inf(d), r);
    return hn::IfThenZeroElse(hn::Eq(hn::Abs(x), hn::Inf(d)), r);
  }
  static void Slow(const float* in, float* out, std::size_t n, const UnaryParams& p) {
    unary_row_f32(UnaryKind::Rsqrt, in, out, n, p);
    for (std::size_t i = 0; i < n; ++i) {
      if (!(in[i] > 0 && in[i] < HUGE_VALF)) out[i] = pow_correctly_rounded<float>(in[i], -0.5);
    }
  }
};

// x^y for a scalar y (Note [correctly rounded float lanes], pow): e^t, t = y log x from log's
// pair as a normalized pair, the monotone test with D = y1 (K0 + K1 |t|). The other lanes
// (|x| not normal, |t| > 87) and those the test leaves open take the double-lane row.
struct CrPow {
  float y;
  bool integral, odd;  // y an integer; an odd one
  static constexpr float kK0 = 0x1.6ap-35f, kK1 = 0x1.6ap-34f;  // 2^-34.5, 2^-33.5
  // |x|^y; a negative x takes x's sign for an odd y, and for a non-integral one glibc's
  // (x - x) / (x - x), the default NaN, as the double-lane row gives it (-inf: that row).
  using State = Pair;  // t
  HWY_INLINE State Stage1(DF d, VF x) const {
    const Pair l = LogUnrounded(d, hn::Abs(x));
    const VF vy = hn::Set(d, y);
    VF th = hn::Mul(vy, l.hi);
    VF tl = hn::MulAdd(vy, l.lo, hn::MulSub(vy, l.hi, th));
    Fast2Sum(th, tl, th, tl);
    return {th, tl};
  }
  HWY_INLINE VF Stage2(DF d, VF x, const State& t, MF& ok) const {
    const VF ax = hn::Abs(x);
    const ExpCorePair e = ExpCore<false, true>(d, t.hi, t.lo);
    const VF at = hn::Abs(t.hi);
    const VF dd = hn::Mul(e.y1, hn::MulAdd(at, hn::Set(d, kK1), hn::Set(d, kK0)));
    const VF yp = hn::Add(e.y1, hn::Add(e.lo, dd));
    const VF ym = hn::Add(e.y1, hn::Sub(e.lo, dd));
    ok = hn::And(hn::And(hn::Eq(yp, ym), LogCertifiedRange(d, ax)),
                 hn::Le(at, hn::Set(d, 87.0f)));
    VF r = ScaleExp(d, yp, e.kf, e.kbits);
    if (odd) r = hn::Or(r, hn::And(x, hn::Set(d, -0.0f)));
    if (!integral) {
      const MF invalid = hn::And(hn::Lt(x, hn::Zero(d)), hn::Gt(x, hn::Neg(hn::Inf(d))));
      if (HWY_UNLIKELY(!hn::AllFalse(d, invalid))) {
        const VF z = hn::Sub(x, x);
        r = hn::IfThenElse(invalid, hn::Div(z, z), r);
        ok = hn::Or(ok, invalid);
      }
    }
    return r;
  }
  void Slow(const float* in, float* out, std::size_t n, const UnaryParams&) const {
    pow_cr_row_f32(in, y, out, n);
  }
};

// Lanes whose rounding the test left open: their inputs and row positions, recomputed by the
// double-lane golden kernel in batches.
template <class Op>
class Pending {
 public:
  static constexpr std::size_t kBatch = 256;

  Pending(const UnaryParams& p, const Op& op) : params_(p), op_(op) {
    params_.stream_out = false;
    params_.fast = false;
  }
  // Adds the lanes of x at `failed`, which sit at out[base + lane].
  HWY_INLINE void Add(DF d, VF x, MF failed, float* out, std::size_t base) {
    const DI di;
    if (out != out_) Flush();
    out_ = out;
    if (n_ > 0 && base - base_ > (std::size_t{1} << 30)) Flush();
    if (n_ == 0) base_ = base;
    // Compress in registers, then whole-vector stores (a compressing store to memory is slow).
    const VI pos = hn::Iota(di, static_cast<std::int32_t>(base - base_));
    hn::StoreU(hn::Compress(pos, hn::RebindMask(di, failed)), di, pos_ + n_);
    hn::StoreU(hn::Compress(x, failed), d, x_ + n_);
    n_ += hn::CountTrue(d, failed);
    slow_ += hn::CountTrue(d, failed);
    if (n_ >= kBatch) Flush();
  }
  std::size_t slow_lanes() const { return slow_; }
  // The double path's results for every lane of x, stored at out. Consecutive vectors gather
  // into one run of up to kBatch values (x kept here: `in` may alias `out`), so the double
  // path pipelines across them (one vector at a time it waits on each vector's latency: sin
  // and cos beyond 2^18 took 5.2 ns a value that way).
  HWY_INLINE void Redo(DF d, VF x, float* out) {
    if (run_n_ > 0 && out != run_out_ + run_n_) FlushRun();
    if (run_n_ == 0) run_out_ = out;
    hn::Store(x, d, run_x_ + run_n_);
    run_n_ += hn::Lanes(d);
    slow_ += hn::Lanes(d);
    if (run_n_ >= kBatch) FlushRun();
  }
  void Flush() {
    FlushRun();
    if (n_ == 0) return;
    op_.Slow(x_, y_, n_, params_);
    for (std::size_t i = 0; i < n_; ++i) out_[base_ + static_cast<std::size_t>(pos_[i])] = y_[i];
    n_ = 0;
  }

 private:
  void FlushRun() {
    if (run_n_ == 0) return;
    op_.Slow(run_x_, run_out_, run_n_, params_);
    run_n_ = 0;
  }

  UnaryParams params_;
  const Op& op_;
  float* out_ = nullptr;
  float* run_out_ = nullptr;
  std::size_t base_ = 0, n_ = 0, slow_ = 0, run_n_ = 0;
  HWY_ALIGN float run_x_[kBatch + hn::MaxLanes(DF())];
  HWY_ALIGN float x_[kBatch + hn::MaxLanes(DF())];
  HWY_ALIGN float y_[kBatch + hn::MaxLanes(DF())];
  HWY_ALIGN std::int32_t pos_[kBatch + hn::MaxLanes(DF())];
};

// The line of out at p, fetched for writing: 4 KiB ahead of the stores, so that they seldom
// wait on the line's read (16M floats, one thread: exp 1.09-1.11x as fast, log 1.02-1.04x,
// sigmoid 1.01-1.02x; in cache no change: `build/bench/ab_rows --n 16777216`). The rows store
// plainly (Note [streaming stores] in elementwise.h), staged or not: computed into an L1 buffer
// of 512 to 4096 floats, each buffer then streamed to out, 16M floats of rsqrt, exp, log and
// silu ran 0.60-0.78x as fast (the streamed bursts stall the core; plain stores drain beside
// the compute). PREFETCHW on
// AVX-512 targets (every AVX-512 CPU has it); elsewhere the compiler's prefetch for writing.
HWY_INLINE void PrefetchW(float* p) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  asm volatile("prefetchw %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

template <class Op>
constexpr bool HasVectorSpecials() {
  if constexpr (requires { Op::kVectorSpecials; }) {
    return Op::kVectorSpecials;
  } else {
    return false;
  }
}

// Note [special lanes in vectors]: y and ok of the lanes Op computes in the vector. A vector
// whose open lanes are all -inf or NaN (a masked row, missing values) takes Special's value
// there after two compares, not SpecialLanes's tests (every op's SpecialLanes holds NaN, and
// Special gives -inf's value where Eval leaves -inf open): [2, 320, 64, 64] with -inf in every
// other element, one thread, 3-20% faster over the 14 ops of `bench/torch_sweep.py --filter
// masked` than SpecialLanes's tests (exp 1.37 -> 1.20 ms, silu 2.35 -> 2.03, gelu(tanh) 4.19
// -> 3.33); with NaN there (`--filter "NaN every"`), taking NaN here too moved exp 1.44 ->
// 1.35 ms, sigmoid 2.37 -> 2.03 and silu 2.67 -> 2.33 (the best of 4 runs alternating the two
// builds; the masked rows moved by under 8%, either way). correct_rounding_test's rows of
// -inf lanes and of NaN lanes (signs, payloads, signaling), bit for bit against the
// value-by-value rows.
//
// On AVX-512 the two compares are one vfpclassps and the test of ok | quick one kortestw, and
// the quick path falls through: against SpecialLanes's tests that ran exp 1.07x as fast with
// -inf or NaN in every other element, sigmoid 1.03-1.04x, softplus with NaN 1.06x, rsqrt of
// N(0, 1) 1.08x; silu and the rows without special lanes moved under 0.5% (`build/bench/ab_rows
// --ops exp/m,exp/n,sigmoid/m,sigmoid/n,softplus/n,rsqrt/h,silu/m,exp BEFORE AFTER`).
//
// Blocks: the pipelined loop runs in blocks of kSpecialBlockSteps steps. After a block in which
// at least half of the pairs of vectors had a lane take Special's value behind the branch, the
// next block applies InlineSpecials to every vector before the stores, branch-free, and leaves
// only deferral behind the branch; after a block in which fewer did, the next takes the branch
// again. The values are the same either way (a NaN or -inf lane outside SpecialLanes goes to
// the slow path instead of the quick one, with the same bits). 64Ki floats, one AVX-512 thread
// (`build/bench/ab_rows`; OP/h: N(0, 1), OP/m and OP/n: -inf or NaN in every other element,
// OP/s: a NaN in every 1000th): rsqrt/h 1.34x as fast, log/h, log2/h and log10/h 1.23-1.27x,
// silu/m 1.13x, sigmoid/m 1.09x, atanh, atan, sinh, softplus, gelu, log1p and asinh 1.04-1.08x,
// exp 1.03x, sin, cos and tan 0.99-1.02x; OP/s and every op's ordinary rows within 2% of the
// loop without blocks. Switching after any block with a special lane ran the OP/s rows
// 0.67-0.85x as fast (rsqrt, log, exp, silu), InlineSpecials on every vector of every row the
// ordinary rows 0.57-0.73x (rsqrt, exp, log, sigmoid, silu). cosh and gelu(tanh), whose
// ordinary rows ran 4% and 2.5% slower in blocks, keep that loop (kPlainLoop).
HWY_INLINE MF NaNOrNegInf(DF d, VF x) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)d;
  return MF{_mm512_fpclass_ps_mask(x.raw, 0x91)};  // QNaN 0x01, -inf 0x10, SNaN 0x80
#else
  return hn::Or(hn::Eq(x, hn::Neg(hn::Inf(d))), hn::IsNaN(x));
#endif
}
// AllTrue(d, Or(a, b)).
HWY_INLINE bool AllTrueEither(DF d, MF a, MF b) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)d;
  return _kortestc_mask16_u8(a.raw, b.raw) != 0;
#else
  return hn::AllTrue(d, hn::Or(a, b));
#endif
}

// Returns whether a lane took Special's value.
template <class Op>
HWY_INLINE bool ApplySpecials(DF d, VF x, VF& y, MF& ok) {
  if constexpr (HasVectorSpecials<Op>()) {
    if (HWY_UNLIKELY(!hn::AllTrue(d, ok))) {
      const MF quick = NaNOrNegInf(d, x);
      if (HWY_LIKELY(AllTrueEither(d, ok, quick))) {
        y = hn::IfThenElse(hn::AndNot(ok, quick), Op::Special(d, x), y);
        ok = hn::Or(ok, quick);
        return true;
      }
      const MF special = hn::AndNot(ok, Op::SpecialLanes(d, x));
      if (!hn::AllFalse(d, special)) {
        y = hn::IfThenElse(special, Op::Special(d, x), y);
        ok = hn::Or(ok, special);
        return true;
      }
    }
  }
  return false;
}
// ApplySpecials without its branches: the lanes of SpecialLanes that ok leaves open take
// Special's value. Returns those lanes.
template <class Op>
HWY_INLINE MF InlineSpecials(DF d, VF x, VF& y, MF& ok) {
  const MF special = hn::AndNot(ok, Op::SpecialLanes(d, x));
  y = hn::IfThenElse(special, Op::Special(d, x), y);
  ok = hn::Or(ok, special);
  return special;
}

// Note [two-stage float lanes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each float-lane Eval is one long dependency chain from x to the rounding test (about 25 dependent
// operations for sigmoid, twice that for gelu), and the core takes instructions into its scheduler
// in program order: a step of two whole chains fills the scheduler with instructions that wait on
// their own chain while the ports idle (llvm-mca -mcpu=icelake-server on the compiled AVX-512 loop:
// sigmoid 62 cycles a step against 40 of port pressure, gelu 145 against 80; two more vectors a
// step shortens no chain and moved no op beyond noise). An op that splits its evaluation into
// Stage1 (x to its State) and Stage2 (x and State to y and ok) in place of Eval runs software
// pipelined: each step starts Stage1 of the next two vectors and finishes the two before, so the
// chains in the scheduler are half as long. Where a vector is evaluated alone, EvalLanes runs
// Stage2 of Stage1: the same operations on the same values, so the same bits either way
// (bits_digest on every target). A vector with a lane beyond kFloatLanesBound goes through `one` as
// in the plain loop, its Stage1 discarded. Every float-lane op splits, each near the middle of its
// chain or after its exp: exp's pair (exp, exp2, cosh, sigmoid, silu, gelu_tanh after w), e^x - 1's
// pair (expm1, tanh, sinh), log's reduction (log, log2, log10, log1p, softplus after its exp,
// asinh, acosh and atanh after log1p's argument, pow's t after the whole log), atan's quotient,
// asin's piece, the reduced arguments (sin, cos, tan), log Q (gelu), and rsqrt's e (log, log2
// and log10 meet as LogFold's four vectors, sigmoid and silu as ExpPair's).
//
// On AVX-512 some ops take two pairs a step (kPipelinedPairs = kPairsWide): the second pair's
// chains fill what the first leaves of the 32 registers and the ports. On an AMD EPYC with
// AVX-512, one thread, 64Ki floats in cache, two pairs against one (`build/bench/ab_rows
// --rounds 300`): asin and acos 1.18-1.20x as fast, log2 and log10 1.13-1.17x, rsqrt
// 1.09-1.12x, gelu(tanh), exp2, atan, sigmoid and gelu 1.02-1.06x; silu and cosh moved within
// noise either way, and log, log1p, softplus, asinh, sin and sinh ran 1.6-3.7% slower, so they
// keep one pair. Targets of 16 registers keep one pair.
//
// Steps of the pipelined loop a block (Note [special lanes in vectors], blocks).
constexpr std::size_t kSpecialBlockSteps = 64;
// Whether CrRow switches to InlineSpecials after a block with special lanes: the ops with
// vector special lanes, but those whose ordinary rows ran slower in blocks (Op::kPlainLoop).
template <class Op>
constexpr bool InlineSpecialBlocks() {
  if constexpr (requires { Op::kPlainLoop; }) {
    return HasVectorSpecials<Op>() && !Op::kPlainLoop;
  } else {
    return HasVectorSpecials<Op>();
  }
}

// Pairs of vectors a pipelined step: Op::kPipelinedPairs, else 1.
template <class Op>
constexpr std::size_t PipelinedPairs() {
  if constexpr (requires { Op::kPipelinedPairs; }) {
    return Op::kPipelinedPairs;
  } else {
    return 1;
  }
}

// Op's y and ok for the lanes of x: Eval, or Stage2 of Stage1 for an op in two stages.
template <class Op>
HWY_INLINE VF EvalLanes(const Op& op, DF d, VF x, MF& ok) {
  if constexpr (requires { typename Op::State; }) {
    return op.Stage2(d, x, op.Stage1(d, x), ok);
  } else {
    return op.Eval(d, x, ok);
  }
}

template <class Op>
void CrRow(const float* in, float* out, std::size_t n, const UnaryParams& p, const Op& op = Op{}) {
  const DF d;
  const std::size_t step = hn::Lanes(d);
  Pending<Op> pending(p, op);
  // The lanes of x at out[at..] that ok leaves open, to the double path: a mostly failing
  // vector (adversarial inputs) whole.
  const auto defer = [&](VF x, MF ok, std::size_t at) {
    const MF failed = hn::Not(ok);
    if (hn::CountTrue(d, failed) <= step / 4) {
      pending.Add(d, x, failed, out, at);
    } else {
      pending.Redo(d, x, out + at);
    }
  };
  // Within Eval's certified bound, where the op has one (else the whole vector goes to the
  // double path: a lane the float lanes never certify, or NaN).
  const auto within_bound = [&](VF x) {
    if constexpr (requires { Op::kFloatLanesBound; }) {
      return hn::AllTrue(d, hn::Le(hn::Abs(x), hn::Set(d, Op::kFloatLanesBound)));
    } else {
      return true;
    }
  };
  // One vector at out[at..].
  const auto one = [&](VF x, std::size_t at) {
    MF ok;
    VF y;
    if (HWY_UNLIKELY(!within_bound(x))) {
      // Lanes beyond the bound go to the double path with their vector, unless each is a
      // special lane (Note [special lanes in vectors]: +-inf and NaN among finite arguments).
      if constexpr (requires { Op::kFloatLanesBound; } && HasVectorSpecials<Op>()) {
        const MF in = hn::Le(hn::Abs(x), hn::Set(d, Op::kFloatLanesBound));
        if (!hn::AllTrue(d, hn::Or(in, Op::SpecialLanes(d, x)))) {
          pending.Redo(d, x, out + at);
          return;
        }
        y = EvalLanes(op, d, x, ok);
        ok = hn::And(ok, in);  // Eval certifies no lane beyond the bound
      } else {
        pending.Redo(d, x, out + at);
        return;
      }
    } else {
      y = EvalLanes(op, d, x, ok);
    }
    ApplySpecials<Op>(d, x, y, ok);
    hn::StoreU(y, d, out + at);  // x is in a register: `in` may alias `out`
    if (HWY_UNLIKELY(!hn::AllTrue(d, ok))) defer(x, ok, at);
  };
  // The lines of in and out 4 KiB ahead of the two vectors at `at` (for in, each of them:
  // prefetching only every other line ran sigmoid and rsqrt 1.11-1.17x slower on 16M floats).
  const auto prefetch = [&](std::size_t at) __attribute__((always_inline)) {
    constexpr std::size_t kAhead = 1024;
    hwy::Prefetch(in + at + kAhead);
    hwy::Prefetch(in + at + kAhead + step);
    PrefetchW(out + at + kAhead);
    PrefetchW(out + at + kAhead + step);
  };
  // Two vectors at out[at..]: eval(y0, ok0, y1, ok1) evaluates them, unless a lane is beyond
  // the bound; then their special lanes, the stores and the open lanes' deferral. Inlined by
  // force: as a call (three sites) its vectors pass through memory.
  // `inline_specials` (std::bool_constant) true: InlineSpecials before the stores, and only the
  // deferral behind the branch. `seen` counts the calls in which a lane took Special's value.
  const auto two = [&](auto inline_specials, VF x0, VF x1, std::size_t at, const auto& eval,
                       std::size_t& seen) __attribute__((always_inline)) {
    constexpr bool kInline = decltype(inline_specials)::value && HasVectorSpecials<Op>();
    if (HWY_UNLIKELY(!within_bound(x0) || !within_bound(x1))) {
      one(x0, at);
      one(x1, at + step);
      return;
    }
    MF ok0, ok1;
    VF y0, y1;
    eval(y0, ok0, y1, ok1);
    if constexpr (kInline) {
      const MF special0 = InlineSpecials<Op>(d, x0, y0, ok0);
      const MF special1 = InlineSpecials<Op>(d, x1, y1, ok1);
      seen += !hn::AllFalse(d, hn::Or(special0, special1));
    }
    // The stores first, then one branch for both vectors' special lanes and deferral, which
    // store again where they change y: against a branch per vector for ApplySpecials and one
    // for the pair before the stores, 64Ki floats on one AVX-512 thread ran rsqrt 1.18x as
    // fast, log, silu and sin 1.06-1.07x, sigmoid 1.05x and exp 1.03x, rows with a special
    // lane in every vector 0.98-1.06x (`build/bench/ab_rows --ops
    // exp,rsqrt,log,sigmoid,silu,sin,exp/m,sigmoid/n,rsqrt/h,silu/m,softplus/n`). The branch
    // waits on the whole evaluation, and each time it goes the other way the work issued behind
    // it is lost: with every lane passing, unary_cache/log ran 18% faster at a 0.38% failure
    // rate, so lower rates (the monotone test) pay twice. Branch-free deferral was slower:
    // compressing every vector into the batch (exp 2.9 -> 2.2 G/s), storing it with its mask
    // in a ring whose slot advances on a failure (2.5-2.7 G/s), or storing the masks alone and
    // finding the open vectors every 64 by words (rsqrt, exp, log and gelu 0.93-0.99x).
    hn::StoreU(y0, d, out + at);
    hn::StoreU(y1, d, out + at + step);
    if (HWY_UNLIKELY(!hn::AllTrue(d, hn::And(ok0, ok1)))) {
      bool special = false;
      const auto settle = [&](VF x, VF y, MF ok, std::size_t a) __attribute__((always_inline)) {
        if (hn::AllTrue(d, ok)) return;
        if constexpr (!kInline) {
          if (ApplySpecials<Op>(d, x, y, ok)) {
            special = true;
            hn::StoreU(y, d, out + a);
          }
        }
        if (!hn::AllTrue(d, ok)) defer(x, ok, a);
      };
      settle(x0, y0, ok0, at);
      settle(x1, y1, ok1, at + step);
      if constexpr (!kInline) seen += special;
    }
  };
  std::size_t i = 0;
  if constexpr (requires { typename Op::State; }) {
    // Software pipelined (Note [two-stage float lanes]): each step starts the next kPairs
    // pairs of vectors' first stage and finishes the pairs before.
    constexpr std::size_t kPairs = PipelinedPairs<Op>();
    struct Started {
      VF x0, x1;
      typename Op::State s0, s1;
    };
    const auto start = [&](std::size_t at) __attribute__((always_inline)) {
      const VF x0 = hn::LoadU(d, in + at), x1 = hn::LoadU(d, in + at + step);
      return Started{x0, x1, op.Stage1(d, x0), op.Stage1(d, x1)};
    };
    const auto finish = [&](auto inline_specials, const Started& v, std::size_t at,
                            std::size_t& seen) __attribute__((always_inline)) {
      two(
          inline_specials, v.x0, v.x1, at,
          [&](VF& y0, MF& ok0, VF& y1, MF& ok1) __attribute__((always_inline)) {
            y0 = op.Stage2(d, v.x0, v.s0, ok0);
            y1 = op.Stage2(d, v.x1, v.s1, ok1);
          },
          seen);
    };
    static_assert(kPairs == 1 || kPairs == 2);
    if (n >= 2 * kPairs * step) {
      // The pairs started and not yet finished: a, and b when kPairs is 2 (named, not an
      // array: GCC keeps an array of them in memory, rsqrt 0.93x as fast).
      Started a = start(0), b = kPairs == 2 ? start(2 * step) : a;
      // The steps while i + 4 kPairs vectors <= limit; returns whether in at least half of its
      // pairs of vectors a lane took Special's value (Note [special lanes in vectors], blocks).
      const auto steps = [&](auto inline_specials,
                             std::size_t limit) __attribute__((always_inline)) {
        const std::size_t begin = i;
        std::size_t seen = 0;
        for (; i + 4 * kPairs * step <= limit; i += 2 * kPairs * step) {
          prefetch(i);
          const Started next_a = start(i + 2 * kPairs * step);
          finish(inline_specials, a, i, seen);
          a = next_a;
          if constexpr (kPairs == 2) {
            prefetch(i + 2 * step);
            const Started next_b = start(i + 6 * step);
            finish(inline_specials, b, i + 2 * step, seen);
            b = next_b;
          }
        }
        return 2 * seen >= (i - begin) / (2 * step);
      };
      if constexpr (InlineSpecialBlocks<Op>()) {
        const std::size_t block = kSpecialBlockSteps * 2 * kPairs * step;
        bool inline_specials = false;
        while (i + 4 * kPairs * step <= n) {
          const std::size_t limit = std::min(n, i + 2 * kPairs * step + block);
          inline_specials = inline_specials ? steps(std::true_type{}, limit)
                                            : steps(std::false_type{}, limit);
        }
      } else {
        steps(std::false_type{}, n);
      }
      std::size_t seen = 0;
      finish(std::false_type{}, a, i, seen);
      if constexpr (kPairs == 2) finish(std::false_type{}, b, i + 2 * step, seen);
      i += 2 * kPairs * step;
    }
  }
  // Two vectors a step: each is one long dependency chain, and two independent ones in
  // program order keep the pipes busier (unary_cache/exp 1.57 -> 1.76 G/s, log 1.42 -> 1.47,
  // sigmoid 1.18 -> 1.24 on one AVX-512 thread). Four a step moved each op by under 9%, not
  // all one way (unary_cache: cos and silu 5-6% up; tanh, sinh and asinh 6-8% down).
  for (; i + 2 * step <= n; i += 2 * step) {
    prefetch(i);
    const VF x0 = hn::LoadU(d, in + i), x1 = hn::LoadU(d, in + i + step);
    std::size_t seen = 0;
    two(
        std::false_type{}, x0, x1, i,
        [&](VF& y0, MF& ok0, VF& y1, MF& ok1) __attribute__((always_inline)) {
          y0 = EvalLanes(op, d, x0, ok0);
          y1 = EvalLanes(op, d, x1, ok1);
        },
        seen);
  }
  for (; i + step <= n; i += step) one(hn::LoadU(d, in + i), i);
  if (i < n) {
    HWY_ALIGN float buf_in[hn::MaxLanes(DF())] = {};
    HWY_ALIGN float buf_out[hn::MaxLanes(DF())];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    const VF x = hn::Load(d, buf_in);
    MF ok;
    VF y = EvalLanes(op, d, x, ok);
    if constexpr (requires { Op::kFloatLanesBound; }) {
      // Eval certifies only lanes within the bound (the loop sends other vectors away whole)
      ok = hn::And(ok, hn::Le(hn::Abs(x), hn::Set(d, Op::kFloatLanesBound)));
    }
    ApplySpecials<Op>(d, x, y, ok);
    hn::Store(y, d, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
    const MF live = hn::FirstN(d, n - i);  // the padding lanes are not out's
    const MF failed = hn::AndNot(ok, live);
    if (!hn::AllFalse(d, failed)) pending.Add(d, x, failed, out, i);
  }
  pending.Flush();
  note_unary_cr_lanes(n, pending.slow_lanes());
}

}  // namespace
#endif  // HWY_NATIVE_FMA

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_UNARY_CR_INL_H_
