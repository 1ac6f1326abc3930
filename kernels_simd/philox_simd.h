// Philox4x32-10 blocks many at a time (philox.h gives the definition, one block at a time).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpsim::simd {

// For p in [0, count): out[2p] and out[2p + 1] are words 0-1 and 2-3 of block
// `first_block + p` of the stream of `seed` (philox_word_pair(philox_block(seed, b), 0 / 2)):
// the bits of elements 2 (first_block - offset) + 2p and + 1 of a draw starting at `offset`.
void philox_pairs(std::uint64_t seed, std::uint64_t first_block, std::size_t count,
                  std::uint64_t* out);

}  // namespace mpsim::simd
