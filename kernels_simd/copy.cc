// copy (contiguous(), clone(), to(dtype), copy_), fill and arange. Conversions follow
// Note [dtype conversion] in core/convert.h.
#include "kernels_simd/copy.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/convert.h"
#include "core/shape.h"
#include "kernels_simd/elementwise.h"
#include "kernels_simd/stream_fence.h"
#include "kernels_simd/transpose.h"

namespace mpsim::simd {
namespace {

// Note [tiled transpose]
// A copy whose output rows run across the input's contiguous dim (permute to channels-last,
// .t().contiguous()) would read each output row's elements from rows of the input a whole row
// apart: one cache line, and on 4 KiB pages one TLB entry, per element, and with power-of-two
// row lengths every access in the same cache set. Instead the copy runs over blocks of kTileJ
// consecutive positions j along the input's contiguous dim (one TBB task each), and within a
// block over strips of one cache line of j that walk down every k (transpose.cc): each input
// line is used whole as it arrives, the strip's output rows are written front to back, and
// 16-byte squares go through registers. This is bound by the latency of reading lines a
// whole input row apart (no hardware prefetcher follows them; software prefetch, wider tiles,
// 16-row tiles read along j and streaming stores of 16-byte squares all measured slower).
// Large outputs take the streamed transpose instead (Note [streamed transpose]). Any split
// of the blocks gives the same bytes (a copy), so blocks run in parallel freely.
//
// Note [streamed transpose]
// The strips above wait on memory latency twice: the 320 lines of a strip's column are read a whole
// row apart, beyond any hardware prefetcher, and a line is written in four 16-byte pieces, each
// store a read-for-ownership of a line that is not in cache. Waiting so on L3's latency, the strips
// take up to several times as long as a memcpy of the same bytes ([2, 320, 4096] floats, two
// threads, scratch program). An output of at least kStreamedTransposeMinBytes, 64-byte aligned
// rows, instead runs in bands of 32 input rows (transpose.cc): each row is read front to back (32
// sequential streams, which the L2 streamer follows), a step transposes a tile of N positions j by
// one cache line of k in registers (Note [de-interleave transpose]: 16 x 16 floats on AVX-512) and
// writes N whole lines with streaming stores, which read nothing first and whose order does not
// matter: close to the memcpy in the same scratch program. Normal stores in the same order are
// several times slower (a read-for-ownership per line, scattered), so the output must be large
// enough that leaving the caches costs nothing: from 1 MiB, where the band order already beats the
// strips ([2, 320, 1024]) (docs/measurements.md).
constexpr std::int64_t kStreamedTransposeMinBytes = std::int64_t{1} << 20;

template <class T>
bool transpose_copy(const TensorView& out, const TensorView& in) {
  constexpr std::int64_t kTileJ = 512, kMinSide = 16;  // smaller sides: the plain copy
  constexpr std::int64_t kStreamedTileJ = 1024;
  const detail::Layout<2> layout({&out, &in});
  const std::int64_t nd = static_cast<std::int64_t>(layout.sizes.size());
  const std::int64_t e = sizeof(T), k = nd - 1;
  const auto& os = layout.strides[0];
  const auto& is = layout.strides[1];
  // A broadcast innermost dim (input stride 0) is a fill of each row (Note [dense fills]).
  if (nd < 2 || os[k] != e || is[k] == e || is[k] == 0) return false;
  std::int64_t j = -1;
  for (std::int64_t d = 0; d < k; ++d) {
    if (is[d] == e) j = d;
  }
  if (j < 0 || layout.sizes[j] < kMinSide || layout.sizes[k] < kMinSide) return false;
  const std::int64_t size_j = layout.sizes[j], size_k = layout.sizes[k];
  std::int64_t outer = 1;
  for (std::int64_t d = 0; d < k; ++d) outer *= d == j ? 1 : layout.sizes[d];
  // Streamed only with every output row on a cache line: the base and each dim's stride.
  bool streamed = out.numel() * e >= kStreamedTransposeMinBytes &&
                  reinterpret_cast<std::uintptr_t>(out.data) % 64 == 0;
  for (std::int64_t d = 0; d < k; ++d) streamed = streamed && os[d] % 64 == 0;
  const std::int64_t tile_j = streamed ? kStreamedTileJ : kTileJ;
  const std::int64_t blocks_j = (size_j + tile_j - 1) / tile_j;
  auto run = [&](std::int64_t b) {
    // Base pointers of outer index b / blocks_j (row-major over the dims other than j, k).
    std::int64_t rest = b / blocks_j;
    char* o = static_cast<char*>(out.data);
    const char* x = static_cast<const char*>(in.data);
    for (std::int64_t d = k - 1; d >= 0; --d) {
      if (d == j) continue;
      o += (rest % layout.sizes[d]) * os[d];
      x += (rest % layout.sizes[d]) * is[d];
      rest /= layout.sizes[d];
    }
    const std::int64_t j0 = (b % blocks_j) * tile_j, j1 = std::min(size_j, j0 + tile_j);
    (streamed ? transpose_block_streamed : transpose_block)(
        reinterpret_cast<T*>(o) + j0 * (os[j] / e), reinterpret_cast<const T*>(x) + j0, j1 - j0,
        size_k, os[j] / e, is[k] / e, sizeof(T));
  };
  const std::int64_t blocks = outer * blocks_j;
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, blocks, 1),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t b = r.begin(); b < r.end(); ++b) run(b);
                    });
  return true;
}

