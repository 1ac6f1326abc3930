#include "core/fft_plan.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace mpsim {
namespace {

using Complex = std::complex<double>;
using LongComplex = std::complex<long double>;

constexpr long double kPi = 3.141592653589793238462643383279502884L;

// Sizes up to this that are not powers of two use the direct DFT: n^2 <= 256 terms summed in
// long double, no scratch, and no Bluestein rounding (two transforms of size >= 32).
constexpr std::int64_t kDirectMax = 16;

// Largest Bluestein size: its convolution length, a power of two >= 2n - 1, must fit int64.
constexpr std::int64_t kBluesteinMax = std::int64_t{1} << 61;

// Stages whose butterflies lie within aligned blocks of kBlock elements run block by block, so a
// block (64 KiB of complex doubles, within L2) stays in cache for those log2(kBlock) stages.
// Each butterfly is the same operation on the same operands as in a stage-by-stage order, so the
// block size changes speed only, never bits.
constexpr std::int64_t kBlock = 4096;

// exp(-2 pi i m / n) for 0 <= m < n, to about 2^-63 relative (Note [fft accuracy]). 8m is
// folded into [0, n] by exact integer symmetries of the angle theta = (pi / 4) (8m / n):
// theta -> 2 pi - theta (negates sin), pi - theta (negates cos), pi / 2 - theta (swaps them).
LongComplex unit_root(std::uint64_t m, std::uint64_t n) {
  using U128 = unsigned __int128;
  const U128 big_n = n;
  U128 u = U128{m} * 8;
  const bool negate_sin = u > 4 * big_n;
  if (negate_sin) u = 8 * big_n - u;
  const bool negate_cos = u > 2 * big_n;
  if (negate_cos) u = 4 * big_n - u;
  const bool swap = u > big_n;
  if (swap) u = 2 * big_n - u;
  // u <= n < 2^64 and 4n are exact in long double's 64-bit significand.
  const long double theta =
      kPi * static_cast<long double>(static_cast<std::uint64_t>(u)) / (4.0L * n);
  long double c = std::cos(theta);
  long double s = std::sin(theta);
  if (swap) std::swap(c, s);
  if (negate_cos) c = -c;
  if (negate_sin) s = -s;
  return {c, -s};
}

Complex to_double(LongComplex z) {
  return {static_cast<double>(z.real()), static_cast<double>(z.imag())};
}

// a * b by the textbook formula (std::complex's operator* adds C99 Annex G inf/NaN recovery,
// an out-of-line call per product). Inf and NaN inputs still give non-finite outputs.
Complex mul(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// The table FftPlan::twiddles_ documents for a power of two m >= 2: entry h + j is
// exp(-2 pi i j / (2h)). Entries of the last stage (h = m/2) past the first octant come from
// earlier ones by the exact symmetries unit_root applies, so they equal unit_root(j, m) bit
// for bit while costing one cosl/sinl pair per eight entries.
std::vector<Complex> stage_twiddles(std::int64_t m) {
  std::vector<Complex> tw(static_cast<std::size_t>(m));
  const std::int64_t half = m / 2;
  Complex* last = tw.data() + half;  // last[j] = exp(-2 pi i j / m), 0 <= j < m/2
  const std::int64_t eighth = m / 8;
  const std::int64_t quarter = m / 4;
  for (std::int64_t j = 0; j <= eighth && j < half; ++j) last[j] = to_double(unit_root(j, m));
  // (eighth, quarter]: theta = pi/2 - theta', so (cos, -sin) = (sin', -cos').
  for (std::int64_t j = eighth + 1; j <= quarter && j < half; ++j) {
    const Complex w = last[quarter - j];
    last[j] = {-w.imag(), -w.real()};
  }
  // (quarter, half): theta = pi - theta', so (cos, -sin) = (-cos', -sin').
  for (std::int64_t j = quarter + 1; j < half; ++j) {
    const Complex w = last[half - j];
    last[j] = {-w.real(), w.imag()};
  }
  for (std::int64_t h = half / 2; h >= 1; h /= 2) {
    const std::int64_t stride = half / h;
    for (std::int64_t j = 0; j < h; ++j) tw[h + j] = last[j * stride];
  }
  return tw;
}

void bit_reverse(Complex* x, std::int64_t n) {
  for (std::int64_t i = 1, j = 0; i < n; ++i) {
    std::int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[i], x[j]);
  }
}

// (a, b) -> (a + w b, a - w b).
inline void butterfly(Complex& a, Complex& b, Complex w) {
  const Complex t = mul(w, b);
  const Complex u = a;
  a = {u.real() + t.real(), u.imag() + t.imag()};
  b = {u.real() - t.real(), u.imag() - t.imag()};
}

// Decimation-in-time stage of half-width h over x[0, len): butterflies (g + j, g + j + h) with
// twiddle tw[h + j], for each group g of 2h elements and 0 <= j < h.
void radix2_stage(Complex* x, std::int64_t len, std::int64_t h, const Complex* tw) {
  for (std::int64_t g = 0; g < len; g += 2 * h) {
    Complex* p = x + g;
    for (std::int64_t j = 0; j < h; ++j) butterfly(p[j], p[j + h], tw[h + j]);
  }
}

// Stages h and 2h in one pass over memory: the same butterflies on the same operands as
// radix2_stage(h) followed by radix2_stage(2h), so the same bits.
void radix4_pass(Complex* x, std::int64_t len, std::int64_t h, const Complex* tw) {
  for (std::int64_t g = 0; g < len; g += 4 * h) {
    Complex* p = x + g;
    for (std::int64_t j = 0; j < h; ++j) {
      Complex a0 = p[j], a1 = p[j + h], a2 = p[j + 2 * h], a3 = p[j + 3 * h];
      const Complex w = tw[h + j];
      butterfly(a0, a1, w);
      butterfly(a2, a3, w);
      butterfly(a0, a2, tw[2 * h + j]);
      butterfly(a1, a3, tw[3 * h + j]);
      p[j] = a0;
      p[j + h] = a1;
      p[j + 2 * h] = a2;
      p[j + 3 * h] = a3;
    }
  }
}

// Stages of half-width h_begin, 2 h_begin, ..., len / 2 over x[0, len), two per pass.
void run_stages(Complex* x, std::int64_t len, std::int64_t h_begin, const Complex* tw) {
  std::int64_t h = h_begin;
  for (; 4 * h <= len; h *= 4) radix4_pass(x, len, h, tw);
  if (2 * h <= len) radix2_stage(x, len, h, tw);
}

// Forward transform of a power of two n >= 2, in place; tw from stage_twiddles(n).
void forward_power_of_two(Complex* x, std::int64_t n, const Complex* tw) {
  bit_reverse(x, n);
  const std::int64_t block = std::min(n, kBlock);
  for (std::int64_t b = 0; b < n; b += block) run_stages(x + b, block, 1, tw);
  if (block < n) run_stages(x, n, block, tw);
}

void conjugate(Complex* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) x[i] = {x[i].real(), -x[i].imag()};
}

