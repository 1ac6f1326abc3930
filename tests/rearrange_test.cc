// flip, pad, tril/triu, gather/index_select and linspace/arange against index arithmetic
// written here: every element size, strided / permuted / expanded inputs, shapes that cross
// the kernels' blocks, bad indices on both devices, and 1 vs 2 vs 8 threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "core/mpsim.h"
#include "device_sim/mps.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using Index = std::vector<std::int64_t>;

constexpr DType kEveryDType[] = {DType::Bool,    DType::UInt8,    DType::Int32,   DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// Distinct values (as far as the dtype allows) so that a misplaced element shows.
Tensor distinct(const Shape& shape, DType dtype) {
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = dtype == DType::Bool ? static_cast<float>(i % 3 == 0) : static_cast<float>(i % 251 + 1);
  }
  return from_vector(v, shape).to(dtype);
}

// The logical elements of t, row-major, as raw bytes (the copy kernel has its own tests).
std::vector<std::uint8_t> raw(const Tensor& t) {
  const Tensor c = t.to(Device::cpu()).contiguous();
  std::vector<std::uint8_t> out(c.nbytes());
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size());
  return out;
}

Index unravel(std::int64_t i, const Shape& s) {
  Index idx(static_cast<std::size_t>(s.size()));
  for (std::int64_t d = s.size() - 1; d >= 0; --d) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

std::int64_t ravel(const Index& idx, const Shape& s) {
  std::int64_t i = 0;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(s.size()); ++d) i = i * s[d] + idx[d];
  return i;
}

// The expected bytes of an output of `out_shape` whose element at a multi-index is the input's
// element at source(index), or `fill` (one element's bytes) where source returns false.
std::vector<std::uint8_t> expected(const Tensor& in, const Shape& out_shape,
                                   const std::function<bool(Index&)>& source,
                                   const std::vector<std::uint8_t>& fill = {}) {
  const std::vector<std::uint8_t> x = raw(in);
  const std::size_t e = dtype_size(in.dtype());
  std::vector<std::uint8_t> out(static_cast<std::size_t>(out_shape.numel()) * e);
  for (std::int64_t i = 0; i < out_shape.numel(); ++i) {
    Index idx = unravel(i, out_shape);
    const std::uint8_t* from =
        source(idx) ? x.data() + ravel(idx, in.sizes()) * static_cast<std::int64_t>(e) : fill.data();
    std::memcpy(out.data() + i * static_cast<std::int64_t>(e), from, e);
  }
  return out;
}

// Views of a fresh tensor with the given logical shape: contiguous, permuted, stepped along
// the last dim, and with a broadcast (stride 0) first dim.
std::vector<Tensor> views_of(const Shape& shape, DType dtype) {
  std::vector<Tensor> views = {distinct(shape, dtype)};
  std::vector<std::int64_t> reversed(shape.dims().rbegin(), shape.dims().rend());
  Index back(static_cast<std::size_t>(shape.size()));
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    back[d] = static_cast<std::int64_t>(shape.size()) - 1 - d;
  }
  views.push_back(distinct(Shape(reversed), dtype).permute(back));
  std::vector<std::int64_t> wide = shape.dims();
  wide.back() = 2 * wide.back();
  views.push_back(distinct(Shape(wide), dtype).slice(shape.size() - 1, 0, wide.back(), 2));
  std::vector<std::int64_t> one = shape.dims();
  one[0] = 1;
  views.push_back(distinct(Shape(one), dtype).expand(shape));
  return views;
}

TEST(Flip, EverySubsetOfDimsOnEveryViewAndDType) {
  for (DType dtype : kEveryDType) {
    for (const Shape& shape : {Shape{5, 7, 11}, Shape{3, 2, 9000}}) {  // the second: many blocks
      const std::vector<Tensor> views = views_of(shape, dtype);
      for (std::size_t v = 0; v < views.size(); ++v) {
        const Tensor& x = views[v];
        for (int mask = 0; mask < 8; ++mask) {
          IntList dims;
          for (int d = 0; d < 3; ++d) {
            if (mask >> d & 1) dims.push_back(d - 3 * (d % 2));  // negative dims too
          }
          const Tensor y = flip(x, dims);
          ASSERT_EQ(y.sizes(), shape);
          // torch.flip's layout: a dense view's own (the contiguous one, the permuted one,
          // views 0 and 1), else row-major (the stepped slice, the expanded view).
          ASSERT_EQ(y.strides(), v < 2 ? x.strides() : contiguous_strides(shape));
          EXPECT_EQ(raw(y), expected(x, shape, [&](Index& i) {
                      for (int d = 0; d < 3; ++d) {
                        if (mask >> d & 1) i[d] = shape[d] - 1 - i[d];
                      }
                      return true;
                    }))
              << dtype_name(dtype) << " " << shape.to_string() << " mask " << mask;
        }
      }
    }
  }
  EXPECT_EQ(flip(scalar_tensor(3.0, DType::Float64), {0}).item<double>(), 3.0);
  EXPECT_EQ(flip(empty({0, 4}), {1}).sizes(), Shape({0, 4}));
  EXPECT_THROW(flip(empty({2, 3}), {2}), Error);
  EXPECT_THROW(flip(scalar_tensor(1.0, DType::Float64), {0, -1}), ShapeError);
}

