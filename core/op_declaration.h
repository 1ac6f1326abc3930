// How an op is declared for the registry (core/op_registry.h): its torch name, its arguments
// (name, kind, default as Python writes it) and a body that reads them by name.
//
//   constexpr ArgDecl kSoftplusArgs[] = {
//       {"input", ArgKind::Tensor}, {"beta", ArgKind::Scalar, "1"},
//       {"threshold", ArgKind::Scalar, "20"}};
//   declare_op<kSoftplusArgs>("softplus", "log(1 + e^(beta x)) / beta", [](auto a) {
//     return softplus(arg<"input">(a), arg<"beta">(a), arg<"threshold">(a));
//   });
//
// Note [op declarations]
// An argument is read by its name, checked when the body compiles: a name the declaration lacks
// fails to compile, and the value has its kind's C++ type (read_arg below), so a body that
// reads a Scalar as an int does not compile either. Defaults are text, parsed once by parse_arg
// when the signature is built (a default that does not parse fails at registration, before any
// call), and are the only defaults: the op's C++ function and its kernel's parameter struct
// take every value from here. The same text gives the Python signature, the generated .pyi stub
// and the CLI's --attr parsing.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/op_registry.h"

namespace mpsim {

struct ArgDecl {
  std::string_view name;  // torch's keyword name
  ArgKind kind;
  // The default as Python writes it ("1e-05", "None", "'none'"); null: required.
  const char* default_text = nullptr;
};

// A string literal as a template argument: arg<"beta">(a).
template <std::size_t N>
struct ArgName {
  char text[N]{};
  consteval ArgName(const char (&s)[N]) {  // NOLINT(google-explicit-constructor): a literal
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  constexpr std::string_view view() const { return {text, N - 1}; }
};

// The bound arguments of a call of the op declared by Args (in declaration order).
template <const auto& Args>
struct BoundArgs {
  std::span<const ArgValue> values;
};

namespace detail {

template <ArgName N, std::size_t M>
consteval std::size_t arg_index(const ArgDecl (&args)[M]) {
  for (std::size_t i = 0; i < M; ++i) {
    if (args[i].name == N.view()) return i;
  }
  throw "the op's declaration has no argument of this name";  // a compile error
}

template <std::size_t M>
consteval bool names_unique(const ArgDecl (&args)[M]) {
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = i + 1; j < M; ++j) {
      if (args[i].name == args[j].name) return false;
    }
  }
  return true;
}

template <class T>
std::optional<T> optional_of(const ArgValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
  return std::get<T>(v);
}

std::vector<Tensor> op_outputs(Tensor t);
std::vector<Tensor> op_outputs(std::vector<Tensor> ts);
std::vector<Tensor> op_outputs(std::pair<Tensor, Tensor> p);

}  // namespace detail

// A bound value as the C++ type of its kind. The kinds that take one of two forms
// (Tensor|Scalar, int|int[], int[]|str) give the ArgValue itself, to be inspected.
template <ArgKind kKind>
decltype(auto) read_arg(const ArgValue& v) {
  using K = ArgKind;
  if constexpr (kKind == K::Tensor) {
    return std::get<Tensor>(v);
  } else if constexpr (kKind == K::OptionalTensor) {
    return detail::optional_of<Tensor>(v);
  } else if constexpr (kKind == K::TensorList) {
    return std::get<std::vector<Tensor>>(v);
  } else if constexpr (kKind == K::Int) {
    return std::get<std::int64_t>(v);
  } else if constexpr (kKind == K::OptionalInt) {
    return detail::optional_of<std::int64_t>(v);
  } else if constexpr (kKind == K::IntList) {
    return std::get<IntList>(v);
  } else if constexpr (kKind == K::OptionalIntList) {
    return detail::optional_of<IntList>(v);
  } else if constexpr (kKind == K::Double) {
    return std::get<double>(v);
  } else if constexpr (kKind == K::OptionalDouble) {
    return detail::optional_of<double>(v);
  } else if constexpr (kKind == K::Bool) {
    return std::get<bool>(v);
  } else if constexpr (kKind == K::OptionalBool) {
    return detail::optional_of<bool>(v);
  } else if constexpr (kKind == K::String) {
    return std::string_view(std::get<std::string>(v));
  } else if constexpr (kKind == K::OptionalString) {
    return std::holds_alternative<std::monostate>(v)
               ? std::nullopt
               : std::optional<std::string_view>(std::get<std::string>(v));
  } else if constexpr (kKind == K::Scalar) {
    return std::get<Scalar>(v);
  } else if constexpr (kKind == K::OptionalScalar) {
    return detail::optional_of<Scalar>(v);
  } else if constexpr (kKind == K::DType) {
    return std::get<DType>(v);
  } else if constexpr (kKind == K::OptionalDType) {
    return detail::optional_of<DType>(v);
  } else if constexpr (kKind == K::Device) {
    return std::get<Device>(v);
  } else if constexpr (kKind == K::OptionalFloatList) {
    return detail::optional_of<std::vector<double>>(v);
  } else {
    return (v);  // TensorOrScalar, OptionalTensorOrScalar, IntOrIntList, IntListOrString
  }
}

// The argument named N of a bound call (Note [op declarations]).
template <ArgName N, const auto& Args>
decltype(auto) arg(BoundArgs<Args> a) {
  constexpr std::size_t i = detail::arg_index<N>(Args);
  return read_arg<Args[i].kind>(a.values[i]);
}
// Whether the argument named N is None.
template <ArgName N, const auto& Args>
bool is_none(BoundArgs<Args> a) {
  return std::holds_alternative<std::monostate>(a.values[detail::arg_index<N>(Args)]);
}

// The argument specs of a declaration, defaults parsed (throws SignatureError naming `op` for
// a default that does not parse).
std::vector<ArgSpec> arg_specs(std::string_view op, std::span<const ArgDecl> args);

// The signature of an op: `body` is a captureless lambda (BoundArgs<Args>) -> Tensor,
// std::vector<Tensor> or std::pair<Tensor, Tensor>; write it as [](auto a) { ... }.
template <const auto& Args, class F>
OpSignature declare_op(std::string_view name, std::string_view doc, F /*body*/) {
  static_assert(detail::names_unique(Args), "an argument name is declared twice");
  static_assert(std::is_empty_v<F>, "the body must be a captureless lambda");
  using Result = std::invoke_result_t<F, BoundArgs<Args>>;
  constexpr std::string_view returns = std::is_same_v<Result, Tensor> ? "Tensor"
                                       : std::is_same_v<Result, std::pair<Tensor, Tensor>>
                                           ? "(Tensor, Tensor)"
                                           : "Tensor[]";
  return {name, arg_specs(name, Args),
          [](std::span<const ArgValue> v) { return detail::op_outputs(F{}(BoundArgs<Args>{v})); },
          doc, returns};
}

}  // namespace mpsim
