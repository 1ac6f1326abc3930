// Reductions over the trailing dims of a (permuted) input: one chunked driver
// (reduce_driver.h), one accumulator type per op.
//
// Note [reduction accuracy]
// float64 sums accumulate with Neumaier's compensation, in 16 interleaved lanes (Note [float64
// sum lanes] in row_stats.h): the error of a chunk is about
// 2 eps_double |sum of magnitudes| independent of its length, so a float64 sum is within a few
// ulps of exact unless it cancels massively. float32/float16/bfloat16 terms go into 32
// interleaved double accumulators per chunk (Note [sum lanes]: term r into lane r mod 32, a
// fixed order on every target, and 32 independent chains for the pipeline); a lane adds at most
// 512 terms, so its error is below 2^-44 of the sum of magnitudes; the lanes fold to 8 by a
// fixed tree, and lanes and chunks then combine with Neumaier. A float32
// sum of 2^24 terms rounds to the correctly rounded result except in hard cases. var/std combine
// per-chunk Welford states (Chan et al.) in double; logsumexp combines per-chunk (max, sum of exp)
// pairs. Integer sums and products wrap in int64, as PyTorch's.
#include "kernels_simd/reduce.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/convert.h"
#include "kernels_simd/aligned_vector.h"
#include "kernels_simd/reduce_driver.h"
#include "kernels_simd/row_stats.h"
#include "kernels_simd/scratch_pool.h"

