// scaled_dot_product_attention (attention.h): flash-style tiles on the GEMM micro-kernel.
// Per head, k is packed as transposed panels (E x kNr) and v as panels (S x kNr); per query
// tile, the queries are packed once, and for each key block the scores come from the
// micro-kernel (queries x keys, chains over E), the online softmax updates each row, and
// the weights, packed as panels, multiply the value panels into the row accumulators.
// Numerics: Note [attention numerics]; memory: Note [attention memory].
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/attention.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels_simd/attention.h"
#include "kernels_simd/gemm-inl.h"
#include "kernels_simd/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Query rows per task: 8 micro-kernel row panels. A tile's scores (64 x 192 doubles, 96 KiB)
// and weights stay in L2 between the two products.
constexpr std::int64_t kQueryTile = kRows * 8;
constexpr std::int64_t kKeyBlock = kAttentionKeyBlock;
static_assert(kKeyBlock % PanelWidth<float>() == 0 && kKeyBlock % PanelWidth<double>() == 0);
// Packed k and v of the heads in flight stay below this many bytes unless one head needs more.
constexpr std::size_t kPackedHeadsBytes = std::size_t{16} << 20;

// exp(x) for x <= 0 (x - max of the row), zero below the range where it underflows: those
// weights are below 2^-1000 (double) or 2^-125 (float) of the row's largest, which is 1.
template <class D>
HWY_INLINE hn::Vec<D> ExpNonPositive(D d, hn::Vec<D> x) {
  using T = hn::TFromD<D>;
  const T lowest = std::is_same_v<T, double> ? T(-708) : T(-87);
  const auto small = hn::Lt(x, hn::Set(d, lowest));
  const auto xc = hn::Max(x, hn::Set(d, lowest));
  if constexpr (std::is_same_v<T, double>) {
    return hn::IfThenZeroElse(small, ExpCore(d, xc));
  } else {
    return hn::IfThenZeroElse(small, hn::Exp(d, xc));
  }
}

template <class In, class Acc>
class Attention {
 public:
  static constexpr std::int64_t kNr = PanelWidth<Acc>();

  explicit Attention(const AttentionConfig& c)
      : c_(c),
        key_panels_((c.s + kNr - 1) / kNr),
        value_panels_((c.ev + kNr - 1) / kNr),
        evp_(value_panels_ * kNr) {}

  std::size_t PackedSize() const {
    return static_cast<std::size_t>(key_panels_ * kNr * c_.e + value_panels_ * kNr * c_.s);
  }

  void PackHead(const AttentionProblem& h, Acc* packed) const {
    const In* k = static_cast<const In*>(h.k);
    const In* v = static_cast<const In*>(h.v);
    for (std::int64_t p = 0; p < key_panels_; ++p) {  // k^T panels: E rows of kNr keys
      PackB(k + p * kNr * h.k_rs, h.k_cs, h.k_rs, std::min(kNr, c_.s - p * kNr), c_.e,
            packed + p * kNr * c_.e);
    }
    Acc* vp = packed + key_panels_ * kNr * c_.e;
    for (std::int64_t p = 0; p < value_panels_; ++p) {  // v panels: S rows of kNr columns
      PackB(v + p * kNr * h.v_cs, h.v_rs, h.v_cs, std::min(kNr, c_.ev - p * kNr), c_.s,
            vp + p * kNr * c_.s);
    }
  }

