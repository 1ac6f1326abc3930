// PyTorch conformance: every case of gen_cases.py (random inputs, PyTorch 1.13 results in
// float32 and float64) run through mpsim, op by op.
//
// Note [conformance criterion]
// r is PyTorch's float64 result on the float32 inputs widened to float64 (the reference),
// t is PyTorch's result in the inputs' dtype (float32, or bfloat16 for the "bf16" cases), m is
// mpsim's. Errors are measured in ULPs of the output dtype at r: |x - r| / u(r), u(r) the
// spacing of the output format in the binade of r (its subnormal spacing below), so x is the
// correctly rounded value of r exactly when its error is <= 0.5. A case passes when
//   1. mpsim has PyTorch's output dtype and shape;
//   2. at every element, |m - r| <= |t - r|: mpsim is never further from the reference than
//      PyTorch is. Where PyTorch is correctly rounded mpsim must be too; elsewhere mpsim may be
//      anything at least as close. A NaN r needs a NaN; an infinite r, or one that rounds to
//      an infinity, needs that infinity; an exact zero r needs a zero of its sign. (2) implies
//      the per-op rule max |m - r| <= max |t - r|, checked as well (ULPs and absolute);
//   3. exact cases (data movement, casts, argmax/argmin, amax/amin): m equals t bit for bit
//      (any NaN matches any NaN).
// No tolerance is added anywhere; the only exceptions are the listed elements of Note [known
// mismatches]. The test skips, with a message, only when /usr/bin/python3 cannot import torch
// and numpy; any other failure of the generator fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/mpsim.h"

