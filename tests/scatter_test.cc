// The scatter family (core/scatter_ops.h) against oracles written here: reductions in long
// double in source order, the last-write rule for repeated indices, special values, negative
// and bad indices on both devices, and 1 vs 2 vs 4 threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/mpsim.h"
#include "core/scatter_ops.h"
#include "device_sim/mps.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;

std::vector<std::uint8_t> raw(const Tensor& t) {
  const Tensor c = t.to(Device::cpu()).contiguous();
  std::vector<std::uint8_t> out(c.nbytes());
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size());
  return out;
}

std::vector<float> normal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<std::int64_t> indices(std::size_t n, std::int64_t high, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::int64_t> v(n);
  for (auto& i : v) i = static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(high));
  return v;
}

// scatter_reduce along dim 0 of [rows, cols] from [n, cols]: long double, source order.
std::vector<float> oracle(const std::string& reduce, bool include_self,
                          const std::vector<float>& self, const std::vector<std::int64_t>& index,
                          const std::vector<float>& src, std::int64_t rows, std::int64_t cols) {
  std::vector<float> out = self;
  for (std::int64_t c = 0; c < cols; ++c) {
    for (std::int64_t r = 0; r < rows; ++r) {
      long double acc = include_self ? self[r * cols + c] : 0.0L;
      if (reduce == "prod" && !include_self) acc = 1;
      std::int64_t count = include_self ? 1 : 0;
      bool any = false;
      for (std::size_t e = 0; e < index.size() / cols; ++e) {
        if (index[e * cols + c] != r) continue;
        const long double v = src[e * cols + c];
        if (reduce == "sum" || reduce == "mean") acc += v;
        if (reduce == "prod") acc *= v;
        if (reduce == "amax") acc = (!any && !include_self) || v > acc ? v : acc;
        if (reduce == "amin") acc = (!any && !include_self) || v < acc ? v : acc;
        any = true;
        ++count;
      }
      if (!any) continue;
      if (reduce == "mean") acc /= count;
      out[r * cols + c] = static_cast<float>(acc);
    }
  }
  return out;
}

TEST(Scatter, ReductionsMatchALongDoubleOracleInSourceOrder) {
  constexpr std::int64_t kRows = 40, kCols = 7, kSources = 300;
  const auto self = normal(kRows * kCols, 1), src = normal(kSources * kCols, 2);
  const auto index = indices(kSources * kCols, kRows, 3);
  const Tensor x = from_vector(self, {kRows, kCols});
  const Tensor s = from_vector(src, {kSources, kCols});
  const Tensor i = from_vector(index, {kSources, kCols});
  for (const std::string reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      const auto want = oracle(reduce, include_self, self, index, src, kRows, kCols);
      const Tensor got = scatter_reduce(x, 0, i, s, reduce, include_self);
      const auto g = got.to_vector<float>();
      for (std::size_t k = 0; k < want.size(); ++k) {
        // prod: double's rounding per factor, within 1 ULP of float after the final rounding
        if (reduce == "prod") {
          EXPECT_NEAR(g[k], want[k], std::abs(want[k]) * 1.2e-7f) << reduce << " " << k;
        } else {
          EXPECT_EQ(g[k], want[k]) << reduce << " include_self " << include_self << " " << k;
        }
      }
    }
  }
  // index_add (alpha) is the sum of the slices: the same oracle on rows of the index.
  const auto rows = indices(kSources, kRows, 4);
  std::vector<std::int64_t> full(static_cast<std::size_t>(kSources * kCols));
  for (std::int64_t e = 0; e < kSources; ++e) {
    for (std::int64_t c = 0; c < kCols; ++c) full[e * kCols + c] = rows[e];
  }
  std::vector<float> scaled(src);
  for (float& v : scaled) v *= 2;  // exact
  const auto want = oracle("sum", true, self, full, scaled, kRows, kCols);
  EXPECT_EQ(index_add(x, 0, from_vector(rows, {kSources}), s, 2).to_vector<float>(), want);
}

