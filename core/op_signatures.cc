// The op declarations: one per op, grouped by family (core/op_declaration.h says how to read
// one). Each names the op and its arguments as torch does, with their defaults, and calls the
// C++ op with the arguments read by name. Adding an op: docs/adding-an-op.md.
#include <limits>
#include <string>
#include <utility>

#include "core/complex_ops.h"
#include "core/op_declaration.h"
#include "core/ops.h"
#include "core/scatter_ops.h"
#include "core/search_ops.h"
#include "core/view_ops.h"

namespace mpsim {

std::vector<Tensor> detail::op_outputs(Tensor t) { return {std::move(t)}; }
std::vector<Tensor> detail::op_outputs(std::vector<Tensor> ts) { return ts; }
std::vector<Tensor> detail::op_outputs(std::pair<Tensor, Tensor> p) {
  return {std::move(p.first), std::move(p.second)};
}

std::vector<ArgSpec> arg_specs(std::string_view op, std::span<const ArgDecl> args) {
  std::vector<ArgSpec> specs;
  specs.reserve(args.size());
  for (const ArgDecl& a : args) {
    ArgSpec spec{a.name, a.kind, std::nullopt};
    if (a.default_text != nullptr) spec.default_value = parse_arg(spec, a.default_text, op);
    specs.push_back(std::move(spec));
  }
  return specs;
}

namespace {

using K = ArgKind;

// Calls f with the Tensor or the Scalar that a Tensor|Scalar argument holds.
template <class F>
Tensor with_operand(const ArgValue& v, F&& f) {
  if (const Tensor* t = std::get_if<Tensor>(&v)) return f(*t);
  return f(std::get<Scalar>(v));
}

// None for dims: every dim.
IntList every_dim_if_none(const std::optional<IntList>& dims) { return dims.value_or(IntList{}); }

// Arguments many ops share.
constexpr ArgDecl kInput{"input", K::Tensor};
constexpr ArgDecl kOther{"other", K::TensorOrScalar};
constexpr ArgDecl kAlpha{"alpha", K::Scalar, "1"};
constexpr ArgDecl kKeepdim{"keepdim", K::Bool, "False"};
constexpr ArgDecl kDims{"dim", K::OptionalIntList, "None"};
constexpr ArgDecl kDType{"dtype", K::OptionalDType, "None"};
constexpr ArgDecl kDevice{"device", K::Device, "cpu"};
constexpr ArgDecl kSize{"size", K::IntList};
constexpr ArgDecl kWeight{"weight", K::OptionalTensor, "None"};
constexpr ArgDecl kBias{"bias", K::OptionalTensor, "None"};
constexpr ArgDecl kEps{"eps", K::Double, "1e-05"};
constexpr ArgDecl kDim0{"dim", K::Int, "0"};

// ---- Unary. ----
constexpr ArgDecl kUnaryArgs[] = {kInput};

template <Tensor (*F)(const Tensor&)>
OpSignature unary(std::string_view name, std::string_view doc) {
  return declare_op<kUnaryArgs>(name, doc, [](auto a) { return F(arg<"input">(a)); });
}

constexpr ArgDecl kGeluArgs[] = {kInput, {"approximate", K::String, "'none'"}};
constexpr ArgDecl kSoftplusArgs[] = {
    kInput, {"beta", K::Scalar, "1"}, {"threshold", K::Scalar, "20"}};

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
      declare_op<kGeluArgs>("gelu", "x * Phi(x); approximate 'none' or 'tanh'",
                            [](auto a) { return gelu(arg<"input">(a), arg<"approximate">(a)); }),
      declare_op<kSoftplusArgs>(
          "softplus", "log(1 + e^(beta x)) / beta; x where beta x > threshold",
          [](auto a) { return softplus(arg<"input">(a), arg<"beta">(a), arg<"threshold">(a)); }),
  };
}

// ---- The math family (core/math_op_list.h). ----
constexpr ArgDecl kEluArgs[] = {kInput,
                                {"alpha", K::Scalar, "1.0"},
                                {"scale", K::Scalar, "1.0"},
                                {"input_scale", K::Scalar, "1.0"}};
constexpr ArgDecl kCeluArgs[] = {kInput, {"alpha", K::Scalar, "1.0"}};
constexpr ArgDecl kLogitArgs[] = {kInput, {"eps", K::OptionalDouble, "None"}};
constexpr ArgDecl kMathBinaryArgs[] = {kInput, kOther};
constexpr ArgDecl kRoundArgs[] = {kInput, {"decimals", K::Int, "0"}};

std::vector<OpSignature> math_ops() {
  return {
#define MPSIM_DECLARE_MATH(name, doc, rule) unary<&mpsim::name>(#name, doc),
      MPSIM_MATH_OPS(MPSIM_DECLARE_MATH)
#undef MPSIM_DECLARE_MATH
#define MPSIM_DECLARE_BINARY_MATH(name, doc, rule)                                       \
  declare_op<kMathBinaryArgs>(#name, doc, [](auto a) {                                   \
    return with_operand(arg<"other">(a),                                                 \
                        [&](const auto& o) { return mpsim::name(arg<"input">(a), o); }); \
  }),
          MPSIM_BINARY_MATH_OPS(MPSIM_DECLARE_BINARY_MATH)
#undef MPSIM_DECLARE_BINARY_MATH
              declare_op<kRoundArgs>(
                  "round", "half to even, at `decimals` decimal places (in double, rounded once)",
                  [](auto a) { return mpsim::round(arg<"input">(a), arg<"decimals">(a)); }),
      declare_op<kEluArgs>("elu", "scale x above 0, else scale alpha (e^(input_scale x) - 1)",
                           [](auto a) {
                             return elu(arg<"input">(a), arg<"alpha">(a), arg<"scale">(a),
                                        arg<"input_scale">(a));
                           }),
      declare_op<kCeluArgs>("celu", "max(0, x) + min(0, alpha (e^(x / alpha) - 1))",
                            [](auto a) { return celu(arg<"input">(a), arg<"alpha">(a)); }),
      declare_op<kLogitArgs>("logit",
                             "log(z / (1 - z)), z = x clamped to [eps, 1 - eps] when eps is given",
                             [](auto a) { return logit(arg<"input">(a), arg<"eps">(a)); }),
  };
}

// ---- Binary, comparison and selection. ----
constexpr ArgDecl kAlphaArgs[] = {kInput, kOther, kAlpha};
constexpr ArgDecl kBinaryArgs[] = {kInput, kOther};
constexpr ArgDecl kDivArgs[] = {kInput, kOther, {"rounding_mode", K::OptionalString, "None"}};
constexpr ArgDecl kTensorPairArgs[] = {kInput, {"other", K::Tensor}};
constexpr ArgDecl kPowArgs[] = {{"input", K::TensorOrScalar}, {"exponent", K::TensorOrScalar}};
constexpr ArgDecl kWhereArgs[] = {
    {"condition", K::Tensor}, {"input", K::TensorOrScalar}, {"other", K::TensorOrScalar}};
constexpr ArgDecl kClampArgs[] = {
    kInput, {"min", K::OptionalTensorOrScalar, "None"}, {"max", K::OptionalTensorOrScalar, "None"}};
constexpr ArgDecl kClampMinArgs[] = {kInput, {"min", K::Scalar}};
constexpr ArgDecl kClampMaxArgs[] = {kInput, {"max", K::Scalar}};

// Comparisons: (input, other: Tensor|Scalar) -> bool tensor.
template <class F>
OpSignature compare(std::string_view name, std::string_view doc, F) {
  return declare_op<kBinaryArgs>(name, doc, [](auto a) {
    return with_operand(arg<"other">(a), [&](const auto& o) { return F{}(arg<"input">(a), o); });
  });
}

std::vector<OpSignature> binary_ops() {
  return {
      declare_op<kAlphaArgs>("add", "input + alpha * other",
                             [](auto a) {
                               return with_operand(arg<"other">(a), [&](const auto& o) {
                                 return add(arg<"input">(a), o, arg<"alpha">(a));
                               });
                             }),
      declare_op<kAlphaArgs>("sub", "input - alpha * other",
                             [](auto a) {
                               return with_operand(arg<"other">(a), [&](const auto& o) {
                                 return sub(arg<"input">(a), o, arg<"alpha">(a));
                               });
                             }),
      declare_op<kBinaryArgs>("mul", "input * other",
                              [](auto a) {
                                return with_operand(arg<"other">(a), [&](const auto& o) {
                                  return mul(arg<"input">(a), o);
                                });
                              }),
      declare_op<kDivArgs>("div", "input / other; rounding_mode None, 'trunc' or 'floor'",
                           [](auto a) {
                             return with_operand(arg<"other">(a), [&](const auto& o) {
                               return div(arg<"input">(a), o, arg<"rounding_mode">(a));
                             });
                           }),
      declare_op<kTensorPairArgs>("maximum", "elementwise maximum (NaN propagates)",
                                  [](auto a) { return maximum(arg<"input">(a), arg<"other">(a)); }),
      declare_op<kTensorPairArgs>("minimum", "elementwise minimum (NaN propagates)",
                                  [](auto a) { return minimum(arg<"input">(a), arg<"other">(a)); }),
      declare_op<kPowArgs>(
          "pow", "input ^ exponent",
          [](auto a) {
            const ArgValue& input = arg<"input">(a);
            const ArgValue& exponent = arg<"exponent">(a);
            if (const Tensor* x = std::get_if<Tensor>(&input)) {
              return with_operand(exponent, [&](const auto& e) { return pow(*x, e); });
            }
            if (const Tensor* e = std::get_if<Tensor>(&exponent)) {
              return pow(std::get<Scalar>(input), *e);
            }
            throw SignatureError("[pow] expected a tensor for input or exponent, got two numbers");
          }),
      compare("eq", "input == other", [](const Tensor& x, const auto& o) { return eq(x, o); }),
      compare("ne", "input != other", [](const Tensor& x, const auto& o) { return ne(x, o); }),
      compare("lt", "input < other", [](const Tensor& x, const auto& o) { return lt(x, o); }),
      compare("le", "input <= other", [](const Tensor& x, const auto& o) { return le(x, o); }),
      compare("gt", "input > other", [](const Tensor& x, const auto& o) { return gt(x, o); }),
      compare("ge", "input >= other", [](const Tensor& x, const auto& o) { return ge(x, o); }),
      declare_op<kWhereArgs>("where", "condition ? input : other",
                             [](auto a) {
                               return with_operand(arg<"input">(a), [&](const auto& x) {
                                 return with_operand(arg<"other">(a), [&](const auto& y) {
                                   return where(arg<"condition">(a), x, y);
                                 });
                               });
                             }),
      declare_op<kClampArgs>(
          "clamp", "min(max(input, min), max); min and max both numbers or both tensors",
          [](auto a) {
            const ArgValue &lo = arg<"min">(a), &hi = arg<"max">(a);
            const bool tensors =
                std::holds_alternative<Tensor>(lo) || std::holds_alternative<Tensor>(hi);
            if (!tensors) {
              return clamp(arg<"input">(a), detail::optional_of<Scalar>(lo),
                           detail::optional_of<Scalar>(hi));
            }
            if (std::holds_alternative<Scalar>(lo) || std::holds_alternative<Scalar>(hi)) {
              throw SignatureError("[clamp] expected min and max both numbers or both tensors");
            }
            return clamp(arg<"input">(a), detail::optional_of<Tensor>(lo),
                         detail::optional_of<Tensor>(hi));
          }),
      declare_op<kClampMinArgs>("clamp_min", "max(input, min)",
                                [](auto a) { return clamp_min(arg<"input">(a), arg<"min">(a)); }),
      declare_op<kClampMaxArgs>("clamp_max", "min(input, max)",
                                [](auto a) { return clamp_max(arg<"input">(a), arg<"max">(a)); }),
  };
}