// O(n^2) DFT for n <= kDirectMax, roots[r] = exp(-2 pi i r / n). Sums in long double, so each
// output is its exact value (with double twiddles) within about one rounding.
void direct_dft(Complex* line, std::int64_t n, const Complex* roots, bool inverse) {
  Complex in[kDirectMax];
  std::copy(line, line + n, in);
  const long double sign = inverse ? -1.0L : 1.0L;
  for (std::int64_t k = 0; k < n; ++k) {
    long double re = 0.0L, im = 0.0L;
    std::int64_t r = 0;  // j k mod n
    for (std::int64_t j = 0; j < n; ++j) {
      const long double wr = roots[r].real(), wi = sign * roots[r].imag();
      const long double xr = in[j].real(), xi = in[j].imag();
      re += xr * wr - xi * wi;
      im += xr * wi + xi * wr;
      r += k;
      if (r >= n) r -= n;
    }
    line[k] = {static_cast<double>(re), static_cast<double>(im)};
  }
}

}  // namespace

FftPlan::FftPlan(std::int64_t n) : n_(n) {
  if (n < 1) throw std::invalid_argument("[FftPlan] n must be >= 1, got " + std::to_string(n));
  if (n == 1) {
    method_ = Method::kIdentity;
  } else if (std::has_single_bit(static_cast<std::uint64_t>(n))) {
    method_ = Method::kRadix2;
    twiddles_ = stage_twiddles(n);
  } else if (n <= kDirectMax) {
    method_ = Method::kDirect;
    twiddles_.resize(static_cast<std::size_t>(n));
    for (std::int64_t r = 0; r < n; ++r) twiddles_[r] = to_double(unit_root(r, n));
  } else {
    if (n > kBluesteinMax) {
      throw std::invalid_argument("[FftPlan] n must be a power of two or at most 2^61, got " +
                                  std::to_string(n));
    }
    method_ = Method::kBluestein;
    const std::int64_t m =
        static_cast<std::int64_t>(std::bit_ceil(2 * static_cast<std::uint64_t>(n) - 1));
    conv_size_ = m;
    twiddles_ = stage_twiddles(m);
    // exp(-pi i k^2 / n) = exp(-2 pi i (k^2 mod 2n) / 2n), with k^2 exact in 128 bits.
    const std::uint64_t two_n = 2 * static_cast<std::uint64_t>(n);
    chirp_.resize(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
      const unsigned __int128 k2 =
          static_cast<unsigned __int128>(k) * static_cast<std::uint64_t>(k);
      chirp_[k] = to_double(unit_root(static_cast<std::uint64_t>(k2 % two_n), two_n));
    }
    // conj(chirp) at offsets -(n-1) .. n-1, wrapped mod m (m >= 2n - 1 keeps the two ends apart).
    chirp_spectrum_.assign(static_cast<std::size_t>(m), Complex(0.0, 0.0));
    chirp_spectrum_[0] = std::conj(chirp_[0]);
    for (std::int64_t k = 1; k < n; ++k) {
      chirp_spectrum_[k] = std::conj(chirp_[k]);
      chirp_spectrum_[m - k] = std::conj(chirp_[k]);
    }
    forward_power_of_two(chirp_spectrum_.data(), m, twiddles_.data());
    // 1/m is a power of two: the scaling is exact.
    const double scale = 1.0 / static_cast<double>(m);
    for (Complex& z : chirp_spectrum_) z = {z.real() * scale, z.imag() * scale};
  }
}

