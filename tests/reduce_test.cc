// Reductions, argmax/argmin and softmax against long double oracles written here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "core/mpsim.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_floats(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// ULPs between a float and an exact value (float grid at the exact value).
double ulps(float got, LD exact) {
  if (std::isnan(got) || std::isnan(exact))
    return std::isnan(got) && std::isnan(exact) ? 0 : INFINITY;
  int e = 0;
  std::frexp(exact, &e);
  const LD ulp = std::ldexp(1.0L, std::max(e, -125) - 24);
  return static_cast<double>(std::fabs(got - exact) / ulp);
}

// Oracle: reduce a [5, 7, 11] row-major array over `dims` with `f` on each group.
template <class F>
std::vector<LD> oracle_3d(const std::vector<float>& v, std::vector<bool> red, F&& f) {
  const int s[3] = {5, 7, 11};
  std::vector<LD> out;
  for (int a = 0; a < (red[0] ? 1 : 5); ++a) {
    for (int b = 0; b < (red[1] ? 1 : 7); ++b) {
      for (int c = 0; c < (red[2] ? 1 : 11); ++c) {
        std::vector<LD> group;
        for (int i = 0; i < s[0]; ++i) {
          for (int j = 0; j < s[1]; ++j) {
            for (int k = 0; k < s[2]; ++k) {
              if ((red[0] || i == a) && (red[1] || j == b) && (red[2] || k == c)) {
                group.push_back(v[(i * 7 + j) * 11 + k]);
              }
            }
          }
        }
        out.push_back(f(group));
      }
    }
  }
  return out;
}

TEST(Reduce, SumMeanVarStdEveryDimCombinationVsOracle) {
  const std::vector<float> v = random_floats(5 * 7 * 11, -100, 100, 1);
  const Tensor x = from_vector(v, {5, 7, 11});
  const std::vector<std::pair<IntList, std::vector<bool>>> combos = {
      {{}, {true, true, true}},       {{0}, {true, false, false}},   {{1}, {false, true, false}},
      {{-1}, {false, false, true}},   {{0, 2}, {true, false, true}}, {{2, 1}, {false, true, true}},
      {{0, 1, 2}, {true, true, true}}};
  auto sum = [](const std::vector<LD>& g) {
    LD s = 0;
    for (LD e : g) s += e;
    return s;
  };
  auto var1 = [&](const std::vector<LD>& g) {
    const LD m = sum(g) / g.size();
    LD s = 0;
    for (LD e : g) s += (e - m) * (e - m);
    return s / (g.size() - 1);
  };
  for (const auto& [dims, red] : combos) {
    for (bool keepdim : {false, true}) {
      const Tensor s = mpsim::sum(x, dims, keepdim), m = mean(x, dims, keepdim);
      const Tensor va = var(x, dims, 1, keepdim), sd = mpsim::std(x, dims, 1, keepdim);
      if (keepdim) {
        EXPECT_EQ(s.dim(), 3);
      }
      const std::vector<LD> ws = oracle_3d(v, red, sum), wv = oracle_3d(v, red, var1);
      const std::vector<float> gs = s.to_vector<float>(), gm = m.to_vector<float>();
      const std::vector<float> gv = va.to_vector<float>(), gd = sd.to_vector<float>();
      ASSERT_EQ(gs.size(), ws.size());
      for (std::size_t i = 0; i < ws.size(); ++i) {
        const LD n = 5 * 7 * 11 / static_cast<LD>(ws.size());
        EXPECT_LE(ulps(gs[i], ws[i]), 0.5) << "sum " << to_string(dims) << " " << i;
        EXPECT_LE(ulps(gm[i], ws[i] / n), 0.5) << "mean";
        EXPECT_LE(ulps(gv[i], wv[i]), 0.5) << "var";
        EXPECT_LE(ulps(gd[i], std::sqrt(wv[i])), 0.5) << "std";
      }
    }
  }
}

TEST(Reduce, VarMeanAndNorm) {
  const std::vector<float> v = random_floats(6 * 13, -50, 50, 9);
  const Tensor x = from_vector(v, {6, 13});
  const auto [va, me] = var_mean(x, {1}, 0, true);
  EXPECT_EQ(va.sizes(), Shape({6, 1}));
  const std::vector<float> gv = va.to_vector<float>(), gm = me.to_vector<float>();
  const std::vector<float> gn = norm(x, {1}).to_vector<float>();
  for (int r = 0; r < 6; ++r) {
    LD s = 0, ss = 0;
    for (int k = 0; k < 13; ++k) s += v[r * 13 + k];
    const LD mean = s / 13;
    for (int k = 0; k < 13; ++k) ss += (v[r * 13 + k] - mean) * (v[r * 13 + k] - mean);
    LD sq = 0;
    for (int k = 0; k < 13; ++k) sq += static_cast<LD>(v[r * 13 + k]) * v[r * 13 + k];
    EXPECT_LE(ulps(gv[r], ss / 13), 0.5) << "var (correction 0)";
    EXPECT_LE(ulps(gm[r], mean), 0.5) << "mean";
    EXPECT_LE(ulps(gn[r], std::sqrt(sq)), 0.5) << "norm";
  }
  EXPECT_EQ(norm(from_vector<float>({3, 4}, {2})).item<float>(), 5.0f);
  EXPECT_THROW(norm(from_vector<std::int32_t>({3}, {1})), DTypeError);
}

