// Fuzz target: the attribute parser of `mpsim run --attr name=value` (parse_arg in
// core/op_registry.h). The first byte picks an argument kind, the rest is the text: it must
// parse to a value of that kind or raise a SignatureError naming the argument.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/op_registry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mpsim;
  if (size == 0) return 0;
  constexpr ArgKind kKinds[] = {ArgKind::Int,
                                ArgKind::OptionalInt,
                                ArgKind::IntList,
                                ArgKind::OptionalIntList,
                                ArgKind::IntOrIntList,
                                ArgKind::Double,
                                ArgKind::OptionalDouble,
                                ArgKind::Bool,
                                ArgKind::OptionalBool,
                                ArgKind::String,
                                ArgKind::OptionalString,
                                ArgKind::Scalar,
                                ArgKind::OptionalScalar,
                                ArgKind::DType,
                                ArgKind::OptionalDType,
                                ArgKind::Device,
                                ArgKind::OptionalFloatList,
                                ArgKind::IntListOrString};
  const ArgSpec spec{"attr", kKinds[data[0] % std::size(kKinds)], std::nullopt};
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const ArgValue v = parse_arg(spec, text, "attr_fuzz");
    (void)arg_value_string(v);
  } catch (const SignatureError&) {
  } catch (const Error& e) {
    std::fprintf(stderr, "attr_fuzz: not a SignatureError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
