// The vectorized row paths of the reductions, softmax and normalizations (row_stats.h):
// identical bits on every SIMD target and thread count (Note [sum lanes]), vector tails of
// every length, chunked channels-last group_norm, all against long double oracles written here.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/mpsim.h"
#include "kernels_simd/row_stats.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using LD = long double;

std::vector<float> random_floats(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

double ulps(float got, LD exact) {
  if (std::isnan(got) || std::isnan(exact)) return std::isnan(got) && std::isnan(exact) ? 0 : 1e9;
  int e = 0;
  std::frexp(exact, &e);
  return static_cast<double>(std::fabs(got - exact) / std::ldexp(1.0L, std::max(e, -125) - 24));
}

// Every result of the vectorized paths, as bytes: float sums over both dims (tails of 5),
// softmax rows of 1029, layer_norm rows of 333 (weight and bias dense), rms_norm, group_norm
// NCHW (weight constant along rows) and channels-last (the per-channel path).
std::vector<std::uint8_t> battery() {
  const Tensor x = from_vector(random_floats(37 * 1029, -3, 5, 1), {37, 1029});
  const Tensor ln = from_vector(random_floats(64 * 333, 90, 110, 2), {64, 333});
  const Tensor w = from_vector(random_floats(333, 0.5, 2, 3), {333});
  const Tensor b = from_vector(random_floats(333, -1, 1, 4), {333});
  const Tensor g = from_vector(random_floats(2 * 12 * 9 * 11, -2, 3, 5), {2, 12, 9, 11});
  const Tensor gw = from_vector(random_floats(12, 0.5, 2, 6), {12});
  const Tensor g_cl = g.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  // Channels-last group_norm over 32 chunks of rows (a 2 MiB sample, larger than L2).
  const Tensor gb = from_vector(random_floats(32 * 128 * 128, -2, 3, 10), {1, 32, 128, 128})
                        .permute({0, 2, 3, 1})
                        .contiguous()
                        .permute({0, 3, 1, 2});
  const Tensor gbw = from_vector(random_floats(32, 0.5, 2, 11), {32});
  std::vector<std::uint8_t> bytes;
  for (const Tensor& t : {mpsim::sum(x, {1}),
                          mpsim::sum(x, {0}),
                          mean(x, {1}),
                          norm(x, {1}),
                          norm(x, {0}),
                          softmax(x, 1),
                          softmax(x.narrow(1, 0, 77), 1),  // short rows: tiles of 8
                          log_softmax(x, 1),
                          log_softmax(x.narrow(1, 0, 77), 1),
                          softmax(x, 0),
                          layer_norm(ln, {333}, w, b),
                          rms_norm(ln, {333}, w),
                          group_norm(g, 4, gw, gw),
                          group_norm(g_cl, 4, gw, gw),
                          group_norm(gb, 4, gbw, gbw),
                          var(x, {1}),
                          mpsim::std(x, {0}),
                          amax(x, {1}),
                          amin(x, {1}),
                          argmax(x, 1),
                          argmin(x, 1),
                          logsumexp(x, {1}),
                          prod(x, {1}),
                          prod(x.t(), {1}),
                          prod(x, {0})}) {
    const Tensor c = t.contiguous();
    const auto* p = static_cast<const std::uint8_t*>(c.data_ptr());
    bytes.insert(bytes.end(), p, p + c.nbytes());
  }
  return bytes;
}

TEST(RowPaths, EveryTargetAndThreadCountGivesTheSameBits) {
  std::vector<std::uint8_t> reference;
  test::for_each_target([&](const std::string&) {
    for (int threads : {1, 2, 8}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      const std::vector<std::uint8_t> bytes = battery();
      if (reference.empty()) reference = bytes;
      ASSERT_EQ(bytes.size(), reference.size());
      EXPECT_EQ(std::memcmp(bytes.data(), reference.data(), bytes.size()), 0)
          << threads << " threads";
    }
  });
}

// Rows of every length up to three vectors and a few past a thousand: the vector body, the
// padded tail and the scalar lanes all meet the oracle.
TEST(RowPaths, SoftmaxLayerNormAndSumTailsVsOracle) {
  std::vector<int> lengths;
  for (int n = 1; n <= 40; ++n) lengths.push_back(n);
  for (int n : {1000, 1001, 1007, 1024}) lengths.push_back(n);
  for (int n : lengths) {
    const int rows = 11;  // a tile of 8 short rows (Note [softmax row tiles]), 3 alone
    const std::vector<float> v = random_floats(static_cast<std::size_t>(rows * n), -20, 20, n);
    const Tensor x = from_vector(v, {rows, n});
    const std::vector<float> s = softmax(x, 1).to_vector<float>();
    const std::vector<float> ls = log_softmax(x, 1).to_vector<float>();
    const std::vector<float> sm = mpsim::sum(x, {1}).to_vector<float>();
    const std::vector<float> ln = layer_norm(x, {n}).to_vector<float>();
    for (int r = 0; r < rows; ++r) {
      const float* row = v.data() + r * n;
      // z = 1 + z1 with z1 the sum over all but the first max, so log z = log1p(z1) keeps a
      // z1 far below the long double epsilon.
      LD m = -INFINITY, z1 = 0, total = 0, mean = 0, var = 0;
      int first_max = 0;
      for (int k = 0; k < n; ++k) {
        if (row[k] > m) {
          m = row[k];
          first_max = k;
        }
      }
      for (int k = 0; k < n; ++k) {
        if (k != first_max) z1 += std::exp(static_cast<LD>(row[k]) - m);
      }
      const LD z = 1 + z1, log_z = std::log1p(z1);
      for (int k = 0; k < n; ++k) total += row[k];
      mean = total / n;
      for (int k = 0; k < n; ++k) var += (row[k] - mean) * (row[k] - mean);
      var /= n;
      EXPECT_LE(ulps(sm[r], total), 0.5) << "sum n=" << n;
      for (int k = 0; k < n; ++k) {
        const int i = r * n + k;
        EXPECT_LE(ulps(s[i], std::exp(row[k] - m) / z), 0.5) << "softmax n=" << n << " " << k;
        EXPECT_LE(ulps(ls[i], (row[k] - m) - log_z), 0.5) << "log_softmax n=" << n << " " << k;
        if (n > 1) {
          EXPECT_LE(ulps(ln[i], (row[k] - mean) / std::sqrt(var + 1e-5L)), 1.0)
              << "layer_norm n=" << n << " " << k;
        }
      }
    }
  }
}

// Channels-last group_norm with more spatial rows than one chunk holds (rows of 64 channels,
// 256 rows per chunk, 1089 rows), large offsets, against the oracle; NCHW gives the oracle too.
TEST(RowPaths, ChannelsLastGroupNormOverManyChunksVsOracle) {
  const std::int64_t n = 3, c = 64, h = 33, w = 33, groups = 8;
  const std::vector<float> xv = random_floats(n * c * h * w, 995, 1005, 7);
  const std::vector<float> wv = random_floats(c, 0.5, 2, 8), bv = random_floats(c, -1, 1, 9);
  const Tensor x = from_vector(xv, {n, c, h, w});
  const Tensor x_cl = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  const std::vector<float> a =
      group_norm(x_cl, groups, from_vector(wv, {c}), from_vector(bv, {c})).to_vector<float>();
  const std::vector<float> b =
      group_norm(x, groups, from_vector(wv, {c}), from_vector(bv, {c})).to_vector<float>();
  const std::int64_t per_group = c / groups * h * w;
  double worst_cl = 0, worst_nchw = 0;
  for (std::int64_t s = 0; s < n * groups; ++s) {
    LD mean = 0, var = 0;
    for (std::int64_t i = 0; i < per_group; ++i) mean += xv[s * per_group + i];
    mean /= per_group;
    for (std::int64_t i = 0; i < per_group; ++i) {
      const LD d = xv[s * per_group + i] - mean;
      var += d * d;
    }
    var /= per_group;
    for (std::int64_t i = 0; i < per_group; ++i) {
      const std::int64_t at = s * per_group + i, ch = (at / (h * w)) % c;
      const LD want = (xv[at] - mean) / std::sqrt(var + 1e-5L) * wv[ch] + bv[ch];
      worst_cl = std::max(worst_cl, ulps(a[at], want));
      worst_nchw = std::max(worst_nchw, ulps(b[at], want));
    }
  }
  EXPECT_LE(worst_cl, 1.0);
  EXPECT_LE(worst_nchw, 1.0);
}

// Rows holding NaN or infinities leave the vector path for the scalar one, with PyTorch's
// results: a NaN or a +inf makes the row NaN; -inf elements get probability 0 (log: -inf, which
// the vector path must round to -inf on every target: Highway's scalar DemoteTo clamps).
void check_softmax_special_rows() {
  const float inf = INFINITY;
  const Tensor x = from_vector<float>({1, 2, NAN, 4, 1, inf, 3, 4, 1, -inf, 3, -inf}, {3, 4});
  const std::vector<float> s = softmax(x, 1).to_vector<float>();
  const std::vector<float> ls = log_softmax(x, 1).to_vector<float>();
  for (int k = 0; k < 8; ++k) {
    EXPECT_TRUE(std::isnan(s[k])) << k;
    EXPECT_TRUE(std::isnan(ls[k])) << k;
  }
  const LD z = std::exp(-2.0L) + 1;
  EXPECT_LE(ulps(s[8], std::exp(-2.0L) / z), 0.5);
  EXPECT_EQ(s[9], 0.0f);
  EXPECT_LE(ulps(s[10], 1 / z), 0.5);
  EXPECT_EQ(ls[9], -inf);
  EXPECT_LE(ulps(ls[10], -std::log(z)), 0.5);
}

class RowPathsOnTarget : public test::OnEveryTarget {};

TEST_P(RowPathsOnTarget, SoftmaxSpecialRowsTakeTheScalarPath) {
  check_softmax_special_rows();
}
// var/std of float chunks: two passes (chunk mean, then squared deviations) in the sum lanes,
// the same bits for a dense row and a strided column, within 1 ULP of the oracle with large
// offsets; rows longer than a chunk merge per-chunk states.
TEST(RowPaths, VarStdTwoPassDenseAndStridedVsOracle) {
  for (std::int64_t n : {5, 33, 1000, 40000}) {
    const std::vector<float> v = random_floats(static_cast<std::size_t>(3 * n), 995, 1005, 11);
    const Tensor x = from_vector(v, {3, n});
    const Tensor xt = x.t().contiguous().t();  // the same values, strided rows
    const std::vector<float> a = var(x, {1}).to_vector<float>();
    const std::vector<float> b = var(xt, {1}).to_vector<float>();
    const std::vector<float> s = mpsim::std(x, {1}, 0).to_vector<float>();
    for (int r = 0; r < 3; ++r) {
      LD mean = 0, m2 = 0;
      for (std::int64_t k = 0; k < n; ++k) mean += v[r * n + k];
      mean /= n;
      for (std::int64_t k = 0; k < n; ++k) m2 += (v[r * n + k] - mean) * (v[r * n + k] - mean);
      EXPECT_LE(ulps(a[r], m2 / (n - 1)), 1.0) << "var n=" << n;
      EXPECT_LE(ulps(s[r], std::sqrt(m2 / n)), 1.0) << "std n=" << n;
      EXPECT_EQ(a[r], b[r]) << "dense and strided paths, n=" << n;
    }
  }
}

// amax/amin/argmax/argmin of dense float rows (the vector path) against scans written here:
// NaN wins (argmax: the first NaN), +0 beats -0 for amax and -0 beats +0 for amin, argmax and
// argmin give the first of equal extremes.
TEST(RowPaths, ExtremesOfDenseRowsFollowTorchRules) {
  const int n = 100;
  std::vector<float> v(5 * n);
  for (int k = 0; k < 5 * n; ++k) v[k] = static_cast<float>((k * 37) % 101) - 60;  // <= 40
  // Row 0: the max 40 at several places; row 1: NaNs at 70 and 80; row 2: only zeros, +0 at 90;
  // row 3: all -inf; row 4: the min -60 at 3 and 99.
  for (int k : {7, 50, 99}) v[k] = 41;
  v[n + 70] = NAN;
  v[n + 80] = NAN;
  for (int k = 0; k < n; ++k) v[2 * n + k] = -0.0f;
  v[2 * n + 90] = 0.0f;
  for (int k = 0; k < n; ++k) v[3 * n + k] = -INFINITY;
  for (int k = 0; k < n; ++k) v[4 * n + k] = static_cast<float>(k % 7);
  v[4 * n + 3] = v[4 * n + 99] = -60;
  const Tensor x = from_vector(v, {5, n});
  const std::vector<float> mx = amax(x, {1}).to_vector<float>();
  const std::vector<float> mn = amin(x, {1}).to_vector<float>();
  const std::vector<std::int64_t> am = argmax(x, 1).to_vector<std::int64_t>();
  const std::vector<std::int64_t> an = argmin(x, 1).to_vector<std::int64_t>();
  EXPECT_EQ(mx[0], 41);
  EXPECT_EQ(am[0], 7);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(am[1], 70);
  EXPECT_EQ(an[1], 70);
  EXPECT_EQ(mx[2], 0.0f);
  EXPECT_FALSE(std::signbit(mx[2]));
  EXPECT_TRUE(std::signbit(mn[2]));
  EXPECT_EQ(am[2], 0);  // zeros compare equal: the first one
  EXPECT_EQ(an[2], 0);
  EXPECT_EQ(mx[3], -INFINITY);
  EXPECT_EQ(am[3], 0);
  EXPECT_EQ(mn[4], -60);
  EXPECT_EQ(an[4], 3);
  // Every row against a plain scan.
  for (int r = 0; r < 5; ++r) {
    if (r == 1) continue;
    int imax = 0, imin = 0;
    for (int k = 1; k < n; ++k) {
      if (v[r * n + k] > v[r * n + imax]) imax = k;
      if (v[r * n + k] < v[r * n + imin]) imin = k;
    }
    EXPECT_EQ(am[r], imax) << r;
    EXPECT_EQ(an[r], imin) << r;
    EXPECT_EQ(mx[r], v[r * n + imax]) << r;
    EXPECT_EQ(mn[r], v[r * n + imin]) << r;
  }
}

// logsumexp of dense float rows (vectorized: max, then exp(x - max) in the sum lanes) over one
// and several chunks, against the oracle; NaN, +inf and all -inf rows as PyTorch.
TEST(RowPaths, LogSumExpDenseRowsVsOracle) {
  for (std::int64_t n : {3, 100, 40000}) {
    const std::vector<float> v = random_floats(static_cast<std::size_t>(2 * n), -30, 30, 12);
    const std::vector<float> got = logsumexp(from_vector(v, {2, n}), {1}).to_vector<float>();
    for (int r = 0; r < 2; ++r) {
      LD m = -INFINITY, z = 0;
      for (std::int64_t k = 0; k < n; ++k) m = std::max<LD>(m, v[r * n + k]);
      for (std::int64_t k = 0; k < n; ++k) z += std::exp(v[r * n + k] - m);
      EXPECT_LE(ulps(got[r], m + std::log(z)), 1.0) << "n=" << n;
    }
  }
  std::vector<float> s(4 * 40, 1.0f);
  s[5] = NAN;
  s[40 + 7] = INFINITY;
  for (int k = 0; k < 40; ++k) s[80 + k] = -INFINITY;
  const std::vector<float> got = logsumexp(from_vector(s, {4, 40}), {1}).to_vector<float>();
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], INFINITY);
  EXPECT_EQ(got[2], -INFINITY);
  EXPECT_LE(ulps(got[3], 1 + std::log(40.0L)), 0.5);
}

