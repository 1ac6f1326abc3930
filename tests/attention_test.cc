// scaled_dot_product_attention against a long double softmax(q k^T scale + mask) v written
// here: shapes across the key block, cross-attention, bool / additive / -inf masks, fully
// masked rows, causal with L != S, Golden's 2 ulp and Fast's bound, float16/bfloat16,
// determinism over threads and slicing, special values and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/mpsim.h"
#include "tests/random_inputs.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;
constexpr LD kInf = std::numeric_limits<LD>::infinity();

using test::random_tensor;

struct Reference {
  std::vector<LD> out;        // [heads, L, Ev]
  std::vector<LD> magnitude;  // sum_j p_j |v_j| per output
};

// q [H, L, E], k [H, S, E], v [H, S, Ev] (contiguous float values), mask(h, i, j) -> additive
// long double (-inf to drop a key).
template <class Mask>
Reference reference(const Tensor& qt, const Tensor& kt, const Tensor& vt, LD scale, Mask&& mask) {
  const std::vector<float> q = qt.to_vector<float>(), k = kt.to_vector<float>(),
                           v = vt.to_vector<float>();
  const std::int64_t heads = qt.size(0), l = qt.size(1), e = qt.size(2), s = kt.size(1),
                     ev = vt.size(2);
  Reference r;
  std::vector<LD> w(static_cast<std::size_t>(s));
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i = 0; i < l; ++i) {
      LD mx = -kInf;
      for (std::int64_t j = 0; j < s; ++j) {
        LD dot = 0;
        for (std::int64_t t = 0; t < e; ++t) {
          dot += static_cast<LD>(q[static_cast<std::size_t>((h * l + i) * e + t)]) *
                 k[static_cast<std::size_t>((h * s + j) * e + t)];
        }
        w[static_cast<std::size_t>(j)] = dot * scale + mask(h, i, j);
        mx = std::max(mx, w[static_cast<std::size_t>(j)]);
      }
      LD sum = 0;
      for (LD& x : w) {
        x = mx == -kInf ? 0 : std::exp(x - mx);
        sum += x;
      }
      for (std::int64_t c = 0; c < ev; ++c) {
        LD acc = 0, mag = 0;
        for (std::int64_t j = 0; j < s; ++j) {
          const LD vv = v[static_cast<std::size_t>((h * s + j) * ev + c)];
          acc += w[static_cast<std::size_t>(j)] * vv;
          mag += w[static_cast<std::size_t>(j)] * std::fabs(vv);
        }
        r.out.push_back(sum == 0 ? std::numeric_limits<LD>::quiet_NaN() : acc / sum);
        r.magnitude.push_back(sum == 0 ? 0 : mag / sum);
      }
    }
  }
  return r;
}

LD no_mask(std::int64_t, std::int64_t, std::int64_t) { return 0; }

LD ulp32(LD v) {
  int e = 0;
  std::frexp(v, &e);
  return std::ldexp(1.0L, std::max(e, -125) - 24);
}

// Golden (Note [attention numerics]): 2 ulp, or 0.5 ulp + 2^-44 sum p |v| where v cancels.
void expect_golden(const Tensor& got, const Reference& want) {
  const std::vector<float> g = got.contiguous().to_vector<float>();
  ASSERT_EQ(g.size(), want.out.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(want.out[i])) {
      ASSERT_TRUE(std::isnan(g[i])) << i;
      continue;
    }
    const LD err = std::fabs(g[i] - want.out[i]);
    ASSERT_TRUE(err <= 2 * ulp32(want.out[i]) ||
                err <= 0.5L * ulp32(want.out[i]) + std::ldexp(want.magnitude[i], -44))
        << "element " << i << ": got " << g[i] << ", exact " << static_cast<double>(want.out[i]);
  }
}

TEST(Attention, ShapesAcrossTheKeyBlockWithinTwoUlp) {
  const std::int64_t ls[] = {1, 7, 77, 200};
  const std::int64_t ss[] = {1, 5, 77, 191, 193, 400};
  unsigned seed = 1;
  for (std::int64_t l : ls) {
    for (std::int64_t s : ss) {
      for (std::int64_t e : {8, 40}) {
        const std::int64_t ev = e == 8 ? 24 : e;
        SCOPED_TRACE(testing::Message() << "L " << l << " S " << s << " E " << e);
        const Tensor q = random_tensor({2, l, e}, seed++, -2, 2),
                     k = random_tensor({2, s, e}, seed++, -2, 2);
        const Tensor v = random_tensor({2, s, ev}, seed++, 0, 1);  // positive: no cancellation
        const Tensor got = scaled_dot_product_attention(q, k, v);
        ASSERT_EQ(got.sizes(), Shape({2, l, ev}));
        expect_golden(got, reference(q, k, v, 1 / std::sqrt(static_cast<LD>(e)), no_mask));
      }
    }
  }
}

