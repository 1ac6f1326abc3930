// The Stable Diffusion fusions (ONNX Runtime contrib ops): bias_add, bias_split_gelu,
// skip_layer_norm, group_norm_nhwc, multi_head_attention.
//
// Note [fused rounding]
// Each fusion equals its unfused composition in mpsim bit for bit, in Golden and in Fast: it
// rounds to the dtype exactly where the composition does, by running the composed ops' own
// kernels (add, mul, gelu, silu, layer_norm, group_norm, attention) on views of a block. One
// difference lies in the composition itself: for float16/bfloat16 the binary kernel returns,
// from two NaN operands, the first in its compiler-vectorized loop body and the second in the
// scalar remainder, so that NaN's sign depends on where blocks cut a row (docs/ops.md).
// - bias_add: t = T(x + bias), y = T(t + skip)            == add(add(x, bias), skip)
//   (float32/float64 in one pass, each add one IEEE rounding as in the binary kernel; the
//   16-bit dtypes through the binary kernel on blocks)
// - bias_split_gelu: t = T(x + bias); y = T(a * gelu(b))   == mul(a, gelu(b)), a, b halves of t
//   with gelu(b) rounded to T (Golden: evaluated in double, rounded once).
// - skip_layer_norm: s = T(T(x + skip) + bias), y = layer_norm(s) == the same composition.
// - group_norm_nhwc: group_norm of the channels-last view, then silu, each rounded.
// - multi_head_attention: the attention kernel on strided views of the packed tensors.
// So a fusion is never more accurate than its composition: it is a faster way to the same
// bits, which is what a GPU kernel's test compares against.
//
// Note [fused blocks]
// Row fusions run over fixed blocks of whole rows (about kFusedBlockElements elements, never
// split by the thread count) with tbb::simple_partitioner. A block's intermediates (x + bias,
// x + skip + bias) live in block scratch that stays in L2 while the composed kernels pass over
// it, so memory sees x, bias, skip read once and y written once: bias_add moves 3 of the
// composition's 5 tensor passes (x, t, t, skip, y), bias_split_gelu 3 of 9 (in units of y: x is
// 2, y 1; add 2 + 2, gelu 1 + 1, mul 1 + 1 + 1), skip_layer_norm 3 of 7 (5 without bias; one
// more with the sum output). The blocks do not depend on the thread count, so neither do the
// bits. Scratch is each thread's cached buffer (Scratch in fused.cc), not an allocation per
// block.
#pragma once

#include <cstdint>

#include "core/kernel_call.h"

namespace mpsim::simd {

// Elements per block of a row fusion (Note [fused blocks]): the elementwise grain
// (kElementwiseGrain), whose 128 KiB of float32 scratch fits L2 beside the block's operands.
inline constexpr std::int64_t kFusedBlockElements = 1 << 15;

void register_fused_kernels(KernelTable& table);

}  // namespace mpsim::simd
