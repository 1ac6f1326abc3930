// Division by a 64-bit divisor that stays the same over many numerators, by a multiply and
// shifts (Granlund and Montgomery, "Division by invariant integers using multiplication",
// PLDI 1994, figure 4.1 for N = 64): exact for every numerator and every divisor >= 1.
#pragma once

#include <cstdint>

namespace mpsim::simd {

class InvariantDivisor {
 public:
  explicit InvariantDivisor(std::uint64_t d) : d_(d) {
    int l = 0;  // ceil(log2 d): 2^(l-1) < d <= 2^l
    while (l < 64 && (std::uint64_t{1} << l) < d) ++l;
    const std::uint64_t two_l_minus_d = (l == 64 ? 0 : std::uint64_t{1} << l) - d;  // mod 2^64
    // m = floor(2^64 (2^l - d) / d) + 1 < 2^64, since 2^l - d < d.
    m_ = static_cast<std::uint64_t>((static_cast<unsigned __int128>(two_l_minus_d) << 64) / d) + 1;
    shift1_ = l < 1 ? l : 1;
    shift2_ = l > 1 ? l - 1 : 0;
  }
  std::uint64_t quotient(std::uint64_t n) const {
    const auto t = static_cast<std::uint64_t>((static_cast<unsigned __int128>(m_) * n) >> 64);
    return (t + ((n - t) >> shift1_)) >> shift2_;
  }
  std::uint64_t remainder(std::uint64_t n) const { return n - quotient(n) * d_; }

 private:
  std::uint64_t d_, m_;
  int shift1_, shift2_;
};

}  // namespace mpsim::simd
