// The exact oracle of the float16/bfloat16 reduction and normalization tests
// (half_reduce_test.cc, half_softmax_test.cc, half_norm_test.cc): the 16-bit formats decoded and
// rounded here, exact results in MPFR, condition numbers, the per-op tallies that check the
// contract, and the input generators.
//
// Note [half reduce oracle]
// The oracle never calls mpsim code. Inputs are drawn as long doubles and rounded to 16-bit
// patterns by this file's round_to_format(); the patterns are decoded by this file's decode();
// the exact result is evaluated in MPFR at 192 bits from those values; and round_to_format()
// rounds it to the output format, to nearest with ties to even. MPFR hands over the value
// truncated to a long double (64 bits) with a sticky bit (was the truncation exact?), which is
// all a correct rounding to p <= 11 bits needs. Sums, means, variances (as the exact
// (n sum x^2 - (sum x)^2) / (n (n - c))), norms' sums of squares and short products of 16-bit
// values are exact at 192 bits, so an output whose exact value is a tie is seen as a tie.
// Only the data movement that builds the test views (transpose + contiguous between equal
// dtypes: a bit copy) and the op under test run in mpsim.
//
// Note [half reduce conditioning]
// The contract applies where the problem is well conditioned. The relative condition number
// kappa = sum_k |x_k df/dx_k| / |f| bounds how much any evaluation in double (relative error
// ~2^-50) can move a result: an output misrounds only if kappa 2^-50 reaches its distance
// to a rounding boundary. The inputs are drawn so kappa stays small:
// - var/std/var_mean: rows keep |offset| <= 4 scales, and rows with kappa > 2^16 (nearly
//   constant data; kappa = 2 sum |x||x - mean| / sum (x - mean)^2) are re-drawn. A variance of
//   exactly 0 (equal values) is exact in any algorithm and counts as well conditioned.
// - logsumexp: kappa = sum |x_k| softmax_k / |lse| is unbounded where lse ~ 0 (cancellation
//   between the max and log(sum)); such rows are re-drawn (kappa > 2^16).
// - sum/mean: kappa = sum |x| / |sum x| is large only for near-cancelling rows, which random
//   rows reach with negligible probability; float16 sums are moreover exact in double.
// - log_softmax is well conditioned even where one element dominates (x_max - lse = -log1p(eps)
//   has kappa ~ max |x|), so peaked rows are included on purpose.
// - layer/group/rms/batch norm: the bias can cancel w (x - mean) / std, with kappa ~
//   (|w z| + |b|) / |y|; random parameters reach kappa = 2^k with probability ~2^-k, far from
//   the 2^40 that could move a rounding, so no filter is needed.
// The summary lines (op, dtype, outputs, % correctly rounded, max error in ULPs of the exact
// value) are the numbers quoted in docs/numerics.md.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/mpsim.h"

