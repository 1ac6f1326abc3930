// The mpsim error hierarchy and internal-invariant checks: the bottom layer (base/), which
// depends on nothing in the project. The allocators (allocator/) raise these errors and core
// re-exports them (core/error.h), so the arrows run base <- allocator <- core <- the rest and
// allocator/ builds and tests with base/ alone.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace mpsim {

// Base of every error mpsim throws for bad input or an exhausted resource. Messages name the
// op in brackets, the argument, what was expected and what was given:
//   [add] shapes [2, 3] and [4] cannot be broadcast: 3 vs 4 at dimension 1
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ShapeError : public Error {
  using Error::Error;
};
class DTypeError : public Error {
  using Error::Error;
};
class DeviceError : public Error {
  using Error::Error;
};
class OutOfMemoryError : public Error {
  using Error::Error;
};
class NotImplementedError : public Error {
  using Error::Error;
};
class InvalidArgument : public Error {
  using Error::Error;
};
// A matrix the linear algebra cannot factor as asked: singular, not positive definite (torch's
// torch.linalg.LinAlgError, a RuntimeError).
class LinAlgError : public Error {
  using Error::Error;
};

// Untrusted text (a file's bytes) fit for a message: control characters, quotes, backslashes
// and bytes outside ASCII as \xNN escapes, so a message is never cut at a NUL or garbled.
std::string printable(std::string_view text);

namespace detail {
// file, line and function: the check's __FILE__, __LINE__ and __func__ (std::source_location
// needs clang 15 with libstdc++; the fuzz build uses clang 14).
[[noreturn]] void check_failed(const char* expr, const char* file, int line, const char* function);
}  // namespace detail

}  // namespace mpsim

// Internal invariants (never user input): abort with the failing expression and its location.
#define MPSIM_CHECK(cond)                                                 \
  do {                                                                    \
    if (!(cond)) [[unlikely]]                                             \
      ::mpsim::detail::check_failed(#cond, __FILE__, __LINE__, __func__); \
  } while (0)
#ifdef NDEBUG
#define MPSIM_DCHECK(cond) \
  do {                     \
  } while (0)
#else
#define MPSIM_DCHECK(cond) MPSIM_CHECK(cond)
#endif
