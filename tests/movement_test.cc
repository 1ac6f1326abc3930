// Data movement ops against index arithmetic written here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <numeric>

#include "core/mpsim.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;

Tensor iota(const Shape& shape, DType dtype = DType::Float32) {
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  std::iota(v.begin(), v.end(), 0.0f);
  return from_vector(v, shape).to(dtype);
}

template <class Fn>
void expect_error_with(Fn&& fn, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing " << text;
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(text));
  }
}

TEST(Cat, ConcatenatesPromotesAndChecks) {
  const Tensor a = iota({2, 3}), b = iota({2, 2}).to(DType::Int32);
  const Tensor c = cat({a, b}, 1);
  EXPECT_EQ(c.sizes(), Shape({2, 5}));
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0, 1, 2, 0, 1, 3, 4, 5, 2, 3}));
  EXPECT_EQ(cat({a, a.t().t()}, 0).sizes(), Shape({4, 3}));
  EXPECT_EQ(cat({a, empty({0})}, -1).sizes(), Shape({2, 3}));  // legacy empty 1-d skipped
  EXPECT_EQ(cat({a.t(), iota({3, 1})}, 1).to_vector<float>(),
            (std::vector<float>{0, 3, 0, 1, 4, 1, 2, 5, 2}));  // a strided input
  expect_error_with(
      [&] {
        cat({a, b}, 0);
      },
      "[cat] sizes of tensors must match except in dimension 0");
  expect_error_with([&] { cat({}, 0); }, "[cat] expected a non-empty list");
  expect_error_with([&] { cat({a, iota({6})}, 0); }, "same number of dimensions");
}

