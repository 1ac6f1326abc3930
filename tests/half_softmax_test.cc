// float16 / bfloat16 accuracy of softmax and log_softmax: every element correctly rounded in
// >= 99.9% and within 1 ULP in all, over >= 10,000 outputs per op and dtype, against the MPFR
// oracle of half_oracle.h (Note [half reduce oracle], Note [half reduce conditioning]).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/mpsim.h"
#include "tests/half_oracle.h"

namespace mpsim::testing {
namespace {

// ---- softmax and log_softmax: every element of a group is an output. ----

struct DimLayout {
  std::string name;
  Shape shape;
  std::int64_t dim;
  bool transposed;
};

std::vector<DimLayout> softmax_layouts() {
  std::vector<DimLayout> ls;
  const std::pair<std::int64_t, std::int64_t> rows[] = {{500, 1},  {500, 2},  {400, 5}, {200, 16},
                                                        {100, 33}, {40, 100}, {5, 1000}};
  for (auto [r, l] : rows) ls.push_back({"rows", {r, l}, 1, false});
  ls.push_back({"leading dim", {7, 301}, 0, false});
  ls.push_back({"rows, transposed view", {97, 21}, 1, true});
  ls.push_back({"middle dim", {5, 7, 11}, 1, false});
  ls.push_back({"leading dim, transposed view", {13, 37}, 0, true});
  return ls;
}

void check_softmax(bool log_form, const Format& f) {
  const std::string op = log_form ? "log_softmax" : "softmax";
  Tally tally(op, f);
  std::mt19937_64 rng(log_form ? 21 : 22);
  for (const DimLayout& layout : softmax_layouts()) {
    const auto groups = groups_of(layout.shape, {layout.dim});
    const Bits in = draw(groups, layout.shape.numel(), logit_group, {}, f, rng);
    const Tensor x = make_tensor(in, layout.shape, f, layout.transposed);
    const Bits got = bits_of(log_form ? log_softmax(x, layout.dim) : softmax(x, layout.dim), f);
    for (const auto& g : groups) {
      const Values xs = values_at(in, g, f);
      const long double m = *std::max_element(xs.begin(), xs.end());
      Big s;
      for (long double v : xs) s = s + exp(Big(v) - m);
      const Big log_s = log(s);
      for (std::size_t j = 0; j < g.size(); ++j) {
        const Big y = log_form ? (Big(xs[j]) - m) - log_s : exp(Big(xs[j]) - m) / s;
        tally.add(got[static_cast<std::size_t>(g[j])], y.exact(), [&] {
          return op + " " + f.name + ", " + layout.name + " " + layout.shape.to_string() + " dim " +
                 std::to_string(layout.dim) + ", element " + std::to_string(j) +
                 " of the group: " + describe(xs, in, g);
        });
      }
    }
  }
  tally.finish();
}

TEST(HalfSoftmax, SoftmaxCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_softmax(false, f);
}
TEST(HalfSoftmax, LogSoftmaxCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_softmax(true, f);
}

}  // namespace
}  // namespace mpsim::testing