TEST(Reduce, LargeOffsetSumOf2To24ElementsIsCorrectlyRounded) {
  std::mt19937 rng(3);
  std::normal_distribution<float> n01(0, 1);
  std::vector<float> v(1 << 24);
  for (float& x : v) x = 1000.0f + n01(rng);
  LD exact = 0;
  // Every term is a multiple of 2^-14 (floats in [512, 2048)) and every partial sum is below
  // 2^35, so 49 bits hold them all: the long double sum is exact.
  for (float x : v) exact += x;
  const float got = mpsim::sum(from_vector(v)).item<float>();
  EXPECT_EQ(got, static_cast<float>(exact));
  EXPECT_LE(ulps(mean(from_vector(v)).item<float>(), exact / v.size()), 0.5);
}

TEST(Reduce, IntegerBoolProdAndDtypeRules) {
  const Tensor i = from_vector<std::int32_t>({1, -2, 3, 4}, {2, 2});
  EXPECT_EQ(mpsim::sum(i).dtype(), DType::Int64);
  EXPECT_EQ(mpsim::sum(i).item<std::int64_t>(), 6);
  EXPECT_EQ(mpsim::sum(i, {0}).to_vector<std::int64_t>(), (std::vector<std::int64_t>{4, 2}));
  EXPECT_EQ(prod(i).item<std::int64_t>(), -24);
  EXPECT_EQ(mpsim::sum(from_vector<bool>({true, true, false}, {3})).item<std::int64_t>(), 2);
  EXPECT_EQ(mpsim::sum(i, {}, false, DType::Float64).item<double>(), 6.0);
  const Tensor big = from_vector<std::int64_t>({std::numeric_limits<std::int64_t>::max(), 1}, {2});
  EXPECT_EQ(mpsim::sum(big).item<std::int64_t>(),
            std::numeric_limits<std::int64_t>::min());  // wraps
  EXPECT_EQ(prod(from_vector<float>({1.5f, -2, 4}, {3})).item<float>(), -12.0f);
  EXPECT_THROW(mean(i), DTypeError);
  EXPECT_THROW(var(i), DTypeError);
  // Empty reductions: the identity, or nan for the mean, as PyTorch.
  const Tensor e = empty({0, 3});
  EXPECT_EQ(mpsim::sum(e).item<float>(), 0.0f);
  EXPECT_EQ(prod(e).item<float>(), 1.0f);
  EXPECT_TRUE(std::isnan(mean(e).item<float>()));
  EXPECT_EQ(mpsim::sum(e, {0}).to_vector<float>(), (std::vector<float>{0, 0, 0}));
}

TEST(Reduce, ExtremesArgExtremesAndNaN) {
  const Tensor x = from_vector<float>({3, 7, 7, -1, NAN, 2, -0.0f, 0.0f}, {2, 4});
  const std::vector<float> mx = amax(x, {1}).to_vector<float>();
  EXPECT_EQ(mx[0], 7.0f);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(amin(x, {1}).to_vector<float>()[0], -1.0f);
  EXPECT_EQ(argmax(x, 1).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 0}));  // first 7; the NaN
  EXPECT_EQ(argmin(x, 1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{3, 0}));
  EXPECT_EQ(argmax(x).item<std::int64_t>(), 4);  // flattened: the NaN
  const Tensor z = from_vector<float>({-0.0f, 0.0f}, {2});
  EXPECT_FALSE(std::signbit(amax(z).item<float>()));
  EXPECT_TRUE(std::signbit(amin(z).item<float>()));
  const Tensor ints = from_vector<std::int64_t>({5, 9, 9, 1}, {4});
  EXPECT_EQ(amax(ints).item<std::int64_t>(), 9);
  EXPECT_EQ(argmax(ints).item<std::int64_t>(), 1);
  EXPECT_EQ(argmax(x, 1, true).sizes(), Shape({2, 1}));
  EXPECT_THROW(amax(empty({0})), InvalidArgument);
  EXPECT_THROW(argmax(empty({0, 2})), InvalidArgument);
}

// Note [strided reductions made dense] (core/reduce_ops.cc): amax, amin, argmax, argmin, prod
// and logsumexp over the channels of a large NCHW tensor (the dense copy's route) against
// oracles written here: the extremes exact with PyTorch's NaN rule (NaN wins, the first
// extreme's index), prod and logsumexp within an ulp of long double.
TEST(Reduce, StridedReductionsOfLargeTensorsMatchTheOracles) {
  const std::int64_t n = 2, c = 37, plane = 33 * 29;  // 70818 elements: past 2^16
  std::vector<float> v = random_floats(static_cast<std::size_t>(n * c * plane), 0.5f, 1.5f, 31);
  v[static_cast<std::size_t>(5 * plane + 7)] = NAN;    // output (0, 7): NaN at channel 5
  v[static_cast<std::size_t>(9 * plane + 7)] = NAN;    // and again at channel 9
  v[static_cast<std::size_t>(3 * plane + 8)] = 1.5f;   // output (0, 8): ties at channels 3
  v[static_cast<std::size_t>(20 * plane + 8)] = 1.5f;  // and 20
  const Tensor x = from_vector(v, {n, c, 33, 29});
  const std::vector<float> mx = amax(x, {1}).to_vector<float>(),
                           mn = amin(x, {1}).to_vector<float>();
  const std::vector<std::int64_t> ix = argmax(x, 1).to_vector<std::int64_t>(),
                                  in = argmin(x, 1).to_vector<std::int64_t>();
  const std::vector<float> pr = mpsim::prod(x, {1}).to_vector<float>(),
                           ls = logsumexp(x, {1}).to_vector<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t p = 0; p < plane; ++p) {
      const auto o = static_cast<std::size_t>(i * plane + p);
      float hi = -INFINITY, lo = INFINITY;
      std::int64_t hi_at = -1, lo_at = -1;
      LD product = 1, sum_exp = 0;
      for (std::int64_t ch = 0; ch < c; ++ch) {
        const float e = v[static_cast<std::size_t>((i * c + ch) * plane + p)];
        const bool nan_seen = std::isnan(hi);
        if (!nan_seen && (std::isnan(e) || e > hi)) hi = e, hi_at = ch;
        if (!std::isnan(lo) && (std::isnan(e) || e < lo)) lo = e, lo_at = ch;
        product *= e;
        sum_exp += std::exp(static_cast<LD>(e));
      }
      const std::string where = "output " + std::to_string(o);
      if (std::isnan(hi)) {
        EXPECT_TRUE(std::isnan(mx[o]) && std::isnan(mn[o])) << where;
      } else {
        EXPECT_EQ(mx[o], hi) << where;
        EXPECT_EQ(mn[o], lo) << where;
        EXPECT_LE(ulps(pr[o], product), 1.0) << where;
        EXPECT_LE(ulps(ls[o], std::log(sum_exp)), 1.0) << where;
      }
      EXPECT_EQ(ix[o], hi_at) << where;
      EXPECT_EQ(in[o], lo_at) << where;
    }
  }
}