// The double exp of the float softmax rows (Note [softmax exp] in row_softmax.cc), read from the
// scratch row of sum_exp_lanes_f32: relative error < 2^-47 against long double on every
// target, over t = x - max from -708 to 0, at the edges of its 2^(j/16) pieces ((K +- 1/2)
// ln2/16) and in its reduction's exact cases (t = K ln2/16 rounded to float); exactly 0 below
// -708 (x = -inf included), exactly 1 at the max.
TEST_P(RowPathsOnTarget, SoftmaxExpWithinTwoToTheMinus47) {
  std::vector<float> x = random_floats(20000, -708, 0, 21);
  const LD ln2_16 = std::log(2.0L) / 16;
  for (int k = -16343; k <= 0; k += 7) {
    for (LD frac : {-0.5L, -0.4999L, 0.0L, 0.4999L, 0.5L}) {
      const float t = static_cast<float>((k + frac) * ln2_16);
      if (t >= -708.0f && t <= 0.0f) x.push_back(t);
    }
  }
  for (float v : {-1e-30f, -1e-7f, -0x1p-149f, -708.0f, -708.001f, -709.0f, -1e30f, -INFINITY}) {
    x.push_back(v);
  }
  x.push_back(0.0f);  // the max
  const std::size_t n = x.size();
  std::vector<double> e(n);
  double lanes[simd::kSumLanes] = {};
  simd::sum_exp_lanes_f32(x.data(), n, 0.0, e.data(), lanes);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] < -708.0f) {
      EXPECT_EQ(e[i], 0.0) << target() << " t=" << x[i];
      continue;
    }
    const LD exact = std::exp(static_cast<LD>(x[i]));
    worst = std::max(worst, static_cast<double>(std::fabs(e[i] / exact - 1)));
  }
  EXPECT_LT(worst, 0x1p-47) << target();
  std::cout << target() << ": worst relative error 2^" << std::log2(worst) << "\n";
  EXPECT_EQ(e[n - 1], 1.0) << target();
}

