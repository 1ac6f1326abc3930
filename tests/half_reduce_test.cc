// float16 / bfloat16 accuracy of every reduction and normalization op (issue 5, "Kernels II"):
// the outputs must equal the correctly rounded exact value in >= 99.9% of elements and lie
// within 1 ULP of the exact value in all, over >= 10,000 outputs per op and dtype.
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
#include <vector>

#include "core/mpsim.h"

namespace mpsim {
namespace {

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
constexpr Format kF16{"float16", DType::Float16, 11, -14, 15};
constexpr Format kBF16{"bfloat16", DType::BFloat16, 8, -126, 127};
constexpr Format kFormats[] = {kF16, kBF16};

long double decode(std::uint16_t b, const Format& f) {
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
int quantum_exponent(long double v, const Format& f) {
  int e = 0;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  return (v == 0 ? f.emin : std::max(e - 1, f.emin)) - (f.p - 1);
}

// Round to nearest, ties to even, with overflow to inf and subnormals.
std::uint16_t round_to_format(Exact x, const Format& f) {
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

std::uint16_t round_value(long double v, const Format& f) { return round_to_format({v, false}, f); }

// Error of `got` in ULPs of the exact value (the format's spacing at the exact value).
double ulp_error(std::uint16_t got, Exact want, const Format& f) {
  const long double g = decode(got, f);
  if (!std::isfinite(g) || !std::isfinite(want.t))
    return got == round_to_format(want, f) ? 0.0 : INFINITY;
  return static_cast<double>(std::ldexp(std::fabs(g - want.t), -quantum_exponent(want.t, f)));
}

// ---- MPFR numbers at 192 bits. ----

constexpr mpfr_prec_t kPrecision = 192;

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
Big unary(const Big& a, F&& f) {
  Big r;
  f(r.get(), a.get(), MPFR_RNDN);
  return r;
}
template <class F>
Big binary(const Big& a, const Big& b, F&& f) {
  Big r;
  f(r.get(), a.get(), b.get(), MPFR_RNDN);
  return r;
}
Big operator+(const Big& a, const Big& b) {
  return binary(a, b, [](auto... x) { mpfr_add(x...); });
}
Big operator-(const Big& a, const Big& b) {
  return binary(a, b, [](auto... x) { mpfr_sub(x...); });
}
Big operator*(const Big& a, const Big& b) {
  return binary(a, b, [](auto... x) { mpfr_mul(x...); });
}
Big operator/(const Big& a, const Big& b) {
  return binary(a, b, [](auto... x) { mpfr_div(x...); });
}
Big sqrt(const Big& a) {
  return unary(a, [](auto... x) { mpfr_sqrt(x...); });
}
Big exp(const Big& a) {
  return unary(a, [](auto... x) { mpfr_exp(x...); });
}
Big log(const Big& a) {
  return unary(a, [](auto... x) { mpfr_log(x...); });
}

// ---- Exact results (Note [half reduce oracle]). ----

Big sum_of(const Values& xs) {
  Big s;
  for (long double x : xs) s = s + x;
  return s;
}
Big sum_of_squares(const Values& xs) {
  Big s;
  for (long double x : xs) s = s + Big(x) * x;
  return s;
}
// The exact variance with `correction`: (n sum x^2 - (sum x)^2) / (n (n - correction)).
Big variance(const Values& xs, int correction) {
  const long double n = static_cast<long double>(xs.size());
  const Big s = sum_of(xs);
  return (Big(n) * sum_of_squares(xs) - s * s) / (Big(n) * Big(n - correction));
}
Big logsumexp_of(const Values& xs) {
  const long double m = *std::max_element(xs.begin(), xs.end());
  Big s;
  for (long double x : xs) s = s + exp(Big(x) - m);
  return Big(m) + log(s);
}

// Condition numbers (Note [half reduce conditioning]), in long double: estimates suffice.
long double variance_condition(const Values& xs) {
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
long double logsumexp_condition(const Values& xs) {
  const long double m = *std::max_element(xs.begin(), xs.end());
  long double s = 0, weighted = 0;
  for (long double x : xs) s += std::exp(x - m);
  for (long double x : xs) weighted += std::fabs(x) * std::exp(x - m) / s;
  return weighted / std::fabs(m + std::log(s));
}
constexpr long double kMaxCondition = 0x1p16L;

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
std::vector<std::vector<std::int64_t>> groups_of(const Shape& shape, const IntList& dims) {
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

long double uniform(std::mt19937_64& rng, long double lo, long double hi) {
  return std::uniform_real_distribution<long double>(lo, hi)(rng);
}
int uniform_int(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// offset + scale N(0, 1) with a per-group scale 2^k and an offset of up to 4 scales (zero for a
// third of the groups). float16 scales keep n (|offset| + 4 scale) below 2^15, so sums,
// variances and norms stay finite; float16 groups as small as 2^-16 have subnormal inputs.
Values normal_group(std::mt19937_64& rng, std::size_t n, const Format& f) {
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
Values product_group(std::mt19937_64& rng, std::size_t n, const Format& f) {
  const long double a =
      std::min<long double>(f.p == kF16.p ? 1 : 4, (f.p == kF16.p ? 3 : 12) / std::sqrt(n));
  Values v(n);
  for (long double& x : v)
    x = (uniform_int(rng, 0, 1) != 0 ? -1 : 1) * std::exp2(uniform(rng, -a, a));
  return v;
}

// Logits: offset uniform in [-30, 30], scale 2^k, k in [-6, 3]; a quarter of the groups have one
// element raised by 10 to 40 (one element dominates the softmax).
Values logit_group(std::mt19937_64& rng, std::size_t n, const Format&) {
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
Bits draw(const std::vector<std::vector<std::int64_t>>& groups, std::int64_t numel,
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

Values values_at(const Bits& bits, const std::vector<std::int64_t>& idx, const Format& f) {
  Values v;
  v.reserve(idx.size());
  for (std::int64_t i : idx) v.push_back(decode(bits[static_cast<std::size_t>(i)], f));
  return v;
}

// A tensor with these logical values; `transposed`: stored with the last two dims swapped, so
// the view is not contiguous (a bit copy: same dtype).
Tensor make_tensor(const Bits& bits, const Shape& shape, const Format& f, bool transposed = false) {
  const Tensor t = from_blob_copy(bits.data(), shape.numel(), f.dtype, shape);
  if (!transposed) return t;
  const std::int64_t a = t.dim() - 2, b = t.dim() - 1;
  const Tensor v = t.transpose(a, b).contiguous().transpose(a, b);
  EXPECT_FALSE(v.is_contiguous());
  return v;
}

// The same logical values stored channels-last (NHWC memory, NCHW view).
Tensor channels_last(const Tensor& x) {
  const Tensor v = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  EXPECT_EQ(v.strides(), channels_last_strides(x.sizes()));
  return v;
}

Bits bits_of(const Tensor& t, const Format& f) {
  EXPECT_EQ(t.dtype(), f.dtype);
  const Tensor c = t.contiguous();
  Bits out(static_cast<std::size_t>(c.numel()));
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size() * sizeof(std::uint16_t));
  return out;
}

std::string describe(const Values& xs, const Bits& bits, const std::vector<std::int64_t>& idx) {
  std::ostringstream s;
  s << "inputs (" << xs.size() << "):";
  for (std::size_t j = 0; j < std::min<std::size_t>(xs.size(), 16); ++j)
    s << " 0x" << std::hex << bits[static_cast<std::size_t>(idx[j])] << std::dec << "="
      << static_cast<double>(xs[j]);
  if (xs.size() > 16) s << " ...";
  return s.str();
}

// ---- Reductions. ----

struct ReduceLayout {
  std::string name;
  Shape shape;
  IntList dims;
  bool transposed;
};

// Innermost and leading-dim reductions take different kernel paths (per-output walk, tiles of
// columns), transposed views and two reduced dims take strided and odometer walks, and rows
// longer than the driver's 16384-element chunk combine chunk partials.
std::vector<ReduceLayout> reduce_layouts() {
  std::vector<ReduceLayout> ls;
  for (std::int64_t l : {2, 3, 5, 7, 8, 9}) ls.push_back({"rows", {1009, l}, {1}, false});
  for (std::int64_t l : {16, 17, 31, 64}) ls.push_back({"rows", {401, l}, {1}, false});
  for (std::int64_t l : {100, 255}) ls.push_back({"rows", {101, l}, {1}, false});
  for (std::int64_t l : {2, 5, 13, 33, 300}) ls.push_back({"leading dim", {l, 257}, {0}, false});
  for (std::int64_t l : {3, 11, 40}) ls.push_back({"rows, transposed view", {199, l}, {1}, true});
  for (std::int64_t l : {4, 23})
    ls.push_back({"leading dim, transposed view", {l, 151}, {0}, true});
  ls.push_back({"dims {1, 3}", {5, 7, 11, 13}, {1, 3}, false});
  ls.push_back({"dims {0, 2}", {5, 7, 11, 13}, {0, 2}, false});
  ls.push_back({"long rows", {3, 20000}, {1}, false});
  ls.push_back({"long leading dim", {20000, 3}, {0}, false});
  ls.push_back({"long rows, transposed view", {2, 4099}, {1}, true});
  return ls;
}

// A fixed seed per op name (FNV-1a): the same inputs on every platform and run.
std::uint64_t seed_of(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  return h;
}

struct ReduceOp {
  std::string name;
  std::vector<std::string> outputs;  // one tally per output tensor
  std::function<std::vector<Tensor>(const Tensor&, const IntList&)> run;
  std::function<std::vector<Exact>(const Values&)> oracle;  // one per output tensor
  Sampler sampler = normal_group;
  Condition condition = {};  // empty: no re-draws
};

void check_reduction(const ReduceOp& op, const Format& f) {
  std::vector<Tally> tallies;
  for (const std::string& name : op.outputs) tallies.emplace_back(name, f);
  std::mt19937_64 rng(seed_of(op.name) ^ static_cast<std::uint64_t>(f.p));
  for (const ReduceLayout& layout : reduce_layouts()) {
    const auto groups = groups_of(layout.shape, layout.dims);
    const Bits in = draw(groups, layout.shape.numel(), op.sampler, op.condition, f, rng);
    const std::vector<Tensor> outs =
        op.run(make_tensor(in, layout.shape, f, layout.transposed), layout.dims);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      ASSERT_EQ(outs[k].numel(), static_cast<std::int64_t>(groups.size()));
      const Bits got = bits_of(outs[k], f);
      for (std::size_t m = 0; m < groups.size(); ++m) {
        const Values xs = values_at(in, groups[m], f);
        tallies[k].add(got[m], op.oracle(xs)[k], [&] {
          return op.outputs[k] + " " + f.name + ", " + layout.name + " " +
                 layout.shape.to_string() + " dims " + to_string(layout.dims) + ", output " +
                 std::to_string(m) + ": " + describe(xs, in, groups[m]);
        });
      }
    }
  }
  for (const Tally& t : tallies) t.finish();
}

std::vector<ReduceOp> reduce_ops() {
  auto one = [](auto f) {
    return [f](const Tensor& x, const IntList& d) { return std::vector<Tensor>{f(x, d)}; };
  };
  auto exact1 = [](auto f) { return [f](const Values& xs) { return std::vector<Exact>{f(xs)}; }; };
  return {
      {"sum",
       {"sum"},
       one([](const Tensor& x, const IntList& d) { return sum(x, d); }),
       exact1([](const Values& xs) { return sum_of(xs).exact(); })},
      {"mean",
       {"mean"},
       one([](const Tensor& x, const IntList& d) { return mean(x, d); }),
       exact1([](const Values& xs) {
         return (sum_of(xs) / Big(static_cast<long double>(xs.size()))).exact();
       })},
      {"prod",
       {"prod"},
       one([](const Tensor& x, const IntList& d) { return prod(x, d); }),
       exact1([](const Values& xs) {
         Big p(1.0L);
         for (long double x : xs) p = p * x;
         return p.exact();
       }),
       product_group},
      {"var",
       {"var"},
       one([](const Tensor& x, const IntList& d) { return var(x, d); }),
       exact1([](const Values& xs) { return variance(xs, 1).exact(); }),
       normal_group,
       variance_condition},
      {"std",
       {"std"},
       one([](const Tensor& x, const IntList& d) { return mpsim::std(x, d); }),
       exact1([](const Values& xs) { return sqrt(variance(xs, 1)).exact(); }),
       normal_group,
       variance_condition},
      {"var_mean",
       {"var_mean (var)", "var_mean (mean)"},
       [](const Tensor& x, const IntList& d) {
         auto [v, m] = var_mean(x, d);
         return std::vector<Tensor>{v, m};
       },
       [](const Values& xs) {
         return std::vector<Exact>{variance(xs, 1).exact(),
                                   (sum_of(xs) / Big(static_cast<long double>(xs.size()))).exact()};
       },
       normal_group,
       variance_condition},
      {"norm",
       {"norm (p=2)"},
       one([](const Tensor& x, const IntList& d) { return norm(x, d); }),
       exact1([](const Values& xs) { return sqrt(sum_of_squares(xs)).exact(); })},
      {"amax",
       {"amax"},
       one([](const Tensor& x, const IntList& d) { return amax(x, d); }),
       exact1([](const Values& xs) {
         return Exact{*std::max_element(xs.begin(), xs.end()), false};
       })},
      {"amin",
       {"amin"},
       one([](const Tensor& x, const IntList& d) { return amin(x, d); }),
       exact1([](const Values& xs) {
         return Exact{*std::min_element(xs.begin(), xs.end()), false};
       })},
      {"logsumexp",
       {"logsumexp"},
       one([](const Tensor& x, const IntList& d) { return logsumexp(x, d); }),
       exact1([](const Values& xs) { return logsumexp_of(xs).exact(); }),
       logit_group,
       logsumexp_condition},
  };
}

class HalfReduce : public ::testing::TestWithParam<std::string> {};

TEST_P(HalfReduce, CorrectlyRoundedInF16AndBF16) {
  for (const ReduceOp& op : reduce_ops()) {
    if (op.name != GetParam()) continue;
    for (const Format& f : kFormats) check_reduction(op, f);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, HalfReduce,
                         ::testing::Values("sum", "mean", "prod", "var", "std", "var_mean", "norm",
                                           "amax", "amin", "logsumexp"),
                         [](const auto& info) { return info.param; });

// ---- softmax and log_softmax: every element of a group is an output. ----

struct DimLayout {
  std::string name;
  Shape shape;
  std::int64_t dim;
  bool transposed;
};

std::vector<DimLayout> softmax_layouts() {
  std::vector<DimLayout> ls;
  const std::pair<std::int64_t, std::int64_t> rows[] = {{500, 1},  {500, 2},  {400, 5}, {200, 16},
                                                        {100, 33}, {40, 100}, {5, 1000}};
  for (auto [r, l] : rows) ls.push_back({"rows", {r, l}, 1, false});
  ls.push_back({"leading dim", {7, 301}, 0, false});
  ls.push_back({"rows, transposed view", {97, 21}, 1, true});
  ls.push_back({"middle dim", {5, 7, 11}, 1, false});
  ls.push_back({"leading dim, transposed view", {13, 37}, 0, true});
  return ls;
}

void check_softmax(bool log_form, const Format& f) {
  const std::string op = log_form ? "log_softmax" : "softmax";
  Tally tally(op, f);
  std::mt19937_64 rng(log_form ? 21 : 22);
  for (const DimLayout& layout : softmax_layouts()) {
    const auto groups = groups_of(layout.shape, {layout.dim});
    const Bits in = draw(groups, layout.shape.numel(), logit_group, {}, f, rng);
    const Tensor x = make_tensor(in, layout.shape, f, layout.transposed);
    const Bits got = bits_of(log_form ? log_softmax(x, layout.dim) : softmax(x, layout.dim), f);
    for (const auto& g : groups) {
      const Values xs = values_at(in, g, f);
      const long double m = *std::max_element(xs.begin(), xs.end());
      Big s;
      for (long double v : xs) s = s + exp(Big(v) - m);
      const Big log_s = log(s);
      for (std::size_t j = 0; j < g.size(); ++j) {
        const Big y = log_form ? (Big(xs[j]) - m) - log_s : exp(Big(xs[j]) - m) / s;
        tally.add(got[static_cast<std::size_t>(g[j])], y.exact(), [&] {
          return op + " " + f.name + ", " + layout.name + " " + layout.shape.to_string() + " dim " +
                 std::to_string(layout.dim) + ", element " + std::to_string(j) +
                 " of the group: " + describe(xs, in, g);
        });
      }
    }
  }
  tally.finish();
}

TEST(HalfSoftmax, SoftmaxCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_softmax(false, f);
}
TEST(HalfSoftmax, LogSoftmaxCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_softmax(true, f);
}

// ---- Normalization. ----

// One group: (x - mean) / sqrt(var + eps) * w + b with the biased variance, or for rms
// x / sqrt(mean(x^2) + eps) * w.
std::vector<Exact> normalize(const Values& xs, const Values& ws, const Values& bs, double eps,
                             bool rms) {
  const Big n(static_cast<long double>(xs.size()));
  const Big mean = rms ? Big() : sum_of(xs) / n;
  Big ss;
  for (long double x : xs) {
    const Big c = Big(x) - mean;
    ss = ss + c * c;
  }
  const Big denom = sqrt(ss / n + Big(static_cast<long double>(eps)));
  std::vector<Exact> out;
  for (std::size_t j = 0; j < xs.size(); ++j)
    out.push_back(((Big(xs[j]) - mean) / denom * ws[j] + bs[j]).exact());
  return out;
}

// Affine parameters: weights +-[0.5, 2], biases [-2, 2], as 16-bit patterns.
Bits draw_weights(std::int64_t n, const Format& f, std::mt19937_64& rng) {
  Bits w(static_cast<std::size_t>(n));
  for (auto& b : w)
    b = round_value((uniform_int(rng, 0, 1) != 0 ? -1 : 1) * uniform(rng, 0.5, 2), f);
  return w;
}
Bits draw_biases(std::int64_t n, const Format& f, std::mt19937_64& rng) {
  Bits b(static_cast<std::size_t>(n));
  for (auto& v : b) v = round_value(uniform(rng, -2, 2), f);
  return b;
}

struct NormLayout {
  std::string name;
  Shape shape;
  std::int64_t normalized_dims;  // trailing
  bool transposed;
  bool affine;
};

std::vector<NormLayout> norm_layouts() {
  return {{"rows", {401, 3}, 1, false, true},
          {"rows", {301, 8}, 1, false, false},
          {"rows", {151, 17}, 1, false, true},
          {"rows", {41, 100}, 1, false, true},
          {"rows", {5, 1000}, 1, false, false},
          {"two trailing dims", {13, 7, 11}, 2, false, true},
          {"rows, transposed view", {61, 33}, 1, true, true},
          {"rows, transposed view", {40, 9}, 1, true, false}};
}

// layer_norm (eps 1e-5) or rms_norm (the default eps: torch.finfo(dtype).eps, 2^-10 for
// float16 and 2^-7 for bfloat16, as torch.nn.functional.rms_norm).
void check_trailing_norm(bool rms, const Format& f) {
  const std::string op = rms ? "rms_norm" : "layer_norm";
  Tally tally(op, f);
  std::mt19937_64 rng(rms ? 31 : 32);
  for (const NormLayout& layout : norm_layouts()) {
    const std::int64_t nd = layout.shape.ndim();
    IntList dims, normalized;
    for (std::int64_t d = nd - layout.normalized_dims; d < nd; ++d) {
      dims.push_back(d);
      normalized.push_back(layout.shape[static_cast<std::size_t>(d)]);
    }
    const Shape ps(normalized);
    const auto groups = groups_of(layout.shape, dims);
    const Bits in = draw(groups, layout.shape.numel(), normal_group, {}, f, rng);
    const Bits w = draw_weights(ps.numel(), f, rng), b = draw_biases(ps.numel(), f, rng);
    const Tensor x = make_tensor(in, layout.shape, f, layout.transposed);
    std::optional<Tensor> wt, bt;
    if (layout.affine) {
      wt = make_tensor(w, ps, f);
      bt = make_tensor(b, ps, f);
    }
    const Bits got =
        bits_of(rms ? rms_norm(x, normalized, wt) : layer_norm(x, normalized, wt, bt, 1e-5), f);
    const double eps = !rms ? 1e-5 : f.p == kF16.p ? 0x1p-10 : 0x1p-7;
    const std::int64_t per = ps.numel();  // element i uses parameter i mod per
    for (const auto& g : groups) {
      const Values xs = values_at(in, g, f);
      Values ws(xs.size(), 1), bs(xs.size(), 0);
      for (std::size_t j = 0; layout.affine && j < g.size(); ++j) {
        ws[j] = decode(w[static_cast<std::size_t>(g[j] % per)], f);
        if (!rms) bs[j] = decode(b[static_cast<std::size_t>(g[j] % per)], f);
      }
      const std::vector<Exact> want = normalize(xs, ws, bs, eps, rms);
      for (std::size_t j = 0; j < g.size(); ++j) {
        tally.add(got[static_cast<std::size_t>(g[j])], want[j], [&] {
          return op + " " + f.name + ", " + layout.name + " " + layout.shape.to_string() +
                 (layout.affine ? " affine" : "") + ", element " + std::to_string(j) +
                 " of the group (w " + std::to_string(static_cast<double>(ws[j])) + ", b " +
                 std::to_string(static_cast<double>(bs[j])) + "): " + describe(xs, in, g);
        });
      }
    }
  }
  tally.finish();
}

TEST(HalfNorm, LayerNormCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_trailing_norm(false, f);
}
TEST(HalfNorm, RmsNormCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_trailing_norm(true, f);
}

struct GroupNormCase {
  Shape nchw;
  std::int64_t groups;
  bool affine;
};

// group_norm (eps 1e-5) on NCHW inputs and on the same values stored channels-last; the two
// are tallied apart (the kernel walks a group contiguously or with the channel stride).
void check_group_norm(const Format& f) {
  Tally nchw_tally("group_norm (NCHW)", f), nhwc_tally("group_norm (channels-last)", f);
  std::mt19937_64 rng(41);
  const GroupNormCase cases[] = {{{2, 6, 5, 7}, 3, true},
                                 {{4, 16, 9, 11}, 8, true},
                                 {{1, 32, 13, 13}, 32, false},
                                 {{3, 10, 17, 3}, 5, true},
                                 {{2, 64, 4, 4}, 32, true}};
  for (const GroupNormCase& c : cases) {
    const std::int64_t n = c.nchw[0], ch = c.nchw[1], hw = c.nchw[2] * c.nchw[3];
    // Row-major [N, C, H, W] is row-major [N, G, C/G, H, W]: a group is the trailing three.
    const auto groups =
        groups_of(Shape({n, c.groups, ch / c.groups, c.nchw[2], c.nchw[3]}), {2, 3, 4});
    const Bits in = draw(groups, c.nchw.numel(), normal_group, {}, f, rng);
    const Bits w = draw_weights(ch, f, rng), b = draw_biases(ch, f, rng);
    const Tensor x = make_tensor(in, c.nchw, f);
    std::optional<Tensor> wt, bt;
    if (c.affine) {
      wt = make_tensor(w, {ch}, f);
      bt = make_tensor(b, {ch}, f);
    }
    const Bits got_nchw = bits_of(group_norm(x, c.groups, wt, bt, 1e-5), f);
    const Tensor cl = group_norm(channels_last(x), c.groups, wt, bt, 1e-5);
    EXPECT_EQ(cl.strides(), channels_last_strides(c.nchw));
    const Bits got_nhwc = bits_of(cl, f);
    for (const auto& g : groups) {
      const Values xs = values_at(in, g, f);
      Values ws(xs.size(), 1), bs(xs.size(), 0);
      for (std::size_t j = 0; c.affine && j < g.size(); ++j) {
        const auto channel = static_cast<std::size_t>((g[j] / hw) % ch);
        ws[j] = decode(w[channel], f);
        bs[j] = decode(b[channel], f);
      }
      const std::vector<Exact> want = normalize(xs, ws, bs, 1e-5, false);
      for (std::size_t j = 0; j < g.size(); ++j) {
        auto context = [&] {
          return std::string("group_norm ") + f.name + ", " + c.nchw.to_string() + " groups " +
                 std::to_string(c.groups) + (c.affine ? " affine" : "") + ", element " +
                 std::to_string(j) + " of the group: " + describe(xs, in, g);
        };
        nchw_tally.add(got_nchw[static_cast<std::size_t>(g[j])], want[j], context);
        nhwc_tally.add(got_nhwc[static_cast<std::size_t>(g[j])], want[j], context);
      }
    }
  }
  nchw_tally.finish();
  nhwc_tally.finish();
}

TEST(HalfNorm, GroupNormNchwAndChannelsLastCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_group_norm(f);
}

// batch_norm (inference, eps 1e-5): running statistics near each channel's own mean and
// variance (as after training), per-channel weights and biases; NCHW, channels-last and [N, C, L].
void check_batch_norm(const Format& f) {
  Tally tally("batch_norm", f);
  std::mt19937_64 rng(51);
  const std::pair<Shape, bool> cases[] = {
      {{5, 7, 11, 13}, false}, {{5, 7, 11, 13}, true}, {{64, 33, 3}, false}};
  for (const auto& [shape, cl] : cases) {
    const std::int64_t ch = shape[1], inner = shape.numel() / (shape[0] * ch);
    IntList dims;
    for (std::int64_t d = 0; d < shape.ndim(); ++d)
      if (d != 1) dims.push_back(d);
    const auto groups = groups_of(shape, dims);  // one per channel
    const Bits in = draw(groups, shape.numel(), normal_group, {}, f, rng);
    Bits rm(static_cast<std::size_t>(ch)), rv(rm.size());
    for (std::size_t c = 0; c < groups.size(); ++c) {
      const Values xs = values_at(in, groups[c], f);
      long double mu = 0, var = 0;
      for (long double x : xs) mu += x;
      mu /= static_cast<long double>(xs.size());
      for (long double x : xs) var += (x - mu) * (x - mu);
      var /= static_cast<long double>(xs.size());
      if (var == 0) var = 1;
      rm[c] = round_value(mu + std::sqrt(var) * uniform(rng, -0.5, 0.5), f);
      rv[c] = round_value(var * uniform(rng, 0.5, 2), f);
    }
    const Bits w = draw_weights(ch, f, rng), b = draw_biases(ch, f, rng);
    const Tensor x = cl ? channels_last(make_tensor(in, shape, f)) : make_tensor(in, shape, f);
    const Bits got =
        bits_of(batch_norm(x, make_tensor(rm, {ch}, f), make_tensor(rv, {ch}, f),
                           make_tensor(w, {ch}, f), make_tensor(b, {ch}, f), false, 0.1, 1e-5),
                f);
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % ch);
      const long double xv = decode(in[i], f), m = decode(rm[c], f), v = decode(rv[c], f);
      const Big y =
          (Big(xv) - m) / sqrt(Big(v) + Big(static_cast<long double>(1e-5))) * decode(w[c], f) +
          decode(b[c], f);
      tally.add(got[i], y.exact(), [&] {
        std::ostringstream s;
        s << "batch_norm " << f.name << ", " << shape.to_string() << (cl ? " channels-last" : "")
          << ", element " << i << ": x " << static_cast<double>(xv) << ", running_mean "
          << static_cast<double>(m) << ", running_var " << static_cast<double>(v) << ", weight "
          << static_cast<double>(decode(w[c], f)) << ", bias "
          << static_cast<double>(decode(b[c], f));
        return s.str();
      });
    }
  }
  tally.finish();
}

TEST(HalfNorm, BatchNormCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_batch_norm(f);
}

// The oracle's own rounding, on cases worked by hand: ties to even, the sticky bit breaking a
// tie, carries into the next binade, subnormals and overflow.
TEST(HalfOracle, RoundToNearestEvenByHand) {
  EXPECT_EQ(round_to_format({1.0L + 0x1p-11L, false}, kF16), 0x3c00);      // tie: to even (1.0)
  EXPECT_EQ(round_to_format({1.0L + 0x1p-11L, true}, kF16), 0x3c01);       // above the tie
  EXPECT_EQ(round_to_format({1.0L + 3 * 0x1p-11L, false}, kF16), 0x3c02);  // tie: to even
  EXPECT_EQ(round_to_format({2.0L - 0x1p-12L, false}, kF16), 0x4000);      // carry to 2.0
  EXPECT_EQ(round_to_format({0x1p-25L, false}, kF16), 0x0000);  // tie with 0: to even (0)
  EXPECT_EQ(round_to_format({0x1p-25L, true}, kF16), 0x0001);   // smallest subnormal
  EXPECT_EQ(round_to_format({3 * 0x1p-25L, false}, kF16), 0x0002);
  EXPECT_EQ(round_to_format({65504.0L, false}, kF16), 0x7bff);
  EXPECT_EQ(round_to_format({65519.0L, true}, kF16), 0x7bff);
  EXPECT_EQ(round_to_format({65520.0L, false}, kF16), 0x7c00);          // overflow
  EXPECT_EQ(round_to_format({-1.0L - 0x1p-8L, false}, kBF16), 0xbf80);  // tie: to even
  EXPECT_EQ(round_to_format({-1.0L - 3 * 0x1p-8L, false}, kBF16), 0xbf82);
  EXPECT_EQ(round_to_format({0x1p-133L, false}, kBF16), 0x0001);  // smallest subnormal
  for (std::uint32_t b = 0; b < 0x10000; ++b) {  // every finite pattern decodes and re-encodes
    for (const Format& f : kFormats) {
      const long double v = decode(static_cast<std::uint16_t>(b), f);
      if (std::isfinite(v)) {
        ASSERT_EQ(round_value(v, f), b) << f.name << " 0x" << std::hex << b;
      }
    }
  }
  EXPECT_EQ(decode(0x3555, kF16), 0x1.554p-2L);
  EXPECT_EQ(decode(0x3eab, kBF16), 0x1.56p-2L);
}

}  // namespace
}  // namespace mpsim
