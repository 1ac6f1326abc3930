#include "core/dtype.h"

#include <array>
#include <string>

#include "core/error.h"

namespace mpsim {
namespace {

struct DTypeInfo {
  std::string_view name;
  std::size_t size;
};
constexpr std::array<DTypeInfo, kNumDTypes> kDTypeInfo = {{
    {"bool", 1},
    {"uint8", 1},
    {"int8", 1},
    {"int16", 2},
    {"int32", 4},
    {"int64", 8},
    {"float16", 2},
    {"bfloat16", 2},
    {"float32", 4},
    {"float64", 8},
    {"complex32", 4},
    {"complex64", 8},
    {"complex128", 16},
}};

// Rank within a category for promotion: bool < uint8 < int8 < int16 < int32 < int64 (uint8
// and int8 promote to int16 together, as torch's); float16 and bfloat16 promote to float32
// together, float32 < float64.
int category(DType d) {
  return d == DType::Bool ? 0 : is_integral(d, false) ? 1 : is_complex(d) ? 3 : 2;
}

}  // namespace

std::string_view dtype_name(DType dtype) { return kDTypeInfo[static_cast<int>(dtype)].name; }
std::size_t dtype_size(DType dtype) { return kDTypeInfo[static_cast<int>(dtype)].size; }

DType parse_dtype(std::string_view spec) {
  std::string_view name = spec;
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kDTypeInfo[i].name == name) return static_cast<DType>(i);
  }
  struct Alias {
    std::string_view alias;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"float", DType::Float32}, {"f32", DType::Float32},  {"double", DType::Float64},
      {"f64", DType::Float64},   {"half", DType::Float16}, {"f16", DType::Float16},
      {"bf16", DType::BFloat16}, {"int", DType::Int32},    {"long", DType::Int64},
      {"u8", DType::UInt8},      {"i32", DType::Int32},    {"i64", DType::Int64},
      {"char", DType::Int8},     {"i8", DType::Int8},      {"short", DType::Int16},
      {"i16", DType::Int16},     {"chalf", DType::Complex32}, {"cfloat", DType::Complex64},
      {"cdouble", DType::Complex128}, {"complex", DType::Complex64}, {"c64", DType::Complex64},
      {"c128", DType::Complex128},
  };
  for (const Alias& a : kAliases) {
    if (a.alias == name) return a.dtype;
  }
  throw DTypeError("[dtype] unknown dtype '" + std::string(spec) +
                   "' (expected bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, "
                   "float64, complex32, complex64 or complex128)");
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }

namespace detail {
void throw_complex_kernel(DType dtype) {
  throw DTypeError("[dtype] this kernel does not support " + std::string(dtype_name(dtype)) +
                   " (complex tensors take the ops of docs/ops.md's \"Complex tensors\")");
}
}  // namespace detail

DType real_dtype(DType d) {
  switch (d) {
    case DType::Complex32:
      return DType::Float16;
    case DType::Complex64:
      return DType::Float32;
    case DType::Complex128:
      return DType::Float64;
    default:
      return d;
  }
}

DType complex_dtype(DType d) {
  switch (d) {
    case DType::Float16:
    case DType::Complex32:
      return DType::Complex32;
    case DType::Float32:
    case DType::Complex64:
      return DType::Complex64;
    case DType::Float64:
    case DType::Complex128:
      return DType::Complex128;
    default:
      throw DTypeError("[dtype] " + std::string(dtype_name(d)) + " has no complex counterpart");
  }
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_complex(a) || is_complex(b)) {
    // torch's rule: the complex type whose parts are the promotion of the complex operand's
    // part type with the other operand when that is floating (complex64 + float64 ->
    // complex128, complex32 + bfloat16 -> complex64); an integer or bool takes the complex.
    const DType pa = is_complex(a) || is_floating(a) ? real_dtype(a) : real_dtype(b);
    const DType pb = is_complex(b) || is_floating(b) ? real_dtype(b) : real_dtype(a);
    return complex_dtype(promote_types(pa, pb));
  }
  const int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;  // bool < integral < floating
  if (ca == 2) {
    if ((a == DType::Float16 && b == DType::BFloat16) ||
        (a == DType::BFloat16 && b == DType::Float16)) {
      return DType::Float32;
    }
  }
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) {
    return DType::Int16;  // the smallest type holding both ranges
  }
  // Within a category the enum order is the promotion order (uint8 < int8 < int16 < int32 <
  // int64;
  // float16/bfloat16 < float32 < float64).
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

}  // namespace mpsim
