// float16 / bfloat16 accuracy of the normalizations (layer_norm, rms_norm, group_norm NCHW and
// channels-last, batch_norm): every output correctly rounded in >= 99.9% and within 1 ULP in
// all, over >= 10,000 outputs per op and dtype, against the MPFR oracle of half_oracle.h (Note
// [half reduce oracle], Note [half reduce conditioning]).
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

// ---- Normalization. ----

// One group: (x - mean) / sqrt(var + eps) * w + b with the biased variance, or for rms
// x / sqrt(mean(x^2) + eps) * w.
std::vector<Exact> normalize(const Values& xs, const Values& ws, const Values& bs, double eps,
                             bool rms) {
  const Big n(static_cast<long double>(xs.size()));
  const Big mean = rms ? Big() : sum_of(xs) / n;
  Big ss;
  for (long double x : xs) {
    const Big c = Big(x) - mean;
    ss = ss + c * c;
  }
  const Big denom = sqrt(ss / n + Big(static_cast<long double>(eps)));
  std::vector<Exact> out;
  for (std::size_t j = 0; j < xs.size(); ++j)
    out.push_back(((Big(xs[j]) - mean) / denom * ws[j] + bs[j]).exact());
  return out;
}

// Affine parameters: weights +-[0.5, 2], biases [-2, 2], as 16-bit patterns.
Bits draw_weights(std::int64_t n, const Format& f, std::mt19937_64& rng) {
  Bits w(static_cast<std::size_t>(n));
  for (auto& b : w)
    b = round_value((uniform_int(rng, 0, 1) != 0 ? -1 : 1) * uniform(rng, 0.5, 2), f);
  return w;
}
Bits draw_biases(std::int64_t n, const Format& f, std::mt19937_64& rng) {
  Bits b(static_cast<std::size_t>(n));
  for (auto& v : b) v = round_value(uniform(rng, -2, 2), f);
  return b;
}

struct NormLayout {
  std::string name;
  Shape shape;
  std::int64_t normalized_dims;  // trailing
  bool transposed;
  bool affine;
};

std::vector<NormLayout> norm_layouts() {
  return {{"rows", {401, 3}, 1, false, true},
          {"rows", {301, 8}, 1, false, false},
          {"rows", {151, 17}, 1, false, true},
          {"rows", {41, 100}, 1, false, true},
          {"rows", {5, 1000}, 1, false, false},
          {"two trailing dims", {13, 7, 11}, 2, false, true},
          {"rows, transposed view", {61, 33}, 1, true, true},
          {"rows, transposed view", {40, 9}, 1, true, false}};
}

