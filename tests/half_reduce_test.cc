// float16 / bfloat16 accuracy of every reduction op: the outputs must equal the correctly
// rounded exact value in >= 99.9% of elements and lie within 1 ULP of the exact value in all,
// over >= 10,000 outputs per op and dtype, against the MPFR oracle of half_oracle.h (Note
// [half reduce oracle], Note [half reduce conditioning]); also the oracle's own rounding.
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

// ---- Reductions. ----

struct ReduceLayout {
  std::string name;
  Shape shape;
  IntList dims;
  bool transposed;
};

// Innermost and leading-dim reductions take different kernel paths (per-output walk, tiles of
// columns), transposed views and two reduced dims take strided and odometer walks, and rows
// longer than the driver's 16384-element chunk combine chunk partials.
std::vector<ReduceLayout> reduce_layouts() {
  std::vector<ReduceLayout> ls;
  for (std::int64_t l : {2, 3, 5, 7, 8, 9}) ls.push_back({"rows", {1009, l}, {1}, false});
  for (std::int64_t l : {16, 17, 31, 64}) ls.push_back({"rows", {401, l}, {1}, false});
  for (std::int64_t l : {100, 255}) ls.push_back({"rows", {101, l}, {1}, false});
  for (std::int64_t l : {2, 5, 13, 33, 300}) ls.push_back({"leading dim", {l, 257}, {0}, false});
  for (std::int64_t l : {3, 11, 40}) ls.push_back({"rows, transposed view", {199, l}, {1}, true});
  for (std::int64_t l : {4, 23})
    ls.push_back({"leading dim, transposed view", {l, 151}, {0}, true});
  ls.push_back({"dims {1, 3}", {5, 7, 11, 13}, {1, 3}, false});
  ls.push_back({"dims {0, 2}", {5, 7, 11, 13}, {0, 2}, false});
  ls.push_back({"long rows", {3, 20000}, {1}, false});
  ls.push_back({"long leading dim", {20000, 3}, {0}, false});
  ls.push_back({"long rows, transposed view", {2, 4099}, {1}, true});
  return ls;
}

struct ReduceOp {
  std::string name;
  std::vector<std::string> outputs;  // one tally per output tensor
  std::function<std::vector<Tensor>(const Tensor&, const IntList&)> run;
  std::function<std::vector<Exact>(const Values&)> oracle;  // one per output tensor
  Sampler sampler = normal_group;
  Condition condition = {};  // empty: no re-draws
};

void check_reduction(const ReduceOp& op, const Format& f) {
  std::vector<Tally> tallies;
  for (const std::string& name : op.outputs) tallies.emplace_back(name, f);
  std::mt19937_64 rng(seed_of(op.name) ^ static_cast<std::uint64_t>(f.p));
  for (const ReduceLayout& layout : reduce_layouts()) {
    const auto groups = groups_of(layout.shape, layout.dims);
    const Bits in = draw(groups, layout.shape.numel(), op.sampler, op.condition, f, rng);
    const std::vector<Tensor> outs =
        op.run(make_tensor(in, layout.shape, f, layout.transposed), layout.dims);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      ASSERT_EQ(outs[k].numel(), static_cast<std::int64_t>(groups.size()));
      const Bits got = bits_of(outs[k], f);
      for (std::size_t m = 0; m < groups.size(); ++m) {
        const Values xs = values_at(in, groups[m], f);
        tallies[k].add(got[m], op.oracle(xs)[k], [&] {
          return op.outputs[k] + " " + f.name + ", " + layout.name + " " +
                 layout.shape.to_string() + " dims " + to_string(layout.dims) + ", output " +
                 std::to_string(m) + ": " + describe(xs, in, groups[m]);
        });
      }
    }
  }
  for (const Tally& t : tallies) t.finish();
}

