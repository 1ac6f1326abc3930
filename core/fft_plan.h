// FftPlan: a 1-D complex discrete Fourier transform in double, the golden reference that the
// fft ops round once to float32. Depends on the C++ standard library alone.
//
// Note [fft accuracy]
// Every twiddle exp(-2 pi i m / N) is a long double value accurate to about 2^-63, rounded once
// to double (so within ~0.5 ulp): m is reduced mod N in integers, folded into the first octant
// by exact integer symmetries, and only then turned into an angle for cosl/sinl (no recurrences,
// no repeated products of a root). The Bluestein chirp exp(-pi i k^2 / n) is the twiddle of
// (k^2 mod 2n) in 2n, with k^2 formed in 128-bit integers. With such twiddles, radix-2
// Cooley-Tukey has a norm-wise error ||X^ - X||_2 <= log2(n) * (1 + 4 sqrt(2) + O(u)) * u *
// ||X||_2, u = 2^-53 (Higham, "Accuracy and Stability of Numerical Algorithms", Thm 24.2): per
// output an rms error of at most 6.7 log2(n) u ||x||_2, and in practice about log2(n) u ||x||_2
// because the rounding errors do not align. Bluestein chains two such transforms of size
// m >= 2n - 1 and three pointwise products; its error is of the same order. The direct DFT
// (n <= 16) sums in long double and rounds each output once. Where long double is double (Apple
// arm64, MSVC), the twiddles are within ~2 ulp instead of ~0.5 ulp.
//
// Note [fft determinism]
// An execution is a fixed sequence of double operations that depends on n and `inverse` alone:
// no threads, no data-dependent branches, no dependence on the scratch's prior contents. The
// same input gives the same bits on every thread and every call; callers parallelize over lines.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace mpsim {

class FftPlan {
 public:
  // n >= 1 (std::invalid_argument otherwise). Precomputes every twiddle and, for Bluestein
  // sizes, the chirp and its spectrum: O(n log n) time; n complex doubles of tables for a power
  // of two, at most 9n for a Bluestein size.
  explicit FftPlan(std::int64_t n);

  std::int64_t size() const { return n_; }

  // Complex elements that execute(line, inverse, scratch) needs in `scratch`: 0 unless n is a
  // Bluestein size, then the convolution length (a power of two >= 2n - 1).
  std::int64_t scratch_size() const { return conv_size_; }

  // In place and unnormalized: forward X[k] = sum_j x[j] exp(-2 pi i j k / n); the inverse uses
  // exp(+2 pi i j k / n), so inverse(forward(x)) = n x. `line` holds n contiguous elements.
  // Thread-safe: the plan is read-only, scratch is per thread (a thread_local buffer that grows
  // to the largest scratch_size() the thread has used). Never throws but std::bad_alloc when a
  // thread's buffer first grows. Error bound: Note [fft accuracy].
  void execute(std::complex<double>* line, bool inverse) const;

  // As above with caller-owned scratch of scratch_size() elements (ignored, and may be null,
  // when scratch_size() is 0). `scratch` must not overlap `line`; its contents need no setup.
  void execute(std::complex<double>* line, bool inverse, std::complex<double>* scratch) const;

 private:
  enum class Method { kIdentity, kDirect, kRadix2, kBluestein };

  std::int64_t n_;
  Method method_;
  // kBluestein: the power-of-two convolution length; 0 otherwise.
  std::int64_t conv_size_ = 0;
  // kRadix2 (and kBluestein, for its size conv_size_ transforms): stage twiddles, entry h + j is
  // exp(-2 pi i j / (2h)) for each stage half-width h = 1, 2, 4, ... and 0 <= j < h.
  // kDirect: entry r is exp(-2 pi i r / n) for 0 <= r < n.
  std::vector<std::complex<double>> twiddles_;
  // kBluestein: chirp_[k] = exp(-pi i k^2 / n) for 0 <= k < n, and chirp_spectrum_ the forward
  // transform of the conjugate chirp wrapped to length conv_size_, divided by conv_size_.
  std::vector<std::complex<double>> chirp_;
  std::vector<std::complex<double>> chirp_spectrum_;
};

}  // namespace mpsim
