// The comparison, where and clamp ops on every dtype against the oracles of binary_oracles.h:
// NaN ordering, broadcast conditions and bounds, promotion, and clamp's bound order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/mpsim.h"
#include "tests/binary_oracles.h"
#include "tests/simd_targets.h"

namespace mpsim::testing {
namespace {

// ---- comparisons ----

TEST(CompareTest, AllDTypesAndNaN) {
  using Cmp = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, Cmp> ops[] = {{"eq", eq}, {"ne", ne}, {"lt", lt},
                                             {"le", le}, {"gt", gt}, {"ge", ge}};
  // a = {1, 2, 3, 0} vs b = {2, 2, 1, 0}, per op.
  const std::vector<bool> plain[] = {{0, 1, 0, 1}, {1, 0, 1, 0}, {1, 0, 0, 0},
                                     {1, 1, 0, 1}, {0, 0, 1, 0}, {0, 1, 1, 1}};
  // a = {nan, nan, 1, -0, -inf} vs b = {nan, 1, nan, +0, inf}: NaN is unordered, -0 == +0.
  const std::vector<bool> special[] = {{0, 0, 0, 1, 0}, {1, 1, 1, 0, 1}, {0, 0, 0, 0, 1},
                                       {0, 0, 0, 1, 1}, {0, 0, 0, 0, 0}, {0, 0, 0, 1, 0}};
  for (DType d : {DType::UInt8, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16,
                  DType::Float32, DType::Float64}) {
    const Tensor a = make({1, 2, 3, 0}, d, {4}), b = make({2, 2, 1, 0}, d, {4});
    const Tensor sa = make({kNaN, kNaN, 1.0, -0.0, -kInf}, d, {5}),
                 sb = make({kNaN, 1.0, kNaN, 0.0, kInf}, d, {5});
    for (int k = 0; k < 6; ++k) {
      const Tensor r = ops[k].second(a, b);
      EXPECT_EQ(r.dtype(), DType::Bool);
      EXPECT_EQ(r.to_vector<bool>(), plain[k]) << ops[k].first << " " << d;
      if (is_floating(d)) {
        EXPECT_EQ(ops[k].second(sa, sb).to_vector<bool>(), special[k]) << ops[k].first << " " << d;
      }
    }
  }
  // Promotion: int tensor vs 2.5 compares in float32; 0-dim/scalar broadcasting.
  const Tensor i = from_vector<std::int32_t>({2, 3}, {2});
  EXPECT_EQ(eq(i, 2.5).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(lt(i, 2.5).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(ge(i, scalar_tensor(3, DType::Int64)).to_vector<bool>(),
            (std::vector<bool>{false, true}));
}

// ---- where / clamp ----

TEST(WhereTest, AllDTypesBroadcastAndPromotion) {
  const Tensor c = from_vector<bool>({true, false, false, true}, {4});
  for (DType d : {DType::Bool, DType::UInt8, DType::Int32, DType::Int64, DType::Float16,
                  DType::BFloat16, DType::Float32, DType::Float64}) {
    const Tensor a = make({1, 1, 1, 1}, d, {4}), b = make({0, 0, 0, 0}, d, {4});
    const Tensor w = where(c, a, b);
    EXPECT_EQ(w.dtype(), d);
    EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{1, 0, 0, 1})) << d;
  }
  const Tensor cb = from_vector<bool>({true, false, true}, {3, 1});
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {4});
  const Tensor w = where(cb, a, scalar_tensor(-1.0, DType::Float32));
  EXPECT_EQ(w.shape(), (Shape{3, 4}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, -1, -1, -1, -1, 1, 2, 3, 4}));
  const Tensor wi = where(c, from_vector<std::int32_t>({1, 2, 3, 4}, {4}), 2.5);
  EXPECT_EQ(wi.dtype(), DType::Float32);
  EXPECT_EQ(wi.to_vector<float>(), (std::vector<float>{1, 2.5f, 2.5f, 4}));
  EXPECT_EQ(where(c, 1, 0).dtype(), DType::Int64);
  EXPECT_EQ(where(c, 1, 0).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(where(c, 1.5, 0).dtype(), DType::Float32);
  const Tensor nan_other =
      where(c, from_vector<float>({1, 2, 3, 4}, {4}), from_vector<float>({NAN, 5, 6, NAN}, {4}));
  EXPECT_EQ(nan_other.to_vector<float>(), (std::vector<float>{1, 5, 6, 4}));
  // Half and float32: the result promotes to float32 (both are dim > 0 tensors).
  EXPECT_EQ(where(c, make({1, 1, 1, 1}, DType::Float16, {4}),
                  make({0.5, 0.5, 0.5, 0.5}, DType::Float32, {4}))
                .dtype(),
            DType::Float32);
  EXPECT_THROW(where(from_vector<std::uint8_t>({1}, {1}), a, a), DTypeError);
}

TEST(ClampTest, ScalarBoundsNaNAndOrder) {
  for (DType d : kFloatTypes) {
    const Tensor x = make({-2.0, 0.5, 3.0, kNaN, -kInf, kInf}, d, {6});
    expect_same(
        clamp(x, std::optional<Scalar>(-1), std::optional<Scalar>(1)).to_vector<double>()[0], -1.0,
        "lo");
    const std::vector<double> c =
        clamp(x, std::optional<Scalar>(-1), std::optional<Scalar>(1)).to_vector<double>();
    const double want[] = {-1.0, 0.5, 1.0, kNaN, -1.0, 1.0};
    for (int i = 0; i < 6; ++i)
      expect_same(c[i], want[i], std::string(dtype_name(d)) + " clamp " + std::to_string(i));
    const std::vector<double> nb =
        clamp(x, std::optional<Scalar>(kNaN), std::nullopt).to_vector<double>();
    for (double v : nb) EXPECT_TRUE(std::isnan(v)) << d;  // a NaN bound gives NaN everywhere
    const std::vector<double> inv =
        clamp(x, std::optional<Scalar>(2), std::optional<Scalar>(1)).to_vector<double>();
    const double want_inv[] = {1.0, 1.0, 1.0, kNaN, 1.0, 1.0};  // min > max: max
    for (int i = 0; i < 6; ++i)
      expect_same(inv[i], want_inv[i],
                  std::string(dtype_name(d)) + " inverted " + std::to_string(i));
    EXPECT_EQ(clamp_min(x, 0).to_vector<double>()[0], 0.0);
    EXPECT_EQ(clamp_max(x, 0).to_vector<double>()[2], 0.0);
  }
  const Tensor xi = from_vector<std::int32_t>({-5, 0, 5}, {3});
  EXPECT_EQ(
      clamp(xi, std::optional<Scalar>(-1), std::optional<Scalar>(1)).to_vector<std::int32_t>(),
      (std::vector<std::int32_t>{-1, 0, 1}));
  const Tensor xf = clamp(xi, std::optional<Scalar>(0.5), std::nullopt);  // promotes to float32
  EXPECT_EQ(xf.dtype(), DType::Float32);
  EXPECT_EQ(xf.to_vector<float>(), (std::vector<float>{0.5f, 0.5f, 5.0f}));
  EXPECT_EQ(clamp(from_vector<std::uint8_t>({0, 100, 255}, {3}), std::optional<Scalar>(10),
                  std::optional<Scalar>(200))
                .to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{10, 100, 200}));
  const Tensor cb = clamp(from_vector<bool>({true, false}, {2}), std::optional<Scalar>(0),
                          std::optional<Scalar>(0));
  EXPECT_EQ(cb.dtype(), DType::Int64);  // bool tensor with int bounds computes in int64, as torch
  EXPECT_EQ(cb.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 0}));
  EXPECT_THROW(clamp(xi, std::optional<Scalar>(), std::optional<Scalar>()), InvalidArgument);
  EXPECT_THROW(clamp(xi, std::optional<Tensor>(), std::optional<Tensor>()), InvalidArgument);
}