// ---- Reductions and softmax. ----
constexpr ArgDecl kCorrection{"correction", K::Int, "1"};
constexpr ArgDecl kSumArgs[] = {kInput, kDims, kKeepdim, kDType};
constexpr ArgDecl kVarArgs[] = {kInput, kDims, kCorrection, kKeepdim};
constexpr ArgDecl kNormArgs[] = {kInput, {"p", K::Double, "2.0"}, kDims, kKeepdim};
constexpr ArgDecl kExtremeArgs[] = {kInput, {"dim", K::IntList, "[]"}, kKeepdim};
constexpr ArgDecl kLogsumexpArgs[] = {kInput, {"dim", K::IntList}, kKeepdim};
constexpr ArgDecl kArgReduceArgs[] = {kInput, {"dim", K::OptionalInt, "None"}, kKeepdim};
constexpr ArgDecl kSoftmaxArgs[] = {kInput, {"dim", K::Int}, kDType};

std::vector<OpSignature> reduce_ops() {
  return {
      declare_op<kSumArgs>("sum", "sum over dim (None: every dim)",
                           [](auto a) {
                             return sum(arg<"input">(a), every_dim_if_none(arg<"dim">(a)),
                                        arg<"keepdim">(a), arg<"dtype">(a));
                           }),
      declare_op<kSumArgs>("mean", "mean over dim",
                           [](auto a) {
                             return mean(arg<"input">(a), every_dim_if_none(arg<"dim">(a)),
                                         arg<"keepdim">(a), arg<"dtype">(a));
                           }),
      declare_op<kSumArgs>("prod", "product over dim",
                           [](auto a) {
                             return prod(arg<"input">(a), every_dim_if_none(arg<"dim">(a)),
                                         arg<"keepdim">(a), arg<"dtype">(a));
                           }),
      declare_op<kVarArgs>("var", "variance with `correction`",
                           [](auto a) {
                             return var(arg<"input">(a), every_dim_if_none(arg<"dim">(a)),
                                        arg<"correction">(a), arg<"keepdim">(a));
                           }),
      declare_op<kVarArgs>("std", "standard deviation",
                           [](auto a) {
                             return std(arg<"input">(a), every_dim_if_none(arg<"dim">(a)),
                                        arg<"correction">(a), arg<"keepdim">(a));
                           }),
      declare_op<kVarArgs>("var_mean", "(variance, mean)",
                           [](auto a) {
                             return var_mean(arg<"input">(a), every_dim_if_none(arg<"dim">(a)),
                                             arg<"correction">(a), arg<"keepdim">(a));
                           }),
      declare_op<kNormArgs>("norm", "the 2-norm over dim (p = 2 only)",
                            [](auto a) {
                              if (arg<"p">(a) != 2.0) {
                                throw NotImplementedError("[norm] only p=2 is implemented, got p=" +
                                                          arg_value_string(ArgValue(arg<"p">(a))));
                              }
                              return norm(arg<"input">(a), every_dim_if_none(arg<"dim">(a)),
                                          arg<"keepdim">(a));
                            }),
      declare_op<kExtremeArgs>(
          "amax", "maximum over dim (NaN propagates)",
          [](auto a) { return amax(arg<"input">(a), arg<"dim">(a), arg<"keepdim">(a)); }),
      declare_op<kExtremeArgs>(
          "amin", "minimum over dim (NaN propagates)",
          [](auto a) { return amin(arg<"input">(a), arg<"dim">(a), arg<"keepdim">(a)); }),
      declare_op<kLogsumexpArgs>(
          "logsumexp", "log(sum(exp(x))) over dim",
          [](auto a) { return logsumexp(arg<"input">(a), arg<"dim">(a), arg<"keepdim">(a)); }),
      declare_op<kArgReduceArgs>(
          "argmax", "int64 index of the first maximum",
          [](auto a) { return argmax(arg<"input">(a), arg<"dim">(a), arg<"keepdim">(a)); }),
      declare_op<kArgReduceArgs>(
          "argmin", "int64 index of the first minimum",
          [](auto a) { return argmin(arg<"input">(a), arg<"dim">(a), arg<"keepdim">(a)); }),
      declare_op<kSoftmaxArgs>(
          "softmax", "softmax over dim",
          [](auto a) { return softmax(arg<"input">(a), arg<"dim">(a), arg<"dtype">(a)); }),
      declare_op<kSoftmaxArgs>(
          "log_softmax", "log of softmax over dim",
          [](auto a) { return log_softmax(arg<"input">(a), arg<"dim">(a), arg<"dtype">(a)); }),
  };
}

// ---- Normalization. ----
constexpr ArgDecl kNormalizedShape{"normalized_shape", K::IntList};
constexpr ArgDecl kLayerNormArgs[] = {kInput, kNormalizedShape, kWeight, kBias, kEps};
constexpr ArgDecl kRmsNormArgs[] = {
    kInput, kNormalizedShape, kWeight, {"eps", K::OptionalDouble, "None"}};
constexpr ArgDecl kGroupNormArgs[] = {kInput, {"num_groups", K::Int}, kWeight, kBias, kEps};
constexpr ArgDecl kBatchNormArgs[] = {
    kInput, {"running_mean", K::Tensor},    {"running_var", K::Tensor},     kWeight,
    kBias,  {"training", K::Bool, "False"}, {"momentum", K::Double, "0.1"}, kEps};

std::vector<OpSignature> norm_ops() {
  return {
      declare_op<kLayerNormArgs>("layer_norm", "normalize over the trailing normalized_shape dims",
                                 [](auto a) {
                                   return layer_norm(arg<"input">(a), arg<"normalized_shape">(a),
                                                     arg<"weight">(a), arg<"bias">(a),
                                                     arg<"eps">(a));
                                 }),
      declare_op<kRmsNormArgs>("rms_norm",
                               "x / sqrt(mean(x^2) + eps) * weight (eps None: the dtype's epsilon)",
                               [](auto a) {
                                 return rms_norm(arg<"input">(a), arg<"normalized_shape">(a),
                                                 arg<"weight">(a), arg<"eps">(a));
                               }),
      declare_op<kGroupNormArgs>("group_norm", "normalize each group of channels of [N, C, *]",
                                 [](auto a) {
                                   return group_norm(arg<"input">(a), arg<"num_groups">(a),
                                                     arg<"weight">(a), arg<"bias">(a),
                                                     arg<"eps">(a));
                                 }),
      declare_op<kBatchNormArgs>(
          "batch_norm", "inference batch norm with running statistics per channel",
          [](auto a) {
            return batch_norm(arg<"input">(a), arg<"running_mean">(a), arg<"running_var">(a),
                              arg<"weight">(a), arg<"bias">(a), arg<"training">(a),
                              arg<"momentum">(a), arg<"eps">(a));
          }),
  };
}

// ---- Linear algebra. ----
constexpr ArgDecl kBeta{"beta", K::Scalar, "1"};
constexpr ArgDecl kMatmulArgs[] = {kInput, {"other", K::Tensor}};
constexpr ArgDecl kMmArgs[] = {kInput, {"mat2", K::Tensor}};
constexpr ArgDecl kAddmmArgs[] = {kInput, {"mat1", K::Tensor}, {"mat2", K::Tensor}, kBeta, kAlpha};
constexpr ArgDecl kBaddbmmArgs[] = {
    kInput, {"batch1", K::Tensor}, {"batch2", K::Tensor}, kBeta, kAlpha};
constexpr ArgDecl kLinearArgs[] = {kInput, {"weight", K::Tensor}, kBias};

std::vector<OpSignature> linalg_ops() {
  return {
      declare_op<kMatmulArgs>("matmul", "torch.matmul (1-d, 2-d, batched)",
                              [](auto a) { return matmul(arg<"input">(a), arg<"other">(a)); }),
      declare_op<kMmArgs>("mm", "[M, K] @ [K, N]",
                          [](auto a) { return mm(arg<"input">(a), arg<"mat2">(a)); }),
      declare_op<kMmArgs>("bmm", "[B, M, K] @ [B, K, N]",
                          [](auto a) { return bmm(arg<"input">(a), arg<"mat2">(a)); }),
      declare_op<kAddmmArgs>("addmm", "beta * input + alpha * (mat1 @ mat2)",
                             [](auto a) {
                               return addmm(arg<"input">(a), arg<"mat1">(a), arg<"mat2">(a),
                                            arg<"beta">(a), arg<"alpha">(a));
                             }),
      declare_op<kBaddbmmArgs>("baddbmm", "beta * input + alpha * bmm(batch1, batch2)",
                               [](auto a) {
                                 return baddbmm(arg<"input">(a), arg<"batch1">(a), arg<"batch2">(a),
                                                arg<"beta">(a), arg<"alpha">(a));
                               }),
      declare_op<kLinearArgs>(
          "linear", "input @ weight^T + bias",
          [](auto a) { return linear(arg<"input">(a), arg<"weight">(a), arg<"bias">(a)); }),
  };
}

// ---- Convolution, pooling and resizing: sizes of one value (both spatial dims) or two. ----
constexpr ArgDecl kConvWeight{"weight", K::Tensor};
constexpr ArgDecl kGroups{"groups", K::Int, "1"};
constexpr ArgDecl kConv2dArgs[] = {kInput,
                                   kConvWeight,
                                   kBias,
                                   {"stride", K::IntList, "[1]"},
                                   {"padding", K::IntListOrString, "[0]"},
                                   {"dilation", K::IntList, "[1]"},
                                   kGroups};
constexpr ArgDecl kConvTranspose2dArgs[] = {kInput,
                                            kConvWeight,
                                            kBias,
                                            {"stride", K::IntList, "[1]"},
                                            {"padding", K::IntList, "[0]"},
                                            {"output_padding", K::IntList, "[0]"},
                                            kGroups,
                                            {"dilation", K::IntList, "[1]"}};
constexpr ArgDecl kKernelSize{"kernel_size", K::IntList};
constexpr ArgDecl kPoolStride{"stride", K::OptionalIntList, "None"};  // None: kernel_size
constexpr ArgDecl kCeilMode{"ceil_mode", K::Bool, "False"};
constexpr ArgDecl kAvgPoolArgs[] = {kInput,
                                    kKernelSize,
                                    kPoolStride,
                                    {"padding", K::IntList, "[0]"},
                                    kCeilMode,
                                    {"count_include_pad", K::Bool, "True"},
                                    {"divisor_override", K::OptionalInt, "None"}};