// The vectorized per-output steps of the reductions against their scalar definitions, in
// double, bit for bit, on every target: fold_lane_columns (fold_lanes, then a Neumaier sum of
// the 8 folded lanes) over outputs with a tail, and sum_rows_f32 (zeroed lanes, sum_lanes_f32,
// fold, two Neumaier sums, value()) over rows with partial tiles, on values of mixed
// magnitudes whose sums round, with infinities and NaN among them.
TEST_P(RowPathsOnTarget, VectorizedPerOutputStepsGiveTheScalarBits) {
  std::mt19937_64 gen(31);
  std::uniform_real_distribution<double> uni(-1, 1);
  const std::size_t outputs = 77, stride = 80;
  std::vector<double> lanes(simd::kSumLanes * stride);
  for (double& l : lanes) l = std::ldexp(uni(gen), static_cast<int>(gen() % 60) - 30);
  lanes[3 * stride + 5] = INFINITY;
  lanes[7 * stride + 9] = NAN;
  lanes[2 * stride + 9] = -INFINITY;
  std::vector<float> rows(43 * 70);
  for (float& f : rows)
    f = static_cast<float>(std::ldexp(uni(gen), static_cast<int>(gen() % 40) - 20));
  rows[70 * 3 + 1] = INFINITY;
  rows[70 * 5 + 2] = NAN;
  std::vector<double> sums(outputs), comps(outputs);
  simd::fold_lane_columns(lanes.data(), stride, outputs, sums.data(), comps.data());
  for (std::size_t j = 0; j < outputs; ++j) {
    double l[simd::kSumLanes], f[8];
    for (std::size_t k = 0; k < simd::kSumLanes; ++k) l[k] = lanes[k * stride + j];
    simd::fold_lanes(l, f);
    simd::Neumaier part;
    for (double v : f) part.add(v);
    ASSERT_TRUE(std::memcmp(&sums[j], &part.sum, 8) == 0 &&
                std::memcmp(&comps[j], &part.comp, 8) == 0)
        << target() << " output " << j;
  }
  for (const bool squares : {false, true}) {
    std::vector<double> out(43);
    simd::sum_rows_f32(rows.data(), 70, 43, 70, squares, out.data());
    for (std::size_t r = 0; r < 43; ++r) {
      double l[simd::kSumLanes] = {}, f[8];
      simd::sum_lanes_f32(rows.data() + r * 70, 70, squares, l);
      simd::fold_lanes(l, f);
      simd::Neumaier part, total;
      for (double v : f) part.add(v);
      total.add(part.sum);
      total.add(part.comp);
      const double want = total.value();
      ASSERT_TRUE(std::memcmp(&out[r], &want, 8) == 0 || (std::isnan(out[r]) && std::isnan(want)))
          << target() << " row " << r << (squares ? " squares" : "");
    }
  }
}

