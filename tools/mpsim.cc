// The `mpsim` command-line program: parses, calls the library, prints.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string_view>

#include "tools/alloc_replay.h"
#include "tools/commands.h"

namespace {

void usage() {
  std::puts(
      "usage: mpsim COMMAND [ARGS]\n"
      "\n"
      "commands:\n"
      "  info    version, SIMD target, threads, devices\n"
      "  demo    the main job: ops on the cpu device, checked against a scalar oracle\n"
      "  alloc-replay TRACE | --stress   replay an allocation trace, or stress the allocator\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string_view command = argv[1];
  try {
    if (command == "info") return mpsim::tools::info_main(argc - 1, argv + 1);
    if (command == "demo") return mpsim::tools::demo_main(argc - 1, argv + 1);
    if (command == "alloc-replay") return mpsim::tools::alloc_replay_main(argc - 1, argv + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpsim %s: error: %s\n", argv[1], e.what());
    return 1;
  }
  std::fprintf(stderr, "mpsim: unknown command '%s'\n\n", argv[1]);
  usage();
  return 2;
}
