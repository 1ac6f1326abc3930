// randn's transform: standard normal doubles from Philox bits (Note [normal transform] in
// normal.cc), vectorized with dynamic dispatch and the same bits on every target.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpsim::simd {

// z[i] = sqrt(-2 log u1) cos(2 pi u2) with u1 = (hi32 + 1) / 2^32 in (0, 1] and
// u2 = lo32 / 2^32 in [0, 1), hi32 and lo32 the halves of bits[i].
void normal_from_bits(const std::uint64_t* bits, double* z, std::size_t n);

}  // namespace mpsim::simd
