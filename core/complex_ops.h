// The complex tensors' ops (Note [complex dtypes] in core/dtype.h): their views, their
// construction from real parts, and the discrete Fourier transforms (torch.fft), which run in
// double and round once (Note [Fourier transforms] in kernels_simd/fft.cc).
#pragma once

#include <optional>
#include <string_view>

#include <variant>

#include "core/kernel_call.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace mpsim {

// A complex tensor's [..., 2] view of (real, imag) parts, and the inverse view of a float16,
// float32 or float64 tensor whose last dim has size 2 and stride 1.
Tensor view_as_real(const Tensor& x);
Tensor view_as_complex(const Tensor& x);
// The parts as views (a real tensor is its own real part; imag refuses it).
Tensor real(const Tensor& x);
Tensor imag(const Tensor& x);
// The conjugate, a new tensor (mpsim has no lazy conjugate bit); a real tensor is its own.
Tensor conj(const Tensor& x);
// torch.complex: real + i imag, broadcast; both float16, float32 or float64 of one dtype.
Tensor complex(const Tensor& real, const Tensor& imag);
// torch.polar: abs (cos angle + i sin angle), each part from double, rounded once.
Tensor polar(const Tensor& abs, const Tensor& angle);

// Arithmetic where either operand is complex (add, sub with alpha, mul, div: `op` says which),
// with torch's promotion. Each part is evaluated in double from the operands' exact values
// (division by Smith's algorithm) and rounded once into the result's part dtype, on the cpu: an
// mps tensor takes the fallback policy (core/dispatch.h, note_fallback).
// (An operand is a tensor or a number: type_promotion.h's Operand.)
Tensor complex_arith(OpId op, const std::variant<Tensor, Scalar>& a,
                     const std::variant<Tensor, Scalar>& b, const Scalar& alpha);
// -x of a complex tensor (both parts negated; exact, on x's device).
Tensor complex_neg(const Tensor& x);
// The sum / mean over dims of a complex tensor: the real sums of each part (exact dims as
// sum's; empty: every dim).
Tensor complex_reduce(OpId op, const Tensor& x, const IntList& dims, bool keepdim);

// The transforms of torch.fft. `s`: the signal length along each of `dim` (-1: the input's);
// `norm`: "backward" (None), "forward" or "ortho"; `forward`: the exponent's sign is - (fft,
// rfft, hfft). C2R's default length along its last dim is 2 (m - 1).
Tensor fourier(std::string_view op, const Tensor& x, const std::optional<IntList>& s,
               const std::optional<IntList>& dim, std::optional<std::string_view> norm,
               FftKind kind, bool forward);
// The 1-d forms: n None is the input's length (C2R: 2 (m - 1)).
Tensor fourier_1d(std::string_view op, const Tensor& x, std::optional<std::int64_t> n,
                  std::int64_t dim, std::optional<std::string_view> norm, FftKind kind,
                  bool forward);

}  // namespace mpsim