// Note [softmax row tiles] (row_softmax.cc): a tile of softmax or log_softmax rows gives each
// row's softmax_row_f32 / softmax_row_16 bits, bit for bit, on every target: rows of every
// length to 40 and a few longer, with -inf (masked) elements, a row whose max occurs twice, and
// spreads from 1 to 100.
TEST_P(RowPathsOnTarget, SoftmaxTilesGiveTheRowBits) {
  constexpr std::size_t kRows = simd::kSoftmaxTileRows;
  std::mt19937 gen(41);
  std::normal_distribution<float> normal(0, 1);
  std::vector<std::size_t> lengths;
  for (std::size_t n = 1; n <= 40; ++n) lengths.push_back(n);
  for (std::size_t n : {64, 77, 100, 160}) lengths.push_back(n);
  for (const std::size_t n : lengths) {
    std::vector<float> x(kRows * n);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float spread = i / n % 3 == 0 ? 1.0f : i / n % 3 == 1 ? 10.0f : 100.0f;
      x[i] = n > 2 && i % 5 == 1 ? -INFINITY : spread * normal(gen);
    }
    x[2 * n] = x[3 * n - 1] = 1000.0f;  // row 2: its max twice (log_softmax counts maxima)
    const float* rows[kRows];
    float maxes[kRows];
    for (std::size_t r = 0; r < kRows; ++r) {
      rows[r] = x.data() + r * n;
      bool nan = false;
      maxes[r] = simd::row_max_f32(rows[r], n, &nan);
      ASSERT_TRUE(std::isfinite(maxes[r]) && !nan);
    }
    std::vector<double> scratch(kRows * n);
    std::vector<float> tiled(kRows * n), alone(n);
    std::vector<std::uint16_t> tiled16(kRows * n), alone16(n);
    float* outs[kRows];
    std::uint16_t* outs16[kRows];
    for (std::size_t r = 0; r < kRows; ++r) {
      outs[r] = tiled.data() + r * n;
      outs16[r] = tiled16.data() + r * n;
    }
    for (const bool log : {false, true}) {
      const std::string op = log ? " log_softmax" : " softmax";
      simd::softmax_tile_f32(rows, outs, n, kRows, log, maxes, scratch.data(), false);
      for (std::size_t r = 0; r < kRows; ++r) {
        simd::softmax_row_f32(rows[r], alone.data(), n, log, scratch.data(), maxes[r], false);
        ASSERT_EQ(std::memcmp(alone.data(), outs[r], n * sizeof(float)), 0)
            << target() << op << " n " << n << " row " << r;
      }
      for (const bool bf16 : {false, true}) {
        simd::softmax_tile_16(rows, outs16, n, kRows, log, maxes, scratch.data(), bf16);
        for (std::size_t r = 0; r < kRows; ++r) {
          simd::softmax_row_16(rows[r], alone16.data(), n, log, scratch.data(), maxes[r], bf16);
          ASSERT_EQ(std::memcmp(alone16.data(), outs16[r], n * 2), 0)
              << target() << op << (bf16 ? " bf16" : " f16") << " n " << n << " row " << r;
        }
      }
    }
  }
}

