// The op registry: a callable signature for every public op of core/ops.h (and the factories and
// view functions users call by name), with PyTorch's names, argument names, order and defaults.
// The CLI (`mpsim run`), the Python module and its generated stub (python/mpsim/__init__.pyi) bind
// calls through it, so an op becomes callable from all of them by its one declaration in
// core/op_signatures.cc (core/op_declaration.h says how to write one).
//
//   const OpSignature& sig = find_signature("add");
//   std::vector<ArgValue> args = bind_arguments(sig, {x, y}, {{"alpha", std::int64_t{2}}});
//   std::vector<Tensor> out = sig.call(args);  // add(x, y, /*alpha=*/2)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace mpsim {

// What an argument accepts. Optional* kinds also accept None (std::monostate).
enum class ArgKind : std::uint8_t {
  Tensor,
  OptionalTensor,
  TensorList,
  TensorOrScalar,          // `other` of add, `exponent` of pow, ...: a tensor or a number
  OptionalTensorOrScalar,  // clamp's min / max
  Int,
  OptionalInt,
  IntList,          // a single int is accepted as a one-element list (dims=1 as dims=[1])
  OptionalIntList,  // dims of reductions: None reduces every dim
  IntOrIntList,     // split's split_size_or_sections: an int and a list mean different things
  Double,
  OptionalDouble,
  Bool,
  OptionalBool,  // interpolate's align_corners
  String,
  OptionalString,
  Scalar,
  OptionalScalar,
  DType,
  OptionalDType,
  Device,
  OptionalFloatList,  // interpolate's scale_factor: a float is a one-element list
  IntListOrString,    // conv2d's padding: sizes, or "same" / "valid"
};

std::string_view arg_kind_name(ArgKind kind);  // "Tensor?", "int[]", "float", ... (ATen's)
bool is_optional(ArgKind kind);
// The kinds a tensor may be passed to (the CLI fills these from --in files, in order).
bool accepts_tensor(ArgKind kind);

// A bound argument. After bind_arguments every value has its kind's canonical alternative:
// Tensor (Tensor kinds), std::vector<Tensor>, std::int64_t (Int), IntList, double, bool,
// std::string, Scalar (Scalar kinds, and numbers given to TensorOrScalar), DType, Device,
// std::vector<double> (OptionalFloatList), or std::monostate for None.
using ArgValue =
    std::variant<std::monostate, Tensor, std::vector<Tensor>, std::int64_t, IntList, double, bool,
                 std::string, Scalar, DType, Device, std::vector<double>>;

struct ArgSpec {
  std::string_view name;  // torch's keyword name
  ArgKind kind;
  std::optional<ArgValue> default_value;  // std::nullopt: required
};

using OpFn = std::vector<Tensor> (*)(std::span<const ArgValue> args);

struct OpSignature {
  std::string_view name;  // torch's name (torch.*, torch.nn.functional.* or a Tensor method)
  std::vector<ArgSpec> args;
  OpFn call;  // takes the output of bind_arguments; results in order (one for most ops)
  std::string_view doc;
  // What call returns, in ATen's spelling: "Tensor", "(Tensor, Tensor)", or "Tensor[]" (a number
  // known only from the arguments: split's pieces, max_pool2d's optional indices).
  std::string_view returns = "Tensor";
};

// A call that does not match a signature: an unknown op or argument, a missing or repeated
// argument, a value of the wrong kind, text that does not parse. Python raises TypeError for it,
// as torch does for a bad call.
class SignatureError : public InvalidArgument {
  using InvalidArgument::InvalidArgument;
};

// Every signature, sorted by name.
const std::vector<OpSignature>& op_signatures();
// Throws SignatureError naming the op and listing close names.
const OpSignature& find_signature(std::string_view name);
// nullptr when there is none.
const OpSignature* find_signature_or_null(std::string_view name);

// Binds positional values, then named ones, to `sig`'s arguments; applies defaults; converts each
// value to its kind's canonical alternative (int -> float for float kinds, a number -> Scalar, a
// string -> DType or Device, an int -> [int] for lists). Throws SignatureError naming the op and
// the argument otherwise.
std::vector<ArgValue> bind_arguments(const OpSignature& sig, std::vector<ArgValue> positional,
                                     std::vector<std::pair<std::string, ArgValue>> named = {});

// Parses an attribute's text by its kind: ints ("-1"), lists ("{1,1}", "[1, 1]", "(1,1)", "1,1",
// "{}"), floats ("1e-5", "inf", "-inf", "nan"), bools (true/false/1/0), strings (quotes
// optional), scalars (an int, a float or a bool), dtypes ("float16", "torch.half"), devices
// ("mps:0"), and "None" for optional kinds. Throws SignatureError naming `op` and the argument.
ArgValue parse_arg(const ArgSpec& spec, std::string_view text, std::string_view op = "parse_arg");

// sig.call(args), with an error raised inside the op that does not start with the op's name
// ("[gt] shapes ..." from inside fmax) rethrown as the same kind of error prefixed by it
// ("[fmax] [gt] shapes ..."): a composed op's errors name the op the user called. The Python
// module and the CLI call ops through this.
std::vector<Tensor> call_op(const OpSignature& sig, std::span<const ArgValue> args);

// "add(input: Tensor, other: Tensor|Scalar, alpha: Scalar = 1)".
std::string signature_string(const OpSignature& sig);
// The value as it would be written in Python: 1, 1e-05, None, [1, 2], 'tanh', torch.float16.
std::string arg_value_string(const ArgValue& value);

namespace detail {
// The declarations of core/op_signatures.cc, unsorted, their defaults not yet canonical.
std::vector<OpSignature> signature_rows();
// The linear algebra ops' declarations (core/lapack_signatures.cc), part of signature_rows.
std::vector<OpSignature> lapack_signatures();
// The complex tensors' ops and the Fourier transforms (core/complex_signatures.cc).
std::vector<OpSignature> complex_signatures();
}  // namespace detail

// Ops of the op list (core/op_list.h) that users reach through other names: copy (clone,
// contiguous, to), fill (zeros, ones, full), random (rand, randn, ...). Every other op of the op
// list has a signature of its own name.
inline constexpr std::pair<std::string_view, std::string_view> kOpsCoveredByOtherNames[] = {
    {"copy", "clone"},
    {"fill", "full"},
    {"random", "rand"},
};

}  // namespace mpsim
