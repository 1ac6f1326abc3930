#include "device_sim/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "base/output_file.h"
#include "core/error.h"

namespace mpsim::mps {
namespace detail {
namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void Profiler::start() {
  std::lock_guard lock(mu_);
  records_.clear();
  session_.fetch_add(1);
  origin_ns_.store(steady_ns());
  enabled_.store(true);
}

std::int64_t Profiler::now_ns() const {
  return steady_ns() - origin_ns_.load(std::memory_order_relaxed);
}

void Profiler::add(std::uint64_t session, OpRecord record) {
  std::lock_guard lock(mu_);
  if (session == session_.load()) records_.push_back(std::move(record));
}

std::vector<OpRecord> Profiler::records() const {
  std::lock_guard lock(mu_);
  return records_;
}

Profiler& profiler() {
  static Profiler* p = new Profiler();  // used by the queue's worker until exit
  return *p;
}

OpRecord make_record(const OpCall& call, bool fallback, const DeviceProperties& props) {
  OpRecord r;
  r.op = std::string(call.op.name());
  r.dtype = call.dtype;
  r.device = call.outputs.front().device();
  r.fallback = fallback;
  for (const std::vector<Tensor>* list : {&call.inputs, &call.outputs}) {
    for (const Tensor& t : *list) {
      r.shapes.push_back(t.sizes().to_string());
      r.bytes += t.nbytes();
    }
  }
  switch (call.op.family()) {
    case OpFamily::Copy:
    case OpFamily::Fill:
    case OpFamily::Arange:
    case OpFamily::Gather:
    case OpFamily::Rearrange:
      break;
    case OpFamily::Scatter:  // one combination per source element (the index's); nonzero none
      if (call.op == op_id("scatter")) r.flops = static_cast<double>(call.inputs[0].numel());
      break;
    case OpFamily::Matmul:  // 2 M N K per batch: a multiply and an add per term
      r.flops = 2.0 * static_cast<double>(call.outputs.front().numel()) *
                static_cast<double>(call.inputs.front().sizes().dims().back());
      break;
    case OpFamily::Conv:
      if (call.op == op_id("conv_transpose2d")) {
        // 2 Cout/groups kH kW per input element (the weight is [C, Cout/groups, kH, kW])
        r.flops = 2.0 * static_cast<double>(call.inputs[0].numel()) *
                  static_cast<double>(call.inputs[1].numel() / call.inputs[1].size(0));
      } else {
        // 2 K per output, K = kH kW C / groups (the weight is [kH, kW, C/g, Cout])
        const Shape& w = call.inputs[1].sizes();
        r.flops = 2.0 * static_cast<double>(call.outputs.front().numel()) *
                  static_cast<double>(w.numel() / w.dims().back());
      }
      break;
    case OpFamily::Fused:
      if (call.op != op_id("multi_head_attention")) {  // row fusions: one per output element
        for (const Tensor& t : call.outputs) r.flops += static_cast<double>(t.numel());
        break;
      }
      [[fallthrough]];  // its q, k, v and output are [B, H, L or S, D] views, as attention's
    case OpFamily::Attention: {  // 2 L S E for the scores, 2 L S Ev for the weighted sum
      const double e = static_cast<double>(call.inputs[0].sizes().dims().back());
      const double s = static_cast<double>(call.inputs[1].sizes().dims().end()[-2]);
      const double out = static_cast<double>(call.outputs.front().numel());
      const double ev = static_cast<double>(call.outputs.front().sizes().dims().back());
      r.flops = 2.0 * out * s + 2.0 * (out / ev) * s * e;
      break;
    }
    default:
      for (const Tensor& t : call.outputs) r.flops += static_cast<double>(t.numel());
  }
  const bool half = call.dtype == DType::Float16 || call.dtype == DType::BFloat16;
  const double rate = half ? props.fp16_flops_per_s : props.fp32_flops_per_s;
  r.simulated_device_s =
      std::max(static_cast<double>(r.bytes) / props.bandwidth_bytes_per_s, r.flops / rate) +
      props.launch_overhead_s;
  return r;
}

}  // namespace detail

namespace profiler {
namespace {
// ordered_json keeps the keys in the order written: an event's name comes first.
using Json = nlohmann::ordered_json;
}  // namespace

void start() { detail::profiler().start(); }
void stop() { detail::profiler().stop(); }
bool enabled() { return detail::profiler().enabled(); }
std::vector<OpRecord> records() { return detail::profiler().records(); }

std::vector<OpSummary> summary() {
  std::vector<OpSummary> rows;
  for (const OpRecord& r : records()) {
    auto it =
        std::find_if(rows.begin(), rows.end(), [&](const OpSummary& s) { return s.op == r.op; });
    if (it == rows.end()) {
      rows.push_back(OpSummary{.op = r.op});
      it = rows.end() - 1;
    }
    ++it->calls;
    it->fallbacks += r.fallback;
    it->wall_s += static_cast<double>(r.end_ns - r.start_ns) * 1e-9;
    it->simulated_device_s += r.simulated_device_s;
    it->bytes += r.bytes;
    it->flops += r.flops;
  }
  return rows;
}

std::string summary_table() {
  const std::vector<OpSummary> rows = summary();
  int width = 16;  // the op column fits the longest name (scaled_dot_product_attention: 28)
  for (const OpSummary& s : rows) width = std::max(width, static_cast<int>(s.op.size()));
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-*s %8s %9s %12s %14s %14s %14s\n", width, "op", "calls",
                "fallbacks", "wall ms", "simulated ms", "MB moved", "MFLOP");
  out += line;
  for (const OpSummary& s : rows) {
    std::snprintf(line, sizeof(line), "%-*s %8lld %9lld %12.3f %14.3f %14.3f %14.3f\n", width,
                  s.op.substr(0, 128).c_str(), static_cast<long long>(s.calls),
                  static_cast<long long>(s.fallbacks), s.wall_s * 1e3, s.simulated_device_s * 1e3,
                  static_cast<double>(s.bytes) * 1e-6, s.flops * 1e-6);
    out += line;
  }
  return out;
}

std::string chrome_trace_json() {
  // Microseconds, the trace format's unit, kept to the nanosecond: the shortest decimal that
  // reads back as the quotient has at most three digits after the point.
  const auto us = [](double ns) { return std::round(ns) / 1e3; };
  Json events = Json::array();
  for (const auto& [tid, name] : {std::pair{1, "mps:0 queue"}, std::pair{2, "cpu fallback"}}) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", tid},
                      {"args", {{"name", name}}}});
  }
  for (const OpRecord& r : records()) {
    std::string shapes;
    for (const std::string& s : r.shapes) shapes += (shapes.empty() ? "" : ", ") + s;
    events.push_back({{"name", r.op},
                      {"cat", r.fallback ? "fallback" : "mps"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", r.fallback ? 2 : 1},
                      {"ts", us(static_cast<double>(r.start_ns))},
                      {"dur", us(static_cast<double>(r.end_ns - r.start_ns))},
                      {"args",
                       {{"shapes", shapes},
                        {"dtype", dtype_name(r.dtype)},
                        {"device", r.device.to_string()},
                        {"bytes", r.bytes},
                        {"flops", r.flops},
                        {"simulated_us", us(r.simulated_device_s * 1e9)},
                        {"queued_us", us(static_cast<double>(r.queued_ns))}}}});
  }
  return Json{{"traceEvents", std::move(events)}}.dump() + "\n";
}

void export_chrome_trace(const std::string& path) {
  const std::string text = chrome_trace_json();
  write_output_file(path, "export_chrome_trace",  // Note [safe outputs]
                    [&](int fd) { return write_all(fd, text.data(), text.size()); });
}

}  // namespace profiler
}  // namespace mpsim::mps
