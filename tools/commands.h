// The sub-commands of the `mpsim` program; each takes argv with argv[0] = its own name.
#pragma once

namespace mpsim::tools {

int info_main(int argc, char** argv);
int demo_main(int argc, char** argv);

}  // namespace mpsim::tools
