// The Stable Diffusion fusions (Note [fused rounding], Note [fused blocks] in fused.h). The front
// ends (core/fused_ops.cc) hand over contiguous operands of one floating dtype, except
// multi_head_attention, whose q, k, v and output are strided views of the packed tensors.
#include "kernels_simd/fused.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "kernels_simd/attention.h"
#include "kernels_simd/binary.h"
#include "kernels_simd/norm.h"
#include "kernels_simd/reduce_driver.h"
#include "kernels_simd/row_stats.h"
#include "kernels_simd/unary.h"

namespace mpsim::simd {
namespace {

// The kernels of the composed ops (add, mul, gelu, silu, layer_norm, group_norm), called on
// block views: the composition's rounding by construction, on every dtype and precision, with
// no second definition of its math to keep in step.
const KernelTable& parts() {
  static const KernelTable* table = [] {
    auto* t = new KernelTable();  // lives for the whole process, as the backends' tables
    register_binary_kernels(*t);
    register_unary_kernels(*t);
    register_norm_kernels(*t);
    return t;
  }();
  return *table;
}

// Runs the composed op's kernel on views; the statuses of these ops are always Ok.
void run_part(OpId op, std::span<const TensorView> inputs, const TensorView& out,
              const OpParams& params, Precision precision) {
  parts().kernel(op)(
      KernelCall{op, inputs, std::span<const TensorView>(&out, 1), params, precision});
}

// out = a (op) b through the binary kernel (alpha 1). out is never a or b, as in the
// composition, whose results are fresh tensors.
void binary_part(OpId op, const TensorView& a, const TensorView& b, const TensorView& out) {
  static const OpParams kAlphaOne = AlphaParams{Scalar(1)}, kNone;
  const TensorView in[] = {a, b};
  // Precision applies to the unary ops only: the binary ops have one rounding either way.
  run_part(op, in, out, op == op_id("add") || op == op_id("sub") ? kAlphaOne : kNone,
           Precision::Golden);
}

// Calls fn(begin, end) over [0, n) in blocks of `per_block` (Note [fused blocks]).
template <class Fn>
void for_each_block(std::int64_t n, std::int64_t per_block, Fn&& fn) {
  if (n <= 0) return;
  const std::int64_t blocks = (n + per_block - 1) / per_block;
  if (blocks == 1) {
    fn(std::int64_t{0}, n);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, blocks, 1),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t b = r.begin(); b < r.end(); ++b) {
          fn(b * per_block, std::min(n, (b + 1) * per_block));
        }
      },
      tbb::simple_partitioner());
}

// Whole rows of `len` elements per block.
std::int64_t rows_per_block(std::int64_t len) {
  return std::max<std::int64_t>(1, kFusedBlockElements / std::max<std::int64_t>(len, 1));
}

// A view of `sizes` and `strides` (element units) at data; the arrays outlive the view.
template <std::size_t N>
TensorView view_of(const void* data, DType dtype, const std::array<std::int64_t, N>& sizes,
                   const std::array<std::int64_t, N>& strides) {
  return TensorView{const_cast<void*>(data), dtype, sizes, strides};
}

// A [rows, cols] view; the arrays it spans are the caller's.
struct Matrix {
  std::array<std::int64_t, 2> sizes, strides;
  TensorView at(const void* data, DType dtype) const {
    return view_of(data, dtype, sizes, strides);
  }
};

// Bytes from `data` to element `index` of a dtype.
const char* advance(const void* data, DType dtype, std::int64_t index) {
  return static_cast<const char*>(data) + index * static_cast<std::int64_t>(dtype_size(dtype));
}