TEST(Attention, MixedSignValuesCrossAttentionAndScale) {
  // A 4-d batch [2, 3] of heads, 300 queries over 77 keys (a text context), scale given.
  const Tensor q = random_tensor({2, 3, 300, 40}, 11), k = random_tensor({2, 3, 77, 40}, 12),
               v = random_tensor({2, 3, 77, 40}, 13);
  const Tensor got = scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, 0.3);
  expect_golden(got.reshape({6, 300, 40}),
                reference(q.reshape({6, 300, 40}), k.reshape({6, 77, 40}), v.reshape({6, 77, 40}),
                          0.3L, no_mask));
}

TEST(Attention, BoolAndAdditiveMasksBroadcastAndFullyMaskedRowsAreNaN) {
  const std::int64_t l = 9, s = 250, e = 16;
  const Tensor q = random_tensor({2, l, e}, 21), k = random_tensor({2, s, e}, 22),
               v = random_tensor({2, s, e}, 23, 0, 1);
  // Bool [L, S] broadcast over heads: key j visible to query i when (i + j) % 3 != 0; row 4
  // sees nothing (NaN, as PyTorch).
  std::vector<bool> keep(static_cast<std::size_t>(l * s));
  for (std::int64_t i = 0; i < l; ++i)
    for (std::int64_t j = 0; j < s; ++j)
      keep[static_cast<std::size_t>(i * s + j)] = i != 4 && (i + j) % 3 != 0;
  const Tensor bool_mask = from_vector(keep, {l, s});
  expect_golden(scaled_dot_product_attention(q, k, v, bool_mask),
                reference(q, k, v, 0.25L, [&](std::int64_t, std::int64_t i, std::int64_t j) {
                  return keep[static_cast<std::size_t>(i * s + j)] ? LD(0) : -kInf;
                }));
  // Additive [2, 1, S] (per head, broadcast over queries) with -inf entries.
  const Tensor add = random_tensor({2, 1, s}, 24, -3, 3);
  std::vector<float> addv = add.to_vector<float>();
  for (std::size_t j = 0; j < addv.size(); j += 7)
    addv[j] = -std::numeric_limits<float>::infinity();
  const Tensor add_mask = from_vector(addv, {2, 1, s});
  expect_golden(scaled_dot_product_attention(q, k, v, add_mask),
                reference(q, k, v, 0.25L, [&](std::int64_t h, std::int64_t, std::int64_t j) {
                  return static_cast<LD>(addv[static_cast<std::size_t>(h * s + j)]);
                }));
}

TEST(Attention, CausalIsTopLeftAlignedForAnyLAndS) {
  for (auto [l, s] : {std::pair<std::int64_t, std::int64_t>{50, 50}, {70, 30}, {30, 300}}) {
    SCOPED_TRACE(testing::Message() << l << " x " << s);
    const Tensor q = random_tensor({1, l, 8}, 31), k = random_tensor({1, s, 8}, 32),
                 v = random_tensor({1, s, 8}, 33, 0, 1);
    expect_golden(
        scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true),
        reference(q, k, v, 1 / std::sqrt(8.0L), [](std::int64_t, std::int64_t i, std::int64_t j) {
          return j > i ? -kInf : LD(0);
        }));
  }
}

TEST(Attention, FastStaysWithinItsBound) {
  const Tensor q = random_tensor({2, 130, 40}, 41), k = random_tensor({2, 500, 40}, 42),
               v = random_tensor({2, 500, 40}, 43);
  const Reference want = reference(q, k, v, 1 / std::sqrt(40.0L), no_mask);
  PrecisionGuard fast(Precision::Fast);
  const std::vector<float> got = scaled_dot_product_attention(q, k, v).to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want.out[i]), std::ldexp(1.0L, -20)) << i;  // max |v| = 1
  }
}

