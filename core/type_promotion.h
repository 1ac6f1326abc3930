// PyTorch's result-type computation over tensors and Python-like scalars.
#pragma once

#include <variant>

#include "core/dtype.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace mpsim {

// An operand of an elementwise op: a tensor or a wrapped Python-like number.
using Operand = std::variant<Tensor, Scalar>;

// Note [type promotion]
// PyTorch ranks operands in three groups: tensors with dim > 0, 0-dim tensors, and wrapped
// numbers (Python scalars; floats count as the default dtype float32). Each group promotes
// within itself; a lower group only matters when its category (bool < integral < floating)
// is higher than every higher group's. So int32 tensor + 2.5 -> float32, float16 tensor +
// float32 0-dim tensor -> float16, uint8 tensor + int64 0-dim tensor -> uint8.
class ResultType {
 public:
  ResultType& add(const Tensor& t);
  ResultType& add(const Scalar& s);
  ResultType& add(const Operand& o);
  DType result() const;

 private:
  std::optional<DType> dim_, zero_dim_, wrapped_;
};

DType result_type(std::initializer_list<Operand> operands);

}  // namespace mpsim
