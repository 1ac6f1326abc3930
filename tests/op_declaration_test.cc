// A toy op added as docs/adding-an-op.md says a composition is added (step 4: one declaration),
// then called by name as the Python module and `mpsim run` call every op: bind_arguments, the
// signature's call, parse_arg for --attr text. Values against a scalar oracle written here.
#include "core/op_declaration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/mpsim.h"

namespace mpsim {
namespace {

// scaled_relu(input, scale=2.0, bias=None): max(input, 0) * scale, a composition of
// relu and mul; `bias` (optional) is added after.
constexpr ArgDecl kScaledReluArgs[] = {{"input", ArgKind::Tensor},
                                       {"scale", ArgKind::Double, "2.0"},
                                       {"bias", ArgKind::OptionalTensor, "None"}};

OpSignature scaled_relu_signature() {
  return declare_op<kScaledReluArgs>("scaled_relu", "max(input, 0) * scale (+ bias)", [](auto a) {
    Tensor y = mul(relu(arg<"input">(a)), arg<"scale">(a));
    if (const std::optional<Tensor> bias = arg<"bias">(a)) y = add(y, *bias);
    return y;
  });
}

std::vector<float> oracle(const std::vector<float>& x, double scale, float bias) {
  std::vector<float> out;
  for (float v : x) {
    out.push_back(static_cast<float>(static_cast<float>(std::max(v, 0.0f) * scale) + bias));
  }
  return out;
}

TEST(OpDeclaration, AToyOpBindsByNameWithItsDeclaredDefaults) {
  const OpSignature sig = scaled_relu_signature();
  EXPECT_EQ(signature_string(sig),
            "scaled_relu(input: Tensor, scale: float = 2.0, bias: Tensor? = None)");
  EXPECT_EQ(sig.returns, "Tensor");
  const std::vector<float> v = {-1.5f, 0.0f, 0.25f, 3.0f};
  const Tensor x = from_vector(v, {4});
  // The default scale.
  EXPECT_EQ(sig.call(bind_arguments(sig, {x}))[0].to_vector<float>(), oracle(v, 2.0, 0.0f));
  // By name, in any order, an int where a float is declared.
  const Tensor b = full({4}, 0.5, DType::Float32);
  EXPECT_EQ(
      sig.call(bind_arguments(sig, {}, {{"bias", b}, {"scale", std::int64_t{3}}, {"input", x}}))[0]
          .to_vector<float>(),
      oracle(v, 3.0, 0.5f));
}

TEST(OpDeclaration, AttributeTextParsesByTheDeclaredKind) {
  const OpSignature sig = scaled_relu_signature();
  // What `mpsim run scaled_relu --attr scale=0.5` does with its text.
  const ArgValue scale = parse_arg(sig.args[1], "0.5", sig.name);
  const Tensor x = from_vector<float>({-1, 4}, {2});
  EXPECT_EQ(sig.call(bind_arguments(sig, {x}, {{"scale", scale}}))[0].to_vector<float>(),
            (std::vector<float>{0, 2}));
  EXPECT_THROW(parse_arg(sig.args[1], "half", sig.name), SignatureError);
}

TEST(OpDeclaration, BadCallsAreSignatureErrorsNamingTheArgument) {
  const OpSignature sig = scaled_relu_signature();
  const Tensor x = from_vector<float>({1}, {1});
  try {
    bind_arguments(sig, {x}, {{"scal", 2.0}});
    FAIL() << "an unknown keyword was accepted";
  } catch (const SignatureError& e) {
    EXPECT_NE(std::string(e.what()).find("scal"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bind_arguments(sig, {x}, {{"scale", std::string("big")}}), SignatureError);
  EXPECT_THROW(bind_arguments(sig, {}), SignatureError);  // input is required
}

// A default that does not parse fails when the signature is built, before any call.
constexpr ArgDecl kBadDefaultArgs[] = {{"input", ArgKind::Tensor}, {"k", ArgKind::Int, "two"}};

TEST(OpDeclaration, ADefaultThatDoesNotParseFailsAtRegistration) {
  EXPECT_THROW(declare_op<kBadDefaultArgs>("bad", "doc", [](auto a) { return arg<"input">(a); }),
               SignatureError);
}

// Every op of the registry: its declared defaults bind to its kinds (the table was built).
TEST(OpDeclaration, EveryRegisteredDefaultHasItsKindsValue) {
  for (const OpSignature& sig : op_signatures()) {
    for (const ArgSpec& spec : sig.args) {
      if (!spec.default_value) continue;
      SCOPED_TRACE(std::string(sig.name) + "." + std::string(spec.name));
      const std::string text = arg_value_string(*spec.default_value);
      if (text.rfind("torch.", 0) == 0 || spec.kind == ArgKind::Device) continue;
      EXPECT_EQ(arg_value_string(parse_arg(spec, text, sig.name)), text);
    }
  }
}

}  // namespace
}  // namespace mpsim
