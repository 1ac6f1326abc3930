#include "core/ops.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/backend.h"
#include "core/complex_ops.h"
#include "core/dispatch.h"
#include "core/math_ops.h"
#include "core/runtime.h"
#include "core/type_promotion.h"

namespace mpsim {
namespace {

std::string op_name(OpId op) { return std::string(op.name()); }

void check_defined(OpId op, const Operand& o) {
  if (const Tensor* t = std::get_if<Tensor>(&o); t != nullptr && !t->defined()) {
    throw InvalidArgument("[" + op_name(op) + "] expected a defined tensor, got an undefined one");
  }
}

// The device every tensor operand lives on. 0-dim cpu tensors may join any device (they act
// as scalars, as in PyTorch); any other mix is an error.
Device common_device(OpId op, std::span<const Operand> operands) {
  std::optional<Device> device;
  bool cpu_scalar = false;
  for (const Operand& o : operands) {
    const Tensor* t = std::get_if<Tensor>(&o);
    if (t == nullptr) continue;
    if (t->dim() == 0 && t->device().is_cpu()) {
      cpu_scalar = true;
      continue;
    }
    if (device && *device != t->device()) {
      throw DeviceError("[" + op_name(op) +
                        "] expected all tensors to be on the same device, but found at least two "
                        "devices, " +
                        device->to_string() + " and " + t->device().to_string());
    }
    device = t->device();
  }
  return device.value_or(cpu_scalar ? Device::cpu() : Device::cpu());
}

Shape broadcast_all(OpId op, std::span<const Operand> operands) {
  Shape shape;
  for (const Operand& o : operands) {
    if (const Tensor* t = std::get_if<Tensor>(&o))
      shape = broadcast_shapes(op.name(), shape, t->sizes());
  }
  return shape;
}

// Converts the dtype before moving: a 0-dim cpu scalar of a dtype the device lacks (float64
// on mps) becomes the compute dtype on the cpu and only then moves.
Tensor materialize(const Operand& o, DType dtype, Device device) {
  if (const Scalar* s = std::get_if<Scalar>(&o)) return scalar_tensor(*s, dtype, device);
  return std::get<Tensor>(o).to(dtype).to(device);
}

// The shared front end of every elementwise op with broadcasting: checks devices and shapes,
// converts each operand to its dtype, expands it to the result shape, and dispatches. The
// result takes the operands' layout (Note [elementwise output layout] in core/tensor.cc).
Tensor elementwise(OpId op, std::initializer_list<Operand> operand_list,
                   std::initializer_list<DType> operand_dtypes, DType compute, DType out_dtype,
                   OpParams params = {}) {
  const std::span<const Operand> operands(operand_list.begin(), operand_list.size());
  for (const Operand& o : operands) check_defined(op, o);
  // The elementwise kernels are real (Note [complex dtypes]): a complex operand is refused
  // here, before any conversion could drop its imaginary part.
  for (const Operand& o : operands) {
    const Tensor* t = std::get_if<Tensor>(&o);
    if (t != nullptr && is_complex(t->dtype())) {
      throw DTypeError("[" + op_name(op) + "] is not implemented for complex tensors (" +
                       std::string(dtype_name(t->dtype())) +
                       "); the complex ops are listed in docs/ops.md, \"Complex tensors and "
                       "Fourier transforms\"");
    }
  }
  const Device device = common_device(op, operands);
  const Shape shape = broadcast_all(op, operands);
  std::vector<Tensor> inputs, tensors;
  inputs.reserve(operands.size());
  tensors.reserve(operands.size());
  bool same_shape = true;  // every tensor operand has the result's shape
  for (std::size_t i = 0; i < operands.size(); ++i) {
    inputs.push_back(materialize(operands[i], operand_dtypes.begin()[i], device).expand(shape));
    if (const Tensor* t = std::get_if<Tensor>(&operands[i])) {
      same_shape = same_shape && t->sizes() == shape;
      tensors.push_back(t->expand(shape));  // its own layout, before any dtype conversion
    }
  }
  const Strides strides = layout_strides(shape, tensors, same_shape);
  Tensor out = OutDestination::claim(op.name(), shape, strides, out_dtype, device, inputs);
  if (!out.defined()) out = empty_strided(shape, strides, out_dtype, device);
  dispatch(OpCall{op, compute, std::move(inputs), {out}, std::move(params)});
  return out;
}

// The dtype an elementwise op computes in for integer and bool operands (its IntRule).
DType int_rule_dtype(OpId op, DType compute) {
  if (is_floating(compute)) return compute;
  switch (op.def().int_rule) {
    case IntRule::ToFloat:
      return DType::Float32;
    case IntRule::Keep:
      if (compute == DType::Bool) {
        throw DTypeError("[" + op_name(op) + "] is not supported for bool tensors");
      }
      return compute;
    case IntRule::FloatOnly:
    case IntRule::NotApplicable:
      break;
  }
  throw DTypeError("[" + op_name(op) + "] expected a floating point tensor, got " +
                   std::string(dtype_name(compute)));
}

Tensor unary(OpId op, const Tensor& x, OpParams params = {}) {
  check_defined(op, x);
  const DType compute = int_rule_dtype(op, x.dtype());
  return elementwise(op, {x}, {compute}, compute, compute, std::move(params));
}

void reject_bool(OpId op, DType compute, const char* why = "is not supported for bool tensors") {
  if (compute == DType::Bool) throw DTypeError("[" + op_name(op) + "] " + why);
}

// Whether an operand is a complex tensor (complex arithmetic: core/complex_ops.h).
bool any_complex(const Operand& a, const Operand& b) {
  for (const Operand* o : {&a, &b}) {
    const Tensor* t = std::get_if<Tensor>(o);
    if (t != nullptr && t->defined() && is_complex(t->dtype())) return true;
  }
  return false;
}

Tensor add_sub(OpId op, const Operand& a, const Operand& b, Scalar alpha) {
  if (any_complex(a, b)) return complex_arith(op, a, b, alpha);
  const DType compute = result_type({a, b});
  if (op == op_id("sub") && compute == DType::Bool) {
    throw DTypeError(
        "[sub] subtraction, the `-` operator, with two bool tensors is not supported; use the "
        "`^` or logical_xor() operator instead");
  }
  if (is_integral(compute, true) && alpha.is_floating()) {
    throw DTypeError(
        "[" + op_name(op) +
        "] for integral input tensors, argument alpha must not be a floating point number, got " +
        alpha.to_string());
  }
  if (compute != DType::Bool && alpha.is_bool()) {
    throw DTypeError("[" + op_name(op) + "] boolean alpha only supported for boolean results");
  }
  return elementwise(op, {a, b}, {compute, compute}, compute, compute, AlphaParams{alpha});
}

Tensor simple_binary(OpId op, const Operand& a, const Operand& b) {
  const DType compute = result_type({a, b});
  return elementwise(op, {a, b}, {compute, compute}, compute, compute);
}

Tensor div_impl(const Operand& a, const Operand& b, std::optional<std::string_view> mode) {
  constexpr OpId kDiv = op_id("div");
  if (!mode && any_complex(a, b)) return complex_arith(kDiv, a, b, Scalar(1.0));
  DType compute = result_type({a, b});
  DivParams params{RoundingMode::None};
  if (!mode) {
    if (!is_floating(compute)) compute = DType::Float32;  // true division of integers
  } else if (*mode == "trunc" || *mode == "floor") {
    reject_bool(kDiv, compute, "with rounding_mode is not supported for bool tensors");
    params.rounding_mode = *mode == "trunc" ? RoundingMode::Trunc : RoundingMode::Floor;
  } else {
    throw InvalidArgument(
        "[div] expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" +
        std::string(*mode) + "'");
  }
  return elementwise(kDiv, {a, b}, {compute, compute}, compute, compute, params);
}

Tensor pow_impl(const Operand& a, const Operand& b) {
  constexpr OpId kPow = op_id("pow");
  const DType compute = result_type({a, b});
  reject_bool(kPow, compute);
  if (const Scalar* e = std::get_if<Scalar>(&b);
      e && is_integral(compute, false) && e->is_integral() && e->to_int() < 0) {
    throw InvalidArgument("[pow] integers to negative integer powers are not allowed (exponent " +
                          e->to_string() + ")");
  }
  return elementwise(kPow, {a, b}, {compute, compute}, compute, compute);
}

Tensor compare(OpId op, const Operand& a, const Operand& b) {
  const DType compute = result_type({a, b});
  return elementwise(op, {a, b}, {compute, compute}, compute, DType::Bool);
}

Tensor where_impl(const Tensor& cond, const Operand& a, const Operand& b) {
  constexpr OpId kWhere = op_id("where");
  check_defined(kWhere, cond);
  if (cond.dtype() != DType::Bool) {
    throw DTypeError("[where] expected condition to be a bool tensor, got " +
                     std::string(dtype_name(cond.dtype())));
  }
  const DType compute = result_type({a, b});
  if (is_complex(compute)) {
    // Both branches as the complex result's [..., 2] parts, the condition broadcast over them
    // (the same elements, exactly).
    const auto parts = [&](const Operand& o) {
      const Tensor* t = std::get_if<Tensor>(&o);
      const Tensor c = t != nullptr ? t->to(compute)
                                    : full({}, std::get<Scalar>(o), compute, cond.device());
      return view_as_real(c);
    };
    const Tensor pa = parts(a), pb = parts(b);
    return view_as_complex(
        where_impl(cond.unsqueeze(-1), pa, pb).contiguous());
  }
  return elementwise(kWhere, {cond, a, b}, {DType::Bool, compute, compute}, compute, compute);
}

Tensor clamp_impl(const Tensor& x, const std::optional<Operand>& lo,
                  const std::optional<Operand>& hi) {
  constexpr OpId kClamp = op_id("clamp");
  check_defined(kClamp, x);
  if (!lo && !hi) throw InvalidArgument("[clamp] at least one of 'min' or 'max' must not be None");
  ResultType rt;
  rt.add(x);
  if (lo) rt.add(*lo);
  if (hi) rt.add(*hi);
  const DType compute = rt.result();
  // torch's bool clamp: one tensor bound, the logical max (min=) or min (max=); two bounds
  // or a number bound are refused, as torch does.
  const std::optional<Operand>& bound = lo ? lo : hi;
  if (compute == DType::Bool && !(lo && hi) && std::holds_alternative<Tensor>(*bound)) {
    const Tensor& b = std::get<Tensor>(*bound);
    return lo ? maximum(x, b) : minimum(x, b);
  }
  reject_bool(kClamp, compute);
  // An absent bound is passed as x itself and ignored by the kernel (has_min/has_max).
  return elementwise(kClamp, {x, lo.value_or(x), hi.value_or(x)}, {compute, compute, compute},
                     compute, compute, ClampParams{lo.has_value(), hi.has_value()});
}

}  // namespace

// Note [out destination]
// ~~~~~~~~~~~~~~~~~~~~~~
// torch's out= and in-place methods (x.exp_(), x += y) reach mpsim's functional ops through
// the Python module (python/mpsim/_tensor_api.py): the op returns a new tensor and the module
// copies it into out, a second pass over the result's bytes and a second buffer as large.
// With an OutDestination, the elementwise front end (elementwise() above) takes out as its
// result instead, for the op of the destination's name only, so that the inner ops of a
// composite never write into out. out qualifies when it has the shape, dtype, device and
// strides the op would give its result (the kernel sees the layout it always sees), and its
// bytes overlap none of the op's inputs (as converted and expanded), compared by address so
// that two storages over the same memory (DLPack) count. On the cpu out may also be exactly
// one input (same address, sizes, strides and dtype): no elementwise kernel reads an input
// element after it has written the output element of the same index
// (tests/python/test_out_destination.py runs every unary and binary registry op in place
// against its out-of-place result, at lengths around the vector and thread splits). The mps
// device keeps the copy for in-place ops. The first call of the op claims the destination,
// qualifying or not: a later call of that name allocates. One destination per thread; they
// nest. The Python module offers out only to a C++ binding (a Python function around an op
// may read an argument after the op), and only when no tensor argument overlaps out other
// than as the same elements.
namespace {
thread_local OutDestination* g_destination = nullptr;

// [first, last) byte addresses of t's elements (none when empty).
std::pair<std::uintptr_t, std::uintptr_t> byte_span(const Tensor& t) {
  if (t.numel() == 0) return {0, 0};
  std::int64_t lo = 0, hi = 0;
  for (std::int64_t i = 0; i < t.dim(); ++i) {
    const std::int64_t reach = (t.sizes()[i] - 1) * t.strides()[i];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(t.data_ptr());
  const auto size = static_cast<std::int64_t>(t.element_size());
  return {base + static_cast<std::uintptr_t>(lo * size),
          base + static_cast<std::uintptr_t>((hi + 1) * size)};
}

bool same_elements(const Tensor& a, const Tensor& b) {
  return a.data_ptr() == b.data_ptr() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.dtype() == b.dtype();
}
}  // namespace

OutDestination::OutDestination(Tensor out, std::string_view op)
    : out_(std::move(out)), op_(op), previous_(g_destination) {
  g_destination = this;
}

OutDestination::~OutDestination() { g_destination = previous_; }

Tensor OutDestination::claim(std::string_view op, const Shape& shape, const Strides& strides,
                             DType dtype, Device device, const std::vector<Tensor>& inputs) {
  OutDestination* self = g_destination;
  if (self == nullptr || !self->open_ || self->op_ != op) return {};
  self->open_ = false;
  const Tensor& out = self->out_;
  if (!out.defined() || out.sizes() != shape || out.strides() != strides ||
      out.dtype() != dtype || out.device() != device || out.numel() == 0) {
    return {};
  }
  for (const Tensor& in : inputs) {
    if (!may_read_while_writing(in, out)) return {};
  }
  self->used_ = true;
  return out;
}

bool OutDestination::may_read_while_writing(const Tensor& input, const Tensor& out) {
  const auto [i0, i1] = byte_span(input);
  const auto [o0, o1] = byte_span(out);
  if (i0 >= o1 || o0 >= i1) return true;  // disjoint (or one is empty)
  return out.device().is_cpu() && input.device().is_cpu() && same_elements(input, out);
}

// A complex tensor's abs is its modulus, hypot of its parts (evaluated in double, rounded once
// into the part dtype: within half an ulp plus double's error).
Tensor abs(const Tensor& x) {
  if (x.defined() && is_complex(x.dtype())) return hypot(real(x), imag(x));
  return unary(op_id("abs"), x);
}
Tensor neg(const Tensor& x) {
  if (x.defined() && is_complex(x.dtype())) return complex_neg(x);
  return unary(op_id("neg"), x);
}
Tensor exp(const Tensor& x) { return unary(op_id("exp"), x); }
Tensor log(const Tensor& x) { return unary(op_id("log"), x); }
Tensor log1p(const Tensor& x) { return unary(op_id("log1p"), x); }
Tensor expm1(const Tensor& x) { return unary(op_id("expm1"), x); }
Tensor sqrt(const Tensor& x) { return unary(op_id("sqrt"), x); }
Tensor rsqrt(const Tensor& x) { return unary(op_id("rsqrt"), x); }
Tensor sin(const Tensor& x) { return unary(op_id("sin"), x); }
Tensor cos(const Tensor& x) { return unary(op_id("cos"), x); }
Tensor tanh(const Tensor& x) { return unary(op_id("tanh"), x); }
Tensor erf(const Tensor& x) { return unary(op_id("erf"), x); }
Tensor relu(const Tensor& x) { return unary(op_id("relu"), x); }
Tensor sigmoid(const Tensor& x) { return unary(op_id("sigmoid"), x); }
Tensor silu(const Tensor& x) { return unary(op_id("silu"), x); }
Tensor reciprocal(const Tensor& x) { return unary(op_id("reciprocal"), x); }
Tensor square(const Tensor& x) {  // bool squares as int64, as torch (x^2 promotes)
  return unary(op_id("square"), x.defined() && x.dtype() == DType::Bool ? x.to(DType::Int64) : x);
}

#define MPSIM_DEFINE_MATH_OP(name, doc, rule) \
  Tensor name(const Tensor& x) { return unary(op_id(#name), x); }
MPSIM_MATH_OPS(MPSIM_DEFINE_MATH_OP)
#undef MPSIM_DEFINE_MATH_OP

namespace {

// The binary math family's front end: torch's promotion, then the op's integer rule.
Tensor binary_math(OpId op, const Operand& a, const Operand& b) {
  if (op == op_id("heaviside") && result_type({a, b}) == DType::Bool) {
    // torch's bool heaviside (x true: true; x false: values), computed as uint8
    const auto u8 = [](const Operand& o) -> Operand {
      if (const Tensor* t = std::get_if<Tensor>(&o)) return t->to(DType::UInt8);
      return o;
    };
    return binary_math(op, u8(a), u8(b)).to(DType::Bool);
  }
  const DType compute = int_rule_dtype(op, result_type({a, b}));
  return elementwise(op, {a, b}, {compute, compute}, compute, compute);
}

}  // namespace

#define MPSIM_DEFINE_BINARY_MATH_OP(name, doc, rule)      \
  Tensor name(const Tensor& input, const Tensor& other) { \
    return binary_math(op_id(#name), input, other);       \
  }                                                       \
  Tensor name(const Tensor& input, Scalar other) { return binary_math(op_id(#name), input, other); }
MPSIM_BINARY_MATH_OPS(MPSIM_DEFINE_BINARY_MATH_OP)
#undef MPSIM_DEFINE_BINARY_MATH_OP

Tensor elu(const Tensor& x, Scalar alpha, Scalar scale, Scalar input_scale) {
  return unary(op_id("elu"), x,
               MathParams{.alpha = alpha.to_double(),
                          .scale = scale.to_double(),
                          .input_scale = input_scale.to_double(),
                          .eps = 0.0,
                          .decimals = 0});
}

Tensor celu(const Tensor& x, Scalar alpha) {
  if (alpha.to_double() == 0) throw InvalidArgument("[celu] alpha must be nonzero");
  return unary(
      op_id("celu"), x,
      MathParams{
          .alpha = alpha.to_double(), .scale = 1.0, .input_scale = 1.0, .eps = 0.0, .decimals = 0});
}

Tensor logit(const Tensor& x, std::optional<double> eps) {
  return unary(op_id("logit"), x,
               MathParams{.alpha = 0.0,
                          .scale = 1.0,
                          .input_scale = 1.0,
                          .eps = eps.value_or(std::numeric_limits<double>::quiet_NaN()),
                          .decimals = 0});
}

Tensor round(const Tensor& x, std::int64_t decimals) {
  if (decimals != 0 && !is_floating(x.dtype())) {
    throw DTypeError("[round] decimals is not supported for integer tensors (" +
                     std::string(dtype_name(x.dtype())) + ")");
  }
  return unary(
      op_id("round"), x,
      MathParams{.alpha = 0.0, .scale = 1.0, .input_scale = 1.0, .eps = 0.0, .decimals = decimals});
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") {
    throw InvalidArgument("[gelu] approximate must be 'none' or 'tanh', got '" +
                          std::string(approximate) + "'");
  }
  return unary(
      op_id("gelu"), x,
      GeluParams{approximate == "tanh" ? GeluApproximation::Tanh : GeluApproximation::None});
}

Tensor softplus(const Tensor& x, Scalar beta, Scalar threshold) {
  if (beta.to_double() == 0) throw InvalidArgument("[softplus] beta must be nonzero");
  return unary(op_id("softplus"), x, SoftplusParams{beta.to_double(), threshold.to_double()});
}

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  return add_sub(op_id("add"), a, b, alpha);
}
Tensor add(const Tensor& a, Scalar b, Scalar alpha) { return add_sub(op_id("add"), a, b, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  return add_sub(op_id("sub"), a, b, alpha);
}
Tensor sub(const Tensor& a, Scalar b, Scalar alpha) { return add_sub(op_id("sub"), a, b, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) {
  if (any_complex(a, b)) return complex_arith(op_id("mul"), a, b, Scalar(1.0));
  return simple_binary(op_id("mul"), a, b);
}
Tensor mul(const Tensor& a, Scalar b) {
  if (any_complex(a, b)) return complex_arith(op_id("mul"), a, b, Scalar(1.0));
  return simple_binary(op_id("mul"), a, b);
}
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> m) {
  return div_impl(a, b, m);
}
Tensor div(const Tensor& a, Scalar b, std::optional<std::string_view> m) {
  return div_impl(a, b, m);
}
Tensor maximum(const Tensor& a, const Tensor& b) { return simple_binary(op_id("maximum"), a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return simple_binary(op_id("minimum"), a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return pow_impl(a, b); }
Tensor pow(const Tensor& a, Scalar exponent) { return pow_impl(a, exponent); }
Tensor pow(Scalar base, const Tensor& exponent) { return pow_impl(base, exponent); }

Tensor eq(const Tensor& a, const Tensor& b) { return compare(op_id("eq"), a, b); }
Tensor eq(const Tensor& a, Scalar b) { return compare(op_id("eq"), a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(op_id("ne"), a, b); }
Tensor ne(const Tensor& a, Scalar b) { return compare(op_id("ne"), a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(op_id("lt"), a, b); }
Tensor lt(const Tensor& a, Scalar b) { return compare(op_id("lt"), a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(op_id("le"), a, b); }
Tensor le(const Tensor& a, Scalar b) { return compare(op_id("le"), a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(op_id("gt"), a, b); }
Tensor gt(const Tensor& a, Scalar b) { return compare(op_id("gt"), a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(op_id("ge"), a, b); }
Tensor ge(const Tensor& a, Scalar b) { return compare(op_id("ge"), a, b); }

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return where_impl(c, a, b); }
Tensor where(const Tensor& c, const Tensor& a, Scalar b) { return where_impl(c, a, b); }
Tensor where(const Tensor& c, Scalar a, const Tensor& b) { return where_impl(c, a, b); }
Tensor where(const Tensor& c, Scalar a, Scalar b) { return where_impl(c, a, b); }

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  return clamp_impl(x, min ? std::optional<Operand>(*min) : std::nullopt,
                    max ? std::optional<Operand>(*max) : std::nullopt);
}
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return clamp_impl(x, min ? std::optional<Operand>(*min) : std::nullopt,
                    max ? std::optional<Operand>(*max) : std::nullopt);
}
Tensor clamp_min(const Tensor& x, Scalar min) {
  return clamp(x, std::optional<Scalar>(min), std::nullopt);
}
Tensor clamp_max(const Tensor& x, Scalar max) {
  return clamp(x, std::nullopt, std::optional<Scalar>(max));
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add_sub(op_id("add"), a, b, 1); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator-(Scalar a, const Tensor& b) { return add_sub(op_id("sub"), a, b, 1); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return simple_binary(op_id("mul"), a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator/(Scalar a, const Tensor& b) { return div_impl(a, b, std::nullopt); }
Tensor operator-(const Tensor& x) { return neg(x); }

}  // namespace mpsim