namespace mpsim {
namespace {

namespace fs = std::filesystem;

struct TensorFile {
  DType dtype = DType::Float32;
  Shape shape;
  std::string file;    // PyTorch's result (outputs) or the input
  std::string file64;  // outputs: the float64 reference, empty for exact cases
};

struct Case {
  std::string name, op;
  bool exact = false;
  std::map<std::string, std::string> attrs;
  std::vector<std::pair<std::string, TensorFile>> inputs;  // in the generator's order
  std::vector<TensorFile> outputs;
};

DType dtype_from(const std::string& s) {
  static const std::map<std::string, DType> kNames = {
      {"f32", DType::Float32},   {"f64", DType::Float64}, {"f16", DType::Float16},
      {"bf16", DType::BFloat16}, {"i64", DType::Int64},   {"i32", DType::Int32},
      {"bool", DType::Bool}};
  return kNames.at(s);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

// "DTYPE:SHAPE:FILE[:FILE64]"; SHAPE "5x7" or "-" (0-dim).
TensorFile parse_tensor(const std::string& s) {
  const std::vector<std::string> f = split(s, ':');
  TensorFile t;
  t.dtype = dtype_from(f.at(0));
  std::vector<std::int64_t> dims;
  if (f.at(1) != "-")
    for (const std::string& d : split(f[1], 'x')) dims.push_back(std::stoll(d));
  t.shape = Shape(dims);
  t.file = f.at(2);
  if (f.size() > 3 && f[3] != "-") t.file64 = f[3];
  return t;
}

std::vector<Case> read_manifest(const fs::path& dir) {
  std::ifstream in(dir / "manifest.txt");
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream tokens(line);
    Case c;
    tokens >> c.name >> c.op;
    std::string tok;
    while (tokens >> tok) {
      const std::size_t eq = tok.find('=');
      if (tok == "exact") {
        c.exact = true;
      } else if (tok.rfind("in:", 0) == 0) {
        c.inputs.emplace_back(tok.substr(3, eq - 3), parse_tensor(tok.substr(eq + 1)));
      } else if (tok.rfind("out:", 0) == 0) {
        c.outputs.push_back(parse_tensor(tok.substr(eq + 1)));
      } else {
        c.attrs[tok.substr(0, eq)] = tok.substr(eq + 1);
      }
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<char> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

Tensor load(const fs::path& dir, const TensorFile& t) {
  const std::vector<char> bytes = read_bytes(dir / t.file);
  const std::size_t want = static_cast<std::size_t>(t.shape.numel()) * dtype_size(t.dtype);
  if (bytes.size() != want)
    throw std::runtime_error(t.file + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                             std::to_string(want));
  return from_blob_copy(bytes.data(), t.shape.numel(), t.dtype, t.shape);
}

// Elements as doubles (every dtype here converts exactly), read without mpsim's conversions.
std::vector<double> as_doubles(const Tensor& t) {
  return visit_dtype(t.dtype(), [&]<class T>() {
    const std::vector<T> v = t.to_vector<T>();
    std::vector<double> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if constexpr (Float16Like<T>)
        out[i] = static_cast<double>(static_cast<float>(v[i]));
      else
        out[i] = static_cast<double>(v[i]);
    }
    return out;
  });
}

std::vector<double> load_f64(const fs::path& path, std::size_t n) {
  const std::vector<char> bytes = read_bytes(path);
  if (bytes.size() != n * sizeof(double))
    throw std::runtime_error(path.string() + ": unexpected size");
  std::vector<double> v(n);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

// ---- attributes ----

const std::string& attr(const Case& c, const std::string& key) {
  const auto it = c.attrs.find(key);
  if (it == c.attrs.end()) throw std::runtime_error(c.name + ": no attribute " + key);
  return it->second;
}
std::string attr_or(const Case& c, const std::string& key, const std::string& fallback) {
  const auto it = c.attrs.find(key);
  return it == c.attrs.end() ? fallback : it->second;
}
IntList list_attr(const Case& c, const std::string& key) {
  const std::string& s = attr(c, key);  // "[a,b]"
  IntList v;
  for (const std::string& e : split(s.substr(1, s.size() - 2), ','))
    if (!e.empty()) v.push_back(std::stoll(e));
  return v;
}
std::int64_t int_attr(const Case& c, const std::string& key) { return std::stoll(attr(c, key)); }
double num_attr(const Case& c, const std::string& key) { return std::stod(attr(c, key)); }
bool bool_attr(const Case& c, const std::string& key) { return attr(c, key) == "1"; }

// ---- running a case in mpsim ----

using Inputs = std::map<std::string, Tensor>;
using OpFn = std::function<std::vector<Tensor>(const Case&, const Inputs&)>;

std::optional<Tensor> opt(const Inputs& in, const std::string& key) {
  const auto it = in.find(key);
  return it == in.end() ? std::nullopt : std::optional<Tensor>(it->second);
}

template <class F>
OpFn reduce_op(F f) {
  return [f](const Case& c, const Inputs& in) -> std::vector<Tensor> {
    return {f(in.at("x"), list_attr(c, "dims"), bool_attr(c, "keepdim"))};
  };
}
template <class F>
OpFn var_op(F f) {
  return [f](const Case& c, const Inputs& in) -> std::vector<Tensor> {
    return {
        f(in.at("x"), list_attr(c, "dims"), int_attr(c, "correction"), bool_attr(c, "keepdim"))};
  };
}
template <class F>
OpFn arg_op(F f) {
  return [f](const Case& c, const Inputs& in) -> std::vector<Tensor> {
    const std::string& d = attr(c, "dim");
    return {f(in.at("x"), d == "none" ? std::nullopt : std::optional<std::int64_t>(std::stoll(d)),
              bool_attr(c, "keepdim"))};
  };
}
OpFn unary_op(Tensor (*f)(const Tensor&)) {
  return [f](const Case&, const Inputs& in) -> std::vector<Tensor> { return {f(in.at("x"))}; };
}
std::vector<Tensor> all_inputs(const Case& c, const Inputs& in) {  // in the manifest's order
  std::vector<Tensor> ts;
  for (const auto& [name, file] : c.inputs) ts.push_back(in.at(name));
  return ts;
}

const std::map<std::string, OpFn>& op_table() {
  static const std::map<std::string, OpFn> kOps = {
      {"sum", reduce_op([](const Tensor& x, const IntList& d, bool k) { return sum(x, d, k); })},
      {"mean", reduce_op([](const Tensor& x, const IntList& d, bool k) { return mean(x, d, k); })},
      {"prod", reduce_op([](const Tensor& x, const IntList& d, bool k) { return prod(x, d, k); })},
      {"norm", reduce_op([](const Tensor& x, const IntList& d, bool k) { return norm(x, d, k); })},
      {"amax", reduce_op([](const Tensor& x, const IntList& d, bool k) { return amax(x, d, k); })},
      {"amin", reduce_op([](const Tensor& x, const IntList& d, bool k) { return amin(x, d, k); })},
      {"logsumexp",
       reduce_op([](const Tensor& x, const IntList& d, bool k) { return logsumexp(x, d, k); })},
      {"var", var_op([](const Tensor& x, const IntList& d, std::int64_t c, bool k) {
         return var(x, d, c, k);
       })},
      {"std", var_op([](const Tensor& x, const IntList& d, std::int64_t c, bool k) {
         return mpsim::std(x, d, c, k);
       })},
      {"var_mean",
       [](const Case& c, const Inputs& in) -> std::vector<Tensor> {
         auto [v, m] = var_mean(in.at("x"), list_attr(c, "dims"), int_attr(c, "correction"),
                                bool_attr(c, "keepdim"));
         return {v, m};
       }},
      {"argmax", arg_op([](const Tensor& x, std::optional<std::int64_t> d, bool k) {
         return argmax(x, d, k);
       })},
      {"argmin", arg_op([](const Tensor& x, std::optional<std::int64_t> d, bool k) {
         return argmin(x, d, k);
       })},
      {"softmax",
       [](const Case& c, const Inputs& in) -> std::vector<Tensor> {
         return {softmax(in.at("x"), int_attr(c, "dim"))};
       }},
      {"log_softmax",
       [](const Case& c, const Inputs& in) -> std::vector<Tensor> {
         return {log_softmax(in.at("x"), int_attr(c, "dim"))};
       }},
      {"layer_norm",
       [](const Case& c, const Inputs& in) -> std::vector<Tensor> {
         return {layer_norm(in.at("x"), list_attr(c, "normalized_shape"), opt(in, "weight"),
                            opt(in, "bias"), num_attr(c, "eps"))};
       }},
      {"rms_norm",
       [](const Case& c, const Inputs& in) -> std::vector<Tensor> {
         const std::string& e = attr(c, "eps");
         return {rms_norm(in.at("x"), list_attr(c, "normalized_shape"), opt(in, "weight"),
                          e == "none" ? std::nullopt : std::optional<double>(std::stod(e)))};
       }},
      {"group_norm",
       [](const Case& c, const Inputs& in) -> std::vector<Tensor> {
         return {group_norm(in.at("x"), int_attr(c, "num_groups"), opt(in, "weight"),
                            opt(in, "bias"), num_attr(c, "eps"))};
       }},
      {"batch_norm",
       [](const Case& c, const Inputs& in) -> std::vector<Tensor> {
         return {batch_norm(in.at("x"), in.at("running_mean"), in.at("running_var"),
                            opt(in, "weight"), opt(in, "bias"), false, 0.1, num_attr(c, "eps"))};
       }},
      {"exp", unary_op(exp)},
      {"log", unary_op(log)},
      {"log1p", unary_op(log1p)},
      {"expm1", unary_op(expm1)},
      {"sqrt", unary_op(sqrt)},
      {"rsqrt", unary_op(rsqrt)},
      {"sin", unary_op(sin)},
      {"cos", unary_op(cos)},
      {"tanh", unary_op(tanh)},
      {"erf", unary_op(erf)},
      {"relu", unary_op(relu)},
      {"sigmoid", unary_op(sigmoid)},
      {"silu", unary_op(silu)},
      {"reciprocal", unary_op(reciprocal)},
      {"gelu",
       [](const Case& c, const Inputs& in)
           -> std::vector<Tensor> { return {gelu(in.at("x"), attr(c, "approximate"))}; }},
      {"softplus",
       [](const Case& c, const Inputs& in) -> std::
                                               vector<Tensor> {
                                                 return {softplus(in.at("x"), num_attr(c, "beta"),
                                                                  num_attr(c, "threshold"))};
                                               }},
      {"add",
       [](const Case& c, const Inputs& in) -> std::
                                               vector<Tensor> {
                                                 return {add(in.at("x"), in.at("y"),
                                                             std::stod(attr_or(c, "alpha", "1")))};
                                               }},
      {"mul",
       [](const Case&,
          const Inputs& in) -> std::vector<Tensor> { return {mul(in.at("x"), in.at("y"))}; }},
      {"div",
       [](const Case&,
          const Inputs& in) -> std::vector<Tensor> { return {div(in.at("x"), in.at("y"))}; }},
      {"pow",
       [](const Case& c, const Inputs& in) -> std::
                                               vector<Tensor> {
                                                 if (c.attrs.contains("exponent"))
                                                   return {
                                                       pow(in.at("x"), num_attr(c, "exponent"))};
                                                 return {pow(in.at("x"), in.at("y"))};
                                               }},
      {"cat",
       [](const Case& c, const Inputs& in)
           -> std::vector<Tensor> { return {cat(all_inputs(c, in), int_attr(c, "dim"))}; }},
      {"stack",
       [](const Case& c, const Inputs& in)
           -> std::vector<Tensor> { return {stack(all_inputs(c, in), int_attr(c, "dim"))}; }},
      {"index_select",
       [](const Case& c, const Inputs& in)
           -> std::vector<
               Tensor> { return {index_select(in.at("x"), int_attr(c, "dim"), in.at("index"))}; }},
      {"gather",
       [](const Case& c, const Inputs& in)
           -> std::vector<
               Tensor> { return {gather(in.at("x"), int_attr(c, "dim"), in.at("index"))}; }},
      {"flip",
       [](const Case& c, const Inputs& in)
           -> std::vector<Tensor> { return {flip(in.at("x"), list_attr(c, "dims"))}; }},
      {"repeat",
       [](const Case& c, const Inputs& in)
           -> std::vector<Tensor> { return {repeat(in.at("x"), list_attr(c, "repeats"))}; }},
      {"pad",
       [](const Case& c, const Inputs& in) -> std::
                                               vector<Tensor> {
                                                 return {pad(in.at("x"), list_attr(c, "pad"),
                                                             attr(c, "mode"),
                                                             num_attr(c, "value"))};
                                               }},
      {"tril",
       [](const Case& c, const Inputs& in)
           -> std::vector<Tensor> { return {tril(in.at("x"), int_attr(c, "diagonal"))}; }},
      {"triu",
       [](const Case& c, const Inputs& in)
           -> std::vector<Tensor> { return {triu(in.at("x"), int_attr(c, "diagonal"))}; }},
      {"to",
       [](const Case& c, const Inputs& in)
           -> std::vector<Tensor> { return {in.at("x").to(dtype_from(attr(c, "dtype")))}; }},
  };
  return kOps;
}

// ---- errors ----

// u(r): the spacing of `dtype` in the binade of r (its subnormal spacing below the normals).
double unit(DType dtype, double r) {
  const int mant = dtype == DType::Float16 ? 10 : dtype == DType::BFloat16 ? 7 : 23;
  const int emin = dtype == DType::Float16 ? -14 : -126;
  const int e = (r == 0 || !std::isfinite(r)) ? emin : std::max(std::ilogb(r), emin);
  return std::ldexp(1.0, e - mant);
}

// True when r rounds to an infinity in `dtype` (|r| >= max finite + half its spacing).
bool rounds_to_inf(DType dtype, double r) {
  const double limit = dtype == DType::Float16    ? 65520.0
                       : dtype == DType::BFloat16 ? 0x1p128 - 0x1p119
                                                  : 0x1p128 - 0x1p103;
  return std::fabs(r) >= limit;
}

// Error of x against r in ULPs of the output dtype. Special values as Note [conformance
// criterion]: a NaN, an infinite r (or one that rounds to an infinity) and the sign of an exact
// zero are matched exactly (error 0) or missed (error inf).
double ulp_error(DType dtype, double x, double r) {
  if (std::isnan(r)) return std::isnan(x) ? 0 : INFINITY;
  if (rounds_to_inf(dtype, r)) return x == std::copysign(INFINITY, r) ? 0 : INFINITY;
  if (!std::isfinite(x)) return INFINITY;
  if (r == 0 && x == 0 && std::signbit(x) != std::signbit(r)) return INFINITY;
  return std::fabs(x - r) / unit(dtype, r);
}

std::string multi_index(const Shape& shape, std::size_t flat) {
  std::string s;
  for (std::int64_t d = shape.ndim() - 1; d >= 0; --d) {
    s = std::to_string(static_cast<std::int64_t>(flat) % shape[d]) + (s.empty() ? "" : ", ") + s;
    flat /= static_cast<std::size_t>(shape[d]);
  }
  return "[" + s + "]";
}

std::string hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// One row of the summary: every case of an op (and dtype).
struct Row {
  int cases = 0, failed = 0;
  bool exact = true;
  std::int64_t elements = 0, mismatches = 0, known = 0, m_cr = 0, t_cr = 0;
  double m_max = 0, t_max = 0;
};

std::string row_key(const Case& c) {
  std::string key = c.name.substr(0, c.name.find('/'));
  if (!c.inputs.empty() && c.inputs[0].second.dtype == DType::BFloat16) key += " (bf16)";
  return key;
}

// Note [known mismatches]
// Elements where mpsim is known to fail the criterion, each with its cause (kernels another
// change owns). They are shown in the summary and in docs/conformance.md, never hidden: the
// rest of their case is checked as usual, and a listed element that stops failing fails the
// test, so an entry goes away with the fix that makes it pass.
struct KnownMismatch {
  std::string_view case_name;
  std::size_t output;
  std::vector<std::size_t> elements;  // flat indices into the output
  std::string_view cause;
};

const std::vector<KnownMismatch>& known_mismatches() {
  // Empty: the last entries (a sum with an infinite term gave NaN through the Neumaier
  // compensation; relu(-0.0) gave +0.0) were fixed in the kernels.
  static const std::vector<KnownMismatch> kKnown = {};
  return kKnown;
}

const KnownMismatch* find_known(const Case& c, std::size_t output) {
  for (const KnownMismatch& k : known_mismatches())
    if (k.case_name == c.name && k.output == output) return &k;
  return nullptr;
}

// Checks one output (Note [conformance criterion]); returns false, after reporting, when the
// case fails.
bool check_output(const Case& c, std::size_t k, const Tensor& got, const TensorFile& want,
                  const fs::path& dir, Row& row) {
  const std::string where = c.name + " output " + std::to_string(k);
  if (got.dtype() != want.dtype || got.sizes() != want.shape) {
    ADD_FAILURE() << where << ": mpsim gives " << dtype_name(got.dtype()) << " " << got.sizes()
                  << ", PyTorch " << dtype_name(want.dtype) << " " << want.shape;
    return false;
  }
  const std::vector<double> m = as_doubles(got);
  const std::vector<double> t = as_doubles(load(dir, want));
  const std::vector<double> r =
      c.exact ? std::vector<double>{} : load_f64(dir / want.file64, m.size());
  const KnownMismatch* known = find_known(c, k);
  row.elements += static_cast<std::int64_t>(m.size());
  row.exact = row.exact && c.exact;
  bool ok = true;
  std::int64_t bad = 0;
  std::size_t first = 0;
  double m_max = 0, t_max = 0, m_abs = 0, t_abs = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    bool good;
    double em = 0, et = 0;
    if (c.exact) {
      good = (std::isnan(m[i]) && std::isnan(t[i])) ||
             (m[i] == t[i] && std::signbit(m[i]) == std::signbit(t[i]));
    } else {
      em = ulp_error(want.dtype, m[i], r[i]);
      et = ulp_error(want.dtype, t[i], r[i]);
      good = em <= et;
      row.m_cr += em <= 0.5;
      row.t_cr += et <= 0.5;
    }
    if (known && std::ranges::find(known->elements, i) != known->elements.end()) {
      if (good) {
        ADD_FAILURE() << where << " element " << multi_index(want.shape, i)
                      << " is a known mismatch (" << known->cause
                      << ") but now passes: remove it from known_mismatches()";
        ok = false;
      }
      row.known += !good;
      continue;
    }
    if (!good && bad++ == 0) first = i;
    m_max = std::max(m_max, em);
    t_max = std::max(t_max, et);
    if (!c.exact && !rounds_to_inf(want.dtype, r[i])) {
      m_abs = std::max(m_abs, std::fabs(m[i] - r[i]));
      t_abs = std::max(t_abs, std::fabs(t[i] - r[i]));
    }
  }
  row.mismatches += bad;
  row.m_max = std::max(row.m_max, m_max);
  row.t_max = std::max(row.t_max, t_max);
  if (bad > 0 && c.exact) {
    ADD_FAILURE() << where << ": " << bad << " of " << m.size()
                  << " elements differ from PyTorch; first at " << multi_index(want.shape, first)
                  << ": mpsim " << hex(m[first]) << ", PyTorch " << hex(t[first]);
    return false;
  }
  if (bad > 0) {
    ADD_FAILURE() << where << ": at " << bad << " of " << m.size()
                  << " elements mpsim is further from the float64 result than PyTorch; first at "
                  << multi_index(want.shape, first) << ": mpsim " << hex(m[first]) << " ("
                  << ulp_error(want.dtype, m[first], r[first]) << " ULP), PyTorch " << hex(t[first])
                  << " (" << ulp_error(want.dtype, t[first], r[first]) << " ULP), float64 "
                  << hex(r[first]);
    ok = false;
  }
  if (m_max > t_max || m_abs > t_abs) {
    ADD_FAILURE() << where << ": max error mpsim " << m_max << " ULP (" << m_abs
                  << " abs), PyTorch " << t_max << " ULP (" << t_abs << " abs)";
    ok = false;
  }
  return ok;
}

void print_table(const std::map<std::string, Row>& rows) {
  std::printf("\n%-18s %5s %9s %13s %13s %9s %9s  %s\n", "op", "cases", "elements", "mpsim max ULP",
              "torch max ULP", "mpsim CR", "torch CR", "result");
  for (const auto& [op, row] : rows) {
    std::string result = row.failed ? "FAIL" : "pass";
    if (row.mismatches > 0) result += ", " + std::to_string(row.mismatches) + " mismatches";
    if (row.known > 0) result += ", " + std::to_string(row.known) + " known mismatches";
    if (row.exact) {
      std::printf("%-18s %5d %9lld %13s %13s %9s %9s  %s\n", op.c_str(), row.cases,
                  static_cast<long long>(row.elements), "exact", "exact", "-", "-", result.c_str());
    } else {
      const double n = static_cast<double>(row.elements) / 100;
      std::printf("%-18s %5d %9lld %13.4f %13.4f %8.3f%% %8.3f%%  %s\n", op.c_str(), row.cases,
                  static_cast<long long>(row.elements), row.m_max, row.t_max, row.m_cr / n,
                  row.t_cr / n, result.c_str());
    }
  }
  std::printf(
      "\nULP: |x - r| / spacing of the output dtype at r, r = PyTorch float64 (max over all "
      "elements but known mismatches); CR: share of elements correctly rounded from r "
      "(error <= 0.5 ULP). Known mismatches (Note [known mismatches]):\n");
  for (const KnownMismatch& k : known_mismatches())
    std::printf("  %s: %zu elements: %s\n", std::string(k.case_name).c_str(), k.elements.size(),
                std::string(k.cause).c_str());
}

// The error measure itself, on values whose ULP distances are known.
TEST(Conformance, UlpErrorMeasure) {
  const double one_up = std::nextafter(1.0f, 2.0f);
  EXPECT_EQ(ulp_error(DType::Float32, one_up, 1.0), 1.0);
  EXPECT_EQ(ulp_error(DType::Float32, 1.0, 1.0 + 0x1p-25), 0.25);  // correctly rounded
  EXPECT_EQ(ulp_error(DType::Float32, 1.0, 1.0 - 0x1p-26), 0.25);  // r's binade: 2^-24
  EXPECT_EQ(ulp_error(DType::Float32, 0x1p-149, 0x1p-150), 0.5);   // subnormal spacing
  EXPECT_EQ(ulp_error(DType::BFloat16, 1.0 + 0x1p-7, 1.0), 1.0);
  EXPECT_EQ(ulp_error(DType::Float16, 0x1p-24, 0.0), 1.0);  // f16 subnormal spacing
  EXPECT_EQ(ulp_error(DType::Float32, NAN, NAN), 0.0);
  EXPECT_EQ(ulp_error(DType::Float32, 0.0, NAN), INFINITY);
  EXPECT_EQ(ulp_error(DType::Float32, INFINITY, INFINITY), 0.0);
  EXPECT_EQ(ulp_error(DType::Float32, 3.4e38, INFINITY), INFINITY);
  EXPECT_EQ(ulp_error(DType::Float32, INFINITY, 3.4e38), INFINITY);
  EXPECT_EQ(ulp_error(DType::Float32, INFINITY, 0x1p128 - 0x1p103), 0.0);  // rounds to inf
  EXPECT_EQ(ulp_error(DType::Float32, 0x1p128 - 0x1p104, 0x1p128 - 0x1p103), INFINITY);
  EXPECT_EQ(ulp_error(DType::Float16, INFINITY, 65520.0), 0.0);
  EXPECT_EQ(ulp_error(DType::Float16, 65504.0, 65519.0), 15.0 / 32);
  EXPECT_EQ(ulp_error(DType::Float32, -0.0, 0.0), INFINITY);  // the sign of an exact zero
  EXPECT_EQ(multi_index(Shape({5, 7, 11}), 2 * 77 + 3 * 11 + 4), "[2, 3, 4]");
}

bool torch_available() {
  const std::string cmd =
      std::string(MPSIM_CONFORMANCE_PYTHON) + " -c 'import torch, numpy' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

TEST(Conformance, EveryOpAgainstPyTorch) {
  if (!torch_available()) {
    GTEST_SKIP() << MPSIM_CONFORMANCE_PYTHON
                 << " cannot import torch and numpy: install the Debian packages python3-torch "
                    "and python3-numpy (scripts/install_deps.sh --tests does)";
  }
  const fs::path dir = fs::path(MPSIM_CONFORMANCE_OUTDIR);
  fs::remove_all(dir);
  const std::string cmd =
      std::string(MPSIM_CONFORMANCE_PYTHON) + " " + MPSIM_CONFORMANCE_SCRIPT + " " + dir.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "the case generator failed: " << cmd;
  const std::vector<Case> cases = read_manifest(dir);
  ASSERT_GT(cases.size(), 100u) << "too few cases in " << dir / "manifest.txt";

  std::map<std::string, Row> rows;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Row& row = rows[row_key(c)];
    ++row.cases;
    const auto fn = op_table().find(c.op);
    if (fn == op_table().end()) {
      ADD_FAILURE() << c.name << ": no runner for op " << c.op;
      ++row.failed;
      continue;
    }
    Inputs in;
    for (const auto& [name, file] : c.inputs) in[name] = load(dir, file);
    // The same values of "x" in the memory order PyTorch ran them in: "cl" channels-last
    // (NHWC), "t" the last two dims transposed in memory.
    const std::string layout = attr_or(c, "layout", "nchw");
    if (layout == "cl")
      in["x"] = in["x"].permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
    else if (layout == "t")
      in["x"] = in["x"].transpose(-1, -2).contiguous().transpose(-1, -2);
    std::vector<Tensor> outs;
    try {
      outs = fn->second(c, in);
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.name << ": mpsim threw: " << e.what();
      ++row.failed;
      continue;
    }
    bool ok = outs.size() == c.outputs.size();
    EXPECT_EQ(outs.size(), c.outputs.size()) << c.name;
    if (ok) {
      for (std::size_t k = 0; k < outs.size(); ++k)
        ok = check_output(c, k, outs[k], c.outputs[k], dir, row) && ok;
    }
    row.failed += !ok;
  }
  print_table(rows);
}

}  // namespace
}  // namespace mpsim
