// Tables of a 16-bit float function's every result (Note [16-bit unary tables]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace mpsim::simd {

// Note [16-bit unary tables]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// A function of one float16 or bfloat16 value has 65536 inputs. The first long dense row of a
// golden unary op on a 16-bit dtype computes all of them once with the row kernel itself (the
// same code, so the same bits: correctly rounded from the exact value where the op is, NaN
// payloads included) into a table, and every long dense row of that op and dtype after it is a
// lookup per value: scalar loads (128 KiB a table, L2-resident; lookup16_row in lookup16.cc
// says why not gathers). Building costs one pass over 65536 values (0.1-80 ms); rows shorter
// than kTable16MinValues, strided rows, ops with non-default parameters and the functions whose
// pass would take seconds (the modified Bessel functions of the second kind) keep the row
// kernel.
// Tables live until the process ends, at most one per (op, dtype).
inline constexpr std::size_t kTable16MinValues = 16384;

// The 16-bit results of `compute` for every input bit pattern, built on the first call for
// `key` (keys below kTable16Keys; concurrent first calls build it once).
// `compute` maps n 16-bit codes to n 16-bit codes.
inline constexpr std::uint32_t kTable16Keys = 512;
using Table16Compute = std::function<void(const std::uint16_t*, std::uint16_t*, std::size_t)>;
const std::uint16_t* table16(std::uint32_t key, const Table16Compute& compute);

// out[i] = table[in[i]] for i < n.
void lookup16_row(const std::uint16_t* table, const std::uint16_t* in, std::uint16_t* out,
                  std::size_t n);

}  // namespace mpsim::simd