// Whether a and b lay their elements out alike (the same strides, in elements, over every dim
// of more than one element) and densely: some order of the dims is a contiguous layout (a
// channels-last tensor, a permuted contiguous one). Such a copy runs as one flat run.
bool same_dense_layout(const TensorView& a, const TensorView& b) {
  for (std::size_t d = 0; d < a.sizes.size(); ++d) {
    if (a.sizes[d] != 1 && a.strides[d] != b.strides[d]) return false;
  }
  return non_overlapping_and_dense(a.sizes, a.strides);
}

// Note [dense fills]
// A dense row of one value (fill, zeros, full; a copy from a broadcast input: expand(...)
// .contiguous(), repeat of a [2, 320, 1, 1] time embedding) is written as a run: memset where the
// value's bytes are all equal (zeros), else whole vectors of the value (fill_run, per SIMD target;
// std::fill_n, built for the baseline target, ran at half memset's rate, and copying on a 4 KiB
// block of values paid a memcpy call per block); the strided element loop stored one element a
// cycle, far slower (`elementwise_bench --benchmark_filter=fill/`; docs/measurements.md).
template <class T>
void fill_row(char* dst, std::int64_t n, T v) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  if (std::all_of(bytes, bytes + sizeof(T), [&](unsigned char b) { return b == bytes[0]; })) {
    std::memset(dst, bytes[0], static_cast<std::size_t>(n) * sizeof(T));
    return;
  }
  using Bits = std::conditional_t<
      sizeof(T) == 1, std::uint8_t,
      std::conditional_t<sizeof(T) == 2, std::uint16_t,
                         std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
  static_assert(sizeof(Bits) == sizeof(T));
  Bits bits;
  std::memcpy(&bits, &v, sizeof(T));
  fill_run(dst, n, sizeof(T), bits);
}

// Note [streamed runs]
// A copy into an output of kStreamingStoreMinBytes or more (or a part of one: cat) writes its dense
// runs of kStreamedRunMinBytes or more with streaming stores, no fence per run, and fences once per
// block of rows (for_each_row's block_done, on the thread that stored them). Runs of a few lines
// are worth streaming then: a cat of two channels-last [2, 320, 64, 64] along the channels
// (1280-byte runs), one thread, runs faster than with normal stores (a fence per run cost more
// still; `elementwise_bench --benchmark_filter=cat_channels_last`; docs/measurements.md).
constexpr std::size_t kStreamedRunMinBytes = 256;

