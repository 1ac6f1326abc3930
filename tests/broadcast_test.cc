// The binary ops across layouts, targets and threads: broadcasting against an index oracle,
// strided and expanded views, promotion of results, empty tensors, bit-identical results on
// every compiled SIMD target (row tails included) and for 1, 2 and 8 threads.
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
#include <string>
#include <tuple>
#include <vector>

#include "core/mpsim.h"
#include "kernels_simd/simd_target.h"
#include "tests/binary_oracles.h"
#include "tests/simd_targets.h"

namespace mpsim::testing {
namespace {

// ---- broadcasting, strided views, promotion, empty ----

// out[i...] = f(a[broadcast index], b[broadcast index]) for contiguous float32 a and b.
std::vector<float> broadcast_ref(const std::vector<float>& a, const Shape& sa,
                                 const std::vector<float>& b, const Shape& sb, const Shape& out,
                                 const std::function<float(float, float)>& f) {
  const std::size_t nd = out.size();
  auto offset = [&](const Shape& s, const std::vector<std::int64_t>& idx) {
    std::int64_t off = 0, stride = 1;
    for (std::size_t k = 0; k < s.size(); ++k) {
      const std::size_t dim = s.size() - 1 - k;
      const std::int64_t i = idx[nd - 1 - k];
      off += (s[dim] == 1 ? 0 : i) * stride;
      stride *= s[dim];
    }
    return off;
  };
  std::vector<float> r(out.numel());
  std::vector<std::int64_t> idx(nd, 0);
  for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
    std::int64_t rest = flat;
    for (std::size_t k = nd; k-- > 0;) {
      idx[k] = rest % out[k];
      rest /= out[k];
    }
    r[flat] = f(a[offset(sa, idx)], b[offset(sb, idx)]);
  }
  return r;
}

std::vector<float> rand_floats(std::int64_t n, Rng& rng) {
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.uniform(-4, 4));
  return v;
}

TEST(BroadcastTest, ShapesAgainstIndexOracle) {
  Rng rng;
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {{{2, 3, 4}, {3, 1}, {2, 3, 4}},
                        {{2, 3, 4}, {4}, {2, 3, 4}},
                        {{2, 3, 4}, {}, {2, 3, 4}},
                        {{3, 1}, {1, 5}, {3, 5}},
                        {{2, 320, 8, 8}, {320, 1, 1}, {2, 320, 8, 8}},
                        {{1}, {7, 1, 3}, {7, 1, 3}},
                        {{5, 1, 1}, {1, 1, 37}, {5, 1, 37}}};
  for (const Case& c : cases) {
    const std::vector<float> a = rand_floats(c.a.numel(), rng), b = rand_floats(c.b.numel(), rng);
    const Tensor ta = from_vector(a, c.a), tb = from_vector(b, c.b);
    const Tensor s = add(ta, tb), m = mul(tb, ta), mx = maximum(ta, tb);
    ASSERT_EQ(s.shape(), c.out);
    EXPECT_EQ(s.to_vector<float>(),
              broadcast_ref(a, c.a, b, c.b, c.out, [](float x, float y) { return x + y; }))
        << c.a << c.b;
    EXPECT_EQ(m.to_vector<float>(),
              broadcast_ref(a, c.a, b, c.b, c.out, [](float x, float y) { return y * x; }))
        << c.a << c.b;
    EXPECT_EQ(mx.to_vector<float>(),
              broadcast_ref(a, c.a, b, c.b, c.out, [](float x, float y) { return x > y ? x : y; }));
  }
  // Python scalars on either side.
  const Tensor x = from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ((x + 1).to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ((2 - x).to_vector<float>(), (std::vector<float>{1, 0, -1}));
  EXPECT_EQ((3 * x).to_vector<float>(), (std::vector<float>{3, 6, 9}));
  EXPECT_EQ((1 / x).to_vector<float>()[1], 0.5f);
  EXPECT_EQ((x / 2).to_vector<float>(), (std::vector<float>{0.5f, 1, 1.5f}));
  EXPECT_EQ((-x).to_vector<float>(), (std::vector<float>{-1, -2, -3}));
}

TEST(BroadcastTest, StridedAndExpandedInputsAndStridedOutput) {
  Rng rng;
  const std::vector<float> av = rand_floats(48, rng), bv = rand_floats(48, rng);
  const Tensor a = from_vector(av, {4, 12}), b = from_vector(bv, {12, 4});
  const Tensor at = a.slice(1, 1, 12, 3);     // [4, 4], strides [12, 3]
  const Tensor bt = b.t().slice(1, 0, 8, 2);  // [4, 4], strides [1, 8]
  const Tensor be = b.select(1, 2).slice(0, 0, 4).unsqueeze(0).expand({4, 4});  // stride 0 rows
  for (const FloatCase& c : float_cases()) {
    const std::vector<float> r1 = c.op(at, bt).to_vector<float>(),
                             r2 = c.op(at, be).to_vector<float>();
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        const double x = av[i * 12 + 1 + 3 * j], y1 = bv[(2 * j) * 4 + i], y2 = bv[j * 4 + 2];
        const double w1 = round_to(DType::Float32, c.ref(x, y1));
        const double w2 = round_to(DType::Float32, c.ref(x, y2));
        EXPECT_TRUE(same(r1[i * 4 + j], w1)) << c.name << " strided " << i << "," << j;
        EXPECT_TRUE(same(r2[i * 4 + j], w2)) << c.name << " expanded " << i << "," << j;
      }
    }
  }
  // A transposed destination receives the result in its own layout.
  Tensor base = zeros({4, 4});
  base.t().copy_(add(at, bt));
  const std::vector<float> sum = add(at, bt).to_vector<float>(), bs = base.to_vector<float>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(bs[j * 4 + i], sum[i * 4 + j]);
}

