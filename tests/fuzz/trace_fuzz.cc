// Fuzz target: the allocation trace parser (allocator/trace.h). Any text must parse or raise an
// mpsim::Error naming the line; a parsed trace must write back to text that parses to the same
// events.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "allocator/trace.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mpsim;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  alloc::Trace trace;
  try {
    trace = alloc::parse_trace(in, "fuzz");
  } catch (const Error&) {
    return 0;
  }
  std::ostringstream out;
  alloc::write_trace(trace, out);
  std::istringstream again(out.str());
  const alloc::Trace back = alloc::parse_trace(again, "round trip");
  if (back.events.size() != trace.events.size()) {
    std::fprintf(stderr, "trace_fuzz: %zu events written, %zu read back\n", trace.events.size(),
                 back.events.size());
    std::abort();
  }
  for (std::size_t i = 0; i < back.events.size(); ++i) {
    const alloc::TraceEvent &a = trace.events[i], &b = back.events[i];
    if (a.is_alloc != b.is_alloc || a.id != b.id || a.bytes != b.bytes) {
      std::fprintf(stderr, "trace_fuzz: event %zu changed in a round trip\n", i);
      std::abort();
    }
  }
  return 0;
}
