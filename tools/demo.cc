// `mpsim demo`: the main job. A Stable Diffusion 1.5 transformer block (the UNet's
// Transformer2DModel at the 64x64 latent: GroupNorm(32) -> 1x1 conv in -> LayerNorm ->
// self-attention with packed QKV -> LayerNorm -> cross-attention with packed KV over a
// [B, 77, 768] text context -> LayerNorm -> GEGLU feed-forward (BiasSplitGelu) -> 1x1 conv out,
// with residuals; the attentions are ONNX Runtime's MultiHeadAttention, as an SD pipeline
// exported for ORT runs them) on random weights from a fixed seed, run on the simulated mps
// device with fallback on and two ops disabled, checked bit for bit
// against the cpu golden path, and (for float16 / bfloat16) against float32. Prints per-op wall
// and simulated device time, memory, fallbacks and errors; --trace writes a Chrome trace.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/mpsim.h"
#include "device_sim/mps.h"
#include "tools/cli_checks.h"
#include "tools/commands.h"
#include "tools/progress.h"

namespace mpsim::tools {
namespace {

struct Options {
  std::string device = "mps";
  std::string dtype = "f32";
  std::string profile;
  std::string trace;
  int steps = 1;
  std::int64_t batch = 2, channels = 320, heads = 8, size = 64, context = 77, context_dim = 768;
  std::uint64_t seed = 0;
};

// The block's parameters, made on the cpu in float32 from the seed (scaled by 1/sqrt(fan_in)
// so activations stay O(1)), then converted and moved.
struct Weights {
  Tensor gn_w, gn_b, proj_in_w, proj_in_b;
  Tensor ln1_w, ln1_b, wqkv1, wo1, bo1;      // wqkv1: [3C, C], rows ordered (head, q/k/v, dim)
  Tensor ln2_w, ln2_b, wq2, wkv2, wo2, bo2;  // wkv2: [2C, context_dim], rows (head, k/v, dim)
  Tensor ln3_w, ln3_b, ff1_w, ff1_b, ff2_w, ff2_b;
  Tensor proj_out_w, proj_out_b;
  Tensor x, context;
};

Tensor param(const Shape& shape, double fan_in, DType dtype, Device device) {
  return (randn(shape) * (1.0 / std::sqrt(fan_in))).to(dtype).to(device);
}

Tensor around_one(std::int64_t n, DType dtype, Device device) {
  return (randn({n}) * 0.1 + 1.0).to(dtype).to(device);
}

Weights make_weights(const Options& o, DType dtype, Device device) {
  manual_seed(o.seed);
  const std::int64_t c = o.channels, ff = 4 * c;
  const double cd = static_cast<double>(c);
  Weights w;
  w.gn_w = around_one(c, dtype, device);
  w.gn_b = param({c}, 10, dtype, device);
  w.proj_in_w = param({c, c, 1, 1}, cd, dtype, device);
  w.proj_in_b = param({c}, cd, dtype, device);
  Tensor* lns[3][2] = {{&w.ln1_w, &w.ln1_b}, {&w.ln2_w, &w.ln2_b}, {&w.ln3_w, &w.ln3_b}};
  for (auto& ln : lns) {
    *ln[0] = around_one(c, dtype, device);
    *ln[1] = param({c}, 10, dtype, device);
  }
  w.wqkv1 = param({3 * c, c}, cd, dtype, device);
  w.wo1 = param({c, c}, cd, dtype, device);
  w.bo1 = param({c}, cd, dtype, device);
  const double ctx = static_cast<double>(o.context_dim);
  w.wq2 = param({c, c}, cd, dtype, device);
  w.wkv2 = param({2 * c, o.context_dim}, ctx, dtype, device);
  w.wo2 = param({c, c}, cd, dtype, device);
  w.bo2 = param({c}, cd, dtype, device);
  w.ff1_w = param({2 * ff, c}, cd, dtype, device);
  w.ff1_b = param({2 * ff}, cd, dtype, device);
  w.ff2_w = param({c, ff}, static_cast<double>(ff), dtype, device);
  w.ff2_b = param({c}, static_cast<double>(ff), dtype, device);
  w.proj_out_w = param({c, c, 1, 1}, cd, dtype, device);
  w.proj_out_b = param({c}, cd, dtype, device);
  w.x = randn({o.batch, c, o.size, o.size}).to(dtype).to(device);
  w.context = randn({o.batch, o.context, o.context_dim}).to(dtype).to(device);
  return w;
}

// [B, T, n * H * D] -> the packed view [B, T, H, n, D] (n = 3: QKV, 2: KV).
Tensor packed(const Tensor& t, std::int64_t heads, std::int64_t n) {
  return t.view({t.size(0), t.size(1), heads, n, t.size(2) / (heads * n)});
}

// Self-attention: one projection to packed QKV, MultiHeadAttention, the output projection.
Tensor self_attention(const Tensor& x, const Weights& w, std::int64_t heads) {
  return linear(multi_head_attention(packed(linear(x, w.wqkv1), heads, 3)), w.wo1, w.bo1);
}

// Cross-attention: queries from x, packed KV from the text context.
Tensor cross_attention(const Tensor& x, const Weights& w, std::int64_t heads) {
  const Tensor kv = packed(linear(w.context, w.wkv2), heads, 2);
  return linear(multi_head_attention(linear(x, w.wq2), kv), w.wo2, w.bo2);
}

// The block: diffusers' Transformer2DModel with one BasicTransformerBlock (SD 1.5).
Tensor sd_block(const Weights& w, const Options& o) {
  const std::int64_t b = o.batch, c = o.channels, hw = o.size * o.size;
  Tensor h = group_norm(w.x, 32, w.gn_w, w.gn_b, 1e-6);
  h = conv2d(h, w.proj_in_w, w.proj_in_b);
  h = h.permute({0, 2, 3, 1}).reshape({b, hw, c});  // tokens
  h = h + self_attention(layer_norm(h, {c}, w.ln1_w, w.ln1_b), w, o.heads);
  h = h + cross_attention(layer_norm(h, {c}, w.ln2_w, w.ln2_b), w, o.heads);
  // GEGLU: the projection's halves a, g give a * gelu(g), its bias added by BiasSplitGelu.
  const Tensor p = linear(layer_norm(h, {c}, w.ln3_w, w.ln3_b), w.ff1_w);
  h = h + linear(bias_split_gelu(p, w.ff1_b), w.ff2_w, w.ff2_b);
  h = h.reshape({b, o.size, o.size, c}).permute({0, 3, 1, 2});
  return conv2d(h, w.proj_out_w, w.proj_out_b) + w.x;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = std::fabs(static_cast<double>(x[i]) - y[i]);
    m = std::isnan(d) ? INFINITY : std::fmax(m, d);
  }
  return m;
}

double max_abs(const Tensor& a) {
  double m = 0;
  for (float v : a.to_vector<float>()) m = std::fmax(m, std::fabs(static_cast<double>(v)));
  return m;
}

DType parse_dtype(const std::string& s) {
  if (s == "f32" || s == "float32") return DType::Float32;
  if (s == "f16" || s == "float16") return DType::Float16;
  if (s == "bf16" || s == "bfloat16") return DType::BFloat16;
  throw InvalidArgument("[demo] --dtype must be f32, f16 or bf16, got '" + s + "'");
}

// The text report; with --json it is replaced by one JSON object (the same figures), printed
// at the end.
bool g_json = false;

[[gnu::format(printf, 1, 2)]] void say(const char* format, ...) {
  if (g_json) return;
  va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int demo_main(int argc, char** argv) {
  Options o;
  CLI::App app{"mpsim demo: a Stable Diffusion 1.5 transformer block on the simulated device"};
  app.add_option("--device", o.device, "mps | cpu")->check(CLI::IsMember({"mps", "cpu"}));
  app.add_option("--dtype", o.dtype, "f32 | f16 | bf16");
  app.add_option("--profile", o.profile, "chip profile, e.g. \"M2 Max\" (MPSIM_MPS_PROFILE)");
  app.add_option("--steps", o.steps, "block evaluations to time")->check(integer_in(1, 1000000));
  app.add_option("--trace", o.trace, "write a Chrome trace of the device's ops to this file");
  app.add_option("--size", o.size, "latent height and width (64: SD 1.5 at 512x512)")
      ->check(integer_in(8, 4096));
  app.add_option("--batch", o.batch, "batch size")->check(integer_in(1, 1 << 20));
  app.add_option("--seed", o.seed, "seed of the random weights and inputs")
      ->check(integer_in(0, UINT64_MAX));
  app.add_flag("--json", g_json, "print the report as one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help: 0; bad options: 2, as every command
  }
  if (!o.profile.empty()) setenv("MPSIM_MPS_PROFILE", o.profile.c_str(), 1);
  const DType dtype = parse_dtype(o.dtype);
  const Device device = o.device == "mps" ? Device::mps() : Device::cpu();
  const bool on_mps = device.is_mps();

  say("mpsim demo: Stable Diffusion 1.5 transformer block, latent [%lld, %lld, %lld, %lld], "
      "%lld heads, context [%lld, %lld, %lld], %s on %s\n",
      static_cast<long long>(o.batch), static_cast<long long>(o.channels),
      static_cast<long long>(o.size), static_cast<long long>(o.size),
      static_cast<long long>(o.heads), static_cast<long long>(o.batch),
      static_cast<long long>(o.context), static_cast<long long>(o.context_dim),
      std::string(dtype_name(dtype)).c_str(), device.to_string().c_str());
  if (on_mps) {
    const auto& props = mps::properties();
    say("device: %s, %.0f GB unified memory, %.0f GB/s, %.1f TFLOP/s fp32 (profile)\n",
        props.name.c_str(), static_cast<double>(props.memory_bytes) / 1e9,
        props.bandwidth_bytes_per_s / 1e9, props.fp32_flops_per_s / 1e12);
    // Two ops the device "lacks": they run on the cpu fallback path, on the same memory.
    set_fallback_enabled(true);
    mps::set_op_enabled(op_id("group_norm"), false);
    mps::set_op_enabled(op_id("bias_split_gelu"), false);
    say("fallback: on; group_norm and bias_split_gelu disabled on mps (MPSIM_MPS_DISABLE_OPS)\n");
  }
  say("\n");

  // A progress line on stderr while the block and the checks run (a terminal only).
  Progress progress("demo", !g_json && isatty(STDERR_FILENO) == 1);
  nlohmann::ordered_json report = {{"block", "Stable Diffusion 1.5 transformer block"},
                                   {"latent", {o.batch, o.channels, o.size, o.size}},
                                   {"heads", o.heads},
                                   {"context", {o.batch, o.context, o.context_dim}},
                                   {"dtype", std::string(dtype_name(dtype))},
                                   {"device", device.to_string()},
                                   {"steps", o.steps},
                                   {"seed", o.seed}};
  progress.update("weights", 0, 1, "sets");
  const Weights w = make_weights(o, dtype, device);
  if (on_mps) {
    mps::synchronize();
    mps::reset_peak_memory_stats();
    mps::profiler::start();
  }
  Tensor out;
  double wall = 0;
  for (int s = 0; s < o.steps; ++s) {
    progress.update("block on " + device.to_string(), static_cast<std::uint64_t>(s),
                    static_cast<std::uint64_t>(o.steps), "steps");
    const auto t0 = std::chrono::steady_clock::now();
    out = sd_block(w, o);
    if (on_mps) mps::synchronize();
    wall = s == 0 ? seconds_since(t0) : std::fmin(wall, seconds_since(t0));
  }
  progress.done();
  if (on_mps) {
    mps::profiler::stop();
    say("%s\n", mps::profiler::summary_table().c_str());
    double simulated = 0;
    std::int64_t fallbacks = 0;
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const mps::OpSummary& r : mps::profiler::summary()) {
      simulated += r.simulated_device_s;
      fallbacks += r.fallbacks;
      ops.push_back({{"op", r.op},
                     {"calls", r.calls},
                     {"fallbacks", r.fallbacks},
                     {"wall_ms", r.wall_s * 1e3},
                     {"simulated_ms", r.simulated_device_s * 1e3},
                     {"bytes", r.bytes},
                     {"flops", r.flops}});
    }
    report["profile"] = mps::properties().profile;
    report["ops"] = ops;
    report["wall_ms"] = wall * 1e3;
    report["simulated_ms"] = simulated * 1e3 / o.steps;
    report["fallback_ops"] = fallbacks;
    say("block: %.1f ms wall (best of %d), %.1f ms simulated on the %s profile, "
        "%lld ops on the cpu fallback path\n",
        wall * 1e3, o.steps, simulated * 1e3 / o.steps, mps::properties().profile.c_str(),
        static_cast<long long>(fallbacks));
    const auto stats = mps::memory_stats();
    report["peak_allocated_bytes"] = mps::max_memory_allocated();
    report["peak_reserved_bytes"] = mps::max_memory_reserved();
    for (const char* key : {"external_fragmentation", "internal_fragmentation_bytes"}) {
      if (auto it = stats.find(key); it != stats.end()) report[key] = it->second;
    }
    say("memory: peak allocated %.1f MiB, peak reserved %.1f MiB",
        static_cast<double>(mps::max_memory_allocated()) / (1 << 20),
        static_cast<double>(mps::max_memory_reserved()) / (1 << 20));
    if (auto it = stats.find("external_fragmentation"); it != stats.end()) {
      say(", external fragmentation %.3f", it->second);
    }
    if (auto it = stats.find("internal_fragmentation_bytes"); it != stats.end()) {
      say(", internal %.1f MiB", it->second / (1 << 20));
    }
    say("\n");
    if (!o.trace.empty()) {
      mps::profiler::export_chrome_trace(o.trace);
      report["trace"] = o.trace;
      say("trace: %s (chrome://tracing or ui.perfetto.dev)\n", o.trace.c_str());
    }
  } else {
    say("block: %.1f ms wall (best of %d)\n", wall * 1e3, o.steps);
    report["wall_ms"] = wall * 1e3;
  }

  // Checks: the device against the cpu golden path (the same kernels: the same bits), and a
  // 16-bit run against float32.
  int failures = 0;
  const auto t0 = std::chrono::steady_clock::now();
  progress.update("check against the cpu golden path", 0, 1, "runs");
  const Weights cpu = make_weights(o, dtype, Device::cpu());
  const Tensor golden = sd_block(cpu, o);
  const double diff = max_abs_diff(out.to(Device::cpu()), golden);
  const bool same = diff == 0;
  progress.done();
  failures += same ? 0 : 1;
  report["golden_max_abs_diff"] = diff;
  report["bit_identical"] = same;
  say("\ncheck: %s result vs the cpu golden path: max |diff| = %g (%s)  [%.1f s]\n",
      device.to_string().c_str(), diff, same ? "bit-identical" : "DIFFERENT", seconds_since(t0));
  if (dtype != DType::Float32) {
    progress.update("float32 reference", 0, 1, "runs");
    const Tensor ref = sd_block(make_weights(o, DType::Float32, Device::cpu()), o);
    progress.done();
    const double err = max_abs_diff(golden, ref), scale = max_abs(ref);
    report["float32_max_abs_err"] = err;
    report["float32_max_abs_output"] = scale;
    say("check: %s vs float32: max |err| = %.4g (%.3g of max |output| %.3g)\n",
        std::string(dtype_name(dtype)).c_str(), err, err / scale, scale);
  }
  say("\n%s\n", failures == 0 ? "demo: ok" : "demo: FAILED");
  report["ok"] = failures == 0;
  if (g_json) std::printf("%s\n", report.dump(2).c_str());
  return failures == 0 ? 0 : 1;
}

}  // namespace mpsim::tools