TEST(Stack, SplitAndChunk) {
  const Tensor a = iota({2, 3}), b = iota({2, 3}) + 10;
  const Tensor s = stack({a, b}, 1);
  EXPECT_EQ(s.sizes(), Shape({2, 2, 3}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15}));
  expect_error_with(
      [&] {
        stack({a, iota({3, 2})});
      },
      "[stack] expects each tensor to be equal size");
  const Tensor base = iota({7, 2});
  const std::vector<Tensor> parts = split(base, 3, 0);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].sizes(), Shape({1, 2}));
  EXPECT_EQ(parts[1].to_vector<float>(), (std::vector<float>{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(parts[1].storage(), base.storage());  // splits are views
  const std::vector<Tensor> sized = split(iota({5}), IntList{2, 0, 3});
  EXPECT_EQ(sized[2].to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(sized[1].numel(), 0);
  expect_error_with([&] { split(iota({5}), IntList{2, 2}); }, "split_sizes must sum exactly to 5");
  EXPECT_EQ(chunk(iota({5}), 3).size(), 3u);  // sizes 2, 2, 1
  EXPECT_EQ(chunk(iota({6}), 4).size(), 3u);  // sizes 2, 2, 2, as torch.chunk
  expect_error_with([&] { chunk(iota({5}), 0); }, "[chunk] chunks must be greater than 0");
}

TEST(IndexSelect, SelectsRowsColumnsAndChecksIndices) {
  const Tensor x = iota({3, 4});
  const Tensor idx = from_vector<std::int64_t>({2, 0, 2}, {3});
  EXPECT_EQ(index_select(x, 0, idx).to_vector<float>(),
            (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(index_select(x, 1, from_vector<std::int32_t>({3, 1}, {2})).to_vector<float>(),
            (std::vector<float>{3, 1, 7, 5, 11, 9}));
  EXPECT_EQ(index_select(x.t(), 0, idx).to_vector<float>(),  // strided source
            (std::vector<float>{2, 6, 10, 0, 4, 8, 2, 6, 10}));
  EXPECT_EQ(index_select(x.to(DType::Float16), 1, idx).dtype(), DType::Float16);
  EXPECT_EQ(index_select(x, 0, from_vector<std::int64_t>({}, {0})).sizes(), Shape({0, 4}));
  expect_error_with([&] { index_select(x, 0, from_vector<std::int64_t>({3}, {1})); },
                    "[index_select] index 3 is out of range for dimension 0 with size 3");
  expect_error_with([&] { index_select(x, 0, from_vector<float>({1}, {1})); },
                    "dtype int64 or int32");
}

TEST(Gather, FollowsTorchSemantics) {
  const Tensor x = iota({3, 4});
  const Tensor idx = from_vector<std::int64_t>({0, 2, 1, 0, 3, 3}, {2, 3});
  // dim 1: out[i][j] = x[i][idx[i][j]]
  EXPECT_EQ(gather(x, 1, idx).to_vector<float>(), (std::vector<float>{0, 2, 1, 4, 7, 7}));
  // dim 0: out[i][j] = x[idx[i][j]][j] (indices < 3)
  const Tensor idx0 = from_vector<std::int64_t>({2, 1, 0, 0, 0, 2}, {2, 3});
  EXPECT_EQ(gather(x, 0, idx0).to_vector<float>(), (std::vector<float>{8, 5, 2, 0, 1, 10}));
  expect_error_with([&] { gather(x, 0, idx); }, "[gather] index 3 is out of range for dimension 0");
  expect_error_with([&] { gather(x, 1, idx.to(DType::Int32)); },
                    "[gather] expected an index of dtype int64");
  expect_error_with([&] { gather(x, 1, from_vector<std::int64_t>({0}, {1})); },
                    "same number of dimensions");
}

TEST(FlipRepeatPad, ValuesAgainstIndexArithmetic) {
  const Tensor x = iota({2, 3});
  EXPECT_EQ(flip(x, {0}).to_vector<float>(), (std::vector<float>{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(flip(x, {0, 1}).to_vector<float>(), (std::vector<float>{5, 4, 3, 2, 1, 0}));
  expect_error_with([&] { flip(x, {1, -1}); }, "[flip] dim 1 appears multiple times");
  const Tensor r = repeat(x, {2, 1, 2});
  EXPECT_EQ(r.sizes(), Shape({2, 2, 6}));
  // r[a][b][c] = x[b % 2][c % 3]
  const std::vector<float> rv = r.to_vector<float>(), xv = x.to_vector<float>();
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 6; ++c) EXPECT_EQ(rv[(a * 2 + b) * 6 + c], xv[(b % 2) * 3 + c % 3]);
  expect_error_with([&] { repeat(x, {2}); }, "[repeat] the number of repeat dims");
  // constant, with a crop on the left of the last dim
  const Tensor p = pad(x, {-1, 2, 1, 0}, "constant", 9);
  EXPECT_EQ(p.sizes(), Shape({3, 4}));
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{9, 9, 9, 9, 1, 2, 9, 9, 4, 5, 9, 9}));
  EXPECT_EQ(pad(iota({4}), {2, 1}, "reflect").to_vector<float>(),
            (std::vector<float>{2, 1, 0, 1, 2, 3, 2}));
  EXPECT_EQ(pad(iota({3}), {2, 2}, "replicate").to_vector<float>(),
            (std::vector<float>{0, 0, 0, 1, 2, 2, 2}));
  expect_error_with([&] { pad(iota({3}), {3, 0}, "reflect"); }, "must be smaller than the size 3");
  expect_error_with([&] { pad(x, {1}); }, "[pad] padding length must be even");
  expect_error_with([&] { pad(x, {1, 1}, "circular"); }, "mode must be");
}

TEST(Triangles, TrilTriuWithDiagonalsAndBatches) {
  const Tensor x = iota({2, 3, 3}) + 1;
  const std::vector<float> l = tril(x).to_vector<float>(), u = triu(x, 1).to_vector<float>();
  const std::vector<float> xv = x.to_vector<float>();
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const int k = (b * 3 + i) * 3 + j;
        EXPECT_EQ(l[k], j <= i ? xv[k] : 0.0f);
        EXPECT_EQ(u[k], j >= i + 1 ? xv[k] : 0.0f);
      }
  EXPECT_EQ(tril(iota({2, 3}, DType::Int32), -1).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{0, 0, 0, 3, 0, 0}));
  expect_error_with([&] { tril(iota({3})); },
                    "[tril] input tensor must have at least 2 dimensions");
  // Diagonals at the ends of int64 (tril(x, INT64_MAX) overflowed, found by tests/fuzz/op_fuzz):
  // everything on one side, as PyTorch.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(tril(x, kMax).to_vector<float>(), xv);
  EXPECT_EQ(triu(x, kMin).to_vector<float>(), xv);
  EXPECT_EQ(tril(x, kMin).to_vector<float>(), std::vector<float>(18, 0.0f));
  EXPECT_EQ(triu(x, kMax).to_vector<float>(), std::vector<float>(18, 0.0f));
  EXPECT_EQ(tril(x, 3).to_vector<float>(), xv);
  EXPECT_EQ(triu(x, -3).to_vector<float>(), xv);
}

// Counts at the ends of int64 (chunk(x, INT64_MAX) overflowed, found by tests/fuzz/op_fuzz).
TEST(SplitChunk, HugeCountsAndSizes) {
  const Tensor x = iota({5});
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::vector<Tensor> c = chunk(x, kMax);
  ASSERT_EQ(c.size(), 5u);  // one element each, as torch.chunk
  EXPECT_EQ(c[4].to_vector<float>(), (std::vector<float>{4}));
  EXPECT_EQ(chunk(x, 2).size(), 2u);  // 3 + 2, as torch.chunk
  EXPECT_EQ(split(x, kMax).size(), 1u);
  expect_error_with([&] { split(x, IntList{kMax, 2, 4}); }, "[split] the sum of split_sizes");
}

}  // namespace
}  // namespace mpsim

namespace mpsim {
namespace {

class MovementOnTarget : public test::OnEveryTarget {};

// Copies across the input's contiguous dim take the tiled transpose (Note [tiled transpose],
// transpose.cc): sizes that are not multiples of the strips or the register squares, elements
// of 1, 2, 4 and 8 bytes, outer dims on both sides, on every SIMD target.
TEST_P(MovementOnTarget, PermutedCopiesMatchIndexArithmetic) {
  const std::int64_t n = 2, c = 37, h = 33, w = 70;
  std::vector<float> v(static_cast<std::size_t>(n * c * h * w));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const Tensor x = from_vector(v, {n, c, h, w});
  for (DType dt : {DType::Float32, DType::Float16, DType::Int64, DType::UInt8}) {
    const Tensor xd = x.to(dt);
    const std::vector<double> got = xd.permute({0, 2, 3, 1}).contiguous().to_vector<double>();
    const std::vector<double> src = xd.to_vector<double>();
    for (std::int64_t a = 0; a < n; ++a)
      for (std::int64_t b = 0; b < h; ++b)
        for (std::int64_t d = 0; d < w; ++d)
          for (std::int64_t e = 0; e < c; ++e) {
            const std::int64_t at = ((a * h + b) * w + d) * c + e;
            ASSERT_EQ(got[at], src[((a * c + e) * h + b) * w + d])
                << target() << " " << dtype_name(dt) << " " << at;
          }
  }
  const Tensor m = from_vector(std::vector<float>(v.begin(), v.begin() + 1210 * 141), {1210, 141})
                       .slice(0, 0, 1207, 1);
  const std::vector<float> t = m.t().contiguous().to_vector<float>();
  for (std::int64_t i = 0; i < 141; ++i)
    for (std::int64_t j = 0; j < 1207; ++j) ASSERT_EQ(t[i * 1207 + j], v[j * 141 + i]) << target();
}

// Outputs of 1 MiB and more with rows on cache lines take the streamed transpose (Note
// [streamed transpose], copy.cc): bands of 32 input rows, register tiles, streaming stores.
// Channel counts that leave a partial band and rows past the last whole line (a narrowed
// output), positions that leave a partial tile and a partial block, every element size, on
// every SIMD target, against index arithmetic.
TEST_P(MovementOnTarget, StreamedCopiesMatchIndexArithmetic) {
  const std::int64_t n = 2, h = 99, w = 77;
  struct Case {
    DType dtype;
    std::int64_t c, c_pad;  // c_pad * element size: a multiple of 64 bytes
  };
  for (const Case& cs :
       {Case{DType::Float32, 53, 64}, Case{DType::Float32, 64, 64}, Case{DType::Float16, 53, 64},
        Case{DType::Int64, 53, 56}, Case{DType::UInt8, 70, 128}}) {
    const std::int64_t c = cs.c;
    std::vector<float> v(static_cast<std::size_t>(n * c * h * w));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i * 7919 % 251);
    const Tensor x = from_vector(v, {n, c, h, w}).to(cs.dtype);
    Tensor dst = zeros({n, h, w, cs.c_pad}, cs.dtype);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(dst.data_ptr()) % 64, 0u);
    dst.narrow(3, 0, c).copy_(x.permute({0, 2, 3, 1}));
    const std::vector<double> got = dst.to_vector<double>();
    for (std::int64_t a = 0; a < n; ++a)
      for (std::int64_t b = 0; b < h; ++b)
        for (std::int64_t d = 0; d < w; ++d)
          for (std::int64_t e = 0; e < cs.c_pad; ++e) {
            const std::int64_t at = ((a * h + b) * w + d) * cs.c_pad + e;
            const double want =
                e < c ? v[static_cast<std::size_t>(((a * c + e) * h + b) * w + d)] : 0.0;
            ASSERT_EQ(got[static_cast<std::size_t>(at)], want)
                << target() << " " << dtype_name(cs.dtype) << " c=" << c << " at " << at;
          }
  }
  // A matrix transpose: 272 rows of k (8 bands and a half), 4100 positions j (4 blocks of
  // 1024 and 4 more, the last tile partial).
  std::vector<float> m(272 * 4100);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i);
  const std::vector<float> t = from_vector(m, {272, 4100}).t().contiguous().to_vector<float>();
  for (std::int64_t i = 0; i < 4100; ++i)
    for (std::int64_t j = 0; j < 272; ++j)
      ASSERT_EQ(t[static_cast<std::size_t>(i * 272 + j)],
                m[static_cast<std::size_t>(j * 4100 + i)])
          << target();
}