// A 0-dim input with dim 0 or -1 (the kernel read past its empty sizes: found by
// tests/fuzz/op_fuzz under UBSan): index 0, a 0-dim int64, as torch.argmax(torch.tensor(5), 0).
TEST(Reduce, ArgExtremesOfAZeroDimTensor) {
  const Tensor x = full({}, 5.0, DType::UInt8);
  for (std::int64_t dim : {0, -1}) {
    for (bool keepdim : {false, true}) {
      for (const Tensor& r : {argmin(x, dim, keepdim), argmax(x, dim, keepdim)}) {
        EXPECT_EQ(r.dim(), 0);
        EXPECT_EQ(r.dtype(), DType::Int64);
        EXPECT_EQ(r.item<std::int64_t>(), 0);
      }
    }
  }
  EXPECT_THROW(argmin(x, 1), ShapeError);
}

TEST(Reduce, LogSumExp) {
  const std::vector<float> v = random_floats(3 * 50, -80, 80, 4);
  const std::vector<float> got = logsumexp(from_vector(v, {3, 50}), {1}).to_vector<float>();
  for (int r = 0; r < 3; ++r) {
    LD m = -INFINITY, s = 0;
    for (int k = 0; k < 50; ++k) m = std::max<LD>(m, v[r * 50 + k]);
    for (int k = 0; k < 50; ++k) s += std::exp(static_cast<LD>(v[r * 50 + k]) - m);
    EXPECT_LE(ulps(got[r], m + std::log(s)), 0.5);
  }
  EXPECT_EQ(logsumexp(from_vector<float>({-kInf, -kInf}, {2}), {0}).item<float>(), -kInf);
  EXPECT_EQ(logsumexp(from_vector<float>({kInf, 1}, {2}), {0}).item<float>(), kInf);
  EXPECT_EQ(logsumexp(from_vector<float>({1e4f, 1e4f}, {2}), {0}).item<float>(),
            static_cast<float>(1e4L + std::log(2.0L)));
  // An empty reduction: the log of an empty sum, -inf (torch.logsumexp), on either device;
  // an empty reduction crashed before (found by tests/fuzz/op_fuzz.cc).
  for (Device dev : {Device::cpu(), Device::mps()}) {
    const Tensor e = zeros({2, 0, 3}, DType::Float32, dev);
    EXPECT_EQ(logsumexp(e, {1}).sizes(), Shape({2, 3}));
    for (float r : logsumexp(e, {1}).to(Device::cpu()).to_vector<float>()) EXPECT_EQ(r, -kInf);
    EXPECT_EQ(logsumexp(e, {}).to(Device::cpu()).item<float>(), -kInf);  // every dim
    EXPECT_EQ(logsumexp(e, {0, 1}, true).sizes(), Shape({1, 1, 3}));
    EXPECT_EQ(logsumexp(zeros({0}, DType::Int64, dev), {0}).dtype(), DType::Float32);
    EXPECT_EQ(logsumexp(e, {0}).numel(), 0);  // nothing kept: an empty result
  }
}

TEST(Softmax, RowsSumToOneNeverNaNForFiniteInputsAndMatchTheOracle) {
  const std::vector<float> v = random_floats(6 * 257, -1e4f, 1e4f, 5);
  const Tensor x = from_vector(v, {6, 257});
  for (std::int64_t dim : {1, 0}) {
    const std::vector<float> s = softmax(x, dim).to_vector<float>();
    const std::vector<float> ls = log_softmax(x, dim).to_vector<float>();
    const int rows = dim == 1 ? 6 : 257, n = dim == 1 ? 257 : 6;
    for (int r = 0; r < rows; ++r) {
      auto at = [&](int k) { return dim == 1 ? r * 257 + k : k * 257 + r; };
      // z = 1 + z1, z1 the sum over all but the first max: log z = log1p(z1) keeps tiny z1,
      // and the log_softmax error (got - (x - m)) + log z is formed exactly before rounding.
      LD m = -INFINITY, z1 = 0, total = 0;
      int first_max = 0;
      for (int k = 0; k < n; ++k) {
        if (v[at(k)] > m) {
          m = v[at(k)];
          first_max = k;
        }
      }
      for (int k = 0; k < n; ++k) {
        if (k != first_max) z1 += std::exp(v[at(k)] - m);
      }
      const LD log_z = std::log1p(z1);
      for (int k = 0; k < n; ++k) {
        const LD want = std::exp(v[at(k)] - m) / (1 + z1);
        ASSERT_FALSE(std::isnan(s[at(k)]));
        EXPECT_LE(ulps(s[at(k)], want), 0.5) << dim << " " << r << " " << k;
        const LD a = v[at(k)] - m;  // exact
        const LD exact = a - log_z;
        int e = 0;
        std::frexp(exact, &e);
        const LD err = ((ls[at(k)] - a) + log_z) / std::ldexp(1.0L, std::max(e, -125) - 24);
        EXPECT_LE(std::fabs(err), 0.5L) << "log_softmax " << dim << " " << r << " " << k;
        total += s[at(k)];
      }
      EXPECT_LE(std::fabs(total - 1), 2 * 0x1p-24L * n) << "row " << r;
    }
  }
}