MPSIM_ON_EVERY_TARGET(RowPathsOnTarget);

// Groups longer than one lane flush (16384 elements) take the general path: layer_norm over
// 40000 elements, rms_norm, and NCHW group_norm with 40000-element groups, large offsets,
// against the oracle.
TEST(RowPaths, LongNormalizationGroupsVsOracle) {
  const std::int64_t n = 40000;
  const std::vector<float> v = random_floats(static_cast<std::size_t>(2 * n), 995, 1005, 13);
  const Tensor x = from_vector(v, {2, n});
  const std::vector<float> ln = layer_norm(x, {n}).to_vector<float>();
  const std::vector<float> rms = rms_norm(x, {n}).to_vector<float>();
  const std::vector<float> gn = group_norm(x.reshape({2, 4, 100, 100}), 1).to_vector<float>();
  for (int r = 0; r < 2; ++r) {
    LD mean = 0, var = 0, sq = 0;
    for (std::int64_t k = 0; k < n; ++k) mean += v[r * n + k];
    mean /= n;
    for (std::int64_t k = 0; k < n; ++k) {
      var += (v[r * n + k] - mean) * (v[r * n + k] - mean);
      sq += static_cast<LD>(v[r * n + k]) * v[r * n + k];
    }
    var /= n;
    sq /= n;
    const LD eps_rms = std::numeric_limits<float>::epsilon();
    double worst_ln = 0, worst_gn = 0, worst_rms = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const LD want = (v[r * n + k] - mean) / std::sqrt(var + 1e-5L);
      worst_ln = std::max(worst_ln, ulps(ln[r * n + k], want));
      worst_gn = std::max(worst_gn, ulps(gn[r * n + k], want));
      worst_rms = std::max(worst_rms, ulps(rms[r * n + k], v[r * n + k] / std::sqrt(sq + eps_rms)));
    }
    EXPECT_LE(worst_ln, 1.0) << "layer_norm row " << r;
    EXPECT_LE(worst_gn, 1.0) << "group_norm sample " << r;
    EXPECT_LE(worst_rms, 1.0) << "rms_norm row " << r;
  }
}