// Dense copies of 16 MiB and more are written with streaming stores (Note [streaming stores],
// copy.cc): exact bytes whatever the output's alignment (a narrowed output 1, 3 and 64 bytes
// past a line), as a clone and into a view, on every SIMD target.
TEST_P(MovementOnTarget, LargeCopiesAreExactAtAnyAlignment) {
  const std::int64_t n = (std::int64_t{16} << 20) + 77;  // past the threshold as bytes
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 251);
  const Tensor bytes = from_vector(v, {static_cast<std::int64_t>(v.size())}).to(DType::UInt8);
  for (std::int64_t offset : {1, 3, 64}) {
    Tensor dst = zeros({static_cast<std::int64_t>(v.size()) + 64}, DType::UInt8);
    dst.narrow(0, offset, static_cast<std::int64_t>(v.size())).copy_(bytes);
    const std::vector<std::uint8_t> got = dst.to_vector<std::uint8_t>();
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::int64_t k = static_cast<std::int64_t>(i) - offset;
      const std::uint8_t want =
          k >= 0 && k < static_cast<std::int64_t>(v.size()) ? static_cast<std::uint8_t>(v[k]) : 0;
      ASSERT_EQ(got[i], want) << target() << " offset " << offset << " at " << i;
    }
  }
  const Tensor f = from_vector(v, {static_cast<std::int64_t>(v.size())});
  ASSERT_EQ(f.clone().to_vector<float>(), v) << target();
}

