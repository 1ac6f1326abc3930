#include "core/type_promotion.h"

namespace mpsim {
namespace {

void merge(std::optional<DType>& slot, DType d) { slot = slot ? promote_types(*slot, d) : d; }

int category(DType d) {
  return d == DType::Bool ? 0 : is_integral(d, false) ? 1 : is_complex(d) ? 3 : 2;
}

// The higher-priority group wins unless the lower group is of a higher category. A complex
// lower group over a floating higher one gives the complex type of the higher's dtype (torch:
// float32 tensor + complex128 0-dim tensor -> complex64; bfloat16, which has none, complex64).
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (category(*lower) > category(*higher)) {
    if (is_complex(*lower) && is_floating(*higher)) {
      return *higher == DType::BFloat16 ? DType::Complex64 : complex_dtype(*higher);
    }
    return promote_types(*higher, *lower);
  }
  return higher;
}

}  // namespace

ResultType& ResultType::add(const Tensor& t) {
  merge(t.dim() == 0 ? zero_dim_ : dim_, t.dtype());
  return *this;
}

ResultType& ResultType::add(const Scalar& s) {
  merge(wrapped_, s.promotion_dtype());
  return *this;
}

ResultType& ResultType::add(const Operand& o) {
  std::visit([this](const auto& v) { add(v); }, o);
  return *this;
}

DType ResultType::result() const {
  return combine(dim_, combine(zero_dim_, wrapped_)).value_or(DType::Float32);
}

DType result_type(std::initializer_list<Operand> operands) {
  ResultType r;
  for (const Operand& o : operands) r.add(o);
  return r.result();
}

}  // namespace mpsim
