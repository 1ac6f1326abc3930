// The op registry: every op of the op list has a signature, every signature runs, binding and
// parsing convert and reject as documented. Values are checked against arithmetic written here.
#include "core/op_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "core/mpsim.h"
#include "tests/cases/op_cases.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using Named = std::vector<std::pair<std::string, ArgValue>>;

// Positive values in (0, 1], so log, sqrt, pow and bernoulli all accept them: (i % 7 + 1) / 8.
Tensor sample(const Shape& shape, DType dtype = DType::Float32) {
  std::vector<double> v(static_cast<std::size_t>(shape.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 7 + 1) / 8;
  return from_vector(v, shape).to(dtype);
}

template <class Fn>
void expect_error(Fn&& fn, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing: " << text;
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(text));
  }
}

std::vector<Tensor> call(std::string_view op, std::vector<ArgValue> positional, Named named = {}) {
  const OpSignature& sig = find_signature(op);
  return sig.call(bind_arguments(sig, std::move(positional), std::move(named)));
}

TEST(OpRegistry, EveryOpOfTheOpListHasASignature) {
  std::map<std::string_view, std::string_view> covered(std::begin(kOpsCoveredByOtherNames),
                                                       std::end(kOpsCoveredByOtherNames));
  std::vector<std::string> missing;
  for (const OpDef& def : kOpDefs) {
    const auto it = covered.find(def.name);
    const std::string_view name = it == covered.end() ? def.name : it->second;
    if (find_signature_or_null(name) == nullptr) missing.emplace_back(def.name);
  }
  EXPECT_TRUE(missing.empty()) << "ops of core/op_list.h with no signature in "
                                  "core/op_registry.cc: "
                               << ::testing::PrintToString(missing);
}

TEST(OpRegistry, TableIsSortedUniqueAndWellFormed) {
  const std::vector<OpSignature>& table = op_signatures();
  ASSERT_FALSE(table.empty());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const OpSignature& sig = table[i];
    SCOPED_TRACE(std::string(sig.name));
    if (i > 0) {
      EXPECT_LT(table[i - 1].name, sig.name);
    }
    EXPECT_NE(sig.call, nullptr);
    EXPECT_FALSE(sig.doc.empty());
    std::set<std::string_view> names;
    bool seen_default = false;
    for (const ArgSpec& a : sig.args) {
      EXPECT_TRUE(names.insert(a.name).second) << "repeated argument " << a.name;
      // Python's rule: no required argument after one with a default.
      if (!a.default_value) {
        EXPECT_FALSE(seen_default) << "required " << a.name << " after a default";
      }
      seen_default = seen_default || a.default_value.has_value();
    }
    EXPECT_EQ(&find_signature(sig.name), &sig);
  }
}

// The values of a case's tensors here: sample()'s, integers in [low, high), alternating bools.
Tensor case_tensor(const test::TensorSpec& spec, DType dtype) {
  const std::int64_t n = spec.shape.numel();
  switch (spec.values) {
    case test::Values::Ints: {
      std::vector<std::int64_t> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[i] = spec.low + (3 * i + 1) % (spec.high - spec.low);
      return from_vector(v, spec.shape);
    }
    case test::Values::Bools:
    case test::Values::Attend:
      return ge(sample(spec.shape), 0.25);
    default:
      return sample(spec.shape, dtype);
  }
}

// Each case of tests/cases/op_cases.json binds to its op's signature (positional arguments, then
// named ones) and runs, giving as many results as the signature says.
TEST(OpRegistry, EveryCaseRunsThroughItsSignature) {
  for (const test::OpCase& c : test::op_cases()) {
    SCOPED_TRACE(c.json);
    std::vector<Tensor> out;
    try {
      out = test::run_call(c, test::make_call(c, 5, DType::Float32, Device::cpu(), case_tensor));
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const std::string_view returns = find_signature(c.op).returns;
    if (returns == "Tensor") {
      EXPECT_EQ(out.size(), 1u);
    } else if (returns == "(Tensor, Tensor)") {
      EXPECT_EQ(out.size(), 2u);
    } else {
      EXPECT_EQ(returns, "Tensor[]");
      EXPECT_FALSE(out.empty());
    }
    for (const Tensor& t : out) EXPECT_EQ(t.device(), Device::cpu());
  }
}

// call_op: an error from inside a composed op names the op called, and keeps its kind.
TEST(OpRegistry, ErrorsInsideAComposedOpNameTheOp) {
  const OpSignature& fmax = find_signature("fmax");
  try {
    call_op(fmax, bind_arguments(fmax, {sample({3}), sample({4})}));
    ADD_FAILURE() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("[fmax] "));
    EXPECT_THAT(e.what(), HasSubstr("cannot be broadcast"));
  }
  const OpSignature& exp_sig = find_signature("exp");
  try {
    call_op(exp_sig, bind_arguments(exp_sig, {Tensor()}));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("[exp]"));  // named once, not twice
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("[exp] [exp]")));
  }
}