// cat's parts are copies into one output, and the whole output's size decides whether they
// stream: two parts below the threshold that fill an output above it (one promoted from
// int32), and parts whose rows land 4 bytes past a line along the last dim.
TEST(StreamedCopy, CatPartsOfALargeOutputAreExact) {
  const std::int64_t w = 262144;  // [2, 8, w] floats: 16 MiB
  std::vector<float> av(static_cast<std::size_t>(2 * 5 * w));
  std::vector<float> bv(static_cast<std::size_t>(2 * 3 * w));
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 1000003);
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = -static_cast<float>(i % 999983);
  const Tensor a = from_vector(av, {2, 5, w}), b = from_vector(bv, {2, 3, w}).to(DType::Int32);
  const std::vector<float> c = cat({a, b}, 1).to_vector<float>();
  ASSERT_EQ(c.size(), static_cast<std::size_t>(2 * 8 * w));
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t k = 0; k < 8; ++k)
      for (std::int64_t i = 0; i < w; ++i) {
        const float want = k < 5 ? av[static_cast<std::size_t>((n * 5 + k) * w + i)]
                                 : bv[static_cast<std::size_t>((n * 3 + k - 5) * w + i)];
        ASSERT_EQ(c[static_cast<std::size_t>((n * 8 + k) * w + i)], want)
            << n << " " << k << " " << i;
      }
  const std::int64_t wa = 1000003, wb = 999999;  // [3, wa + wb] floats: 22.9 MiB
  std::vector<float> xv(static_cast<std::size_t>(3 * wa)), yv(static_cast<std::size_t>(3 * wb));
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
  for (std::size_t i = 0; i < yv.size(); ++i) yv[i] = -static_cast<float>(i);
  const std::vector<float> z =
      cat({from_vector(xv, {3, wa}), from_vector(yv, {3, wb})}, 1).to_vector<float>();
  for (std::int64_t r = 0; r < 3; ++r) {
    for (std::int64_t i = 0; i < wa; ++i) {
      ASSERT_EQ(z[static_cast<std::size_t>(r * (wa + wb) + i)],
                xv[static_cast<std::size_t>(r * wa + i)]);
    }
    for (std::int64_t i = 0; i < wb; ++i) {
      ASSERT_EQ(z[static_cast<std::size_t>(r * (wa + wb) + wa + i)],
                yv[static_cast<std::size_t>(r * wb + i)]);
    }
  }
}

