// out[i] = table[in[i]] for 16-bit codes and a 65536-entry table: the rows of Note [16-bit unary
// tables] (table16.h), with vector gathers where the target has them.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/lookup16.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels_simd/table16.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void Lookup16Row(const std::uint32_t* table, const std::uint16_t* in, std::uint16_t* out,
                 std::size_t n) {
  const hn::ScalableTag<std::int32_t> d32;
  const hn::Rebind<std::uint16_t, decltype(d32)> d16;
  const hn::Rebind<std::uint32_t, decltype(d32)> du32;
  const auto* entries = reinterpret_cast<const std::int32_t*>(table);
  const std::size_t lanes = hn::Lanes(d32);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto idx = hn::BitCast(d32, hn::PromoteTo(du32, hn::LoadU(d16, in + i)));
    // Entries are below 2^16: the saturating narrowing keeps them.
    hn::StoreU(hn::DemoteTo(d16, hn::GatherIndex(d32, entries, idx)), d16, out + i);
  }
  for (; i < n; ++i) out[i] = static_cast<std::uint16_t>(table[in[i]]);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(Lookup16Row);

void lookup16_row(const std::uint32_t* table, const std::uint16_t* in, std::uint16_t* out,
                  std::size_t n) {
  HWY_DYNAMIC_DISPATCH(Lookup16Row)(table, in, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