// Outputs of 16 MiB and more leave through streaming stores (Note [streaming stores]): rows
// of 1001 floats start at every alignment, so some rows stream and some do not, and every row
// has a tail. Each output against the long double oracle (within 0.5 ULP as above).
TEST(Softmax, LargeOutputsUseStreamingStoresWithCorrectValues) {
  const int rows = 4200, n = 1001;  // 16.8 MB of float32 output
  const std::vector<float> v = random_floats(std::size_t{rows} * n, -30, 30, 21);
  const Tensor x = from_vector(v, {rows, n});
  const std::vector<float> s = softmax(x, 1).to_vector<float>();
  const std::vector<float> ls = log_softmax(x, 1).to_vector<float>();
  std::vector<LD> e(n);
  for (int r = 0; r < rows; ++r) {
    const float* xr = v.data() + std::size_t{static_cast<std::size_t>(r)} * n;
    LD m = -INFINITY, z = 0;
    for (int k = 0; k < n; ++k) m = std::max<LD>(m, xr[k]);
    for (int k = 0; k < n; ++k) z += e[k] = std::exp(xr[k] - m);
    const LD log_z = std::log(z);
    for (int k = 0; k < n; ++k) {
      const std::size_t at = std::size_t{static_cast<std::size_t>(r)} * n + k;
      ASSERT_LE(ulps(s[at], e[k] / z), 0.5) << r << " " << k;
      ASSERT_LE(ulps(ls[at], (xr[k] - m) - log_z), 0.5) << "log_softmax " << r << " " << k;
    }
  }
}

TEST(Softmax, HalfPrecisionViewsSpecialValuesAndErrors) {
  const std::vector<float> v = random_floats(4 * 9, -5, 5, 6);
  const Tensor x = from_vector(v, {4, 9});
  // float16 output from a transposed view: the correctly rounded value of the exact softmax.
  const Tensor h = softmax(x.to(DType::Float16).t(), 1);
  const std::vector<float> hv = h.to_vector<float>();
  const std::vector<float> xv = x.to(DType::Float16).t().contiguous().to_vector<float>();
  for (int r = 0; r < 9; ++r) {
    LD m = -INFINITY, z = 0;
    for (int k = 0; k < 4; ++k) m = std::max<LD>(m, xv[r * 4 + k]);
    for (int k = 0; k < 4; ++k) z += std::exp(xv[r * 4 + k] - m);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(hv[r * 4 + k],
                static_cast<float>(Half(static_cast<double>(std::exp(xv[r * 4 + k] - m) / z))));
    }
  }
  EXPECT_TRUE(std::isnan(softmax(from_vector<float>({1, NAN}, {2}), 0).to_vector<float>()[0]));
  EXPECT_EQ(softmax(from_vector<float>({-kInf, 0}, {2}), 0).to_vector<float>(),
            (std::vector<float>{0, 1}));
  EXPECT_EQ(softmax(scalar_tensor(3.0, DType::Float32), 0).item<float>(), 1.0f);
  EXPECT_EQ(softmax(from_vector<std::int64_t>({1, 2}, {2}), 0, DType::Float64).dtype(),
            DType::Float64);
  EXPECT_THROW(softmax(from_vector<std::int64_t>({1, 2}, {2}), 0), DTypeError);
  EXPECT_THROW(softmax(x, 2), ShapeError);
}

TEST(Reduce, BadDimsNameTheOp) {
  const std::int64_t live = Storage::live_count();
  const Tensor x = zeros({2, 3});
  try {
    mpsim::sum(x, {0, -2});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[sum] dim 0 appears multiple times"));
  }
  try {
    amax(x, {5});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[amax] dim 5 is out of range"));
  }
  EXPECT_THROW(mean(x, {3}), ShapeError);
  EXPECT_EQ(Storage::live_count(), live + 1);
}

// A reduction over a leading dim runs a row-sweeping path; it must give the same bits as the
// per-output walk over the same values laid out the other way.
TEST(Reduce, LeadingDimPathMatchesTheRowPath) {
  const std::vector<float> v = random_floats(std::size_t{3000} * 700, -10, 10, 13);
  const Tensor x = from_vector(v, {3000, 700});
  const Tensor xt = x.t().contiguous();  // [700, 3000]: the same columns as rows
  for (const auto& [a, b] :
       {std::pair{mpsim::sum(x, {0}), mpsim::sum(xt, {1})}, std::pair{mean(x, {0}), mean(xt, {1})},
        std::pair{norm(x, {0}), norm(xt, {1})}}) {
    const std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
    ASSERT_EQ(std::memcmp(va.data(), vb.data(), va.size() * 4), 0);
  }
  // Several chunks of rows (kReduceGrain = 2^14) and a ragged last one, lane by lane.
  const Tensor y = from_vector(random_floats(std::size_t{33001} * 5, -10, 10, 14), {33001, 5});
  const std::vector<float> ya = mpsim::sum(y, {0}).to_vector<float>(),
                           yb = mpsim::sum(y.t().contiguous(), {1}).to_vector<float>();
  ASSERT_EQ(std::memcmp(ya.data(), yb.data(), ya.size() * 4), 0);
  std::vector<LD> col(700, 0);
  for (std::size_t i = 0; i < v.size(); ++i) col[i % 700] += v[i];
  const std::vector<float> got = mpsim::sum(x, {0}).to_vector<float>();
  for (std::size_t j = 0; j < 700; ++j) EXPECT_LE(ulps(got[j], col[j]), 0.5) << j;
}

