#include "core/op_registry.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "core/ops.h"

namespace mpsim {
namespace {

using K = ArgKind;
using Args = std::span<const ArgValue>;

struct KindInfo {
  std::string_view name;  // ATen's spelling
  bool optional;
  bool tensor;
};
constexpr KindInfo kKindInfo[] = {
    {"Tensor", false, true},        {"Tensor?", true, true},        {"Tensor[]", false, true},
    {"Tensor|Scalar", false, true}, {"Tensor|Scalar?", true, true}, {"int", false, false},
    {"int?", true, false},          {"int[]", false, false},        {"int[]?", true, false},
    {"int|int[]", false, false},    {"float", false, false},        {"float?", true, false},
    {"bool", false, false},         {"str", false, false},          {"str?", true, false},
    {"Scalar", false, false},       {"Scalar?", true, false},       {"ScalarType", false, false},
    {"ScalarType?", true, false},   {"Device", false, false},
};
static_assert(std::size(kKindInfo) == static_cast<std::size_t>(K::Device) + 1);

const KindInfo& info(ArgKind kind) { return kKindInfo[static_cast<int>(kind)]; }

// ---- Reading bound arguments (each holds its kind's canonical alternative). ----
struct Bound {
  Args v;
  const ArgValue& operator[](std::size_t i) const { return v[i]; }
  bool none(std::size_t i) const { return std::holds_alternative<std::monostate>(v[i]); }
  const Tensor& t(std::size_t i) const { return std::get<Tensor>(v[i]); }
  std::optional<Tensor> ot(std::size_t i) const {
    return none(i) ? std::nullopt : std::optional<Tensor>(t(i));
  }
  const std::vector<Tensor>& tl(std::size_t i) const { return std::get<std::vector<Tensor>>(v[i]); }
  std::int64_t i(std::size_t k) const { return std::get<std::int64_t>(v[k]); }
  std::optional<std::int64_t> oi(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<std::int64_t>(i(k));
  }
  const IntList& il(std::size_t k) const { return std::get<IntList>(v[k]); }
  IntList dims(std::size_t k) const { return none(k) ? IntList{} : il(k); }  // None: every dim
  double d(std::size_t k) const { return std::get<double>(v[k]); }
  std::optional<double> od(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<double>(d(k));
  }
  bool b(std::size_t k) const { return std::get<bool>(v[k]); }
  std::string_view s(std::size_t k) const { return std::get<std::string>(v[k]); }
  std::optional<std::string_view> os(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<std::string_view>(s(k));
  }
  Scalar sc(std::size_t k) const { return std::get<Scalar>(v[k]); }
  std::optional<Scalar> osc(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<Scalar>(sc(k));
  }
  DType dt(std::size_t k) const { return std::get<DType>(v[k]); }
  std::optional<DType> odt(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<DType>(dt(k));
  }
  DType dt_or(std::size_t k, DType fallback) const { return odt(k).value_or(fallback); }
  Device dev(std::size_t k) const { return std::get<Device>(v[k]); }
};

// Calls f with the Tensor or the Scalar that a TensorOrScalar argument holds.
template <class F>
Tensor with_operand(const ArgValue& v, F&& f) {
  if (const Tensor* t = std::get_if<Tensor>(&v)) return f(*t);
  return f(std::get<Scalar>(v));
}

std::vector<Tensor> outputs(Tensor t) { return {std::move(t)}; }
std::vector<Tensor> outputs(std::vector<Tensor> ts) { return ts; }
std::vector<Tensor> outputs(std::pair<Tensor, Tensor> p) {
  return {std::move(p.first), std::move(p.second)};
}

// One row of the table: `body` is a captureless lambda (Bound) -> Tensor | vector | pair.
template <class F>
OpSignature op(std::string_view name, std::vector<ArgSpec> args, std::string_view doc, F) {
  return {name, std::move(args), [](Args v) { return outputs(F{}(Bound{v})); }, doc};
}

ArgSpec req(std::string_view name, ArgKind kind) { return {name, kind, std::nullopt}; }
ArgSpec opt(std::string_view name, ArgKind kind, ArgValue value) {
  return {name, kind, std::move(value)};
}
ArgSpec input() { return req("input", K::Tensor); }
ArgSpec operand(std::string_view name) { return req(name, K::TensorOrScalar); }
ArgSpec keepdim() { return opt("keepdim", K::Bool, false); }
ArgSpec dims() { return opt("dim", K::OptionalIntList, ArgValue{}); }
ArgSpec dtype_arg() { return opt("dtype", K::OptionalDType, ArgValue{}); }
ArgSpec device_arg() { return opt("device", K::Device, Device::cpu()); }
ArgValue i64(std::int64_t v) { return v; }
ArgValue str(const char* v) { return std::string(v); }

template <Tensor (*F)(const Tensor&)>
OpSignature unary(std::string_view name, std::string_view doc) {
  return {name, {input()}, [](Args v) { return outputs(F(std::get<Tensor>(v[0]))); }, doc};
}

std::vector<OpSignature> unary_ops() {
  return {
      unary<&abs>("abs", "|x|"),
      unary<&neg>("neg", "-x"),
      unary<&exp>("exp", "e^x"),
      unary<&log>("log", "natural logarithm"),
      unary<&log1p>("log1p", "log(1 + x)"),
      unary<&expm1>("expm1", "e^x - 1"),
      unary<&sqrt>("sqrt", "square root"),
      unary<&rsqrt>("rsqrt", "1 / sqrt(x)"),
      unary<&sin>("sin", "sine"),
      unary<&cos>("cos", "cosine"),
      unary<&tanh>("tanh", "hyperbolic tangent"),
      unary<&erf>("erf", "error function"),
      unary<&relu>("relu", "max(x, 0)"),
      unary<&sigmoid>("sigmoid", "1 / (1 + e^-x)"),
      unary<&silu>("silu", "x * sigmoid(x)"),
      unary<&reciprocal>("reciprocal", "1 / x"),
      unary<&square>("square", "x * x"),
      op("gelu", {input(), opt("approximate", K::String, str("none"))},
         "x * Phi(x); approximate 'none' or 'tanh'", [](Bound a) { return gelu(a.t(0), a.s(1)); }),
      op("softplus",
         {input(), opt("beta", K::Scalar, i64(1)), opt("threshold", K::Scalar, i64(20))},
         "log(1 + e^(beta x)) / beta; x where beta x > threshold",
         [](Bound a) { return softplus(a.t(0), a.sc(1), a.sc(2)); }),
  };
}

// Comparisons: (input, other: Tensor|Scalar) -> bool tensor.
template <class F>
OpSignature compare(std::string_view name, std::string_view doc, F) {
  return op(name, {input(), operand("other")}, doc, [](Bound a) {
    return with_operand(a[1], [&](const auto& o) { return F{}(a.t(0), o); });
  });
}

std::vector<OpSignature> binary_ops() {
  return {
      op("add", {input(), operand("other"), opt("alpha", K::Scalar, i64(1))},
         "input + alpha * other",
         [](Bound a) {
           return with_operand(a[1], [&](const auto& o) { return add(a.t(0), o, a.sc(2)); });
         }),
      op("sub", {input(), operand("other"), opt("alpha", K::Scalar, i64(1))},
         "input - alpha * other",
         [](Bound a) {
           return with_operand(a[1], [&](const auto& o) { return sub(a.t(0), o, a.sc(2)); });
         }),
      op("mul", {input(), operand("other")}, "input * other",
         [](Bound a) { return with_operand(a[1], [&](const auto& o) { return mul(a.t(0), o); }); }),
      op("div", {input(), operand("other"), opt("rounding_mode", K::OptionalString, ArgValue{})},
         "input / other; rounding_mode None, 'trunc' or 'floor'",
         [](Bound a) {
           return with_operand(a[1], [&](const auto& o) { return div(a.t(0), o, a.os(2)); });
         }),
      op("maximum", {input(), req("other", K::Tensor)}, "elementwise maximum (NaN propagates)",
         [](Bound a) { return maximum(a.t(0), a.t(1)); }),
      op("minimum", {input(), req("other", K::Tensor)}, "elementwise minimum (NaN propagates)",
         [](Bound a) { return minimum(a.t(0), a.t(1)); }),
      op("pow", {operand("input"), operand("exponent")}, "input ^ exponent",
         [](Bound a) {
           if (const Tensor* x = std::get_if<Tensor>(&a[0])) {
             return with_operand(a[1], [&](const auto& e) { return pow(*x, e); });
           }
           if (const Tensor* e = std::get_if<Tensor>(&a[1])) return pow(a.sc(0), *e);
           throw SignatureError("[pow] expected a tensor for input or exponent, got two numbers");
         }),
      compare("eq", "input == other", [](const Tensor& x, const auto& o) { return eq(x, o); }),
      compare("ne", "input != other", [](const Tensor& x, const auto& o) { return ne(x, o); }),
      compare("lt", "input < other", [](const Tensor& x, const auto& o) { return lt(x, o); }),
      compare("le", "input <= other", [](const Tensor& x, const auto& o) { return le(x, o); }),
      compare("gt", "input > other", [](const Tensor& x, const auto& o) { return gt(x, o); }),
      compare("ge", "input >= other", [](const Tensor& x, const auto& o) { return ge(x, o); }),
      op("where", {req("condition", K::Tensor), operand("input"), operand("other")},
         "condition ? input : other",
         [](Bound a) {
           return with_operand(a[1], [&](const auto& x) {
             return with_operand(a[2], [&](const auto& y) { return where(a.t(0), x, y); });
           });
         }),
      op("clamp",
         {input(), opt("min", K::OptionalTensorOrScalar, ArgValue{}),
          opt("max", K::OptionalTensorOrScalar, ArgValue{})},
         "min(max(input, min), max); min and max both numbers or both tensors",
         [](Bound a) {
           const bool tensors =
               std::holds_alternative<Tensor>(a[1]) || std::holds_alternative<Tensor>(a[2]);
           if (!tensors) return clamp(a.t(0), a.osc(1), a.osc(2));
           if (std::holds_alternative<Scalar>(a[1]) || std::holds_alternative<Scalar>(a[2])) {
             throw SignatureError("[clamp] expected min and max both numbers or both tensors");
           }
           return clamp(a.t(0), a.ot(1), a.ot(2));
         }),
      op("clamp_min", {input(), req("min", K::Scalar)}, "max(input, min)",
         [](Bound a) { return clamp_min(a.t(0), a.sc(1)); }),
      op("clamp_max", {input(), req("max", K::Scalar)}, "min(input, max)",
         [](Bound a) { return clamp_max(a.t(0), a.sc(1)); }),
  };
}

std::vector<OpSignature> reduce_ops() {
  const auto correction = [] { return opt("correction", K::Int, i64(1)); };
  return {
      op("sum", {input(), dims(), keepdim(), dtype_arg()}, "sum over dim (None: every dim)",
         [](Bound a) { return sum(a.t(0), a.dims(1), a.b(2), a.odt(3)); }),
      op("mean", {input(), dims(), keepdim(), dtype_arg()}, "mean over dim",
         [](Bound a) { return mean(a.t(0), a.dims(1), a.b(2), a.odt(3)); }),
      op("prod", {input(), dims(), keepdim(), dtype_arg()}, "product over dim",
         [](Bound a) { return prod(a.t(0), a.dims(1), a.b(2), a.odt(3)); }),
      op("var", {input(), dims(), correction(), keepdim()}, "variance with `correction`",
         [](Bound a) { return var(a.t(0), a.dims(1), a.i(2), a.b(3)); }),
      op("std", {input(), dims(), correction(), keepdim()}, "standard deviation",
         [](Bound a) { return std(a.t(0), a.dims(1), a.i(2), a.b(3)); }),
      op("var_mean", {input(), dims(), correction(), keepdim()}, "(variance, mean)",
         [](Bound a) { return var_mean(a.t(0), a.dims(1), a.i(2), a.b(3)); }),
      op("norm", {input(), opt("p", K::Double, 2.0), dims(), keepdim()},
         "the 2-norm over dim (p = 2 only)",
         [](Bound a) {
           if (a.d(1) != 2.0) {
             throw NotImplementedError("[norm] only p=2 is implemented, got p=" +
                                       arg_value_string(a[1]));
           }
           return norm(a.t(0), a.dims(2), a.b(3));
         }),
      op("amax", {input(), opt("dim", K::IntList, IntList{}), keepdim()},
         "maximum over dim (NaN propagates)",
         [](Bound a) { return amax(a.t(0), a.il(1), a.b(2)); }),
      op("amin", {input(), opt("dim", K::IntList, IntList{}), keepdim()},
         "minimum over dim (NaN propagates)",
         [](Bound a) { return amin(a.t(0), a.il(1), a.b(2)); }),
      op("logsumexp", {input(), req("dim", K::IntList), keepdim()}, "log(sum(exp(x))) over dim",
         [](Bound a) { return logsumexp(a.t(0), a.il(1), a.b(2)); }),
      op("argmax", {input(), opt("dim", K::OptionalInt, ArgValue{}), keepdim()},
         "int64 index of the first maximum",
         [](Bound a) { return argmax(a.t(0), a.oi(1), a.b(2)); }),
      op("argmin", {input(), opt("dim", K::OptionalInt, ArgValue{}), keepdim()},
         "int64 index of the first minimum",
         [](Bound a) { return argmin(a.t(0), a.oi(1), a.b(2)); }),
      op("softmax", {input(), req("dim", K::Int), dtype_arg()}, "softmax over dim",
         [](Bound a) { return softmax(a.t(0), a.i(1), a.odt(2)); }),
      op("log_softmax", {input(), req("dim", K::Int), dtype_arg()}, "log of softmax over dim",
         [](Bound a) { return log_softmax(a.t(0), a.i(1), a.odt(2)); }),
  };
}

std::vector<OpSignature> norm_ops() {
  const auto weight = [] { return opt("weight", K::OptionalTensor, ArgValue{}); };
  const auto bias = [] { return opt("bias", K::OptionalTensor, ArgValue{}); };
  const auto eps = [] { return opt("eps", K::Double, 1e-5); };
  return {
      op("layer_norm", {input(), req("normalized_shape", K::IntList), weight(), bias(), eps()},
         "normalize over the trailing normalized_shape dims",
         [](Bound a) { return layer_norm(a.t(0), a.il(1), a.ot(2), a.ot(3), a.d(4)); }),
      op("rms_norm",
         {input(), req("normalized_shape", K::IntList), weight(),
          opt("eps", K::OptionalDouble, ArgValue{})},
         "x / sqrt(mean(x^2) + eps) * weight (eps None: the dtype's epsilon)",
         [](Bound a) { return rms_norm(a.t(0), a.il(1), a.ot(2), a.od(3)); }),
      op("group_norm", {input(), req("num_groups", K::Int), weight(), bias(), eps()},
         "normalize each group of channels of [N, C, *]",
         [](Bound a) { return group_norm(a.t(0), a.i(1), a.ot(2), a.ot(3), a.d(4)); }),
      op("batch_norm",
         {input(), req("running_mean", K::Tensor), req("running_var", K::Tensor), weight(), bias(),
          opt("training", K::Bool, false), opt("momentum", K::Double, 0.1), eps()},
         "inference batch norm with running statistics per channel",
         [](Bound a) {
           return batch_norm(a.t(0), a.t(1), a.t(2), a.ot(3), a.ot(4), a.b(5), a.d(6), a.d(7));
         }),
  };
}

std::vector<OpSignature> linalg_ops() {
  const auto beta_alpha = [] {
    return std::vector<ArgSpec>{opt("beta", K::Scalar, i64(1)), opt("alpha", K::Scalar, i64(1))};
  };
  const auto with = [](std::vector<ArgSpec> head, std::vector<ArgSpec> tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  return {
      op("matmul", {input(), req("other", K::Tensor)}, "torch.matmul (1-d, 2-d, batched)",
         [](Bound a) { return matmul(a.t(0), a.t(1)); }),
      op("mm", {input(), req("mat2", K::Tensor)}, "[M, K] @ [K, N]",
         [](Bound a) { return mm(a.t(0), a.t(1)); }),
      op("bmm", {input(), req("mat2", K::Tensor)}, "[B, M, K] @ [B, K, N]",
         [](Bound a) { return bmm(a.t(0), a.t(1)); }),
      op("addmm", with({input(), req("mat1", K::Tensor), req("mat2", K::Tensor)}, beta_alpha()),
         "beta * input + alpha * (mat1 @ mat2)",
         [](Bound a) { return addmm(a.t(0), a.t(1), a.t(2), a.sc(3), a.sc(4)); }),
      op("baddbmm",
         with({input(), req("batch1", K::Tensor), req("batch2", K::Tensor)}, beta_alpha()),
         "beta * input + alpha * bmm(batch1, batch2)",
         [](Bound a) { return baddbmm(a.t(0), a.t(1), a.t(2), a.sc(3), a.sc(4)); }),
      op("linear", {input(), req("weight", K::Tensor), opt("bias", K::OptionalTensor, ArgValue{})},
         "input @ weight^T + bias", [](Bound a) { return linear(a.t(0), a.t(1), a.ot(2)); }),
  };
}

std::vector<OpSignature> creation_ops() {
  const auto size = [] { return req("size", K::IntList); };
  return {
      op("zeros", {size(), dtype_arg(), device_arg()}, "a tensor of zeros",
         [](Bound a) { return zeros(a.il(0), a.dt_or(1, DType::Float32), a.dev(2)); }),
      op("ones", {size(), dtype_arg(), device_arg()}, "a tensor of ones",
         [](Bound a) { return ones(a.il(0), a.dt_or(1, DType::Float32), a.dev(2)); }),
      op("full", {size(), req("fill_value", K::Scalar), dtype_arg(), device_arg()},
         "a tensor of fill_value (dtype None: inferred from fill_value, as torch.full)",
         [](Bound a) {
           return full(a.il(0), a.sc(1), a.dt_or(2, a.sc(1).promotion_dtype()), a.dev(3));
         }),
      op("arange",
         {req("start", K::Scalar), opt("end", K::OptionalScalar, ArgValue{}),
          opt("step", K::Scalar, i64(1)), dtype_arg(), device_arg()},
         "[start, end) by step; one number: [0, start)",
         [](Bound a) {
           if (a.none(1)) return arange(Scalar(0), a.sc(0), a.sc(2), a.odt(3), a.dev(4));
           return arange(a.sc(0), a.sc(1), a.sc(2), a.odt(3), a.dev(4));
         }),
      op("linspace",
         {req("start", K::Double), req("end", K::Double), req("steps", K::Int), dtype_arg(),
          device_arg()},
         "steps values from start to end inclusive",
         [](Bound a) {
           return linspace(a.d(0), a.d(1), a.i(2), a.dt_or(3, DType::Float32), a.dev(4));
         }),
      op("rand", {size(), dtype_arg(), device_arg()}, "uniform on [0, 1) (Philox; manual_seed)",
         [](Bound a) { return rand(a.il(0), a.dt_or(1, DType::Float32), a.dev(2)); }),
      op("uniform",
         {size(), opt("low", K::Double, 0.0), opt("high", K::Double, 1.0), dtype_arg(),
          device_arg()},
         "uniform on [low, high)",
         [](Bound a) {
           return uniform(a.il(0), a.d(1), a.d(2), a.dt_or(3, DType::Float32), a.dev(4));
         }),
      op("randn", {size(), dtype_arg(), device_arg()}, "standard normal",
         [](Bound a) { return randn(a.il(0), a.dt_or(1, DType::Float32), a.dev(2)); }),
      op("normal",
         {req("mean", K::Double), req("std", K::Double), size(), dtype_arg(), device_arg()},
         "normal with mean and std",
         [](Bound a) {
           return normal(a.d(0), a.d(1), a.il(2), a.dt_or(3, DType::Float32), a.dev(4));
         }),
      op("randint", {req("low", K::Int), req("high", K::Int), size(), dtype_arg(), device_arg()},
         "integers in [low, high)",
         [](Bound a) {
           return randint(a.i(0), a.i(1), a.il(2), a.dt_or(3, DType::Int64), a.dev(4));
         }),
      op("bernoulli", {input()}, "1 with probability input, else 0",
         [](Bound a) { return bernoulli(a.t(0)); }),
      op("dropout", {input(), opt("p", K::Double, 0.5), opt("training", K::Bool, true)},
         "zero with probability p, scale the rest by 1 / (1 - p)",
         [](Bound a) { return dropout(a.t(0), a.d(1), a.b(2)); }),
  };
}

std::vector<OpSignature> movement_ops() {
  const auto dim0 = [] { return opt("dim", K::Int, i64(0)); };
  return {
      op("cat", {req("tensors", K::TensorList), dim0()}, "concatenate along dim",
         [](Bound a) { return cat(a.tl(0), a.i(1)); }),
      op("stack", {req("tensors", K::TensorList), dim0()}, "stack along a new dim",
         [](Bound a) { return stack(a.tl(0), a.i(1)); }),
      op("split",
         {req("tensor", K::Tensor), req("split_size_or_sections", K::IntOrIntList), dim0()},
         "pieces of split_size (an int) or of the given sizes (a list) along dim",
         [](Bound a) {
           if (std::holds_alternative<IntList>(a[1])) return split(a.t(0), a.il(1), a.i(2));
           return split(a.t(0), a.i(1), a.i(2));
         }),
      op("chunk", {input(), req("chunks", K::Int), dim0()}, "at most `chunks` equal pieces",
         [](Bound a) { return chunk(a.t(0), a.i(1), a.i(2)); }),
      op("index_select", {input(), req("dim", K::Int), req("index", K::Tensor)},
         "the entries at `index` along dim",
         [](Bound a) { return index_select(a.t(0), a.i(1), a.t(2)); }),
      op("gather", {input(), req("dim", K::Int), req("index", K::Tensor)},
         "out[i][j] = input[index[i][j]][j] (dim 0)",
         [](Bound a) { return gather(a.t(0), a.i(1), a.t(2)); }),
      op("flip", {input(), req("dims", K::IntList)}, "reverse along dims",
         [](Bound a) { return flip(a.t(0), a.il(1)); }),
      op("repeat", {input(), req("repeats", K::IntList)}, "tile (Tensor.repeat)",
         [](Bound a) { return repeat(a.t(0), a.il(1)); }),
      op("pad",
         {input(), req("pad", K::IntList), opt("mode", K::String, str("constant")),
          opt("value", K::OptionalDouble, ArgValue{})},
         "F.pad: (left, right) pairs from the last dim; constant, reflect or replicate",
         [](Bound a) { return pad(a.t(0), a.il(1), a.s(2), a.od(3).value_or(0.0)); }),
      op("tril", {input(), opt("diagonal", K::Int, i64(0))}, "lower triangle",
         [](Bound a) { return tril(a.t(0), a.i(1)); }),
      op("triu", {input(), opt("diagonal", K::Int, i64(0))}, "upper triangle",
         [](Bound a) { return triu(a.t(0), a.i(1)); }),
      // Tensor methods: views (the CLI writes them out contiguous) and copies.
      op("reshape", {input(), req("shape", K::IntList)}, "a view when possible, else a copy",
         [](Bound a) { return a.t(0).reshape(a.il(1)); }),
      op("permute", {input(), req("dims", K::IntList)}, "reorder dims",
         [](Bound a) { return a.t(0).permute(a.il(1)); }),
      op("transpose", {input(), req("dim0", K::Int), req("dim1", K::Int)}, "swap two dims",
         [](Bound a) { return a.t(0).transpose(a.i(1), a.i(2)); }),
      op("t", {input()}, "transpose of a <= 2-d tensor", [](Bound a) { return a.t(0).t(); }),
      op("expand", {input(), req("size", K::IntList)}, "broadcast to size (-1 keeps a size)",
         [](Bound a) { return a.t(0).expand(a.il(1)); }),
      op("squeeze", {input(), opt("dim", K::OptionalInt, ArgValue{})}, "drop size-1 dims",
         [](Bound a) { return a.none(1) ? a.t(0).squeeze() : a.t(0).squeeze(a.i(1)); }),
      op("unsqueeze", {input(), req("dim", K::Int)}, "insert a size-1 dim",
         [](Bound a) { return a.t(0).unsqueeze(a.i(1)); }),
      op("flatten", {input(), opt("start_dim", K::Int, i64(0)), opt("end_dim", K::Int, i64(-1))},
         "merge dims start_dim..end_dim", [](Bound a) { return a.t(0).flatten(a.i(1), a.i(2)); }),
      op("narrow", {input(), req("dim", K::Int), req("start", K::Int), req("length", K::Int)},
         "length entries from start along dim",
         [](Bound a) { return a.t(0).narrow(a.i(1), a.i(2), a.i(3)); }),
      op("select", {input(), req("dim", K::Int), req("index", K::Int)},
         "the slice at index along dim (drops dim)",
         [](Bound a) { return a.t(0).select(a.i(1), a.i(2)); }),
      op("contiguous", {input()}, "a row-major copy (input when already contiguous)",
         [](Bound a) { return a.t(0).contiguous(); }),
      op("clone", {input()}, "a copy", [](Bound a) { return a.t(0).clone(); }),
      op("to", {input(), req("dtype", K::DType)}, "cast (round to nearest even)",
         [](Bound a) { return a.t(0).to(a.dt(1)); }),
  };
}

// ---- Binding. ----
std::string value_type_name(const ArgValue& v) {
  constexpr std::string_view kNames[] = {
      "None", "Tensor", "list of Tensors", "int",   "list of ints", "float",
      "bool", "str",    "Scalar",          "dtype", "Device"};
  return std::string(kNames[v.index()]);
}

// "[op] argument 'name'", the start of every binding and parsing error.
std::string arg_where(std::string_view op, std::string_view name) {
  std::string out;
  out.append("[").append(op).append("] argument '").append(name).append("'");
  return out;
}

[[noreturn]] void wrong_kind(std::string_view op, const ArgSpec& spec, const ArgValue& v) {
  throw SignatureError(arg_where(op, spec.name) + " must be " +
                       std::string(arg_kind_name(spec.kind)) + ", not " + value_type_name(v));
}

std::optional<Scalar> as_scalar(const ArgValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return Scalar(*i);
  if (const auto* d = std::get_if<double>(&v)) return Scalar(*d);
  if (const auto* b = std::get_if<bool>(&v)) return Scalar(*b);
  if (const auto* s = std::get_if<Scalar>(&v)) return *s;
  return std::nullopt;
}

// Converts `v` to the canonical alternative of spec.kind, or throws.
ArgValue coerce(std::string_view op, const ArgSpec& spec, ArgValue v) {
  if (const Tensor* t = std::get_if<Tensor>(&v); t != nullptr && !t->defined()) v = {};
  if (std::holds_alternative<std::monostate>(v)) {
    if (is_optional(spec.kind)) return v;
    wrong_kind(op, spec, v);
  }
  const auto* i = std::get_if<std::int64_t>(&v);
  const std::optional<Scalar> s = as_scalar(v);
  switch (spec.kind) {
    case K::Tensor:
    case K::OptionalTensor:
      if (std::holds_alternative<Tensor>(v)) return v;
      break;
    case K::TensorList:
      if (std::holds_alternative<std::vector<Tensor>>(v)) return v;
      break;
    case K::TensorOrScalar:
    case K::OptionalTensorOrScalar:
      if (std::holds_alternative<Tensor>(v)) return v;
      if (s) return *s;
      break;
    case K::Int:
    case K::OptionalInt:
      if (i) return v;
      if (s && s->is_integral()) return s->to_int();
      break;
    case K::IntList:
    case K::OptionalIntList:
      if (i) return IntList{*i};
      [[fallthrough]];
    case K::IntOrIntList:
      if (i || std::holds_alternative<IntList>(v)) return v;
      if (s && s->is_integral()) return s->to_int();
      // An empty list from a caller that cannot tell its element type.
      if (const auto* l = std::get_if<std::vector<Tensor>>(&v); l != nullptr && l->empty())
        return IntList{};
      break;
    case K::Double:
    case K::OptionalDouble:
      if (s && !s->is_bool()) return s->to_double();
      break;
    case K::Bool:
      if (s && s->is_bool()) return s->to_int() != 0;
      break;
    case K::String:
    case K::OptionalString:
      if (std::holds_alternative<std::string>(v)) return v;
      break;
    case K::Scalar:
    case K::OptionalScalar:
      if (s) return *s;
      break;
    case K::DType:
    case K::OptionalDType:
      if (std::holds_alternative<DType>(v)) return v;
      if (const auto* text = std::get_if<std::string>(&v)) return parse_arg(spec, *text, op);
      break;
    case K::Device:
      if (std::holds_alternative<Device>(v)) return v;
      if (const auto* text = std::get_if<std::string>(&v)) return parse_arg(spec, *text, op);
      break;
  }
  wrong_kind(op, spec, v);
}

std::string joined_names(const OpSignature& sig) {
  std::string out;
  for (const ArgSpec& a : sig.args) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out.empty() ? "(none)" : out;
}

// ---- Parsing. ----
std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.starts_with('+')) s.remove_prefix(1);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.starts_with('+')) s.remove_prefix(1);
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool negative = lower.starts_with('-');
  const std::string_view body = std::string_view(lower).substr(negative ? 1 : 0);
  if (body == "inf" || body == "infinity") {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (body == "nan") return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // Out of range (1e999) is an error rather than a silent inf.
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || std::isnan(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<bool> parse_bool(std::string_view s) {
  s = trim(s);
  if (s == "true" || s == "True" || s == "1") return true;
  if (s == "false" || s == "False" || s == "0") return false;
  return std::nullopt;
}

std::optional<IntList> parse_int_list(std::string_view s) {
  s = trim(s);
  constexpr std::pair<char, char> kBrackets[] = {{'{', '}'}, {'[', ']'}, {'(', ')'}};
  for (const auto& [open, close] : kBrackets) {
    if (s.starts_with(open)) {
      if (!s.ends_with(close) || s.size() < 2) return std::nullopt;
      s = trim(s.substr(1, s.size() - 2));
      break;
    }
  }
  IntList out;
  if (s.empty()) return out;
  if (s.ends_with(',')) s.remove_suffix(1);  // a Python tuple: (1,)
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = s.find(',', begin);
    const std::optional<std::int64_t> v = parse_int(s.substr(begin, comma - begin));
    if (!v) return std::nullopt;
    out.push_back(*v);
    if (comma == std::string_view::npos) return out;
    begin = comma + 1;
  }
}

std::optional<Scalar> parse_scalar(std::string_view s) {
  const std::string_view t = trim(s);
  if (t == "true" || t == "True") return Scalar(true);
  if (t == "false" || t == "False") return Scalar(false);
  if (const auto i = parse_int(t)) return Scalar(*i);
  if (const auto d = parse_double(t)) return Scalar(*d);
  return std::nullopt;
}

std::string_view expected_text(ArgKind kind) {
  switch (kind) {
    case K::Int:
    case K::OptionalInt:
      return "an integer";
    case K::IntList:
    case K::OptionalIntList:
      return "a list of integers such as {1,1}, [1, 1] or 1,1";
    case K::IntOrIntList:
      return "an integer or a list of integers such as {1,1}";
    case K::Double:
    case K::OptionalDouble:
      return "a number such as 1e-5, inf or nan";
    case K::Bool:
      return "true, false, 1 or 0";
    case K::Scalar:
    case K::OptionalScalar:
    case K::TensorOrScalar:
    case K::OptionalTensorOrScalar:
      return "a number (integer, float or true/false)";
    default:
      return "a value";
  }
}

std::vector<OpSignature> build_table() {
  std::vector<OpSignature> table;
  for (auto family :
       {unary_ops, binary_ops, reduce_ops, norm_ops, linalg_ops, creation_ops, movement_ops}) {
    for (OpSignature& sig : family()) table.push_back(std::move(sig));
  }
  std::sort(table.begin(), table.end(),
            [](const OpSignature& a, const OpSignature& b) { return a.name < b.name; });
  for (OpSignature& sig : table) {
    for (ArgSpec& spec : sig.args) {
      if (spec.default_value) spec.default_value = coerce(sig.name, spec, *spec.default_value);
    }
  }
  return table;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string_view arg_kind_name(ArgKind kind) { return info(kind).name; }
bool is_optional(ArgKind kind) { return info(kind).optional; }
bool accepts_tensor(ArgKind kind) { return info(kind).tensor; }

const std::vector<OpSignature>& op_signatures() {
  static const std::vector<OpSignature> table = build_table();
  return table;
}

const OpSignature* find_signature_or_null(std::string_view name) {
  const std::vector<OpSignature>& table = op_signatures();
  const auto it =
      std::lower_bound(table.begin(), table.end(), name,
                       [](const OpSignature& sig, std::string_view n) { return sig.name < n; });
  return it != table.end() && it->name == name ? &*it : nullptr;
}

const OpSignature& find_signature(std::string_view name) {
  if (const OpSignature* sig = find_signature_or_null(name)) return *sig;
  std::string close;
  for (const OpSignature& sig : op_signatures()) {
    const bool prefix =
        name.size() >= 3 && (sig.name.starts_with(name) || name.starts_with(sig.name));
    if (prefix || edit_distance(name, sig.name) <= std::max<std::size_t>(1, name.size() / 4)) {
      close += (close.empty() ? "" : ", ") + std::string(sig.name);
    }
  }
  throw SignatureError("[mpsim] unknown op '" + std::string(name) + "'" +
                       (close.empty() ? "" : "; close names: " + close));
}

std::vector<ArgValue> bind_arguments(const OpSignature& sig, std::vector<ArgValue> positional,
                                     std::vector<std::pair<std::string, ArgValue>> named) {
  const std::string op = std::string("[").append(sig.name).append("]");
  if (positional.size() > sig.args.size()) {
    throw SignatureError(op + " takes " + std::to_string(sig.args.size()) + " arguments (" +
                         joined_names(sig) + ") but " + std::to_string(positional.size()) +
                         " were given");
  }
  std::vector<std::optional<ArgValue>> slots(sig.args.size());
  for (std::size_t i = 0; i < positional.size(); ++i) slots[i] = std::move(positional[i]);
  for (auto& [name, value] : named) {
    const auto it = std::find_if(sig.args.begin(), sig.args.end(),
                                 [&](const ArgSpec& a) { return a.name == name; });
    if (it == sig.args.end()) {
      throw SignatureError(op + " unknown argument '" + name +
                           "'; expected one of: " + joined_names(sig));
    }
    std::optional<ArgValue>& slot = slots[static_cast<std::size_t>(it - sig.args.begin())];
    if (slot) throw SignatureError(op + " got multiple values for argument '" + name + "'");
    slot = std::move(value);
  }
  std::vector<ArgValue> bound;
  bound.reserve(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const ArgSpec& spec = sig.args[i];
    if (!slots[i]) {
      if (!spec.default_value) {
        throw SignatureError(op + " missing required argument '" + std::string(spec.name) + "' (" +
                             std::string(arg_kind_name(spec.kind)) + ")");
      }
      bound.push_back(*spec.default_value);
    } else {
      bound.push_back(coerce(sig.name, spec, std::move(*slots[i])));
    }
  }
  return bound;
}

ArgValue parse_arg(const ArgSpec& spec, std::string_view text, std::string_view op) {
  const std::string_view t = trim(text);
  const std::string where = arg_where(op, spec.name);
  if (t == "None" && is_optional(spec.kind)) return std::monostate{};
  const auto bad = [&]() -> SignatureError {
    return SignatureError(where + " expects " + std::string(expected_text(spec.kind)) + ", got '" +
                          std::string(text) + "'");
  };
  switch (spec.kind) {
    case K::Tensor:
    case K::OptionalTensor:
    case K::TensorList:
      throw SignatureError(where + " is a " + std::string(arg_kind_name(spec.kind)) +
                           ": it cannot be given as text");
    case K::Int:
    case K::OptionalInt:
      if (const auto v = parse_int(t)) return *v;
      throw bad();
    case K::IntOrIntList:
      if (const auto v = parse_int(t)) return *v;
      [[fallthrough]];
    case K::IntList:
    case K::OptionalIntList:
      if (auto v = parse_int_list(t)) return *std::move(v);
      throw bad();
    case K::Double:
    case K::OptionalDouble:
      if (const auto v = parse_double(t)) return *v;
      throw bad();
    case K::Bool:
      if (const auto v = parse_bool(t)) return *v;
      throw bad();
    case K::String:
    case K::OptionalString:
      if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front()) {
        return std::string(t.substr(1, t.size() - 2));
      }
      return std::string(t);
    case K::Scalar:
    case K::OptionalScalar:
    case K::TensorOrScalar:
    case K::OptionalTensorOrScalar:
      if (const auto v = parse_scalar(t)) return *v;
      throw bad();
    case K::DType:
    case K::OptionalDType:
      try {
        return parse_dtype(t);
      } catch (const DTypeError& e) {
        throw SignatureError(where + ": " + e.what());
      }
    case K::Device:
      try {
        return Device(t);
      } catch (const DeviceError& e) {
        throw SignatureError(where + ": " + e.what());
      }
  }
  throw bad();
}

std::string arg_value_string(const ArgValue& value) {
  struct Printer {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(const Tensor& t) const {
      return "Tensor(" + t.shape().to_string() + ", " + std::string(dtype_name(t.dtype())) + ")";
    }
    std::string operator()(const std::vector<Tensor>& ts) const {
      return "[" + std::to_string(ts.size()) + " tensors]";
    }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(const IntList& l) const { return to_string(l); }
    std::string operator()(double d) const {
      if (std::isnan(d)) return "nan";
      if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
      std::ostringstream os;
      os.precision(17);
      os << d;
      std::string s = os.str();
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(const std::string& s) const { return "'" + s + "'"; }
    std::string operator()(const Scalar& s) const {
      if (s.is_floating()) return (*this)(s.to_double());
      if (s.is_bool()) return (*this)(s.to_int() != 0);
      return std::to_string(s.to_int());
    }
    std::string operator()(DType d) const { return "torch." + std::string(dtype_name(d)); }
    std::string operator()(Device d) const { return "'" + d.to_string() + "'"; }
  };
  return std::visit(Printer{}, value);
}

std::string signature_string(const OpSignature& sig) {
  std::string out = std::string(sig.name) + "(";
  for (std::size_t i = 0; i < sig.args.size(); ++i) {
    const ArgSpec& a = sig.args[i];
    out += (i ? ", " : "") + std::string(a.name) + ": " + std::string(arg_kind_name(a.kind));
    if (a.default_value) out += " = " + arg_value_string(*a.default_value);
  }
  return out + ")";
}

}  // namespace mpsim
