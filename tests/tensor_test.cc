// Shape/broadcasting/Device value types, tensor factories, views, copies, read-back, printing,
// and bad input: every failing call throws the right Error subclass naming the op, and leaks
// no storage. Expected values are literals worked out by hand (PyTorch's results).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "core/mpsim.h"

namespace mpsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Expects `fn` to throw exactly an E (or subclass) whose message contains every one of `parts`,
// and that the number of live storages is the same before and after the failing call.
template <class E>
void expect_error(const std::function<void()>& fn, std::vector<std::string> parts,
                  const char* what) {
  const std::int64_t live = Storage::live_count();
  try {
    fn();
    ADD_FAILURE() << what << ": no exception";
  } catch (const E& e) {
    for (const std::string& p : parts) EXPECT_THAT(e.what(), HasSubstr(p)) << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": wrong exception type: " << e.what();
  }
  EXPECT_EQ(Storage::live_count(), live) << what << ": a failing call leaked a storage";
}

std::vector<float> iota_f(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

Tensor iota_tensor(const Shape& shape) {
  return from_vector(iota_f(static_cast<int>(shape.numel())), shape);
}

// ---- Shape, broadcasting, wrap_dim ----

TEST(ShapeTest, BasicsAndStrides) {
  const Shape s{2, 3, 4};
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.ndim(), 3);
  EXPECT_EQ(s.to_string(), "[2, 3, 4]");
  EXPECT_EQ(Shape{}.to_string(), "[]");
  EXPECT_EQ(Shape{}.numel(), 1);
  EXPECT_EQ(Shape({2, 0, 3}).numel(), 0);
  EXPECT_EQ(contiguous_strides(s), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides(Shape{2, 0, 3}), (Strides{3, 3, 1}));  // torch.empty(2,0,3).stride()
  EXPECT_EQ(channels_last_strides(Shape{2, 3, 4, 5}), (Strides{60, 1, 15, 3}));
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "[2, 3, 4]");
  EXPECT_EQ(std::hash<Shape>()(Shape{2, 3}), std::hash<Shape>()(Shape{2, 3}));
}

