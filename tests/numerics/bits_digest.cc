// bits_digest: a digest of a float32 unary op's golden results over all 2^32 inputs (or every
// STRIDE-th one), per SIMD target, so that two targets or two machines can be shown to give the
// same bits without an oracle. Where ulp_sweep has proven a target correctly rounded on every
// input, an equal digest on another target proves that one too: the way NEON is checked under
// qemu, where the kernels alone take minutes per op and ulp_sweep's oracles far longer
// (docs/numerics.md, NEON).
//
//   bits_digest [--op NAME|all] [--stride N] [--target NAME|all] [--blocks] [--expect FILE]
//               [--write-expect] [--range FIRST:END]
//
// The digest hashes each result's bits in input order, NaNs as one canonical NaN (the default
// NaN's sign is the hardware's: negative on x86, positive on ARM); the targets of one run must
// also agree on the NaNs' bits (else "NAN BITS DIFFER", exit 1). --blocks adds one digest
// per 2^24 inputs, to find where two runs part. --expect FILE compares with lines
// "op stride digest" (tests/numerics/bits_digests.txt, written from an ulp_sweep-proven target
// by --write-expect), prints "same" or "DIFFERENT" per op and target, and exits 1 on any
// difference or missing digest. --range FIRST:END takes the bit patterns FIRST <= b < END (hex)
// alone, every STRIDE-th from FIRST, to time or split a run; its digests are its own.
#include <CLI/CLI.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels_simd/simd_target.h"
#include "tests/numerics/oracle.h"

namespace {

using namespace mpsim;
using namespace mpsim::testing;

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

// FNV-1a over 32-bit words: enough to tell two result streams apart (not an adversary's hash).
// `canonical` hashes NaNs as one NaN, `exact` every bit.
struct Hashes {
  std::uint64_t canonical = kFnvOffset, exact = kFnvOffset;
};
Hashes hash_words(const float* v, std::size_t n) {
  Hashes h;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t w = bits_of(v[i]);
    h.canonical = (h.canonical ^ (std::isnan(v[i]) ? 0x7fc00000u : w)) * kFnvPrime;
    h.exact = (h.exact ^ w) * kFnvPrime;
  }
  return h;
}
std::uint64_t combine(std::uint64_t h, std::uint64_t part) {
  for (int s = 0; s < 64; s += 16) h = (h ^ ((part >> s) & 0xffff)) * kFnvPrime;
  return h;
}

struct Digest {
  std::uint64_t inputs = 0, whole = kFnvOffset, exact = kFnvOffset;
  std::vector<std::uint64_t> blocks;  // per 2^24 inputs of the sequence
};

Digest digest(const UnaryCase& c, std::uint64_t stride, std::uint64_t first, std::uint64_t end) {
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 22;  // inputs per tensor call
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 16;  // inputs per hashed piece
  constexpr std::uint64_t kBlock = std::uint64_t{1} << 24;  // inputs per reported block
  const std::uint64_t total = (end - first + stride - 1) / stride;
  Digest d;
  d.inputs = total;
  std::uint64_t block = kFnvOffset;
  std::vector<float> xs;
  std::vector<Hashes> pieces;
  for (std::uint64_t begin = 0; begin < total; begin += kChunk) {
    const std::uint64_t n = std::min(kChunk, total - begin);
    xs.resize(n);
    for (std::uint64_t i = 0; i < n; ++i)
      xs[i] = float_of(static_cast<std::uint32_t>(first + (begin + i) * stride));
    const std::vector<float> got = c.op(from_vector(xs)).to_vector<float>();
    pieces.assign((n + kPiece - 1) / kPiece, Hashes{});
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, pieces.size()),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t p = r.begin(); p < r.end(); ++p) {
                          const std::uint64_t lo = p * kPiece, hi = std::min(n, lo + kPiece);
                          pieces[p] = hash_words(got.data() + lo, hi - lo);
                        }
                      });
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      d.whole = combine(d.whole, pieces[p].canonical);
      d.exact = combine(d.exact, pieces[p].exact);
      block = combine(block, pieces[p].canonical);
      const std::uint64_t done = begin + std::min(n, (p + 1) * kPiece);
      if (done % kBlock == 0 || done == total) {
        d.blocks.push_back(block);
        block = kFnvOffset;
      }
    }
  }
  return d;
}