constexpr ArgDecl kMaxPoolArgs[] = {kInput,
                                    kKernelSize,
                                    kPoolStride,
                                    {"padding", K::IntList, "[0]"},
                                    {"dilation", K::IntList, "[1]"},
                                    kCeilMode,
                                    {"return_indices", K::Bool, "False"}};
constexpr ArgDecl kAdaptiveArgs[] = {kInput, {"output_size", K::IntList}};
constexpr ArgDecl kInterpolateArgs[] = {kInput,
                                        {"size", K::OptionalIntList, "None"},
                                        {"scale_factor", K::OptionalFloatList, "None"},
                                        {"mode", K::String, "'nearest'"},
                                        {"align_corners", K::OptionalBool, "None"}};

std::vector<OpSignature> spatial_ops() {
  return {
      declare_op<kConv2dArgs>(
          "conv2d",
          "2-d convolution of [N, C, H, W] (or channels-last); padding sizes, 'same' or 'valid'",
          [](auto a) {
            const ArgValue& padding = arg<"padding">(a);
            if (const auto* mode = std::get_if<std::string>(&padding)) {
              return conv2d(arg<"input">(a), arg<"weight">(a), arg<"bias">(a), arg<"stride">(a),
                            *mode, arg<"dilation">(a), arg<"groups">(a));
            }
            return conv2d(arg<"input">(a), arg<"weight">(a), arg<"bias">(a), arg<"stride">(a),
                          std::get<IntList>(padding), arg<"dilation">(a), arg<"groups">(a));
          }),
      declare_op<kConvTranspose2dArgs>(
          "conv_transpose2d",
          "transposed 2-d convolution of [N, C, H, W] (or channels-last); weight [C, "
          "Cout/groups, kH, kW]",
          [](auto a) {
            return conv_transpose2d(arg<"input">(a), arg<"weight">(a), arg<"bias">(a),
                                    arg<"stride">(a), arg<"padding">(a), arg<"output_padding">(a),
                                    arg<"groups">(a), arg<"dilation">(a));
          }),
      declare_op<kAvgPoolArgs>("avg_pool2d", "average over each window (stride None: kernel_size)",
                               [](auto a) {
                                 return avg_pool2d(arg<"input">(a), arg<"kernel_size">(a),
                                                   every_dim_if_none(arg<"stride">(a)),
                                                   arg<"padding">(a), arg<"ceil_mode">(a),
                                                   arg<"count_include_pad">(a),
                                                   arg<"divisor_override">(a));
                               }),
      declare_op<kMaxPoolArgs>(
          "max_pool2d",
          "maximum over each window; return_indices adds int64 indices into each H * W plane",
          [](auto a) {
            const IntList stride = every_dim_if_none(arg<"stride">(a));
            if (arg<"return_indices">(a)) {
              return detail::op_outputs(max_pool2d_with_indices(
                  arg<"input">(a), arg<"kernel_size">(a), stride, arg<"padding">(a),
                  arg<"dilation">(a), arg<"ceil_mode">(a)));
            }
            return detail::op_outputs(max_pool2d(arg<"input">(a), arg<"kernel_size">(a), stride,
                                                 arg<"padding">(a), arg<"dilation">(a),
                                                 arg<"ceil_mode">(a)));
          }),
      declare_op<kAdaptiveArgs>(
          "adaptive_avg_pool2d", "average pooling to output_size",
          [](auto a) { return adaptive_avg_pool2d(arg<"input">(a), arg<"output_size">(a)); }),
      declare_op<kInterpolateArgs>(
          "interpolate",
          "F.interpolate of [N, C, H, W]: size or scale_factor; mode 'nearest' or 'bilinear'",
          [](auto a) {
            return interpolate(arg<"input">(a), arg<"size">(a), arg<"scale_factor">(a),
                               arg<"mode">(a), arg<"align_corners">(a));
          }),
  };
}

// ---- Attention. ----
constexpr ArgDecl kSdpaArgs[] = {{"query", K::Tensor},
                                 {"key", K::Tensor},
                                 {"value", K::Tensor},
                                 {"attn_mask", K::OptionalTensor, "None"},
                                 {"dropout_p", K::Double, "0.0"},
                                 {"is_causal", K::Bool, "False"},
                                 {"scale", K::OptionalDouble, "None"},
                                 {"slice_size", K::OptionalInt, "None"}};

std::vector<OpSignature> attention_ops() {
  return {
      declare_op<kSdpaArgs>(
          "scaled_dot_product_attention",
          "softmax(query key^T scale + attn_mask) value, flash-style; slice_size bounds the "
          "batch x heads in flight",
          [](auto a) {
            return scaled_dot_product_attention(
                arg<"query">(a), arg<"key">(a), arg<"value">(a), arg<"attn_mask">(a),
                arg<"dropout_p">(a), arg<"is_causal">(a), arg<"scale">(a), arg<"slice_size">(a));
          }),
  };
}

// ---- The Stable Diffusion fusions (ONNX Runtime contrib semantics). ----
constexpr ArgDecl kBiasAddArgs[] = {kInput, {"bias", K::Tensor}, {"skip", K::Tensor}};
constexpr ArgDecl kBiasSplitGeluArgs[] = {kInput, {"bias", K::Tensor}};
constexpr ArgDecl kSkipLayerNormArgs[] = {kInput,
                                          {"skip", K::Tensor},
                                          {"gamma", K::Tensor},
                                          {"beta", K::OptionalTensor, "None"},
                                          kBias,
                                          kEps,
                                          {"return_sum", K::Bool, "False"}};
constexpr ArgDecl kGroupNormNhwcArgs[] = {kInput,
                                          {"num_groups", K::Int},
                                          {"gamma", K::Tensor},
                                          {"beta", K::Tensor},
                                          kEps,
                                          {"activation", K::String, "'none'"}};
constexpr ArgDecl kMultiHeadAttentionArgs[] = {
    {"query", K::Tensor}, {"key", K::OptionalTensor, "None"}, {"scale", K::OptionalDouble, "None"}};

std::vector<OpSignature> fused_ops() {
  return {
      declare_op<kBiasAddArgs>(
          "bias_add", "x + bias + skip (BiasAdd): x, skip [*, C], bias [C]",
          [](auto a) { return bias_add(arg<"input">(a), arg<"bias">(a), arg<"skip">(a)); }),
      declare_op<kBiasSplitGeluArgs>(
          "bias_split_gelu",
          "a * gelu(b) for the halves a, b of the last dim of x + bias (BiasSplitGelu)",
          [](auto a) { return bias_split_gelu(arg<"input">(a), arg<"bias">(a)); }),
      declare_op<kSkipLayerNormArgs>(
          "skip_layer_norm",
          "layer_norm(x + skip + bias) over the last dim (SkipLayerNormalization); return_sum: "
          "also the sum",
          [](auto a) {
            if (arg<"return_sum">(a)) {
              return detail::op_outputs(skip_layer_norm_with_sum(arg<"input">(a), arg<"skip">(a),
                                                                 arg<"gamma">(a), arg<"beta">(a),
                                                                 arg<"bias">(a), arg<"eps">(a)));
            }
            return detail::op_outputs(skip_layer_norm(arg<"input">(a), arg<"skip">(a),
                                                      arg<"gamma">(a), arg<"beta">(a),
                                                      arg<"bias">(a), arg<"eps">(a)));
          }),
      declare_op<kGroupNormNhwcArgs>(
          "group_norm_nhwc",
          "group norm of NHWC [N, H, W, C], then activation 'none' or 'silu' (GroupNorm)",
          [](auto a) {
            return group_norm_nhwc(arg<"input">(a), arg<"num_groups">(a), arg<"gamma">(a),
                                   arg<"beta">(a), arg<"eps">(a), arg<"activation">(a));
          }),
      declare_op<kMultiHeadAttentionArgs>(
          "multi_head_attention",
          "attention of packed QKV [B, S, H, 3, D], or of query [B, L, H * D] with packed KV "
          "[B, S, H, 2, D]; result [B, L, H * D] (MultiHeadAttention)",
          [](auto a) {
            return multi_head_attention(arg<"query">(a), arg<"key">(a), arg<"scale">(a));
          }),
  };
}

// ---- Creation and random numbers. ----
constexpr ArgDecl kShapeArgs[] = {kSize, kDType, kDevice};
constexpr ArgDecl kFullArgs[] = {kSize, {"fill_value", K::Scalar}, kDType, kDevice};
constexpr ArgDecl kArangeArgs[] = {{"start", K::Scalar},
                                   {"end", K::OptionalScalar, "None"},
                                   {"step", K::Scalar, "1"},
                                   kDType,
                                   kDevice};
constexpr ArgDecl kLinspaceArgs[] = {
    {"start", K::Double}, {"end", K::Double}, {"steps", K::Int}, kDType, kDevice};
constexpr ArgDecl kUniformArgs[] = {
    kSize, {"low", K::Double, "0.0"}, {"high", K::Double, "1.0"}, kDType, kDevice};
constexpr ArgDecl kNormalArgs[] = {{"mean", K::Double}, {"std", K::Double}, kSize, kDType, kDevice};
constexpr ArgDecl kRandintArgs[] = {{"low", K::Int}, {"high", K::Int}, kSize, kDType, kDevice};
constexpr ArgDecl kDropoutArgs[] = {kInput, {"p", K::Double, "0.5"}, {"training", K::Bool, "True"}};

// A creation op of (size, dtype, device); dtype None: float32.
template <Tensor (*F)(const Shape&, DType, Device)>
OpSignature creation(std::string_view name, std::string_view doc) {
  return declare_op<kShapeArgs>(name, doc, [](auto a) {
    return F(arg<"size">(a), arg<"dtype">(a).value_or(DType::Float32), arg<"device">(a));
  });
}

std::vector<OpSignature> creation_ops() {
  return {
      creation<&zeros>("zeros", "a tensor of zeros"),
      creation<&ones>("ones", "a tensor of ones"),
      declare_op<kFullArgs>(
          "full", "a tensor of fill_value (dtype None: inferred from fill_value, as torch.full)",
          [](auto a) {
            const Scalar value = arg<"fill_value">(a);
            return full(arg<"size">(a), value, arg<"dtype">(a).value_or(value.promotion_dtype()),
                        arg<"device">(a));
          }),
      declare_op<kArangeArgs>("arange", "[start, end) by step; one number: [0, start)",
                              [](auto a) {
                                if (is_none<"end">(a)) {
                                  return arange(Scalar(0), arg<"start">(a), arg<"step">(a),
                                                arg<"dtype">(a), arg<"device">(a));
                                }
                                return arange(arg<"start">(a), *arg<"end">(a), arg<"step">(a),
                                              arg<"dtype">(a), arg<"device">(a));
                              }),
      declare_op<kLinspaceArgs>("linspace", "steps values from start to end inclusive",
                                [](auto a) {
                                  return linspace(arg<"start">(a), arg<"end">(a), arg<"steps">(a),
                                                  arg<"dtype">(a).value_or(DType::Float32),
                                                  arg<"device">(a));
                                }),
      creation<&rand>("rand", "uniform on [0, 1) (Philox; manual_seed)"),
      declare_op<kUniformArgs>("uniform", "uniform on [low, high)",
                               [](auto a) {
                                 return uniform(arg<"size">(a), arg<"low">(a), arg<"high">(a),
                                                arg<"dtype">(a).value_or(DType::Float32),
                                                arg<"device">(a));
                               }),
      creation<&randn>("randn", "standard normal"),
      declare_op<kNormalArgs>("normal", "normal with mean and std",
                              [](auto a) {
                                return normal(arg<"mean">(a), arg<"std">(a), arg<"size">(a),
                                              arg<"dtype">(a).value_or(DType::Float32),
                                              arg<"device">(a));
                              }),
      declare_op<kRandintArgs>("randint", "integers in [low, high)",
                               [](auto a) {
                                 return randint(arg<"low">(a), arg<"high">(a), arg<"size">(a),
                                                arg<"dtype">(a).value_or(DType::Int64),
                                                arg<"device">(a));
                               }),
      declare_op<kUnaryArgs>("bernoulli", "1 with probability input, else 0",
                             [](auto a) { return bernoulli(arg<"input">(a)); }),
      declare_op<kDropoutArgs>(
          "dropout", "zero with probability p, scale the rest by 1 / (1 - p)",
          [](auto a) { return dropout(arg<"input">(a), arg<"p">(a), arg<"training">(a)); }),
  };
}

