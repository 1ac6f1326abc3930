#include "tests/cases/op_cases.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace mpsim::test {
namespace {

using Json = nlohmann::json;

[[noreturn]] void malformed(const Json& where, const std::string& what) {
  throw InvalidArgument("tests/cases/op_cases.json: " + what + " in " + where.dump());
}

const Json& database() {
  static const Json kDb = [] {
    std::ifstream in(MPSIM_OP_CASES_JSON);
    if (!in) throw InvalidArgument(std::string("cannot read ") + MPSIM_OP_CASES_JSON);
    return Json::parse(in);
  }();
  return kDb;
}

std::optional<Values> values_of(const std::string& key) {
  static const std::pair<const char*, Values> kKinds[] = {
      {"normal", Values::Normal},    {"positive", Values::Positive},
      {"near_one", Values::NearOne}, {"probability", Values::Probability},
      {"ints", Values::Ints},        {"bools", Values::Bools},
      {"attend", Values::Attend},    {"uniform", Values::Uniform}};
  for (const auto& [name, v] : kKinds) {
    if (key == name) return v;
  }
  return std::nullopt;
}

// An integer list in which "n" stands for the test's size.
IntList int_list(const Json& list, std::int64_t n) {
  IntList out;
  for (const Json& v : list) {
    if (v == "n") {
      out.push_back(n);
    } else if (v.is_number_integer()) {
      out.push_back(v.get<std::int64_t>());
    } else {
      malformed(list, "an integer list holds something other than integers and \"n\"");
    }
  }
  return out;
}

bool is_int_list(const Json& list) {
  for (const Json& v : list) {
    if (!(v == "n" || v.is_number_integer())) return false;
  }
  return true;
}

struct Maker {
  std::int64_t n;
  DType dtype;
  Device device;
  const MakeTensor& make;
  int next_index = 0;

  Tensor tensor(const Json& spec) {
    TensorSpec s;
    s.index = next_index++;
    std::optional<Values> kind;
    std::optional<DType> own_dtype;
    bool dominant = false;
    for (const auto& [key, value] : spec.items()) {
      if (key == "layout") {
        s.layout = value.get<std::string>();
        continue;
      }
      if (key == "dtype") {
        own_dtype = parse_dtype(value.get<std::string>());
        continue;
      }
      if (kind) malformed(spec, "a tensor has two kinds of values");
      if (key == "dominant") {  // [-1, 1) plus k + 1 on the diagonal of each k x k matrix
        dominant = true;
        kind = Values::Uniform;
        s.lo = -1.0;
        s.hi = 1.0;
        s.shape = Shape(int_list(value, n));
        if (s.shape.ndim() < 2 || s.shape[s.shape.size() - 1] != s.shape[s.shape.size() - 2]) {
          malformed(spec, "dominant takes a shape of square matrices");
        }
        continue;
      }
      kind = values_of(key);
      if (!kind) malformed(spec, "unknown kind of values '" + key + "'");
      if (*kind == Values::Ints) {
        if (!value.is_array() || value.size() != 3) {
          malformed(spec, "ints takes [low, high, shape]");
        }
        s.low = value[0].get<std::int64_t>();
        s.high = value[1].get<std::int64_t>();
        s.shape = Shape(int_list(value[2], n));
      } else if (*kind == Values::Uniform) {
        if (!value.is_array() || value.size() != 3) {
          malformed(spec, "uniform takes [low, high, shape]");
        }
        s.lo = value[0].get<double>();
        s.hi = value[1].get<double>();
        s.shape = Shape(int_list(value[2], n));
      } else {
        s.shape = Shape(int_list(value, n));
      }
    }
    if (!kind) malformed(spec, "a tensor names no kind of values");
    s.values = *kind;
    Tensor t = make(s, dtype);
    if (dominant && is_floating(t.dtype())) {
      const std::int64_t k = s.shape[s.shape.size() - 1];
      std::vector<double> diagonal(static_cast<std::size_t>(k * k), 0.0);
      for (std::int64_t i = 0; i < k; ++i) {
        diagonal[static_cast<std::size_t>(i * k + i)] = static_cast<double>(k + 1);
      }
      t = add(t, from_vector(diagonal, {k, k}).to(t.dtype()));
    }
    if (own_dtype) t = t.to(*own_dtype);
    if (s.layout == "channels_last") {
      if (t.dim() != 4) malformed(spec, "channels_last takes a 4-d tensor");
      t = t.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
    } else if (s.layout == "transposed") {
      if (t.dim() < 2) malformed(spec, "transposed takes at least 2 dims");
      t = t.transpose(-2, -1).contiguous().transpose(-2, -1);
    } else if (!s.layout.empty()) {
      malformed(spec, "unknown layout '" + s.layout + "'");
    }
    return t.to(device);
  }