// "op stride digest" lines; '#' starts a comment.
std::map<std::pair<std::string, std::uint64_t>, std::uint64_t> read_expect(const std::string& path) {
  std::map<std::pair<std::string, std::uint64_t>, std::uint64_t> m;
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "bits_digest: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string op, hex;
    std::uint64_t stride = 0;
    if (!(s >> op >> stride >> hex)) {
      std::fprintf(stderr, "bits_digest: bad line in %s: %s\n", path.c_str(), line.c_str());
      std::exit(2);
    }
    m[{op, stride}] = std::strtoull(hex.c_str(), nullptr, 16);
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::string op = "all", target = "all", expect_path, range;
  std::uint64_t stride = 1, first = 0, end = std::uint64_t{1} << 32;
  bool blocks = false, write_expect = false;
  CLI::App app{"Digests of the golden float32 results of the unary ops over their inputs."};
  app.add_option("--op", op, "an op of tests/numerics/oracle.h's list, or all");
  app.add_option("--stride", stride, "every STRIDE-th input")->check(CLI::PositiveNumber);
  app.add_option("--target", target, "a SIMD target, or all");
  app.add_flag("--blocks", blocks, "a digest per 2^24 inputs too");
  app.add_option("--expect", expect_path, "compare with FILE's \"op stride digest\" lines")
      ->check(CLI::ExistingFile);
  app.add_flag("--write-expect", write_expect, "print \"op stride digest\" lines");
  app.add_option("--range", range, "FIRST:END, bit patterns in hex: FIRST <= b < END");
  CLI11_PARSE(app, argc, argv);
  if (!range.empty()) {
    const std::size_t colon = range.find(':');
    char* stop = nullptr;
    first = std::strtoull(range.c_str(), &stop, 16);
    end = colon == std::string::npos ? 0 : std::strtoull(range.c_str() + colon + 1, nullptr, 16);
    if (colon == std::string::npos || stop != range.c_str() + colon || first >= end ||
        end > (std::uint64_t{1} << 32)) {
      std::fprintf(stderr, "bits_digest: --range wants FIRST:END in hex, FIRST < END <= 2^32\n");
      return 2;
    }
  }
  const bool whole = first == 0 && end == (std::uint64_t{1} << 32);
  if (write_expect && !whole) {
    std::fprintf(stderr, "bits_digest: --write-expect takes whole runs only\n");
    return 2;
  }
  const auto expect = expect_path.empty()
                          ? std::map<std::pair<std::string, std::uint64_t>, std::uint64_t>{}
                          : read_expect(expect_path);
  const std::vector<std::string> targets =
      target == "all" ? simd::available_targets() : std::vector<std::string>{target};
  bool all_same = true, found = false;
  for (const UnaryCase& c : unary_cases()) {
    if (op != "all" && op != c.name) continue;
    found = true;
    std::uint64_t first_exact = 0;
    for (const std::string& t : targets) {
      simd::restrict_targets(t);
      const Digest d = digest(c, stride, first, end);
      simd::reset_targets();
      // The targets of one machine agree on every bit, NaNs' included.
      if (&t == &targets.front()) first_exact = d.exact;
      const bool nan_bits_agree = d.exact == first_exact;
      all_same = all_same && nan_bits_agree;
      const std::string name(c.name);
      if (write_expect) {
        std::printf("%s %" PRIu64 " %016" PRIx64 "\n", name.c_str(), stride, d.whole);
      } else {
        std::printf("%-11s %-7s %12" PRIu64 " %016" PRIx64, name.c_str(), t.c_str(), d.inputs,
                    d.whole);
        if (!expect_path.empty() && whole) {
          const auto it = expect.find({name, stride});
          if (it == expect.end()) {
            std::printf("  NO EXPECTED DIGEST");
            all_same = false;
          } else {
            const bool same = it->second == d.whole;
            all_same = all_same && same;
            std::printf("  %s", same ? "same" : "DIFFERENT");
          }
        }
        if (!nan_bits_agree) std::printf("  NAN BITS DIFFER FROM %s", targets.front().c_str());
        std::printf("\n");
      }
      if (blocks) {
        for (std::size_t b = 0; b < d.blocks.size(); ++b)
          std::printf("  block %3zu %016" PRIx64 "\n", b, d.blocks[b]);
      }
      std::fflush(stdout);
    }
  }
  if (!found) {
    std::fprintf(stderr, "bits_digest: no op named %s\n", op.c_str());
    return 2;
  }
  return all_same ? 0 : 1;
}