// ---- Data movement, views and copies. ----
constexpr ArgDecl kTensorsArgs[] = {{"tensors", K::TensorList}, kDim0};
constexpr ArgDecl kSplitArgs[] = {
    {"tensor", K::Tensor}, {"split_size_or_sections", K::IntOrIntList}, kDim0};
constexpr ArgDecl kChunkArgs[] = {kInput, {"chunks", K::Int}, kDim0};
constexpr ArgDecl kIndexArgs[] = {kInput, {"dim", K::Int}, {"index", K::Tensor}};
constexpr ArgDecl kDimsListArgs[] = {kInput, {"dims", K::IntList}};
constexpr ArgDecl kRepeatArgs[] = {kInput, {"repeats", K::IntList}};
constexpr ArgDecl kPadArgs[] = {kInput,
                                {"pad", K::IntList},
                                {"mode", K::String, "'constant'"},
                                {"value", K::OptionalDouble, "None"}};
constexpr ArgDecl kDiagonalArgs[] = {kInput, {"diagonal", K::Int, "0"}};
constexpr ArgDecl kShapeListArgs[] = {kInput, {"shape", K::IntList}};
constexpr ArgDecl kTransposeArgs[] = {kInput, {"dim0", K::Int}, {"dim1", K::Int}};
constexpr ArgDecl kSizeListArgs[] = {kInput, kSize};
constexpr ArgDecl kSqueezeArgs[] = {kInput, {"dim", K::OptionalInt, "None"}};
constexpr ArgDecl kDimArgs[] = {kInput, {"dim", K::Int}};
constexpr ArgDecl kFlattenArgs[] = {kInput, {"start_dim", K::Int, "0"}, {"end_dim", K::Int, "-1"}};
constexpr ArgDecl kNarrowArgs[] = {kInput, {"dim", K::Int}, {"start", K::Int}, {"length", K::Int}};
constexpr ArgDecl kSelectArgs[] = {kInput, {"dim", K::Int}, {"index", K::Int}};
constexpr ArgDecl kToArgs[] = {kInput, {"dtype", K::DType}};

std::vector<OpSignature> movement_ops() {
  return {
      declare_op<kTensorsArgs>("cat", "concatenate along dim",
                               [](auto a) { return cat(arg<"tensors">(a), arg<"dim">(a)); }),
      declare_op<kTensorsArgs>("stack", "stack along a new dim",
                               [](auto a) { return stack(arg<"tensors">(a), arg<"dim">(a)); }),
      declare_op<kSplitArgs>(
          "split", "pieces of split_size (an int) or of the given sizes (a list) along dim",
          [](auto a) {
            const ArgValue& sizes = arg<"split_size_or_sections">(a);
            if (const auto* list = std::get_if<IntList>(&sizes)) {
              return split(arg<"tensor">(a), *list, arg<"dim">(a));
            }
            return split(arg<"tensor">(a), std::get<std::int64_t>(sizes), arg<"dim">(a));
          }),
      declare_op<kChunkArgs>(
          "chunk", "at most `chunks` equal pieces",
          [](auto a) { return chunk(arg<"input">(a), arg<"chunks">(a), arg<"dim">(a)); }),
      declare_op<kIndexArgs>(
          "index_select", "the entries at `index` along dim",
          [](auto a) { return index_select(arg<"input">(a), arg<"dim">(a), arg<"index">(a)); }),
      declare_op<kIndexArgs>(
          "gather", "out[i][j] = input[index[i][j]][j] (dim 0)",
          [](auto a) { return gather(arg<"input">(a), arg<"dim">(a), arg<"index">(a)); }),
      declare_op<kDimsListArgs>("flip", "reverse along dims",
                                [](auto a) { return flip(arg<"input">(a), arg<"dims">(a)); }),
      declare_op<kRepeatArgs>("repeat", "tile (Tensor.repeat)",
                              [](auto a) { return repeat(arg<"input">(a), arg<"repeats">(a)); }),
      declare_op<kPadArgs>(
          "pad", "F.pad: (left, right) pairs from the last dim; constant, reflect or replicate",
          [](auto a) {
            return pad(arg<"input">(a), arg<"pad">(a), arg<"mode">(a),
                       arg<"value">(a).value_or(0.0));
          }),
      declare_op<kDiagonalArgs>("tril", "lower triangle",
                                [](auto a) { return tril(arg<"input">(a), arg<"diagonal">(a)); }),
      declare_op<kDiagonalArgs>("triu", "upper triangle",
                                [](auto a) { return triu(arg<"input">(a), arg<"diagonal">(a)); }),
      // Tensor methods: views (the CLI writes them out contiguous) and copies.
      declare_op<kShapeListArgs>("reshape", "a view when possible, else a copy",
                                 [](auto a) { return arg<"input">(a).reshape(arg<"shape">(a)); }),
      declare_op<kDimsListArgs>("permute", "reorder dims",
                                [](auto a) { return arg<"input">(a).permute(arg<"dims">(a)); }),
      declare_op<kTransposeArgs>(
          "transpose", "swap two dims",
          [](auto a) { return arg<"input">(a).transpose(arg<"dim0">(a), arg<"dim1">(a)); }),
      declare_op<kUnaryArgs>("t", "transpose of a <= 2-d tensor",
                             [](auto a) { return arg<"input">(a).t(); }),
      declare_op<kSizeListArgs>("expand", "broadcast to size (-1 keeps a size)",
                                [](auto a) { return arg<"input">(a).expand(arg<"size">(a)); }),
      declare_op<kSqueezeArgs>("squeeze", "drop size-1 dims",
                               [](auto a) {
                                 const std::optional<std::int64_t> dim = arg<"dim">(a);
                                 return dim ? arg<"input">(a).squeeze(*dim)
                                            : arg<"input">(a).squeeze();
                               }),
      declare_op<kDimArgs>("unsqueeze", "insert a size-1 dim",
                           [](auto a) { return arg<"input">(a).unsqueeze(arg<"dim">(a)); }),
      declare_op<kFlattenArgs>(
          "flatten", "merge dims start_dim..end_dim",
          [](auto a) { return arg<"input">(a).flatten(arg<"start_dim">(a), arg<"end_dim">(a)); }),
      declare_op<kNarrowArgs>("narrow", "length entries from start along dim",
                              [](auto a) {
                                return arg<"input">(a).narrow(arg<"dim">(a), arg<"start">(a),
                                                              arg<"length">(a));
                              }),
      declare_op<kSelectArgs>(
          "select", "the slice at index along dim (drops dim)",
          [](auto a) { return arg<"input">(a).select(arg<"dim">(a), arg<"index">(a)); }),
      declare_op<kUnaryArgs>("contiguous", "a row-major copy (input when already contiguous)",
                             [](auto a) { return arg<"input">(a).contiguous(); }),
      declare_op<kUnaryArgs>("clone", "a copy", [](auto a) { return arg<"input">(a).clone(); }),
      declare_op<kToArgs>("to", "cast (round to nearest even)",
                          [](auto a) { return arg<"input">(a).to(arg<"dtype">(a)); }),
  };
}

// ---- Compositions: ops made of other ops, exact or rounded once, on any device. ----
constexpr ArgDecl kHardtanhArgs[] = {
    kInput, {"min_val", K::Double, "-1.0"}, {"max_val", K::Double, "1.0"}};
constexpr ArgDecl kLeakyReluArgs[] = {kInput, {"negative_slope", K::Double, "0.01"}};
constexpr ArgDecl kThresholdArgs[] = {kInput, {"threshold", K::Double}, {"value", K::Double}};
constexpr ArgDecl kLikeArgs[] = {kInput, kDType};
constexpr ArgDecl kFullLikeArgs[] = {kInput, {"fill_value", K::Scalar}, kDType};

Tensor zeros_like_of(const Tensor& x) { return zeros(x.sizes(), x.dtype(), x.device()); }

Tensor isinf_of(const Tensor& x) {
  const double inf = std::numeric_limits<double>::infinity();
  return where(eq(x, inf), Scalar(true), eq(x, -inf));
}

// torch.atleast_{1,2,3}d: 0-d -> [1], [1, 1], [1, 1, 1]; 1-d [n] -> [1, n], [1, n, 1];
// 2-d [a, b] -> [a, b, 1]; more dims unchanged.
Tensor at_least(const Tensor& x, std::int64_t n) {
  if (x.dim() >= n) return x;
  const auto s = x.sizes();
  if (x.dim() == 0) return x.reshape(std::vector<std::int64_t>(static_cast<std::size_t>(n), 1));
  if (x.dim() == 1) return n == 2 ? x.reshape({1, s[0]}) : x.reshape({1, s[0], 1});
  return x.reshape({s[0], s[1], 1});
}

// torch.movedim: source dims to destination places, the others in their order.
Tensor movedim_of(const Tensor& x, const IntList& source, const IntList& destination) {
  const std::int64_t n = x.dim();
  if (source.size() != destination.size()) {
    throw InvalidArgument("[movedim] Invalid source or destination dims: source (" +
                          std::to_string(source.size()) +
                          " dims) should contain the same "
                          "number of dims as destination (" +
                          std::to_string(destination.size()) + " dims)");
  }
  auto wrap = [&](std::int64_t d) { return wrap_dim("movedim", d, n); };
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n), -1);
  std::vector<bool> used(static_cast<std::size_t>(n), false),
      placed(static_cast<std::size_t>(n), false);
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::int64_t src = wrap(source[i]), dst = wrap(destination[i]);
    if (used[src] || placed[dst]) {
      throw InvalidArgument("[movedim] repeated dim in source or destination");
    }
    perm[dst] = src;
    used[src] = placed[dst] = true;
  }
  std::int64_t next = 0;
  for (std::int64_t d = 0; d < n; ++d) {
    if (perm[d] != -1) continue;
    while (used[next]) ++next;
    perm[d] = next;
    used[next] = true;
  }
  return x.permute(perm);
}