// layer_norm with a weight and bias row (Note [pipelined rows]: three rows in flight, so the
// first and last two loops run only some of the passes) for every row count up to 7 and row
// lengths across the vector body, the scalar lanes and the pipeline's limit (1024: longer
// rows take the one-row path); rows of x also as a view with a row stride past its length.
// Against the long double oracle: within half an ulp (the one rounding to float) and 2^-8 ulp
// more, beyond 2^-40 of |z w| + |b| (z w + b in double cancels where b is close to -z w).
TEST(RowPaths, PipelinedLayerNormEveryRowCountVsOracle) {
  std::vector<int> lengths;
  for (int n = 1; n <= 40; ++n) lengths.push_back(n);
  for (int n : {63, 64, 65, 320, 333, 1000, 1024, 1025, 2053}) lengths.push_back(n);
  for (int n : lengths) {
    for (int rows : {1, 2, 3, 4, 5, 6, 7, 13}) {
      const auto un = static_cast<std::size_t>(n);
      // Rows of 2n + 3 floats, of which the first n are x (the view), offset by 100.
      const std::int64_t wide = 2 * n + 3;
      const std::vector<float> v = random_floats(static_cast<std::size_t>(rows * wide), 97, 103,
                                                 static_cast<unsigned>(n * 31 + rows));
      const std::vector<float> wv = random_floats(un, 0.5, 2, static_cast<unsigned>(n + 7));
      const std::vector<float> bv = random_floats(un, -1, 1, static_cast<unsigned>(n + 11));
      const Tensor xw = from_vector(v, {rows, wide});
      const Tensor w = from_vector(wv, {n}), b = from_vector(bv, {n});
      const Tensor dense = xw.narrow(1, 0, n).contiguous();
      for (const Tensor& x : {dense, xw.narrow(1, 0, n)}) {
        const std::vector<float> y = layer_norm(x, {n}, w, b, 1e-5).to_vector<float>();
        ASSERT_EQ(y.size(), static_cast<std::size_t>(rows) * un);
        double worst = 0;
        for (int r = 0; r < rows; ++r) {
          const float* row = v.data() + r * wide;
          LD mean = 0, var = 0;
          for (int k = 0; k < n; ++k) mean += row[k];
          mean /= n;
          for (int k = 0; k < n; ++k) var += (row[k] - mean) * (row[k] - mean);
          var /= n;
          for (int k = 0; k < n; ++k) {
            const LD z = (row[k] - mean) / std::sqrt(var + 1e-5L);
            const LD want = z * wv[k] + bv[k];
            const float got = y[static_cast<std::size_t>(r) * un + k];
            const LD slack = std::ldexp(std::fabs(z * wv[k]) + std::fabs(LD(bv[k])), -40);
            const LD err = std::fabs(got - want);
            worst = std::max(worst, err <= slack ? 0.0 : ulps(got, want));
          }
        }
        EXPECT_LE(worst, 0.5 + 0x1p-8)
            << "n=" << n << " rows=" << rows << (x.is_contiguous() ? " dense" : " strided rows");
      }
    }
  }
}

