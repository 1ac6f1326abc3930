// `mpsim run OP --in a.npy ... --attr name=value ... --out out.npy`: one op of the registry on
// .npy files. Tensor arguments take the --in files in order; the others come from --attr, parsed
// by their declared kind (core/op_registry.h).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/mpsim.h"
#include "core/op_registry.h"
#include "tools/commands.h"
#include "tools/npy.h"

namespace mpsim::tools {
namespace {

struct RunOptions {
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> attrs;
  std::vector<std::string> outputs;
  std::string device = "cpu";
  std::string precision = "golden";
  std::uint64_t seed = 0;
  bool seeded = false;  // --seed was given
  bool fallback = false;
  bool json = false;
};

std::string attribute_names(const OpSignature& sig) {
  std::string out;
  for (const ArgSpec& a : sig.args) {
    if (a.kind == ArgKind::Tensor || a.kind == ArgKind::TensorList) continue;
    out += (out.empty() ? "" : ", ") + std::string(a.name);
  }
  return out.empty() ? "(none)" : out;
}

std::string tensor_names(const OpSignature& sig) {
  std::string out;
  for (const ArgSpec& a : sig.args) {
    if (accepts_tensor(a.kind)) out += (out.empty() ? "" : ", ") + std::string(a.name);
  }
  return out.empty() ? "(none)" : out;
}

// The op's arguments by name: --attr values parsed by kind, then the --in tensors, in order, for
// the tensor arguments that no --attr gave, then the device.
std::vector<std::pair<std::string, ArgValue>> named_arguments(const RunOptions& o,
                                                              const OpSignature& sig,
                                                              Device device) {
  const std::string where = "[run] ";
  std::vector<std::pair<std::string, ArgValue>> named;
  std::set<std::string> given;
  for (const std::string& attr : o.attrs) {
    const std::size_t eq = attr.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw SignatureError(where + "expected --attr name=value, got '" + attr + "'");
    }
    const std::string name = attr.substr(0, eq);
    const auto spec = std::find_if(sig.args.begin(), sig.args.end(),
                                   [&](const ArgSpec& a) { return a.name == name; });
    if (spec == sig.args.end() || spec->kind == ArgKind::Tensor ||
        spec->kind == ArgKind::TensorList) {
      throw SignatureError(where + "unknown attribute '" + name + "' for op '" +
                           std::string(sig.name) + "'; expected one of: " + attribute_names(sig) +
                           (spec == sig.args.end() ? "" : " ('" + name + "' is an --in tensor)"));
    }
    if (!given.insert(name).second) {
      throw SignatureError(where + "attribute '" + name + "' is given twice");
    }
    named.emplace_back(name, parse_arg(*spec, attr.substr(eq + 1), sig.name));
  }
  std::vector<Tensor> files;
  for (const std::string& path : o.inputs) files.push_back(read_npy(path).to(device));
  std::size_t next = 0;
  for (const ArgSpec& a : sig.args) {
    if (given.contains(std::string(a.name))) continue;
    if (a.kind == ArgKind::TensorList) {
      named.emplace_back(a.name, std::vector<Tensor>(files.begin() + next, files.end()));
      next = files.size();
    } else if (accepts_tensor(a.kind) && next < files.size()) {
      named.emplace_back(a.name, files[next++]);
    } else if (a.kind == ArgKind::Device) {
      named.emplace_back(a.name, device);
    }
  }
  if (next < files.size()) {
    throw SignatureError(where + "op '" + std::string(sig.name) + "' takes at most " +
                         std::to_string(next) + " tensor input(s) here (" + tensor_names(sig) +
                         ") but " + std::to_string(files.size()) + " --in files were given");
  }
  return named;
}

int run_op(const RunOptions& o) {
  const OpSignature& sig = find_signature(o.op);
  const Device device(o.device);
  const PrecisionGuard precision(parse_precision(o.precision));
  if (o.fallback) set_fallback_enabled(true);
  if (o.seeded) manual_seed(o.seed);
  const std::vector<ArgValue> args = bind_arguments(sig, {}, named_arguments(o, sig, device));
  std::vector<Tensor> results = call_op(sig, args);
  if (results.size() != o.outputs.size()) {
    throw InvalidArgument("[run] op '" + std::string(sig.name) + "' gives " +
                          std::to_string(results.size()) + " output(s), " +
                          std::to_string(o.outputs.size()) + " --out given");
  }
  // Host copies first (this synchronizes the device and surfaces its errors), files after.
  for (Tensor& t : results) t = t.to(Device::cpu()).contiguous();
  nlohmann::ordered_json outs = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    write_npy(o.outputs[i], results[i], o.inputs);
    outs.push_back({{"path", o.outputs[i]},
                    {"shape", results[i].sizes().dims()},
                    {"dtype", dtype_name(results[i].dtype())}});
  }
  if (o.json) {
    nlohmann::ordered_json j = {{"op", sig.name},
                                {"device", device.to_string()},
                                {"precision", o.precision},
                                {"outputs", outs}};
    std::printf("%s\n", j.dump(2).c_str());
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "run one op on .npy files (golden outputs)");
  cmd->add_option("op", o->op, "op name, as in torch (mpsim info lists them)")->required();
  cmd->add_option("--in", o->inputs, "input .npy file; tensor arguments take them in order")
      ->allow_extra_args(false);
  cmd->add_option("--attr", o->attrs, "name=value for a non-tensor argument (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--out", o->outputs, "output .npy file, one per result")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--device", o->device, "cpu or mps (inputs move there)")
      ->check(CLI::IsMember({"cpu", "mps", "mps:0"}));
  cmd->add_option("--precision", o->precision, "golden (default) or fast")
      ->check(CLI::IsMember({"golden", "fast"}));
  CLI::Option* seed = cmd->add_option("--seed", o->seed, "manual_seed before the op (random ops)");
  cmd->add_flag("--fallback", o->fallback, "run ops the device lacks on the cpu fallback");
  cmd->add_flag("--json", o->json, "print the outputs as JSON");
  return [o, seed] {
    o->seeded = seed->count() > 0;
    return run_op(*o);
  };
}

}  // namespace mpsim::tools