TEST(Attention, HalfAndBFloat16RoundOnce) {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    const Tensor q = random_tensor({1, 33, 40}, 51).to(dt),
                 k = random_tensor({1, 77, 40}, 52).to(dt),
                 v = random_tensor({1, 77, 40}, 53, 0, 1).to(dt);
    const Reference want = reference(q.to(DType::Float32), k.to(DType::Float32),
                                     v.to(DType::Float32), 1 / std::sqrt(40.0L), no_mask);
    const Tensor got = scaled_dot_product_attention(q, k, v);
    ASSERT_EQ(got.dtype(), dt);
    const std::vector<float> g = got.to_vector<float>();
    const int mantissa = dt == DType::Float16 ? 10 : 7;
    for (std::size_t i = 0; i < g.size(); ++i) {
      int e = 0;
      std::frexp(want.out[i], &e);
      ASSERT_LE(std::fabs(g[i] - want.out[i]),
                std::ldexp(1.0L, e - 1 - mantissa) * 0.5L + std::ldexp(1.0L, -40))
          << dtype_name(dt) << " " << i;
    }
  }
}

TEST(Attention, SpecialValuesAndEmptySequences) {
  Tensor q = random_tensor({1, 4, 8}, 61);
  const Tensor k = random_tensor({1, 6, 8}, 62), v = random_tensor({1, 6, 8}, 63);
  std::vector<float> qv = q.to_vector<float>();
  qv[8] = std::numeric_limits<float>::quiet_NaN();  // row 1
  const std::vector<float> got =
      scaled_dot_product_attention(from_vector(qv, {1, 4, 8}), k, v).to_vector<float>();
  for (int c = 0; c < 8; ++c) {
    EXPECT_FALSE(std::isnan(got[static_cast<std::size_t>(c)]));
    EXPECT_TRUE(std::isnan(got[static_cast<std::size_t>(8 + c)]));
  }
  // No keys: the composition's empty sum is zero; no queries: an empty result.
  EXPECT_EQ(scaled_dot_product_attention(q, zeros({1, 0, 8}), zeros({1, 0, 5})).to_vector<float>(),
            std::vector<float>(20, 0.0f));
  EXPECT_EQ(scaled_dot_product_attention(zeros({1, 0, 8}), k, v).sizes(), Shape({1, 0, 8}));
}

TEST(Attention, BitIdenticalForAnyThreadCountAndSlicing) {
  const Tensor q = random_tensor({2, 4, 300, 40}, 71), k = random_tensor({2, 4, 400, 40}, 72),
               v = random_tensor({2, 4, 400, 40}, 73);
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    const std::vector<float> ref = scaled_dot_product_attention(q, k, v).to_vector<float>();
    for (int threads : {1, 2, 8}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      EXPECT_EQ(scaled_dot_product_attention(q, k, v).to_vector<float>(), ref);
    }
    for (std::int64_t slice : {1, 3}) {
      EXPECT_EQ(scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, std::nullopt, slice)
                    .to_vector<float>(),
                ref);
    }
  }
}

TEST(Attention, BadInputNamesOpArgumentExpectedAndGiven) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Tensor q = zeros({2, 5, 8}), k = zeros({2, 6, 8}), v = zeros({2, 6, 4});
  EXPECT_THAT(message([&] {
                scaled_dot_product_attention(q, zeros({2, 6, 7}), v);
              }),
              HasSubstr("expected query and key to share the embedding dim"));
  EXPECT_THAT(message([&] {
                scaled_dot_product_attention(q, k, zeros({2, 5, 4}));
              }),
              HasSubstr("expected key and value to share the sequence length"));
  EXPECT_THAT(
      message([&] {
        scaled_dot_product_attention(q, k, v, zeros({5, 7}));
      }),
      HasSubstr("attn_mask of shape [5, 7] cannot be broadcast to the scores' shape [2, 5, 6]"));
  EXPECT_THAT(message([&] {
                scaled_dot_product_attention(q, k, v, zeros({5, 6}), 0.0, true);
              }),
              HasSubstr("must not be given with is_causal=true"));
  EXPECT_THAT(message([&] { scaled_dot_product_attention(q, k, v, std::nullopt, 0.1); }),
              HasSubstr("dropout_p > 0 is not supported"));
  EXPECT_THAT(message([&] { scaled_dot_product_attention(q, k.to(DType::Float16), v); }),
              HasSubstr("expected key of dtype float32"));
  EXPECT_THAT(message([&] {
                scaled_dot_product_attention(q, k, v, zeros({5, 6}, DType::Int64));
              }),
              HasSubstr("expected attn_mask of dtype bool or float32"));
  EXPECT_THAT(message([&] {
                scaled_dot_product_attention(zeros({3, 5, 8}), k, v);
              }),
              HasSubstr("cannot be broadcast"));
  EXPECT_THAT(message([&] {
                scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, std::nullopt, 0);
              }),
              HasSubstr("slice_size must be positive"));
}

}  // namespace
}  // namespace mpsim