class ReduceOnTarget : public test::OnEveryTarget {};

// Note [row sums in row tiles] (kernels_simd/row_stats.h): sum, mean and norm over dense rows
// of one chunk run a tile of rows at a time, the Neumaier steps across vector lanes. They must
// give the bits of the per-output walk, which the same values two elements apart take: rows of
// 1 to 70 and 320 elements (lane tails), row counts that leave a partial tile, and rows with
// NaN, +-inf, values whose sum overflows and cancelling ones, on every SIMD target. The values
// themselves: the oracle tests above.
TEST_P(ReduceOnTarget, RowTilesGiveTheWalkBits) {
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> uni(-10, 10);
  for (const std::int64_t n : {1, 2, 7, 31, 32, 33, 70, 320}) {
    const std::int64_t rows = 43;
    std::vector<float> v(static_cast<std::size_t>(rows * n));
    for (float& f : v) f = uni(gen);
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              3e38f,
                              -3e38f,
                              1e30f};
    for (std::int64_t r = 0; r < rows; r += 3) {  // one or two specials in every third row
      v[static_cast<std::size_t>(r * n + (r % n))] = specials[(r / 3) % 6];
      if (r % 2 == 0 && n > 1) v[static_cast<std::size_t>(r * n + n - 1)] = specials[(r / 6) % 6];
    }
    const Tensor x = from_vector(v, {rows, n});
    const Tensor walked = x.unsqueeze(2).expand({rows, n, 2}).contiguous().select(2, 0);
    for (int op = 0; op < 3; ++op) {
      auto run = [&](const Tensor& t) {
        return op == 0 ? mpsim::sum(t, {1}) : op == 1 ? mean(t, {1}) : norm(t, {1});
      };
      const std::vector<float> a = run(x).to_vector<float>(), b = run(walked).to_vector<float>();
      for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(std::memcmp(&a[i], &b[i], 4), 0)
            << target() << " n = " << n << " op " << op << " row " << i << ": " << a[i] << " vs "
            << b[i];
      }
    }
  }
}

// Note [extreme columns]: float32 amax and amin of a contiguous input over one dim that is not
// the last sweep rows as columns. The result must be the walk's bit for bit: the first NaN in
// the reduced order (payloads of both signs), +0 above -0 for max and -0 below for min, +-inf;
// checked against the same values with the reduced dim moved last (a dense run each), over the
// first dim of [R, C] (C with a partial vector) and the middle dims of NCHW, on every target.
TEST_P(ReduceOnTarget, ExtremeColumnsGiveTheRowBits) {
  const std::vector<std::pair<Shape, std::int64_t>> cases = {
      {{7, 37}, 0}, {{300, 70}, 0}, {{2, 33, 9, 8}, 1}, {{2, 5, 40, 17}, 2}, {{3, 17, 16}, 1}};
  std::mt19937 gen(29);  // the same values on every target
  for (const auto& [shape, dim] : cases) {
    IntList order;
    for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
      if (d != dim) order.push_back(d);
    }
    order.push_back(dim);
    for (const bool is_max : {true, false}) {
      // Values of one sign and zeros of both (ties of zeros at the extreme everywhere), a
      // few columns with a NaN (payloads of both signs) or an infinity, and one value of
      // the other sign per column.
      std::vector<float> v(static_cast<std::size_t>(shape.numel()));
      for (float& f : v) {
        const int k = static_cast<int>(gen() % 3);
        f = k == 0 ? (is_max ? -1.0f : 1.0f) : k == 1 ? 0.0f : -0.0f;
      }
      for (std::size_t i = 5; i < v.size(); i += 97) {
        const std::uint32_t bits[] = {0x7fc00011u, 0xffc00022u, 0x7f800000u, 0xff800000u};
        std::memcpy(&v[i], &bits[(i / 97) % 4], 4);
      }
      const Tensor x = from_vector(v, shape);
      const Tensor rows = x.permute(order).contiguous();
      const Tensor a = is_max ? amax(x, {dim}) : amin(x, {dim});
      const Tensor b = is_max ? amax(rows, {-1}) : amin(rows, {-1});
      const std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
      ASSERT_EQ(va.size(), vb.size());
      for (std::size_t i = 0; i < va.size(); ++i) {
        ASSERT_EQ(std::memcmp(&va[i], &vb[i], 4), 0)
            << target() << " " << shape.to_string() << " dim " << dim
            << (is_max ? " max " : " min ") << i << ": " << va[i] << " vs " << vb[i];
      }
    }
  }
}

