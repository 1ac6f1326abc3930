// `mpsim demo`: what the library does today, on the cpu device. Each step prints its result
// and checks it against a scalar double-precision oracle computed here.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/mpsim.h"
#include "device_sim/mps.h"
#include "tools/commands.h"

namespace mpsim::tools {
namespace {

int g_failures = 0;

void check(const char* what, double max_err, double bound) {
  const bool ok = max_err <= bound;
  g_failures += ok ? 0 : 1;
  std::printf("  %-44s max |err| = %.3g (bound %.3g)  %s\n", what, max_err, bound,
              ok ? "ok" : "FAILED");
}

double max_abs_diff(const std::vector<float>& got, const std::vector<double>& want) {
  double m = 0;
  for (std::size_t i = 0; i < got.size(); ++i) m = std::fmax(m, std::fabs(got[i] - want[i]));
  return m;
}

}  // namespace

int demo_main(int, char**) {
  std::printf("mpsim demo: elementwise ops on the cpu device (float32)\n\n");
  const Tensor x = from_vector<float>({-3, -1, -0.5f, 0, 0.5f, 1, 2, 3, 4, 5, 6, 7}, {3, 4});
  const Tensor b = from_vector<float>({0.25f, -0.5f, 1, 2}, {4});
  std::printf("x =\n%s\nb = %s\n\n", x.to_string().c_str(), b.to_string().c_str());

  // y = gelu(x + b) with b broadcast over the rows; softplus; where; a strided view.
  const Tensor y = gelu(x + b);
  std::printf("gelu(x + b) =\n%s\n", y.to_string().c_str());
  std::vector<double> want;
  const std::vector<float> xs = x.to_vector<float>(), bs = b.to_vector<float>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double v = static_cast<double>(xs[i]) + bs[i % 4];
    want.push_back(0.5 * v * std::erfc(-v / std::sqrt(2.0)));
  }
  check("gelu(x + b) vs double oracle", max_abs_diff(y.to_vector<float>(), want), 1e-6);

  const Tensor s = sigmoid(x.t());  // a transposed (non-contiguous) view
  want.clear();
  for (std::int64_t c = 0; c < 4; ++c) {
    for (std::int64_t r = 0; r < 3; ++r)
      want.push_back(1 / (1 + std::exp(-static_cast<double>(xs[r * 4 + c]))));
  }
  check("sigmoid(x.t()) on a transposed view", max_abs_diff(s.to_vector<float>(), want), 1e-7);

  const Tensor w = where(gt(x, 0.0), x, x * 0.1);  // leaky relu
  want.clear();
  for (float v : xs) want.push_back(v > 0 ? v : v * 0.1f);
  check("where(x > 0, x, 0.1 x)", max_abs_diff(w.to_vector<float>(), want), 0);

  // Type promotion: int tensor + 2.5 -> float32; float16 math rounds once.
  const Tensor i = arange(0, 5);
  const Tensor p = i + 2.5;
  std::printf("\narange(0, 5) + 2.5 = %s  (dtype %s)\n", p.to_string().c_str(),
              std::string(dtype_name(p.dtype())).c_str());
  const Tensor h = exp(x.to(DType::Float16));
  std::printf("exp(x.half()) = %s\n", h.to_string().c_str());

  // A 16M-element exp: throughput of the vectorized, multi-threaded golden path.
  const Tensor big = full({1 << 24}, 0.5, DType::Float32);
  exp(big);  // the first call pays the page faults of a fresh 64 MiB output; later ones reuse it
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor e = exp(big);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  check("exp over 16M floats", std::fabs(e.to_vector<float>()[12345] - std::exp(0.5)), 1.2e-7);
  std::printf("  exp over 16M floats took %.2f ms on %d threads (warm)\n", ms, num_threads());

  // The same block on the simulated mps device: queued, then read back (which synchronizes);
  // it runs the same kernels, so the bits equal the cpu's.
  std::printf("\non the %s: softmax(gelu(x + b)) and its row sums\n",
              mps::properties().name.c_str());
  const Tensor xm = x.to(Device::mps()), bm = b.to(Device::mps());
  const Tensor pm = softmax(gelu(xm + bm), -1);
  const Tensor pc = softmax(gelu(x + b), -1);
  const std::vector<float> vm = pm.to_vector<float>(), vc = pc.to_vector<float>();
  double diff = 0;
  for (std::size_t k = 0; k < vm.size(); ++k) diff = std::fmax(diff, std::fabs(vm[k] - vc[k]));
  check("softmax(gelu(x + b)) on mps vs cpu", diff, 0);
  std::printf("  row sums on mps: %s\n", sum(pm, {-1}).to_string().c_str());
  mps::synchronize();
  std::printf("  mps memory: %zu bytes allocated, %zu reserved, recommended max %zu\n",
              mps::current_allocated_memory(), mps::driver_allocated_memory(),
              mps::recommended_max_memory());

  std::printf("\n%s\n", g_failures == 0 ? "demo: all checks passed" : "demo: some checks FAILED");
  return g_failures == 0 ? 0 : 1;
}

}  // namespace mpsim::tools