TEST(ClampTest, TensorBoundsBroadcast) {
  const Tensor x = from_vector<float>({-3, -1, 0, 1, 3, NAN}, {2, 3});
  const Tensor lo = from_vector<float>({-2, 0, NAN}, {3});
  const Tensor hi = from_vector<float>({2}, {1, 1});
  const std::vector<float> got =
      clamp(x, std::optional<Tensor>(lo), std::optional<Tensor>(hi)).to_vector<float>();
  const double want[] = {-2, 0, kNaN, 1, 2, kNaN};
  for (int i = 0; i < 6; ++i) expect_same(got[i], want[i], "tensor bounds " + std::to_string(i));
  const Tensor wide = clamp(from_vector<float>({5}, {1}),
                            std::optional<Tensor>(from_vector<float>({1, 6}, {2, 1})));
  EXPECT_EQ(wide.shape(), (Shape{2, 1}));
  EXPECT_EQ(wide.to_vector<float>(), (std::vector<float>{5, 6}));
  const Tensor only_max =
      clamp(x, std::nullopt, std::optional<Tensor>(scalar_tensor(0, DType::Float32)));
  expect_same(only_max.to_vector<float>()[4], 0.0, "only max");
  expect_same(only_max.to_vector<float>()[0], -3.0, "only max keeps low values");
}