// Note [float64 sum lanes]: float64 sum, mean and norm run 16 Neumaier lanes, in vectors for
// dense runs and lane by lane for strided ones. Both must give the same bits (rows of 1 to 40000
// values: lane tails and two chunks of 16384; infinities and NaN), on every SIMD target, and
// well-conditioned sums must be within an ulp of the long double sum of the values (exact
// here: the values have 30 significant bits and the sums fit 64).
TEST_P(ReduceOnTarget, Float64SumLanes) {
  std::mt19937_64 gen(23);
  std::uniform_int_distribution<std::int64_t> ints(-(std::int64_t{1} << 29), std::int64_t{1} << 29);
  for (const std::int64_t n : {1, 15, 16, 17, 100, 16385, 40000}) {
    std::vector<double> v(static_cast<std::size_t>(2 * n));
    for (double& x : v) x = std::ldexp(static_cast<double>(ints(gen)), -10);
    const Tensor x = from_vector(v, {2, n});
    const Tensor strided = x.unsqueeze(2).expand({2, n, 2}).contiguous().select(2, 0);
    for (int op = 0; op < 3; ++op) {
      auto run = [&](const Tensor& t) {
        return op == 0 ? mpsim::sum(t, {1}) : op == 1 ? mean(t, {1}) : norm(t, {1});
      };
      const std::vector<double> a = run(x).to_vector<double>(),
                                b = run(strided).to_vector<double>();
      for (std::size_t r = 0; r < 2; ++r) {
        ASSERT_EQ(std::memcmp(&a[r], &b[r], 8), 0) << target() << " n = " << n << " op " << op;
        LD want = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          const LD e = v[r * static_cast<std::size_t>(n) + static_cast<std::size_t>(i)];
          want += op == 2 ? e * e : e;
        }
        if (op == 1) want /= n;
        if (op == 2) want = std::sqrt(want);
        ASSERT_LE(std::fabs(a[r] - static_cast<double>(want)),
                  std::fabs(static_cast<double>(want)) * 0x1p-52)
            << target() << " n = " << n << " op " << op;
      }
    }
    // Values of 53 significant bits and mixed magnitudes (the sums round): the same bits both
    // ways, so the same lanes in the same order.
    std::uniform_real_distribution<double> uni(-1, 1);
    for (double& e : v) e = std::ldexp(uni(gen), static_cast<int>(gen() % 40) - 20);
    const Tensor xr = from_vector(v, {2, n});
    const Tensor sr = xr.unsqueeze(2).expand({2, n, 2}).contiguous().select(2, 0);
    for (int op = 0; op < 3; ++op) {
      auto run = [&](const Tensor& t) {
        return op == 0 ? mpsim::sum(t, {1}) : op == 1 ? mean(t, {1}) : norm(t, {1});
      };
      const std::vector<double> a = run(xr).to_vector<double>(), b = run(sr).to_vector<double>();
      ASSERT_EQ(std::memcmp(a.data(), b.data(), 16), 0) << target() << " n = " << n << " op " << op;
    }
    // Special values: the same bits both ways.
    v[3 % v.size()] = std::numeric_limits<double>::infinity();
    v[v.size() - 1] = std::numeric_limits<double>::quiet_NaN();
    const Tensor xs = from_vector(v, {2, n});
    const Tensor ss = xs.unsqueeze(2).expand({2, n, 2}).contiguous().select(2, 1);
    const std::vector<double> a = mpsim::sum(xs, {1}).to_vector<double>(),
                              b = mpsim::sum(ss, {1}).to_vector<double>();
    for (std::size_t r = 0; r < 2; ++r) {
      ASSERT_TRUE(std::memcmp(&a[r], &b[r], 8) == 0 || (std::isnan(a[r]) && std::isnan(b[r])))
          << target() << " specials n = " << n;
    }
  }
}

// Dense int64 runs sum in vector lanes (reduce.cc): the wrapping sum of any order. Rows of 1 to
// 100 values near the int64 limits (so that the sums wrap), whole and over the last dim, against
// an unsigned oracle, on every SIMD target.
TEST_P(ReduceOnTarget, IntegerRunsWrap) {
  std::mt19937_64 gen(11);
  for (const std::int64_t n : {1, 3, 8, 17, 100}) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(3 * n));
    for (auto& x : v) x = static_cast<std::int64_t>(gen() | (std::uint64_t{1} << 62));
    const Tensor t = from_vector(v, {3, n});
    std::uint64_t all = 0;
    std::vector<std::uint64_t> rows(3, 0);
    for (std::size_t i = 0; i < v.size(); ++i) {
      all += static_cast<std::uint64_t>(v[i]);
      rows[i / static_cast<std::size_t>(n)] += static_cast<std::uint64_t>(v[i]);
    }
    ASSERT_EQ(mpsim::sum(t).item<std::int64_t>(), static_cast<std::int64_t>(all)) << target();
    const std::vector<std::int64_t> got = mpsim::sum(t, {1}).to_vector<std::int64_t>();
    for (std::size_t r = 0; r < 3; ++r) {
      ASSERT_EQ(got[r], static_cast<std::int64_t>(rows[r])) << target() << " n = " << n;
    }
  }
}

// Dense float16/bfloat16 softmax rows widen and round in vectors (softmax.cc); strided rows
// convert value by value. The same arithmetic: the same bits, with NaN, +-inf, rows of signed
// zeros and rows of one element, on every SIMD target (the values: half_softmax_test).
TEST_P(ReduceOnTarget, SixteenBitDenseRowsGiveTheStridedRowsBits) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> uni(-6, 6);
  for (const std::int64_t n : {1, 5, 64, 77}) {
    const std::int64_t rows = 19;
    std::vector<float> v(static_cast<std::size_t>(rows * n));
    for (float& f : v) f = uni(gen);
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), -0.0f, 0.0f};
    for (std::int64_t r = 0; r < rows; r += 2)
      v[static_cast<std::size_t>(r * n)] = specials[(r / 2) % 5];
    for (std::int64_t i = 0; i < n; ++i)
      v[static_cast<std::size_t>(n + i)] = i % 2 ? 0.0f : -0.0f;
    for (DType dt : {DType::Float16, DType::BFloat16}) {
      const Tensor x = from_vector(v, {rows, n}).to(dt);
      const Tensor strided = x.unsqueeze(2).expand({rows, n, 2}).contiguous().select(2, 1);
      for (const bool log : {false, true}) {
        auto run = [&](const Tensor& t) { return log ? log_softmax(t, 1) : softmax(t, 1); };
        const std::vector<float> a = run(x).to(DType::Float32).to_vector<float>();
        const std::vector<float> b = run(strided).to(DType::Float32).to_vector<float>();
        for (std::size_t i = 0; i < a.size(); ++i) {
          ASSERT_EQ(std::memcmp(&a[i], &b[i], 4), 0)
              << target() << " " << dtype_name(dt) << " n = " << n << " log " << log << " at " << i
              << ": " << a[i] << " vs " << b[i];
        }
      }
    }
  }
}