// A block's scratch: up to two buffers of the given bytes, each 64-byte aligned and uninitialized
// (every byte read is written first); at most kFusedBlockElements elements each, or one row when a
// row is longer. The memory is the thread's cached buffer, kept between blocks: a fresh 128 KiB
// allocation is an mmap and 32 page faults per block, enough to make bias_add slower than its
// composition (docs/measurements.md). A block that starts on
// a thread whose buffer is in use (TBB runs another block while a nested kernel waits) allocates
// its own.
class Scratch {
 public:
  Scratch(std::int64_t bytes0, std::int64_t bytes1) : lines0_(lines(bytes0)) {
    const std::size_t total = lines0_ + lines(bytes1);
    Cache& cache = cache_of_thread();
    if (!cache.busy) {
      cache.busy = true;
      cached_ = &cache;
      if (cache.size < total) {
        cache.data.reset(new Line[total]);
        cache.size = total;
      }
      base_ = cache.data.get();
    } else {
      own_.reset(new Line[std::max<std::size_t>(total, 1)]);
      base_ = own_.get();
    }
  }
  ~Scratch() {
    if (cached_ != nullptr) cached_->busy = false;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* first() const { return base_; }
  void* second() const { return base_ + lines0_; }

 private:
  struct alignas(64) Line {
    unsigned char b[64];
  };
  struct Cache {
    std::unique_ptr<Line[]> data;
    std::size_t size = 0;
    bool busy = false;
  };
  static Cache& cache_of_thread() {
    thread_local Cache cache;
    return cache;
  }
  static std::size_t lines(std::int64_t bytes) {
    return static_cast<std::size_t>((bytes + 63) / 64);
  }

  std::size_t lines0_;
  Cache* cached_ = nullptr;
  std::unique_ptr<Line[]> own_;
  Line* base_ = nullptr;
};

// float32 and float64: y = (x + bias) + skip in one pass, each add one IEEE rounding, which is
// what the binary kernel's add does on these dtypes: the composition's bits without its
// intermediate tensor (Note [fused rounding]).
template <class T>
void bias_add_direct(const T* x, const T* bias, const T* skip, T* y, std::int64_t c,
                     std::int64_t rows) {
  for_each_block(rows, rows_per_block(c), [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * c;
      const T* sr = skip + r * c;
      T* yr = y + r * c;
      for (std::int64_t j = 0; j < c; ++j) {
        const T t = xr[j] + bias[j];
        yr[j] = t + sr[j];
      }
    }
  });
}

// inputs: x [rows, C], bias [C], skip [rows, C]; output y [rows, C], all contiguous.
// y = add(add(x, bias), skip): in one pass for float32/float64 (bias_add_direct); for the
// 16-bit dtypes through the binary kernel on blocks, the first sum in block scratch.
KernelStatus bias_add_kernel(const KernelCall& call) {
  const TensorView& y = call.outputs[0];
  const DType dt = y.dtype;
  if (dt == DType::Float32 || dt == DType::Float64) {
    const std::int64_t c = y.sizes.back(), rows = y.numel() / std::max<std::int64_t>(c, 1);
    if (dt == DType::Float32) {
      bias_add_direct(static_cast<const float*>(call.inputs[0].data),
                      static_cast<const float*>(call.inputs[1].data),
                      static_cast<const float*>(call.inputs[2].data), static_cast<float*>(y.data),
                      c, rows);
    } else {
      bias_add_direct(static_cast<const double*>(call.inputs[0].data),
                      static_cast<const double*>(call.inputs[1].data),
                      static_cast<const double*>(call.inputs[2].data), static_cast<double*>(y.data),
                      c, rows);
    }
    return KernelStatus::Ok;
  }
  const auto esize = static_cast<std::int64_t>(dtype_size(dt));
  const std::int64_t c = y.sizes.back(), rows = y.numel() / std::max<std::int64_t>(c, 1);
  for_each_block(rows, rows_per_block(c), [&](std::int64_t r0, std::int64_t r1) {
    const Scratch scratch((r1 - r0) * c * esize, 0);
    void* t = scratch.first();
    const Matrix dense{{r1 - r0, c}, {c, 1}}, row{{r1 - r0, c}, {0, 1}};
    binary_part(op_id("add"), dense.at(advance(call.inputs[0].data, dt, r0 * c), dt),
                row.at(call.inputs[1].data, dt), dense.at(t, dt));
    binary_part(op_id("add"), dense.at(t, dt),
                dense.at(advance(call.inputs[2].data, dt, r0 * c), dt),
                dense.at(advance(y.data, dt, r0 * c), dt));
  });
  return KernelStatus::Ok;
}

// inputs: x [rows, 2D], bias [2D]; output y [rows, D], contiguous. precision: gelu's.
// t = add(x, bias) and g = gelu(t[:, D:]) in block scratch; y = mul(t[:, :D], g).
KernelStatus bias_split_gelu_kernel(const KernelCall& call) {
  static const OpParams kGeluErf = GeluParams{GeluApproximation::None};
  const TensorView& y = call.outputs[0];
  const DType dt = y.dtype;
  const auto esize = static_cast<std::int64_t>(dtype_size(dt));
  const std::int64_t d = y.sizes.back(), rows = y.numel() / std::max<std::int64_t>(d, 1);
  for_each_block(rows, rows_per_block(2 * d), [&](std::int64_t r0, std::int64_t r1) {
    const std::int64_t nr = r1 - r0;
    const Scratch scratch(nr * 2 * d * esize, nr * d * esize);
    void* t = scratch.first();
    void* g = scratch.second();
    const Matrix wide{{nr, 2 * d}, {2 * d, 1}}, bias{{nr, 2 * d}, {0, 1}};
    binary_part(op_id("add"), wide.at(advance(call.inputs[0].data, dt, r0 * 2 * d), dt),
                bias.at(call.inputs[1].data, dt), wide.at(t, dt));
    const Matrix half{{nr, d}, {2 * d, 1}}, dense{{nr, d}, {d, 1}};
    const TensorView gate[] = {half.at(advance(t, dt, d), dt)};
    run_part(op_id("gelu"), gate, dense.at(g, dt), kGeluErf, call.precision);
    binary_part(op_id("mul"), half.at(t, dt), dense.at(g, dt),
                dense.at(advance(y.data, dt, r0 * d), dt));
  });
  return KernelStatus::Ok;
}

