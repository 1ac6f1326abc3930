// Two or more builds of libmpsim side by side in one process: each library is dlopen'ed apart
// (RTLD_LOCAL; this program links no mpsim, so each build's calls stay within itself), and the
// golden float32 rows of the named ops (unary_cr_row_f32, math_cr_row_f32, math_lanes_row_f32 for
// erfc, pow_cr_lanes_row_f32; unary_row_f32 for erf, abs, relu, sqrt and reciprocal; where a
// build's target has no float-lane row for the op, the row the library runs instead: unary_row_f32
// or math_lanes_row_f32) run alternately, one call of each build in turn, on 64Ki floats in cache
// (--n: another count; --stream on: non-temporal stores in the plain rows abs, relu, sqrt and
// reciprocal, as the golden float-lane rows always store plainly (Note [streaming stores]);
// --stream both: each build with plain and with non-temporal stores, alternately). Alternating
// within one process cancels the machine's slow spells, which move separate runs by 10-30% here; a
// build timed against itself agrees within about 1%. Prints each variant's 10th percentile and
// minimum in microseconds, and the first one's time over each (above 1: faster than the first).
//
//   build/bench/ab_rows --ops exp,sigmoid/m --rounds 300 OLD/libmpsim.so NEW/libmpsim.so
//   build/bench/ab_rows --ops exp,relu --n 16777216 --stream both --rounds 15 build/libmpsim.so
//
// An op's inputs are uniform on its range of docs/performance.md; OP/m puts -inf in every
// other element of N(0, 1) inputs, OP/n NaN, OP/h (half negative) leaves N(0, 1) as it is,
// OP/s puts a NaN in every 1000th element of the uniform inputs (sparse special lanes).
// pow_Y is pow with the scalar exponent Y; f64:OP (exp, log, expm1, log1p, sigmoid, tanh, erf)
// the float64 row (math_rows_f64) on the same values widened.
#include <dlfcn.h>
#include <sys/mman.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"

namespace {

using mpsim::simd::MathKind;
using mpsim::simd::UnaryKind;
using mpsim::simd::UnaryParams;
using UnaryFn = bool (*)(UnaryKind, const float*, float*, std::size_t, const UnaryParams&);
using MathFn = bool (*)(MathKind, const float*, float*, std::size_t);
using PowFn = bool (*)(const float*, float, float*, std::size_t);
// pow_cr_lanes_row_f32 of builds whose rows took a streaming flag (always false here).
using PowStreamFn = bool (*)(const float*, float, float*, std::size_t, bool);
using PlainFn = void (*)(UnaryKind, const float*, float*, std::size_t, const UnaryParams&);
using F64Fn = bool (*)(UnaryKind, const double*, double*, std::size_t);

struct Build {
  std::string path;
  UnaryFn unary;
  MathFn math;
  MathFn math_lanes;
  PowFn pow_row;            // or, in such an older build, null and
  PowStreamFn pow_stream;  // this one
  PlainFn plain;
  F64Fn f64;  // math_rows_f64, or null in a build without it
  bool pow(const float* in, float y, float* out, std::size_t n) const {
    return pow_row != nullptr ? pow_row(in, y, out, n) : pow_stream(in, y, out, n, false);
  }
};

// The row an op runs: unary_cr_row_f32, math_cr_row_f32, math_lanes_row_f32, or for the
// exact ops unary_row_f32.
enum class Row { Unary, Math, MathLanes, Plain };

struct OpCase {
  const char* name;
  Row row;
  int kind;
  float lo, hi;
};

constexpr OpCase kOps[] = {
    {"exp", Row::Unary, int(UnaryKind::Exp), -8, 8},
    {"expm1", Row::Unary, int(UnaryKind::Expm1), -8, 8},
    {"log", Row::Unary, int(UnaryKind::Log), 0.01f, 8},
    {"log1p", Row::Unary, int(UnaryKind::Log1p), 0.01f, 8},
    {"sigmoid", Row::Unary, int(UnaryKind::Sigmoid), -8, 8},
    {"silu", Row::Unary, int(UnaryKind::Silu), -8, 8},
    {"tanh", Row::Unary, int(UnaryKind::Tanh), -8, 8},
    {"softplus", Row::Unary, int(UnaryKind::Softplus), -8, 8},
    {"gelu", Row::Unary, int(UnaryKind::GeluErf), -8, 8},
    {"gelu_tanh", Row::Unary, int(UnaryKind::GeluTanh), -8, 8},
    {"sin", Row::Unary, int(UnaryKind::Sin), -8, 8},
    {"cos", Row::Unary, int(UnaryKind::Cos), -8, 8},
    {"rsqrt", Row::Unary, int(UnaryKind::Rsqrt), 0.01f, 8},
    {"exp2", Row::Math, int(MathKind::exp2), -8, 8},
    {"log2", Row::Math, int(MathKind::log2), 0.01f, 8},
    {"log10", Row::Math, int(MathKind::log10), 0.01f, 8},
    {"sinh", Row::Math, int(MathKind::sinh), -8, 8},
    {"cosh", Row::Math, int(MathKind::cosh), -8, 8},
    {"asinh", Row::Math, int(MathKind::asinh), -8, 8},
    {"acosh", Row::Math, int(MathKind::acosh), 1.01f, 8},
    {"atanh", Row::Math, int(MathKind::atanh), -0.99f, 0.99f},
    {"atan", Row::Math, int(MathKind::atan), -8, 8},
    {"asin", Row::Math, int(MathKind::asin), -0.99f, 0.99f},
    {"acos", Row::Math, int(MathKind::acos), -0.99f, 0.99f},
    {"tan", Row::Math, int(MathKind::tan), -8, 8},
    {"erfc", Row::MathLanes, int(MathKind::erfc), -8, 8},
    {"erf", Row::Plain, int(UnaryKind::Erf), -8, 8},
    {"abs", Row::Plain, int(UnaryKind::Abs), -8, 8},
    {"relu", Row::Plain, int(UnaryKind::Relu), -8, 8},
    {"sqrt", Row::Plain, int(UnaryKind::Sqrt), 0.01f, 8},
    {"reciprocal", Row::Plain, int(UnaryKind::Reciprocal), 0.01f, 8},
};

template <class Fn>
Fn symbol(void* lib, const char* mangled, const std::string& path) {
  void* f = dlsym(lib, mangled);
  if (f == nullptr) throw std::runtime_error(path + " has no " + mangled);
  return reinterpret_cast<Fn>(f);
}

Build open_build(const std::string& path) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) throw std::runtime_error(dlerror());
  const char* pow_name = "_ZN5mpsim4simd20pow_cr_lanes_row_f32EPKffPfm";
  void* pow_row = dlsym(lib, pow_name);
  void* pow_stream = dlsym(lib, "_ZN5mpsim4simd20pow_cr_lanes_row_f32EPKffPfmb");
  if (pow_row == nullptr && pow_stream == nullptr) {
    throw std::runtime_error(path + " has no " + pow_name);
  }
  return {path,
          symbol<UnaryFn>(lib,
                          "_ZN5mpsim4simd16unary_cr_row_f32ENS0_9UnaryKindEPKfPfmRKNS0_11Unary"
                          "ParamsE",
                          path),
          symbol<MathFn>(lib, "_ZN5mpsim4simd15math_cr_row_f32ENS0_8MathKindEPKfPfm", path),
          symbol<MathFn>(lib, "_ZN5mpsim4simd18math_lanes_row_f32ENS0_8MathKindEPKfPfm", path),
          reinterpret_cast<PowFn>(pow_row),
          reinterpret_cast<PowStreamFn>(pow_stream),
          symbol<PlainFn>(lib,
                          "_ZN5mpsim4simd13unary_row_f32ENS0_9UnaryKindEPKfPfmRKNS0_11UnaryParamsE",
                          path),
          reinterpret_cast<F64Fn>(
              dlsym(lib, "_ZN5mpsim4simd13math_rows_f64ENS0_9UnaryKindEPKdPdm"))};
}