// torch.tile: repeat with dims padded by leading 1s to the input's rank.
Tensor tile_of(const Tensor& x, const IntList& dims) {
  IntList reps(dims);
  while (static_cast<std::int64_t>(reps.size()) < x.dim()) reps.insert(reps.begin(), 1);
  return repeat(x, reps);
}

// torch.roll: each dim's elements shifted cyclically (no dims: the flattened tensor's).
Tensor roll_of(const Tensor& x, const IntList& shifts, const IntList& dims) {
  if (dims.empty()) {
    if (shifts.size() != 1) {
      throw InvalidArgument("[roll] shifts must have one element when dims are not given, got " +
                            std::to_string(shifts.size()));
    }
    return roll_of(x.reshape({-1}), shifts, {0}).reshape(x.sizes());
  }
  if (shifts.size() != dims.size()) {
    throw InvalidArgument("[roll] shifts and dimensions must align. shifts: " +
                          std::to_string(shifts.size()) + ", dims:" + std::to_string(dims.size()));
  }
  Tensor out = x;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = wrap_dim("roll", dims[i], x.dim());
    const std::int64_t n = x.sizes()[static_cast<std::size_t>(d)];
    if (n == 0) continue;
    const std::int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out.contiguous();
}

// torch.rot90: k quarter turns from dims[0] toward dims[1].
Tensor rot90_of(const Tensor& x, std::int64_t k, const IntList& dims) {
  if (dims.size() != 2) {
    throw InvalidArgument("[rot90] expected total rotation dims == 2, but got dims = " +
                          std::to_string(dims.size()));
  }
  if (x.dim() < 2) {
    throw InvalidArgument("[rot90] expected total dims >= 2, but got total dims = " +
                          std::to_string(x.dim()));
  }
  const std::int64_t d0 = wrap_dim("rot90", dims[0], x.dim());
  const std::int64_t d1 = wrap_dim("rot90", dims[1], x.dim());
  if (d0 == d1) {
    throw InvalidArgument("[rot90] expected rotation dims to be different, but got dim0 = " +
                          std::to_string(d0) + " and dim1 = " + std::to_string(d1));
  }
  switch (((k % 4) + 4) % 4) {
    case 1:
      return flip(x, {d1}).transpose(d0, d1).contiguous();
    case 2:
      return flip(x, {d0, d1});
    case 3:
      return flip(x, {d0}).transpose(d0, d1).contiguous();
    default:
      return x.clone();
  }
}

// torch.diff: n times the differences of neighbours along dim (bool: !=), after prepend and
// append are concatenated there. Floating inputs difference in float64 and round once at the end
// (a float32, float16 or bfloat16 difference of two values is exact in float64, so the first
// order is exact there and higher orders carry double roundings only): within 1 ULP. MPS has no
// float64: there the widened part runs on the cpu (the fallback path's copy) and comes back.
Tensor diff_of(const Tensor& x, std::int64_t n, std::int64_t dim,
               const std::optional<Tensor>& prepend, const std::optional<Tensor>& append) {
  if (n < 0) {
    throw InvalidArgument("[diff] order must be non-negative but got " + std::to_string(n));
  }
  if (x.dim() == 0) throw InvalidArgument("[diff] expects input to be at least one-dimensional");
  const std::int64_t d = wrap_dim("diff", dim, x.dim());
  if (n == 0) return x;  // torch: the input itself, prepend and append unused
  std::vector<Tensor> parts;
  if (prepend) parts.push_back(*prepend);
  parts.push_back(x);
  if (append) parts.push_back(*append);
  Tensor out = parts.size() == 1 ? x : cat(parts, d);
  const DType dtype = out.dtype();
  const bool wide = is_floating(dtype) && dtype != DType::Float64 && n > 1;
  const Device device = out.device();
  if (wide) out = out.to(Device::cpu()).to(DType::Float64);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t len = out.sizes()[static_cast<std::size_t>(d)];
    if (len == 0) break;
    const Tensor hi = out.narrow(d, 1, len - 1), lo = out.narrow(d, 0, len - 1);
    out = out.dtype() == DType::Bool ? ne(hi, lo) : sub(hi, lo);
  }
  return wide ? out.to(dtype).to(device) : out;
}

// torch.meshgrid: each 1-d (or 0-d) tensor spread along its own dim; 'xy' swaps the first two.
std::vector<Tensor> meshgrid_of(const std::vector<Tensor>& tensors, std::string_view indexing) {
  if (indexing != "ij" && indexing != "xy") {
    throw InvalidArgument("[meshgrid] indexing must be one of \"xy\" or \"ij\", but received: " +
                          std::string(indexing));
  }
  if (tensors.empty()) throw InvalidArgument("[meshgrid] expects a non-empty TensorList");
  std::vector<std::int64_t> sizes;
  for (const Tensor& t : tensors) {
    if (t.dim() > 1) {
      throw InvalidArgument("[meshgrid] Expected 0D or 1D tensor in the tensor list but got: " +
                            std::to_string(t.dim()) + "-d");
    }
    sizes.push_back(t.numel());
  }
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  std::vector<std::int64_t> shape = sizes;
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    std::size_t at = i;
    if (swap && i < 2) at = 1 - i;
    std::vector<std::int64_t> view(tensors.size(), 1);
    view[at] = sizes[i];
    out.push_back(tensors[i].reshape(view).expand(shape));
  }
  return out;
}

// hstack / vstack / dstack / column_stack: torch's promotion of each input's rank, then cat.
Tensor stack_along(std::string_view op, const std::vector<Tensor>& tensors) {
  if (tensors.empty())
    throw InvalidArgument("[" + std::string(op) + "] expects a non-empty TensorList");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    if (op == "hstack") parts.push_back(at_least(t, 1));
    if (op == "vstack") parts.push_back(at_least(t, 2));
    if (op == "dstack") parts.push_back(at_least(t, 3));
    if (op == "column_stack") parts.push_back(t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t);
  }
  if (op == "hstack") return cat(parts, parts[0].dim() == 1 ? 0 : 1);
  if (op == "vstack") return cat(parts, 0);
  if (op == "dstack") return cat(parts, 2);
  return cat(parts, 1);
}

constexpr ArgDecl kTileArgs[] = {kInput, {"dims", K::IntList}};
constexpr ArgDecl kRollArgs[] = {kInput, {"shifts", K::IntList}, {"dims", K::IntList, "[]"}};
constexpr ArgDecl kRot90Args[] = {kInput, {"k", K::Int, "1"}, {"dims", K::IntList, "[0, 1]"}};
constexpr ArgDecl kDiffArgs[] = {kInput,
                                 {"n", K::Int, "1"},
                                 {"dim", K::Int, "-1"},
                                 {"prepend", K::OptionalTensor, "None"},
                                 {"append", K::OptionalTensor, "None"}};
constexpr ArgDecl kUnflattenArgs[] = {kInput, {"dim", K::Int}, {"sizes", K::IntList}};
constexpr ArgDecl kUnbindArgs[] = {kInput, kDim0};
constexpr ArgDecl kSplitSizesArgs[] = {kInput, {"split_sizes", K::IntList}, kDim0};
constexpr ArgDecl kTensorListArgs[] = {{"tensors", K::TensorList}};
constexpr ArgDecl kMeshgridArgs[] = {{"tensors", K::TensorList}, {"indexing", K::String, "'ij'"}};

// topk and kthvalue: k within the dim's size.
std::int64_t checked_k(std::string_view op, const Tensor& x, std::int64_t k, std::int64_t d,
                       bool at_least_one) {
  const std::int64_t n = x.dim() == 0 ? 1 : x.sizes()[static_cast<std::size_t>(d)];
  if (k < (at_least_one ? 1 : 0) || k > n) {
    throw InvalidArgument("[" + std::string(op) + "] selected index k out of range: k = " +
                          std::to_string(k) + " for a dim of size " + std::to_string(n));
  }
  return n;
}

constexpr ArgDecl kSortArgs[] = {
    kInput, {"dim", K::Int, "-1"}, {"descending", K::Bool, "False"}, {"stable", K::Bool, "False"}};
constexpr ArgDecl kTopkArgs[] = {kInput,
                                 {"k", K::Int},
                                 {"dim", K::Int, "-1"},
                                 {"largest", K::Bool, "True"},
                                 {"sorted", K::Bool, "True"}};
constexpr ArgDecl kCumArgs[] = {kInput, {"dim", K::Int}, kDType};
constexpr ArgDecl kScanDimArgs[] = {kInput, {"dim", K::Int}};
constexpr ArgDecl kKthvalueArgs[] = {kInput, {"k", K::Int}, {"dim", K::Int, "-1"}, kKeepdim};

constexpr ArgDecl kMovedimArgs[] = {kInput, {"source", K::IntList}, {"destination", K::IntList}};
constexpr ArgDecl kBroadcastToArgs[] = {kInput, kSize};

constexpr ArgDecl kLambdArgs[] = {kInput, {"lambd", K::Double, "0.5"}};
constexpr ArgDecl kNanToNumArgs[] = {kInput,
                                     {"nan", K::Double, "0.0"},
                                     {"posinf", K::OptionalDouble, "None"},
                                     {"neginf", K::OptionalDouble, "None"}};
constexpr ArgDecl kOtherTensorArgs[] = {kInput, {"other", K::Tensor}};