  // Query rows [i0, i0 + kQueryTile) of head h, whose k and v are packed at `packed`.
  void QueryTile(const AttentionProblem& h, const Acc* packed, std::int64_t i0) const {
    const std::int64_t rows = std::min(kQueryTile, c_.l - i0);
    const std::int64_t row_panels = (rows + kRows - 1) / kRows;
    static thread_local AlignedVector<Acc> q_buf, s_buf, o_buf;
    Acc* qp = ThreadScratch(q_buf, static_cast<std::size_t>(kQueryTile * c_.e));
    Acc* scores = ThreadScratch(s_buf, static_cast<std::size_t>(kQueryTile * kKeyBlock));
    Acc* o = ThreadScratch(o_buf, static_cast<std::size_t>(kQueryTile * evp_));
    std::fill(o, o + kQueryTile * evp_, Acc(0));
    Acc m[kQueryTile], l[kQueryTile];
    bool bad[kQueryTile];
    std::fill(m, m + kQueryTile, -std::numeric_limits<Acc>::infinity());
    std::fill(l, l + kQueryTile, Acc(0));
    std::fill(bad, bad + kQueryTile, false);

    const In* q = static_cast<const In*>(h.q);
    for (std::int64_t rp = 0; rp < row_panels; ++rp) {
      const std::int64_t i = i0 + rp * kRows;
      PackA(q + i * h.q_rs, h.q_rs, h.q_cs, std::min(kRows, c_.l - i), c_.e,
            qp + rp * kRows * c_.e);
    }
    const Acc* kpack = packed;
    const Acc* vpack = packed + key_panels_ * kNr * c_.e;
    for (std::int64_t j0 = 0; j0 < c_.s; j0 += kKeyBlock) {
      const std::int64_t bc = std::min(kKeyBlock, c_.s - j0);
      const std::int64_t panels = (bc + kNr - 1) / kNr;
      for (std::int64_t rp = 0; rp < row_panels; ++rp) {
        for (std::int64_t kp = 0; kp < panels; ++kp) {
          MicroKernel<Acc, false, Acc, kVecs, kKeyBlock>(
              qp + rp * kRows * c_.e, kpack + (j0 / kNr + kp) * kNr * c_.e, c_.e,
              scores + rp * kRows * kKeyBlock + kp * kNr, kKeyBlock, false);
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        UpdateRow(h, i0 + r, j0, bc, scores + r * kKeyBlock, m[r], l[r], bad[r], o + r * evp_);
      }
      // o += weights @ v, the weights read in place (rows kKeyBlock apart). Rows past the
      // tile's end hold finite junk and their accumulators are never read.
      for (std::int64_t rp = 0; rp < row_panels; ++rp) {
        for (std::int64_t vp = 0; vp < value_panels_; ++vp) {
          MicroKernel<Acc, true>(scores + rp * kRows * kKeyBlock,
                                 vpack + vp * kNr * c_.s + j0 * kNr, bc,
                                 o + rp * kRows * evp_ + vp * kNr, evp_, true, kKeyBlock);
        }
      }
    }
    In* out = static_cast<In*>(h.out);
    for (std::int64_t r = 0; r < rows; ++r) {
      const bool nan = bad[r] || !(l[r] > Acc(0));  // fully masked rows are NaN, as PyTorch
      In* dst = out + (i0 + r) * h.o_rs;
      for (std::int64_t cidx = 0; cidx < c_.ev; ++cidx) {
        const Acc value = nan ? std::numeric_limits<Acc>::quiet_NaN() : o[r * evp_ + cidx] / l[r];
        dst[cidx * h.o_cs] = convert<In>(value);
      }
    }
  }

 private:
  // The online softmax for query row i over keys [j0, j0 + bc): s holds the raw dot products
  // and leaves with the weights exp(score - m); m, l and the accumulator o advance.
  void UpdateRow(const AttentionProblem& h, std::int64_t i, std::int64_t j0, std::int64_t bc,
                 Acc* HWY_RESTRICT s, Acc& m, Acc& l, bool& bad, Acc* HWY_RESTRICT o) const {
    constexpr Acc kInf = std::numeric_limits<Acc>::infinity();
    const hn::ScalableTag<Acc> d;
    constexpr std::int64_t kN = static_cast<std::int64_t>(hn::MaxLanes(d));
    const auto vscale = hn::Set(d, static_cast<Acc>(c_.scale));
    std::int64_t j = 0;
    for (; j + kN <= bc; j += kN) hn::StoreU(hn::Mul(hn::LoadU(d, s + j), vscale), d, s + j);
    for (; j < bc; ++j) s[j] = s[j] * static_cast<Acc>(c_.scale);
    if (h.mask != nullptr) {
      const std::int64_t base = i * h.mask_rs + j0 * h.mask_cs;
      if (c_.bool_mask) {
        const bool* mask = static_cast<const bool*>(h.mask) + base;
        for (j = 0; j < bc; ++j) {
          if (!mask[j * h.mask_cs]) s[j] = -kInf;
        }
      } else {
        const In* mask = static_cast<const In*>(h.mask) + base;
        for (j = 0; j < bc; ++j) s[j] = s[j] + Widen<Acc>(mask[j * h.mask_cs]);
      }
    }
    if (c_.causal) {
      for (j = std::max<std::int64_t>(0, i + 1 - j0); j < bc; ++j) s[j] = -kInf;
    }
    // The block's max; NaN anywhere marks the row.
    auto vmax = hn::Set(d, -kInf);
    auto vnan = hn::Zero(d);
    for (j = 0; j + kN <= bc; j += kN) {
      const auto x = hn::LoadU(d, s + j);
      vmax = hn::Max(vmax, x);
      vnan = hn::Or(vnan, hn::VecFromMask(d, hn::Ne(x, x)));
    }
    Acc block_max = hn::GetLane(hn::MaxOfLanes(d, vmax));
    bad = bad || !hn::AllTrue(d, hn::Eq(vnan, hn::Zero(d)));
    for (; j < bc; ++j) {
      if (std::isnan(s[j])) bad = true;
      block_max = std::max(block_max, s[j]);
    }
    const Acc new_max = std::max(m, block_max);
    if (bad || new_max == kInf) {  // NaN or inf - inf: the row is NaN (its result ignored)
      bad = true;
      std::fill(s, s + bc, Acc(0));
      return;
    }
    if (new_max == -kInf) {  // every key so far masked: nothing to weigh yet
      std::fill(s, s + bc, Acc(0));
      return;
    }
    const auto vm = hn::Set(d, new_max);
    for (j = 0; j + kN <= bc; j += kN) {
      hn::StoreU(ExpNonPositive(d, hn::Sub(hn::LoadU(d, s + j), vm)), d, s + j);
    }
    if (j < bc) {
      HWY_ALIGN Acc tail[hn::MaxLanes(d)];
      std::fill(tail, tail + kN, -kInf);
      std::copy(s + j, s + bc, tail);
      hn::Store(ExpNonPositive(d, hn::Sub(hn::Load(d, tail), vm)), d, tail);
      std::copy(tail, tail + (bc - j), s + j);
    }
    const Acc block_sum = SumEightWays(s, bc);
    const Acc alpha = std::exp(m - new_max);  // 0 while m is -inf
    l = l * alpha + block_sum;
    m = new_max;
    if (alpha != Acc(1)) {
      const auto va = hn::Set(d, alpha);
      for (j = 0; j < evp_; j += kN) hn::StoreU(hn::Mul(hn::LoadU(d, o + j), va), d, o + j);
    }
  }

  // sum of x[0, n) as eight partial sums, partial p adding x[p], x[p + 8], ... in order, then
  // ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)): the same order on every vector width.
  static Acc SumEightWays(const Acc* HWY_RESTRICT x, std::int64_t n) {
    const hn::CappedTag<Acc, 8> d8;
    constexpr std::int64_t kN8 = static_cast<std::int64_t>(hn::MaxLanes(d8));
    constexpr std::int64_t kParts = 8 / kN8;
    hn::Vec<decltype(d8)> parts[kParts];
    for (auto& p : parts) p = hn::Zero(d8);
    std::int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
      for (std::int64_t q = 0; q < kParts; ++q) {
        parts[q] = hn::Add(parts[q], hn::LoadU(d8, x + j + q * kN8));
      }
    }
    HWY_ALIGN Acc part[8];
    for (std::int64_t q = 0; q < kParts; ++q) hn::StoreU(parts[q], d8, part + q * kN8);
    for (std::int64_t t = 0; j + t < n; ++t) part[t] += x[j + t];
    return ((part[0] + part[1]) + (part[2] + part[3])) +
           ((part[4] + part[5]) + (part[6] + part[7]));
  }