// inputs: x [rows, C], skip [rows, C], gamma [C], beta [C] and, with has_bias, bias [C];
// outputs: y [rows, C] and, when given, the sum [rows, C]; contiguous.
// s = add(add(x, skip), bias); y = layer_norm(s). float32 rows of at most kReduceGrain
// elements form s row by row inside layer_norm's row loop (Note [summed rows]); the others
// form it per block in the sum output or block scratch (float32/float64 in one pass, each add
// one IEEE rounding; the 16-bit dtypes through the binary kernel, x + skip in scratch of its
// own when there is a bias) and run layer_norm's kernel on the block.
KernelStatus skip_layer_norm_kernel(const KernelCall& call) {
  const TensorView& y = call.outputs[0];
  const TensorView* sum = call.outputs.size() > 1 ? &call.outputs[1] : nullptr;
  const SkipLayerNormParams& params = call.params_as<SkipLayerNormParams>();
  const bool has_bias = params.has_bias;
  // layer_norm's kernel over each row.
  const OpParams norm = NormParams{1, params.eps};
  const DType dt = y.dtype;
  const auto esize = static_cast<std::int64_t>(dtype_size(dt));
  const std::int64_t c = y.sizes.back(), rows = y.numel() / std::max<std::int64_t>(c, 1);
  // Note [summed rows]: float32 rows that layer_norm's kernel would run as dense rows (at most
  // kReduceGrain elements) take the adds inside its row loop, with its bits.
  if (dt == DType::Float32 && c <= kReduceGrain) {
    const auto* x = static_cast<const float*>(call.inputs[0].data);
    const auto* skip = static_cast<const float*>(call.inputs[1].data);
    const auto* bias = has_bias ? static_cast<const float*>(call.inputs[4].data) : nullptr;
    const bool stream = y.numel() * static_cast<std::int64_t>(sizeof(float)) >= kNormStreamMinBytes;
    for_each_block(rows, rows_per_block(c), [&](std::int64_t r0, std::int64_t r1) {
      NormRows p{x + r0 * c,
                 static_cast<float*>(y.data) + r0 * c,
                 static_cast<const float*>(call.inputs[2].data),
                 static_cast<const float*>(call.inputs[3].data),
                 static_cast<std::size_t>(r1 - r0),
                 static_cast<std::size_t>(c),
                 c,
                 c,
                 0,
                 0,
                 1,
                 1,
                 params.eps,
                 false,
                 stream};
      p.skip = skip + r0 * c;
      p.add_bias = bias;
      p.sum = sum != nullptr ? static_cast<float*>(sum->data) + r0 * c : nullptr;
      p.skip_stride = p.sum_stride = c;
      normalize_rows_f32(p);
    });
    return KernelStatus::Ok;
  }
  for_each_block(rows, rows_per_block(c), [&](std::int64_t r0, std::int64_t r1) {
    const std::int64_t nr = r1 - r0;
    const Scratch scratch(has_bias ? nr * c * esize : 0, sum != nullptr ? 0 : nr * c * esize);
    const Matrix dense{{nr, c}, {c, 1}}, row{{nr, c}, {0, 1}};
    const TensorView s =
        dense.at(sum != nullptr ? advance(sum->data, dt, r0 * c) : scratch.second(), dt);
    if (dt == DType::Float32 || dt == DType::Float64) {  // the adds in one pass, as bias_add
      visit_dtype(dt, [&]<class T>() {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          const T* x = static_cast<const T*>(call.inputs[0].data) + r0 * c;
          const T* k = static_cast<const T*>(call.inputs[1].data) + r0 * c;
          const T* b = has_bias ? static_cast<const T*>(call.inputs[4].data) : nullptr;
          T* out = static_cast<T*>(s.data);
          for (std::int64_t r = 0; r < nr; ++r) {
            for (std::int64_t j = 0; j < c; ++j) {
              const T t = x[r * c + j] + k[r * c + j];
              out[r * c + j] = b != nullptr ? t + b[j] : t;
            }
          }
        }
      });
    } else {
      const TensorView xs = has_bias ? dense.at(scratch.first(), dt) : s;
      binary_part(op_id("add"), dense.at(advance(call.inputs[0].data, dt, r0 * c), dt),
                  dense.at(advance(call.inputs[1].data, dt, r0 * c), dt), xs);
      if (has_bias) binary_part(op_id("add"), xs, row.at(call.inputs[4].data, dt), s);
    }
    const TensorView in[] = {s, row.at(call.inputs[2].data, dt), row.at(call.inputs[3].data, dt)};
    run_part(op_id("layer_norm"), in, dense.at(advance(y.data, dt, r0 * c), dt), norm,
             call.precision);
  });
  return KernelStatus::Ok;
}

