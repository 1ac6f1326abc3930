// Random numbers (Note [random numbers] in core/ops.h). Element i of the (dense) output is a
// pure function of (seed, offset, i), so blocks can run on any thread in any order.
#include "kernels_simd/random.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/convert.h"
#include "kernels_simd/divisor.h"
#include "kernels_simd/elementwise.h"
#include "kernels_simd/normal.h"
#include "kernels_simd/philox.h"
#include "kernels_simd/philox_simd.h"

namespace mpsim::simd {
namespace {

// A uniform double in [0, 1) with 24 bits for 16/32-bit floats (every value exact in float32)
// and 53 bits for float64.
template <class T>
double unit(std::uint64_t r) {
  if constexpr (std::is_same_v<T, double>)
    return static_cast<double>(r >> 11) * 0x1p-53;
  else
    return static_cast<double>(r >> 40) * 0x1p-24;
}

// low + r for r < 2^64 with low + r representable: in uint64, so that no intermediate
// overflows (randint over the whole int64 range).
std::int64_t offset_by(std::int64_t low, std::uint64_t r) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + r);
}

// chunk(i0, bits, len) for runs of up to 256 elements covering [0, n): bits[k] are the bits of
// element first + i0 + k (philox_bits), made a vector of Philox blocks at a time.
template <class Chunk>
void for_each_bits_chunk(std::uint64_t seed, std::uint64_t offset, std::uint64_t first,
                         std::int64_t n, Chunk&& chunk) {
  constexpr std::int64_t kChunk = 256;
  std::uint64_t buf[kChunk + 2];
  for (std::int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const std::int64_t len = std::min(kChunk, n - i0);
    const std::uint64_t e0 = first + static_cast<std::uint64_t>(i0);
    const std::uint64_t b0 = e0 / 2, b1 = (e0 + static_cast<std::uint64_t>(len) + 1) / 2;
    philox_pairs(seed, offset + b0, static_cast<std::size_t>(b1 - b0), buf);
    chunk(i0, buf + (e0 - 2 * b0), len);
  }
}

KernelStatus random_kernel(const KernelCall& call) {
  const RandomParams& p = call.params_as<RandomParams>();
  const RandomDist dist = p.dist;
  const std::uint64_t seed = p.seed, offset = p.offset, range = p.range;
  const double a = p.a, b = p.b;
  const std::int64_t low = p.low;
  const InvariantDivisor divisor(range == 0 ? 1 : range);  // randint: bits mod range, exact
  const TensorView& out = call.outputs[0];
  const TensorView& in = call.inputs.empty() ? out : call.inputs[0];
  const char* base = static_cast<const char*>(out.data);
  visit_dtype(out.dtype, [&]<class T>() {
    const std::int64_t elem = sizeof(T);
    for_each_row<2>({&out, &in}, [&](const RowPointers<2>& r, std::int64_t n) {
      // The output is dense (the front end allocates it): its byte offset gives the index.
      const auto first = static_cast<std::uint64_t>((r.ptr[0] - base) / elem);
      // Philox blocks a vector at a time; the distribution chosen once per row.
      auto draw = [&](auto value) {
        for_each_bits_chunk(seed, offset, first, n,
                            [&](std::int64_t i0, const std::uint64_t* bits, std::int64_t len) {
                              for (std::int64_t k = 0; k < len; ++k) {
                                *reinterpret_cast<T*>(r.ptr[0] + (i0 + k) * r.stride[0]) =
                                    value(i0 + k, bits[k]);
                              }
                            });
      };
      if constexpr (FloatingElement<T>) {
        switch (dist) {
          case RandomDist::Uniform:
            draw([&](std::int64_t, std::uint64_t bits) {
              return convert<T>(a + (b - a) * unit<T>(bits));
            });
            break;
          case RandomDist::Normal:  // Note [normal transform]
            for_each_bits_chunk(
                seed, offset, first, n,
                [&](std::int64_t i0, const std::uint64_t* bits, std::int64_t len) {
                  double z[256];
                  normal_from_bits(bits, z, static_cast<std::size_t>(len));
                  for (std::int64_t k = 0; k < len; ++k) {
                    *reinterpret_cast<T*>(r.ptr[0] + (i0 + k) * r.stride[0]) =
                        convert<T>(a + b * z[k]);
                  }
                });
            break;
          case RandomDist::Bernoulli:
            draw([&](std::int64_t i, std::uint64_t bits) {
              return convert<T>(
                  unit<double>(bits) < load_as_double<T>(r.ptr[1] + i * r.stride[1]) ? 1.0 : 0.0);
            });
            break;
          case RandomDist::Dropout:
            draw([&](std::int64_t i, std::uint64_t bits) {
              const double x = load_as_double<T>(r.ptr[1] + i * r.stride[1]);
              return convert<T>(unit<double>(bits) < a ? 0.0 : x / (1.0 - a));
            });
            break;
          case RandomDist::Randint:
            draw([&](std::int64_t, std::uint64_t bits) {
              return convert<T>(
                  static_cast<double>(offset_by(low, divisor.remainder(bits))));
            });
            break;
        }
      } else {
        draw([&](std::int64_t, std::uint64_t bits) {  // randint only
          return convert<T>(offset_by(low, divisor.remainder(bits)));
        });
      }
    });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_random_kernels(KernelTable& table) {
  table.set(op_id("random"), &random_kernel, kAllDTypes);
}

}  // namespace mpsim::simd