TEST(ShapeTest, Broadcast) {
  EXPECT_EQ(broadcast_shapes("add", {2, 3, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes("add", {4}, {2, 3, 4}), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes("add", {}, {5}), (Shape{5}));
  EXPECT_EQ(broadcast_shapes("add", {}, {}), (Shape{}));
  EXPECT_EQ(broadcast_shapes("add", {0, 3}, {3}), (Shape{0, 3}));
  EXPECT_EQ(broadcast_shapes("add", {1, 0}, {5, 1}), (Shape{5, 0}));
  EXPECT_EQ(broadcast_shapes("add", {2, 320, 8, 8}, {320, 1, 1}), (Shape{2, 320, 8, 8}));
  expect_error<ShapeError>(
      [] {
        broadcast_shapes("add", {2, 3}, {4});
      },
      {"[add]", "[2, 3]", "[4]", "cannot be broadcast"}, "broadcast [2,3] [4]");
  expect_error<ShapeError>([] { broadcast_shapes("mul", {0}, {2}); },
                           {"[mul]", "[0]", "[2]", "cannot be broadcast"}, "broadcast [0] [2]");
}

TEST(ShapeTest, WrapDim) {
  EXPECT_EQ(wrap_dim("sum", -1, 3), 2);
  EXPECT_EQ(wrap_dim("sum", -3, 3), 0);
  EXPECT_EQ(wrap_dim("sum", 0, 0), 0);  // a 0-dim tensor accepts 0 and -1
  EXPECT_EQ(wrap_dim("sum", -1, 0), 0);
  expect_error<ShapeError>([] { wrap_dim("sum", 2, 2); },
                           {"[sum]", "dim 2", "out of range", "2-d", "-2..1"}, "wrap_dim 2");
  expect_error<ShapeError>([] { wrap_dim("softmax", -4, 3); }, {"[softmax]", "-4"}, "wrap_dim -4");
  expect_error<ShapeError>([] { wrap_dim("sum", 1, 0); }, {"[sum]"}, "wrap_dim 0-d");
}

// ---- DimVector (Note [dim vectors]): std::vector<int64_t> is the oracle ----

void expect_same(const DimVector& v, const std::vector<std::int64_t>& want, const char* what) {
  ASSERT_EQ(v.size(), want.size()) << what;
  EXPECT_TRUE(std::equal(v.begin(), v.end(), want.begin())) << what;
  EXPECT_TRUE(v == want) << what;
  EXPECT_EQ(static_cast<std::vector<std::int64_t>>(v), want) << what;
  EXPECT_GE(v.capacity(), v.size()) << what;
}

TEST(DimVectorTest, RandomEditsMatchStdVectorAcrossTheInlineLimit) {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next = [&](std::uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  DimVector v;
  std::vector<std::int64_t> want;
  for (int step = 0; step < 20000; ++step) {
    const auto value = static_cast<std::int64_t>(next(1000)) - 500;
    switch (next(9)) {
      case 0:
      case 1:
        if (want.size() < 20) {
          v.push_back(value);
          want.push_back(value);
        }
        break;
      case 2:
        if (!want.empty()) {
          v.pop_back();
          want.pop_back();
        }
        break;
      case 3: {
        const std::size_t at = next(want.size() + 1);
        v.insert(v.begin() + at, value);
        want.insert(want.begin() + at, value);
        break;
      }
      case 4:
        if (!want.empty()) {
          const std::size_t at = next(want.size());
          const std::size_t n = next(want.size() - at + 1);
          v.erase(v.begin() + at, v.begin() + at + n);
          want.erase(want.begin() + at, want.begin() + at + n);
        }
        break;
      case 5: {
        const std::size_t n = next(14);
        v.resize(n, value);
        want.resize(n, value);
        break;
      }
      case 6: {  // insert a run of its own values (aliasing source)
        if (want.size() > 12) break;
        const std::size_t at = next(want.size() + 1);
        const std::vector<std::int64_t> copy = want;
        v.insert(v.begin() + at, v.begin(), v.end());
        want.insert(want.begin() + at, copy.begin(), copy.end());
        break;
      }
      case 7: {  // copies and moves, both ways across the inline limit
        DimVector copy(v);
        expect_same(copy, want, "copy");
        DimVector moved(std::move(copy));
        EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
        DimVector assigned{1, 2, 3, 4, 5, 6, 7, 8};
        assigned = moved;
        expect_same(assigned, want, "copy assignment");
        DimVector target{9};
        target = std::move(assigned);
        v = std::move(target);
        break;
      }
      default:
        if (!want.empty()) {
          const std::size_t at = next(want.size());
          v[at] = value;
          want[at] = value;
        }
    }
    expect_same(v, want, "after an edit");
    if (HasFailure()) return;
  }
}

TEST(DimVectorTest, ReadsLikeAVector) {
  DimVector v{3, 1, 4, 1, 5, 9, 2, 6};  // beyond the inline limit
  EXPECT_EQ(v.size(), 8u);
  EXPECT_EQ(v.front(), 3);
  EXPECT_EQ(v.back(), 6);
  EXPECT_EQ(std::vector<std::int64_t>(v.rbegin(), v.rend()),
            (std::vector<std::int64_t>{6, 2, 9, 5, 1, 4, 1, 3}));
  const std::span<const std::int64_t> s = v;  // contiguous: std::span takes it
  EXPECT_EQ(s.data(), v.data());
  EXPECT_EQ(s.size(), 8u);
  v.insert(v.begin() + 1, {7, 7});
  EXPECT_TRUE(v == (std::vector<std::int64_t>{3, 7, 7, 1, 4, 1, 5, 9, 2, 6}));
  EXPECT_EQ(DimVector(3, 2), (DimVector{2, 2, 2}));
  EXPECT_NE(DimVector({1, 2}), (DimVector{1, 2, 3}));
  const std::vector<std::int64_t> from{5, 4};
  EXPECT_EQ(DimVector(from), (DimVector{5, 4}));
  v.clear();
  EXPECT_TRUE(v.empty());
}

// Tensors beyond DimVector's inline limit keep their sizes and strides on the heap; views,
// broadcasting, copies and reductions give the same values.
TEST(DimVectorTest, TensorsOfManyDims) {
  const Shape shape{2, 1, 2, 1, 2, 1, 2, 3};  // 8 dims
  const Tensor x = iota_tensor(shape);
  const Tensor y = from_vector<float>({10, 20, 30}, {3});
  const Tensor z = x + y;
  ASSERT_EQ(z.sizes(), shape);
  const std::vector<float> zv = z.to_vector<float>();
  for (std::size_t i = 0; i < zv.size(); ++i) {
    EXPECT_EQ(zv[i], static_cast<float>(i) + 10.0f * static_cast<float>(i % 3 + 1)) << i;
  }
  const Tensor p = x.permute({7, 6, 5, 4, 3, 2, 1, 0}).contiguous();
  EXPECT_EQ(p.sizes(), (Shape{3, 2, 1, 2, 1, 2, 1, 2}));
  const std::vector<float> pv = p.to_vector<float>();
  for (std::int64_t i = 0; i < 48; ++i) {
    // p[c, b3, 0, b2, 0, b1, 0, b0] = x[b0, 0, b1, 0, b2, 0, b3, c] = 24 b0 + 12 b1 + 6 b2 + 3 b3 +
    // c
    const std::int64_t c = i / 16, b3 = i / 8 % 2, b2 = i / 4 % 2, b1 = i / 2 % 2, b0 = i % 2;
    EXPECT_EQ(pv[i], static_cast<float>(24 * b0 + 12 * b1 + 6 * b2 + 3 * b3 + c)) << i;
  }
  // sum over every b of 24 b0 + 12 b1 + 6 b2 + 3 b3 + c: 8 (24 + 12 + 6 + 3) + 16 c
  EXPECT_EQ(sum(x, {0, 2, 4, 6}).to_vector<float>(), (std::vector<float>{360, 376, 392}));
  // 10 dims: the dense-layout test over more dims than it holds in place
  const std::vector<std::int64_t> sizes{2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  std::vector<std::int64_t> strides(10);
  for (int d = 0; d < 10; ++d) strides[d] = std::int64_t{1} << d;  // reversed: dense
  EXPECT_TRUE(non_overlapping_and_dense(sizes, strides));
  strides[3] = 1024;
  EXPECT_FALSE(non_overlapping_and_dense(sizes, strides));
}

// ---- Device ----

TEST(DeviceTest, ParseAndPrint) {
  EXPECT_EQ(Device("cpu"), Device::cpu());
  EXPECT_EQ(Device("cpu").to_string(), "cpu");
  EXPECT_EQ(Device("mps"), Device::mps());
  EXPECT_EQ(Device("mps").index(), 0);
  EXPECT_EQ(Device("mps").to_string(), "mps:0");
  EXPECT_EQ(Device("mps:0"), Device::mps(0));
  EXPECT_EQ(Device("mps:3").index(), 3);
  EXPECT_TRUE(Device("mps:3").is_mps());
  EXPECT_EQ(Device("mps:3").to_string(), "mps:3");
  EXPECT_NE(Device::mps(1), Device::mps(0));
  EXPECT_NE(Device::cpu(), Device::mps());
  std::ostringstream os;
  os << Device::mps(2) << " " << Device::cpu();
  EXPECT_EQ(os.str(), "mps:2 cpu");
  for (const char* bad :
       {"cuda", "", "mps:", "mps:-1", "mps:x", "mps:1x", "MPS", "cpu ", ":0", "gpu:0"}) {
    expect_error<DeviceError>([bad] { Device d(bad); }, {"[device]"}, bad);
  }
}

TEST(DeviceTest, MpsTensorsRoundTripAndBadIndicesFail) {
  const Tensor x = from_vector<float>({1.5f, -2, 3}, {3});
  const Tensor m = x.to(Device::mps());
  EXPECT_EQ(m.device(), Device::mps());
  EXPECT_EQ(m.to(Device::cpu()).to_vector<float>(), (std::vector<float>{1.5f, -2, 3}));
  EXPECT_EQ(zeros({2}, DType::Float16, Device("mps:0")).to_vector<float>(),
            (std::vector<float>{0, 0}));
  expect_error<DeviceError>([] { zeros({2}, DType::Float32, Device::mps(3)); }, {"mps"},
                            "zeros on mps:3");
  EXPECT_EQ(x.device(), Device::cpu());
}

// ---- Factories ----

TEST(FactoryTest, FillsAndDTypes) {
  const Tensor e = empty({2, 3});
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_EQ(e.dtype(), DType::Float32);
  EXPECT_EQ(e.strides(), (Strides{3, 1}));
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_EQ(e.device(), Device::cpu());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(e.data_ptr()) % 64,
            0u);  // 64-byte aligned host memory
  EXPECT_EQ(zeros({2, 2}).to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(ones({3}, DType::Int32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{1, 1, 1}));
  EXPECT_EQ(full({2}, 2.5, DType::Float16).to_vector<float>(), (std::vector<float>{2.5f, 2.5f}));
  EXPECT_EQ(full({2}, 2.7, DType::Int32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{2, 2}));
  EXPECT_EQ(full({2}, -2.7, DType::Int64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-2, -2}));
  EXPECT_EQ(full({1}, -1, DType::UInt8).item<std::uint8_t>(), 255);
  EXPECT_EQ(full({1}, 0.1, DType::BFloat16).to_vector<BFloat16>()[0].bits, 0x3DCD);  // 0.1 in bf16
  EXPECT_EQ(full({1}, 0.1, DType::Float16).to_vector<Half>()[0].bits, 0x2E66);       // 0.1 in f16
  EXPECT_EQ(full({2}, true, DType::Bool).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(full({1}, (std::int64_t{1} << 40) + 3, DType::Int64).item<std::int64_t>(),
            (std::int64_t{1} << 40) + 3);
  const Tensor s = scalar_tensor(3.5, DType::Float64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<double>(), 3.5);
  const Tensor z = zeros({0, 3});
  EXPECT_EQ(z.numel(), 0);
  EXPECT_TRUE(z.to_vector<float>().empty());
  const Tensor like = empty_like(ones({4, 1}, DType::Int64));
  EXPECT_EQ(like.shape(), (Shape{4, 1}));
  EXPECT_EQ(like.dtype(), DType::Int64);
}

// Note [dense fills]: dense rows of one value are written as runs (memset where the value's
// bytes are all alike, else a vectorized fill), and a copy from a broadcast input (expand(...)
// .contiguous()) fills each row. Every element must hold the value's bits: checked element by
// element over sizes that leave partial vectors, on values whose bytes are all alike (zero,
// int32 0x01010101, uint8 7) and not (-0.0, 1.5, -1), against values written by this test.
TEST(FactoryTest, DenseFillsWriteEveryElement) {
  for (const std::int64_t n : {1, 3, 17, 1000, 4099, 70001}) {
    const auto f32 = full({n}, -0.0).to_vector<float>();
    ASSERT_TRUE(
        std::all_of(f32.begin(), f32.end(), [](float v) { return std::signbit(v) && v == 0; }));
    const auto h = full({n}, 1.5, DType::Float16).to_vector<Half>();
    ASSERT_TRUE(std::all_of(h.begin(), h.end(), [](Half v) { return v.bits == 0x3E00; }));
    const auto b = full({n}, -1, DType::BFloat16).to_vector<BFloat16>();
    ASSERT_TRUE(std::all_of(b.begin(), b.end(), [](BFloat16 v) { return v.bits == 0xBF80; }));
    const auto i32 = full({n}, 0x01010101, DType::Int32).to_vector<std::int32_t>();
    ASSERT_TRUE(
        std::all_of(i32.begin(), i32.end(), [](std::int32_t v) { return v == 0x01010101; }));
    const auto u8 = full({n}, 7, DType::UInt8).to_vector<std::uint8_t>();
    ASSERT_TRUE(std::all_of(u8.begin(), u8.end(), [](std::uint8_t v) { return v == 7; }));
    const auto d = zeros({n}, DType::Float64).to_vector<double>();
    ASSERT_TRUE(
        std::all_of(d.begin(), d.end(), [](double v) { return v == 0 && !std::signbit(v); }));
  }
  // A time embedding [2, 5, 1, 1] broadcast over [2, 5, 7, 9], then a broadcast row of a
  // transposed source, and a 0-d value, in float32 and int64.
  std::vector<float> temb(10);
  for (int i = 0; i < 10; ++i) temb[i] = 0.25f * static_cast<float>(i) - 1.0f;
  const std::vector<float> e =
      from_vector(temb, {2, 5, 1, 1}).expand({2, 5, 7, 9}).contiguous().to_vector<float>();
  for (std::size_t i = 0; i < e.size(); ++i) ASSERT_EQ(e[i], temb[i / 63]) << i;
  const Tensor t = from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}).t();  // [3, 2]
  const auto rows = t.unsqueeze(2).expand({3, 2, 33}).contiguous().to_vector<std::int64_t>();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t r = i / 66, c = (i / 33) % 2;
    ASSERT_EQ(rows[i], static_cast<std::int64_t>(c * 3 + r + 1)) << i;
  }
  const auto z =
      scalar_tensor(2.5, DType::Float32).expand({4, 1000}).contiguous().to_vector<float>();
  ASSERT_TRUE(std::all_of(z.begin(), z.end(), [](float v) { return v == 2.5f; }));
}

TEST(FactoryTest, FromVector) {
  const Tensor t = from_vector<std::int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.dtype(), DType::Int32);
  EXPECT_EQ(t.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(from_vector(std::vector<double>{1.5, 2.5}).shape(), (Shape{2}));
  const Tensor b = from_vector<bool>({true, false, true}, {3});
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(b.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 0, 1}));
  expect_error<ShapeError>(
      [] {
        from_vector<float>({1, 2, 3}, {2, 2});
      },
      {"[from_vector]", "3", "[2, 2]"}, "from_vector mismatch");
}