namespace mpsim::testing {

using Values = std::vector<long double>;
using Bits = std::vector<std::uint16_t>;

// ---- The 16-bit formats, decoded and rounded here (Note [half reduce oracle]). ----

struct Format {
  const char* name;
  DType dtype;
  int p;     // significand bits, the implicit bit included
  int emin;  // exponent of the smallest normal; the bias is emax
  int emax;  // exponent of the largest finite binade
};
inline constexpr Format kF16{"float16", DType::Float16, 11, -14, 15};
inline constexpr Format kBF16{"bfloat16", DType::BFloat16, 8, -126, 127};
inline constexpr Format kFormats[] = {kF16, kBF16};

inline long double decode(std::uint16_t b, const Format& f) {
  const int mbits = f.p - 1;
  const int field = (b & 0x7fff) >> mbits, all_ones = (1 << (15 - mbits)) - 1;
  const long double m = b & ((1 << mbits) - 1);
  long double v;
  if (field == all_ones)
    v = m != 0 ? NAN : INFINITY;
  else if (field == 0)
    v = std::ldexp(m, f.emin - mbits);
  else
    v = std::ldexp(m + std::ldexp(1.0L, mbits), field - f.emax - mbits);
  return (b & 0x8000) != 0 ? -v : v;
}

// The exact value t + d, where t is truncated toward zero to 64 bits and 0 <= d < ulp(t) has
// the sign of t; `inexact` says d != 0.
struct Exact {
  long double t;
  bool inexact;
};

// Exponent of the quantum of `f` at |v| (subnormal spacing below the smallest normal).
inline int quantum_exponent(long double v, const Format& f) {
  int e = 0;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  return (v == 0 ? f.emin : std::max(e - 1, f.emin)) - (f.p - 1);
}

// Round to nearest, ties to even, with overflow to inf and subnormals.
inline std::uint16_t round_to_format(Exact x, const Format& f) {
  const int mbits = f.p - 1;
  const std::uint16_t sign = std::signbit(x.t) ? 0x8000 : 0;
  const std::uint16_t inf = static_cast<std::uint16_t>(sign | (((1 << (15 - mbits)) - 1) << mbits));
  if (std::isnan(x.t)) return static_cast<std::uint16_t>(inf | (1 << (mbits - 1)));
  const long double a = std::fabs(x.t);
  if (std::isinf(a)) return inf;
  if (a == 0) return sign;
  int q = quantum_exponent(a, f);
  const long double scaled = std::ldexp(a, -q);  // < 2^p: the fraction below is exact
  long double n = std::floor(scaled);
  const long double frac = scaled - n;
  // frac < 1/2 stays below 1/2 with d added: 1/2 is a multiple of t's last place here.
  if (frac > 0.5L || (frac == 0.5L && (x.inexact || std::fmod(n, 2.0L) == 1.0L))) n += 1;
  auto m = static_cast<std::uint32_t>(n);
  if (m == (1u << f.p)) {  // carried into the next binade
    m >>= 1;
    q += 1;
  }
  if (q + mbits > f.emax) return inf;
  if (m < (1u << mbits)) return static_cast<std::uint16_t>(sign | m);  // subnormal or zero
  return static_cast<std::uint16_t>(sign | (q + mbits + f.emax) << mbits | (m - (1u << mbits)));
}

inline std::uint16_t round_value(long double v, const Format& f) {
  return round_to_format({v, false}, f);
}

// Error of `got` in ULPs of the exact value (the format's spacing at the exact value).
inline double ulp_error(std::uint16_t got, Exact want, const Format& f) {
  const long double g = decode(got, f);
  if (!std::isfinite(g) || !std::isfinite(want.t))
    return got == round_to_format(want, f) ? 0.0 : INFINITY;
  return static_cast<double>(std::ldexp(std::fabs(g - want.t), -quantum_exponent(want.t, f)));
}

// ---- MPFR numbers at 192 bits. ----

inline constexpr mpfr_prec_t kPrecision = 192;

class Big {
 public:
  Big() {
    mpfr_init2(v_, kPrecision);
    mpfr_set_zero(v_, 1);
  }
  Big(long double x) : Big() { mpfr_set_ld(v_, x, MPFR_RNDN); }  // NOLINT: exact (64 <= 192)
  Big(const Big& o) : Big() { mpfr_set(v_, o.v_, MPFR_RNDN); }
  Big& operator=(const Big& o) {
    mpfr_set(v_, o.v_, MPFR_RNDN);
    return *this;
  }
  ~Big() { mpfr_clear(v_); }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  Exact exact() const {
    const long double t = mpfr_get_ld(v_, MPFR_RNDZ);
    return {t, mpfr_cmp_ld(v_, t) != 0};
  }

