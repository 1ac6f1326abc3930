// Front ends of the random-number ops and linspace (Note [random numbers] in core/ops.h).
#include <cmath>
#include <mutex>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"

namespace mpsim {
namespace {

constexpr OpId kRandom = op_id("random");
constexpr std::uint64_t kDefaultSeed = 67280421310721u;  // PyTorch's default

struct Stream {
  std::mutex mu;
  std::uint64_t seed = kDefaultSeed;
  std::uint64_t offset = 0;  // next unused counter block
};

Stream& stream() {
  static Stream s;
  return s;
}

// Reserves the blocks for `numel` elements; returns (seed, first block).
std::pair<std::uint64_t, std::uint64_t> reserve(std::int64_t numel) {
  Stream& s = stream();
  std::lock_guard lock(s.mu);
  const std::uint64_t first = s.offset;
  s.offset += (static_cast<std::uint64_t>(numel) + 1) / 2;
  return {s.seed, first};
}

void require_floating(const char* op, DType dtype) {
  if (!is_floating(dtype)) {
    throw DTypeError(std::string("[") + op + "] expected a floating point dtype, got " +
                     std::string(dtype_name(dtype)));
  }
}

void check_probability(const char* op, double p) {
  if (!(p >= 0 && p <= 1)) {
    throw InvalidArgument(std::string("[") + op + "] probability must be in [0, 1], got " +
                          std::to_string(p));
  }
}

// Fills `out` (and reads `input`, when given) with the distribution `dist`.
// Draws `out` from `dist`; params as RandomParams documents them (seed and offset are taken
// from the stream here).
Tensor run_random(RandomDist dist, Tensor out, std::vector<Tensor> inputs, double a, double b,
                  std::int64_t low = 0, std::uint64_t range = 0) {
  if (out.numel() == 0) return out;
  const auto [seed, offset] = reserve(out.numel());
  const DType dtype = out.dtype();
  dispatch(OpCall{kRandom, dtype, std::move(inputs), {out},
                  RandomParams{dist, seed, offset, a, b, low, range}});
  return out;
}

}  // namespace

void manual_seed(std::uint64_t seed) {
  Stream& s = stream();
  std::lock_guard lock(s.mu);
  s.seed = seed;
  s.offset = 0;
}

std::uint64_t initial_seed() {
  Stream& s = stream();
  std::lock_guard lock(s.mu);
  return s.seed;
}

Tensor uniform(const Shape& shape, double low, double high, DType dtype, Device device) {
  require_floating("uniform", dtype);
  if (!(low <= high) || !std::isfinite(high - low)) {
    throw InvalidArgument("[uniform] expected low <= high with a finite range, got [" +
                          std::to_string(low) + ", " + std::to_string(high) + ")");
  }
  return run_random(RandomDist::Uniform, empty(shape, dtype, device), {}, low, high);
}

Tensor rand(const Shape& shape, DType dtype, Device device) {
  return uniform(shape, 0, 1, dtype, device);
}

Tensor normal(double mean, double std, const Shape& shape, DType dtype, Device device) {
  require_floating("normal", dtype);
  if (!(std >= 0)) throw InvalidArgument("[normal] expected std >= 0, got " + std::to_string(std));
  return run_random(RandomDist::Normal, empty(shape, dtype, device), {}, mean, std);
}

Tensor randn(const Shape& shape, DType dtype, Device device) {
  return normal(0, 1, shape, dtype, device);
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, DType dtype,
               Device device) {
  if (low >= high) {
    throw InvalidArgument("[randint] expected low < high, got low " + std::to_string(low) +
                          " and high " + std::to_string(high));
  }
  // As torch: the values must be the dtype's (a floating dtype takes any, rounding them; bool
  // takes [0, 1]).
  if (is_integral(dtype, true)) {
    const auto [lowest, max] = visit_dtype(dtype, []<class T>() {
      if constexpr (std::is_integral_v<T>) {  // bool: [0, 1]
        return std::pair<std::int64_t, std::int64_t>{std::numeric_limits<T>::lowest(),
                                                     std::numeric_limits<T>::max()};
      } else {
        return std::pair<std::int64_t, std::int64_t>{0, 0};  // not reached: integral only
      }
    });
    const std::string range = " [" + std::to_string(lowest) + ", " + std::to_string(max) + "]";
    if (low < lowest) {
      throw InvalidArgument("[randint] from is out of bounds for " +
                            std::string(dtype_name(dtype)) + ": low " + std::to_string(low) +
                            " is outside" + range);
    }
    if (high - 1 > max) {
      throw InvalidArgument("[randint] to - 1 is out of bounds for " +
                            std::string(dtype_name(dtype)) + ": high - 1 = " +
                            std::to_string(high - 1) + " is outside" + range);
    }
  }
  // high - low in [1, 2^64 - 1], unsigned: no signed overflow for low = INT64_MIN,
  // high = INT64_MAX.
  const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  return run_random(RandomDist::Randint, empty(shape, dtype, device), {}, 0, 0, low, range);
}

Tensor bernoulli(const Tensor& p) {
  if (!p.defined()) throw InvalidArgument("[bernoulli] expected a defined tensor of probabilities");
  require_floating("bernoulli", p.dtype());
  for (double v : p.to_vector<double>()) check_probability("bernoulli", v);
  return run_random(RandomDist::Bernoulli, empty(p.sizes(), p.dtype(), p.device()), {p}, 0, 0);
}

Tensor dropout(const Tensor& x, double p, bool training) {
  if (!x.defined()) throw InvalidArgument("[dropout] expected a defined input");
  check_probability("dropout", p);
  require_floating("dropout", x.dtype());
  if (!training) return x.clone();
  return run_random(RandomDist::Dropout, empty(x.sizes(), x.dtype(), x.device()), {x}, p, 0);
}

Tensor linspace(double start, double end, std::int64_t steps, DType dtype, Device device) {
  if (steps < 0)
    throw InvalidArgument("[linspace] number of steps must be non-negative, got " +
                          std::to_string(steps));
  Tensor out = empty({steps}, dtype, device);
  if (is_integral(dtype, true)) {  // torch converts the ends to the integer type first
    visit_dtype(dtype, [&]<class T>() {
      start = static_cast<double>(convert<T>(start));
      end = static_cast<double>(convert<T>(end));
    });
  }
  if (steps > 0) {
    dispatch(OpCall{op_id("linspace"), dtype, {}, {out},
                    LinspaceParams{start, end}});
  }
  return out;
}

}  // namespace mpsim