TEST(BroadcastTest, PromotionOfResults) {
  const Tensor i = from_vector<std::int32_t>({1, -2}, {2});
  EXPECT_EQ(add(i, 2.5).to_vector<float>(), (std::vector<float>{3.5f, 0.5f}));
  EXPECT_EQ(mul(i, 1.5).dtype(), DType::Float32);
  EXPECT_EQ(mul(i, 1.5).to_vector<float>(), (std::vector<float>{1.5f, -3.0f}));
  EXPECT_EQ(add(i, scalar_tensor(1, DType::Float64)).dtype(), DType::Float64);
  EXPECT_EQ(add(i, from_vector<std::int64_t>({1, 1}, {2})).dtype(), DType::Int64);
  EXPECT_EQ(add(i, scalar_tensor(1, DType::Int64)).dtype(), DType::Int32);
  const Tensor h = make({1.0, 2049.0}, DType::Float16, {2});  // 2049 is not a half: stored 2048
  const Tensor hs = add(h, scalar_tensor(1.0, DType::Float32));
  EXPECT_EQ(hs.dtype(), DType::Float16);
  EXPECT_EQ(hs.to_vector<float>(), (std::vector<float>{2.0f, 2048.0f}));  // 2049 ties to 2048
  const Tensor hb = add(h, make({0.5, 0.5}, DType::BFloat16, {2}));
  EXPECT_EQ(hb.dtype(), DType::Float32);
  EXPECT_EQ(hb.to_vector<float>(), (std::vector<float>{1.5f, 2048.5f}));
  EXPECT_EQ(add(from_vector<std::uint8_t>({200}, {1}), scalar_tensor(100, DType::Int64))
                .item<std::uint8_t>(),
            44);
}

TEST(BroadcastTest, EmptyTensors) {
  const Tensor e = add(zeros({0, 3}), from_vector<float>({1, 2, 3}, {3}));
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(mul(zeros({0}), scalar_tensor(2, DType::Float32)).shape(), (Shape{0}));
  EXPECT_EQ(div(zeros({2, 0}, DType::Int32), zeros({2, 1}, DType::Int32), "floor").shape(),
            (Shape{2, 0}));
  EXPECT_EQ(where(zeros({0}, DType::Bool), 1.0, 2.0).shape(), (Shape{0}));
  EXPECT_EQ(clamp(zeros({0, 2}), std::optional<Scalar>(0)).shape(), (Shape{0, 2}));
  EXPECT_EQ(eq(zeros({3, 0}), zeros({0})).shape(), (Shape{3, 0}));
}

