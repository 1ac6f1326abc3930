// ulp_sweep: checks a float32 unary op over all 2^32 inputs (or every STRIDE-th one) against an
// oracle, per SIMD target, and prints the max ULP error, the share of correctly rounded results
// and the worst inputs. Not a CI test (the full sweep takes minutes per op); CI runs the same
// check on a fixed 1M-input sample (unary_accuracy_test). Results: docs/numerics.md.
//
//   ulp_sweep [--op NAME|all] [--stride N] [--target NAME|all] [--oracle auto|longdouble|mpfr]
//             [--precision golden|fast] [--hard BITS] [--hard-table 1]
//
// --precision fast sweeps the Precision::Fast kernels (Note [fast float unary]).
//
// Each input first meets a double oracle (glibc's double functions, within a few double ulps):
// where its value lies farther than 2^-40 of itself from every rounding boundary of the float
// grid, it decides the correctly rounded float and the ULP error (to 2^-16 ULP); elsewhere MPFR
// decides (~2^-15.5 of the inputs). For the ops without a double oracle the long double oracle
// decides, except within 2^-58 of a boundary, where MPFR does (correctly_rounded()); --oracle
// mpfr uses MPFR for every input (slow), --oracle longdouble skips the double oracle.
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels_simd/math_hard.h"
#include "kernels_simd/scalar_math.h"
#include "kernels_simd/simd_target.h"
#include "tests/numerics/mpfr_oracle.h"
#include "tests/numerics/oracle.h"

namespace {

using namespace mpsim;
using namespace mpsim::testing;

struct Worst {
  double ulp;
  float x;
  float got;
  long double exact;
};

struct Result {
  double max_ulp = 0;
  std::uint64_t count = 0, correctly_rounded = 0;
  std::vector<Worst> worst;  // the 5 largest errors

