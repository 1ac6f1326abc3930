#include "core/scalar.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "core/error.h"

namespace mpsim {

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::Bool:
      return i_ ? "True" : "False";
    case Kind::Int:
      return std::to_string(i_);
    case Kind::Float: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", d_);
      return buf;
    }
  }
  return {};
}

namespace {

// The largest finite value of a floating dtype.
double floating_max(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return 65504.0;
    case DType::BFloat16:
      return 0x1.fep127;
    case DType::Float32:
      return static_cast<double>(std::numeric_limits<float>::max());
    default:
      return std::numeric_limits<double>::max();
  }
}

// [lowest, max] of an integer dtype, as doubles (exact but for int64's max, rounded up to 2^63).
std::pair<double, double> integer_range(DType dtype) {
  switch (dtype) {
    case DType::UInt8:
      return {0.0, 255.0};
    case DType::Int8:
      return {-128.0, 127.0};
    case DType::Int16:
      return {-32768.0, 32767.0};
    case DType::Int32:
      return {-0x1p31, 0x1p31 - 1};
    default:
      return {-0x1p63, 0x1p63};
  }
}

}  // namespace

bool overflows(const Scalar& value, DType dtype) {
  dtype = real_dtype(dtype);  // a complex dtype: its parts'
  if (dtype == DType::Bool || value.is_bool()) return false;
  if (value.is_integral()) {
    const std::int64_t i = value.to_int();
    switch (dtype) {
      case DType::UInt8:
        return i > 255 || i < -255;
      case DType::Int8:
        return i < std::numeric_limits<std::int8_t>::min() ||
               i > std::numeric_limits<std::int8_t>::max();
      case DType::Int16:
        return i < std::numeric_limits<std::int16_t>::min() ||
               i > std::numeric_limits<std::int16_t>::max();
      case DType::Int32:
        return i < std::numeric_limits<std::int32_t>::min() ||
               i > std::numeric_limits<std::int32_t>::max();
      case DType::Int64:
        return false;
      default:
        return std::fabs(static_cast<double>(i)) > floating_max(dtype);
    }
  }
  const double f = value.to_double();
  if (is_floating(dtype)) return std::isfinite(f) && std::fabs(f) > floating_max(dtype);
  if (!std::isfinite(f)) return true;
  const auto [lowest, max] = integer_range(dtype);
  // int64: the bound 2^63 itself does not fit (Note [checked scalar conversion]).
  return f < lowest || (dtype == DType::Int64 ? f >= max : f > max);
}

void check_fits(std::string_view op, const Scalar& value, DType dtype) {
  if (!overflows(value, dtype)) return;
  std::string message = "[";
  message.append(op).append("] value cannot be converted to type ");
  message.append(dtype_name(dtype)).append(" without overflow: ").append(value.to_string());
  throw InvalidArgument(message);
}

}  // namespace mpsim
