#include "base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "base/error.h"

namespace mpsim {
namespace {

[[noreturn]] void refuse(const std::string& path, std::string_view what, const std::string& why) {
  std::string message = "[";
  message.append(what).append("] cannot write '").append(path).append("': ").append(why);
  throw InvalidArgument(message);
}

// The file a symbolic link leads to (the path itself when it is not a link, or when the chain
// ends at nothing: the target is then created).
std::string resolved(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  if (real) return real.get();
  // A dangling link: follow it one step at a time to the name it points at.
  std::string target = path;
  for (int hops = 0; hops < 40; ++hops) {
    if (::lstat(target.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return target;
    std::string next(PATH_MAX, '\0');
    const ssize_t n = ::readlink(target.c_str(), next.data(), next.size());
    if (n < 0) return target;
    next.resize(static_cast<std::size_t>(n));
    if (!next.empty() && next[0] != '/') {
      const std::size_t slash = target.rfind('/');
      next = (slash == std::string::npos ? std::string() : target.substr(0, slash + 1)) + next;
    }
    target = next;
  }
  return target;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {
      errno = EIO;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void write_output_file(const std::string& path, std::string_view what,
                       const std::function<bool(int fd)>& write,
                       std::span<const std::string> inputs) {
  if (path.empty()) refuse(path, what, "the path is empty");
  const std::string target = resolved(path);
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists) {
    for (const std::string& input : inputs) {
      struct stat in {};
      if (::stat(input.c_str(), &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
        refuse(path, what, "it is the input '" + input + "'; choose another output");
      }
    }
    if (S_ISDIR(st.st_mode)) refuse(path, what, "it is a directory");
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A FIFO, a device or a socket: write through, as np.save does.
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) refuse(path, what, std::strerror(errno));
    const bool ok = write(fd);
    const int saved = errno;
    if (::close(fd) != 0 || !ok) refuse(path, what, std::strerror(ok ? errno : saved));
    return;
  }
  // A file without write permission is not replaced, also for root (who could write it).
  if (exists &&
      (::access(target.c_str(), W_OK) != 0 || (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0)) {
    refuse(path, what, "the file is read-only (not replaced)");
  }
  std::string tmp = target + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    refuse(path, what,
           "cannot create a temporary file in '" + directory_of(target) +
               "': " + std::strerror(errno));
  }
  bool ok = write(fd);
  int saved = errno;
  // mkstemp creates 0600; the file gets the mode it had, or what a plain open would give.
  mode_t mode = 0;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && std::rename(tmp.c_str(), target.c_str()) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    refuse(path, what, std::strerror(saved));
  }
}

}  // namespace mpsim