TEST(OpRegistry, EverySignatureHasACase) {
  std::set<std::string> covered;
  for (const test::OpCase& c : test::op_cases()) covered.insert(c.op);
  for (const OpSignature& sig : op_signatures()) {
    EXPECT_TRUE(covered.contains(std::string(sig.name)))
        << "no case in tests/cases/op_cases.json for " << sig.name;
  }
}

TEST(OpRegistry, ArgumentsReachTheOp) {
  const Tensor x = from_vector<float>({1, -2, 3.5, 4}, {2, 2});
  // add(x, 2, alpha=3): an int other becomes a Scalar, alpha by name.
  EXPECT_EQ(call("add", {x, std::int64_t{2}}, {{"alpha", std::int64_t{3}}})[0].to_vector<float>(),
            (std::vector<float>{7, 4, 9.5, 10}));
  EXPECT_EQ(call("sub", {x, x}, {{"alpha", 0.5}})[0].to_vector<float>(),
            (std::vector<float>{0.5, -1, 1.75, 2}));
  EXPECT_EQ(call("pow", {std::int64_t{2}, x})[0].to_vector<float>(),
            (std::vector<float>{2, 0.25, std::pow(2.0f, 3.5f), 16}));
  EXPECT_EQ(call("div", {x, std::int64_t{2}}, {{"rounding_mode", std::string("floor")}})[0]
                .to_vector<float>(),
            (std::vector<float>{0, -1, 1, 2}));
  EXPECT_EQ(call("where", {gt(x, 0.0), x, 0.0})[0].to_vector<float>(),
            (std::vector<float>{1, 0, 3.5, 4}));
  EXPECT_EQ(call("clamp", {x}, {{"max", std::int64_t{2}}})[0].to_vector<float>(),
            (std::vector<float>{1, -2, 2, 2}));
  // dim=None reduces every dim; keepdim and dtype by name.
  EXPECT_EQ(call("sum", {x})[0].item<float>(), 6.5f);
  const Tensor s =
      call("sum", {x, std::int64_t{1}}, {{"keepdim", true}, {"dtype", std::string("float64")}})[0];
  EXPECT_EQ(s.sizes(), Shape({2, 1}));
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{-1, 7.5}));
  EXPECT_EQ(call("amax", {x})[0].item<float>(), 4.0f);
  EXPECT_EQ(call("argmax", {x}, {{"dim", std::int64_t{0}}})[0].to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 1}));
  // gelu: approximate by name changes the formula.
  const Tensor g = from_vector<double>({-1.5, 0.5}, {2});
  const std::vector<double> exact = call("gelu", {g})[0].to_vector<double>();
  const std::vector<double> tanh_form =
      call("gelu", {g}, {{"approximate", std::string("tanh")}})[0].to_vector<double>();
  for (int i = 0; i < 2; ++i) {
    const double v = i == 0 ? -1.5 : 0.5;
    EXPECT_NEAR(exact[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-15);
    const double inner = std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v);
    EXPECT_NEAR(tanh_form[i], 0.5 * v * (1 + std::tanh(inner)), 1e-15);
  }
  // full infers its dtype from fill_value as torch.full does.
  EXPECT_EQ(call("full", {IntList{2}, std::int64_t{3}})[0].dtype(), DType::Int64);
  EXPECT_EQ(call("full", {IntList{2}, true})[0].dtype(), DType::Bool);
  EXPECT_EQ(call("full", {IntList{2}, 1.5})[0].dtype(), DType::Float32);
  EXPECT_EQ(call("full", {IntList{1}, 1.5}, {{"dtype", DType::Float64}})[0].item<double>(), 1.5);
  // arange(5) is [0, 5) in int64; arange(1, 2, 0.25) is float32.
  const Tensor r = call("arange", {std::int64_t{5}})[0];
  EXPECT_EQ(r.dtype(), DType::Int64);
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(call("arange", {std::int64_t{1}, std::int64_t{2}, 0.25})[0].to_vector<float>(),
            (std::vector<float>{1, 1.25, 1.5, 1.75}));
  // pad: value None pads with 0.
  EXPECT_EQ(call("pad", {from_vector<float>({5, 6}, {2}), IntList{1, 1}})[0].to_vector<float>(),
            (std::vector<float>{0, 5, 6, 0}));
  EXPECT_EQ(call("pad", {from_vector<float>({5, 6}, {2}), IntList{1, 0}}, {{"value", 9.0}})[0]
                .to_vector<float>(),
            (std::vector<float>{9, 5, 6}));
  // split: an int is a piece size, a list is the pieces' sizes.
  const Tensor v = from_vector<float>({0, 1, 2, 3, 4}, {5});
  EXPECT_EQ(call("split", {v, std::int64_t{2}}).size(), 3u);
  const std::vector<Tensor> parts = call("split", {v, IntList{4, 1}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].to_vector<float>(), (std::vector<float>{4}));
  EXPECT_EQ(call("split", {v, IntList{5}}).size(), 1u);
  // layer_norm's eps given as an int converts to float.
  const std::vector<float> ln = call("layer_norm", {from_vector<float>({1, 3}, {2}), IntList{2}},
                                     {{"eps", std::int64_t{0}}})[0]
                                    .to_vector<float>();
  EXPECT_EQ(ln, (std::vector<float>{-1, 1}));
  const std::vector<Tensor> vm = call("var_mean", {from_vector<float>({1, 2, 3, 6}, {4})});
  EXPECT_EQ(vm[0].item<float>(), 14.0f / 3);
  EXPECT_EQ(vm[1].item<float>(), 3.0f);
}