// The largest finite value of a float dtype (nan_to_num's default for +inf).
double finite_max(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return 65504.0;
    case DType::BFloat16:
      return 3.3895313892515355e38;
    case DType::Float32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

// torch's NaN-ignoring maximum / minimum (C's fmax / fmin): the other operand where one is
// NaN, and the first where they compare equal (fmax(-0, +0) is -0).
Tensor nan_ignoring(const Tensor& a, const Tensor& b, bool max) {
  return where(ne(a, a), b, where(ne(b, b), a, where(max ? gt(b, a) : lt(b, a), b, a)));
}

Tensor truth(const Tensor& x) { return ne(x, 0); }  // NaN is true

std::vector<OpSignature> composed_ops() {
  return {
      declare_op<kUnaryArgs>("sign", "-1, 0 or 1 (0 for NaN and -0, as torch)",
                             [](auto a) {
                               const Tensor& x = arg<"input">(a);
                               if (x.dtype() == DType::Bool) return x.clone();  // torch's
                               return where(gt(x, 0), Scalar(1),
                                            where(lt(x, 0), Scalar(-1), zeros_like_of(x)));
                             }),
      declare_op<kLambdArgs>("hardshrink", "x where |x| > lambd, else 0; NaN stays NaN",
                             [](auto a) {
                               const Tensor& x = arg<"input">(a);
                               const double l = arg<"lambd">(a);
                               return where(where(ge(x, -l), le(x, l), Scalar(false)), Scalar(0),
                                            x);
                             }),
      declare_op<kLambdArgs>("softshrink",
                             "x - lambd above lambd, x + lambd below -lambd, else 0 (NaN too)",
                             [](auto a) {
                               const Tensor& x = arg<"input">(a);
                               const double l = arg<"lambd">(a);
                               return where(gt(x, l), sub(x, Scalar(l)),
                                            where(lt(x, -l), add(x, Scalar(l)), Scalar(0)));
                             }),
      declare_op<kNanToNumArgs>(
          "nan_to_num", "NaN, +inf, -inf replaced (defaults: 0 and the dtype's extremes)",
          [](auto a) {
            const Tensor& x = arg<"input">(a);
            if (!is_floating(x.dtype())) return x.clone();  // no NaN or inf: a copy, as torch
            const double inf = std::numeric_limits<double>::infinity();
            const double big = finite_max(x.dtype());
            return where(ne(x, x), Scalar(arg<"nan">(a)),
                         where(eq(x, inf), Scalar(arg<"posinf">(a).value_or(big)),
                               where(eq(x, -inf), Scalar(arg<"neginf">(a).value_or(-big)), x)));
          }),
      declare_op<kOtherTensorArgs>(
          "fmax", "the larger, or the other operand where one is NaN",
          [](auto a) { return nan_ignoring(arg<"input">(a), arg<"other">(a), true); }),
      declare_op<kOtherTensorArgs>(
          "fmin", "the smaller, or the other operand where one is NaN",
          [](auto a) { return nan_ignoring(arg<"input">(a), arg<"other">(a), false); }),
      declare_op<kOtherTensorArgs>("logical_and", "both nonzero (NaN is true); bool",
                                   [](auto a) {
                                     return where(truth(arg<"input">(a)), truth(arg<"other">(a)),
                                                  Scalar(false));
                                   }),
      declare_op<kOtherTensorArgs>("logical_or", "either nonzero (NaN is true); bool",
                                   [](auto a) {
                                     return where(truth(arg<"input">(a)), Scalar(true),
                                                  truth(arg<"other">(a)));
                                   }),
      declare_op<kOtherTensorArgs>(
          "logical_xor", "exactly one nonzero (NaN is true); bool",
          [](auto a) { return ne(truth(arg<"input">(a)), truth(arg<"other">(a))); }),
      declare_op<kOtherTensorArgs>(
          "expand_as", "input broadcast to other's shape",
          [](auto a) { return arg<"input">(a).expand(arg<"other">(a).sizes()); }),
      declare_op<kOtherTensorArgs>(
          "reshape_as", "input in other's shape",
          [](auto a) { return arg<"input">(a).reshape(arg<"other">(a).sizes()); }),
      declare_op<kOtherTensorArgs>(
          "type_as", "input cast to other's dtype",
          [](auto a) { return arg<"input">(a).to(arg<"other">(a).dtype()); }),
      declare_op<kUnaryArgs>("relu6", "min(max(x, 0), 6) (F.relu6)",
                             [](auto a) { return clamp(arg<"input">(a), Scalar(0), Scalar(6)); }),
      declare_op<kHardtanhArgs>("hardtanh", "min(max(x, min_val), max_val) (F.hardtanh)",
                                [](auto a) {
                                  return clamp(arg<"input">(a), Scalar(arg<"min_val">(a)),
                                               Scalar(arg<"max_val">(a)));
                                }),
      declare_op<kLeakyReluArgs>(
          "leaky_relu", "x if x > 0 else negative_slope * x, rounded once (F.leaky_relu)",
          [](auto a) {
            const Tensor& x = arg<"input">(a);
            return where(gt(x, 0), x, mul(x, Scalar(arg<"negative_slope">(a))));
          }),
      declare_op<kThresholdArgs>(
          "threshold", "value where x <= threshold, else x (F.threshold; NaN stays NaN)",
          [](auto a) {
            const Tensor& x = arg<"input">(a);
            return where(le(x, arg<"threshold">(a)), Scalar(arg<"value">(a)), x);
          }),
      declare_op<kUnaryArgs>("isnan", "x != x",
                             [](auto a) { return ne(arg<"input">(a), arg<"input">(a)); }),
      declare_op<kUnaryArgs>("isinf", "x is +inf or -inf",
                             [](auto a) { return isinf_of(arg<"input">(a)); }),
      declare_op<kUnaryArgs>("isfinite", "neither inf nor NaN",
                             [](auto a) {
                               const Tensor& x = arg<"input">(a);
                               return where(isinf_of(x), Scalar(false), eq(x, x));
                             }),
      declare_op<kUnaryArgs>("logical_not", "x == 0 (NaN is true, so gives false)",
                             [](auto a) { return eq(arg<"input">(a), 0); }),
      declare_op<kUnaryArgs>("positive", "x itself", [](auto a) { return arg<"input">(a); }),
      declare_op<kLikeArgs>("zeros_like", "zeros of input's shape (dtype None: input's)",
                            [](auto a) {
                              const Tensor& x = arg<"input">(a);
                              return zeros(x.sizes(), arg<"dtype">(a).value_or(x.dtype()),
                                           x.device());
                            }),
      declare_op<kLikeArgs>("ones_like", "ones of input's shape (dtype None: input's)",
                            [](auto a) {
                              const Tensor& x = arg<"input">(a);
                              return ones(x.sizes(), arg<"dtype">(a).value_or(x.dtype()),
                                          x.device());
                            }),
      declare_op<kUnaryArgs>(
          "isposinf", "x is +inf (false for integers)",
          [](auto a) { return eq(arg<"input">(a), std::numeric_limits<double>::infinity()); }),
      declare_op<kUnaryArgs>(
          "isneginf", "x is -inf (false for integers)",
          [](auto a) { return eq(arg<"input">(a), -std::numeric_limits<double>::infinity()); }),
      declare_op<kUnaryArgs>("isreal", "the imaginary part is 0 (a real tensor: true everywhere)",
                             [](auto a) {
                               const Tensor& x = arg<"input">(a);
                               return is_complex(x.dtype())
                                          ? eq(imag(x), 0)
                                          : ones(x.sizes(), DType::Bool, x.device());
                             }),
      declare_op<kUnaryArgs>("ravel", "input flattened to one dim (a view when possible)",
                             [](auto a) { return arg<"input">(a).reshape({-1}); }),
      declare_op<kBroadcastToArgs>("broadcast_to", "input expanded to size (Tensor.expand)",
                                   [](auto a) { return arg<"input">(a).expand(arg<"size">(a)); }),
      declare_op<kUnaryArgs>("fliplr", "reversed along dim 1 (at least 2 dims)",
                             [](auto a) {
                               const Tensor& x = arg<"input">(a);
                               if (x.dim() < 2) {
                                 throw InvalidArgument("[fliplr] Input must be >= 2-d.");
                               }
                               return flip(x, {1});
                             }),
      declare_op<kUnaryArgs>("flipud", "reversed along dim 0 (at least 1 dim)",
                             [](auto a) {
                               const Tensor& x = arg<"input">(a);
                               if (x.dim() < 1) {
                                 throw InvalidArgument("[flipud] Input must be >= 1-d.");
                               }
                               return flip(x, {0});
                             }),
      declare_op<kUnaryArgs>("atleast_1d", "a 0-d input as [1], else itself",
                             [](auto a) { return at_least(arg<"input">(a), 1); }),
      declare_op<kUnaryArgs>("atleast_2d", "[1, 1] for 0-d, [1, n] for 1-d, else itself",
                             [](auto a) { return at_least(arg<"input">(a), 2); }),
      declare_op<kUnaryArgs>("atleast_3d",
                             "[1, 1, 1] for 0-d, [1, n, 1] for 1-d, [a, b, 1] for 2-d, else itself",
                             [](auto a) { return at_least(arg<"input">(a), 3); }),
      declare_op<kTileArgs>("tile", "repeat, the dims padded with leading 1s",
                            [](auto a) { return tile_of(arg<"input">(a), arg<"dims">(a)); }),
      declare_op<kRollArgs>(
          "roll", "elements shifted cyclically along dims (none: flattened)",
          [](auto a) { return roll_of(arg<"input">(a), arg<"shifts">(a), arg<"dims">(a)); }),
      declare_op<kRot90Args>(
          "rot90", "k quarter turns in the plane of dims",
          [](auto a) { return rot90_of(arg<"input">(a), arg<"k">(a), arg<"dims">(a)); }),
      declare_op<kDiffArgs>("diff", "n-th differences along dim (bool: !=), after prepend/append",
                            [](auto a) {
                              return diff_of(arg<"input">(a), arg<"n">(a), arg<"dim">(a),
                                             arg<"prepend">(a), arg<"append">(a));
                            }),
      declare_op<kUnflattenArgs>(
          "unflatten", "dim split into sizes (one may be -1)",
          [](auto a) {
            const Tensor& x = arg<"input">(a);
            const std::int64_t d = wrap_dim("unflatten", arg<"dim">(a), x.dim());
            std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().end());
            const IntList& sizes = arg<"sizes">(a);
            if (sizes.empty()) {
              throw InvalidArgument("[unflatten] sizes must be non-empty");
            }
            shape.erase(shape.begin() + d);
            shape.insert(shape.begin() + d, sizes.begin(), sizes.end());
            return x.reshape(shape);
          }),
      declare_op<kUnbindArgs>("unbind", "the slices along dim",
                              [](auto a) {
                                const Tensor& x = arg<"input">(a);
                                const std::int64_t d = wrap_dim("unbind", arg<"dim">(a), x.dim());
                                std::vector<Tensor> out;
                                for (std::int64_t i = 0; i < x.sizes()[static_cast<std::size_t>(d)];
                                     ++i) {
                                  out.push_back(x.select(d, i));
                                }
                                return out;
                              }),
      declare_op<kSplitSizesArgs>(
          "split_with_sizes", "pieces of the given sizes along dim",
          [](auto a) { return split(arg<"input">(a), arg<"split_sizes">(a), arg<"dim">(a)); }),
      declare_op<kTensorListArgs>("hstack", "cat along dim 1 (dim 0 for 1-d inputs)",
                                  [](auto a) { return stack_along("hstack", arg<"tensors">(a)); }),
      declare_op<kTensorListArgs>("vstack", "cat along dim 0 of inputs made at least 2-d",
                                  [](auto a) { return stack_along("vstack", arg<"tensors">(a)); }),
      declare_op<kTensorListArgs>("dstack", "cat along dim 2 of inputs made at least 3-d",
                                  [](auto a) { return stack_along("dstack", arg<"tensors">(a)); }),
      declare_op<kTensorListArgs>(
          "column_stack", "cat along dim 1, 0-d and 1-d inputs as columns",
          [](auto a) { return stack_along("column_stack", arg<"tensors">(a)); }),
      declare_op<kMeshgridArgs>(
          "meshgrid", "coordinate grids of 1-d tensors ('ij' or 'xy')",
          [](auto a) { return meshgrid_of(arg<"tensors">(a), arg<"indexing">(a)); }),
      declare_op<kTensorListArgs>("cartesian_prod", "the rows of every combination, one per tensor",
                                  [](auto a) {
                                    const std::vector<Tensor>& ts = arg<"tensors">(a);
                                    if (ts.size() == 1) return ts[0];
                                    std::vector<Tensor> cols;
                                    for (const Tensor& g : meshgrid_of(ts, "ij")) {
                                      cols.push_back(g.reshape({-1}));
                                    }
                                    return stack(cols, 1);
                                  }),
      declare_op<kCumArgs>(
          "cumsum", "running sums along dim (integers and bool in int64)",
          [](auto a) { return mpsim::cumsum(arg<"input">(a), arg<"dim">(a), arg<"dtype">(a)); }),
      declare_op<kCumArgs>(
          "cumprod", "running products along dim (integers and bool in int64)",
          [](auto a) { return mpsim::cumprod(arg<"input">(a), arg<"dim">(a), arg<"dtype">(a)); }),
      declare_op<kScanDimArgs>(
          "logcumsumexp", "running log(sum(e^x)) along dim",
          [](auto a) { return mpsim::logcumsumexp(arg<"input">(a), arg<"dim">(a)); }),
      declare_op<kScanDimArgs>(
          "cummax", "(running maxima, their indices) along dim",
          [](auto a) { return mpsim::cummax(arg<"input">(a), arg<"dim">(a)); }),
      declare_op<kScanDimArgs>(
          "cummin", "(running minima, their indices) along dim",
          [](auto a) { return mpsim::cummin(arg<"input">(a), arg<"dim">(a)); }),
      declare_op<kSortArgs>(
          "sort",
          "(values, indices) in order along dim: NaN last ascending, first "
          "descending; ties keep their order (stable either way)",
          [](auto a) { return mpsim::sort(arg<"input">(a), arg<"dim">(a), arg<"descending">(a)); }),
      declare_op<kSortArgs>(
          "argsort", "the indices of sort",
          [](auto a) {
            return mpsim::sort(arg<"input">(a), arg<"dim">(a), arg<"descending">(a)).second;
          }),
      declare_op<kUnaryArgs>("msort", "the values of sort along dim 0",
                             [](auto a) { return mpsim::sort(arg<"input">(a), 0).first; }),
      declare_op<kTopkArgs>(
          "topk", "(values, indices) of the k largest (smallest) along dim, in order",
          [](auto a) {
            const Tensor& x = arg<"input">(a);
            const std::int64_t d = x.dim() == 0 ? 0 : wrap_dim("topk", arg<"dim">(a), x.dim());
            const std::int64_t k = arg<"k">(a);
            checked_k("topk", x, k, d, false);
            auto [v, i] = mpsim::sort(x, arg<"dim">(a), arg<"largest">(a));
            if (x.dim() == 0) return std::pair{v, i};
            return std::pair{v.narrow(d, 0, k), i.narrow(d, 0, k)};
          }),
      declare_op<kKthvalueArgs>("kthvalue", "(value, index) of the k-th smallest along dim",
                                [](auto a) {
                                  const Tensor& x = arg<"input">(a);
                                  const std::int64_t d =
                                      x.dim() == 0 ? 0
                                                   : wrap_dim("kthvalue", arg<"dim">(a), x.dim());
                                  const std::int64_t k = arg<"k">(a);
                                  checked_k("kthvalue", x, k, d, true);
                                  auto [v, i] = mpsim::sort(x, arg<"dim">(a), false);
                                  if (x.dim() == 0) return std::pair{v, i};
                                  Tensor value = v.select(d, k - 1), index = i.select(d, k - 1);
                                  if (arg<"keepdim">(a)) {
                                    value = value.unsqueeze(d);
                                    index = index.unsqueeze(d);
                                  }
                                  return std::pair{value, index};
                                }),
      declare_op<kMovedimArgs>("movedim", "the source dims moved to destination, others in order",
                               [](auto a) {
                                 return movedim_of(arg<"input">(a), arg<"source">(a),
                                                   arg<"destination">(a));
                               }),
      declare_op<kFullLikeArgs>("full_like", "fill_value in input's shape (dtype None: input's)",
                                [](auto a) {
                                  const Tensor& x = arg<"input">(a);
                                  return full(x.sizes(), arg<"fill_value">(a),
                                              arg<"dtype">(a).value_or(x.dtype()), x.device());
                                }),
  };
}