namespace mpsim::simd {
namespace {

template <class T>
void store(const TensorView& out, std::int64_t m, T v) {
  out.ptr<T>()[m] = v;  // outputs are dense: the front end allocates them
}

// A float sum over leading dims (outputs dense, reduced elements a strided column): the same
// lanes and order as the per-output walk (term r of output m into lane r mod 32, Note [sum
// lanes], chunks of kReduceGrain), so the bits are identical, but computed for a tile of
// outputs at a time, reading whole rows instead of columns that touch a new page per element.
// The rows go lane by lane (Note [lane-major column sums]).
//
// Note [lane-major column sums]
// Lane L of a tile's outputs receives rows L, L + 32, L + 64, ... in increasing order, and no
// other lane reads them, so the tile can sweep one lane at a time: its accumulators (kTile
// doubles, 8 KiB) stay in L1 for the whole sweep, where row-by-row order cycled all 32 lanes
// (256 KiB) through L2, two L2 transfers per input element. Each row is still read whole (4
// KiB, a page the hardware prefetcher streams) and the next row of the sweep is prefetched.
// The gain and the command that measures it: docs/measurements.md.
// The frame of the column reductions (sum_columns, prod_columns_f32): tasks of tiles of
// kTile outputs by chunks of kReduceGrain reduced rows (lane r mod 32 is also (r - r0) mod 32),
// each task's scratch from `scratch()`, `tile(scratch, m0, m1, c, r0, r1)` filling
// partials[m * chunks + c] for its outputs and chunk, then `finish` of each output's chunks.
template <class Partial, std::int64_t kTile, class Scratch, class Tile, class Finish>
void column_tiles(const ReduceWalker& walker, std::vector<Partial>& partials, Scratch&& scratch,
                  Tile&& tile, Finish&& finish) {
  const std::int64_t outputs = walker.outputs(), count = walker.count();
  const std::int64_t chunks = (count + kReduceGrain - 1) / kReduceGrain;
  const std::int64_t tiles = (outputs + kTile - 1) / kTile;
  static_assert(kReduceGrain % static_cast<std::int64_t>(kSumLanes) == 0);
  partials.assign(static_cast<std::size_t>(outputs * chunks), Partial{});
  for_each_group(tiles * chunks, kTile * kReduceGrain, [&](std::int64_t t0, std::int64_t t1) {
    auto space = scratch();
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t m0 = (t / chunks) * kTile, m1 = std::min(outputs, m0 + kTile);
      const std::int64_t c = t % chunks, r0 = c * kReduceGrain,
                         r1 = std::min(count, r0 + kReduceGrain);
      tile(space, m0, m1, c, r0, r1, chunks);
    }
  });
  for_each_group(outputs, chunks, [&](std::int64_t m0, std::int64_t m1) {
    for (std::int64_t m = m0; m < m1; ++m) {
      finish(m, std::span<const Partial>(partials.data() + m * chunks,
                                         static_cast<std::size_t>(chunks)));
    }
  });
}

template <class T, class Partial, class Finish>
void sum_columns(const ReduceWalker& walker, bool squares, Finish&& finish) {
  constexpr std::int64_t kTile = 1024;  // outputs per task (rows of 4 KiB of floats)
  const std::int64_t row_bytes = walker.column_stride() * static_cast<std::int64_t>(sizeof(T));
  constexpr std::int64_t kLanes = static_cast<std::int64_t>(kSumLanes);
  std::vector<Partial> partials;
  // The lanes of a tile (256 KiB) from a pool kept between calls: allocated per task they were
  // faulted in again on every call (`perf record` of a channels-last mean: 9% in the kernel's
  // page clearing), and only the tile's width of each lane is zeroed. With 4 rows a pass
  // (below): [2, 320, 64, 64] channels-last mean over dims 2 and 3, one thread, 0.28-0.31 ->
  // 0.22-0.25 ms.
  static ScratchPool pool;
  auto scratch = [] { return pool.take(static_cast<std::size_t>(kTile) * kSumLanes * 8); };
  auto tile = [&](ScratchPool::Lease& lease, std::int64_t m0, std::int64_t m1, std::int64_t c,
                  std::int64_t r0, std::int64_t r1, std::int64_t chunks) {
    const std::int64_t width = m1 - m0;  // lane l of the tile's outputs at lanes + l * width
    double* lanes = lease.as<double>();
    std::fill(lanes, lanes + kLanes * width, 0.0);
    for (std::int64_t l = 0; l < kLanes; ++l) {
      double* lane = lanes + l * width;  // lane l of every output of the tile
      // float: 4 of the lane's rows per pass where it has 16 or more, each output's lane loaded
      // and stored once for them (the same additions in the same order): [4096, 4096] over dim
      // 0, one thread, 5.8-6.0 -> 3.7-3.9 ms; over the 10 rows a lane of NCHW [2, 320, 64, 64]'s
      // channels has, 4 at once took 0.44-0.46 ms against 0.41-0.43, so those go row by row
      // (`elementwise_bench --benchmark_filter='sum_case/(channels|first)'`).
      const std::int64_t at_once = r1 - r0 >= 16 * kLanes ? 4 : 1;
      for (std::int64_t r = r0 + l; r < r1;) {
        const char* row = walker.data() + r * row_bytes + m0 * static_cast<std::int64_t>(sizeof(T));
        if constexpr (std::is_same_v<T, float>) {
          const std::int64_t k = std::min(at_once, (r1 - r + kLanes - 1) / kLanes);
          add_rows_f64(reinterpret_cast<const float*>(row), static_cast<std::size_t>(m1 - m0),
                       static_cast<std::size_t>(k),
                       static_cast<std::size_t>(kLanes * walker.column_stride()),
                       squares, lane,
                       r + k * kLanes < r1
                           ? reinterpret_cast<const float*>(row + k * kLanes * row_bytes)
                           : nullptr);
          r += k * kLanes;
        } else {
          for (std::int64_t m = 0; m < m1 - m0; ++m) {
            const double x = load_as_double<T>(row + m * static_cast<std::int64_t>(sizeof(T)));
            lane[m] += squares ? x * x : x;
          }
          r += kLanes;
        }
      }
    }
    if (chunks == 1) {
      // The fold and the Neumaier sum of every output of the tile at once, in vector lanes across
      // outputs (the same steps): faster over the channels of NCHW [2, 320, 64, 64] and over dim
      // 0 of [4096, 4096] (`elementwise_bench --benchmark_filter='sum_case/(channels|first)'`;
      // docs/measurements.md).
      double sums[kTile], comps[kTile];
      fold_lane_columns(lanes, static_cast<std::size_t>(width), static_cast<std::size_t>(width),
                        sums, comps);
      for (std::int64_t m = m0; m < m1; ++m) {
        partials[m].s.sum = sums[m - m0];
        partials[m].s.comp = comps[m - m0];
      }
      return;
    }
    for (std::int64_t m = m0; m < m1; ++m) {
      Partial& part = partials[m * chunks + c];
      double l[kSumLanes], f[8];
      for (std::size_t k = 0; k < kSumLanes; ++k) l[k] = lanes[k * width + (m - m0)];
      fold_lanes(l, f);
      for (double v : f) part.s.add(v);
    }
  };
  column_tiles<Partial, kTile>(walker, partials, scratch, tile, finish);
}

// prod of float columns (Note [product columns] in row_stats.h): per tile of outputs and chunk
// of the reduced rows, the 32 lanes one after another, each joined into the outputs' products;
// `finish` of each output's chunks, as reduce_in_chunks's prod.
template <class Partial, class Finish>
void prod_columns_f32(const ReduceWalker& walker, Finish&& finish) {
  constexpr std::int64_t kTile = 512;  // outputs per task: 2 KiB of each row
  const std::int64_t row_bytes = walker.column_stride() * static_cast<std::int64_t>(sizeof(float));
  constexpr std::int64_t kLanes = static_cast<std::int64_t>(kSumLanes);
  struct Scratch {
    std::vector<double> lane, product;
    std::vector<std::int64_t> lane_exp, product_exp;
  };
  std::vector<Partial> partials;
  auto scratch = [] {
    const auto n = static_cast<std::size_t>(kTile);
    return Scratch{std::vector<double>(n), std::vector<double>(n), std::vector<std::int64_t>(n),
                   std::vector<std::int64_t>(n)};
  };
  auto tile = [&](Scratch& sc, std::int64_t m0, std::int64_t m1, std::int64_t c, std::int64_t r0,
                  std::int64_t r1, std::int64_t chunks) {
    const auto width = static_cast<std::size_t>(m1 - m0);
    std::fill(sc.product.begin(), sc.product.end(), 1.0);
    std::fill(sc.product_exp.begin(), sc.product_exp.end(), 0);
    // Lanes without rows (a chunk of fewer than 32) are 1: their joins change nothing.
    for (std::int64_t l = 0; l < kLanes && r0 + l < r1; ++l) {
      const char* row =
          walker.data() + (r0 + l) * row_bytes + m0 * static_cast<std::int64_t>(sizeof(float));
      product_column_f32(reinterpret_cast<const float*>(row), width,
                         static_cast<std::size_t>((r1 - r0 - l + kLanes - 1) / kLanes),
                         static_cast<std::size_t>(kLanes * walker.column_stride()),
                         sc.lane.data(), sc.lane_exp.data(), sc.product.data(),
                         sc.product_exp.data());
    }
    for (std::int64_t m = m0; m < m1; ++m) {
      Partial& part = partials[static_cast<std::size_t>(m * chunks + c)];
      part.p = sc.product[static_cast<std::size_t>(m - m0)];
      part.e = sc.product_exp[static_cast<std::size_t>(m - m0)];
      part.e += take_exponent(part.p);
    }
  };
  column_tiles<Partial, kTile>(walker, partials, scratch, tile, finish);
}

// Note [peeled outer dims]
// A reduction over a middle dim (sum over C of an NCHW [N, C, H, W]: kept N, H, W) is a reduction
// over leading dims (Note [lane-major column sums]) for each index of the outermost kept dim, whose
// outputs lie one after another in the dense output. When dropping that dim leaves such a layout,
// each of its slices runs as its own reduction: the same lanes and order per output, so the same
// bits, and far faster over dim 1 of [2, 320, 64, 64] float32
// (`elementwise_bench --benchmark_filter=sum_case/channels`, beside a build without it;
// docs/measurements.md).
// Whether dropping in's outermost kept dims, one after another, reaches a reduction over
// leading dims.
bool peels_to_columns(const TensorView& in, std::int64_t num_reduced) {
  if (ReduceWalker(in, num_reduced).column_stride() != 0) return true;
  if (static_cast<std::int64_t>(in.sizes.size()) - num_reduced < 2) return false;
  TensorView slice = in;
  slice.sizes = in.sizes.subspan(1);
  slice.strides = in.strides.subspan(1);
  return peels_to_columns(slice, num_reduced);
}

// Calls run(slice of in, slice of out) for every index of in's outermost kept dim and returns
// true when its slices reduce over leading dims, or peel to such (run peels them again); else
// returns false and calls nothing.
template <class Run>
bool peel_outer(const TensorView& in, const TensorView& out, std::int64_t num_reduced, Run&& run) {
  const std::int64_t kept = static_cast<std::int64_t>(in.sizes.size()) - num_reduced;
  if (kept < 2) return false;
  TensorView slice = in;
  slice.sizes = in.sizes.subspan(1);
  slice.strides = in.strides.subspan(1);
  if (!peels_to_columns(slice, num_reduced)) return false;
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(in.dtype));
  const std::int64_t per_slice = ReduceWalker(slice, num_reduced).outputs();
  TensorView o = out;
  for (std::int64_t n = 0; n < in.sizes[0]; ++n) {
    slice.data = static_cast<char*>(in.data) + n * in.strides[0] * elem;
    o.data = static_cast<char*>(out.data) + n * per_slice * elem;
    run(slice, o);
  }
  return true;
}