// ---- SIMD targets and threads ----

// Raw output bytes of a set of ops over dense and broadcast-scalar operands of many lengths.
std::vector<std::uint8_t> op_battery_bytes() {
  std::vector<std::uint8_t> all;
  Rng rng;
  for (DType d : {DType::Float32, DType::Float64}) {
    for (std::int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 83, 1000}) {
      std::vector<double> a = float_values(d, n, rng), b = float_values(d, n, rng);
      const Tensor ta = make(a, d, {n}), tb = make(b, d, {n});
      const Tensor s = make({-0.0}, d, {});
      for (const Tensor& r :
           {add(ta, tb), sub(ta, tb), mul(ta, tb), div(ta, tb), maximum(ta, tb), minimum(ta, tb),
            add(ta, s), maximum(s, tb), minimum(ta, s), div(s, tb)}) {
        const Tensor c = r.contiguous();
        const auto* p = static_cast<const std::uint8_t*>(n ? c.data_ptr() : nullptr);
        all.insert(all.end(), p, p + c.nbytes());
      }
      // Each target also matches the oracle (checked on add).
      const std::vector<double> got = add(ta, tb).to_vector<double>();
      for (std::int64_t i = 0; i < n; ++i)
        EXPECT_TRUE(same(got[i], round_to(d, a[i] + b[i]))) << "target add " << i;
    }
  }
  return all;
}

TEST(SimdTargetTest, EveryTargetBitIdentical) {
  const std::vector<std::string> targets = test::all_targets();
  ASSERT_FALSE(targets.empty());
  std::string names;
  for (const std::string& t : targets) names += t + " ";
  RecordProperty("simd_targets", names);
  std::vector<std::uint8_t> reference;
  for (const std::string& t : targets) {
    simd::restrict_targets(t);
    EXPECT_EQ(simd::current_target(), t);
    const std::vector<std::uint8_t> bytes = op_battery_bytes();
    simd::reset_targets();
    if (reference.empty()) {
      reference = bytes;
    } else {
      EXPECT_TRUE(bytes == reference) << "target " << t << " differs from " << targets.front();
    }
  }
  EXPECT_THROW(simd::restrict_targets("bogus"), InvalidArgument);
  EXPECT_EQ(simd::current_target(), targets.front());
}

// Rows that start off a vector boundary and end in a partial vector, broadcast against a
// column, on every target: the row tail must stay inside the row (Highway 1.0.3's SSE4
// MaskedLoad is a full aligned load, which faulted here).
class BroadcastOnTarget : public test::OnEveryTarget {};

TEST_P(BroadcastOnTarget, RowTailsStayInTheRow) {
  const Tensor a = arange(0, 5 * 7 * 11, 1, DType::Float32).reshape({5, 7, 11});
  const Tensor b = arange(0, 7, 1, DType::Float32).reshape({7, 1});
  for (const Tensor& r : {add(a, b), sub(a, b), mul(a, b), div(a, b), maximum(b, a)}) {
    ASSERT_EQ(r.sizes(), Shape({5, 7, 11}));
  }
  const std::vector<float> got = add(a, b).to_vector<float>();
  for (int i = 0; i < 5 * 7 * 11; ++i) {
    EXPECT_EQ(got[i], static_cast<float>(i + (i / 11) % 7)) << i;
  }
}

MPSIM_ON_EVERY_TARGET(BroadcastOnTarget);

std::vector<std::uint8_t> bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const std::uint8_t*>(c.data_ptr());
  return std::vector<std::uint8_t>(p, p + c.nbytes());
}