// layer_norm (eps 1e-5) or rms_norm (the default eps: torch.finfo(dtype).eps, 2^-10 for
// float16 and 2^-7 for bfloat16, as torch.nn.functional.rms_norm).
void check_trailing_norm(bool rms, const Format& f) {
  const std::string op = rms ? "rms_norm" : "layer_norm";
  Tally tally(op, f);
  std::mt19937_64 rng(rms ? 31 : 32);
  for (const NormLayout& layout : norm_layouts()) {
    const std::int64_t nd = layout.shape.ndim();
    IntList dims, normalized;
    for (std::int64_t d = nd - layout.normalized_dims; d < nd; ++d) {
      dims.push_back(d);
      normalized.push_back(layout.shape[static_cast<std::size_t>(d)]);
    }
    const Shape ps(normalized);
    const auto groups = groups_of(layout.shape, dims);
    const Bits in = draw(groups, layout.shape.numel(), normal_group, {}, f, rng);
    const Bits w = draw_weights(ps.numel(), f, rng), b = draw_biases(ps.numel(), f, rng);
    const Tensor x = make_tensor(in, layout.shape, f, layout.transposed);
    std::optional<Tensor> wt, bt;
    if (layout.affine) {
      wt = make_tensor(w, ps, f);
      bt = make_tensor(b, ps, f);
    }
    const Bits got =
        bits_of(rms ? rms_norm(x, normalized, wt) : layer_norm(x, normalized, wt, bt, 1e-5), f);
    const double eps = !rms ? 1e-5 : f.p == kF16.p ? 0x1p-10 : 0x1p-7;
    const std::int64_t per = ps.numel();  // element i uses parameter i mod per
    for (const auto& g : groups) {
      const Values xs = values_at(in, g, f);
      Values ws(xs.size(), 1), bs(xs.size(), 0);
      for (std::size_t j = 0; layout.affine && j < g.size(); ++j) {
        ws[j] = decode(w[static_cast<std::size_t>(g[j] % per)], f);
        if (!rms) bs[j] = decode(b[static_cast<std::size_t>(g[j] % per)], f);
      }
      const std::vector<Exact> want = normalize(xs, ws, bs, eps, rms);
      for (std::size_t j = 0; j < g.size(); ++j) {
        tally.add(got[static_cast<std::size_t>(g[j])], want[j], [&] {
          return op + " " + f.name + ", " + layout.name + " " + layout.shape.to_string() +
                 (layout.affine ? " affine" : "") + ", element " + std::to_string(j) +
                 " of the group (w " + std::to_string(static_cast<double>(ws[j])) + ", b " +
                 std::to_string(static_cast<double>(bs[j])) + "): " + describe(xs, in, g);
        });
      }
    }
  }
  tally.finish();
}

TEST(HalfNorm, LayerNormCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_trailing_norm(false, f);
}
TEST(HalfNorm, RmsNormCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_trailing_norm(true, f);
}

struct GroupNormCase {
  Shape nchw;
  std::int64_t groups;
  bool affine;
};

// group_norm (eps 1e-5) on NCHW inputs and on the same values stored channels-last; the two
// are tallied apart (the kernel walks a group contiguously or with the channel stride).
void check_group_norm(const Format& f) {
  Tally nchw_tally("group_norm (NCHW)", f), nhwc_tally("group_norm (channels-last)", f);
  std::mt19937_64 rng(41);
  const GroupNormCase cases[] = {{{2, 6, 5, 7}, 3, true},
                                 {{4, 16, 9, 11}, 8, true},
                                 {{1, 32, 13, 13}, 32, false},
                                 {{3, 10, 17, 3}, 5, true},
                                 {{2, 64, 4, 4}, 32, true}};
  for (const GroupNormCase& c : cases) {
    const std::int64_t n = c.nchw[0], ch = c.nchw[1], hw = c.nchw[2] * c.nchw[3];
    // Row-major [N, C, H, W] is row-major [N, G, C/G, H, W]: a group is the trailing three.
    const auto groups =
        groups_of(Shape({n, c.groups, ch / c.groups, c.nchw[2], c.nchw[3]}), {2, 3, 4});
    const Bits in = draw(groups, c.nchw.numel(), normal_group, {}, f, rng);
    const Bits w = draw_weights(ch, f, rng), b = draw_biases(ch, f, rng);
    const Tensor x = make_tensor(in, c.nchw, f);
    std::optional<Tensor> wt, bt;
    if (c.affine) {
      wt = make_tensor(w, {ch}, f);
      bt = make_tensor(b, {ch}, f);
    }
    const Bits got_nchw = bits_of(group_norm(x, c.groups, wt, bt, 1e-5), f);
    const Tensor cl = group_norm(channels_last(x), c.groups, wt, bt, 1e-5);
    EXPECT_EQ(cl.strides(), channels_last_strides(c.nchw));
    const Bits got_nhwc = bits_of(cl, f);
    for (const auto& g : groups) {
      const Values xs = values_at(in, g, f);
      Values ws(xs.size(), 1), bs(xs.size(), 0);
      for (std::size_t j = 0; c.affine && j < g.size(); ++j) {
        const auto channel = static_cast<std::size_t>((g[j] / hw) % ch);
        ws[j] = decode(w[channel], f);
        bs[j] = decode(b[channel], f);
      }
      const std::vector<Exact> want = normalize(xs, ws, bs, 1e-5, false);
      for (std::size_t j = 0; j < g.size(); ++j) {
        auto context = [&] {
          return std::string("group_norm ") + f.name + ", " + c.nchw.to_string() + " groups " +
                 std::to_string(c.groups) + (c.affine ? " affine" : "") + ", element " +
                 std::to_string(j) + " of the group: " + describe(xs, in, g);
        };
        nchw_tally.add(got_nchw[static_cast<std::size_t>(g[j])], want[j], context);
        nhwc_tally.add(got_nhwc[static_cast<std::size_t>(g[j])], want[j], context);
      }
    }
  }
  nchw_tally.finish();
  nhwc_tally.finish();
}