// sum / mean / prod over float or integer dtypes (the front end makes input and output dtypes
// equal). mean divides the compensated sum by the count in double.
template <class T>
void sum_family(OpId op, const TensorView& in, const TensorView& out, std::int64_t num_reduced) {
  const ReduceWalker walker(in, num_reduced);
  const bool is_mean = op == op_id("mean"), is_prod = op == op_id("prod");
  const bool is_norm = op == op_id("norm");  // p = 2: sqrt of the compensated sum of squares
  if constexpr (FloatingElement<T>) {
    struct Partial {
      Neumaier s;
      double p = 1;  // prod: p * 2^e (Note [product lanes])
      std::int64_t e = 0;
    };
    auto finish = [&](std::int64_t m, std::span<const Partial> parts) {
      Neumaier total;
      double product = 1;
      std::int64_t exp = 0;
      for (const Partial& q : parts) {
        total.add(q.s.sum);
        total.add(q.s.comp);
        exp += q.e;
        multiply_lane(product, exp, q.p);
      }
      // Past +-2^20 the result is 0 or inf in every dtype; the clamp keeps ldexp's int in range.
      const double r = is_prod   ? std::ldexp(product, static_cast<int>(std::clamp<std::int64_t>(
                                                           exp, -(1 << 20), 1 << 20)))
                       : is_norm ? std::sqrt(total.value())
                       : is_mean ? total.value() / static_cast<double>(walker.count())
                                 : total.value();
      store<T>(out, m, convert<T>(r));
    };
    if constexpr (std::is_same_v<T, float>) {
      // Note [row sums in row tiles] (row_stats.h): dense rows of one chunk, a tile of rows
      // at a time; `finish` of the one chunk's total, as below.
      if (!is_prod && walker.dense_run() && walker.kept_stride() > 0 &&
          walker.count() <= kReduceGrain) {
        const std::int64_t count = walker.count();
        for_each_group(walker.outputs(), count, [&](std::int64_t m0, std::int64_t m1) {
          constexpr std::int64_t kBlock = 256;
          double sums[kBlock];
          for (std::int64_t b = m0; b < m1; b += kBlock) {
            const std::int64_t rows = std::min(kBlock, m1 - b);
            sum_rows_f32(reinterpret_cast<const float*>(walker.run_start(b)),
                         static_cast<std::size_t>(count), static_cast<std::size_t>(rows),
                         static_cast<std::size_t>(walker.kept_stride()), is_norm, sums);
            for (std::int64_t m = b; m < b + rows; ++m) {
              const double v = sums[m - b];
              store<T>(out, m,
                       convert<T>(is_norm   ? std::sqrt(v)
                                  : is_mean ? v / static_cast<double>(count)
                                            : v));
            }
          }
        });
        return;
      }
    }
    if constexpr (!std::is_same_v<T, double>) {
      constexpr bool kProdColumns = std::is_same_v<T, float>;  // Note [product columns]
      if (walker.column_stride() != 0) {
        if (!is_prod) {
          sum_columns<T, Partial>(walker, is_norm, finish);
          return;
        }
        if constexpr (kProdColumns) {
          prod_columns_f32<Partial>(walker, finish);
          return;
        }
      }
      if ((!is_prod || kProdColumns) &&
          peel_outer(in, out, num_reduced, [&](const TensorView& i, const TensorView& o) {
            sum_family<T>(op, i, o, num_reduced);
          })) {
        return;
      }
    }
    reduce_in_chunks<Partial>(
        walker,
        [&](std::int64_t m, std::int64_t b, std::int64_t e) {
          Partial part;
          if (is_prod) {  // Note [product lanes]
            double lanes[kSumLanes];
            std::int64_t exps[kSumLanes] = {};
            std::fill(std::begin(lanes), std::end(lanes), 1.0);
            bool done = false;
            if constexpr (std::is_same_v<T, float>) {
              if (walker.dense_run()) {  // b is a multiple of 32, as for the sums
                product_lanes_f32(reinterpret_cast<const float*>(walker.run_start(m)) + b,
                                  static_cast<std::size_t>(e - b), lanes, exps);
                done = true;
              }
            }
            if (!done) {
              walker.walk(m, b, e, [&](const char* p, std::int64_t r) {
                multiply_lane(lanes[r % kSumLanes], exps[r % kSumLanes], load_as_double<T>(p));
              });
            }
            // The lanes lie in [1, 2) (or are 0, inf, NaN), so the 32 of them multiply with no
            // overflow or underflow: one scaling after the last multiply gives the bits of a
            // scaling after each (Note [product lanes]), and runs faster (docs/measurements.md).
            for (std::size_t k = 0; k < kSumLanes; ++k) {
              part.e += exps[k];
              part.p *= lanes[k];
            }
            part.e += take_exponent(part.p);
            return part;
          }
          if constexpr (!std::is_same_v<T, double>) {
            {  // Note [reduction accuracy]: 8 interleaved lanes
              double lanes[kSumLanes] = {}, f[8];
              if constexpr (std::is_same_v<T, float>) {
                if (walker.dense_run()) {  // b is a multiple of 32: lane r mod 32 = (r - b) mod 32
                  sum_lanes_f32(reinterpret_cast<const float*>(walker.run_start(m)) + b,
                                static_cast<std::size_t>(e - b), is_norm, lanes);
                  fold_lanes(lanes, f);
                  for (double v : f) part.s.add(v);
                  return part;
                }
              }
              walker.walk(m, b, e, [&](const char* p, std::int64_t r) {
                const double x = load_as_double<T>(p);
                lanes[r % kSumLanes] += is_norm ? x * x : x;  // x * x is exact for float inputs
              });
              fold_lanes(lanes, f);
              for (double v : f) part.s.add(v);
              return part;
            }
          }
          // Note [float64 sum lanes] (row_stats.h): b is a multiple of kF64SumLanes.
          double sums[kF64SumLanes], comps[kF64SumLanes];
          if (walker.dense_run()) {
            neumaier_lanes_f64(reinterpret_cast<const double*>(walker.run_start(m)) + b,
                               static_cast<std::size_t>(e - b), is_norm, sums, comps);
          } else {
            Neumaier lanes[kF64SumLanes];
            walker.walk(m, b, e, [&](const char* p, std::int64_t r) {
              const double x = load_as_double<T>(p);
              lanes[static_cast<std::size_t>(r) % kF64SumLanes].add(is_norm ? x * x : x);
            });
            for (std::size_t k = 0; k < kF64SumLanes; ++k) {
              sums[k] = lanes[k].sum;
              comps[k] = lanes[k].comp;
            }
          }
          for (double v : sums) part.s.add(v);
          for (double v : comps) part.s.add(v);
          return part;
        },
        finish);
  } else {
    using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>>;
    reduce_in_chunks<std::uint64_t>(
        walker,
        [&](std::int64_t m, std::int64_t b, std::int64_t e) {
          if constexpr (std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>) {
            // Dense runs in vectors: a wrapping sum is the same in any order
            // (`elementwise_bench --benchmark_filter=int_sum`; docs/measurements.md).
            if (!is_prod && walker.dense_run()) {
              return sum_int_row(reinterpret_cast<const T*>(walker.run_start(m)) + b,
                                 static_cast<std::size_t>(e - b));
            }
          }
          std::uint64_t acc = is_prod ? 1 : 0;
          walker.walk(m, b, e, [&](const char* p, std::int64_t) {
            const auto v = static_cast<std::uint64_t>(
                static_cast<std::int64_t>(*reinterpret_cast<const T*>(p)));
            acc = is_prod ? acc * v : acc + v;
          });
          return acc;
        },
        [&](std::int64_t m, std::span<const std::uint64_t> parts) {
          std::uint64_t acc = is_prod ? 1 : 0;
          for (std::uint64_t q : parts) acc = is_prod ? acc * q : acc + q;
          store<T>(out, m, static_cast<T>(static_cast<U>(acc)));
        });
  }
}