// inputs: x [N, H, W, C], gamma [C], beta [C]; output y [N, H, W, C]; contiguous. precision:
// silu's.
KernelStatus group_norm_nhwc_kernel(const KernelCall& call) {
  const TensorView& x = call.inputs[0];
  const TensorView& y = call.outputs[0];
  const std::int64_t h = x.sizes[1], w = x.sizes[2], c = x.sizes[3];
  const GroupNormNhwcParams& params = call.params_as<GroupNormNhwcParams>();
  const std::int64_t groups = params.num_groups;
  const std::int64_t cg = c / groups, sample = h * w * c;
  const OpParams norm = NormParams{3, params.eps};
  // group_norm's view of one sample, as its front end builds it for the channels-last NCHW
  // tensor x.permute({0, 3, 1, 2}): [1, G, C/G, H, W], a group being the trailing three dims.
  const std::array<std::int64_t, 5> sizes = {1, groups, cg, h, w};
  const std::array<std::int64_t, 5> xs = {sample, cg, 1, w * c, c}, ps = {0, cg, 1, 0, 0};
  const std::array<std::int64_t, 1> flat = {sample}, unit = {1};
  // One sample at a time (the norm kernel runs its groups in parallel), so the silu pass reads
  // a sample's output while it is still in the last-level cache.
  for (std::int64_t n = 0; n < x.sizes[0]; ++n) {
    const char* xn = advance(x.data, y.dtype, n * sample);
    const char* yn = advance(y.data, y.dtype, n * sample);
    const TensorView in[] = {view_of(xn, y.dtype, sizes, xs),
                             view_of(call.inputs[1].data, y.dtype, sizes, ps),
                             view_of(call.inputs[2].data, y.dtype, sizes, ps)};
    run_part(op_id("group_norm"), in, view_of(yn, y.dtype, sizes, xs), norm, call.precision);
    if (params.silu) {  // in place: the unary kernels allow out == in
      const TensorView s[] = {view_of(yn, y.dtype, flat, unit)};
      run_part(op_id("silu"), s, s[0], OpParams{}, call.precision);
    }
  }
  return KernelStatus::Ok;
}

// inputs: q [B, H, L, D], k [B, H, S, D], v [B, H, S, D], strided views of the packed tensors;
// output [B, H, L, D], a view of [B, L, H * D].
KernelStatus multi_head_attention_kernel(const KernelCall& call) {
  const TensorView& q = call.inputs[0];
  const TensorView& k = call.inputs[1];
  const TensorView& v = call.inputs[2];
  const TensorView& out = call.outputs[0];
  AttentionConfig config;
  config.dtype = out.dtype;
  config.l = q.sizes[2];
  config.s = k.sizes[2];
  config.e = q.sizes[3];
  config.ev = v.sizes[3];
  config.scale = call.params_as<MultiHeadAttentionParams>().scale;
  config.fast = call.fast();
  const std::int64_t batch = q.sizes[0], heads = q.sizes[1];
  const auto esize = static_cast<std::int64_t>(dtype_size(out.dtype));
  auto at = [&](const TensorView& t, std::int64_t b, std::int64_t hd) {
    return static_cast<char*>(t.data) + (b * t.strides[0] + hd * t.strides[1]) * esize;
  };
  std::vector<AttentionProblem> problems;
  problems.reserve(static_cast<std::size_t>(batch * heads));
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t hd = 0; hd < heads; ++hd) {
      problems.push_back(AttentionProblem{at(q, b, hd), q.strides[2], q.strides[3], at(k, b, hd),
                                          k.strides[2], k.strides[3], at(v, b, hd), v.strides[2],
                                          v.strides[3], nullptr, 0, 0, at(out, b, hd),
                                          out.strides[2], out.strides[3]});
    }
  }
  attention(config, problems);
  return KernelStatus::Ok;
}

}  // namespace

void register_fused_kernels(KernelTable& table) {
  table.set(op_id("bias_add"), bias_add_kernel, kFloatDTypes);
  table.set(op_id("bias_split_gelu"), bias_split_gelu_kernel, kFloatDTypes);
  table.set(op_id("skip_layer_norm"), skip_layer_norm_kernel, kFloatDTypes);
  table.set(op_id("group_norm_nhwc"), group_norm_nhwc_kernel, kFloatDTypes);
  table.set(op_id("multi_head_attention"), multi_head_attention_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd
