// The mpsim error hierarchy and internal-invariant checks.
//
// This header is the one leaf every layer shares (allocator/ included): it depends on nothing
// in the project, so including it from below core does not invert the dependency arrows.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

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

namespace detail {
[[noreturn]] void check_failed(const char* expr, const std::source_location& where);
}  // namespace detail

}  // namespace mpsim

// Internal invariants (never user input): abort with the failing expression and its location.
#define MPSIM_CHECK(cond)                                                    \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      ::mpsim::detail::check_failed(#cond, std::source_location::current()); \
  } while (0)
#ifdef NDEBUG
#define MPSIM_DCHECK(cond) \
  do {                     \
  } while (0)
#else
#define MPSIM_DCHECK(cond) MPSIM_CHECK(cond)
#endif