// A complex part (Half, float or double) of a complex element type, and the element's parts.
template <class C>
struct ComplexPart {
  using type = typename C::value_type;
};
template <>
struct ComplexPart<ComplexHalf> {
  using type = Half;
};
template <class C>
using part_t = typename ComplexPart<C>::type;
template <ComplexElement C>
std::pair<part_t<C>, part_t<C>> parts(const C& c) {
  if constexpr (std::is_same_v<C, ComplexHalf>)
    return {c.real, c.imag};
  else
    return {c.real(), c.imag()};
}
template <ComplexElement C>
C make_complex(part_t<C> re, part_t<C> im) {
  if constexpr (std::is_same_v<C, ComplexHalf>)
    return ComplexHalf{re, im};
  else
    return C(re, im);
}

// Note [complex conversions]
// Each part converts once, directly (Note [dtype conversion]): a real source is the real part
// with imaginary +0; complex to complex converts both parts; complex to bool is true where
// either part is non-zero (NaN included). Complex to another real dtype keeps the real part
// here, but Tensor::copy_ refuses that conversion before it reaches the kernel (it would drop
// the imaginary part silently; docs/ops.md).
template <Element To, Element From>
To convert_complex(const From& v) {
  if constexpr (ComplexElement<To> && ComplexElement<From>) {
    const auto [re, im] = parts(v);
    return make_complex<To>(convert<part_t<To>>(re), convert<part_t<To>>(im));
  } else if constexpr (ComplexElement<To>) {
    return make_complex<To>(convert<part_t<To>>(v), part_t<To>(0.0f));
  } else {
    const auto [re, im] = parts(v);
    if constexpr (std::is_same_v<To, bool>)
      return convert<bool>(re) || convert<bool>(im);
    else
      return convert<To>(re);
  }
}

// copy_ where either side is complex: an element loop (these are the transforms' inputs and
// outputs, not the hot path of a model).
void copy_complex(const TensorView& out, const TensorView& in) {
  auto run = [&]<class To, class From>() {
    for_each_row<2>({&out, &in}, [&](const RowPointers<2>& r, std::int64_t n) {
      for (std::int64_t i = 0; i < n; ++i) {
        From v;
        std::memcpy(&v, r.ptr[1] + i * r.stride[1], sizeof(From));
        const To w = convert_complex<To>(v);
        std::memcpy(r.ptr[0] + i * r.stride[0], &w, sizeof(To));
      }
    });
  };
  if (is_complex(out.dtype) && is_complex(in.dtype)) {
    visit_complex_dtype(out.dtype, [&]<class To>() {
      visit_complex_dtype(in.dtype, [&]<class From>() {
        if constexpr (std::is_same_v<To, From>) {
          for_each_row<2>({&out, &in}, [&](const RowPointers<2>& r, std::int64_t n) {
            for (std::int64_t i = 0; i < n; ++i) {
              std::memcpy(r.ptr[0] + i * r.stride[0], r.ptr[1] + i * r.stride[1], sizeof(To));
            }
          });
        } else {
          run.template operator()<To, From>();
        }
      });
    });
  } else if (is_complex(out.dtype)) {
    visit_complex_dtype(out.dtype, [&]<class To>() {
      visit_dtype(in.dtype, [&]<class From>() { run.template operator()<To, From>(); });
    });
  } else {
    visit_dtype(out.dtype, [&]<class To>() {
      visit_complex_dtype(in.dtype, [&]<class From>() { run.template operator()<To, From>(); });
    });
  }
}

