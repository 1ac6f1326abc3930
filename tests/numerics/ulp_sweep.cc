// ulp_sweep: checks a float32 unary op over all 2^32 inputs (or every STRIDE-th one) against an
// oracle, per SIMD target, and prints the max ULP error, the share of correctly rounded results
// and the worst inputs. Not a CI test (the full sweep takes minutes per op); CI runs the same
// check on a fixed 1M-input sample (unary_accuracy_test). Results: docs/numerics.md.
//
//   ulp_sweep [--op NAME|all] [--stride N] [--target NAME|all] [--oracle longdouble|mpfr]
//             [--precision golden|fast]
//
// --precision fast sweeps the Precision::Fast kernels (Note [fast float unary]).
//
// The long double oracle is decisive except within 2^-58 of a rounding boundary, where the
// MPFR oracle decides (correctly_rounded()); --oracle mpfr uses MPFR for every input (slow).
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

Result sweep(const UnaryCase& c, std::uint64_t stride, bool mpfr_everywhere) {
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
            const long double exact = c.oracle(xs[i]);
            const long double rounded = mpfr_everywhere
                                            ? mpfr_correctly_rounded(c.name, xs[i], kF32)
                                            : correctly_rounded(c.name, xs[i], exact, kF32);
            ++acc.count;
            if (same_float(got[i], static_cast<float>(rounded))) ++acc.correctly_rounded;
            const double ulp = ulp_error(got[i], exact);
            if (ulp > 0.5 && (acc.worst.size() < 5 || ulp > acc.worst.back().ulp))
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

int usage() {
  std::fprintf(stderr,
               "usage: ulp_sweep [--op NAME|all] [--stride N] [--target NAME|all] [--oracle "
               "longdouble|mpfr] [--precision golden|fast]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string op = "all", target = "all", oracle = "longdouble", precision = "golden";
  std::uint64_t stride = 1;
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
    else
      return usage();
  }
  if (stride == 0 || (oracle != "longdouble" && oracle != "mpfr")) return usage();
  if (precision != "golden" && precision != "fast") return usage();
  set_precision(parse_precision(precision));
  const std::vector<std::string> targets =
      target == "all" ? simd::available_targets() : std::vector<std::string>{target};
  std::printf("%-11s %-7s %12s %10s %14s  %s\n", "op", "target", "inputs", "max ULP",
              "correctly rnd", "worst inputs (x: got vs exact)");
  for (const UnaryCase& c : unary_cases()) {
    if (op != "all" && op != c.name) continue;
    for (const std::string& t : targets) {
      simd::restrict_targets(t);
      const Result r = sweep(c, stride, oracle == "mpfr");
      simd::reset_targets();
      std::printf("%-11s %-7s %12llu %10.4f %13.6f%%  ", std::string(c.name).c_str(), t.c_str(),
                  static_cast<unsigned long long>(r.count), r.max_ulp,
                  100.0 * static_cast<double>(r.correctly_rounded) / static_cast<double>(r.count));
      for (const Worst& w : r.worst) std::printf("%a: %a vs %La; ", w.x, w.got, w.exact);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return 0;
}
