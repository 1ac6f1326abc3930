// Process-wide runtime settings of the cpu backend.
#pragma once

#include <optional>
#include <string_view>

namespace mpsim {

// Caps the number of threads every parallel kernel may use (1..; results never depend on it).
void set_num_threads(int n);
// The current cap: the value set, or the machine's default concurrency.
int num_threads();

// How float32 elementwise math is evaluated (DESIGN.md, "Numerics contract"; docs/numerics.md,
// "Precision::Fast"):
// - Golden (the default): in double, rounded once; correctly rounded on every tested input and
//   the same bits on every SIMD target.
// - Fast: in float lanes with error-free transformations, within 1 ULP (exp, log, sin, cos,
//   sigmoid, silu, gelu, gelu(tanh), rsqrt, log1p, expm1, softplus; docs/numerics.md),
//   for fallback execution where speed matters more. Deterministic for any thread count and
//   partition; results may differ between SIMD targets. On targets without FMA, and for the
//   ops without a fast kernel and for float16/bfloat16/float64, Fast computes the golden result.
enum class Precision : unsigned char { Golden, Fast };

std::string_view precision_name(Precision p);
// "golden" | "fast"; throws InvalidArgument for anything else.
Precision parse_precision(std::string_view name);

// The process-wide default: Golden, or MPSIM_PRECISION=golden|fast read at start-up.
void set_precision(Precision p);
// What an op called now on this thread uses: the innermost PrecisionGuard of this thread, else
// the process-wide default. Ops read it when they are called (an mps op when it is encoded, not
// when its queue runs it).
Precision precision();

// Sets this thread's precision for its lifetime (nestable), like torch's autocast contexts.
class PrecisionGuard {
 public:
  explicit PrecisionGuard(Precision p);
  ~PrecisionGuard();
  PrecisionGuard(const PrecisionGuard&) = delete;
  PrecisionGuard& operator=(const PrecisionGuard&) = delete;

 private:
  std::optional<Precision> saved_;
};

}  // namespace mpsim
