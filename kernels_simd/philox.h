// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011): a counter-based generator. Block n of the stream of seed s is
// philox(counter = {n_lo, n_hi, 0, 0}, key = {s_lo, s_hi}), a pure function, so any element can
// be computed by any thread on any device in any order: the same numbers every time.
#pragma once

#include <array>
#include <cstdint>

namespace mpsim::simd {

using PhiloxBlock = std::array<std::uint32_t, 4>;

constexpr PhiloxBlock philox4x32_10(PhiloxBlock ctr, std::array<std::uint32_t, 2> key) {
  constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;    // the paper's multipliers
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;  // key schedule
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kMul0) * ctr[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kMul1) * ctr[2];
    ctr = {static_cast<std::uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(p0)};
    key = {key[0] + kWeyl0, key[1] + kWeyl1};
  }
  return ctr;
}

// Block `block` of the stream of `seed`.
constexpr PhiloxBlock philox_block(std::uint64_t seed, std::uint64_t block) {
  return philox4x32_10(
      {static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), 0, 0},
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
}

// The 64 bits of words w, w + 1 of a block.
constexpr std::uint64_t philox_word_pair(const PhiloxBlock& r, int w) {
  return static_cast<std::uint64_t>(r[w]) << 32 | r[w + 1];
}

// The 64 random bits of element `index` of a draw that starts at block `offset`: element i takes
// words 2(i mod 2) and 2(i mod 2) + 1 of block offset + i / 2.
constexpr std::uint64_t philox_bits(std::uint64_t seed, std::uint64_t offset, std::uint64_t index) {
  return philox_word_pair(philox_block(seed, offset + index / 2), static_cast<int>(index % 2) * 2);
}

}  // namespace mpsim::simd