// Welford state of a chunk (float64; float chunks compute theirs in two passes); Chan et al.
// merge them in chunk order.
struct Moments {
  double n = 0, mean = 0, m2 = 0;
  Neumaier sum;  // var_mean's mean is sum / n, as mean's: exact ties stay ties
  void add(double x) {
    sum.add(x);
    n += 1;
    const double delta = x - mean;
    mean += delta / n;
    m2 += delta * (x - mean);
  }
  void merge(const Moments& o) {
    if (o.n == 0) return;
    sum.add(o.sum.sum);
    sum.add(o.sum.comp);
    const double total = n + o.n, delta = o.mean - mean;
    mean += delta * (o.n / total);
    m2 += o.m2 + delta * delta * (n * o.n / total);
    n = total;
  }
};

// var or std into `out`, and the mean into `*mean_out` when given (var_mean).
template <class T>
void var_family(bool is_std, std::int64_t correction, const TensorView& in, const TensorView& out,
                const TensorView* mean_out, std::int64_t num_reduced) {
  const ReduceWalker walker(in, num_reduced);
  reduce_in_chunks<Moments>(
      walker,
      [&](std::int64_t m, std::int64_t b, std::int64_t e) {
        Moments mo;
        if constexpr (std::is_same_v<T, double>) {
          walker.walk(m, b, e, [&](const char* p, std::int64_t) { mo.add(load_as_double<T>(p)); });
        } else {
          // Two passes over the chunk in the sum lanes: its mean, then the squared deviations
          // from that mean (no cancellation); vectorized for dense float runs.
          const float* dense = nullptr;
          if constexpr (std::is_same_v<T, float>) {
            if (walker.dense_run()) dense = reinterpret_cast<const float*>(walker.run_start(m)) + b;
          }
          const auto n = static_cast<std::size_t>(e - b);
          double lanes[kSumLanes] = {};
          if (dense != nullptr) {
            sum_lanes_f32(dense, n, false, lanes);
          } else {
            walker.walk(m, b, e, [&](const char* p, std::int64_t r) {
              lanes[r % kSumLanes] += load_as_double<T>(p);
            });
          }
          mo.n = static_cast<double>(n);
          mo.sum = combine_lanes(lanes, 0);
          mo.mean = mo.sum.value() / mo.n;
          std::fill(std::begin(lanes), std::end(lanes), 0.0);
          if (dense != nullptr) {
            centered_squares_lanes_f32(dense, n, mo.mean, lanes);
          } else {
            walker.walk(m, b, e, [&](const char* p, std::int64_t r) {
              const double d = load_as_double<T>(p) - mo.mean;
              lanes[r % kSumLanes] += d * d;
            });
          }
          mo.m2 = lane_total(lanes);
        }
        return mo;
      },
      [&](std::int64_t m, std::span<const Moments> parts) {
        Moments total;
        for (const Moments& q : parts) total.merge(q);
        // PyTorch: max(0, n - correction) degrees of freedom; 0 gives nan (0/0) or inf.
        const double dof = std::max(0.0, total.n - static_cast<double>(correction));
        const double v = total.m2 / dof;
        store<T>(out, m, convert<T>(is_std ? std::sqrt(v) : v));
        if (mean_out != nullptr) store<T>(*mean_out, m, convert<T>(total.sum.value() / total.n));
      });
}

