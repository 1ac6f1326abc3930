// Scalar: a Python-like number (bool, integer or floating) passed to ops in place of a tensor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/convert.h"
#include "core/dtype.h"

namespace mpsim {

class Scalar {
 public:
  enum class Kind : std::uint8_t { Bool, Int, Float };

  Scalar() : Scalar(0.0) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v), d_(v) {}  // NOLINT: implicit like a Python number
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Scalar(T v)
      : kind_(Kind::Int), i_(static_cast<std::int64_t>(v)), d_(static_cast<double>(v)) {}
  template <class T>
  requires std::is_floating_point_v<T> Scalar(T v)
      : kind_(Kind::Float), i_(0), d_(static_cast<double>(v)) {}

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  double to_double() const { return d_; }
  // A floating scalar converts as to(int64) does (Note [dtype conversion]): truncation, and
  // INT64_MIN for NaN and out-of-range values instead of a cast with undefined behaviour.
  std::int64_t to_int() const { return kind_ == Kind::Float ? convert<std::int64_t>(d_) : i_; }
  // The dtype a wrapped Python number takes part in promotion as: float scalars count as the
  // default dtype float32, integers as int64, bools as bool (PyTorch's rule).
  DType promotion_dtype() const {
    return kind_ == Kind::Float ? DType::Float32 : kind_ == Kind::Int ? DType::Int64 : DType::Bool;
  }
  std::string to_string() const;

 private:
  Kind kind_;
  std::int64_t i_;
  double d_;
};

// Note [checked scalar conversion]
// Whether a Python number does not fit `dtype`, by PyTorch's rule for the conversions it checks
// (c10's overflows<To, From>: full, fill_, item assignment, torch.tensor of Python ints):
// - a bool, and any value stored into bool, always fits;
// - an integer fits a signed dtype in its range; uint8 takes [-255, 255] (negative values wrap
//   in two's complement, as torch allows for `a - b`); a floating dtype up to its largest
//   finite value (70000 overflows float16);
// - a float fits an integer dtype when it is finite and within [lowest, max] before truncation
//   (NaN, inf, -1.0 for uint8, 255.9 for uint8 do not); a floating dtype when it is NaN, an
//   infinity or within +-max (1e6 does not fit float16).
// One difference, a refusal where torch gives a wrong value: 2^63 (a float) does not fit int64
// (torch compares against INT64_MAX rounded to 2^63 and stores INT64_MIN).
bool overflows(const Scalar& value, DType dtype);
// Throws InvalidArgument "[op] value cannot be converted to type <dtype> without overflow: <v>".
void check_fits(std::string_view op, const Scalar& value, DType dtype);

}  // namespace mpsim
