// The sub-commands of the `mpsim` program.
#pragma once

#include <functional>

namespace CLI {
class App;
}  // namespace CLI

namespace mpsim::tools {

// Exit statuses shared by the commands: 0 success, 1 a failed check (compare: not within
// tolerance), 2 bad input (usage, files, unknown op or attribute, an op's own error).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;

// Each add_*_command registers its sub-command and options on `app`; the function it returns
// runs the command once the command line is parsed and gives the exit status.
std::function<int()> add_info_command(CLI::App& app);
std::function<int()> add_run_command(CLI::App& app);
std::function<int()> add_compare_command(CLI::App& app);

// Commands that parse their own arguments; argv[0] is the command's name.
int demo_main(int argc, char** argv);
// Run `python3 -m mpsim.testing check` and `python3 -m mpsim.batch` with the arguments after
// the command's name (check_command.cc).
int check_main(int argc, char** argv);
int batch_main(int argc, char** argv);

}  // namespace mpsim::tools
