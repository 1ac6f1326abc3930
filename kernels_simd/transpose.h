// Blocked transpose of one block of a copy (Note [tiled transpose] in copy.cc), vectorized
// with dynamic dispatch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpsim::simd {

// out[j * out_j + k] = in[j + k * in_k] for j in [0, nj), k in [0, nk); elements of
// elem_bytes (1, 2, 4 or 8) bytes, strides in elements. Only the bytes are moved.
void transpose_block(void* out, const void* in, std::int64_t nj, std::int64_t nk,
                     std::int64_t out_j, std::int64_t in_k, std::size_t elem_bytes);

}  // namespace mpsim::simd
