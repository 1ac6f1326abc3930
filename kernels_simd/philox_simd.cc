// Philox4x32-10 with one block per 64-bit lane (philox_simd.h): each round's two 32 x 32 -> 64
// products are one MulEven each over the lanes' low halves. The same bits as philox.h (the
// test compares them); other targets (scalar, emu128, SVE: no 32-bit MulEven in Highway 1.0.3) use
// philox.h's loop.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/philox_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels_simd/philox.h"
#include "kernels_simd/philox_simd.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#undef MPSIM_PHILOX_VECTOR
#if (HWY_ARCH_X86 || HWY_TARGET == HWY_NEON) && HWY_TARGET != HWY_SCALAR && \
    HWY_TARGET != HWY_EMU128
#define MPSIM_PHILOX_VECTOR 1
#else
#define MPSIM_PHILOX_VECTOR 0
#endif

void PhiloxPairs(std::uint64_t seed, std::uint64_t first_block, std::size_t count,
                 std::uint64_t* out) {
  std::size_t i = 0;
#if MPSIM_PHILOX_VECTOR
  constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  const hn::ScalableTag<std::uint64_t> d;
  const hn::Repartition<std::uint32_t, decltype(d)> d32;
  const std::size_t N = hn::Lanes(d);
  const auto low = hn::Set(d, 0xffffffffull);
  const auto m0 = hn::Set(d32, kMul0), m1 = hn::Set(d32, kMul1);
  std::uint64_t key0[10], key1[10];
  for (int r = 0; r < 10; ++r) {
    key0[r] = static_cast<std::uint32_t>(static_cast<std::uint32_t>(seed) + r * kWeyl0);
    key1[r] = static_cast<std::uint32_t>(static_cast<std::uint32_t>(seed >> 32) + r * kWeyl1);
  }
  const auto lane = hn::Iota(d, 0);
  for (; i + N <= count; i += N) {
    const auto c = hn::Add(hn::Set(d, first_block + i), lane);  // wraps mod 2^64, as philox.h
    auto x0 = hn::And(c, low), x1 = hn::ShiftRight<32>(c), x2 = hn::Zero(d), x3 = hn::Zero(d);
    for (int r = 0; r < 10; ++r) {
      const auto p0 = hn::MulEven(hn::BitCast(d32, x0), m0);
      const auto p1 = hn::MulEven(hn::BitCast(d32, x2), m1);
      x0 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p1), x1), hn::Set(d, key0[r]));
      x1 = hn::And(p1, low);
      x2 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p0), x3), hn::Set(d, key1[r]));
      x3 = hn::And(p0, low);
    }
    hn::StoreInterleaved2(hn::Or(hn::ShiftLeft<32>(x0), x1), hn::Or(hn::ShiftLeft<32>(x2), x3),
                          d, out + 2 * i);
  }
#endif
  for (; i < count; ++i) {
    const PhiloxBlock r = philox_block(seed, first_block + i);
    out[2 * i] = philox_word_pair(r, 0);
    out[2 * i + 1] = philox_word_pair(r, 2);
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(PhiloxPairs);

void philox_pairs(std::uint64_t seed, std::uint64_t first_block, std::size_t count,
                  std::uint64_t* out) {
  HWY_DYNAMIC_DISPATCH(PhiloxPairs)(seed, first_block, count, out);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