TEST(Scatter, RepeatedIndicesTakeTheLastSourceInOrder) {
  const Tensor x = zeros({3});
  const Tensor got = scatter(x, 0, from_vector<std::int64_t>({1, 2, 1, 1}, {4}),
                             from_vector<float>({10, 20, 30, 40}, {4}));
  EXPECT_EQ(got.to_vector<float>(), (std::vector<float>{0, 40, 20}));
  EXPECT_EQ(put(x, from_vector<std::int64_t>({-1, 2}, {2}), from_vector<float>({5, 6}, {2}))
                .to_vector<float>(),
            (std::vector<float>{0, 0, 6}));
  EXPECT_EQ(
      index_copy(x, 0, from_vector<std::int64_t>({0, 0}, {2}), from_vector<float>({7, 8}, {2}))
          .to_vector<float>(),
      (std::vector<float>{8, 0, 0}));
}

TEST(Scatter, SpecialValuesAndEmptyInputs) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = from_vector<float>({1, 2, 3}, {3});
  const Tensor i = from_vector<std::int64_t>({0, 0, 1, 2}, {4});
  const Tensor s = from_vector<float>({nan, 5, inf, -inf}, {4});
  auto amax = scatter_reduce(x, 0, i, s, "amax").to_vector<float>();
  EXPECT_TRUE(std::isnan(amax[0]));
  EXPECT_EQ(amax[1], inf);
  EXPECT_EQ(amax[2], 3);
  auto sum = scatter_add(x, 0, i, s).to_vector<float>();
  EXPECT_TRUE(std::isnan(sum[0]));
  EXPECT_EQ(sum[1], inf);
  EXPECT_EQ(sum[2], -inf);
  // an empty index leaves the input as it is; an empty input with an empty index too
  EXPECT_EQ(raw(scatter_add(x, 0, zeros({0}, DType::Int64), zeros({0}))), raw(x));
  EXPECT_EQ(put(zeros({0}), zeros({0}, DType::Int64), zeros({0})).numel(), 0);
  // nonzero: NaN counts, -0 does not
  const Tensor z = from_vector<float>({0, -0.0f, nan, 1, 0, 2}, {2, 3});
  EXPECT_EQ(nonzero(z).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 2, 1, 0, 1, 2}));
  EXPECT_EQ(masked_select(z, gt(z, 0)).to_vector<float>(), (std::vector<float>{1, 2}));
  // float16 sums in double, rounded once: 2048 + 1 + 1 is 2050, 2048 in float16 arithmetic
  const Tensor h = from_vector<float>({2048}, {1}).to(DType::Float16);
  const Tensor ones2 = ones({2}, DType::Float16);
  EXPECT_EQ(scatter_add(h, 0, zeros({2}, DType::Int64), ones2).to(DType::Float32).item<float>(),
            2050.0f);
  // integer mean divides with floor
  const Tensor ints = from_vector<std::int64_t>({0}, {1});
  EXPECT_EQ(scatter_reduce(ints, 0, zeros({2}, DType::Int64),
                           from_vector<std::int64_t>({-3, 0}, {2}), "mean", false)
                .item<std::int64_t>(),
            -2);
}

TEST(Scatter, SameBitsForAnyThreadCountAndOnMps) {
  constexpr std::int64_t kRows = 20000, kCols = 3;
  const Tensor x = from_vector(normal(kRows * kCols, 5), {kRows, kCols});
  const Tensor s = from_vector(normal(kRows * kCols, 6), {kRows, kCols});
  const Tensor i0 = from_vector(indices(kRows * kCols, kRows, 7), {kRows, kCols});
  const Tensor i1 = from_vector(indices(kRows * kCols, kCols, 8), {kRows, kCols});
  std::vector<std::vector<std::uint8_t>> first;
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const std::vector<std::vector<std::uint8_t>> got = {
        raw(scatter_add(x, 0, i0, s)), raw(scatter_reduce(x, 1, i1, s, "mean")),
        raw(scatter(x, 0, i0, s)), raw(put(x, i0, s, true)),
        raw(index_reduce(x, 0, i0.select(1, 0), s, "amax"))};
    if (first.empty()) {
      first = got;
    } else {
      EXPECT_EQ(got, first) << threads << " threads";
    }
  }
  const Device m = Device::mps();
  EXPECT_EQ(raw(scatter_add(x.to(m), 0, i0.to(m), s.to(m))), first[0]);
  EXPECT_EQ(raw(put(x.to(m), i0.to(m), s.to(m), true)), first[3]);
}