  void add(const Worst& w) {
    max_ulp = std::max(max_ulp, w.ulp);
    worst.push_back(w);
    std::sort(worst.begin(), worst.end(),
              [](const Worst& a, const Worst& b) { return a.ulp > b.ulp; });
    if (worst.size() > 5) worst.pop_back();
  }
  void merge(const Result& o) {
    count += o.count;
    correctly_rounded += o.correctly_rounded;
    for (const Worst& w : o.worst) add(w);
  }
};

// The double oracles: formulas free of cancellation, each within a few double ulps (glibc's
// functions are within 1-2 ulps), far below the 2^-40 margin they are trusted with.
using DoubleOracle = double (*)(double);
DoubleOracle double_oracle(std::string_view name) {
  if (name == "exp") return [](double x) { return std::exp(x); };
  if (name == "log") return [](double x) { return std::log(x); };
  if (name == "log1p") return [](double x) { return std::log1p(x); };
  if (name == "expm1") return [](double x) { return std::expm1(x); };
  if (name == "sqrt") return [](double x) { return std::sqrt(x); };
  if (name == "rsqrt") return [](double x) { return 1.0 / std::sqrt(x); };
  if (name == "sin") return [](double x) { return std::sin(x); };
  if (name == "cos") return [](double x) { return std::cos(x); };
  if (name == "tanh") return [](double x) { return std::tanh(x); };
  if (name == "erf") return [](double x) { return std::erf(x); };
  if (name == "sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (name == "silu") return [](double x) { return x / (1.0 + std::exp(-x)); };
  if (name == "reciprocal") return [](double x) { return 1.0 / x; };
  if (name == "square") return [](double x) { return x * x; };
  // plain formulas, not the kernels' (error below 2^-44: gelu 2 y^2 2^-53 at y = |x|/sqrt2 <= 10,
  // gelu_tanh and softplus |2z| or |x| times 2^-53 where results are not far below 2^-149)
  if (name == "gelu") return [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); };
  if (name == "gelu_tanh")
    return [](double x) {
      const double z = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
      return x / (1.0 + std::exp(-2.0 * z));
    };
  if (name == "softplus")  // beta 1, threshold 20
    return [](double x) {
      return x > 20 ? x : std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
    };
  if (name == "acos") return [](double x) { return std::acos(x); };
  if (name == "asin") return [](double x) { return std::asin(x); };
  if (name == "atan") return [](double x) { return std::atan(x); };
  if (name == "acosh") return [](double x) { return std::acosh(x); };
  if (name == "asinh") return [](double x) { return std::asinh(x); };
  if (name == "atanh") return [](double x) { return std::atanh(x); };
  if (name == "cosh") return [](double x) { return std::cosh(x); };
  if (name == "sinh") return [](double x) { return std::sinh(x); };
  if (name == "tan") return [](double x) { return std::tan(x); };
  if (name == "exp2") return [](double x) { return std::exp2(x); };
  if (name == "log2") return [](double x) { return std::log2(x); };
  if (name == "log10") return [](double x) { return std::log10(x); };
  if (name == "erfc") return [](double x) { return std::erfc(x); };
  return nullptr;
}

// The float nearest v when v lies farther than 2^-40 |v| from every rounding boundary of the
// float grid (NaN, infinities and zeros included: a double oracle gives them only where the
// exact value is NaN, beyond the double range or below half its smallest subnormal); false
// otherwise (the caller asks the slower oracles).
bool decided_by_double(double v, float& rounded) {
  if (std::isnan(v) || std::isinf(v) || v == 0) {
    rounded = static_cast<float>(v);
    return true;
  }
  const double a = std::fabs(v);
  constexpr double kOverflow = 0x1.ffffffp127;  // the midpoint between FLT_MAX and 2^128
  if (std::fabs(a - kOverflow) <= a * 0x1p-40) return false;
  if (a > kOverflow) {
    rounded = std::copysign(INFINITY, static_cast<float>(v));
    return true;
  }
  int e = 0;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const double quantum = std::ldexp(1.0, std::max(e - 1, -126) - 23);
  const double units = a / quantum;  // exact: a power-of-two scaling
  const double frac = units - std::floor(units);
  if (std::fabs(frac - 0.5) <= units * 0x1p-40 + 0x1p-60) return false;
  rounded = static_cast<float>(v);  // the conversion rounds to nearest, subnormals included
  return true;
}

Result sweep(const UnaryCase& c, std::uint64_t stride, bool mpfr_everywhere, bool use_double) {
  const DoubleOracle fast_oracle = use_double ? double_oracle(c.name) : nullptr;
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 22;  // inputs per tensor call
  const std::uint64_t total = ((std::uint64_t{1} << 32) + stride - 1) / stride;
  Result result;
  std::vector<float> xs;
  for (std::uint64_t begin = 0; begin < total; begin += kChunk) {
    const std::uint64_t n = std::min(kChunk, total - begin);
    xs.resize(n);
    for (std::uint64_t i = 0; i < n; ++i)
      xs[i] = float_of(static_cast<std::uint32_t>((begin + i) * stride));
    const std::vector<float> got = c.op(from_vector(xs)).to_vector<float>();
    const Result part = tbb::parallel_reduce(
        tbb::blocked_range<std::uint64_t>(0, n, 4096), Result{},
        [&](const tbb::blocked_range<std::uint64_t>& r, Result acc) {
          for (std::uint64_t i = r.begin(); i < r.end(); ++i) {
            if (fast_oracle != nullptr) {
              const double v = fast_oracle(static_cast<double>(xs[i]));
              float rounded;
              if (decided_by_double(v, rounded)) {
                ++acc.count;
                if (same_float(got[i], rounded)) ++acc.correctly_rounded;
                const double ulp = ulp_error(got[i], static_cast<long double>(v));
                if (ulp > 0.5 && (acc.worst.size() < 5 || ulp > acc.worst.back().ulp))
                  acc.add({ulp, xs[i], got[i], static_cast<long double>(v)});
                acc.max_ulp = std::max(acc.max_ulp, ulp);
                continue;
              }
            }
            const long double exact = c.oracle(xs[i]);
            // where a double oracle cannot decide, MPFR does: the guarded ops' slow paths are
            // long double functions, checked against MPFR rather than against their own kind
            const long double rounded = mpfr_everywhere || fast_oracle != nullptr
                                            ? mpfr_correctly_rounded(c.name, xs[i], kF32)
                                            : correctly_rounded(c.name, xs[i], exact, kF32);
            ++acc.count;
            if (same_float(got[i], static_cast<float>(rounded))) ++acc.correctly_rounded;
            const double ulp = ulp_error(got[i], exact);
            if ((ulp > 0.5 || !same_float(got[i], static_cast<float>(rounded))) &&
                (acc.worst.size() < 5 || ulp > acc.worst.back().ulp))
              acc.add({ulp, xs[i], got[i], exact});
            acc.max_ulp = std::max(acc.max_ulp, ulp);
          }
          return acc;
        },
        [](Result a, const Result& b) {
          a.merge(b);
          a.max_ulp = std::max(a.max_ulp, b.max_ulp);
          return a;
        });
    result.merge(part);
    result.max_ulp = std::max(result.max_ulp, part.max_ulp);
  }
  return result;
}

// The guarded ops by name: their slow paths (Note [hard lanes], Note [math family hard lanes])
// and the inputs the guard leaves to the fast path.
struct GuardedOp {
  const char* name;
  const char* kind;  // the table entry's kind, as C++
  float (*hard)(float);
  bool (*exempt)(float);
};
template <simd::UnaryKind K>
float unary_hard(float x) {
  return simd::scalar_unary_hard_f32(K, x, simd::UnaryParams{});
}
template <simd::UnaryKind K>
bool unary_exempt(float x) {
  return simd::hard_lane_exempt(K, x);
}
template <simd::MathKind K>
float math_hard(float x) {
  return simd::math_hard_f32(K, x);
}
bool never_exempt(float) { return false; }
using U = simd::UnaryKind;
using M = simd::MathKind;
const GuardedOp kGuardedOps[] = {
    {"exp", "UnaryKind::Exp", unary_hard<U::Exp>, unary_exempt<U::Exp>},
    {"expm1", "UnaryKind::Expm1", unary_hard<U::Expm1>, unary_exempt<U::Expm1>},
    {"log", "UnaryKind::Log", unary_hard<U::Log>, unary_exempt<U::Log>},
    {"log1p", "UnaryKind::Log1p", unary_hard<U::Log1p>, unary_exempt<U::Log1p>},
    {"rsqrt", "UnaryKind::Rsqrt", unary_hard<U::Rsqrt>, unary_exempt<U::Rsqrt>},
    {"sin", "UnaryKind::Sin", unary_hard<U::Sin>, unary_exempt<U::Sin>},
    {"cos", "UnaryKind::Cos", unary_hard<U::Cos>, unary_exempt<U::Cos>},
    {"tanh", "UnaryKind::Tanh", unary_hard<U::Tanh>, unary_exempt<U::Tanh>},
    {"erf", "UnaryKind::Erf", unary_hard<U::Erf>, unary_exempt<U::Erf>},
    {"sigmoid", "UnaryKind::Sigmoid", unary_hard<U::Sigmoid>, unary_exempt<U::Sigmoid>},
    {"silu", "UnaryKind::Silu", unary_hard<U::Silu>, unary_exempt<U::Silu>},
    {"gelu", "UnaryKind::GeluErf", unary_hard<U::GeluErf>, unary_exempt<U::GeluErf>},
    {"gelu_tanh", "UnaryKind::GeluTanh", unary_hard<U::GeluTanh>, unary_exempt<U::GeluTanh>},
    {"softplus", "UnaryKind::Softplus", unary_hard<U::Softplus>, unary_exempt<U::Softplus>},
    {"acos", "MathKind::acos", math_hard<M::acos>, never_exempt},
    {"asin", "MathKind::asin", math_hard<M::asin>, never_exempt},
    {"atan", "MathKind::atan", math_hard<M::atan>, never_exempt},
    {"acosh", "MathKind::acosh", math_hard<M::acosh>, never_exempt},
    {"asinh", "MathKind::asinh", math_hard<M::asinh>, never_exempt},
    {"atanh", "MathKind::atanh", math_hard<M::atanh>, never_exempt},
    {"cosh", "MathKind::cosh", math_hard<M::cosh>, never_exempt},
    {"sinh", "MathKind::sinh", math_hard<M::sinh>, never_exempt},
    {"tan", "MathKind::tan", math_hard<M::tan>, never_exempt},
    {"exp2", "MathKind::exp2", math_hard<M::exp2>, never_exempt},
    {"log2", "MathKind::log2", math_hard<M::log2>, never_exempt},
    {"log10", "MathKind::log10", math_hard<M::log10>, never_exempt},
    {"erfc", "MathKind::erfc", math_hard<M::erfc>, never_exempt},
};
const GuardedOp* guarded_op(std::string_view name) {
  for (const GuardedOp& g : kGuardedOps) {
    if (name == g.name) return &g;
  }
  return nullptr;
}

// --hard BITS: every input (over all 2^32) whose exact value lies within 2^-BITS of itself of a
// rounding boundary of the float grid: where a double evaluation (error ~2^-45) can misround.
// Decided by the double oracle where it is 2^-40 away, by the long double oracle (2^-60) else.
void list_hard_cases(const UnaryCase& c, int bits) {
  const DoubleOracle fast_oracle = double_oracle(c.name);
  const long double margin = std::ldexp(1.0L, -bits);
  const GuardedOp* guarded = guarded_op(c.name);
  std::vector<float> hard = tbb::parallel_reduce(
      tbb::blocked_range<std::uint64_t>(0, std::uint64_t{1} << 32, 1 << 16), std::vector<float>{},
      [&](const tbb::blocked_range<std::uint64_t>& r, std::vector<float> acc) {
        for (std::uint64_t i = r.begin(); i < r.end(); ++i) {
          const float x = float_of(static_cast<std::uint32_t>(i));
          if (guarded != nullptr && guarded->exempt(x)) continue;
          float unused;
          if (fast_oracle != nullptr && decided_by_double(fast_oracle(x), unused)) continue;
          const long double v = c.oracle(x);
          if (!std::isfinite(v) || v == 0) continue;
          const long double a = std::fabs(v);
          int e = 0;
          std::frexp(a, &e);
          const long double quantum = std::ldexp(1.0L, std::max(e - 1, -126) - 23);
          const long double units = a / quantum;
          if (std::fabs(units - std::floor(units) - 0.5L) < units * margin) acc.push_back(x);
        }
        return acc;
      },
      [](std::vector<float> a, const std::vector<float>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
      });
  std::sort(hard.begin(), hard.end());
  std::printf("// %s: %zu inputs within 2^-%d of a rounding boundary%s\n",
              std::string(c.name).c_str(), hard.size(), bits,
              c.name == "silu" ? " (|x| < 2^-54 left out: hard_lane_exempt)" : "");
  for (const float x : hard) std::printf("%af,\n", x);
}

// --hard-table: every input where the golden path's long double slow path
// (simd::scalar_unary_hard_f32, Note [hard lanes]) misrounds, against MPFR: the entries of
// kernels_simd/hard_case_table.h. Candidates: inputs within 2^-56 of a boundary by the long
// double oracle (its error is 2^-63), after the double oracle's 2^-40 filter.
void list_slow_path_failures(const UnaryCase& c, const GuardedOp& g) {
  const DoubleOracle fast_oracle = double_oracle(c.name);
  struct Entry {
    float x, y;
  };
  std::vector<Entry> bad = tbb::parallel_reduce(
      tbb::blocked_range<std::uint64_t>(0, std::uint64_t{1} << 32, 1 << 16), std::vector<Entry>{},
      [&](const tbb::blocked_range<std::uint64_t>& r, std::vector<Entry> acc) {
        for (std::uint64_t i = r.begin(); i < r.end(); ++i) {
          const float x = float_of(static_cast<std::uint32_t>(i));
          if (g.exempt(x)) continue;
          float unused;
          if (fast_oracle != nullptr && decided_by_double(fast_oracle(x), unused)) continue;
          const long double v = c.oracle(x);
          if (!std::isfinite(v) || v == 0) continue;
          int e = 0;
          std::frexp(std::fabs(v), &e);
          const long double units = std::fabs(v) / std::ldexp(1.0L, std::max(e - 1, -126) - 23);
          if (std::fabs(units - std::floor(units) - 0.5L) >= units * 0x1p-56L) continue;
          const float want = static_cast<float>(mpfr_correctly_rounded(c.name, x, kF32));
          const float got = g.hard(x);
          if (!same_float(got, want)) acc.push_back({x, want});
        }
        return acc;
      },
      [](std::vector<Entry> a, const std::vector<Entry>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
      });
  std::sort(bad.begin(), bad.end(), [](const Entry& a, const Entry& b) { return a.x < b.x; });
  for (const Entry& b : bad) std::printf("    {%s, %af, %af},\n", g.kind, b.x, b.y);
}

int usage() {
  std::fprintf(stderr,
               "usage: ulp_sweep [--op NAME|all] [--stride N] [--target NAME|all] [--oracle "
               "auto|longdouble|mpfr] [--precision golden|fast] [--hard BITS] [--hard-table 1]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string op = "all", target = "all", oracle = "auto", precision = "golden";
  std::uint64_t stride = 1;
  int hard_bits = 0;
  bool hard_table = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string v = argv[++i];
    if (a == "--op")
      op = v;
    else if (a == "--stride")
      stride = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--target")
      target = v;
    else if (a == "--oracle")
      oracle = v;
    else if (a == "--precision")
      precision = v;
    else if (a == "--hard")
      hard_bits = std::atoi(v.c_str());
    else if (a == "--hard-table")
      hard_table = v == "1";
    else
      return usage();
  }
  if (stride == 0 || (oracle != "auto" && oracle != "longdouble" && oracle != "mpfr"))
    return usage();
  if (precision != "golden" && precision != "fast") return usage();
  set_precision(parse_precision(precision));
  if (hard_table) {
    for (const UnaryCase& c : unary_cases()) {
      const GuardedOp* g = guarded_op(c.name);
      if (g != nullptr && (op == "all" || op == c.name)) list_slow_path_failures(c, *g);
    }
    return 0;
  }
  if (hard_bits > 0) {
    for (const UnaryCase& c : unary_cases()) {
      if (op == "all" || op == c.name) list_hard_cases(c, hard_bits);
    }
    return 0;
  }
  const std::vector<std::string> targets =
      target == "all" ? simd::available_targets() : std::vector<std::string>{target};
  std::printf("%-11s %-7s %12s %10s %14s %10s  %s\n", "op", "target", "inputs", "max ULP",
              "correctly rnd", "misrounded", "worst inputs (x: got vs exact)");
  for (const UnaryCase& c : unary_cases()) {
    if (op != "all" && op != c.name) continue;
    for (const std::string& t : targets) {
      simd::restrict_targets(t);
      const Result r = sweep(c, stride, oracle == "mpfr", oracle == "auto");
      simd::reset_targets();
      std::printf("%-11s %-7s %12llu %10.4f %13.6f%% %10llu  ", std::string(c.name).c_str(),
                  t.c_str(), static_cast<unsigned long long>(r.count), r.max_ulp,
                  100.0 * static_cast<double>(r.correctly_rounded) / static_cast<double>(r.count),
                  static_cast<unsigned long long>(r.count - r.correctly_rounded));
      for (const Worst& w : r.worst) std::printf("%a: %a vs %La; ", w.x, w.got, w.exact);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return 0;
}