void FftPlan::execute(Complex* line, bool inverse) const {
  if (conv_size_ == 0) {
    execute(line, inverse, nullptr);
    return;
  }
  thread_local std::vector<Complex> scratch;
  if (scratch.size() < static_cast<std::size_t>(conv_size_)) {
    scratch.resize(static_cast<std::size_t>(conv_size_));
  }
  execute(line, inverse, scratch.data());
}

void FftPlan::execute(Complex* line, bool inverse, Complex* scratch) const {
  switch (method_) {
    case Method::kIdentity:
      return;
    case Method::kDirect:
      direct_dft(line, n_, twiddles_.data(), inverse);
      return;
    case Method::kRadix2:
      // inverse(x) = conj(forward(conj(x))): conjugation is exact, and so is mul's symmetry
      // under it, so this equals a transform with conjugated twiddles bit for bit.
      if (inverse) conjugate(line, n_);
      forward_power_of_two(line, n_, twiddles_.data());
      if (inverse) conjugate(line, n_);
      return;
    case Method::kBluestein: {
      // With c_k = exp(-pi i k^2 / n) and j k = (j^2 + k^2 - (k - j)^2) / 2:
      //   X_k = c_k sum_j (x_j c_j) conj(c_{k-j}),
      // a linear convolution done as a cyclic one of length m. Its inverse transform is
      // conj(forward(conj(.))) / m; the 1/m sits in chirp_spectrum_. The inverse DFT is
      // conj(forward(conj(x))), folded into the first and last loops.
      const std::int64_t m = conv_size_;
      const Complex* chirp = chirp_.data();
      const Complex* spectrum = chirp_spectrum_.data();
      const Complex* tw = twiddles_.data();
      for (std::int64_t j = 0; j < n_; ++j) {
        const Complex x = inverse ? std::conj(line[j]) : line[j];
        scratch[j] = mul(x, chirp[j]);
      }
      std::fill(scratch + n_, scratch + m, Complex(0.0, 0.0));
      forward_power_of_two(scratch, m, tw);
      for (std::int64_t k = 0; k < m; ++k) scratch[k] = std::conj(mul(scratch[k], spectrum[k]));
      forward_power_of_two(scratch, m, tw);
      for (std::int64_t k = 0; k < n_; ++k) {
        const Complex y = mul(chirp[k], std::conj(scratch[k]));
        line[k] = inverse ? std::conj(y) : y;
      }
      return;
    }
  }
}

}  // namespace mpsim
