// Writing an output file without destroying what the path names (Note [safe outputs]).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace mpsim {

// Note [safe outputs]
// Every file mpsim writes for a user (`mpsim run --out`, `alloc-replay --timeline`, the
// profiler's Chrome trace, `demo --trace`) goes through write_output_file, which decides by
// what `path` names now:
// - nothing, or a regular file: the bytes go to a temporary file in the same directory, renamed
//   over `path` once complete, so the file appears whole or not at all (a failed write leaves
//   the old file); a regular file without write permission is refused, not replaced;
// - a symbolic link: the same, at the file it points to (the link stays a link);
// - a FIFO, a character device (/dev/null, /dev/stdout), a socket: written through, in place,
//   as np.save does; an error of the write (ENOSPC of /dev/full) is reported;
// - a directory, or the same file as one of `inputs` (also through another name or link):
//   refused before anything is written.
// Errors are InvalidArgument: "[<what>] cannot write '<path>': <reason>".
//
// `write(fd)` writes the contents to the open descriptor and returns false (errno set) when a
// write fails.
void write_output_file(const std::string& path, std::string_view what,
                       const std::function<bool(int fd)>& write,
                       std::span<const std::string> inputs = {});

// Writes all of `n` bytes at `data` to `fd` (retrying short writes and EINTR); false with errno
// set when a write fails.
bool write_all(int fd, const void* data, std::size_t n);

}  // namespace mpsim
