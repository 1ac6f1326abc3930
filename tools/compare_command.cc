// `mpsim compare ACTUAL.npy EXPECTED.npy`: torch.testing.assert_close's decision with the
// statistics a kernel author needs (tools/compare.h). Exit 0 within tolerance, 1 not, 2 bad input.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/mpsim.h"
#include "tools/cli_checks.h"
#include "tools/commands.h"
#include "tools/compare.h"
#include "tools/npy.h"

namespace mpsim::tools {
namespace {

using json = nlohmann::ordered_json;

struct CompareArgs {
  std::string actual;
  std::string expected;
  double rtol = 0;
  double atol = 0;
  std::uint64_t ulp = 0;
  bool equal_nan = false;
  int max_listed = 10;
  bool json = false;
};

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string out = "(";
  for (std::size_t i = 0; i < index.size(); ++i) out += (i ? ", " : "") + std::to_string(index[i]);
  return out + ")";
}

// Finite doubles print as JSON numbers; inf and nan (which JSON lacks) as strings.
json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

json result_json(const CompareArgs& a, const Tensor& actual, const CompareResult& r) {
  json j = {{"actual", a.actual},
            {"expected", a.expected},
            {"passed", r.passed},
            {"dtype", dtype_name(actual.dtype())},
            {"shape", actual.sizes().dims()}};
  if (!r.problem.empty()) {
    j["problem"] = r.problem;
    return j;
  }
  if (r.max_ulp) {
    j["ulp"] = *r.max_ulp;
  } else {
    j["rtol"] = r.tolerance.rtol;
    j["atol"] = r.tolerance.atol;
  }
  j["equal_nan"] = a.equal_nan;
  j["numel"] = r.numel;
  j["mismatches"] = r.mismatches;
  j["max_abs_error"] = {{"value", number(r.max_abs_error)}, {"index", r.max_abs_index}};
  j["max_rel_error"] = {{"value", number(r.max_rel_error)}, {"index", r.max_rel_index}};
  j["max_ulp"] = r.max_ulp_seen;
  json hist = json::array();
  for (const UlpBucket& b : r.ulp_histogram) hist.push_back({{"ulp", b.label}, {"count", b.count}});
  j["ulp_histogram"] = hist;
  json first = json::array();
  for (const Mismatch& m : r.first) {
    json e = {{"index", m.index},
              {"actual", number(m.actual)},
              {"expected", number(m.expected)},
              {"abs_error", number(m.abs_error)}};
    e["ulp"] = m.ulp ? json(*m.ulp) : json(nullptr);
    first.push_back(std::move(e));
  }
  j["first_mismatches"] = first;
  return j;
}

void print_text(const CompareArgs& a, const Tensor& actual, const CompareResult& r,
                bool default_tolerance) {
  std::printf("actual:   %s\nexpected: %s\n", a.actual.c_str(), a.expected.c_str());
  if (!r.problem.empty()) {
    std::printf("FAIL: %s\n", r.problem.c_str());
    return;
  }
  std::printf("dtype %s, shape %s, %lld elements\n",
              std::string(dtype_name(actual.dtype())).c_str(), actual.sizes().to_string().c_str(),
              static_cast<long long>(r.numel));
  if (r.max_ulp) {
    std::printf("tolerance: ulp distance <= %llu%s\n", static_cast<unsigned long long>(*r.max_ulp),
                a.equal_nan ? ", NaN == NaN" : "");
  } else {
    std::printf("tolerance: rtol %.3g, atol %.3g%s%s\n", r.tolerance.rtol, r.tolerance.atol,
                default_tolerance ? " (torch.testing's default for the dtype)" : "",
                a.equal_nan ? ", NaN == NaN" : "");
  }
  std::printf(
      "mismatched elements: %lld / %lld (%.4g%%)\n", static_cast<long long>(r.mismatches),
      static_cast<long long>(r.numel),
      r.numel ? 100.0 * static_cast<double>(r.mismatches) / static_cast<double>(r.numel) : 0.0);
  if (!r.max_abs_index.empty() || r.numel > 0) {
    std::printf("greatest absolute difference: %.9g at index %s\n", r.max_abs_error,
                index_text(r.max_abs_index).c_str());
    std::printf("greatest relative difference: %.9g at index %s\n", r.max_rel_error,
                index_text(r.max_rel_index).c_str());
  }
  std::printf("ulp distance histogram (max %llu):\n",
              static_cast<unsigned long long>(r.max_ulp_seen));
  for (const UlpBucket& b : r.ulp_histogram) {
    std::printf("  %-16s %lld\n", b.label.c_str(), static_cast<long long>(b.count));
  }
  if (!r.first.empty()) {
    std::printf("first mismatches:\n");
    for (const Mismatch& m : r.first) {
      std::printf("  %s: actual %.9g, expected %.9g, |diff| %.3g, ulp %s\n",
                  index_text(m.index).c_str(), m.actual, m.expected, m.abs_error,
                  m.ulp ? std::to_string(*m.ulp).c_str() : "-");
    }
  }
  std::printf("%s\n", r.passed ? "PASS" : "FAIL");
}

}  // namespace

std::function<int()> add_compare_command(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "compare ACTUAL.npy with EXPECTED.npy (exit 0 close, 1 not, 2 bad input)");
  cmd->add_option("actual", a->actual, "the .npy file under test")->required();
  cmd->add_option("expected", a->expected, "the reference .npy file")->required();
  CLI::Option* rtol =
      cmd->add_option("--rtol", a->rtol, "relative tolerance")->check(finite_non_negative());
  CLI::Option* atol =
      cmd->add_option("--atol", a->atol, "absolute tolerance")->check(finite_non_negative());
  rtol->needs(atol);
  atol->needs(rtol);
  CLI::Option* ulp = cmd->add_option("--ulp", a->ulp, "pass when every ulp distance <= N")
                         ->check(integer_in(0, UINT64_MAX));
  ulp->excludes(rtol)->excludes(atol);
  cmd->add_flag("--equal-nan", a->equal_nan, "NaN compares equal to NaN");
  cmd->add_option("--max-mismatches", a->max_listed, "mismatches listed (default 10)")
      ->check(integer_in(0, INT32_MAX));
  cmd->add_flag("--json", a->json, "print one JSON object");
  return [a, rtol, ulp] {
    const Tensor actual = read_npy(a->actual);
    const Tensor expected = read_npy(a->expected);
    CompareOptions options;
    if (rtol->count() > 0) options.tolerance = Tolerance{a->rtol, a->atol};
    if (ulp->count() > 0) options.max_ulp = a->ulp;
    options.equal_nan = a->equal_nan;
    options.max_listed = a->max_listed;
    const CompareResult r = compare_tensors(actual, expected, options);
    if (a->json) {
      std::printf("%s\n", result_json(*a, actual, r).dump(2).c_str());
    } else {
      print_text(*a, actual, r, rtol->count() == 0);
    }
    return r.passed ? kExitOk : kExitFailed;
  };
}

}  // namespace mpsim::tools
