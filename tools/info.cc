// `mpsim info`: version, SIMD target, threads, devices, and every op with its dtypes per device.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/mpsim.h"
#include "core/op_registry.h"
#include "device_sim/mps.h"
#include "kernels_simd/simd_target.h"
#include "kernels_simd/unary.h"
#include "tools/commands.h"

namespace mpsim::tools {
namespace {

using json = nlohmann::ordered_json;

std::vector<std::string> supported_dtypes(DeviceType device, OpId op) {
  std::vector<std::string> out;
  if (!has_backend(device)) return out;
  const Backend& backend = backend_for(Device(device));
  for (int d = 0; d < kNumDTypes; ++d) {
    if (backend.supports(op, static_cast<DType>(d)))
      out.emplace_back(dtype_name(static_cast<DType>(d)));
  }
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : " ") + s;
  return out.empty() ? "-" : out;
}

json signature_json(const OpSignature& sig) {
  json args = json::array();
  for (const ArgSpec& a : sig.args) {
    json arg = {{"name", a.name}, {"kind", arg_kind_name(a.kind)}, {"required", !a.default_value}};
    if (a.default_value) arg["default"] = arg_value_string(*a.default_value);
    args.push_back(std::move(arg));
  }
  return {
      {"name", sig.name}, {"signature", signature_string(sig)}, {"args", args}, {"doc", sig.doc}};
}

int run_info(bool as_json) {
  std::vector<std::string> targets = simd::available_targets();
  const bool has_mps = has_backend(DeviceType::MPS);
  json j = {
      {"version", MPSIM_VERSION},
      {"simd_target", simd::current_target()},
      {"available_targets", targets},
      {"threads", num_threads()},
      {"precision", precision_name(precision())},
      {"fast_kernels", simd::unary_fast_available()},
      {"fallback", fallback_enabled()},
  };
  json devices = json::array({{{"name", "cpu"}}});
  if (has_mps) {
    const mps::DeviceProperties& p = mps::properties();
    devices.push_back({{"name", "mps:0"}, {"profile", p.name}, {"memory_bytes", p.memory_bytes}});
  }
  j["devices"] = devices;
  json ops = json::array();
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op(static_cast<std::uint16_t>(i));
    ops.push_back({{"name", op.name()},
                   {"dtypes",
                    {{"cpu", supported_dtypes(DeviceType::CPU, op)},
                     {"mps", supported_dtypes(DeviceType::MPS, op)}}}});
  }
  j["ops"] = ops;
  json sigs = json::array();
  for (const OpSignature& sig : op_signatures()) sigs.push_back(signature_json(sig));
  j["signatures"] = sigs;
  if (as_json) {
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }

  std::string available;
  for (const std::string& t : targets) available += (available.empty() ? "" : ", ") + t;
  std::printf("mpsim %s\n", MPSIM_VERSION);
  std::printf("simd target:       %s (available: %s; restrict with MPSIM_SIMD_TARGETS)\n",
              simd::current_target().c_str(), available.c_str());
  std::printf("threads:           %d\n", num_threads());
  std::printf("precision:         %s (MPSIM_PRECISION=golden|fast; fast float32 kernels %s)\n",
              std::string(precision_name(precision())).c_str(),
              simd::unary_fast_available() ? "on this target" : "not on this target: golden");
  if (has_mps) {
    const mps::DeviceProperties& p = mps::properties();
    std::printf(
        "devices:           cpu, mps:0 (%s, %.1f GiB unified memory; MPSIM_MPS_PROFILE, "
        "MPSIM_MPS_MEMORY)\n",
        p.name.c_str(), static_cast<double>(p.memory_bytes) / (1 << 30));
  } else {
    std::printf("devices:           cpu\n");
  }
  std::printf("fallback to cpu:   %s\n", fallback_enabled() ? "enabled" : "disabled");
  std::printf("\nkernels and their dtypes per device (MPSIM_MPS_DISABLE_OPS removes mps ones):\n");
  std::printf("  %-14s %-58s %s\n", "op", "cpu", "mps");
  for (const json& op : ops) {
    std::printf("  %-14s %-58s %s\n", op["name"].get<std::string>().c_str(),
                joined(op["dtypes"]["cpu"]).c_str(), joined(op["dtypes"]["mps"]).c_str());
  }
  std::printf("\nops callable by name (`mpsim run OP`, the Python module):\n");
  for (const OpSignature& sig : op_signatures()) {
    std::printf("  %s\n", signature_string(sig).c_str());
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_info_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "version, SIMD target, threads, devices, ops");
  auto as_json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *as_json, "print one JSON object");
  return [as_json] { return run_info(*as_json); };
}

}  // namespace mpsim::tools