TEST(FactoryTest, Arange) {
  const Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), DType::Int64);
  EXPECT_EQ(a.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(0, -3, -1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, -1, -2}));
  EXPECT_EQ(arange(10, 0, -3).to_vector<std::int64_t>(), (std::vector<std::int64_t>{10, 7, 4, 1}));
  EXPECT_EQ(arange(1, 2.5, 0.5).to_vector<float>(), (std::vector<float>{1.0f, 1.5f, 2.0f}));
  EXPECT_EQ(arange(1, 2.5, 0.5).dtype(), DType::Float32);
  // count = ceil((end - start) / step): ceil(1 / 0.3) = 4, ceil(1 / 0.1) = 10 (computed in double).
  EXPECT_EQ(arange(0.0, 1.0, 0.3).numel(), 4);
  const Tensor t = arange(0.0, 1.0, 0.1);
  ASSERT_EQ(t.numel(), 10);
  const std::vector<float> v = t.to_vector<float>();
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(v[i], static_cast<float>(i * 0.1)) << i;  // start + i*step in double
  EXPECT_EQ(arange(0, 5, 2, DType::Float16).to_vector<float>(), (std::vector<float>{0, 2, 4}));
  EXPECT_EQ(arange(0, 5, 2, DType::Float16).dtype(), DType::Float16);
  EXPECT_EQ(arange(5, 5).numel(), 0);
  expect_error<InvalidArgument>([] { arange(0, 5, 0); }, {"[arange]", "step"}, "arange step 0");
  expect_error<InvalidArgument>([] { arange(0, 5, -1); }, {"[arange]"}, "arange wrong sign");
  expect_error<InvalidArgument>([] { arange(5, 0); }, {"[arange]"}, "arange end < start");
  expect_error<InvalidArgument>([] { arange(0.0, std::numeric_limits<double>::infinity()); },
                                {"[arange]"}, "arange inf");
  expect_error<InvalidArgument>([] { arange(0.0, std::numeric_limits<double>::quiet_NaN()); },
                                {"[arange]"}, "arange nan");
}