// Note [streamed runs]: short dense runs of a large output stream too, with one fence per block
// of rows: a channels-last cat along the channels (runs of 320 and 321 floats per pixel, the
// second starting 4 bytes past a line) into an output of 21 MiB, every element checked, on
// every SIMD target.
TEST_P(MovementOnTarget, ShortRunsOfALargeChannelsLastCatAreExact) {
  const std::int64_t h = 64, w = 64;
  std::vector<float> av(static_cast<std::size_t>(2 * h * w * 320)),
      bv(static_cast<std::size_t>(2 * h * w * 321));
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 1000003);
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = -static_cast<float>(i % 999983);
  const Tensor a = from_vector(av, {2, h, w, 320}).permute({0, 3, 1, 2});
  const Tensor b = from_vector(bv, {2, h, w, 321}).permute({0, 3, 1, 2});
  const Tensor c = cat({a, b}, 1);  // channels-last [2, 641, 64, 64]
  ASSERT_EQ(c.stride(1), 1) << target();
  const std::vector<float> got = c.permute({0, 2, 3, 1}).contiguous().to_vector<float>();
  for (std::int64_t p = 0; p < 2 * h * w; ++p) {
    for (std::int64_t k = 0; k < 641; ++k) {
      const float want = k < 320 ? av[static_cast<std::size_t>(p * 320 + k)]
                                 : bv[static_cast<std::size_t>(p * 321 + k - 320)];
      ASSERT_EQ(got[static_cast<std::size_t>(p * 641 + k)], want)
          << target() << " " << p << " " << k;
    }
  }
}

MPSIM_ON_EVERY_TARGET(MovementOnTarget);

}  // namespace
}  // namespace mpsim