using Floats = std::unique_ptr<float, decltype(&std::free)>;

// n floats, 2 MiB aligned and advised huge pages as mpsim's tensors are (Note [huge pages] in
// allocator/host_allocator.cc): inputs in 4 KiB pages ran 16M floats of log 1.3x slower than
// the same row under the Python module.
Floats huge_floats(std::size_t n) {
  const std::size_t bytes = (n * sizeof(float) + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  Floats buf(static_cast<float*>(std::aligned_alloc(2u << 20, bytes)), &std::free);
  if (!buf) throw std::runtime_error("out of memory");
  madvise(buf.get(), bytes, MADV_HUGEPAGE);
  std::fill_n(buf.get(), n, 0.0f);
  return buf;
}

// The inputs of `name` (OP, OP/m, OP/n, OP/h, OP/s, pow_Y or f64:OP) and the call that runs one
// build's row.
struct Case {
  Floats x{nullptr, &std::free};
  std::shared_ptr<std::vector<double>> x64, y64;  // f64:OP's input and output
  std::function<bool(const Build&, float*, bool)> run;  // (build, out, streaming stores)
};

Case make_case(const std::string& name, std::size_t n) {
  const std::size_t slash = name.find('/');
  const bool f64 = name.rfind("f64:", 0) == 0;
  const std::size_t skip = f64 ? 4 : 0;
  const std::string op = name.substr(skip, slash == std::string::npos ? slash : slash - skip);
  const char mode = slash == std::string::npos ? 0 : name[slash + 1];
  std::mt19937 gen(7);
  Case c;
  c.x = huge_floats(n);
  float lo = 0.01f, hi = 8;
  const OpCase* found = nullptr;
  for (const OpCase& k : kOps) {
    if (op == k.name) found = &k;
  }
  if (found != nullptr) {
    lo = found->lo, hi = found->hi;
  } else if (op.rfind("pow_", 0) != 0) {
    throw std::runtime_error("unknown op " + op);
  }
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::normal_distribution<float> normal;
  for (std::size_t i = 0; i < n; ++i) {
    c.x.get()[i] = mode == 0 || mode == 's' ? uniform(gen) : normal(gen);
    if (mode == 'm' && i % 2 == 0) c.x.get()[i] = -INFINITY;
    if (mode == 'n' && i % 2 == 0) c.x.get()[i] = NAN;
    if (mode == 's' && i % 1000 == 0) c.x.get()[i] = NAN;
  }
  const float* in = c.x.get();
  if (f64) {
    if (found == nullptr || (found->row != Row::Unary && found->row != Row::Plain)) {
      throw std::runtime_error("no f64 row " + op);
    }
    c.x64 = std::make_shared<std::vector<double>>(in, in + n);
    c.y64 = std::make_shared<std::vector<double>>(n);
    const auto kind = static_cast<UnaryKind>(found->kind);
    c.run = [x = c.x64, y = c.y64, kind](const Build& b, float*, bool) {
      return b.f64 != nullptr && b.f64(kind, x->data(), y->data(), x->size());
    };
    return c;
  }
  if (found == nullptr) {
    const float y = std::stof(op.substr(4));
    c.run = [in, n, y](const Build& b, float* out, bool) { return b.pow(in, y, out, n); };
  } else if (found->row == Row::Math) {
    const auto kind = static_cast<MathKind>(found->kind);
    c.run = [in, n, kind](const Build& b, float* out, bool) {
      return b.math(kind, in, out, n) || b.math_lanes(kind, in, out, n);
    };
  } else if (found->row == Row::MathLanes) {
    const auto kind = static_cast<MathKind>(found->kind);
    c.run = [in, n, kind](const Build& b, float* out, bool) {
      return b.math_lanes(kind, in, out, n);
    };
  } else if (found->row == Row::Plain) {
    const auto kind = static_cast<UnaryKind>(found->kind);
    c.run = [in, n, kind](const Build& b, float* out, bool stream) {
      UnaryParams p;
      p.stream_out = stream;
      b.plain(kind, in, out, n, p);
      return true;
    };
  } else {
    const auto kind = static_cast<UnaryKind>(found->kind);
    c.run = [in, n, kind](const Build& b, float* out, bool) {
      if (!b.unary(kind, in, out, n, UnaryParams{})) b.plain(kind, in, out, n, UnaryParams{});
      return true;
    };
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times golden float32 rows of two or more libmpsim builds alternately"};
  std::string ops = "exp,log,sigmoid";
  int rounds = 300;
  std::vector<std::string> paths;
  app.add_option("--ops", ops, "comma-separated: OP, OP/m, OP/n, OP/h, OP/s, pow_Y");
  app.add_option("--rounds", rounds, "calls of each build per op")->check(CLI::PositiveNumber);
  std::size_t n = std::size_t{1} << 16;
  app.add_option("--n", n, "floats per call (65536: in cache)")->check(CLI::PositiveNumber);
  std::string stream = "off";
  app.add_option("--stream", stream,
                 "off, on (non-temporal stores in the plain rows abs, relu, sqrt and reciprocal), "
                 "or both (each build both ways)")
      ->check(CLI::IsMember({"off", "on", "both"}));
  app.add_option("builds", paths, "libmpsim.so files")->required()->expected(1, 16);
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<Build> builds;
    for (const std::string& p : paths) builds.push_back(open_build(p));
    // The variants timed in turn: each build with plain or streaming stores, or both.
    struct Variant {
      std::size_t build;
      bool stream;
    };
    std::vector<Variant> variants;
    for (std::size_t b = 0; b < builds.size(); ++b) {
      if (stream != "on") variants.push_back({b, false});
      if (stream != "off") variants.push_back({b, true});
    }
    if (variants.size() < 2) throw std::runtime_error("two builds, or --stream both");
    for (std::size_t v = 0; v < variants.size(); ++v) {
      std::printf("%zu: %s%s\n", v + 1, paths[variants[v].build].c_str(),
                  variants[v].stream ? " (streaming stores)" : "");
    }
    // Streaming stores need a 64-byte aligned output.
    const Floats out_buf = huge_floats(n);
    float* const out = out_buf.get();
    std::stringstream list(ops);
    for (std::string name; std::getline(list, name, ',');) {
      const Case c = make_case(name, n);
      std::vector<std::vector<double>> us(variants.size());
      for (int r = 0; r < rounds; ++r) {
        for (std::size_t v = 0; v < variants.size(); ++v) {
          const auto t0 = std::chrono::steady_clock::now();
          if (!c.run(builds[variants[v].build], out, variants[v].stream)) {
            std::printf("%s: no float-lane row on this target\n", name.c_str());
            return 1;
          }
          const auto t1 = std::chrono::steady_clock::now();
          us[v].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
      }
      std::printf("%-12s", name.c_str());
      double first = 0;
      for (std::size_t v = 0; v < variants.size(); ++v) {
        std::sort(us[v].begin(), us[v].end());
        const double p10 = us[v][us[v].size() / 10];
        if (v == 0) first = p10;
        std::printf("  %.1f us (min %.1f) x%.3f", p10, us[v][0], first / p10);
      }
      std::printf("\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ab_rows: %s\n", e.what());
    return 1;
  }
  return 0;
}