template <class E>
void expect_error(const std::function<void()>& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error, expected " << text;
  } catch (const E& e) {
    EXPECT_THAT(e.what(), HasSubstr(text));
  }
}

TEST(Scatter, BadInputsRaiseNamingTheOp) {
  const Tensor x = zeros({4, 3});
  const Tensor s = ones({2, 3});
  const Tensor i = zeros({2, 3}, DType::Int64);
  expect_error<DTypeError>([&] { scatter(x, 0, i.to(DType::Int32), s); },
                           "[scatter] expected an index of dtype int64");
  expect_error<DTypeError>([&] { scatter(x, 0, i, s.to(DType::Float64)); },
                           "[scatter] expected src of input's dtype");
  expect_error<ShapeError>([&] { scatter(x, 0, zeros({2}, DType::Int64), s); },
                           "[scatter] index [2] must have as many dims as input");
  expect_error<ShapeError>(
      [&] {
        scatter(x, 0, zeros({5, 4}, DType::Int64), s);
      },
      "[scatter] expected index [5, 4] to be no larger");
  expect_error<InvalidArgument>([&] { scatter(x, 0, i, s, "max"); },
                                "[scatter] reduce must be 'add' or 'multiply'");
  expect_error<InvalidArgument>([&] { scatter_reduce(x, 0, i, s, "max"); },
                                "[scatter_reduce] reduce must be one of");
  expect_error<ShapeError>(
      [&] {
        scatter(x, 0, full({2, 3}, 4, DType::Int64), s);
      },
      "[scatter] index 4 is out of bounds for dimension 0 with size 4");
  expect_error<ShapeError>(
      [&] {
        scatter(x, 0, full({2, 3}, -1, DType::Int64), s);
      },
      "[scatter] index -1 is out of bounds");
  expect_error<ShapeError>([&] { put(x, full({2}, -13, DType::Int64), ones({2})); },
                           "[put] index -13 is out of bounds for dimension 0 with size 12");
  expect_error<ShapeError>([&] { put(x, zeros({2}, DType::Int64), ones({3})); },
                           "[put] expected source and index to have the same number");
  expect_error<ShapeError>(
      [&] {
        index_add(x, 1, zeros({2}, DType::Int64), ones({4, 3}));
      },
      "[index_add] number of indices (2) should be equal to source.size(dim) (3)");
  expect_error<ShapeError>(
      [&] {
        index_copy(x, 0, zeros({2, 1}, DType::Int64), s);
      },
      "[index_copy] index must be 0-d or 1-d");
  expect_error<ShapeError>([&] { index_fill(x, 1, from_vector<std::int64_t>({3}, {1}), 1.0); },
                           "[index_fill] index 3 is out of bounds for dimension 1 with size 3");
  expect_error<InvalidArgument>([&] { index_reduce(x, 0, zeros({2}, DType::Int64), s, "sum"); },
                                "[index_reduce] reduce must be one of 'prod'");
  expect_error<ShapeError>(
      [&] {
        index_put(x, {zeros({1}, DType::Int64), zeros({1}, DType::Int64), zeros({1}, DType::Int64)},
                  ones({1}));
      },
      "[index_put] too many indices for a tensor of dimension 2");
  expect_error<ShapeError>([&] { index_put(x, {full({1}, 7, DType::Int64)}, ones({3})); },
                           "[index_put] index 7 is out of bounds for dimension 0 with size 4");
  expect_error<DTypeError>(
      [&] {
        masked_select(x, zeros({4, 3}));
      },
      "[masked_select] expected a bool mask");
  expect_error<ShapeError>(
      [&] {
        masked_scatter(x, ones({4, 3}, DType::Bool), ones({5}));
      },
      "[masked_scatter] source has 5 elements, fewer than the mask's 12");
  // mps: the kernel's check surfaces at the next synchronization; the device keeps working.
  const Device m = Device::mps();
  try {
    const Tensor y = scatter_add(x.to(m), 0, full({2, 3}, 9, DType::Int64, m), s.to(m));
    mps::synchronize();
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[scatter] index"));
  }
  EXPECT_EQ(scatter_add(x.to(m), 0, i.to(m), s.to(m)).to(Device::cpu()).to_vector<float>()[0], 2);
}

}  // namespace
}  // namespace mpsim