TEST(OpRegistry, BindDefaultsAreCanonical) {
  const OpSignature& add = find_signature("add");
  const std::vector<ArgValue> b = bind_arguments(add, {sample({2}), sample({2})});
  ASSERT_EQ(b.size(), 3u);
  ASSERT_TRUE(std::holds_alternative<Scalar>(b[2]));
  EXPECT_TRUE(std::get<Scalar>(b[2]).is_integral());
  EXPECT_EQ(signature_string(add), "add(input: Tensor, other: Tensor|Scalar, alpha: Scalar = 1)");
  EXPECT_EQ(signature_string(find_signature("layer_norm")),
            "layer_norm(input: Tensor, normalized_shape: int[], weight: Tensor? = None, bias: "
            "Tensor? = None, eps: float = 1.0000000000000001e-05)");
  // A dtype and a device may be given by name; an int dim becomes a list.
  const std::vector<ArgValue> z =
      bind_arguments(find_signature("zeros"), {std::int64_t{3}},
                     {{"dtype", std::string("half")}, {"device", std::string("cpu")}});
  EXPECT_EQ(std::get<IntList>(z[0]), IntList{3});
  EXPECT_EQ(std::get<DType>(z[1]), DType::Float16);
  EXPECT_EQ(std::get<Device>(z[2]), Device::cpu());
}