// Copies of slices with step 2 de-interleave vectors (take_even): every target, element size
// and length around the vector widths, and a slice whose last element ends the storage (the
// vector loop must not read the odd element after it; ASan checks).
class RearrangeOnTarget : public test::OnEveryTarget {};

TEST_P(RearrangeOnTarget, CopiesOfStepTwoSlices) {
  for (DType dtype : {DType::UInt8, DType::Float16, DType::Float32, DType::Int64}) {
    for (std::int64_t n = 1; n <= 70; ++n) {
      const Tensor x = distinct({2, 2 * n - 1}, dtype);  // rows end on an even element
      const Tensor y = x.slice(1, 0, 2 * n - 1, 2).contiguous();
      ASSERT_EQ(y.sizes(), Shape({2, n}));
      EXPECT_EQ(raw(y), expected(x, Shape({2, n}), [&](Index& i) {
                  i[1] *= 2;
                  return true;
                }))
          << target() << " " << dtype_name(dtype) << " n " << n;
    }
  }
}

// pad's index map for one dim: the source index of output index i, or false for the fill.
bool pad_source(std::string_view mode, std::int64_t& i, std::int64_t left, std::int64_t n) {
  i -= left;
  if (mode == "reflect") i = i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
  if (mode == "replicate") i = std::clamp<std::int64_t>(i, 0, n - 1);
  return i >= 0 && i < n;
}

// Reversed runs (the last dim flipped, reflect padding) are vector code: every SIMD target,
// every element size, lengths around the vector widths.
// Note [dense fills]: runs of one value, written by vectors of it on each target, fill exactly
// their elements: a broadcast value copied into the middle of a tensor of another value leaves
// both neighbours alone.
TEST_P(RearrangeOnTarget, FillsOfRunsOfOneValue) {
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64,
                      DType::Int32, DType::Int64}) {
    for (std::int64_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 1000, 4099}) {
      Tensor buf = full({n + 6}, -3, dtype);
      buf.slice(0, 3, 3 + n).copy_(scalar_tensor(1.5, dtype).expand({n}));
      const std::vector<double> v = buf.to(DType::Float64).to_vector<double>();
      for (std::int64_t i = 0; i < n + 6; ++i) {
        const double want = i < 3 || i >= 3 + n ? -3.0 : (is_floating(dtype) ? 1.5 : 1.0);
        ASSERT_EQ(v[i], want) << target() << " " << dtype_name(dtype) << " n " << n << " i " << i;
      }
    }
  }
}

TEST_P(RearrangeOnTarget, FlipsOfReversedRuns) {
  for (DType dtype : {DType::UInt8, DType::Float16, DType::Float32, DType::Int64}) {
    for (std::int64_t n = 2; n <= 70; ++n) {
      const Shape shape{3, n};
      const Tensor x = distinct(shape, dtype);
      EXPECT_EQ(raw(flip(x, {1})), expected(x, shape, [&](Index& i) {
                  i[1] = n - 1 - i[1];
                  return true;
                }))
          << target() << " " << dtype_name(dtype) << " n " << n;
      const std::int64_t left = n - 1, right = n / 2;
      const Shape padded{3, n + left + right};
      EXPECT_EQ(raw(pad(x, {left, right}, "reflect")),
                expected(x, padded, [&](Index& i) { return pad_source("reflect", i[1], left, n); }))
          << target() << " " << dtype_name(dtype) << " n " << n;
    }
  }
}

MPSIM_ON_EVERY_TARGET(RearrangeOnTarget);

