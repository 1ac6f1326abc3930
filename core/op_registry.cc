#include "core/op_registry.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

namespace mpsim {
namespace {

using K = ArgKind;

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
    {"bool", false, false},         {"bool?", true, false},         {"str", false, false},
    {"str?", true, false},          {"Scalar", false, false},       {"Scalar?", true, false},
    {"ScalarType", false, false},   {"ScalarType?", true, false},   {"Device", false, false},
    {"float[]?", true, false},      {"int[]|str", false, false},
};
static_assert(std::size(kKindInfo) == static_cast<std::size_t>(K::IntListOrString) + 1);

const KindInfo& info(ArgKind kind) { return kKindInfo[static_cast<int>(kind)]; }

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
    case K::OptionalBool:
      if (s && s->is_bool()) return s->to_int() != 0;
      break;
    case K::OptionalFloatList:
      if (std::holds_alternative<std::vector<double>>(v)) return v;
      if (s && !s->is_bool()) return std::vector<double>{s->to_double()};
      if (const auto* l = std::get_if<IntList>(&v))
        return std::vector<double>(l->begin(), l->end());
      break;
    case K::IntListOrString:
      if (i) return IntList{*i};
      if (std::holds_alternative<IntList>(v) || std::holds_alternative<std::string>(v)) return v;
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

// A list in braces, brackets or parentheses, or bare: "{1,2}", "[1, 2]", "(1,)", "1,2", "{}".
template <class T>
std::optional<std::vector<T>> parse_list(std::string_view s,
                                         std::optional<T> (*parse_one)(std::string_view)) {
  s = trim(s);
  constexpr std::pair<char, char> kBrackets[] = {{'{', '}'}, {'[', ']'}, {'(', ')'}};
  for (const auto& [open, close] : kBrackets) {
    if (s.starts_with(open)) {
      if (!s.ends_with(close) || s.size() < 2) return std::nullopt;
      s = trim(s.substr(1, s.size() - 2));
      break;
    }
  }
  std::vector<T> out;
  if (s.empty()) return out;
  if (s.ends_with(',')) s.remove_suffix(1);  // a Python tuple: (1,)
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = s.find(',', begin);
    const std::optional<T> v = parse_one(s.substr(begin, comma - begin));
    if (!v) return std::nullopt;
    out.push_back(*v);
    if (comma == std::string_view::npos) return out;
    begin = comma + 1;
  }
}

std::optional<IntList> parse_int_list(std::string_view s) {
  return parse_list<std::int64_t>(s, parse_int);
}

std::string unquoted(std::string_view t) {
  if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front()) {
    return std::string(t.substr(1, t.size() - 2));
  }
  return std::string(t);
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
    case K::OptionalBool:
      return "true, false, 1 or 0";
    case K::OptionalFloatList:
      return "a number or a list of numbers such as {2.0,1.5}";
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
  std::vector<OpSignature> table = detail::signature_rows();
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

std::vector<Tensor> call_op(const OpSignature& sig, std::span<const ArgValue> args) {
  std::string prefix = "[";  // appended, not "[" + name: GCC 12 warns falsely (-Wrestrict)
  prefix.append(sig.name).append("]");
  const auto named = [&](const Error& e) {
    const std::string what = e.what();
    return what.starts_with(prefix) ? what : prefix + " " + what;
  };
  try {
    return sig.call(args);
  } catch (const ShapeError& e) {
    throw ShapeError(named(e));
  } catch (const DTypeError& e) {
    throw DTypeError(named(e));
  } catch (const DeviceError& e) {
    throw DeviceError(named(e));
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(named(e));
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(named(e));
  } catch (const SignatureError& e) {
    throw SignatureError(named(e));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(named(e));
  }
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
  for (auto& entry : named) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    ArgValue& value = entry.second;
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
    case K::OptionalBool:
      if (const auto v = parse_bool(t)) return *v;
      throw bad();
    case K::OptionalFloatList:
      if (auto v = parse_list<double>(t, parse_double)) return *std::move(v);
      throw bad();
    case K::IntListOrString:
      if (auto v = parse_int_list(t)) return *std::move(v);
      return unquoted(t);
    case K::String:
    case K::OptionalString:
      return unquoted(t);
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

namespace {
std::string quoted(std::string_view s) {
  std::string out;
  out.append("'").append(s).append("'");
  return out;
}
}  // namespace

std::string arg_value_string(const ArgValue& value) {
  struct Printer {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(const Tensor& t) const {
      return "Tensor(" + t.shape().to_string() + ", " + std::string(dtype_name(t.dtype())) + ")";
    }
    std::string operator()(const std::vector<Tensor>& ts) const {
      return std::to_string(ts.size()) + " tensors";
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
    std::string operator()(const std::string& s) const { return quoted(s); }
    std::string operator()(const Scalar& s) const {
      if (s.is_floating()) return (*this)(s.to_double());
      if (s.is_bool()) return (*this)(s.to_int() != 0);
      return std::to_string(s.to_int());
    }
    std::string operator()(DType d) const { return "torch." + std::string(dtype_name(d)); }
    std::string operator()(Device d) const { return quoted(d.to_string()); }
    std::string operator()(const std::vector<double>& l) const {
      std::string out = "[";
      for (double d : l) out += (out.size() > 1 ? ", " : "") + (*this)(d);
      return out + "]";
    }
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
