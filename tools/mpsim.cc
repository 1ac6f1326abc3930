// The `mpsim` command-line program: parses, calls the library, prints (docs/cli.md).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tools/alloc_replay.h"
#include "tools/commands.h"

namespace {

// Commands that parse their own arguments: registered for --help, run before CLI11 parses.
struct OwnParser {
  const char* name;
  const char* help;
  int (*main)(int, char**);
};
constexpr OwnParser kOwnParsers[] = {
    {"demo", "the main job: a Stable Diffusion 1.5 transformer block on the simulated mps device",
     mpsim::tools::demo_main},
    {"check",
     "judge a kernel's output within the error bound of its arithmetic (mpsim check --help)",
     mpsim::tools::check_main},
    {"batch", "golden outputs for a manifest of cases, sharded and resumable (mpsim batch --help)",
     mpsim::tools::batch_main},
    {"alloc-replay",
     "replay an allocation trace, or stress the allocator (mpsim alloc-replay --help)",
     mpsim::tools::alloc_replay_main},
};

}  // namespace

int main(int argc, char** argv) {
  using mpsim::tools::kExitBadInput;
  using mpsim::tools::kExitFailed;
  const std::string_view command = argc > 1 ? argv[1] : "";
  try {
    for (const OwnParser& p : kOwnParsers) {
      if (command == p.name) return p.main(argc - 1, argv + 1);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpsim %s: error: %s\n", argv[1], e.what());
    return kExitFailed;
  }

  CLI::App app("mpsim: a golden-reference tensor library and a simulated mps device", "mpsim");
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
  const auto add = [&](std::function<int()> (*add_command)(CLI::App&)) {
    std::function<int()> run = add_command(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(run));
  };
  add(mpsim::tools::add_info_command);
  add(mpsim::tools::add_run_command);
  add(mpsim::tools::add_compare_command);
  for (const OwnParser& p : kOwnParsers) app.add_subcommand(p.name, p.help)->allow_extras();

  if (!command.empty() && !command.starts_with('-')) {
    const auto subs = app.get_subcommands({});
    if (std::none_of(subs.begin(), subs.end(),
                     [&](CLI::App* s) { return s->get_name() == command; })) {
      std::string names;
      for (CLI::App* s : subs) names += (names.empty() ? "" : ", ") + s->get_name();
      std::fprintf(stderr, "mpsim: error: unknown command '%s' (expected one of: %s)\n",
                   std::string(command).c_str(), names.c_str());
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    const std::string_view sub = command.empty() ? "" : command;
    std::fprintf(stderr, "mpsim%s%s: error: %s (see mpsim %s--help)\n", sub.empty() ? "" : " ",
                 std::string(sub).c_str(), e.what(),
                 sub.empty() || sub.starts_with('-') ? "" : (std::string(sub) + " ").c_str());
    return kExitBadInput;
  }
  for (auto& [sub, run] : commands) {
    if (!sub->parsed()) continue;
    try {
      return run();
    } catch (const mpsim::Error& e) {
      std::fprintf(stderr, "mpsim %s: error: %s\n", sub->get_name().c_str(), e.what());
      return kExitBadInput;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mpsim %s: internal error: %s\n", sub->get_name().c_str(), e.what());
      return kExitFailed;
    }
  }
  return kExitBadInput;
}