// The extreme of a dense float run as extreme_family defines it: the first NaN if any, and
// between zeros of both signs the one the order prefers (+0 for max, -0 for min).
float dense_extreme(const float* x, std::size_t n, bool is_max) {
  bool nan = false;
  float v = row_extreme_f32(x, n, is_max, &nan);
  if (nan) return *std::find_if(x, x + n, [](float y) { return std::isnan(y); });
  if (v == 0) {
    const bool negative = !is_max;
    const bool found = std::any_of(
        x, x + n, [&](float y) { return y == 0 && std::signbit(y) == negative; });
    v = std::copysign(0.0f, found == negative ? -1.0f : 1.0f);
  }
  return v;
}

// amax / amin: NaN wins; for floats -0 < +0 (IEEE 754-2019 maximum/minimum).
template <class T>
void extreme_family(bool is_max, const TensorView& in, const TensorView& out,
                    std::int64_t num_reduced) {
  const ReduceWalker walker(in, num_reduced);
  auto better = [is_max](T a, T b) {  // a replaces b
    if constexpr (FloatingElement<T>) {
      const double x =
          static_cast<double>(static_cast<std::conditional_t<Float16Like<T>, float, T>>(a));
      const double y =
          static_cast<double>(static_cast<std::conditional_t<Float16Like<T>, float, T>>(b));
      if (std::isnan(y)) return false;
      if (std::isnan(x)) return true;
      if (x == y)
        return is_max ? (std::signbit(y) && !std::signbit(x))
                      : (std::signbit(x) && !std::signbit(y));
      return is_max ? x > y : x < y;
    } else {
      return is_max ? a > b : a < b;
    }
  };
  if constexpr (std::is_same_v<T, float>) {
    // Note [extreme columns] (row_stats.h): a reduction over leading dims sweeps its rows, a
    // vector of outputs at a time; over a middle dim, slice by slice (Note [peeled outer dims]).
    if (const std::int64_t stride = walker.column_stride(); stride != 0) {
      constexpr std::int64_t kTile = 1024;  // outputs per task
      const std::int64_t outputs = walker.outputs(), rows = walker.count();
      const auto* x = reinterpret_cast<const float*>(walker.run_start(0));
      for_each_group(
          (outputs + kTile - 1) / kTile, kTile * rows, [&](std::int64_t t0, std::int64_t t1) {
            for (std::int64_t t = t0; t < t1; ++t) {
              const std::int64_t j0 = t * kTile, j1 = std::min(outputs, j0 + kTile);
              extreme_columns_f32(x + j0, static_cast<std::size_t>(j1 - j0),
                                  static_cast<std::size_t>(rows), static_cast<std::size_t>(stride),
                                  is_max, out.ptr<float>() + j0);
            }
          });
      return;
    }
    if (peel_outer(in, out, num_reduced, [&](const TensorView& i, const TensorView& o) {
          extreme_family<T>(is_max, i, o, num_reduced);
        })) {
      return;
    }
  }
  struct Best {
    T value{};  // a struct, not T itself: std::vector<bool> is not a container of bools
  };
  reduce_in_chunks<Best>(
      walker,
      [&](std::int64_t m, std::int64_t b, std::int64_t e) {
        Best best;
        if constexpr (std::is_same_v<T, float>) {
          if (walker.dense_run()) {
            best.value = dense_extreme(reinterpret_cast<const float*>(walker.run_start(m)) + b,
                                       static_cast<std::size_t>(e - b), is_max);
            return best;
          }
        }
        bool first = true;
        walker.walk(m, b, e, [&](const char* p, std::int64_t) {
          const T v = *reinterpret_cast<const T*>(p);
          if (first || better(v, best.value)) best.value = v;
          first = false;
        });
        return best;
      },
      [&](std::int64_t m, std::span<const Best> parts) {
        T best = parts[0].value;
        for (const Best& q : parts) {
          if (better(q.value, best)) best = q.value;
        }
        store<T>(out, m, best);
      });
}

