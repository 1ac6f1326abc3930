// `mpsim alloc-replay`: replays an allocation trace against our allocators and peer mallocs
// (statistics, a timeline, runs under a memory limit, the smallest limit that fits), or runs
// the random multi-threaded stress workload. See docs/allocator.md and docs/cli.md.
#pragma once

namespace mpsim::tools {

// argv[0] is "alloc-replay". Returns the process exit status: 0 on success, 1 when an invariant
// was violated, a block was corrupted or the trace did not fit under --limit, 2 on a usage
// error, a trace that cannot be read or parsed, or an allocator that is not installed.
int alloc_replay_main(int argc, char** argv);

}  // namespace mpsim::tools