  AttentionConfig c_;
  std::int64_t key_panels_, value_panels_, evp_;
};

template <class In, class Acc>
void RunAttention(const AttentionConfig& config, std::span<const AttentionProblem> heads) {
  const Attention<In, Acc> engine(config);
  const std::size_t per_head = std::max<std::size_t>(engine.PackedSize(), 1);
  std::int64_t in_flight = static_cast<std::int64_t>(
      std::max<std::size_t>(1, kPackedHeadsBytes / (per_head * sizeof(Acc))));
  if (config.slice > 0) in_flight = std::min(in_flight, config.slice);
  const std::int64_t tiles = (config.l + kQueryTile - 1) / kQueryTile;
  const std::int64_t count = static_cast<std::int64_t>(heads.size());
  AlignedVector<Acc> packed;
  for (std::int64_t h0 = 0; h0 < count; h0 += in_flight) {
    const std::int64_t group = std::min(in_flight, count - h0);
    packed.resize(per_head * static_cast<std::size_t>(group));
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(0, group, 1),
        [&](const auto& r) {
          for (std::int64_t g = r.begin(); g < r.end(); ++g) {
            engine.PackHead(heads[static_cast<std::size_t>(h0 + g)],
                            packed.data() + static_cast<std::size_t>(g) * per_head);
          }
        },
        tbb::simple_partitioner());
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(0, group * tiles, 1),
        [&](const auto& r) {
          for (std::int64_t t = r.begin(); t < r.end(); ++t) {
            const std::int64_t g = t / tiles;
            engine.QueryTile(heads[static_cast<std::size_t>(h0 + g)],
                             packed.data() + static_cast<std::size_t>(g) * per_head,
                             (t % tiles) * kQueryTile);
          }
        },
        tbb::simple_partitioner());
  }
}