// ---- Views ----

TEST(ViewTest, ReshapeViewOrCopy) {
  const Tensor x = iota_tensor({2, 3, 4});
  const Tensor r = x.reshape({6, 4});
  EXPECT_EQ(r.storage(), x.storage());  // a view
  EXPECT_EQ(r.strides(), (Strides{4, 1}));
  const Tensor v = x.view({4, -1});
  EXPECT_EQ(v.shape(), (Shape{4, 6}));
  EXPECT_EQ(v.storage(), x.storage());
  const Tensor xt = x.transpose(1, 2);  // [2, 4, 3], strides [12, 1, 4]
  const Tensor rc = xt.reshape({2, 12});
  EXPECT_NE(rc.storage(), x.storage());  // not viewable: copied
  const std::vector<float> got = rc.to_vector<float>();
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 3; ++i) EXPECT_EQ(got[b * 12 + j * 3 + i], b * 12 + i * 4 + j);
  // Splitting and merging within a contiguous chunk stays a view even on a transposed tensor.
  const Tensor split = xt.view({2, 2, 2, 3});
  EXPECT_EQ(split.storage(), x.storage());
  EXPECT_EQ(split.strides(), (Strides{12, 2, 1, 4}));
  // Size-1 dims with odd strides do not block a view.
  const Tensor odd = iota_tensor({4, 1, 3}).transpose(0, 2);  // [3, 1, 4], strides [1, 3, 3]
  const Tensor ov = odd.view({3, 4});
  EXPECT_EQ(ov.strides(), (Strides{1, 3}));
  expect_error<ShapeError>([&] { xt.view({24}); }, {"[view]", "[2, 4, 3]", "reshape"},
                           "view transposed");
  expect_error<ShapeError>([&] { x.view({5, -1}); }, {"[view]", "24"}, "view size");
  expect_error<ShapeError>([&] { x.reshape({-1, -1}); }, {"[reshape]", "one dimension"}, "two -1");
  expect_error<ShapeError>([&] { x.reshape({7}); }, {"[reshape]", "[7]", "24"}, "reshape numel");
  EXPECT_EQ(scalar_tensor(2, DType::Float32).reshape({1, 1}).shape(), (Shape{1, 1}));
  EXPECT_EQ(zeros({0, 3}).reshape({3, 0}).shape(), (Shape{3, 0}));
  // -1 next to a 0 could be anything: torch refuses it too.
  expect_error<ShapeError>([] { zeros({0, 3}).reshape({3, 0, -1}); }, {"[reshape]"}, "0 and -1");
}