// NCHW group_norm runs three groups at a time (Note [pipelined groups]): several samples,
// group counts and spatial sizes (tails of every kind, groups past one lane flush), weight and
// bias per channel, against the long double oracle (half an ulp and 2^-8 ulp more, beyond
// 2^-40 of |z w| + |b|, as above); and with one group per sample, the bits of each sample alone
// (one group: the one-group path).
TEST(RowPaths, PipelinedNchwGroupNormVsOracleAndOneGroupPath) {
  const std::int64_t c = 12;
  for (std::int64_t batch : {1, 2, 3, 5}) {
    for (std::int64_t groups : {1, 3, 4, 12}) {
      for (const auto& [h, w] : std::vector<std::pair<std::int64_t, std::int64_t>>{
               {1, 1}, {3, 5}, {8, 8}, {33, 31}, {64, 64}}) {
        const std::size_t total = static_cast<std::size_t>(batch * c * h * w);
        const std::vector<float> xv =
            random_floats(total, 97, 103, static_cast<unsigned>(total + groups));
        const std::vector<float> wv = random_floats(c, 0.5, 2, 21),
                                 bv = random_floats(c, -1, 1, 22);
        const Tensor x = from_vector(xv, {batch, c, h, w});
        const Tensor wt = from_vector(wv, {c}), bt = from_vector(bv, {c});
        const std::vector<float> y = group_norm(x, groups, wt, bt).to_vector<float>();
        const std::int64_t per_group = c / groups * h * w;
        double worst = 0;
        for (std::int64_t s0 = 0; s0 < batch * c * h * w; s0 += per_group) {
          LD mean = 0, var = 0;
          for (std::int64_t i = 0; i < per_group; ++i) mean += xv[s0 + i];
          mean /= per_group;
          for (std::int64_t i = 0; i < per_group; ++i)
            var += (xv[s0 + i] - mean) * (xv[s0 + i] - mean);
          var /= per_group;
          for (std::int64_t i = 0; i < per_group; ++i) {
            const std::int64_t ch = ((s0 + i) / (h * w)) % c;
            const LD z = (xv[s0 + i] - mean) / std::sqrt(var + 1e-5L);
            const LD want = z * wv[ch] + bv[ch];
            const LD slack = std::ldexp(std::fabs(z * wv[ch]) + std::fabs(LD(bv[ch])), -40);
            const LD err = std::fabs(y[s0 + i] - want);
            worst = std::max(worst, err <= slack ? 0.0 : ulps(y[s0 + i], want));
          }
        }
        EXPECT_LE(worst, 0.5 + 0x1p-8)
            << batch << " x " << groups << " groups, " << h << " x " << w;
        if (groups == 1) {
          for (std::int64_t b = 0; b < batch; ++b) {
            const std::vector<float> alone =
                group_norm(x.narrow(0, b, 1).contiguous(), 1, wt, bt).to_vector<float>();
            const std::size_t at = static_cast<std::size_t>(b * c * h * w);
            EXPECT_EQ(std::memcmp(alone.data(), y.data() + at, alone.size() * sizeof(float)), 0)
                << "sample " << b << " of " << batch << ", " << h << " x " << w;
          }
        }
      }
    }
  }
}

// Note [group shift]: a group's shift is the mean of its leading rows (at least 1/16 of the
// group). Here the leading channels sit 40 standard deviations above the rest, so the shift is
// far from the mean; 32 channels per group of 16 x 16 (two leading rows) and of 128 x 128
// (two leading rows of 16384 values: the lanes flush between them). Against the long double
// oracle within 1 ULP, and the pipelined path (batch 3) gives the one-group path's bits.
TEST(RowPaths, NchwGroupNormShiftFarFromTheMean) {
  const std::int64_t c = 64, groups = 2, batch = 3;
  for (const std::int64_t hw : {16, 128}) {
    const std::int64_t plane = hw * hw, per_group = c / groups * plane;
    const std::size_t total = static_cast<std::size_t>(batch * c * plane);
    std::vector<float> xv = random_floats(total, -1, 1, static_cast<unsigned>(hw));
    for (std::size_t i = 0; i < total; ++i) {
      const std::int64_t ch = static_cast<std::int64_t>(i) / plane % c;
      xv[i] += ch % (c / groups) < 2 ? 1040.0f : 1000.0f;
    }
    const std::vector<float> wv = random_floats(c, 0.5, 2, 23), bv = random_floats(c, -1, 1, 24);
    const Tensor x = from_vector(xv, {batch, c, hw, hw});
    const Tensor wt = from_vector(wv, {c}), bt = from_vector(bv, {c});
    const std::vector<float> y = group_norm(x, groups, wt, bt).to_vector<float>();
    double worst = 0;
    for (std::int64_t s0 = 0; s0 < batch * c * plane; s0 += per_group) {
      LD mean = 0, var = 0;
      for (std::int64_t i = 0; i < per_group; ++i) mean += xv[s0 + i];
      mean /= per_group;
      for (std::int64_t i = 0; i < per_group; ++i) var += (xv[s0 + i] - mean) * (xv[s0 + i] - mean);
      var /= per_group;
      for (std::int64_t i = 0; i < per_group; ++i) {
        const std::int64_t ch = (s0 + i) / plane % c;
        const LD want = (xv[s0 + i] - mean) / std::sqrt(var + 1e-5L) * wv[ch] + bv[ch];
        worst = std::max(worst, ulps(y[s0 + i], want));
      }
    }
    EXPECT_LE(worst, 1.0) << hw << " x " << hw;
    // Sample 1's second group alone: one group, so the one-group path.
    const std::int64_t cg = c / groups;
    const std::vector<float> alone = group_norm(x.narrow(0, 1, 1).narrow(1, cg, cg).contiguous(), 1,
                                                wt.narrow(0, cg, cg), bt.narrow(0, cg, cg))
                                         .to_vector<float>();
    const std::size_t at = static_cast<std::size_t>((c + cg) * plane);
    EXPECT_EQ(std::memcmp(alone.data(), y.data() + at, alone.size() * sizeof(float)), 0) << hw;
  }
}