KernelStatus copy_kernel(const KernelCall& call) {
  if (is_complex(call.outputs[0].dtype) || is_complex(call.inputs[0].dtype)) {
    copy_complex(call.outputs[0], call.inputs[0]);
    return KernelStatus::Ok;
  }
  // Note [flat copies]
  // Two tensors of one dense layout (channels-last, any permuted contiguous one) are copied in
  // memory order as one run, not along their last logical dim, which channels-last lays C elements
  // apart: float16 -> float32 of a channels-last [2, 320, 64, 64] on 2 threads runs far faster as a
  // run than element by element (a scratch timing of copy_; docs/measurements.md).
  const std::int64_t numel = call.outputs[0].numel();
  const bool flat =
      call.outputs[0].sizes.size() > 1 && same_dense_layout(call.outputs[0], call.inputs[0]);
  const std::int64_t unit = 1;
  TensorView flat_out = call.outputs[0], flat_in = call.inputs[0];
  if (flat) {
    flat_out.sizes = flat_in.sizes = std::span<const std::int64_t>(&numel, 1);
    flat_out.strides = flat_in.strides = std::span<const std::int64_t>(&unit, 1);
  }
  const TensorView& out = flat_out;
  const TensorView& in = flat_in;
  visit_dtype(out.dtype, [&]<class To>() {
    visit_dtype(in.dtype, [&]<class From>() {
      if constexpr (std::is_same_v<To, From>) {
        if (out.numel() >= kElementwiseGrain && transpose_copy<To>(out, in)) return;
      }
      // Note [streaming stores] (elementwise.h): a dense copy this large skips the
      // read-for-ownership of its output lines. CopyParams: the whole output that this copy
      // is a part of (cat).
      const auto* part = std::get_if<CopyParams>(&call.params);
      const std::int64_t whole = std::max(out.numel() * static_cast<std::int64_t>(sizeof(To)),
                                          part == nullptr ? 0 : part->output_bytes);
      const bool stream = whole >= kStreamingStoreMinBytes;
      for_each_row<2>(
          {&out, &in},
          [&](const RowPointers<2>& r, std::int64_t n) {
            if constexpr (std::is_same_v<To, From>) {
              if (r.stride[0] == sizeof(To) && r.stride[1] == sizeof(From)) {
                const auto bytes = static_cast<std::size_t>(n) * sizeof(To);
                if (stream && bytes >= kStreamedRunMinBytes) {  // Note [streamed runs]
                  stream_copy_unfenced(r.ptr[0], r.ptr[1], bytes);
                } else {
                  std::memcpy(r.ptr[0], r.ptr[1], bytes);
                }
                return;
              }
              if (r.stride[0] == sizeof(To) && r.stride[1] == 2 * sizeof(From)) {  // step 2
                take_even(r.ptr[0], r.ptr[1], n, sizeof(To));
                return;
              }
              if (r.stride[0] == sizeof(To) && r.stride[1] == 0) {  // Note [dense fills]
                fill_row(r.ptr[0], n, *reinterpret_cast<const From*>(r.ptr[1]));
                return;
              }
            }
            // Dense rows between float32 and the 16-bit types: the scalar conversions' bits, in
            // vectors (transpose.h).
            if (r.stride[0] == sizeof(To) && r.stride[1] == sizeof(From)) {
              const auto count = static_cast<std::size_t>(n);
              if constexpr (std::is_same_v<From, float> && Float16Like<To>) {
                (std::is_same_v<To, Half> ? f32_to_f16_row : f32_to_bf16_row)(
                    reinterpret_cast<const float*>(r.ptr[1]),
                    reinterpret_cast<std::uint16_t*>(r.ptr[0]), count);
                return;
              }
              if constexpr (std::is_same_v<From, float> && (std::is_same_v<To, std::int32_t> ||
                                                            std::is_same_v<To, std::int64_t>)) {
                f32_to_int_row(reinterpret_cast<const float*>(r.ptr[1]),
                               reinterpret_cast<To*>(r.ptr[0]), count);
                return;
              }
              if constexpr (std::is_same_v<To, float> && Float16Like<From>) {
                (std::is_same_v<From, Half> ? f16_to_f32_row : bf16_to_f32_row)(
                    reinterpret_cast<const std::uint16_t*>(r.ptr[1]),
                    reinterpret_cast<float*>(r.ptr[0]), count);
                return;
              }
            }
            for (std::int64_t i = 0; i < n; ++i) {
              *reinterpret_cast<To*>(r.ptr[0] + i * r.stride[0]) =
                  convert<To>(*reinterpret_cast<const From*>(r.ptr[1] + i * r.stride[1]));
            }
          },
          [stream] {
            if (stream) stream_fence();  // Note [streamed runs]
          });
    });
  });
  return KernelStatus::Ok;
}