TEST(OpRegistry, BindErrorsNameTheOpAndTheArgument) {
  const Tensor x = sample({2});
  const OpSignature& add = find_signature("add");
  expect_error(
      [&] {
        bind_arguments(add, {x, x, std::int64_t{1}, std::int64_t{2}});
      },
      "[add] takes 3 arguments (input, other, alpha) but 4 were given");
  expect_error(
      [&] {
        bind_arguments(add, {x, x}, {{"alpha2", std::int64_t{1}}});
      },
      "[add] unknown argument 'alpha2'; expected one of: input, other, alpha");
  expect_error(
      [&] {
        bind_arguments(add, {x, x}, {{"other", x}});
      },
      "[add] got multiple values for argument 'other'");
  expect_error([&] { bind_arguments(add, {x}); }, "[add] missing required argument 'other'");
  expect_error(
      [&] {
        bind_arguments(add, {x, std::string("2")});
      },
      "[add] argument 'other' must be Tensor|Scalar, not str");
  expect_error(
      [&] {
        bind_arguments(add, {ArgValue{}, x});
      },
      "[add] argument 'input' must be Tensor, not None");
  expect_error(
      [&] {
        bind_arguments(add, {std::int64_t{1}, x});
      },
      "[add] argument 'input' must be Tensor, not int");
  const OpSignature& softmax = find_signature("softmax");
  expect_error(
      [&] {
        bind_arguments(softmax, {x, 1.0});
      },
      "[softmax] argument 'dim' must be int, not float");
  expect_error(
      [&] {
        bind_arguments(softmax, {x, true});
      },
      "[softmax] argument 'dim' must be int, not bool");
  expect_error(
      [&] {
        bind_arguments(softmax, {x, std::int64_t{0}, std::string("float17")});
      },
      "[softmax] argument 'dtype': [dtype] unknown dtype 'float17'");
  expect_error(
      [&] {
        bind_arguments(find_signature("layer_norm"), {x, IntList{2}}, {{"eps", true}});
      },
      "[layer_norm] argument 'eps' must be float, not bool");
  expect_error([&] { bind_arguments(find_signature("cat"), {x}); },
               "[cat] argument 'tensors' must be Tensor[], not Tensor");
  expect_error(
      [&] {
        bind_arguments(find_signature("zeros"), {IntList{2}}, {{"device", std::string("gpu")}});
      },
      "[zeros] argument 'device'");
  // Errors of the op itself pass through unchanged.
  expect_error(
      [&] {
        call("add", {sample({2}), sample({3})});
      },
      "[add] shapes [2] and [3] cannot be broadcast");
  expect_error(
      [&] {
        call("clamp", {x}, {{"min", 0.0}, {"max", x}});
      },
      "[clamp] expected min and max both numbers or both tensors");
  expect_error([&] { call("norm", {x, 1.0}); }, "[norm] only p=2 is implemented, got p=1.0");
  try {
    bind_arguments(add, {x});
  } catch (const SignatureError&) {
    SUCCEED();
  }
}

TEST(OpRegistry, UnknownOpsListCloseNames) {
  expect_error([] { find_signature("softmx"); }, "unknown op 'softmx'; close names: softmax");
  expect_error([] { find_signature("ad"); }, "close names: add, pad");
  expect_error([] { find_signature("zzzzzzzz"); }, "[mpsim] unknown op 'zzzzzzzz'");
  EXPECT_EQ(find_signature_or_null("zzzzzzzz"), nullptr);
  EXPECT_THROW(find_signature("conv3d_transpose_xyz"), SignatureError);
}

ArgValue parse(ArgKind kind, std::string_view text) {
  return parse_arg(ArgSpec{"a", kind, std::nullopt}, text, "op");
}