// Note [clamp rows]: float32 and float64 rows of several vectors and a tail, scalar, dense
// and broadcast bounds (NaN, -0.0, lo > hi among them), on every SIMD target: the definition's
// bits (x's own NaN, -0.0 kept against 0.0), written here.
template <class T>
T clamp_definition(T x, std::optional<T> lo, std::optional<T> hi) {
  if (std::isnan(x)) return x;
  if (lo && (std::isnan(*lo) || x < *lo)) x = *lo;
  if (hi && (std::isnan(*hi) || x > *hi)) x = *hi;
  return x;
}

template <class T>
void expect_clamp_rows() {
  constexpr std::int64_t kN = 1031;
  std::vector<T> xs(kN), los(kN), his(kN);
  Rng rng;
  for (std::int64_t i = 0; i < kN; ++i) {
    xs[i] = static_cast<T>(rng.uniform(-4, 4));
    los[i] = static_cast<T>(rng.uniform(-3, 1));
    his[i] = static_cast<T>(rng.uniform(-1, 3));
  }
  const T nan_payload =
      std::is_same_v<T, float>
          ? static_cast<T>(std::bit_cast<float>(std::uint32_t{0x7fc00123}))
          : static_cast<T>(std::bit_cast<double>(std::uint64_t{0x7ff8000000000123}));
  const T signaling_nan =
      std::is_same_v<T, float>
          ? static_cast<T>(std::bit_cast<float>(std::uint32_t{0xff800321}))
          : static_cast<T>(std::bit_cast<double>(std::uint64_t{0xfff0000000000321}));
  xs[5] = nan_payload, xs[70] = -0.0, xs[71] = 0.0, xs[300] = INFINITY, xs[301] = -INFINITY;
  xs[6] = signaling_nan;  // kept bit for bit, as every NaN x
  xs[1030] = nan_payload;
  los[9] = NAN, his[12] = NAN, los[40] = 2, his[40] = -2;  // NaN bounds; lo > hi
  los[70] = 0.0, los[71] = -0.0, his[72] = -0.0;
  const Tensor x = from_vector(xs, {kN});
  const Tensor lo = from_vector(los, {kN}), hi = from_vector(his, {kN});
  const Tensor row_lo = from_vector(std::vector<T>(los.begin(), los.begin() + 1), {1});
  struct Case {
    const char* name;
    Tensor got;
    std::function<T(std::int64_t)> want;
  };
  const std::vector<Case> cases = {
      {"scalar bounds", clamp(x, std::optional<Scalar>(-1.5), std::optional<Scalar>(2.25)),
       [&](std::int64_t i) { return clamp_definition<T>(xs[i], T(-1.5), T(2.25)); }},
      {"scalar -0.0 and 0.0", clamp(x, std::optional<Scalar>(-0.0), std::optional<Scalar>(0.0)),
       [&](std::int64_t i) { return clamp_definition<T>(xs[i], T(-0.0), T(0.0)); }},
      {"scalar lo > hi", clamp(x, std::optional<Scalar>(1), std::optional<Scalar>(-1)),
       [&](std::int64_t i) { return clamp_definition<T>(xs[i], T(1), T(-1)); }},
      {"NaN min only", clamp(x, std::optional<Scalar>(NAN), std::nullopt),
       [&](std::int64_t i) { return clamp_definition<T>(xs[i], T(NAN), std::nullopt); }},
      {"max only", clamp(x, std::nullopt, std::optional<Scalar>(0.5)),
       [&](std::int64_t i) { return clamp_definition<T>(xs[i], std::nullopt, T(0.5)); }},
      {"dense bounds", clamp(x, std::optional<Tensor>(lo), std::optional<Tensor>(hi)),
       [&](std::int64_t i) { return clamp_definition<T>(xs[i], los[i], his[i]); }},
      {"broadcast lo, dense hi",
       clamp(x, std::optional<Tensor>(row_lo), std::optional<Tensor>(hi)),
       [&](std::int64_t i) { return clamp_definition<T>(xs[i], los[0], his[i]); }},
  };
  for (const Case& c : cases) {
    const std::vector<T> got = c.got.template to_vector<T>();
    for (std::int64_t i = 0; i < kN; ++i) {
      const T want = c.want(i);
      ASSERT_EQ(std::memcmp(&got[static_cast<std::size_t>(i)], &want, sizeof(T)), 0)
          << c.name << " element " << i << ": " << got[i] << " vs " << want;
    }
  }
}

class ClampOnTarget : public test::OnEveryTarget {};

TEST_P(ClampOnTarget, VectorRowsGiveTheDefinitionsBits) {
  expect_clamp_rows<float>();
  expect_clamp_rows<double>();
}

MPSIM_ON_EVERY_TARGET(ClampOnTarget);

}  // namespace
}  // namespace mpsim::testing