TEST(DeterminismTest, BitIdenticalFor1_2_8Threads) {
  constexpr std::int64_t kRows = 513, kCols = 517;  // 265221 > 2^18 elements: many fixed blocks
  Rng rng;
  const std::vector<double> av = float_values(DType::Float32, kRows * kCols, rng);
  const std::vector<double> bv = float_values(DType::Float32, kCols, rng);
  const Tensor a = make(av, DType::Float32, {kRows, kCols});
  const Tensor b = make(bv, DType::Float32, {kCols});  // broadcast over rows
  const Tensor col = make(bv, DType::Float32, {kCols}).slice(0, 0, kRows).unsqueeze(1);  // [513, 1]
  const Tensor h = a.to(DType::Float16);
  auto run = [&] {
    std::vector<std::vector<std::uint8_t>> r;
    for (const Tensor& t : {add(a, b),
                            add(a, b, 2.5),
                            sub(a, col, 3),
                            mul(a.t(), col.t()),
                            div(a, b),
                            div(a, b, "trunc"),
                            div(a, b, "floor"),
                            maximum(a, col),
                            minimum(a, col),
                            pow(a, 2),
                            pow(a, b),
                            clamp(a, std::optional<Scalar>(-0.5), std::optional<Scalar>(0.5)),
                            where(gt(a, b), a, col),
                            eq(a, col),
                            ne(a, col),
                            lt(a, col),
                            le(a, col),
                            gt(a, col),
                            ge(a, col),
                            a.to(DType::BFloat16),
                            add(h, h),
                            div(a.to(DType::Int32), 3, "floor"),
                            full({kRows, kCols}, 0.1),
                            arange(0.0, 3e5, 0.7)}) {
      r.push_back(bytes_of(t));
    }
    return r;
  };
  std::vector<std::vector<std::uint8_t>> ref;
  for (int threads : {1, 2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const auto r = run();
    if (ref.empty()) {
      ref = r;
      continue;
    }
    for (std::size_t k = 0; k < r.size(); ++k)
      EXPECT_TRUE(r[k] == ref[k]) << "op #" << k << " with " << threads << " threads";
  }
  // And against the oracle once: the broadcast add.
  const std::vector<float> sum = add(a, b).to_vector<float>();
  for (std::int64_t i = 0; i < kRows * kCols; i += 97) {
    ASSERT_TRUE(same(sum[i], round_to(DType::Float32, av[i] + bv[i % kCols]))) << i;
  }
}

// ---- result layouts (Note [elementwise output layout] in core/tensor.cc) ----

Tensor channels_last(const Tensor& x) {
  return x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
}

// Each result's strides are torch 1.13's for the same operands (torch.relu(xc).stride(),
// (xc + x).stride(), ...), and its values f of the operands' values element by element.
TEST(ResultLayout, FollowsTheOperandsAsPyTorch) {
  Rng rng(11);
  const Tensor x = from_vector(rand_floats(120, rng), {2, 3, 4, 5});
  const Tensor xc = channels_last(x);
  ASSERT_EQ(xc.strides(), Strides({60, 1, 15, 3}));
  const Tensor b = from_vector(rand_floats(3, rng), {1, 3, 1, 1});
  const Tensor t = from_vector(rand_floats(24, rng), {4, 6}).t();
  const Tensor s = from_vector(rand_floats(32, rng), {4, 8}).slice(1, 0, 8, 2);
  const Tensor p = from_vector(rand_floats(24, rng), {2, 3, 4}).permute({2, 0, 1});
  const Tensor e = from_vector(rand_floats(15, rng), {3, 1, 5}).expand({3, 4, 5});
  const Tensor xs = xc.slice(2, 0, 4, 2);  // channels-last, rows skipped: not dense
  const auto relu_of = [](float v, float) { return v > 0 ? v : 0.0f; };
  const auto plus = [](float u, float v) { return u + v; };
  struct Case {
    const char* name;
    Tensor got, a, b;  // b undefined: a unary op (f's second argument unused)
    std::function<float(float, float)> f;
    Strides want;
  };
  const std::vector<Case> cases = {
      {"relu(xc)", relu(xc), xc, {}, relu_of, {60, 1, 15, 3}},
      {"xc + x", add(xc, x), xc, x, plus, {60, 1, 15, 3}},
      {"x + xc", add(x, xc), x, xc, plus, {60, 20, 5, 1}},
      {"xc + b", add(xc, b), xc, b, plus, {60, 1, 15, 3}},
      {"b + xc", add(b, xc), b, xc, plus, {60, 1, 15, 3}},
      {"relu(t)", relu(t), t, {}, relu_of, {1, 6}},
      {"t + 1", add(t, 1.0), t, {}, [](float v, float) { return v + 1.0f; }, {1, 6}},
      {"relu(s)", relu(s), s, {}, relu_of, {4, 1}},
      {"relu(p)", relu(p), p, {}, relu_of, {1, 12, 4}},
      {"where(xc > 0, xc, 0)", where(gt(xc, 0.0), xc, 0.0), xc, {}, relu_of, {60, 1, 15, 3}},
      {"relu(xc[:, :, ::2])", relu(xs), xs, {}, relu_of, {30, 1, 15, 3}},
      {"relu(e)", relu(e), e, {}, relu_of, {20, 5, 1}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.got.strides(), c.want) << c.name;
    const Shape shape = c.got.sizes();
    const std::vector<float> av = c.a.expand(shape).to_vector<float>();
    const std::vector<float> bv =
        c.b.defined() ? c.b.expand(shape).to_vector<float>() : std::vector<float>(av.size());
    const std::vector<float> got = c.got.to_vector<float>();  // row-major, whatever the layout
    ASSERT_EQ(got.size(), av.size()) << c.name;
    for (std::size_t k = 0; k < got.size(); ++k) {
      ASSERT_TRUE(same(got[k], c.f(av[k], bv[k]))) << c.name << " element " << k;
    }
  }
}

// Note [copies keep the layout]: clone, to(dtype) and to(device) copy into the source's
// layout, with torch 1.13's strides for each (xc.clone().stride(), xc.half().stride(), ...),
// and its values; contiguous() is row-major.
TEST(ResultLayout, CopiesKeepTheSourcesLayoutAsPyTorch) {
  Rng rng(13);
  const Tensor x = from_vector(rand_floats(120, rng), {2, 3, 4, 5});
  const Tensor xc = channels_last(x);
  const Tensor p = from_vector(rand_floats(24, rng), {2, 3, 4}).permute({2, 0, 1});
  struct Case {
    const char* name;
    Tensor source;
    Strides want;
  };
  const std::vector<Case> cases = {
      {"channels-last", xc, {60, 1, 15, 3}},
      {"transposed", from_vector(rand_floats(24, rng), {4, 6}).t(), {1, 6}},
      {"channels-last sliced", xc.slice(2, 0, 4, 2), {30, 1, 15, 3}},
      {"row-major sliced", from_vector(rand_floats(32, rng), {4, 8}).slice(1, 0, 8, 2), {4, 1}},
      {"permuted", p, {1, 12, 4}},
      {"permuted sliced", p.slice(0, 0, 4, 2), {1, 6, 2}},
      {"expanded", from_vector(rand_floats(15, rng), {3, 1, 5}).expand({3, 4, 5}), {20, 5, 1}},
  };
  for (const Case& c : cases) {
    const std::vector<float> values = c.source.to_vector<float>();
    for (const Tensor& copy : {c.source.clone(), c.source.to(DType::Float64),
                               c.source.to(Device::mps()).to(Device::cpu())}) {
      EXPECT_EQ(copy.strides(), c.want) << c.name << " " << dtype_name(copy.dtype());
      EXPECT_EQ(copy.to_vector<float>(), values) << c.name;
    }
    EXPECT_TRUE(c.source.contiguous().is_contiguous()) << c.name;
    EXPECT_EQ(c.source.contiguous().to_vector<float>(), values) << c.name;
  }
}

TEST(ResultLayout, LayoutStridesRejectsOperandsOfAnotherShape) {
  const Tensor x = zeros({2, 3});
  EXPECT_EQ(layout_strides(Shape{2, 3}, {x.t().contiguous().t()}, true), Strides({1, 2}));
  try {
    layout_strides(Shape{3, 2}, {x}, true);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("expected operands of shape [3, 2], got [2, 3]"));
  }
  EXPECT_THROW(layout_strides(Shape{2}, {Tensor()}, true), InvalidArgument);
}