TEST(OpRegistry, ParseArgEveryKind) {
  EXPECT_EQ(std::get<std::int64_t>(parse(ArgKind::Int, " -12 ")), -12);
  EXPECT_EQ(std::get<std::int64_t>(parse(ArgKind::OptionalInt, "+3")), 3);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalInt, "None")));
  for (const char* text : {"{1,-1}", "[1, -1]", "(1,-1)", "1,-1", " { 1 , -1 } "}) {
    EXPECT_EQ(std::get<IntList>(parse(ArgKind::IntList, text)), (IntList{1, -1})) << text;
  }
  EXPECT_EQ(std::get<IntList>(parse(ArgKind::IntList, "{}")), IntList{});
  EXPECT_EQ(std::get<IntList>(parse(ArgKind::IntList, "(3,)")), IntList{3});
  EXPECT_EQ(std::get<IntList>(parse(ArgKind::IntList, "3")), IntList{3});
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalIntList, "None")));
  EXPECT_EQ(std::get<std::int64_t>(parse(ArgKind::IntOrIntList, "2")), 2);
  EXPECT_EQ(std::get<IntList>(parse(ArgKind::IntOrIntList, "{2}")), IntList{2});
  EXPECT_EQ(std::get<IntList>(parse(ArgKind::IntOrIntList, "2,3")), (IntList{2, 3}));
  EXPECT_EQ(std::get<double>(parse(ArgKind::Double, "1e-5")), 1e-5);
  EXPECT_EQ(std::get<double>(parse(ArgKind::Double, "-0.5")), -0.5);
  EXPECT_EQ(std::get<double>(parse(ArgKind::Double, "3")), 3.0);
  EXPECT_EQ(std::get<double>(parse(ArgKind::Double, "inf")),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(std::get<double>(parse(ArgKind::Double, "-Infinity")),
            -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(std::get<double>(parse(ArgKind::Double, "nan"))));
  EXPECT_TRUE(std::signbit(std::get<double>(parse(ArgKind::Double, "-0.0"))));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalDouble, "None")));
  EXPECT_EQ(std::get<bool>(parse(ArgKind::Bool, "true")), true);
  EXPECT_EQ(std::get<bool>(parse(ArgKind::Bool, "False")), false);
  EXPECT_EQ(std::get<bool>(parse(ArgKind::Bool, "1")), true);
  EXPECT_EQ(std::get<bool>(parse(ArgKind::Bool, "0")), false);
  EXPECT_EQ(std::get<std::string>(parse(ArgKind::String, "tanh")), "tanh");
  EXPECT_EQ(std::get<std::string>(parse(ArgKind::String, "'tanh'")), "tanh");
  EXPECT_EQ(std::get<std::string>(parse(ArgKind::OptionalString, "\"floor\"")), "floor");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalString, "None")));
  EXPECT_EQ(std::get<std::string>(parse(ArgKind::String, "None")), "None");  // not optional
  const Scalar si = std::get<Scalar>(parse(ArgKind::Scalar, "2"));
  EXPECT_TRUE(si.is_integral());
  EXPECT_EQ(si.to_int(), 2);
  const Scalar sf = std::get<Scalar>(parse(ArgKind::Scalar, "2.5"));
  EXPECT_TRUE(sf.is_floating());
  EXPECT_EQ(sf.to_double(), 2.5);
  EXPECT_TRUE(std::get<Scalar>(parse(ArgKind::Scalar, "true")).is_bool());
  EXPECT_TRUE(std::isinf(std::get<Scalar>(parse(ArgKind::OptionalScalar, "-inf")).to_double()));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalScalar, "None")));
  EXPECT_EQ(std::get<Scalar>(parse(ArgKind::TensorOrScalar, "7")).to_int(), 7);
  EXPECT_TRUE(
      std::holds_alternative<std::monostate>(parse(ArgKind::OptionalTensorOrScalar, "None")));
  EXPECT_EQ(std::get<DType>(parse(ArgKind::DType, "float16")), DType::Float16);
  EXPECT_EQ(std::get<DType>(parse(ArgKind::OptionalDType, "torch.bfloat16")), DType::BFloat16);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalDType, "None")));
  EXPECT_EQ(std::get<Device>(parse(ArgKind::Device, "mps:0")), Device::mps(0));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalTensor, "None")));
  EXPECT_EQ(std::get<bool>(parse(ArgKind::OptionalBool, "true")), true);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalBool, "None")));
  EXPECT_EQ(std::get<std::vector<double>>(parse(ArgKind::OptionalFloatList, "2")),
            std::vector<double>{2.0});
  EXPECT_EQ(std::get<std::vector<double>>(parse(ArgKind::OptionalFloatList, "{2.5, 1e-1}")),
            (std::vector<double>{2.5, 0.1}));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(ArgKind::OptionalFloatList, "None")));
  EXPECT_EQ(std::get<IntList>(parse(ArgKind::IntListOrString, "1")), IntList{1});
  EXPECT_EQ(std::get<IntList>(parse(ArgKind::IntListOrString, "(1, 2)")), (IntList{1, 2}));
  EXPECT_EQ(std::get<std::string>(parse(ArgKind::IntListOrString, "same")), "same");
  EXPECT_EQ(std::get<std::string>(parse(ArgKind::IntListOrString, "'valid'")), "valid");
}