// logsumexp = M + log(sum exp(x - M)), from per-chunk (max, sum) pairs rescaled to the
// global max. -inf everywhere gives -inf; a +inf gives +inf; NaN propagates.
template <class T>
void logsumexp_family(const TensorView& in, const TensorView& out, std::int64_t num_reduced) {
  const ReduceWalker walker(in, num_reduced);
  struct Partial {
    double max = -INFINITY;
    Neumaier s;
    bool nan = false;
  };
  reduce_in_chunks<Partial>(
      walker,
      [&](std::int64_t m, std::int64_t b, std::int64_t e) {
        Partial part;
        if constexpr (std::is_same_v<T, float>) {
          if (walker.dense_run()) {  // vectorized: the max, then exp(x - max) in the sum lanes
            const float* x = reinterpret_cast<const float*>(walker.run_start(m)) + b;
            const auto n = static_cast<std::size_t>(e - b);
            part.max = row_max_f32(x, n, &part.nan);
            if (!part.nan && std::isfinite(part.max)) {
              thread_local AlignedVector<double> scratch;  // Note [aligned scratch]
              scratch.resize(std::max(scratch.size(), n));
              double lanes[kSumLanes] = {}, f[8];
              sum_exp_lanes_f32(x, n, part.max, scratch.data(), lanes);
              fold_lanes(lanes, f);
              for (double v : f) part.s.add(v);
            }
            return part;
          }
        }
        walker.walk(m, b, e, [&](const char* p, std::int64_t) {
          const double x = load_as_double<T>(p);
          if (std::isnan(x))
            part.nan = true;
          else
            part.max = std::fmax(part.max, x);
        });
        if (std::isfinite(part.max)) {
          walker.walk(m, b, e, [&](const char* p, std::int64_t) {
            part.s.add(std::exp(load_as_double<T>(p) - part.max));
          });
        }
        return part;
      },
      [&](std::int64_t m, std::span<const Partial> parts) {
        double gmax = -INFINITY;
        bool nan = false;
        for (const Partial& q : parts) {
          gmax = std::fmax(gmax, q.max);
          nan = nan || q.nan;
        }
        double r = gmax;
        if (nan) {
          r = NAN;
        } else if (std::isfinite(gmax)) {
          Neumaier total;
          for (const Partial& q : parts) {
            if (std::isfinite(q.max)) total.add(q.s.value() * std::exp(q.max - gmax));
          }
          r = gmax + std::log(total.value());
        }
        store<T>(out, m, convert<T>(r));
      });
}

