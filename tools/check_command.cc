// `mpsim check ...` and `mpsim batch ...`: the verdict of mpsim.testing.check (docs/verdicts.md)
// and golden outputs for a manifest (docs/scale-out.md). Both live in one place, the Python
// package, so these commands run it: `python3 -m mpsim.testing check ...` and
// `python3 -m mpsim.batch ...`, with this build's Python module first on PYTHONPATH.
// MPSIM_PYTHON names another interpreter.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/commands.h"

namespace mpsim::tools {
namespace {

// Replaces this process with `python -m module [first] argv[1:]`; returns only on failure.
int run_python_module(const char* command, const char* module, const char* first, int argc,
                      char** argv) {
  const char* env_python = std::getenv("MPSIM_PYTHON");
#ifdef MPSIM_PYTHON_EXECUTABLE
  std::string python = env_python ? env_python : MPSIM_PYTHON_EXECUTABLE;
#else
  std::string python = env_python ? env_python : "python3";
#endif
#ifdef MPSIM_PYTHON_PATH
  struct stat st {};
  if (::stat(MPSIM_PYTHON_PATH, &st) == 0 && S_ISDIR(st.st_mode)) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path =
        std::string(MPSIM_PYTHON_PATH) + (old && *old ? ":" + std::string(old) : "");
    ::setenv("PYTHONPATH", path.c_str(), 1);
  }
#endif
  std::string module_flag = "-m", module_name = module, first_arg = first ? first : "";
  std::vector<char*> args = {python.data(), module_flag.data(), module_name.data()};
  if (first) args.push_back(first_arg.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(python.c_str(), args.data());
  std::fprintf(stderr,
               "mpsim %s: error: cannot run %s (%s): the command needs Python 3 with NumPy "
               "and mpsim's Python module (set MPSIM_PYTHON to the interpreter)\n",
               command, python.c_str(), std::strerror(errno));
  return kExitBadInput;
}

}  // namespace

int check_main(int argc, char** argv) {
  return run_python_module("check", "mpsim.testing", "check", argc, argv);
}

int batch_main(int argc, char** argv) {
  return run_python_module("batch", "mpsim.batch", nullptr, argc, argv);
}

}  // namespace mpsim::tools