// Note [peeled outer dims]: a reduction over a middle dim runs slice by slice as reductions
// over leading dims; the same bits as the per-output walk over the values laid out with the
// reduced dim last (sum, mean, norm, and prod: Note [product columns]), and within half an ulp
// of the exact sum. Kept dims below and above 16
// outputs, one and two peeled levels, a ragged chunk of rows.
TEST_P(ReduceOnTarget, MiddleDimPathMatchesTheRowPath) {
  const std::vector<std::pair<Shape, std::int64_t>> cases = {
      {{3, 37, 50}, 1},    {{2, 320, 8, 8}, 1}, {{2, 5, 40, 17}, 1},
      {{2, 3, 40, 17}, 2}, {{4, 3, 5}, 1},      {{2, 16390, 20}, 1}};
  // Every SIMD target: the fold of the lane-major columns runs in vector lanes across outputs.
  for (const auto& [shape, dim] : cases) {
    SCOPED_TRACE(shape.to_string() + " dim " + std::to_string(dim));
    const std::vector<float> v = random_floats(static_cast<std::size_t>(shape.numel()), -10, 10,
                                               static_cast<unsigned>(shape.numel()));
    const Tensor x = from_vector(v, shape);
    // The reduced dim moved last, copied dense: each output one dense run.
    IntList order;
    for (std::int64_t d = 0; d < x.dim(); ++d) {
      if (d != dim) order.push_back(d);
    }
    order.push_back(dim);
    const Tensor rows = x.permute(order).contiguous();
    const std::int64_t last = x.dim() - 1;
    // prod of factors near 1 (0.5 to 2), whose products stay far inside float's range: every
    // rounding of the lanes shows in the result.
    std::vector<float> near_one(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) near_one[i] = std::exp2(v[i] / 10);
    const Tensor px = from_vector(near_one, shape), prows = px.permute(order).contiguous();
    for (const auto& [a, b] : {std::pair{mpsim::sum(x, {dim}), mpsim::sum(rows, {last})},
                               std::pair{mean(x, {dim}), mean(rows, {last})},
                               std::pair{norm(x, {dim}), norm(rows, {last})},
                               std::pair{prod(px, {dim}), prod(prows, {last})}}) {
      const std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
      ASSERT_EQ(va.size(), vb.size());
      ASSERT_EQ(std::memcmp(va.data(), vb.data(), va.size() * 4), 0);
    }
    // The oracle: long double sums over the reduced dim.
    std::int64_t inner = 1;
    for (std::int64_t d = dim + 1; d < x.dim(); ++d) inner *= shape[static_cast<std::size_t>(d)];
    const std::int64_t size = shape[static_cast<std::size_t>(dim)];
    std::vector<LD> want(v.size() / static_cast<std::size_t>(size), 0);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::int64_t k = static_cast<std::int64_t>(i);
      want[static_cast<std::size_t>(k / (size * inner) * inner + k % inner)] += v[i];
    }
    const std::vector<float> got = mpsim::sum(x, {dim}).to_vector<float>();
    for (std::size_t j = 0; j < want.size(); ++j) EXPECT_LE(ulps(got[j], want[j]), 0.5) << j;
  }
}

MPSIM_ON_EVERY_TARGET(ReduceOnTarget);

// Note [row tiles] in kernels_simd/softmax.cc: softmax and log_softmax over the channels of an
// NCHW tensor (strided rows side by side) and of a channels-last one (dense rows into a
// row-major result) give the bits of the same rows made dense, with
// rows of NaN, +-inf and a huge value among them and a row count that leaves a partial tile.
TEST(Softmax, ChannelRowsInTilesMatchTheDenseRows) {
  for (const Shape& shape : {Shape{2, 37, 5, 7}, Shape{1, 320, 4, 8}, Shape{3, 5, 1, 17}}) {
    std::vector<float> v = random_floats(static_cast<std::size_t>(shape.numel()), -8, 8, 21);
    const std::int64_t plane = shape[2] * shape[3];
    v[static_cast<std::size_t>(3)] = NAN;                           // row 3 (channel 0)
    v[static_cast<std::size_t>(plane + 5)] = INFINITY;              // row 5 (channel 1)
    v[static_cast<std::size_t>(2 * plane + 6)] = -INFINITY;         // row 6
    v[static_cast<std::size_t>(4 * plane % v.size() + 9)] = 1e30f;  // row 9
    const Tensor x = from_vector(v, shape);
    const Tensor rows = x.permute({0, 2, 3, 1}).contiguous();  // the same rows, dense
    const Tensor xc = rows.permute({0, 3, 1, 2});  // channels-last: dense rows, row-major result
    for (const bool log : {false, true}) {
      const Tensor b = (log ? log_softmax(rows, 3) : softmax(rows, 3)).permute({0, 3, 1, 2});
      const std::vector<float> vb = b.to_vector<float>();
      for (const Tensor& in : {x, xc}) {
        const Tensor a = log ? log_softmax(in, 1) : softmax(in, 1);
        const std::vector<float> va = a.to_vector<float>();
        ASSERT_EQ(va.size(), vb.size());
        ASSERT_EQ(std::memcmp(va.data(), vb.data(), va.size() * 4), 0)
            << shape.to_string() << (log ? " log_softmax" : " softmax")
            << (in.is_contiguous() ? " NCHW" : " channels-last");
      }
    }
  }
}