 private:
  mpfr_t v_;
};

template <class F>
inline Big unary(const Big& a, F&& f) {
  Big r;
  f(r.get(), a.get(), MPFR_RNDN);
  return r;
}
template <class F>
inline Big binary(const Big& a, const Big& b, F&& f) {
  Big r;
  f(r.get(), a.get(), b.get(), MPFR_RNDN);
  return r;
}
inline Big operator+(const Big& a, const Big& b) {
  return binary(a, b, [](auto... x) { mpfr_add(x...); });
}
inline Big operator-(const Big& a, const Big& b) {
  return binary(a, b, [](auto... x) { mpfr_sub(x...); });
}
inline Big operator*(const Big& a, const Big& b) {
  return binary(a, b, [](auto... x) { mpfr_mul(x...); });
}
inline Big operator/(const Big& a, const Big& b) {
  return binary(a, b, [](auto... x) { mpfr_div(x...); });
}
inline Big sqrt(const Big& a) {
  return unary(a, [](auto... x) { mpfr_sqrt(x...); });
}
inline Big exp(const Big& a) {
  return unary(a, [](auto... x) { mpfr_exp(x...); });
}
inline Big log(const Big& a) {
  return unary(a, [](auto... x) { mpfr_log(x...); });
}

// ---- Exact results (Note [half reduce oracle]). ----

inline Big sum_of(const Values& xs) {
  Big s;
  for (long double x : xs) s = s + x;
  return s;
}
inline Big sum_of_squares(const Values& xs) {
  Big s;
  for (long double x : xs) s = s + Big(x) * x;
  return s;
}
// The exact variance with `correction`: (n sum x^2 - (sum x)^2) / (n (n - correction)).
inline Big variance(const Values& xs, int correction) {
  const long double n = static_cast<long double>(xs.size());
  const Big s = sum_of(xs);
  return (Big(n) * sum_of_squares(xs) - s * s) / (Big(n) * Big(n - correction));
}
inline Big logsumexp_of(const Values& xs) {
  const long double m = *std::max_element(xs.begin(), xs.end());
  Big s;
  for (long double x : xs) s = s + exp(Big(x) - m);
  return Big(m) + log(s);
}

// Condition numbers (Note [half reduce conditioning]), in long double: estimates suffice.
inline long double variance_condition(const Values& xs) {
  long double mean = 0, num = 0, den = 0;
  for (long double x : xs) mean += x;
  mean /= static_cast<long double>(xs.size());
  for (long double x : xs) {
    num += 2 * std::fabs(x) * std::fabs(x - mean);
    den += (x - mean) * (x - mean);
  }
  const bool constant =
      std::all_of(xs.begin(), xs.end(), [&](long double x) { return x == xs[0]; });
  return constant ? 0 : num / den;
}
inline long double logsumexp_condition(const Values& xs) {
  const long double m = *std::max_element(xs.begin(), xs.end());
  long double s = 0, weighted = 0;
  for (long double x : xs) s += std::exp(x - m);
  for (long double x : xs) weighted += std::fabs(x) * std::exp(x - m) / s;
  return weighted / std::fabs(m + std::log(s));
}
inline constexpr long double kMaxCondition = 0x1p16L;

// ---- Tallies: per op and dtype, over every case. ----

class Tally {
 public:
  Tally(std::string op, const Format& f) : op_(std::move(op)), f_(f) {}

  // `context` describes the output (inputs included) for the failure message.
  void add(std::uint16_t got, Exact want, const std::function<std::string()>& context) {
    const std::uint16_t rounded = round_to_format(want, f_);
    const double err = ulp_error(got, want, f_);
    ++total_;
    const bool ok = got == rounded || (std::isnan(decode(got, f_)) && std::isnan(want.t));
    if (ok) ++correct_;
    if (!ok && is_tie(want)) ++missed_ties_;
    max_ulp_ = std::max(max_ulp_, err);
    if ((!ok || err > 1.0) && failures_.size() < 12) {
      std::ostringstream s;
      s << context() << "\n    got 0x" << std::hex << got << " ("
        << static_cast<double>(decode(got, f_)) << "), correctly rounded 0x" << rounded << " ("
        << std::dec << static_cast<double>(decode(rounded, f_)) << "), exact ~"
        << static_cast<double>(want.t) << (is_tie(want) ? " (an exact tie)" : "") << ", error "
        << err << " ULP";
      failures_.push_back(s.str());
    }
  }

  // Whether the exact value lies halfway between two neighbours of the format.
  bool is_tie(Exact x) const {
    return !x.inexact && std::isfinite(x.t) && x.t != 0 &&
           std::fmod(std::ldexp(std::fabs(x.t), -quantum_exponent(x.t, f_)), 1.0L) == 0.5L;
  }