template <bool kMax>
KernelStatus arg_kernel(const KernelCall& call) {
  const TensorView& in = call.inputs[0];
  const TensorView& out = call.outputs[0];
  const ReduceWalker walker(in, 1);
  struct Partial {
    double value = 0;
    std::int64_t index = -1;
  };
  // NaN is the extreme for both (the first NaN wins), as PyTorch.
  auto wins = [](double v, const Partial& best) {
    if (best.index < 0) return true;
    if (std::isnan(best.value)) return false;
    if (std::isnan(v)) return true;
    return kMax ? v > best.value : v < best.value;
  };
  visit_dtype(in.dtype, [&]<class T>() {
    reduce_in_chunks<Partial>(
        walker,
        [&](std::int64_t m, std::int64_t b, std::int64_t e) {
          Partial best;
          if constexpr (std::is_same_v<T, float>) {
            if (walker.dense_run()) {  // the extreme (or first NaN), then its first index
              const float* x = reinterpret_cast<const float*>(walker.run_start(m)) + b;
              const auto n = static_cast<std::size_t>(e - b);
              bool nan = false;
              const float v = row_extreme_f32(x, n, kMax, &nan);
              const float* at = nan ? std::find_if(x, x + n, [](float y) { return std::isnan(y); })
                                    : std::find(x, x + n, v);
              return Partial{*at, b + (at - x)};
            }
          }
          walker.walk(m, b, e, [&](const char* p, std::int64_t r) {
            const double v = load_as_double<T>(p);
            if (wins(v, best)) best = {v, r};
          });
          return best;
        },
        [&](std::int64_t m, std::span<const Partial> parts) {
          Partial best;
          for (const Partial& q : parts) {
            if (q.index >= 0 && wins(q.value, best)) best = q;
          }
          store<std::int64_t>(out, m, best.index);
        });
  });
  return KernelStatus::Ok;
}