std::vector<ReduceOp> reduce_ops() {
  auto one = [](auto f) {
    return [f](const Tensor& x, const IntList& d) { return std::vector<Tensor>{f(x, d)}; };
  };
  auto exact1 = [](auto f) { return [f](const Values& xs) { return std::vector<Exact>{f(xs)}; }; };
  return {
      {"sum",
       {"sum"},
       one([](const Tensor& x, const IntList& d) { return sum(x, d); }),
       exact1([](const Values& xs) { return sum_of(xs).exact(); })},
      {"mean",
       {"mean"},
       one([](const Tensor& x, const IntList& d) { return mean(x, d); }),
       exact1([](const Values& xs) {
         return (sum_of(xs) / Big(static_cast<long double>(xs.size()))).exact();
       })},
      {"prod",
       {"prod"},
       one([](const Tensor& x, const IntList& d) { return prod(x, d); }),
       exact1([](const Values& xs) {
         Big p(1.0L);
         for (long double x : xs) p = p * x;
         return p.exact();
       }),
       product_group},
      {"var",
       {"var"},
       one([](const Tensor& x, const IntList& d) { return var(x, d); }),
       exact1([](const Values& xs) { return variance(xs, 1).exact(); }),
       normal_group,
       variance_condition},
      {"std",
       {"std"},
       one([](const Tensor& x, const IntList& d) { return mpsim::std(x, d); }),
       exact1([](const Values& xs) { return sqrt(variance(xs, 1)).exact(); }),
       normal_group,
       variance_condition},
      {"var_mean",
       {"var_mean (var)", "var_mean (mean)"},
       [](const Tensor& x, const IntList& d) {
         auto [v, m] = var_mean(x, d);
         return std::vector<Tensor>{v, m};
       },
       [](const Values& xs) {
         return std::vector<Exact>{variance(xs, 1).exact(),
                                   (sum_of(xs) / Big(static_cast<long double>(xs.size()))).exact()};
       },
       normal_group,
       variance_condition},
      {"norm",
       {"norm (p=2)"},
       one([](const Tensor& x, const IntList& d) { return norm(x, d); }),
       exact1([](const Values& xs) { return sqrt(sum_of_squares(xs)).exact(); })},
      {"amax",
       {"amax"},
       one([](const Tensor& x, const IntList& d) { return amax(x, d); }),
       exact1([](const Values& xs) {
         return Exact{*std::max_element(xs.begin(), xs.end()), false};
       })},
      {"amin",
       {"amin"},
       one([](const Tensor& x, const IntList& d) { return amin(x, d); }),
       exact1([](const Values& xs) {
         return Exact{*std::min_element(xs.begin(), xs.end()), false};
       })},
      {"logsumexp",
       {"logsumexp"},
       one([](const Tensor& x, const IntList& d) { return logsumexp(x, d); }),
       exact1([](const Values& xs) { return logsumexp_of(xs).exact(); }),
       logit_group,
       logsumexp_condition},
  };
}

class HalfReduce : public ::testing::TestWithParam<std::string> {};

TEST_P(HalfReduce, CorrectlyRoundedInF16AndBF16) {
  for (const ReduceOp& op : reduce_ops()) {
    if (op.name != GetParam()) continue;
    for (const Format& f : kFormats) check_reduction(op, f);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, HalfReduce,
                         ::testing::Values("sum", "mean", "prod", "var", "std", "var_mean", "norm",
                                           "amax", "amin", "logsumexp"),
                         [](const auto& info) { return info.param; });

// The oracle's own rounding, on cases worked by hand: ties to even, the sticky bit breaking a
// tie, carries into the next binade, subnormals and overflow.
TEST(HalfOracle, RoundToNearestEvenByHand) {
  EXPECT_EQ(round_to_format({1.0L + 0x1p-11L, false}, kF16), 0x3c00);      // tie: to even (1.0)
  EXPECT_EQ(round_to_format({1.0L + 0x1p-11L, true}, kF16), 0x3c01);       // above the tie
  EXPECT_EQ(round_to_format({1.0L + 3 * 0x1p-11L, false}, kF16), 0x3c02);  // tie: to even
  EXPECT_EQ(round_to_format({2.0L - 0x1p-12L, false}, kF16), 0x4000);      // carry to 2.0
  EXPECT_EQ(round_to_format({0x1p-25L, false}, kF16), 0x0000);  // tie with 0: to even (0)
  EXPECT_EQ(round_to_format({0x1p-25L, true}, kF16), 0x0001);   // smallest subnormal
  EXPECT_EQ(round_to_format({3 * 0x1p-25L, false}, kF16), 0x0002);
  EXPECT_EQ(round_to_format({65504.0L, false}, kF16), 0x7bff);
  EXPECT_EQ(round_to_format({65519.0L, true}, kF16), 0x7bff);
  EXPECT_EQ(round_to_format({65520.0L, false}, kF16), 0x7c00);          // overflow
  EXPECT_EQ(round_to_format({-1.0L - 0x1p-8L, false}, kBF16), 0xbf80);  // tie: to even
  EXPECT_EQ(round_to_format({-1.0L - 3 * 0x1p-8L, false}, kBF16), 0xbf82);
  EXPECT_EQ(round_to_format({0x1p-133L, false}, kBF16), 0x0001);  // smallest subnormal
  for (std::uint32_t b = 0; b < 0x10000; ++b) {  // every finite pattern decodes and re-encodes
    for (const Format& f : kFormats) {
      const long double v = decode(static_cast<std::uint16_t>(b), f);
      if (std::isfinite(v)) {
        ASSERT_EQ(round_value(v, f), b) << f.name << " 0x" << std::hex << b;
      }
    }
  }
  EXPECT_EQ(decode(0x3555, kF16), 0x1.554p-2L);
  EXPECT_EQ(decode(0x3eab, kBF16), 0x1.56p-2L);
}

}  // namespace
}  // namespace mpsim::testing
