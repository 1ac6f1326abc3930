// `mpsim alloc-replay`: replays an allocation trace against the buddy allocator or a peer
// malloc, or runs the random multi-threaded stress workload. See docs/allocator.md.
#pragma once

namespace mpsim::tools {

// argv[0] is "alloc-replay". Returns the process exit status: 0 on success, 1 when an invariant
// was violated or a block was corrupted, 2 on a usage error or an allocator that is not
// installed.
int alloc_replay_main(int argc, char** argv);

}  // namespace mpsim::tools