TEST(OpRegistry, BindConvertsTheListAndOptionalKinds) {
  const auto bind_one = [](ArgKind kind, ArgValue v) {
    const OpSignature sig{"op", {ArgSpec{"a", kind, std::nullopt}}, nullptr, "test"};
    return bind_arguments(sig, {std::move(v)})[0];
  };
  EXPECT_EQ(std::get<std::vector<double>>(bind_one(ArgKind::OptionalFloatList, std::int64_t{2})),
            std::vector<double>{2.0});
  EXPECT_EQ(std::get<std::vector<double>>(bind_one(ArgKind::OptionalFloatList, IntList{2, 3})),
            (std::vector<double>{2.0, 3.0}));
  EXPECT_EQ(std::get<std::vector<double>>(bind_one(ArgKind::OptionalFloatList, 1.5)),
            std::vector<double>{1.5});
  EXPECT_EQ(std::get<IntList>(bind_one(ArgKind::IntListOrString, std::int64_t{1})), IntList{1});
  EXPECT_EQ(std::get<std::string>(bind_one(ArgKind::IntListOrString, std::string("same"))), "same");
  EXPECT_EQ(std::get<bool>(bind_one(ArgKind::OptionalBool, false)), false);
  EXPECT_EQ(std::get<IntList>(bind_one(ArgKind::IntList, std::vector<Tensor>{})), IntList{});
  expect_error([&] { bind_one(ArgKind::OptionalBool, std::int64_t{1}); },
               "[op] argument 'a' must be bool?, not int");
  expect_error([&] { bind_one(ArgKind::OptionalFloatList, true); },
               "[op] argument 'a' must be float[]?, not bool");
  expect_error([&] { bind_one(ArgKind::IntListOrString, 1.5); },
               "[op] argument 'a' must be int[]|str, not float");
}

TEST(OpRegistry, ParseArgRejectsBadText) {
  const std::pair<ArgKind, const char*> bad[] = {
      {ArgKind::Int, ""},
      {ArgKind::Int, "1.5"},
      {ArgKind::Int, "abc"},
      {ArgKind::Int, "99999999999999999999"},
      {ArgKind::Int, "None"},
      {ArgKind::Int, "1 2"},
      {ArgKind::IntList, "{1,,2}"},
      {ArgKind::IntList, "{1,2"},
      {ArgKind::IntList, "[1;2]"},
      {ArgKind::IntList, "{1.5}"},
      {ArgKind::IntOrIntList, "x"},
      {ArgKind::Double, "1e999"},
      {ArgKind::Double, "one"},
      {ArgKind::Double, "1.0f"},
      {ArgKind::Double, ""},
      {ArgKind::Bool, "yes"},
      {ArgKind::Bool, "2"},
      {ArgKind::Scalar, "1,2"},
      {ArgKind::Scalar, "None"},
      {ArgKind::TensorOrScalar, "a.npy"},
      {ArgKind::DType, "float17"},
      {ArgKind::DType, "complex256"},
      {ArgKind::Device, "cuda"},
      {ArgKind::Tensor, "1"},
      {ArgKind::TensorList, "1,2"},
      {ArgKind::OptionalBool, "maybe"},
      {ArgKind::OptionalFloatList, "{1,x}"},
      {ArgKind::OptionalFloatList, "[1.5"},
  };
  for (const auto& [kind, text] : bad) {
    SCOPED_TRACE(std::string(arg_kind_name(kind)) + " '" + text + "'");
    EXPECT_THROW(parse(kind, text), SignatureError);
  }
  expect_error([] { parse(ArgKind::Int, "1.5"); },
               "[op] argument 'a' expects an integer, got '1.5'");
  expect_error([] { parse(ArgKind::IntList, "{1,,2}"); },
               "[op] argument 'a' expects a list of integers such as {1,1}, [1, 1] or 1,1, got "
               "'{1,,2}'");
  expect_error([] { parse(ArgKind::Tensor, "1"); }, "is a Tensor: it cannot be given as text");
}

}  // namespace
}  // namespace mpsim