  ArgValue value(const Json& v) {
    if (v.is_null()) return std::monostate{};
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_number_float()) return v.get<double>();
    if (v.is_string()) {
      if (v == "$dtype") return dtype;
      return v.get<std::string>();
    }
    if (v.is_object()) return tensor(v);
    if (v.is_array()) {
      if (is_int_list(v)) return int_list(v, n);
      if (v[0].is_object()) {
        std::vector<Tensor> list;
        for (const Json& t : v) list.push_back(tensor(t));
        return list;
      }
      std::vector<double> floats;
      for (const Json& x : v) {
        if (!x.is_number()) malformed(v, "a list mixes numbers and other values");
        floats.push_back(x.get<double>());
      }
      return floats;
    }
    malformed(v, "an argument of no known form");
  }
};

}  // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> kCases = [] {
    std::vector<OpCase> out;
    for (const Json& c : database().at("cases")) {
      OpCase oc;
      oc.op = c.at("op").get<std::string>();
      oc.id = c.value("id", oc.op);
      oc.random = c.value("random", false);
      oc.json = c.dump();
      if (find_signature_or_null(oc.op) == nullptr) malformed(c, "no signature is named " + oc.op);
      out.push_back(std::move(oc));
    }
    return out;
  }();
  return kCases;
}

CaseCall make_call(const OpCase& c, std::int64_t n, DType dtype, Device device,
                   const MakeTensor& make) {
  const Json spec = Json::parse(c.json);
  Maker m{n, dtype, device, make};
  CaseCall call;
  const Json args = spec.value("args", Json::array());
  const Json kwargs = spec.value("kwargs", Json::object());
  for (const Json& v : args) call.positional.push_back(m.value(v));
  bool has_device = false;
  for (const auto& [name, v] : kwargs.items()) {
    call.named.emplace_back(name, m.value(v));
    has_device = has_device || name == "device";
  }
  if (!has_device) {
    for (const ArgSpec& a : find_signature(c.op).args) {
      if (a.name == "device") call.named.emplace_back("device", device);
    }
  }
  return call;
}

std::vector<Tensor> run_call(const OpCase& c, CaseCall call) {
  const OpSignature& sig = find_signature(c.op);
  return call_op(sig, bind_arguments(sig, std::move(call.positional), std::move(call.named)));
}

std::optional<OpId> list_op(const OpCase& c) {
  static const std::pair<const char*, const char*> kOtherNames[] = {
      {"clone", "copy"},    {"contiguous", "copy"}, {"to", "copy"},        {"zeros", "fill"},
      {"ones", "fill"},     {"full", "fill"},       {"rand", "random"},    {"randn", "random"},
      {"normal", "random"}, {"uniform", "random"},  {"randint", "random"}, {"bernoulli", "random"},
      {"dropout", "random"}};
  std::string_view name = c.op;
  for (const auto& [op, list_name] : kOtherNames) {
    if (name == op) name = list_name;
  }
  for (int i = 0; i < kNumOps; ++i) {
    if (kOpDefs[i].name == name) return OpId(static_cast<std::uint16_t>(i));
  }
  return std::nullopt;  // a view (permute, reshape, ...): no kernel of its own
}

}  // namespace mpsim::test