TEST(Pad, EveryModeOnEveryViewAndDType) {
  struct Case {
    Shape shape;
    IntList pads;
    std::string_view mode;
  };
  const std::vector<Case> cases = {
      {{3, 5, 7}, {2, 3}, "reflect"},
      {{3, 5, 7}, {1, 2, 4, 0}, "reflect"},
      {{2, 3, 5, 7}, {1, 1, 1, 1}, "reflect"},
      {{3, 5, 7}, {3, 1, 2, 2, 1, 1}, "reflect"},
      {{3, 5, 7}, {2, 3, 0, 5}, "replicate"},
      {{3, 5, 7}, {4, 4, 4, 4, 4, 4}, "replicate"},
      {{2, 3, 5, 7}, {1, 1, 1, 1}, "constant"},
      {{3, 5, 7}, {-2, 3, 1, -4}, "constant"},
      {{3, 5, 7}, {-3, -3}, "constant"},
      {{3, 5, 7}, {-9, 2}, "constant"},  // nothing of x survives: all fill
      {{2, 40, 700}, {2, 1, 1, 3}, "reflect"},  // many blocks
      {{2, 40, 700}, {1, 2, 3, 1}, "constant"},
  };
  for (DType dtype : kEveryDType) {
    const double value = dtype == DType::Bool ? 1 : 7;
    const std::vector<std::uint8_t> fill = raw(full({1}, value, dtype));
    for (const Case& c : cases) {
      for (const Tensor& x : views_of(c.shape, dtype)) {
        const Tensor y = pad(x, c.pads, c.mode, value);
        std::vector<std::int64_t> sizes = c.shape.dims();
        const std::int64_t nd = c.shape.size();
        for (std::size_t k = 0; k < c.pads.size() / 2; ++k) {
          sizes[nd - 1 - k] += c.pads[2 * k] + c.pads[2 * k + 1];
        }
        ASSERT_EQ(y.sizes(), Shape(sizes));
        EXPECT_EQ(raw(y), expected(
                              x, Shape(sizes),
                              [&](Index& i) {
                                bool inside = true;
                                for (std::size_t k = 0; k < c.pads.size() / 2; ++k) {
                                  const std::int64_t d = nd - 1 - static_cast<std::int64_t>(k);
                                  inside = pad_source(c.mode, i[d], c.pads[2 * k], c.shape[d]) &&
                                           inside;
                                }
                                return inside;
                              },
                              fill))
            << dtype_name(dtype) << " " << c.shape.to_string() << " " << to_string(c.pads) << " "
            << c.mode;
      }
    }
  }
  EXPECT_THROW(pad(empty({3, 0}), {1, 1}, "replicate"), ShapeError);
  EXPECT_THROW(pad(empty({3, 4}), {-1, 1}, "reflect"), InvalidArgument);
}

TEST(Triangles, EveryDiagonalOnEveryViewAndDType) {
  for (DType dtype : kEveryDType) {
    for (const Shape& shape : {Shape{3, 5, 7}, Shape{2, 3, 7, 5}, Shape{2, 150, 301}}) {
      const std::int64_t nd = shape.size();
      for (const Tensor& x : views_of(shape, dtype)) {
        for (std::int64_t diagonal : {-400, -3, -1, 0, 1, 2, 6, 400}) {
          const std::vector<std::uint8_t> zero(8, 0);
          EXPECT_EQ(raw(tril(x, diagonal)), expected(x, shape,
                                                      [&](Index& i) {
                                                        return i[nd - 1] - i[nd - 2] <= diagonal;
                                                      },
                                                      zero))
              << "tril " << dtype_name(dtype) << " " << shape.to_string() << " " << diagonal;
          EXPECT_EQ(raw(triu(x, diagonal)), expected(x, shape,
                                                      [&](Index& i) {
                                                        return i[nd - 1] - i[nd - 2] >= diagonal;
                                                      },
                                                      zero))
              << "triu " << dtype_name(dtype) << " " << shape.to_string() << " " << diagonal;
        }
      }
    }
  }
  EXPECT_EQ(tril(empty({0, 3})).sizes(), Shape({0, 3}));
  EXPECT_THROW(triu(empty({3})), ShapeError);
}

