// The C entry points bench/interleave.py loads with ctypes, so that mpsim's unary ops are timed
// in the same process as PyTorch's, round by round (docs/performance.md).
#include <chrono>
#include <cstring>

#include "core/mpsim.h"

namespace {

mpsim::Tensor g_input;

mpsim::Tensor run_unary(const char* op, const mpsim::Tensor& x) {
  if (!std::strcmp(op, "exp")) return mpsim::exp(x);
  if (!std::strcmp(op, "log")) return mpsim::log(x);
  if (!std::strcmp(op, "sigmoid")) return mpsim::sigmoid(x);
  if (!std::strcmp(op, "silu")) return mpsim::silu(x);
  if (!std::strcmp(op, "gelu")) return mpsim::gelu(x);
  if (!std::strcmp(op, "gelu_tanh")) return mpsim::gelu(x, "tanh");
  if (!std::strcmp(op, "sin")) return mpsim::sin(x);
  if (!std::strcmp(op, "cos")) return mpsim::cos(x);
  if (!std::strcmp(op, "tanh")) return mpsim::tanh(x);
  if (!std::strcmp(op, "erf")) return mpsim::erf(x);
  throw mpsim::InvalidArgument(std::string("[interleave] unknown op ") + op);
}

}  // namespace

// Copies n floats at x as the input of every later call and sets the thread count.
extern "C" void mpsim_bench_setup(const float* x, long n, int threads) {
  g_input = mpsim::from_blob_copy(x, n, mpsim::DType::Float32, mpsim::Shape{n});
  mpsim::set_num_threads(threads);
}

// Seconds per call of `op` on the input, averaged over `reps` calls (fast: Precision::Fast);
// a negative value for an unknown op.
extern "C" double mpsim_bench_time(const char* op, int reps, int fast) {
  try {
    const mpsim::PrecisionGuard guard(fast ? mpsim::Precision::Fast : mpsim::Precision::Golden);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) run_unary(op, g_input);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  } catch (const mpsim::Error&) {
    return -1;
  }
}