// Channels-last group_norm of x ~ U(lo, hi) (NCHW order before the permute) against the long
// double oracle: every output within 1 ULP, or within 2^-40 of its terms' magnitude.
void check_channels_last_group_norm(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w,
                                    std::int64_t groups, float lo, float hi, unsigned seed) {
  const std::size_t total = static_cast<std::size_t>(n * c * h * w);
  const std::vector<float> xv = random_floats(total, lo, hi, seed);  // NCHW order
  const std::vector<float> wv = random_floats(c, 0.5, 2, seed + 1);
  const std::vector<float> bv = random_floats(c, -1, 1, seed + 2);
  const Tensor x =
      from_vector(xv, {n, c, h, w}).permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  ASSERT_EQ(x.strides(), channels_last_strides(x.sizes()));
  const std::vector<float> y = group_norm(x, groups, from_vector(wv, {c}), from_vector(bv, {c}))
                                   .contiguous()
                                   .to_vector<float>();
  const std::int64_t per_group = c / groups * h * w;
  double worst = 0;
  for (std::int64_t s0 = 0; s0 < n * c * h * w; s0 += per_group) {
    LD mean = 0, var = 0;
    for (std::int64_t i = 0; i < per_group; ++i) mean += xv[s0 + i];
    mean /= per_group;
    for (std::int64_t i = 0; i < per_group; ++i) var += (xv[s0 + i] - mean) * (xv[s0 + i] - mean);
    var /= per_group;
    for (std::int64_t i = 0; i < per_group; ++i) {
      const std::int64_t ch = ((s0 + i) / (h * w)) % c;
      const LD z = (xv[s0 + i] - mean) / std::sqrt(var + 1e-5L);
      const LD want = z * wv[ch] + bv[ch];
      const LD slack = std::ldexp(std::fabs(z * wv[ch]) + std::fabs(LD(bv[ch])), -40);
      const LD err = std::fabs(y[s0 + i] - want);
      worst = std::max(worst, err <= slack ? 0.0 : ulps(y[s0 + i], want));
    }
  }
  EXPECT_LE(worst, 1.0) << n << "x" << c << "x" << h << "x" << w << ", " << groups << " groups";
}

// Channels-last group_norm with an output of 8 MiB and more, written with streaming stores
// (Note [channels-last streaming output]): 72 channels in groups of 9, 64 in groups of 8.
TEST(RowPaths, ChannelsLastGroupNormStreamingOutputVsOracle) {
  check_channels_last_group_norm(2, 72, 128, 128, 8, 47, 53, 31);
  check_channels_last_group_norm(2, 64, 128, 128, 8, 47, 53, 34);
}

// Samples larger than L2 with normal stores: 48 channels in six groups (1.8 MiB); two groups
// of 16 channels offset by 1000 over an odd number of positions; 1.5 MiB in four groups.
TEST(RowPaths, ChannelsLastGroupNormLargeSamplesVsOracle) {
  check_channels_last_group_norm(1, 48, 96, 96, 6, -3, 4, 41);
  check_channels_last_group_norm(2, 32, 130, 101, 2, 995, 1005, 44);
  check_channels_last_group_norm(1, 32, 96, 128, 4, -3, 4, 47);
}

// layer_norm outputs of 8 MiB and more leave through streaming stores (Note [pipelined rows]):
// the same bits as the two halves (4 MiB each, normal stores), and the oracle on every row.
TEST(RowPaths, LayerNormStreamingOutputSameBitsAsHalvesAndOracle) {
  const std::int64_t rows = 6600, len = 320;
  ASSERT_GE(rows * len * 4, std::int64_t{8} << 20);
  const std::vector<float> xv = random_floats(static_cast<std::size_t>(rows * len), 95, 105, 51);
  const Tensor x = from_vector(xv, {rows, len});
  const Tensor w = from_vector(random_floats(len, 0.5, 2, 52), {len});
  const Tensor b = from_vector(random_floats(len, -1, 1, 53), {len});
  const std::vector<float> whole = layer_norm(x, {len}, w, b).to_vector<float>();
  const std::vector<float> first =
      layer_norm(x.narrow(0, 0, rows / 2), {len}, w, b).to_vector<float>();
  const std::vector<float> second =
      layer_norm(x.narrow(0, rows / 2, rows / 2), {len}, w, b).to_vector<float>();
  ASSERT_EQ(whole.size(), first.size() + second.size());
  EXPECT_EQ(std::memcmp(whole.data(), first.data(), first.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(whole.data() + first.size(), second.data(), second.size() * sizeof(float)),
            0);
  const std::vector<float> wv = w.to_vector<float>(), bv = b.to_vector<float>();
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = xv.data() + r * len;
    LD mean = 0, var = 0;
    for (std::int64_t k = 0; k < len; ++k) mean += row[k];
    mean /= len;
    for (std::int64_t k = 0; k < len; ++k) var += (row[k] - mean) * (row[k] - mean);
    var /= len;
    for (std::int64_t k = 0; k < len; ++k) {
      // Within 1 ULP, or within 2^-40 of the terms' magnitude where z w + b cancels.
      const LD zw = (row[k] - mean) / std::sqrt(var + 1e-5L) * wv[k], want = zw + bv[k];
      const LD slack = std::ldexp(std::fabs(zw) + std::fabs(LD(bv[k])), -40);
      const float got = whole[static_cast<std::size_t>(r * len + k)];
      worst = std::max(worst, std::fabs(got - want) <= slack ? 0.0 : ulps(got, want));
    }
  }
  EXPECT_LE(worst, 1.0);
}

}  // namespace
}  // namespace mpsim
