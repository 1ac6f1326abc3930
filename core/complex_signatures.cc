// The declarations of the complex tensors' ops and the Fourier transforms (core/complex_ops.h;
// core/op_declaration.h says how to read one): torch.fft's functions as fft_<name> (Python:
// mpsim.fft.<name>). Part of the table of core/op_signatures.cc (detail::complex_signatures).
#include "core/complex_ops.h"
#include "core/op_declaration.h"

namespace mpsim {

namespace {

using K = ArgKind;

constexpr ArgDecl kInput{"input", K::Tensor};
constexpr ArgDecl kInputArgs[] = {kInput};
constexpr ArgDecl kComplexArgs[] = {{"real", K::Tensor}, {"imag", K::Tensor}};
constexpr ArgDecl kPolarArgs[] = {{"abs", K::Tensor}, {"angle", K::Tensor}};
constexpr ArgDecl kNorm{"norm", K::OptionalString, "None"};
constexpr ArgDecl kFft1dArgs[] = {kInput, {"n", K::OptionalInt, "None"}, {"dim", K::Int, "-1"}, kNorm};
constexpr ArgDecl kFft2dArgs[] = {
    kInput, {"s", K::OptionalIntList, "None"}, {"dim", K::IntList, "[-2, -1]"}, kNorm};
constexpr ArgDecl kFftNdArgs[] = {
    kInput, {"s", K::OptionalIntList, "None"}, {"dim", K::OptionalIntList, "None"}, kNorm};

template <ArgName kName, FftKind kKind, bool kForward>
OpSignature fft_1d(const char* doc) {
  return declare_op<kFft1dArgs>(kName.view(), doc, [](auto a) {
    return fourier_1d(kName.view(), arg<"input">(a), arg<"n">(a), arg<"dim">(a), arg<"norm">(a), kKind,
                      kForward);
  });
}

template <ArgName kName, FftKind kKind, bool kForward>
OpSignature fft_2d(const char* doc) {
  return declare_op<kFft2dArgs>(kName.view(), doc, [](auto a) {
    return fourier(kName.view(), arg<"input">(a), arg<"s">(a), arg<"dim">(a), arg<"norm">(a), kKind,
                   kForward);
  });
}

template <ArgName kName, FftKind kKind, bool kForward>
OpSignature fft_nd(const char* doc) {
  return declare_op<kFftNdArgs>(kName.view(), doc, [](auto a) {
    return fourier(kName.view(), arg<"input">(a), arg<"s">(a), arg<"dim">(a), arg<"norm">(a), kKind,
                   kForward);
  });
}

}  // namespace

std::vector<OpSignature> detail::complex_signatures() {
  using enum FftKind;
  return {
      declare_op<kInputArgs>("view_as_real", "a complex tensor's [..., 2] view of its parts",
                             [](auto a) { return view_as_real(arg<"input">(a)); }),
      declare_op<kInputArgs>("view_as_complex",
                             "the complex view of a [..., 2] float tensor (last stride 1)",
                             [](auto a) { return view_as_complex(arg<"input">(a)); }),
      declare_op<kInputArgs>("real", "the real part, a view (a real tensor is its own)",
                             [](auto a) { return real(arg<"input">(a)); }),
      declare_op<kInputArgs>("imag", "the imaginary part of a complex tensor, a view",
                             [](auto a) { return imag(arg<"input">(a)); }),
      declare_op<kInputArgs>("conj", "the complex conjugate (a copy; a real tensor is its own)",
                             [](auto a) { return conj(arg<"input">(a)); }),
      declare_op<kComplexArgs>("complex", "real + i imag, broadcast",
                               [](auto a) { return complex(arg<"real">(a), arg<"imag">(a)); }),
      declare_op<kPolarArgs>("polar", "abs (cos angle + i sin angle), in double, rounded once",
                             [](auto a) { return polar(arg<"abs">(a), arg<"angle">(a)); }),
      fft_1d<"fft_fft", C2C, true>("the discrete Fourier transform along dim, in double"),
      fft_1d<"fft_ifft", C2C, false>("the inverse transform along dim, in double"),
      fft_1d<"fft_rfft", R2C, true>("the one-sided transform of a real signal along dim"),
      fft_1d<"fft_irfft", C2R, false>("the real signal of a one-sided spectrum along dim"),
      fft_1d<"fft_hfft", C2R, true>("the real spectrum of a one-sided Hermitian signal along dim"),
      fft_1d<"fft_ihfft", R2C, false>("the inverse of hfft: one-sided, of a real spectrum"),
      fft_2d<"fft_fft2", C2C, true>("fftn over dims (-2, -1)"),
      fft_2d<"fft_ifft2", C2C, false>("ifftn over dims (-2, -1)"),
      fft_2d<"fft_rfft2", R2C, true>("rfftn over dims (-2, -1)"),
      fft_2d<"fft_irfft2", C2R, false>("irfftn over dims (-2, -1)"),
      fft_2d<"fft_hfft2", C2R, true>("hfftn over dims (-2, -1)"),
      fft_2d<"fft_ihfft2", R2C, false>("ihfftn over dims (-2, -1)"),
      fft_nd<"fft_fftn", C2C, true>("the transform over dims (every dim by default), in double"),
      fft_nd<"fft_ifftn", C2C, false>("the inverse transform over dims, in double"),
      fft_nd<"fft_rfftn", R2C, true>("rfft along the last of dims, fft along the others"),
      fft_nd<"fft_irfftn", C2R, false>("ifft along all but the last of dims, then irfft"),
      fft_nd<"fft_hfftn", C2R, true>("fft along all but the last of dims, then hfft"),
      fft_nd<"fft_ihfftn", R2C, false>("ihfft along the last of dims, ifft along the others"),
  };
}

}  // namespace mpsim