TEST(HalfNorm, GroupNormNchwAndChannelsLastCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_group_norm(f);
}

// batch_norm (inference, eps 1e-5): running statistics near each channel's own mean and
// variance (as after training), per-channel weights and biases; NCHW, channels-last and [N, C, L].
void check_batch_norm(const Format& f) {
  Tally tally("batch_norm", f);
  std::mt19937_64 rng(51);
  const std::pair<Shape, bool> cases[] = {
      {{5, 7, 11, 13}, false}, {{5, 7, 11, 13}, true}, {{64, 33, 3}, false}};
  for (const auto& [shape, cl] : cases) {
    const std::int64_t ch = shape[1], inner = shape.numel() / (shape[0] * ch);
    IntList dims;
    for (std::int64_t d = 0; d < shape.ndim(); ++d)
      if (d != 1) dims.push_back(d);
    const auto groups = groups_of(shape, dims);  // one per channel
    const Bits in = draw(groups, shape.numel(), normal_group, {}, f, rng);
    Bits rm(static_cast<std::size_t>(ch)), rv(rm.size());
    for (std::size_t c = 0; c < groups.size(); ++c) {
      const Values xs = values_at(in, groups[c], f);
      long double mu = 0, var = 0;
      for (long double x : xs) mu += x;
      mu /= static_cast<long double>(xs.size());
      for (long double x : xs) var += (x - mu) * (x - mu);
      var /= static_cast<long double>(xs.size());
      if (var == 0) var = 1;
      rm[c] = round_value(mu + std::sqrt(var) * uniform(rng, -0.5, 0.5), f);
      rv[c] = round_value(var * uniform(rng, 0.5, 2), f);
    }
    const Bits w = draw_weights(ch, f, rng), b = draw_biases(ch, f, rng);
    const Tensor x = cl ? channels_last(make_tensor(in, shape, f)) : make_tensor(in, shape, f);
    const Bits got =
        bits_of(batch_norm(x, make_tensor(rm, {ch}, f), make_tensor(rv, {ch}, f),
                           make_tensor(w, {ch}, f), make_tensor(b, {ch}, f), false, 0.1, 1e-5),
                f);
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % ch);
      const long double xv = decode(in[i], f), m = decode(rm[c], f), v = decode(rv[c], f);
      const Big y =
          (Big(xv) - m) / sqrt(Big(v) + Big(static_cast<long double>(1e-5))) * decode(w[c], f) +
          decode(b[c], f);
      tally.add(got[i], y.exact(), [&] {
        std::ostringstream s;
        s << "batch_norm " << f.name << ", " << shape.to_string() << (cl ? " channels-last" : "")
          << ", element " << i << ": x " << static_cast<double>(xv) << ", running_mean "
          << static_cast<double>(m) << ", running_var " << static_cast<double>(v) << ", weight "
          << static_cast<double>(decode(w[c], f)) << ", bias "
          << static_cast<double>(decode(b[c], f));
        return s.str();
      });
    }
  }
  tally.finish();
}

TEST(HalfNorm, BatchNormCorrectlyRoundedInF16AndBF16) {
  for (const Format& f : kFormats) check_batch_norm(f);
}

}  // namespace
}  // namespace mpsim::testing