TEST(Gather, LargeIndicesOnEveryViewAndDTypeAndThreadCount) {
  std::mt19937 rng(5);
  for (DType dtype : kEveryDType) {
    const Shape shape{6, 50, 300};
    for (const Tensor& x : views_of(shape, dtype)) {
      for (std::int64_t d = 0; d < 3; ++d) {
        // gather: an index of a smaller shape (gather allows index.size(k) <= x.size(k)).
        std::vector<std::int64_t> sizes = {5, 40, 290};
        sizes[d] = 33;
        const Shape is(sizes);
        std::vector<std::int64_t> v(static_cast<std::size_t>(is.numel()));
        for (auto& k : v) k = static_cast<std::int64_t>(rng() % static_cast<unsigned>(shape[d]));
        const Tensor index = from_vector(v, is);
        const std::vector<std::uint8_t> want = expected(x, is, [&](Index& i) {
          i[d] = v[static_cast<std::size_t>(ravel(i, is))];
          return true;
        });
        for (int threads : {1, 2, 8}) {
          tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
          EXPECT_EQ(raw(gather(x, d, index)), want) << dtype_name(dtype) << " dim " << d;
          // the same index through a transposed view of itself
          EXPECT_EQ(raw(gather(x, d, index.transpose(0, 2).contiguous().transpose(0, 2))), want);
        }
        // index_select with int32 and int64 indices
        std::vector<std::int32_t> rows(70);
        for (auto& k : rows) k = static_cast<std::int32_t>(rng() % static_cast<unsigned>(shape[d]));
        std::vector<std::int64_t> out_sizes = shape.dims();
        out_sizes[d] = 70;
        const std::vector<std::uint8_t> want_rows = expected(x, Shape(out_sizes), [&](Index& i) {
          i[d] = rows[static_cast<std::size_t>(i[d])];
          return true;
        });
        EXPECT_EQ(raw(index_select(x, d, from_vector(rows, {70}))), want_rows);
        EXPECT_EQ(raw(index_select(x, d, from_vector(rows, {70}).to(DType::Int64))), want_rows);
      }
    }
  }
}

TEST(Gather, BadIndicesAreNamedOnTheCpuAndSurfaceAtSyncOnMps) {
  const Tensor x = distinct({4, 1000}, DType::Float32);
  std::vector<std::int64_t> v(4000, 3);
  v[2500] = 1000;  // the first bad index
  v[3999] = -1;
  const Tensor index = from_vector(v, {4, 1000});
  try {
    gather(x, 1, index);
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[gather] index 1000 is out of range for dimension 1 with size 1000"));
  }
  try {
    index_select(x, 1, from_vector<std::int64_t>({0, -2}, {2}));
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[index_select] index -2 is out of range for dimension 1"));
  }
  // mps: the command fails on the queue; the error surfaces at the next synchronization and
  // the device keeps working.
  const Tensor xm = x.to(Device::mps()), im = index.to(Device::mps());
  try {
    const Tensor y = gather(xm, 1, im);
    mps::synchronize();
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[gather] index out of range"));
  }
  EXPECT_EQ(raw(gather(xm, 0, from_vector<std::int64_t>({3, 0}, {1, 2}, Device::mps()))),
            raw(from_vector<float>({240, 2}, {1, 2})));  // x[3][0], x[0][1]
}

TEST(Linspace, ValuesOfEveryBlockAndDType) {
  const std::int64_t n = 200003;  // several blocks, odd
  for (const auto& [start, end] : {std::pair{-3.0, 11.0}, std::pair{1e6, -1e-3}}) {
    // torch's formula; an integer dtype converts the ends to it first (-1e-3 -> 0)
    auto formula = [&](double a, double b, std::int64_t i) {
      const double step = (b - a) / static_cast<double>(n - 1);
      return i < n / 2 ? a + step * static_cast<double>(i)
                       : b - step * static_cast<double>(n - 1 - i);
    };
    auto want = [&](std::int64_t i) { return formula(start, end, i); };
    auto want_int = [&](std::int64_t i) {
      return static_cast<std::int64_t>(formula(std::trunc(start), std::trunc(end), i));
    };
    const std::vector<double> d = linspace(start, end, n, DType::Float64).to_vector<double>();
    const std::vector<float> f = linspace(start, end, n).to_vector<float>();
    const std::vector<std::int64_t> k = linspace(start, end, n, DType::Int64).to_vector<std::int64_t>();
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(d[i], want(i)) << i;
      ASSERT_EQ(f[i], static_cast<float>(want(i))) << i;
      ASSERT_EQ(k[i], want_int(i)) << i;
    }
    EXPECT_EQ(d.front(), start);
    EXPECT_EQ(d.back(), end);
    EXPECT_EQ(raw(linspace(start, end, n, DType::Float16, Device::mps())),
              raw(linspace(start, end, n, DType::Float16)));
  }
  const std::vector<std::int32_t> a = arange(5, 5 + 3 * 100001, 3, DType::Int32).to_vector<std::int32_t>();
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], 5 + 3 * static_cast<std::int32_t>(i));
}

}  // namespace
}  // namespace mpsim