// ---- Scattering and masks (core/scatter_ops.h). ----
constexpr ArgDecl kIndex{"index", K::Tensor};
constexpr ArgDecl kSource{"source", K::Tensor};
constexpr ArgDecl kScatterDim{"dim", K::Int};
constexpr ArgDecl kIncludeSelf{"include_self", K::Bool, "True"};
constexpr ArgDecl kScatterArgs[] = {
    kInput, kScatterDim, kIndex, {"src", K::TensorOrScalar}, {"reduce", K::OptionalString, "None"}};
constexpr ArgDecl kScatterAddArgs[] = {kInput, kScatterDim, kIndex, {"src", K::Tensor}};
constexpr ArgDecl kScatterReduceArgs[] = {
    kInput, kScatterDim, kIndex, {"src", K::Tensor}, {"reduce", K::String}, kIncludeSelf};
constexpr ArgDecl kIndexAddArgs[] = {kInput, kScatterDim, kIndex, kSource, kAlpha};
constexpr ArgDecl kIndexCopyArgs[] = {kInput, kScatterDim, kIndex, kSource};
constexpr ArgDecl kIndexFillArgs[] = {kInput, kScatterDim, kIndex, {"value", K::TensorOrScalar}};
constexpr ArgDecl kIndexReduceArgs[] = {kInput,  kScatterDim,           kIndex,
                                        kSource, {"reduce", K::String}, kIncludeSelf};
constexpr ArgDecl kIndexPutArgs[] = {
    kInput, {"indices", K::TensorList}, {"values", K::Tensor}, {"accumulate", K::Bool, "False"}};
constexpr ArgDecl kPutArgs[] = {kInput, kIndex, kSource, {"accumulate", K::Bool, "False"}};
constexpr ArgDecl kMaskArgs[] = {kInput, {"mask", K::Tensor}};
constexpr ArgDecl kMaskedScatterArgs[] = {kInput, {"mask", K::Tensor}, kSource};

// index_fill's value: a number, or a 0-d tensor read as one.
Scalar fill_value(const ArgValue& v) {
  const Tensor* t = std::get_if<Tensor>(&v);
  if (t == nullptr) return std::get<Scalar>(v);
  if (t->dim() != 0) {
    throw ShapeError("[index_fill] only supports a 0-dimensional value tensor, got one of shape " +
                     t->sizes().to_string());
  }
  if (is_floating(t->dtype())) return Scalar(t->item<double>());
  if (t->dtype() == DType::Bool) return Scalar(t->item<bool>());
  return Scalar(t->item<std::int64_t>());
}

std::vector<OpSignature> scatter_ops() {
  return {
      declare_op<kScatterArgs>(
          "scatter",
          "input with src (a tensor, or a number) written at index along dim; reduce 'add' or "
          "'multiply' combines; a repeated index: the last source in order",
          [](auto a) {
            return with_operand(arg<"src">(a), [&](const auto& src) {
              return mpsim::scatter(arg<"input">(a), arg<"dim">(a), arg<"index">(a), src,
                                    arg<"reduce">(a));
            });
          }),
      declare_op<kScatterAddArgs>(
          "scatter_add", "input with src added at index along dim (in double, rounded once)",
          [](auto a) {
            return scatter_add(arg<"input">(a), arg<"dim">(a), arg<"index">(a), arg<"src">(a));
          }),
      declare_op<kScatterReduceArgs>(
          "scatter_reduce",
          "input with src reduced at index along dim: 'sum', 'prod', 'mean', 'amax', 'amin'",
          [](auto a) {
            return scatter_reduce(arg<"input">(a), arg<"dim">(a), arg<"index">(a), arg<"src">(a),
                                  arg<"reduce">(a), arg<"include_self">(a));
          }),
      declare_op<kIndexAddArgs>("index_add",
                                "input with alpha * source's slices added at index along dim",
                                [](auto a) {
                                  return index_add(arg<"input">(a), arg<"dim">(a), arg<"index">(a),
                                                   arg<"source">(a), arg<"alpha">(a));
                                }),
      declare_op<kIndexCopyArgs>(
          "index_copy", "input with source's slices written at index along dim (last wins)",
          [](auto a) {
            return index_copy(arg<"input">(a), arg<"dim">(a), arg<"index">(a), arg<"source">(a));
          }),
      declare_op<kIndexFillArgs>("index_fill",
                                 "input with the slices at index along dim set to value",
                                 [](auto a) {
                                   return index_fill(arg<"input">(a), arg<"dim">(a),
                                                     arg<"index">(a), fill_value(arg<"value">(a)));
                                 }),
      declare_op<kIndexReduceArgs>(
          "index_reduce",
          "input with source's slices reduced at index along dim: 'prod', 'mean', 'amax', 'amin'",
          [](auto a) {
            return index_reduce(arg<"input">(a), arg<"dim">(a), arg<"index">(a), arg<"source">(a),
                                arg<"reduce">(a), arg<"include_self">(a));
          }),
      declare_op<kIndexPutArgs>(
          "index_put", "input[indices] = values (+= with accumulate); a repeated index: last",
          [](auto a) {
            return index_put(arg<"input">(a), arg<"indices">(a), arg<"values">(a),
                             arg<"accumulate">(a));
          }),
      declare_op<kPutArgs>(
          "put", "input read flat with source written (added) at index; a repeated index: last",
          [](auto a) {
            return put(arg<"input">(a), arg<"index">(a), arg<"source">(a), arg<"accumulate">(a));
          }),
      declare_op<kMaskedScatterArgs>(
          "masked_scatter", "input with its elements where mask is true replaced by source's",
          [](auto a) { return masked_scatter(arg<"input">(a), arg<"mask">(a), arg<"source">(a)); }),
      declare_op<kMaskArgs>("masked_select", "the elements where mask is true, 1-d",
                            [](auto a) { return masked_select(arg<"input">(a), arg<"mask">(a)); }),
      declare_op<kUnaryArgs>("nonzero", "[count, ndim] coordinates of the nonzero elements",
                             [](auto a) { return mpsim::nonzero(arg<"input">(a)); }),
      declare_op<kUnaryArgs>("argwhere", "[count, ndim] coordinates of the nonzero elements",
                             [](auto a) { return mpsim::nonzero(arg<"input">(a)); }),
  };
}

// ---- Views, their scatters and shape ops made of them (core/view_ops.h). ----
constexpr ArgDecl kSrc{"src", K::Tensor};
constexpr ArgDecl kDiagonalViewArgs[] = {
    kInput, {"offset", K::Int, "0"}, {"dim1", K::Int, "0"}, {"dim2", K::Int, "1"}};
constexpr ArgDecl kDiagArgs[] = {kInput, {"diagonal", K::Int, "0"}};
constexpr ArgDecl kDiagEmbedArgs[] = {
    kInput, {"offset", K::Int, "0"}, {"dim1", K::Int, "-2"}, {"dim2", K::Int, "-1"}};
constexpr ArgDecl kDiagflatArgs[] = {kInput, {"offset", K::Int, "0"}};
constexpr ArgDecl kSelectScatterArgs[] = {kInput, kSrc, {"dim", K::Int}, {"index", K::Int}};
constexpr ArgDecl kSliceScatterArgs[] = {kInput,
                                         kSrc,
                                         {"dim", K::Int, "0"},
                                         {"start", K::OptionalInt, "None"},
                                         {"end", K::OptionalInt, "None"},
                                         {"step", K::Int, "1"}};