TEST(ViewTest, PermuteTransposeT) {
  const Tensor x = iota_tensor({2, 3, 4});
  const Tensor p = x.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Strides{1, 12, 4}));
  EXPECT_FALSE(p.is_contiguous());
  const std::vector<float> got = p.contiguous().to_vector<float>();
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(got[k * 6 + i * 3 + j], i * 12 + j * 4 + k);
  EXPECT_EQ(x.permute({-1, 0, 1}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(x.transpose(0, -1).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(x.transpose(0, -1).strides(), (Strides{1, 4, 12}));
  const Tensor m = iota_tensor({2, 3});
  EXPECT_EQ(m.t().contiguous().to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(iota_tensor({3}).t().shape(), (Shape{3}));
  expect_error<ShapeError>([&] { x.permute({0, 1}); }, {"[permute]"}, "permute count");
  expect_error<ShapeError>(
      [&] {
        x.permute({0, 1, 1});
      },
      {"[permute]", "repeated"}, "permute repeat");
  expect_error<ShapeError>([&] { x.permute({0, 1, 3}); }, {"[permute]"}, "permute range");
  expect_error<ShapeError>([&] { x.transpose(0, 3); }, {"[transpose]"}, "transpose range");
  expect_error<ShapeError>([&] { x.t(); }, {"[t]"}, "t of 3-d");
}

TEST(ViewTest, SliceSelectNarrow) {
  const Tensor x = iota_tensor({10});
  EXPECT_EQ(x.slice(0, 1, 8, 3).to_vector<float>(), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(x.slice(0, 1, 8, 3).strides(), (Strides{3}));
  EXPECT_EQ(x.slice(0, 1, 8, 3).storage_offset(), 1);
  EXPECT_EQ(x.slice(0, -3, -1).to_vector<float>(), (std::vector<float>{7, 8}));
  EXPECT_EQ(x.slice(0, -100, 100).numel(), 10);
  EXPECT_EQ(x.slice(0, 8, 3).numel(), 0);
  EXPECT_EQ(x.slice(0, 0, 10, 4).to_vector<float>(), (std::vector<float>{0, 4, 8}));
  EXPECT_EQ(x.slice(0, 9, 10, 100).to_vector<float>(), (std::vector<float>{9}));
  const Tensor m = iota_tensor({3, 4});
  const Tensor col = m.slice(1, 1, 4, 2);  // columns 1 and 3
  EXPECT_EQ(col.shape(), (Shape{3, 2}));
  EXPECT_EQ(col.contiguous().to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(m.select(1, -1).to_vector<float>(), (std::vector<float>{3, 7, 11}));
  EXPECT_EQ(m.select(0, 1).to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(m.select(0, 2).select(0, 3).item<float>(), 11);
  EXPECT_EQ(m.narrow(0, 1, 2).to_vector<float>(), (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(m.narrow(1, -2, 2).contiguous().to_vector<float>(),
            (std::vector<float>{2, 3, 6, 7, 10, 11}));
  expect_error<InvalidArgument>([&] { x.slice(0, 0, 5, 0); }, {"[slice]", "step"}, "slice step 0");
  expect_error<InvalidArgument>([&] { x.slice(0, 0, 5, -1); }, {"[slice]", "step"},
                                "slice step -1");
  expect_error<ShapeError>([&] { x.slice(1, 0, 5); }, {"[slice]"}, "slice dim");
  expect_error<ShapeError>([&] { m.select(1, 4); }, {"[select]", "4"}, "select range");
  expect_error<ShapeError>([&] { m.select(0, -4); }, {"[select]", "-4"}, "select -range");
  expect_error<ShapeError>([&] { m.narrow(0, 2, 2); }, {"[narrow]"}, "narrow past end");
  expect_error<ShapeError>([&] { scalar_tensor(1, DType::Float32).select(0, 0); }, {"[select]"},
                           "select 0-d");
}

TEST(ViewTest, ExpandSqueezeUnsqueezeFlatten) {
  const Tensor c = from_vector<float>({1, 2, 3}, {3, 1});
  const Tensor e = c.expand({2, 3, 4});
  EXPECT_EQ(e.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(e.strides(), (Strides{0, 1, 0}));
  EXPECT_EQ(e.storage(), c.storage());
  const std::vector<float> ev = e.to_vector<float>();
  for (int i = 0; i < 24; ++i) EXPECT_EQ(ev[i], 1 + (i / 4) % 3);
  EXPECT_EQ(c.expand({-1, 2}).shape(), (Shape{3, 2}));
  EXPECT_EQ(scalar_tensor(7, DType::Int32).expand({2, 2}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{7, 7, 7, 7}));
  expect_error<ShapeError>([&] { c.expand({3}); }, {"[expand]"}, "expand fewer dims");
  expect_error<ShapeError>(
      [&] {
        c.expand({4, 2});
      },
      {"[expand]", "4", "3"}, "expand non-singleton");
  expect_error<ShapeError>([&] { c.expand({-1, 3, 1}); }, {"[expand]", "-1"}, "expand leading -1");

  const Tensor s = zeros({1, 3, 1, 2});
  EXPECT_EQ(s.squeeze().shape(), (Shape{3, 2}));
  EXPECT_EQ(s.squeeze(2).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(s.squeeze(1).shape(), (Shape{1, 3, 1, 2}));  // not size 1: unchanged
  EXPECT_EQ(s.squeeze(-4).shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(s.unsqueeze(-1).shape(), (Shape{1, 3, 1, 2, 1}));
  EXPECT_EQ(s.unsqueeze(4).shape(), (Shape{1, 3, 1, 2, 1}));
  const Tensor m = iota_tensor({2, 3});
  const Tensor u = m.unsqueeze(1);
  EXPECT_EQ(u.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(u.strides(),
            (Strides{3, 3, 1}));  // torch: stride of a new dim = size*stride of the next
  EXPECT_EQ(scalar_tensor(1, DType::Float32).unsqueeze(0).shape(), (Shape{1}));
  expect_error<ShapeError>([&] { s.squeeze(4); }, {"[squeeze]"}, "squeeze range");
  expect_error<ShapeError>([&] { m.unsqueeze(3); }, {"[unsqueeze]"}, "unsqueeze range");

  const Tensor f = iota_tensor({2, 3, 4});
  EXPECT_EQ(f.flatten().shape(), (Shape{24}));
  EXPECT_EQ(f.flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(f.flatten(0, 1).shape(), (Shape{6, 4}));
  EXPECT_EQ(f.flatten(0, 1).storage(), f.storage());
  EXPECT_EQ(scalar_tensor(1, DType::Float32).flatten().shape(), (Shape{1}));
  const Tensor ft = f.transpose(0, 2).flatten();  // copies; element order of the transposed view
  EXPECT_EQ(ft.to_vector<float>()[1], 12);
  expect_error<ShapeError>([&] { f.flatten(2, 1); }, {"[flatten]"}, "flatten order");
}

TEST(ViewTest, AsStrided) {
  const Tensor x = iota_tensor({6});
  const Tensor w = x.as_strided({3, 2}, {1, 1}, 1);  // sliding windows [1,2],[2,3],[3,4]
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 2, 3, 3, 4}));
  EXPECT_EQ(x.as_strided({2, 3}, {1, 2}, 0).to_vector<float>(),
            (std::vector<float>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(x.as_strided({0, 100}, {1, 1}, 6).numel(), 0);
  expect_error<ShapeError>(
      [&] {
        x.as_strided({3, 2}, {2, 1}, 1);
      },
      {"[as_strided]", "out of bounds"}, "as_strided oob");
  expect_error<ShapeError>([&] { x.as_strided({7}, {1}, 0); }, {"[as_strided]"},
                           "as_strided too long");
  expect_error<ShapeError>([&] { x.as_strided({2}, {1}, -1); }, {"[as_strided]"},
                           "as_strided neg offset");
  expect_error<ShapeError>(
      [&] {
        x.as_strided({2, 2}, {1}, 0);
      },
      {"[as_strided]"}, "as_strided lengths");
  expect_error<ShapeError>([&] { x.as_strided({2}, {-1}, 3); }, {"[as_strided]"},
                           "as_strided neg stride");
}

// ---- Copies ----

TEST(CopyTest, ContiguousCloneTo) {
  const Tensor x = iota_tensor({2, 3});
  EXPECT_EQ(x.contiguous().storage(), x.storage());
  const Tensor c = x.clone();
  EXPECT_NE(c.storage(), x.storage());
  EXPECT_EQ(c.to_vector<float>(), x.to_vector<float>());
  const Tensor tc = x.t().contiguous();
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_EQ(tc.strides(), (Strides{2, 1}));
  EXPECT_EQ(x.to(DType::Float32).storage(), x.storage());

  // Float -> int truncates toward zero; NaN and out-of-range give INT_MIN (x86), as torch.
  const Tensor f = from_vector<float>({-1.7f, 2.9f, -0.5f, 1e10f, NAN, -3e9f}, {6});
  EXPECT_EQ(f.to(DType::Int32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-1, 2, 0, INT32_MIN, INT32_MIN, INT32_MIN}));
  EXPECT_EQ(f.to(DType::Int64).to_vector<std::int64_t>()[3], 10000000000LL);
  EXPECT_EQ(
      from_vector<float>({-1.0f, 300.0f, 255.9f}, {3}).to(DType::UInt8).to_vector<std::uint8_t>(),
      (std::vector<std::uint8_t>{255, 44, 255}));
  EXPECT_EQ(from_vector<float>({0.0f, -0.0f, 0.5f, NAN}, {4}).to(DType::Bool).to_vector<bool>(),
            (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(from_vector<bool>({true, false}, {2}).to(DType::Float16).to_vector<float>(),
            (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(from_vector<std::int64_t>({(1LL << 32) + 5, -1}, {2})
                .to(DType::Int32)
                .to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{5, -1}));
  EXPECT_EQ(
      from_vector<std::int32_t>({-1, 256, 513}, {3}).to(DType::UInt8).to_vector<std::uint8_t>(),
      (std::vector<std::uint8_t>{255, 0, 1}));
  // int64 -> float16 rounds once: 2049 ties to 2048, 2051 to 2052; 65520 overflows to inf.
  const std::vector<float> h = from_vector<std::int64_t>({2049, 2051, 65519, 65520}, {4})
                                   .to(DType::Float16)
                                   .to_vector<float>();
  EXPECT_EQ(h, (std::vector<float>{2048, 2052, 65504, INFINITY}));
  // 2^24 + 1 is not a float: int32 -> float32 rounds to even.
  EXPECT_EQ(
      from_vector<std::int32_t>({16777217, 16777219}, {2}).to(DType::Float32).to_vector<float>(),
      (std::vector<float>{16777216.0f, 16777220.0f}));
  // float32 -> bfloat16 -> float32 on a strided source keeps the element order.
  const Tensor bf =
      from_vector<float>({1.0f, 3.14159f, -2.0f, 1e-40f}, {2, 2}).t().to(DType::BFloat16);
  EXPECT_EQ(bf.to_vector<BFloat16>()[0].bits, 0x3F80);
  EXPECT_EQ(bf.to_vector<BFloat16>()[1].bits, 0xC000);
  EXPECT_EQ(bf.to_vector<BFloat16>()[2].bits, 0x4049);  // 3.14159 -> 3.140625
  EXPECT_EQ(bf.to_vector<BFloat16>()[3].bits, 0x0001);  // 1e-40 -> subnormal 2^-133 * 1 (rounded)
  EXPECT_EQ(from_vector<double>({1.0 + 0x1p-11 + 0x1p-40}, {1})
                .to(DType::Float16)
                .to_vector<Half>()[0]
                .bits,
            0x3C01);  // double -> half rounds once
}

TEST(CopyTest, CopyInPlace) {
  Tensor dst = zeros({2, 3});
  dst.copy_(from_vector<float>({1, 2, 3}, {3}));  // broadcast source
  EXPECT_EQ(dst.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  dst.copy_(from_vector<std::int32_t>({7}, {1}));  // broadcast + dtype conversion
  EXPECT_EQ(dst.to_vector<float>(), std::vector<float>(6, 7.0f));
  // A transposed (non-contiguous) destination.
  Tensor base = zeros({3, 2});
  Tensor view = base.t();  // [2, 3], strides [1, 2]
  view.copy_(iota_tensor({2, 3}));
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // A strided destination only touches its elements.
  Tensor row = iota_tensor({8});
  row.slice(0, 0, 8, 2).copy_(full({4}, -1.0));
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{-1, 1, -1, 3, -1, 5, -1, 7}));
  // Overlapping self-copies read the source as it was before the copy.
  Tensor x = iota_tensor({6});
  x.slice(0, 1, 6).copy_(x.slice(0, 0, 5));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 0, 1, 2, 3, 4}));
  Tensor y = iota_tensor({6});
  y.slice(0, 0, 5).copy_(y.slice(0, 1, 6));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 5}));
  Tensor sq = iota_tensor({3, 3});
  sq.copy_(sq.t());  // in-place transpose
  EXPECT_EQ(sq.to_vector<float>(), (std::vector<float>{0, 3, 6, 1, 4, 7, 2, 5, 8}));
  Tensor w = iota_tensor({2, 4});
  w.slice(1, 0, 2).copy_(w.slice(1, 2, 4));  // disjoint slices of one storage
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{2, 3, 2, 3, 6, 7, 6, 7}));
  // The error names the op called, not the expand inside it.
  expect_error<ShapeError>([&] { dst.copy_(zeros({4})); }, {"copy_"}, "copy_ unbroadcastable");
  expect_error<InvalidArgument>([&] { dst.copy_(Tensor()); }, {"[copy_]"}, "copy_ undefined");
}

TEST(ReadBackTest, ToVectorAndItem) {
  EXPECT_EQ(from_vector<std::int32_t>({-3}, {1, 1}).item<std::int32_t>(), -3);
  EXPECT_EQ(from_vector<std::int32_t>({-3}, {1, 1}).item<float>(), -3.0f);
  EXPECT_EQ(scalar_tensor(true, DType::Bool).item<bool>(), true);
  EXPECT_EQ(from_vector<float>({1.5f, 2.5f}, {2}).to_vector<Half>()[1].bits, 0x4100);
  const Tensor x = iota_tensor({2, 3});
  EXPECT_EQ(x.size(-1), 3);
  EXPECT_EQ(x.stride(0), 3);
  EXPECT_EQ(x.nbytes(), 24u);
  EXPECT_EQ(x.element_size(), 4u);
  EXPECT_EQ(*x.data_ptr<float>(), 0.0f);
  expect_error<InvalidArgument>([&] { x.item<float>(); }, {"[item]", "6"}, "item on 6 elements");
  expect_error<InvalidArgument>([] { zeros({0}).item<float>(); }, {"[item]"}, "item on empty");
  expect_error<DTypeError>([&] { x.data_ptr<std::int32_t>(); }, {"[data_ptr]", "int32", "float32"},
                           "data_ptr dtype");
  expect_error<ShapeError>([&] { x.size(2); }, {"[size]"}, "size range");
  expect_error<InvalidArgument>([] { Tensor().to_vector<float>(); }, {"[to_vector]"}, "undefined");
}

// ---- Printing ----

TEST(PrintTest, ToString) {
  EXPECT_EQ(from_vector<float>({1, 2, 3, 4}, {2, 2}).to_string(),
            "tensor([[1., 2.],\n        [3., 4.]])");
  EXPECT_EQ(from_vector<float>({1.5f, 2.25f}, {2}).to_string(), "tensor([1.5000, 2.2500])");
  EXPECT_EQ(scalar_tensor(2.5, DType::Float32).to_string(), "tensor(2.5000)");
  EXPECT_EQ(from_vector<float>({1, 2}, {1, 2}).to(DType::Float16).to_string(),
            "tensor([[1., 2.]], dtype=float16)");
  EXPECT_EQ(from_vector<std::int32_t>({1, 2, 3}, {3}).to_string(),
            "tensor([1, 2, 3], dtype=int32)");
  EXPECT_EQ(arange(3).to_string(), "tensor([0, 1, 2])");
  EXPECT_EQ(from_vector<bool>({true, true}, {2}).to_string(), "tensor([True, True])");
  EXPECT_EQ(from_vector<float>({NAN, INFINITY}, {2}).to_string(), "tensor([nan, inf])");
  EXPECT_EQ(zeros({0}).to_string(), "tensor([])");
  const std::string e2 = zeros({0, 3}).to_string();
  EXPECT_THAT(e2, HasSubstr("tensor([]"));
  EXPECT_THAT(e2, HasSubstr("size="));
  EXPECT_THAT(e2, HasSubstr("0, 3"));
  EXPECT_EQ(zeros({0}, DType::Float16).to_string(), "tensor([], dtype=float16)");
  std::ostringstream os;
  os << ones({1}, DType::BFloat16);
  EXPECT_EQ(os.str(), "tensor([1.], dtype=bfloat16)");
}

// torch formats all elements of a tensor alike: one precision for every float (any non-integer
// value makes all print with 4 decimals) and one width (shorter items are left-padded).
// One format and width for all elements, as torch's formatter.
TEST(PrintTest, CommonFormatAcrossElementsAsTorch) {
  EXPECT_EQ(from_vector<float>({1.0f, 2.5f}, {2}).to_string(), "tensor([1.0000, 2.5000])");
  EXPECT_EQ(from_vector<float>({1.5f, -2.25f}, {2}).to_string(), "tensor([ 1.5000, -2.2500])");
  EXPECT_EQ(from_vector<bool>({true, false}, {2}).to_string(), "tensor([ True, False])");
  EXPECT_EQ(from_vector<std::int32_t>({1, 10}, {2}).to_string(), "tensor([ 1, 10], dtype=int32)");
}

// ---- Bad input: right error class, op named, no leak ----

TEST(BadInputTest, EveryFailureIsTypedNamedAndLeakFree) {
  const std::int64_t live_before = Storage::live_count();
  {
    const Tensor a = zeros({2, 3});
    const Tensor i = ones({3}, DType::Int32);
    const Tensor b = ones({3}, DType::Bool);
    expect_error<ShapeError>([&] { add(a, zeros({4})); },
                             {"[add]", "[2, 3]", "[4]", "cannot be broadcast"}, "add");
    expect_error<ShapeError>([&] { mul(a, zeros({2})); }, {"[mul]", "cannot be broadcast"}, "mul");
    expect_error<ShapeError>([&] { where(b, a, zeros({2, 1, 2})); }, {"[where]"}, "where shapes");
    expect_error<ShapeError>([&] { empty({2, -1}); }, {"[empty]", "-1"}, "empty negative");
    expect_error<ShapeError>([&] { zeros({-3}); }, {"-3"}, "zeros negative");
    expect_error<DTypeError>([&] { sub(b, b); }, {"[sub]", "bool"}, "sub bool");
    expect_error<DTypeError>([&] { add(i, i, 1.5); }, {"[add]", "alpha"}, "int alpha float");
    expect_error<DTypeError>([&] { add(a, a, true); }, {"[add]", "alpha"}, "bool alpha");
    expect_error<DTypeError>([&] { where(i, a, a); }, {"[where]", "bool"}, "where int cond");
    expect_error<DTypeError>([&] { clamp(b, std::optional<Scalar>(true)); }, {"[clamp]"},
                             "clamp bool");
    expect_error<DTypeError>([&] { pow(b, b); }, {"[pow]"}, "pow bool");
    expect_error<DTypeError>([&] { div(b, b, "floor"); }, {"[div]"}, "div floor bool");
    expect_error<InvalidArgument>([&] { div(i, zeros({3}, DType::Int32), "trunc"); },
                                  {"[div]", "ZeroDivisionError"}, "int div by zero");
    expect_error<InvalidArgument>([&] { div(a, a, "round"); }, {"[div]", "round"}, "div mode");
    expect_error<InvalidArgument>([&] { pow(i, -2); }, {"[pow]", "negative"}, "pow int negative");
    expect_error<InvalidArgument>(
        [&] { clamp(a, std::optional<Scalar>(), std::optional<Scalar>()); }, {"[clamp]"},
        "clamp no bounds");
    expect_error<InvalidArgument>([&] { add(Tensor(), a); }, {"[add]", "undefined"},
                                  "undefined input");
    expect_error<InvalidArgument>([&] { set_num_threads(0); }, {"[set_num_threads]"}, "threads 0");
    expect_error<DeviceError>([&] { ones({2}, DType::Float32, Device::mps(1)); }, {"mps"}, "mps:1");
    expect_error<DTypeError>([&] { parse_dtype("float8"); }, {"[dtype]"}, "parse_dtype");
    expect_error<ShapeError>([&] { a.view({4}); }, {"[view]"}, "view");
    expect_error<ShapeError>([&] { a.expand({3, 3}); }, {"[expand]"}, "expand");
    expect_error<InvalidArgument>([&] { a.item<float>(); }, {"[item]"}, "item");
    expect_error<ShapeError>(
        [&] {
          from_vector<float>({1, 2}, {3});
        },
        {"[from_vector]"}, "from_vector");
    expect_error<InvalidArgument>([&] { arange(0, 1, 0); }, {"[arange]"}, "arange");
  }
  EXPECT_EQ(Storage::live_count(), live_before);
}

// Note [checked sizes]: an element count, extent or byte count beyond int64 is a ShapeError
// naming the op, never a wrapped count (PyTorch: "Storage size calculation overflowed").
TEST(Tensor, SizeArithmeticOverflowIsAShapeError) {
  constexpr std::int64_t kBig = std::int64_t{1} << 40;
  const char* kOverflow = "storage size calculation overflowed";
  expect_error<ShapeError>(
      [&] {
        empty({kBig, kBig});
      },
      {"[empty]", "[1099511627776, ", kOverflow}, "empty 2^80 elements");
  expect_error<ShapeError>([&] { Shape({kBig, kBig}).numel(); }, {"[numel]"}, "numel");
  expect_error<ShapeError>([&] { zeros({kBig, kBig}, DType::Float64); }, {kOverflow}, "zeros");
  // The count fits, the bytes do not: 2^62 doubles.
  expect_error<ShapeError>([&] { empty({std::int64_t{1} << 62}, DType::Float64); },
                           {"[empty_strided]", "byte count", kOverflow}, "bytes");
  expect_error<ShapeError>(
      [&] {
        empty_strided({2, 2}, {std::numeric_limits<std::int64_t>::max(), 1});
      },
      {"[empty_strided]", "extent", kOverflow}, "extent");
  const Tensor one = ones({1});
  expect_error<ShapeError>([&] { one.expand({kBig, kBig}); }, {"[expand]", kOverflow}, "expand");
  expect_error<ShapeError>(
      [&] {
        one.view({1}).as_strided({kBig, kBig}, {0, 0}, 0);
      },
      {kOverflow}, "as_strided count");
  expect_error<ShapeError>(
      [&] { one.as_strided({3}, {std::numeric_limits<std::int64_t>::max() / 2 + 1}, 0); },
      {"[as_strided]", kOverflow}, "as_strided extent");
  const Tensor row = one.expand({kBig});  // a valid view of 2^40 elements, stride 0
  EXPECT_EQ(row.numel(), kBig);
  expect_error<ShapeError>([&] { repeat(one, {kBig, kBig}); }, {kOverflow}, "repeat");
  expect_error<ShapeError>([&] { repeat(row, {kBig * 16}); }, {"[repeat]", kOverflow},
                           "repeat product");
  expect_error<ShapeError>(
      [&] {
        pad(one, {std::numeric_limits<std::int64_t>::max(), 1});
      },
      {"[pad]", kOverflow}, "pad");
  const Tensor huge = one.expand({std::numeric_limits<std::int64_t>::max()});
  expect_error<ShapeError>([&] { cat({huge, huge}); }, {"[cat]", kOverflow}, "cat");
  expect_error<ShapeError>([&] { huge.reshape({-1, 2}); }, {"[reshape]"}, "reshape");
  // A count beyond int64 (found by tests/fuzz/op_fuzz: the double -> int64 cast was undefined).
  expect_error<ShapeError>([&] { arange(std::numeric_limits<std::int64_t>::max(), 1, -1.0); },
                           {"[arange]", kOverflow}, "arange count");
  expect_error<InvalidArgument>([&] { arange(0, 10, std::nan("")); }, {"[arange]"}, "arange nan");
  // Views with int64-sized arguments (found by tests/fuzz/op_fuzz): narrow's start + length and
  // slice's step overflowed.
  const Tensor five = arange(5).to(DType::Float32);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  expect_error<ShapeError>([&] { five.narrow(0, 2, kMax); }, {"[narrow]"}, "narrow length");
  expect_error<ShapeError>([&] { five.narrow(0, kMax, kMax); }, {"[narrow]"}, "narrow start");
  EXPECT_EQ(five.slice(0, 0, 5, kMax).to_vector<float>(), (std::vector<float>{0}));
  EXPECT_EQ(five.slice(0, 1, kMax, kMax - 1).to_vector<float>(), (std::vector<float>{1}));
  EXPECT_EQ(five.slice(0, 1, 5, 3).to_vector<float>(), (std::vector<float>{1, 4}));
  // view/reshape sizes whose product wraps (found by tests/fuzz/op_fuzz): invalid for the input.
  expect_error<ShapeError>(
      [&] {
        zeros({12}).view({12, kMax, -1});
      },
      {"[view]", "is invalid for input of size 12"}, "view wraps");
  expect_error<ShapeError>([&] { zeros({12}).reshape({kMax, 2}); }, {"[reshape]"}, "reshape");
  EXPECT_EQ(zeros({0}).view({0, kMax}).sizes(), Shape({0, kMax}));  // 0 elements: fits
}

}  // namespace
}  // namespace mpsim