template <class Acc>
void AttentionIn(const AttentionConfig& config, std::span<const AttentionProblem> heads) {
  visit_dtype(config.dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, double>) {
      RunAttention<double, double>(config, heads);
    } else if constexpr (FloatingElement<T>) {
      RunAttention<T, Acc>(config, heads);
    }
  });
}

void AttentionDouble(const AttentionConfig& config, std::span<const AttentionProblem> heads) {
  AttentionIn<double>(config, heads);
}

void AttentionFloat(const AttentionConfig& config, std::span<const AttentionProblem> heads) {
  AttentionIn<float>(config, heads);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(AttentionDouble);
HWY_EXPORT(AttentionFloat);

void attention(const AttentionConfig& config, std::span<const AttentionProblem> heads) {
  if (heads.empty() || config.l == 0 || config.ev == 0) return;
  if (config.fast && config.dtype != DType::Float64) {
    HWY_DYNAMIC_DISPATCH(AttentionFloat)(config, heads);
  } else {
    HWY_DYNAMIC_DISPATCH(AttentionDouble)(config, heads);
  }
}

namespace {

// Element offset of batch element `index` (row-major over the batch dims) in view v.
std::int64_t batch_offset(const TensorView& v, std::size_t batch_dims, std::int64_t index) {
  std::int64_t off = 0;
  for (std::size_t d = batch_dims; d-- > 0;) {
    off += (index % v.sizes[d]) * v.strides[d];
    index /= v.sizes[d];
  }
  return off;
}

// inputs: q [*b, L, E], k [*b, S, E], v [*b, S, Ev] and optionally mask [*b, L, S] (bool or
// q's dtype), all broadcast to the output's batch dims; output [*b, L, Ev].
KernelStatus attention_kernel(const KernelCall& call) {
  const TensorView& q = call.inputs[0];
  const TensorView& k = call.inputs[1];
  const TensorView& v = call.inputs[2];
  const TensorView* mask = call.inputs.size() > 3 ? &call.inputs[3] : nullptr;
  const TensorView& out = call.outputs[0];
  const std::size_t nd = out.sizes.size(), bd = nd - 2;
  AttentionConfig config;
  config.dtype = out.dtype;
  config.bool_mask = mask != nullptr && mask->dtype == DType::Bool;
  config.l = q.sizes[nd - 2];
  config.e = q.sizes[nd - 1];
  config.s = k.sizes[nd - 2];
  config.ev = v.sizes[nd - 1];
  const AttentionParams& p = call.params_as<AttentionParams>();
  config.scale = p.scale;
  config.causal = p.is_causal;
  config.fast = call.fast();
  config.slice = p.slice_size;
  std::int64_t batch = 1;
  for (std::size_t d = 0; d < bd; ++d) batch *= out.sizes[d];
  std::vector<AttentionProblem> heads(static_cast<std::size_t>(batch));
  auto at = [&](const TensorView& t, std::int64_t i) {
    return static_cast<char*>(t.data) +
           batch_offset(t, bd, i) * static_cast<std::int64_t>(dtype_size(t.dtype));
  };
  for (std::int64_t i = 0; i < batch; ++i) {
    AttentionProblem& h = heads[static_cast<std::size_t>(i)];
    h.q = at(q, i);
    h.q_rs = q.strides[nd - 2];
    h.q_cs = q.strides[nd - 1];
    h.k = at(k, i);
    h.k_rs = k.strides[nd - 2];
    h.k_cs = k.strides[nd - 1];
    h.v = at(v, i);
    h.v_rs = v.strides[nd - 2];
    h.v_cs = v.strides[nd - 1];
    if (mask != nullptr) {
      h.mask = at(*mask, i);
      h.mask_rs = mask->strides[nd - 2];
      h.mask_cs = mask->strides[nd - 1];
    }
    h.out = at(out, i);
    h.o_rs = out.strides[nd - 2];
    h.o_cs = out.strides[nd - 1];
  }
  attention(config, heads);
  return KernelStatus::Ok;
}

}  // namespace

void register_attention_kernels(KernelTable& table) {
  table.set(op_id("scaled_dot_product_attention"), attention_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
