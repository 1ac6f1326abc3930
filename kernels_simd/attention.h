// scaled_dot_product_attention, computed flash-style: per query tile, the keys and values
// stream through in blocks of kAttentionKeyBlock with an online softmax; the [L, S] score
// matrix is never formed.
//
// Note [attention numerics]
// - Golden: q, k and v are widened to double; a score is the exact-product double chain
//   sum_e q[i,e] k[j,e] (Note [gemm numerics]) times scale, plus the mask; each key block
//   updates the row's running max m, the weights p = exp(s - m) (double, relative error below
//   2^-47), their sum l (eight fixed partial sums, so the order does not depend on the SIMD
//   width) and the row's accumulator o = o * exp(m_old - m) + p @ v; the output o / l is rounded
//   once. Max error on float32: within 2 ulp of a long double softmax(q k^T scale + mask) v
//   (tests/attention_test.cc), unless the output cancels (mixed-sign v): then 0.5 ulp plus
//   2^-44 sum_j p_j |v_j|.
// - Fast: the same steps in float lanes with fused multiply-adds and a float exp (Highway's,
//   1 ulp); a row's error stays below 2^-20 relative to max |v| for S <= 4096.
// - Bits depend on the fixed key block only: identical for any thread count, any slicing and
//   any query tiling. Golden's bits are the same on every target with FMA (AVX2, AVX-512,
//   NEON), whose exp polynomial fuses; SSE4 and the scalar target can differ in rare last bits.
// - Special values as PyTorch's composition: a NaN score makes its row NaN; a row whose every
//   score is -inf (fully masked) is NaN; +inf scores give NaN (inf - inf).
//
// Note [attention memory]
// Scratch: for each head in flight, k and v packed into panels (S x (E + Ev) values of the
// accumulation type, padded to whole panels); per thread, one query tile's scores
// (kAttentionQueryTile x kAttentionKeyBlock), its packed queries and weights, and its output
// accumulator. Heads run kAttentionHeadsInFlight-at-most at a time unless slicing asks fewer;
// [2, 8, 4096, 40] float32 Fast holds about 13 MiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/kernel_call.h"

namespace mpsim::simd {

inline constexpr std::int64_t kAttentionKeyBlock = 192;  // a multiple of every target's panel

// One head: q [L, E], k [S, E], v [S, Ev], mask [L, S] (optional) and out [L, Ev], as element
// strides (rows, columns).
struct AttentionProblem {
  const void* q = nullptr;
  std::int64_t q_rs = 0, q_cs = 0;
  const void* k = nullptr;
  std::int64_t k_rs = 0, k_cs = 0;
  const void* v = nullptr;
  std::int64_t v_rs = 0, v_cs = 0;
  const void* mask = nullptr;
  std::int64_t mask_rs = 0, mask_cs = 0;
  void* out = nullptr;
  std::int64_t o_rs = 0, o_cs = 0;
};

struct AttentionConfig {
  DType dtype = DType::Float32;  // of q, k, v and out (and of an additive mask)
  bool bool_mask = false;        // the mask is bool (true = attend) rather than additive
  std::int64_t l = 0, s = 0, e = 0, ev = 0;
  double scale = 1;
  bool causal = false;     // key j > query i is masked (top-left aligned, as PyTorch)
  bool fast = false;       // Note [attention numerics]
  std::int64_t slice = 0;  // heads in flight at most (0: the default bound)
};

void attention(const AttentionConfig& config, std::span<const AttentionProblem> heads);

void register_attention_kernels(KernelTable& table);

}  // namespace mpsim::simd