// Note [product lanes]: partial products far outside double's range, against a long double
// product kept in range the same way (frexpl after each factor), written here.
long double scaled_product(const float* v, std::size_t n) {
  long double m = 1;
  long e = 0;
  for (std::size_t i = 0; i < n; ++i) {
    int k = 0;
    m = std::frexp(m * v[i], &k);
    e += k;
  }
  return std::ldexp(m, static_cast<int>(e));
}

TEST(Reduce, ProdKeepsItsLanesInRange) {
  const std::size_t n = 4099;  // dense vector rows, a tail, and more than one block
  std::vector<float> v(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = i % 2 == 0 ? 1e30f : 1e-30f;        // alternating: lanes of all-big, all-small
    v[n + i] = i < n / 2 ? 1e20f : 1.01e-20f;  // every big factor first
    v[2 * n + i] = 0.75f + static_cast<float>(i % 97) / 192.0f;  // an ordinary product (~e^-49)
  }
  const Tensor x = from_vector(v, {3, static_cast<std::int64_t>(n)});
  // The vector rows, the scalar rows (a strided view, made dense) and the columns of a
  // contiguous [n, 21] whose column c is row c % 3 (Note [product columns]: 16 outputs or more,
  // a vector tail on every target).
  std::vector<float> cv(n * 21);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < 21; ++c) cv[i * 21 + c] = v[(c % 3) * n + i];
  }
  const Tensor columns = from_vector(cv, {static_cast<std::int64_t>(n), 21});
  for (const Tensor& got_t :
       {prod(x, {1}), prod(x.t().contiguous().t(), {1}), prod(columns, {0})}) {
    const std::vector<float> got = got_t.to_vector<float>();
    for (std::size_t r = 0; r < got.size(); ++r) {
      const long double want = scaled_product(v.data() + r % 3 * n, n);
      EXPECT_LE(ulps(got[r], want), 1.0) << "output " << r << " got " << got[r];
    }
  }
  // float64: subnormal and huge factors, whose plain double product underflows.
  const std::vector<double> d = {4.9e-322, 1e300, 3e20, 0.7, 1e-300, 1e305, 2e-3};
  long double want = 1;
  for (double t : d) want *= t;
  const double got = prod(from_vector(d, {7})).item<double>();
  EXPECT_NEAR(got / static_cast<double>(want), 1.0, 1e-15);
  // Special values in long rows (the vector lanes: an inf or a zero lane is scaled too).
  std::vector<float> sp(5 * 300, 1.25f);
  sp[1 * 300 + 77] = INFINITY;   // inf
  sp[2 * 300 + 5] = 0.0f;        // 0
  sp[3 * 300 + 40] = -INFINITY;  // 0 * -inf = nan
  sp[3 * 300 + 250] = 0.0f;
  sp[4 * 300 + 299] = NAN;  // nan in the tail
  const Tensor spt = from_vector(sp, {5, 300});
  // rows, and columns: [300, 20] whose column c is row c % 5
  const Tensor spc = repeat(spt.t().contiguous(), {1, 4});
  for (const Tensor& got_t : {prod(spt, {1}), prod(spc, {0})}) {
    const std::vector<float> gs = got_t.to_vector<float>();
    for (std::size_t c = 5; c < gs.size(); ++c) {
      EXPECT_EQ(std::memcmp(&gs[c], &gs[c % 5], 4), 0) << "output " << c;
    }
    EXPECT_LE(ulps(gs[0], scaled_product(sp.data(), 300)), 1.0);
    EXPECT_EQ(gs[1], INFINITY);
    EXPECT_EQ(gs[2], 0.0f);
    EXPECT_TRUE(std::isnan(gs[3]));
    EXPECT_TRUE(std::isnan(gs[4]));
  }
  // Special values as the plain product: 0 * inf = nan, inf * finite, signs.
  EXPECT_TRUE(std::isnan(prod(from_vector<float>({0, 2, INFINITY}, {3})).item<float>()));
  EXPECT_EQ(prod(from_vector<float>({-INFINITY, 2, -3}, {3})).item<float>(), INFINITY);
  EXPECT_TRUE(std::isnan(prod(from_vector<float>({1, NAN, 0}, {3})).item<float>()));
  EXPECT_EQ(prod(from_vector<float>({1e30f, 1e30f}, {2})).item<float>(), INFINITY);
  EXPECT_EQ(prod(from_vector<float>({-1e-30f, 1e-30f}, {2})).item<float>(), -0.0f);
  EXPECT_TRUE(std::signbit(prod(from_vector<float>({-1e-30f, 1e-30f}, {2})).item<float>()));
}

TEST(Reduce, BitIdenticalFor1_2_8Threads) {
  const std::vector<float> v = random_floats(std::size_t{1} << 20, -10, 10, 7);
  const Tensor x = from_vector(v, {1024, 1024});
  auto run = [&] {
    std::vector<std::vector<float>> r;
    for (const Tensor& t :
         {mpsim::sum(x), mpsim::sum(x, {0}), mpsim::sum(x, {1}), var(x), mpsim::std(x, {0}),
          amax(x, {0}), logsumexp(x, {1}), softmax(x, 0), log_softmax(x, 1),
          prod(x.slice(1, 0, 8), {1}), mean(x.t(), {1}), argmax(x, 0).to(DType::Float32)}) {
      r.push_back(t.to_vector<float>());
    }
    return r;
  };
  std::vector<std::vector<float>> ref;
  for (int threads : {1, 2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const auto r = run();
    if (ref.empty()) ref = r;
    for (std::size_t k = 0; k < r.size(); ++k) {
      ASSERT_EQ(std::memcmp(r[k].data(), ref[k].data(), r[k].size() * 4), 0)
          << "case " << k << ", " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace mpsim
