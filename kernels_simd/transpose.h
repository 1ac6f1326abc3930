// Vectorized data-movement rows (dynamic dispatch): the blocked transpose of one block of a
// copy (Note [tiled transpose] in copy.cc) and reversed runs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpsim::simd {

// out[j * out_j + k] = in[j + k * in_k] for j in [0, nj), k in [0, nk); elements of
// elem_bytes (1, 2, 4 or 8) bytes, strides in elements. Only the bytes are moved.
void transpose_block(void* out, const void* in, std::int64_t nj, std::int64_t nk,
                     std::int64_t out_j, std::int64_t in_k, std::size_t elem_bytes);

// The same transpose written with streaming stores, for outputs too large to stay in cache
// (Note [streamed transpose] in copy.cc). Requires `out` and out_j * elem_bytes to be
// multiples of 64 bytes; ends with a store fence.
void transpose_block_streamed(void* out, const void* in, std::int64_t nj, std::int64_t nk,
                              std::int64_t out_j, std::int64_t in_k, std::size_t elem_bytes);

// dst[0, bytes) = src[0, bytes) with streaming stores (Note [streaming stores] in
// elementwise.h), for copies too large to stay in cache; ends with a store fence.
void stream_copy(void* dst, const void* src, std::size_t bytes);
// The same without the fence: the caller calls stream_fence() before its task completes.
void stream_copy_unfenced(void* dst, const void* src, std::size_t bytes);

// out[i] = the float16 bits of in[i], rounded to nearest even as detail::f32_to_f16_bits
// (core/dtype.h) gives them, bit for bit.
void f32_to_f16_row(const float* in, std::uint16_t* out, std::size_t n);

// out[i] = detail::f16_bits_to_f32(in[i]) (exact; NaN payloads kept as the scalar function
// keeps them).
void f16_to_f32_row(const std::uint16_t* in, float* out, std::size_t n);

// out[i] = detail::bf16_bits_to_f32(in[i]) (exact).
void bf16_to_f32_row(const std::uint16_t* in, float* out, std::size_t n);

// out[i] = the bfloat16 bits of in[i], rounded to nearest even as detail::f32_to_bf16_bits
// gives them, bit for bit.
void f32_to_bf16_row(const float* in, std::uint16_t* out, std::size_t n);

// out[i] = convert<int32_t / int64_t>(in[i]) (core/convert.h), bit for bit.
void f32_to_int_row(const float* in, std::int32_t* out, std::size_t n);
void f32_to_int_row(const float* in, std::int64_t* out, std::size_t n);

// out[i] = the float16 (bfloat16) bits of in[i], rounded once to nearest even: Half(in[i]).bits
// (BFloat16(in[i]).bits), bit for bit.
void f64_to_f16_row(const double* in, std::uint16_t* out, std::size_t n);
void f64_to_bf16_row(const double* in, std::uint16_t* out, std::size_t n);

// out[k] = in_last[-k] for k in [0, n): a dense run read backwards from its last element
// (flip, reflect padding); elements of elem_bytes (1, 2, 4 or 8) bytes.
void reverse_run(void* out, const void* in_last, std::int64_t n, std::size_t elem_bytes);

// out[k] = the element whose bits are the low elem_bytes * 8 bits of `bits`, for k in [0, n):
// a dense run of one value (Note [dense fills] in copy.cc); elements of 1, 2, 4 or 8 bytes.
void fill_run(void* out, std::int64_t n, std::size_t elem_bytes, std::uint64_t bits);

// out[k] = in[2k] for k in [0, n): a dense run of every second element (a slice with step 2);
// reads nothing past in[2n - 2].
void take_even(void* out, const void* in, std::int64_t n, std::size_t elem_bytes);

}  // namespace mpsim::simd
