#include "core/complex_ops.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/dispatch.h"
#include "core/math_ops.h"
#include "core/op_checks.h"
#include "core/ops.h"
#include "core/shape.h"
#include "core/type_promotion.h"

namespace mpsim {
namespace {

using detail::require_defined;
using detail::tag;

constexpr OpId kFft = op_id("fft_fftn");

// torch's names of the part dtypes in its messages.
std::string torch_name(DType d) {
  switch (d) {
    case DType::Float16:
      return "Half";
    case DType::Float32:
      return "Float";
    case DType::Float64:
      return "Double";
    case DType::Complex32:
      return "ComplexHalf";
    case DType::Complex64:
      return "ComplexFloat";
    case DType::Complex128:
      return "ComplexDouble";
    case DType::BFloat16:
      return "BFloat16";
    case DType::Bool:
      return "Bool";
    case DType::UInt8:
      return "Byte";
    case DType::Int8:
      return "Char";
    case DType::Int16:
      return "Short";
    case DType::Int32:
      return "Int";
    default:
      return "Long";
  }
}

// torch.complex's and torch.polar's operands: both float16, float32 or float64, one dtype, one
// device; the result's shape is their broadcast.
Shape check_parts(std::string_view op, const Tensor& a, const Tensor& b, const char* first,
                  const char* second) {
  require_defined(op, a, first);
  require_defined(op, b, second);
  const auto ok = [](DType d) {
    return d == DType::Float16 || d == DType::Float32 || d == DType::Float64;
  };
  if (!ok(a.dtype()) || !ok(b.dtype())) {
    throw DTypeError(tag(op) + "Expected both inputs to be Half, Float or Double tensors but got " +
                     torch_name(a.dtype()) + " and " + torch_name(b.dtype()));
  }
  if (a.dtype() != b.dtype()) {
    throw DTypeError(tag(op) + "Expected object of scalar type " + torch_name(a.dtype()) +
                     " but got scalar type " + torch_name(b.dtype()) + " for second argument");
  }
  if (a.device() != b.device()) {
    throw DeviceError(tag(op) + "Expected all tensors to be on the same device, but found " +
                      a.device().to_string() + " and " + b.device().to_string());
  }
  return broadcast_shapes(op, a.sizes(), b.sizes());
}

}  // namespace

Tensor view_as_real(const Tensor& x) {
  require_defined("view_as_real", x, "input");
  if (!is_complex(x.dtype())) {
    throw DTypeError("[view_as_real] view_as_real is only supported for complex tensors, got " +
                     std::string(dtype_name(x.dtype())));
  }
  DimVector sizes = x.sizes().dims(), strides;
  for (std::int64_t s : x.strides()) strides.push_back(2 * s);
  sizes.push_back(2);
  strides.push_back(1);
  return Tensor(x.storage(), Shape(std::move(sizes)), std::move(strides), 2 * x.storage_offset(),
                real_dtype(x.dtype()));
}

Tensor view_as_complex(const Tensor& x) {
  const std::string op = "[view_as_complex] ";
  require_defined("view_as_complex", x, "input");
  const DType d = x.dtype();
  if (d != DType::Float16 && d != DType::Float32 && d != DType::Float64) {
    throw DTypeError(op +
                     "view_as_complex is only supported for half, float and double tensors, but "
                     "got a tensor of scalar type: " +
                     torch_name(d));
  }
  if (x.dim() == 0) throw ShapeError(op + "Input tensor must have one or more dimensions");
  if (x.size(-1) != 2) throw ShapeError(op + "Tensor must have a last dimension of size 2");
  if (x.stride(-1) != 1) throw ShapeError(op + "Tensor must have a last dimension with stride 1");
  DimVector sizes = x.sizes().dims(), strides;
  sizes.pop_back();
  for (std::int64_t i = 0; i + 1 < x.dim(); ++i) {
    if (x.stride(i) % 2 != 0 && x.size(i) != 1) {  // a size-1 dim's stride is never used
      throw ShapeError(op + "Tensor must have a stride divisible by 2 for all but last dimension");
    }
    strides.push_back(x.stride(i) / 2);
  }
  if (x.storage_offset() % 2 != 0) {
    throw ShapeError(op + "Tensor must have a storage_offset divisible by 2");
  }
  return Tensor(x.storage(), Shape(std::move(sizes)), std::move(strides), x.storage_offset() / 2,
                complex_dtype(d));
}

Tensor real(const Tensor& x) {
  require_defined("real", x, "input");
  return is_complex(x.dtype()) ? view_as_real(x).select(-1, 0) : x;
}

Tensor imag(const Tensor& x) {
  require_defined("imag", x, "input");
  if (!is_complex(x.dtype())) {
    throw DTypeError("[imag] imag is not implemented for tensors with non-complex dtypes.");
  }
  return view_as_real(x).select(-1, 1);
}

Tensor conj(const Tensor& x) {
  require_defined("conj", x, "input");
  if (!is_complex(x.dtype())) return x;
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  out.copy_(x);
  Tensor im = view_as_real(out).select(-1, 1);
  im.copy_(neg(im.clone()));  // negation is exact
  return out;
}

Tensor complex(const Tensor& real_part, const Tensor& imag_part) {
  const Shape shape = check_parts("complex", real_part, imag_part, "real", "imag");
  Tensor out = empty(shape, complex_dtype(real_part.dtype()), real_part.device());
  const Tensor parts = view_as_real(out);
  parts.select(-1, 0).copy_(real_part);
  parts.select(-1, 1).copy_(imag_part);
  return out;
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  const Shape shape = check_parts("polar", abs, angle, "abs", "angle");
  if (abs.dtype() == DType::Float16) {
    throw NotImplementedError("[polar] \"polar_cpu\" not implemented for 'ComplexHalf'");
  }
  // Each part is abs * cos(angle) (sin) in double, rounded once into the dtype; double's cos and
  // sin are within an ulp, so a float32 part is within half an ulp plus 2^-51 relative.
  const Tensor a = abs.to(Device::cpu()).to(DType::Float64);
  const Tensor t = angle.to(Device::cpu()).to(DType::Float64);
  Tensor out = empty(shape, complex_dtype(abs.dtype()), Device::cpu());
  const Tensor parts = view_as_real(out);
  parts.select(-1, 0).copy_(mul(a, cos(t)));
  parts.select(-1, 1).copy_(mul(a, sin(t)));
  return out.to(abs.device());
}

Tensor complex_neg(const Tensor& x) {
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  view_as_real(out).copy_(neg(view_as_real(x)));
  return out;
}

Tensor complex_reduce(OpId op, const Tensor& x, const IntList& dims, bool keepdim) {
  IntList all;
  for (std::int64_t d : dims) all.push_back(wrap_dim(op.name(), d, x.dim()));
  if (dims.empty()) {
    for (std::int64_t d = 0; d < x.dim(); ++d) all.push_back(d);
  }
  const Tensor parts = view_as_real(x);
  if (all.empty()) return x.clone();  // a 0-d tensor: itself
  const Tensor r = op == op_id("mean") ? mean(parts, all, keepdim) : sum(parts, all, keepdim);
  return view_as_complex(r.contiguous());
}

namespace {

// An operand's parts in float64 on the cpu: (real, imaginary), the imaginary part undefined for
// a real operand (zero).
std::pair<Tensor, Tensor> parts_of(const Operand& o) {
  if (const Scalar* s = std::get_if<Scalar>(&o)) {
    return {scalar_tensor(s->to_double(), DType::Float64, Device::cpu()), Tensor()};
  }
  const Tensor t = std::get<Tensor>(o).to(Device::cpu());
  if (is_complex(t.dtype())) {
    const Tensor c = t.to(DType::Complex128);
    return {real(c), imag(c)};
  }
  return {t.to(DType::Float64), Tensor()};
}

Tensor plus(const Tensor& a, const Tensor& b) { return !a.defined() ? b : !b.defined() ? a : add(a, b); }
Tensor times(const Tensor& a, const Tensor& b) {
  return !a.defined() || !b.defined() ? Tensor() : mul(a, b);
}

}  // namespace

Tensor complex_arith(OpId op, const Operand& a, const Operand& b, const Scalar& alpha) {
  const std::string name(op.name());
  const DType out = result_type({a, b});
  std::optional<Device> device;
  for (const Operand* o : {&a, &b}) {
    if (const Tensor* t = std::get_if<Tensor>(o)) {
      require_defined(name, *t, "input");
      if (!device || (t->dim() > 0 && device != t->device())) device = t->device();
    }
  }
  if (device && !device->is_cpu()) note_fallback(op, *device);
  auto [ar, ai] = parts_of(a);
  auto [br, bi] = parts_of(b);
  Tensor re, im;
  if (op == op_id("add") || op == op_id("sub")) {
    double k = alpha.to_double();
    if (op == op_id("sub")) k = -k;
    if (k != 1.0) {
      br = mul(br, k);
      if (bi.defined()) bi = mul(bi, k);
    }
    re = add(ar, br);
    im = plus(ai, bi);
  } else if (op == op_id("mul")) {
    const Tensor bd = times(ai, bi);
    re = bd.defined() ? sub(mul(ar, br), bd) : mul(ar, br);
    im = plus(times(ar, bi), times(ai, br));
  } else if (!bi.defined()) {  // div by a real divisor
    re = div(ar, br);
    im = ai.defined() ? div(ai, br) : Tensor();
  } else {
    // Smith's algorithm: the ratio of the divisor's smaller part to its larger, so nothing
    // overflows or underflows that the quotient does not.
    const Tensor zero = zeros({}, DType::Float64, Device::cpu());
    const Tensor ai0 = ai.defined() ? ai : zero;
    const Tensor big = ge(mpsim::abs(br), mpsim::abs(bi));
    const Tensor r = where(big, div(bi, br), div(br, bi));
    const Tensor den = where(big, add(br, mul(bi, r)), add(bi, mul(br, r)));
    re = where(big, div(add(ar, mul(ai0, r)), den), div(add(mul(ar, r), ai0), den));
    im = where(big, div(sub(ai0, mul(ar, r)), den), div(sub(mul(ai0, r), ar), den));
  }
  if (!im.defined()) im = zeros({}, DType::Float64, Device::cpu());
  Tensor result = complex(re, im).to(out);
  return device ? result.to(*device) : result;
}

Tensor fourier(std::string_view op, const Tensor& x, const std::optional<IntList>& s,
               const std::optional<IntList>& dim, std::optional<std::string_view> norm,
               FftKind kind, bool forward) {
  require_defined(op, x, "input");
  const DType in = x.dtype();
  if (in == DType::Float16 || in == DType::BFloat16 || in == DType::Complex32) {
    throw DTypeError(tag(op) + "Unsupported dtype " + torch_name(in) +
                     " (the cpu transforms take float32, float64 and their complex types)");
  }
  if (kind == FftKind::R2C && is_complex(in)) {
    throw DTypeError(tag(op) + std::string(op.substr(op.find('_') + 1)) +
                     " expects a real input tensor, but got " + torch_name(in));
  }
  const DType part = is_complex(in) || is_floating(in) ? real_dtype(in) : DType::Float32;
  const Tensor input = is_complex(in) || is_floating(in) ? x : x.to(DType::Float32);
  const std::int64_t ndim = x.dim();
  if (ndim == 0) {
    throw ShapeError(tag(op) + "expected a tensor with at least one dimension, got a 0-d tensor");
  }
  std::vector<std::int64_t> dims;
  if (dim) {
    for (std::int64_t d : *dim) dims.push_back(wrap_dim(op, d, ndim));
    std::vector<std::int64_t> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      throw InvalidArgument(tag(op) + "FFT dims must be unique");
    }
    if (s && s->size() != dims.size()) {
      throw InvalidArgument(tag(op) +
                            "When given, dim and shape arguments must have the same length");
    }
  } else if (s) {
    if (static_cast<std::int64_t>(s->size()) > ndim) {
      throw InvalidArgument(tag(op) + "Got shape with " + std::to_string(s->size()) +
                            " values but input tensor only has " + std::to_string(ndim) +
                            " dimensions.");
    }
    for (std::int64_t d = ndim - static_cast<std::int64_t>(s->size()); d < ndim; ++d) {
      dims.push_back(d);
    }
  } else {
    for (std::int64_t d = 0; d < ndim; ++d) dims.push_back(d);
  }
  if (dims.empty()) {
    if (kind != FftKind::C2C) {
      throw InvalidArgument(tag(op) + "must transform at least one axis");
    }
  }
  std::vector<std::int64_t> sizes;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const bool one_sided_last = kind == FftKind::C2R && i + 1 == dims.size();
    std::int64_t n = s && (*s)[i] != -1 ? (*s)[i] : x.size(dims[i]);
    if (one_sided_last && !(s && (*s)[i] != -1)) n = 2 * (x.size(dims[i]) - 1);
    if (n < 1) {
      throw InvalidArgument(tag(op) + "Invalid number of data points (" + std::to_string(n) +
                            ") specified");
    }
    sizes.push_back(n);
  }
  double count = 1;
  for (std::int64_t n : sizes) count *= static_cast<double>(n);
  const std::string_view mode = norm.value_or("backward");
  double scale = 1;
  if (mode == "backward") {
    scale = forward ? 1.0 : 1.0 / count;
  } else if (mode == "forward") {
    scale = forward ? 1.0 / count : 1.0;
  } else if (mode == "ortho") {
    scale = 1.0 / std::sqrt(count);
  } else {
    throw InvalidArgument(tag(op) + "Invalid normalization mode: \"" + std::string(mode) + "\"");
  }
  DimVector out_sizes = x.sizes().dims();
  for (std::size_t i = 0; i < dims.size(); ++i) out_sizes[dims[i]] = sizes[i];
  if (kind == FftKind::R2C) out_sizes[dims.back()] = sizes.back() / 2 + 1;
  const DType out_dtype = kind == FftKind::C2R ? part : complex_dtype(part);
  Tensor out = empty(Shape(std::move(out_sizes)), out_dtype, x.device());
  if (dims.empty()) {  // fftn over no dims: the input, as a complex copy
    out.copy_(input);
    return out;
  }
  if (out.numel() > 0) {
    dispatch(OpCall{kFft, out_dtype, {input}, {out},
                    FftParams{std::move(dims), std::move(sizes), kind, !forward, scale}});
  }
  return out;
}

Tensor fourier_1d(std::string_view op, const Tensor& x, std::optional<std::int64_t> n,
                  std::int64_t dim, std::optional<std::string_view> norm, FftKind kind,
                  bool forward) {
  std::optional<IntList> s;
  if (n) {
    // -1 means "the input's length" in an n-d transform's s, not in a 1-d transform's n
    if (*n < 1) {
      throw InvalidArgument(tag(op) + "Invalid number of data points (" + std::to_string(*n) +
                            ") specified");
    }
    s = IntList{*n};
  }
  return fourier(op, x, s, IntList{dim}, norm, kind, forward);
}

}  // namespace mpsim