// The mps device gives the same layout and bits; 16-bit operands keep theirs too.
TEST(ResultLayout, SameOnMpsAndInEveryFloatDType) {
  Rng rng(12);
  const Tensor x = channels_last(from_vector(rand_floats(2 * 16 * 6 * 7, rng), {2, 16, 6, 7}));
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    const Tensor xd = x.to(dt).permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
    const Tensor cpu = add(silu(xd), xd);
    EXPECT_EQ(cpu.strides(), xd.strides()) << dtype_name(dt);
    const Tensor xm =
        x.to(dt).to(Device::mps()).permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
    const Tensor mps = add(silu(xm), xm);
    EXPECT_EQ(mps.strides(), xd.strides()) << dtype_name(dt);
    EXPECT_TRUE(bytes_of(mps.to(Device::cpu())) == bytes_of(cpu)) << dtype_name(dt);
  }
}


// Note [out destination]: the op of the destination's name writes into out when out qualifies,
// else allocates; either way the result has the out-of-place bits.
TEST(OutDestination, TheNamedElementwiseOpWritesIntoAQualifyingOut) {
  Rng rng(5);
  const Tensor x = from_vector(rand_floats(100, rng), {100});
  const std::vector<float> want = exp(x).to_vector<float>();
  const std::vector<float> xs = x.to_vector<float>();
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(want[i], std::exp(static_cast<double>(xs[i])), 1e-6 * want[i]);
  }
  const Tensor out = zeros({100});
  {
    OutDestination into(out, "exp");
    const Tensor r = exp(x);
    EXPECT_TRUE(into.used());
    EXPECT_EQ(r.data_ptr(), out.data_ptr());
  }
  EXPECT_EQ(out.to_vector<float>(), want);
  const Tensor untouched = zeros({100});
  {
    OutDestination into(untouched, "sigmoid");  // another op's name: exp allocates
    EXPECT_EQ(exp(x).to_vector<float>(), want);
    EXPECT_FALSE(into.used());
  }
  EXPECT_EQ(untouched.to_vector<float>(), std::vector<float>(100, 0.0f));
  // In place on the cpu; a shifted overlap, a strided out and another dtype allocate.
  const Tensor self = x.clone();
  {
    OutDestination into(self, "exp");
    EXPECT_EQ(exp(self).data_ptr(), self.data_ptr());
    EXPECT_TRUE(into.used());
  }
  EXPECT_EQ(self.to_vector<float>(), want);
  const Tensor base = x.clone();
  for (const Tensor& bad : {base.slice(0, 0, 99), zeros({200}).slice(0, 0, 200, 2),
                            zeros({100}, DType::Float64)}) {
    const Tensor in = bad.numel() == 99 ? base.slice(0, 1, 100) : x;
    OutDestination into(bad, "exp");
    const Tensor r = exp(in);
    EXPECT_FALSE(into.used());
    EXPECT_NE(r.data_ptr(), bad.data_ptr());
  }
  // Destinations nest: the inner one's op claims the inner out, the outer stays open.
  const Tensor outer = zeros({100}), inner = zeros({100});
  {
    OutDestination a(outer, "exp");
    {
      OutDestination b(inner, "exp");
      exp(x);
      EXPECT_TRUE(b.used());
    }
    exp(x);
    EXPECT_TRUE(a.used());
  }
  EXPECT_EQ(outer.to_vector<float>(), want);
  EXPECT_EQ(inner.to_vector<float>(), want);
}

}  // namespace
}  // namespace mpsim::testing