  // Prints the summary line and checks the contract.
  void finish() const {
    const double pct = total_ == 0 ? 0 : 100.0 * static_cast<double>(correct_) / total_;
    std::printf(
        "[half accuracy] %-26s %-8s outputs %6lld  correctly rounded %9.5f%%  max %.4f ULP"
        "  (missed exact ties: %lld)\n",
        op_.c_str(), f_.name, static_cast<long long>(total_), pct, max_ulp_,
        static_cast<long long>(missed_ties_));
    std::string examples;
    for (const std::string& s : failures_) examples += "\n  " + s;
    EXPECT_GE(total_, 10000) << op_ << " " << f_.name << ": too few outputs to judge 99.9%";
    EXPECT_GE(static_cast<double>(correct_), 0.999 * static_cast<double>(total_))
        << op_ << " " << f_.name << ": " << total_ - correct_ << " of " << total_
        << " outputs not correctly rounded (" << missed_ties_
        << " of them exact ties rounded the wrong way)" << examples;
    EXPECT_LE(max_ulp_, 1.0) << op_ << " " << f_.name << ": max error " << max_ulp_ << " ULP"
                             << examples;
  }

 private:
  std::string op_;
  Format f_;
  std::int64_t total_ = 0, correct_ = 0, missed_ties_ = 0;
  double max_ulp_ = 0;
  std::vector<std::string> failures_;
};

// ---- Inputs. ----

// Element indices (row-major over `shape`) of each output of a reduction over `dims`: outputs
// in row-major order of the kept dims, elements in row-major order of the reduced dims.
inline std::vector<std::vector<std::int64_t>> groups_of(const Shape& shape, const IntList& dims) {
  const std::size_t nd = shape.size();
  std::vector<bool> reduced(nd, false);
  for (std::int64_t d : dims) reduced[static_cast<std::size_t>(d)] = true;
  std::int64_t outputs = 1;
  for (std::size_t d = 0; d < nd; ++d) outputs *= reduced[d] ? 1 : shape[d];
  std::vector<std::vector<std::int64_t>> groups(static_cast<std::size_t>(outputs));
  std::vector<std::int64_t> index(nd, 0);
  for (std::int64_t i = 0; i < shape.numel(); ++i) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < nd; ++d) k = reduced[d] ? k : k * shape[d] + index[d];
    groups[static_cast<std::size_t>(k)].push_back(i);
    for (std::size_t d = nd; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return groups;
}

// Draws the values of one group of n elements.
using Sampler = std::function<Values(std::mt19937_64&, std::size_t n, const Format&)>;
// kappa of a group's (rounded) values; empty: every draw is well conditioned.
using Condition = std::function<long double(const Values&)>;

inline long double uniform(std::mt19937_64& rng, long double lo, long double hi) {
  return std::uniform_real_distribution<long double>(lo, hi)(rng);
}
inline int uniform_int(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// offset + scale N(0, 1) with a per-group scale 2^k and an offset of up to 4 scales (zero for a
// third of the groups). float16 scales keep n (|offset| + 4 scale) below 2^15, so sums,
// variances and norms stay finite; float16 groups as small as 2^-16 have subnormal inputs.
inline Values normal_group(std::mt19937_64& rng, std::size_t n, const Format& f) {
  const bool half = f.p == kF16.p;
  const int hi = half ? std::min(4, static_cast<int>(std::floor(12 - std::log2(n)))) : 40;
  const long double scale = std::ldexp(1.0L, uniform_int(rng, half ? -16 : -40, hi));
  const long double offset = uniform_int(rng, 0, 2) == 0 ? 0 : scale * uniform(rng, -4, 4);
  std::normal_distribution<long double> normal(0, 1);
  Values v(n);
  for (long double& x : v) x = offset + scale * normal(rng);
  return v;
}

// +-2^u, u uniform in [-a, a] with a shrinking like 1/sqrt(n): products stay far inside the range.
inline Values product_group(std::mt19937_64& rng, std::size_t n, const Format& f) {
  const long double a =
      std::min<long double>(f.p == kF16.p ? 1 : 4, (f.p == kF16.p ? 3 : 12) / std::sqrt(n));
  Values v(n);
  for (long double& x : v)
    x = (uniform_int(rng, 0, 1) != 0 ? -1 : 1) * std::exp2(uniform(rng, -a, a));
  return v;
}

// Logits: offset uniform in [-30, 30], scale 2^k, k in [-6, 3]; a quarter of the groups have one
// element raised by 10 to 40 (one element dominates the softmax).
inline Values logit_group(std::mt19937_64& rng, std::size_t n, const Format&) {
  const long double scale = std::ldexp(1.0L, uniform_int(rng, -6, 3));
  const long double offset = uniform(rng, -30, 30);
  std::normal_distribution<long double> normal(0, 1);
  Values v(n);
  for (long double& x : v) x = offset + scale * normal(rng);
  if (uniform_int(rng, 0, 3) == 0)
    v[static_cast<std::size_t>(uniform_int(rng, 0, static_cast<int>(n) - 1))] +=
        uniform(rng, 10, 40);
  return v;
}

// Logical values (row-major over the shape) as 16-bit patterns, drawn group by group; groups
// whose condition number exceeds kMaxCondition are re-drawn.
inline Bits draw(const std::vector<std::vector<std::int64_t>>& groups, std::int64_t numel,
                 const Sampler& sampler, const Condition& condition, const Format& f,
                 std::mt19937_64& rng) {
  Bits bits(static_cast<std::size_t>(numel));
  for (const auto& g : groups) {
    Values v;
    for (int attempt = 0;; ++attempt) {
      v = sampler(rng, g.size(), f);
      for (long double& x : v) x = decode(round_value(x, f), f);
      if (!condition || condition(v) <= kMaxCondition) break;
      if (attempt == 100) {
        ADD_FAILURE() << "no well-conditioned draw for a group of " << g.size();
        break;
      }
    }
    for (std::size_t j = 0; j < g.size(); ++j)
      bits[static_cast<std::size_t>(g[j])] = round_value(v[j], f);
  }
  return bits;
}

inline Values values_at(const Bits& bits, const std::vector<std::int64_t>& idx, const Format& f) {
  Values v;
  v.reserve(idx.size());
  for (std::int64_t i : idx) v.push_back(decode(bits[static_cast<std::size_t>(i)], f));
  return v;
}

// A tensor with these logical values; `transposed`: stored with the last two dims swapped, so
// the view is not contiguous (a bit copy: same dtype).
inline Tensor make_tensor(const Bits& bits, const Shape& shape, const Format& f,
                          bool transposed = false) {
  const Tensor t = from_blob_copy(bits.data(), shape.numel(), f.dtype, shape);
  if (!transposed) return t;
  const std::int64_t a = t.dim() - 2, b = t.dim() - 1;
  const Tensor v = t.transpose(a, b).contiguous().transpose(a, b);
  EXPECT_FALSE(v.is_contiguous());
  return v;
}

// The same logical values stored channels-last (NHWC memory, NCHW view).
inline Tensor channels_last(const Tensor& x) {
  const Tensor v = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  EXPECT_EQ(v.strides(), channels_last_strides(x.sizes()));
  return v;
}

inline Bits bits_of(const Tensor& t, const Format& f) {
  EXPECT_EQ(t.dtype(), f.dtype);
  const Tensor c = t.contiguous();
  Bits out(static_cast<std::size_t>(c.numel()));
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size() * sizeof(std::uint16_t));
  return out;
}

inline std::string describe(const Values& xs, const Bits& bits,
                            const std::vector<std::int64_t>& idx) {
  std::ostringstream s;
  s << "inputs (" << xs.size() << "):";
  for (std::size_t j = 0; j < std::min<std::size_t>(xs.size(), 16); ++j)
    s << " 0x" << std::hex << bits[static_cast<std::size_t>(idx[j])] << std::dec << "="
      << static_cast<double>(xs[j]);
  if (xs.size() > 16) s << " ...";
  return s.str();
}

// A fixed seed per op name (FNV-1a): the same inputs on every platform and run.
inline std::uint64_t seed_of(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  return h;
}

}  // namespace mpsim::testing