template <class T>
T scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, bool>)
    return s.to_double() != 0;
  else if constexpr (FloatingElement<T>)
    return convert<T>(s.to_double());
  else if (s.is_floating())
    return convert<T>(s.to_double());
  else
    return static_cast<T>(s.to_int());
}

KernelStatus fill_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const Scalar value = call.params_as<FillParams>().value;
  if (is_complex(out.dtype)) {  // a real value: imaginary part +0
    visit_complex_dtype(out.dtype, [&]<class T>() {
      const T v = make_complex<T>(scalar_as<part_t<T>>(value), part_t<T>(0.0f));
      for_each_row<1>({&out}, [&](const RowPointers<1>& r, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) {
          std::memcpy(r.ptr[0] + i * r.stride[0], &v, sizeof(T));
        }
      });
    });
    return KernelStatus::Ok;
  }
  visit_dtype(out.dtype, [&]<class T>() {
    const T v = scalar_as<T>(value);
    for_each_row<1>({&out}, [&](const RowPointers<1>& r, std::int64_t n) {
      if (r.stride[0] == sizeof(T)) return fill_row(r.ptr[0], n, v);  // Note [dense fills]
      for (std::int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) = v;
    });
  });
  return KernelStatus::Ok;
}

// Runs value(i) for every element i of a 1-d output, in fixed blocks in parallel (the values
// depend only on i, so any split gives the same bits).
template <class T, class Value>
void fill_indexed(const TensorView& out, Value&& value) {
  T* base = out.ptr<T>();
  const std::int64_t stride = out.strides.empty() ? 1 : out.strides[0];
  const std::int64_t n = out.numel();
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, kElementwiseGrain),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t i = r.begin(); i < r.end(); ++i) {
                        base[i * stride] = value(i);
                      }
                    });
}

// out[i] = start + i * step, computed in int64 for integer arguments and in double otherwise
// (PyTorch's accumulate types), then converted once.
KernelStatus arange_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const Scalar start = call.params_as<ArangeParams>().start;
  const Scalar step = call.params_as<ArangeParams>().step;
  if (!start.is_floating() && !step.is_floating()) {
    const std::int64_t a = start.to_int(), s = step.to_int();
    visit_dtype(out.dtype, [&]<class T>() {
      fill_indexed<T>(out, [&](std::int64_t i) { return convert<T>(a + i * s); });
    });
  } else {
    const double a = start.to_double(), s = step.to_double();
    visit_dtype(out.dtype, [&]<class T>() {
      fill_indexed<T>(out, [&](std::int64_t i) {
        return convert<T>(a + static_cast<double>(i) * s);
      });
    });
  }
  return KernelStatus::Ok;
}

// linspace(start, end, steps) as torch.linspace, in double: the first half counts up from
// start, the second half down from end (so both ends are exact), then one conversion.
KernelStatus linspace_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const double start = call.params_as<LinspaceParams>().start;
  const double end = call.params_as<LinspaceParams>().end;
  const std::int64_t steps = out.numel();
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0;
  const std::int64_t half = steps == 1 ? 1 : steps / 2;
  visit_dtype(out.dtype, [&]<class T>() {
    fill_indexed<T>(out, [&](std::int64_t i) {
      return convert<T>(i < half ? start + step * static_cast<double>(i)
                                 : end - step * static_cast<double>(steps - 1 - i));
    });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_copy_kernels(KernelTable& table) {
  table.set(op_id("copy"), &copy_kernel, kAllAndComplexDTypes);
  table.set(op_id("fill"), &fill_kernel, kAllAndComplexDTypes);
  table.set(op_id("arange"), &arange_kernel, kAllDTypes);
  table.set(op_id("linspace"), &linspace_kernel, kAllDTypes);
}

}  // namespace mpsim::simd