constexpr ArgDecl kDiagonalScatterArgs[] = {
    kInput, kSrc, {"offset", K::Int, "0"}, {"dim1", K::Int, "0"}, {"dim2", K::Int, "1"}};
constexpr ArgDecl kAsStridedArgs[] = {kInput,
                                      {"size", K::IntList},
                                      {"stride", K::IntList},
                                      {"storage_offset", K::OptionalInt, "None"}};
constexpr ArgDecl kAsStridedScatterArgs[] = {kInput,
                                             kSrc,
                                             {"size", K::IntList},
                                             {"stride", K::IntList},
                                             {"storage_offset", K::OptionalInt, "None"}};
constexpr ArgDecl kTensorSplitArgs[] = {kInput, {"indices_or_sections", K::IntOrIntList}, kDim0};
constexpr ArgDecl kSplitAlongArgs[] = {kInput, {"indices_or_sections", K::IntOrIntList}};
constexpr ArgDecl kBlockDiagArgs[] = {{"tensors", K::TensorList}};
constexpr ArgDecl kKronArgs[] = {kInput, {"other", K::Tensor}};
constexpr ArgDecl kRepeatInterleaveArgs[] = {kInput,
                                             {"repeats", K::TensorOrScalar},
                                             {"dim", K::OptionalInt, "None"},
                                             {"output_size", K::OptionalInt, "None"}};
constexpr ArgDecl kCombinationsArgs[] = {
    kInput, {"r", K::Int, "2"}, {"with_replacement", K::Bool, "False"}};

// tensor_split and its dims' forms: an int is a number of sections, a list the split indices.
template <class F>
std::vector<Tensor> split_by(const ArgValue& v, F&& f) {
  if (const auto* list = std::get_if<IntList>(&v)) return f(*list);
  return f(std::get<std::int64_t>(v));
}

template <const char* Name>
OpSignature split_along_op(std::string_view doc) {
  return declare_op<kSplitAlongArgs>(Name, doc, [](auto a) {
    return split_by(arg<"indices_or_sections">(a),
                    [&](const auto& s) { return split_along(Name, arg<"input">(a), s); });
  });
}
constexpr char kHsplit[] = "hsplit";
constexpr char kVsplit[] = "vsplit";
constexpr char kDsplit[] = "dsplit";

std::vector<OpSignature> view_ops() {
  return {
      declare_op<kDiagonalViewArgs>(
          "diagonal", "a view of the offset diagonal of dims dim1, dim2, as a last dim",
          [](auto a) {
            return mpsim::diagonal(arg<"input">(a), arg<"offset">(a), arg<"dim1">(a),
                                   arg<"dim2">(a));
          }),
      declare_op<kDiagArgs>(
          "diag", "1-d: the square matrix with input on a diagonal; 2-d: that diagonal",
          [](auto a) { return mpsim::diag(arg<"input">(a), arg<"diagonal">(a)); }),
      declare_op<kDiagEmbedArgs>(
          "diag_embed", "zeros with the last dim of input on the offset diagonal of dim1, dim2",
          [](auto a) {
            return diag_embed(arg<"input">(a), arg<"offset">(a), arg<"dim1">(a), arg<"dim2">(a));
          }),
      declare_op<kDiagflatArgs>(
          "diagflat", "the square matrix with the flattened input on the offset diagonal",
          [](auto a) { return mpsim::diag(arg<"input">(a).reshape({-1}), arg<"offset">(a)); }),
      declare_op<kUnaryArgs>("trace", "the sum of a matrix's diagonal (sum's rounding)",
                             [](auto a) { return mpsim::trace(arg<"input">(a)); }),
      declare_op<kSelectScatterArgs>(
          "select_scatter", "a copy of input with src written at index along dim",
          [](auto a) {
            return select_scatter(arg<"input">(a), arg<"src">(a), arg<"dim">(a), arg<"index">(a));
          }),
      declare_op<kSliceScatterArgs>(
          "slice_scatter", "a copy of input with src written at start:end:step along dim",
          [](auto a) {
            return slice_scatter(arg<"input">(a), arg<"src">(a), arg<"dim">(a), arg<"start">(a),
                                 arg<"end">(a), arg<"step">(a));
          }),
      declare_op<kDiagonalScatterArgs>(
          "diagonal_scatter", "a copy of input with src written on a diagonal",
          [](auto a) {
            return diagonal_scatter(arg<"input">(a), arg<"src">(a), arg<"offset">(a),
                                    arg<"dim1">(a), arg<"dim2">(a));
          }),
      declare_op<kAsStridedArgs>(
          "as_strided", "a view of input's storage with the given sizes, strides and offset",
          [](auto a) {
            return as_strided_view(arg<"input">(a), arg<"size">(a), arg<"stride">(a),
                                   arg<"storage_offset">(a));
          }),
      declare_op<kAsStridedScatterArgs>(
          "as_strided_scatter", "a row-major copy of input with src written into its strided view",
          [](auto a) {
            return as_strided_scatter(arg<"input">(a), arg<"src">(a), arg<"size">(a),
                                      arg<"stride">(a), arg<"storage_offset">(a));
          }),
      declare_op<kTensorSplitArgs>(
          "tensor_split", "views along dim: n sections (an int) or cut at the given indices",
          [](auto a) {
            return split_by(arg<"indices_or_sections">(a), [&](const auto& s) {
              return mpsim::tensor_split(arg<"input">(a), s, arg<"dim">(a));
            });
          }),
      split_along_op<kHsplit>("tensor_split along dim 1 (0 for 1-d); sections must divide"),
      split_along_op<kVsplit>("tensor_split along dim 0 (2-d and up); sections must divide"),
      split_along_op<kDsplit>("tensor_split along dim 2 (3-d and up); sections must divide"),
      declare_op<kBlockDiagArgs>("block_diag", "the inputs on the diagonal of a zero matrix",
                                 [](auto a) { return block_diag(arg<"tensors">(a)); }),
      declare_op<kKronArgs>("kron", "the Kronecker product (one product per element)",
                            [](auto a) { return mpsim::kron(arg<"input">(a), arg<"other">(a)); }),
      declare_op<kRepeatInterleaveArgs>(
          "repeat_interleave", "each element repeated (dim None: of the flattened input)",
          [](auto a) {
            return with_operand(arg<"repeats">(a), [&](const auto& r) {
              if constexpr (std::is_same_v<std::decay_t<decltype(r)>, Scalar>) {
                return repeat_interleave(arg<"input">(a), r.to_int(), arg<"dim">(a));
              } else {
                return repeat_interleave(arg<"input">(a), r, arg<"dim">(a));
              }
            });
          }),
      declare_op<kCombinationsArgs>(
          "combinations", "[count, r]: the r-combinations of a 1-d input (itertools order)",
          [](auto a) {
            return combinations(arg<"input">(a), arg<"r">(a), arg<"with_replacement">(a));
          }),
  };
}

// ---- Searching, unique values, histograms (core/search_ops.h). ----
constexpr ArgDecl kSearchsortedArgs[] = {
    {"sorted_sequence", K::Tensor},      {"input", K::TensorOrScalar},
    {"out_int32", K::Bool, "False"},     {"right", K::Bool, "False"},
    {"side", K::OptionalString, "None"}, {"sorter", K::OptionalTensor, "None"}};
constexpr ArgDecl kBucketizeArgs[] = {kInput,
                                      {"boundaries", K::Tensor},
                                      {"out_int32", K::Bool, "False"},
                                      {"right", K::Bool, "False"}};
constexpr ArgDecl kHistcArgs[] = {
    kInput, {"bins", K::Int, "100"}, {"min", K::Double, "0"}, {"max", K::Double, "0"}};
constexpr ArgDecl kIsinArgs[] = {{"elements", K::TensorOrScalar},
                                 {"test_elements", K::TensorOrScalar},
                                 {"assume_unique", K::Bool, "False"},
                                 {"invert", K::Bool, "False"}};
constexpr ArgDecl kUniqueArgs[] = {kInput, {"dim", K::OptionalInt, "None"}};

// A number given for a tensor: a 0-d tensor of its default dtype.
Tensor as_tensor(const ArgValue& v, Device device) {
  if (const Tensor* t = std::get_if<Tensor>(&v)) return *t;
  const Scalar s = std::get<Scalar>(v);
  return scalar_tensor(s, s.promotion_dtype(), device);
}

std::vector<OpSignature> search_ops() {
  return {
      declare_op<kSearchsortedArgs>(
          "searchsorted",
          "per value, the count of its row's boundaries below it (right: not above); NaN last",
          [](auto a) {
            const Tensor& seq = arg<"sorted_sequence">(a);
            return searchsorted(seq, as_tensor(arg<"input">(a), seq.device()), arg<"out_int32">(a),
                                arg<"right">(a), arg<"side">(a), arg<"sorter">(a));
          }),
      declare_op<kBucketizeArgs>(
          "bucketize", "searchsorted of input in 1-d boundaries",
          [](auto a) {
            const Tensor& b = arg<"boundaries">(a);
            if (b.dim() != 1) {
              throw ShapeError("[bucketize] boundaries tensor must be 1 dimension, got " +
                               b.sizes().to_string());
            }
            return searchsorted(b, arg<"input">(a), arg<"out_int32">(a), arg<"right">(a));
          }),
      declare_op<kHistcArgs>(
          "histc", "counts of bins equal bins of [min, max] (min == max: input's range)",
          [](auto a) {
            return histc(arg<"input">(a), arg<"bins">(a), arg<"min">(a), arg<"max">(a));
          }),
      declare_op<kIsinArgs>("isin", "whether each element is among test_elements (invert: is not)",
                            [](auto a) {
                              const ArgValue& e = arg<"elements">(a);
                              const ArgValue& t = arg<"test_elements">(a);
                              const Tensor* et = std::get_if<Tensor>(&e);
                              const Tensor* tt = std::get_if<Tensor>(&t);
                              const Device dev = et   ? et->device()
                                                 : tt ? tt->device()
                                                      : Device::cpu();
                              return isin(as_tensor(e, dev), as_tensor(t, dev), arg<"invert">(a));
                            }),
      declare_op<kUniqueArgs>(
          "unique",
          "(values, inverse, counts): the distinct values (slices along dim) in ascending order",
          [](auto a) { return mpsim::unique(arg<"input">(a), arg<"dim">(a)); }),
      declare_op<kUniqueArgs>(
          "unique_consecutive", "(values, inverse, counts) of the runs of equal neighbours",
          [](auto a) { return unique_consecutive(arg<"input">(a), arg<"dim">(a)); }),
  };
}

}  // namespace

std::vector<OpSignature> detail::signature_rows() {
  std::vector<OpSignature> rows;
  for (auto family : {unary_ops, binary_ops, reduce_ops, norm_ops, linalg_ops, spatial_ops,
                      attention_ops, fused_ops, creation_ops, movement_ops, composed_ops, math_ops,
                      scatter_ops, view_ops, search_ops, detail::lapack_signatures,
                      detail::complex_signatures}) {
    for (OpSignature& sig : family()) rows.push_back(std::move(sig));
  }
  return rows;
}

}  // namespace mpsim