template <class Fn>
KernelStatus reduce_kernel(const KernelCall& call, Fn&& fn) {
  const std::int64_t num_reduced = call.params_as<ReduceParams>().num_reduced;
  visit_dtype(call.inputs[0].dtype, [&]<class T>() { fn.template operator()<T>(num_reduced); });
  return KernelStatus::Ok;
}

KernelStatus sum_kernel(const KernelCall& call) {
  return reduce_kernel(call, [&]<class T>(std::int64_t nr) {
    sum_family<T>(call.op, call.inputs[0], call.outputs[0], nr);
  });
}
KernelStatus var_kernel(const KernelCall& call) {
  const std::int64_t correction = call.params_as<ReduceParams>().correction;
  const bool is_std = call.op == op_id("std");
  return reduce_kernel(call, [&]<class T>(std::int64_t nr) {
    if constexpr (FloatingElement<T>)
      var_family<T>(is_std, correction, call.inputs[0], call.outputs[0],
                    call.outputs.size() > 1 ? &call.outputs[1] : nullptr, nr);
  });
}
KernelStatus extreme_kernel(const KernelCall& call) {
  const bool is_max = call.op == op_id("amax");
  return reduce_kernel(call, [&]<class T>(std::int64_t nr) {
    extreme_family<T>(is_max, call.inputs[0], call.outputs[0], nr);
  });
}
KernelStatus logsumexp_kernel(const KernelCall& call) {
  return reduce_kernel(call, [&]<class T>(std::int64_t nr) {
    if constexpr (FloatingElement<T>) logsumexp_family<T>(call.inputs[0], call.outputs[0], nr);
  });
}

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  table.set(op_id("sum"), &sum_kernel, kNumericDTypes);
  table.set(op_id("prod"), &sum_kernel, kNumericDTypes);
  table.set(op_id("mean"), &sum_kernel, kFloatDTypes);
  table.set(op_id("var"), &var_kernel, kFloatDTypes);
  table.set(op_id("std"), &var_kernel, kFloatDTypes);
  table.set(op_id("var_mean"), &var_kernel, kFloatDTypes);
  table.set(op_id("norm"), &sum_kernel, kFloatDTypes);
  table.set(op_id("amax"), &extreme_kernel, kAllDTypes);
  table.set(op_id("amin"), &extreme_kernel, kAllDTypes);
  table.set(op_id("logsumexp"), &logsumexp_kernel, kFloatDTypes);
  table.set(op_id("argmax"), &arg_kernel<true>, kAllDTypes);
  table.set(op_id("argmin"), &arg_kernel<false>, kAllDTypes);
}

}  // namespace mpsim::simd
