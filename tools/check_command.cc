// `mpsim check OP --actual OUT.npy --in A.npy ... [--attr k=v] [--compute M] [--json]`: the
// verdict of mpsim.testing.check (docs/verdicts.md). The bounds are derived in one place, the
// Python package mpsim.testing, so this command runs it: `python3 -m mpsim.testing check ...`
// with this build's Python module first on PYTHONPATH. MPSIM_PYTHON names another interpreter.
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

int check_main(int argc, char** argv) {
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
  std::vector<char*> args;
  std::string module_flag = "-m", module = "mpsim.testing", command = "check";
  args.push_back(python.data());
  args.push_back(module_flag.data());
  args.push_back(module.data());
  args.push_back(command.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(python.c_str(), args.data());
  std::fprintf(stderr,
               "mpsim check: error: cannot run %s (%s): the check needs Python 3 with NumPy "
               "and mpsim's Python module (set MPSIM_PYTHON to the interpreter)\n",
               python.c_str(), std::strerror(errno));
  return kExitBadInput;
}

}  // namespace mpsim::tools
