// The simulated mps device's memory API (against the allocator's own figures), watermarks and
// out-of-memory, limits, fault injection, the support table and fallback, strict mode, the
// profiler, and the start-up configuration parsers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/mpsim.h"
#include "device_sim/config.h"
#include "device_sim/mps.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;

const Device kMps = Device::mps();

std::size_t stat(const char* name) {
  return static_cast<std::size_t>(mps::memory_stats().at(name));
}

TEST(MpsMemory, ApiFiguresAreTheAllocatorsOwn) {
  mps::synchronize();
  const alloc::Allocator& a = backend_for(kMps).allocator(0);
  const std::size_t base = mps::memory_allocated();
  EXPECT_EQ(base, a.stats().allocated_bytes);
  Tensor x = empty({1 << 18}, DType::Float32, kMps);  // 1 MiB
  EXPECT_GE(mps::memory_allocated(), base + (std::size_t{1} << 20));
  EXPECT_EQ(mps::current_allocated_memory(), mps::memory_allocated());
  EXPECT_EQ(mps::memory_allocated(), stat("allocated_bytes"));
  EXPECT_EQ(mps::memory_reserved(), a.stats().reserved_bytes);
  EXPECT_EQ(mps::driver_allocated_memory(), mps::memory_reserved());
  EXPECT_GE(mps::memory_reserved(), mps::memory_allocated());
  EXPECT_GE(mps::max_memory_allocated(), mps::memory_allocated());
  EXPECT_EQ(mps::max_memory_reserved(), a.stats().peak_reserved_bytes);
  x = Tensor();
  mps::reset_peak_memory_stats();
  EXPECT_EQ(mps::max_memory_allocated(), mps::memory_allocated());
  EXPECT_EQ(mps::memory_allocated(), base);
  EXPECT_EQ(mps::recommended_max_memory(), mps::properties().memory_bytes / 4 * 3);
  EXPECT_EQ(stat("recommended_max_memory"), mps::recommended_max_memory());
  for (const char* key :
       {"num_allocs", "num_frees", "cached_bytes", "num_ooms", "peak_reserved_bytes"}) {
    EXPECT_TRUE(mps::memory_stats().contains(key)) << key;
  }
  mps::empty_cache();
  EXPECT_EQ(stat("cached_bytes"), 0u);
}

TEST(MpsMemory, FractionOutsideZeroToTwoIsRejected) {
  for (double bad : {-0.1, 2.5}) {
    try {
      mps::set_per_process_memory_fraction(bad);
      FAIL() << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("Allowed range: 0~2"));
    }
  }
  EXPECT_DOUBLE_EQ(mps::high_watermark_ratio(), 1.7);
  EXPECT_DOUBLE_EQ(mps::low_watermark_ratio(), 1.4);
  EXPECT_THROW(mps::set_watermark_ratios(1.0, 1.5), InvalidArgument);  // low above high
}

TEST(MpsMemory, AboveTheHighWatermarkAllocationFailsWithStatsAndLeavesNothing) {
  mps::synchronize();
  mps::empty_cache();
  const double recommended = static_cast<double>(mps::recommended_max_memory());
  const std::int64_t live = Storage::live_count();
  const std::size_t allocated = mps::memory_allocated();
  const std::size_t ooms = stat("num_ooms");
  mps::set_per_process_memory_fraction(
      static_cast<double>(mps::memory_reserved() + (std::size_t{16} << 20)) / recommended);
  const Tensor fits = empty({1 << 20}, DType::Float32, kMps);  // 4 MiB
  try {
    empty({1 << 24}, DType::Float32, kMps);  // 64 MiB
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_THAT(e.what(), HasSubstr("MPS backend out of memory"));
    EXPECT_THAT(e.what(), HasSubstr("Tried to allocate 64.00 MiB"));
    EXPECT_THAT(e.what(), HasSubstr("max allowed"));
    EXPECT_THAT(e.what(), HasSubstr("Stats: allocated"));
  }
  EXPECT_GT(stat("num_ooms"), ooms);
  EXPECT_THROW(exp(empty({1 << 22}, DType::Float32, kMps)), OutOfMemoryError);  // the output
  EXPECT_EQ(Storage::live_count(), live + 1);
  mps::set_per_process_memory_fraction(0);  // no cap
  EXPECT_EQ(empty({1 << 24}, DType::Float32, kMps).numel(), 1 << 24);
  mps::set_watermark_ratios(1.7, 1.4);
  mps::synchronize();
  EXPECT_EQ(mps::memory_allocated(), allocated + fits.storage()->nbytes());
}

TEST(MpsMemory, AboveTheLowWatermarkTheCacheIsEmptiedBeforeGrowing) {
  mps::synchronize();
  { const Tensor t = empty({1024}, DType::Float32, kMps); }  // a freed block stays cached
  ASSERT_GT(stat("cached_bytes"), 0u);
  const std::size_t collections = stat("num_low_watermark_collections");
  const double low = static_cast<double>(mps::memory_reserved()) /
                     static_cast<double>(mps::recommended_max_memory());
  mps::set_watermark_ratios(1.7, low);
  const Tensor t = empty({1 << 20}, DType::Float32, kMps);
  EXPECT_EQ(stat("num_low_watermark_collections"), collections + 1);
  mps::set_watermark_ratios(1.7, 1.4);
}

TEST(MpsLimits, NDArrayAndBufferLimitsRaiseClearErrors) {
  mps::synchronize();
  const mps::Limits saved = mps::limits();
  EXPECT_EQ(saved.max_ndarray_bytes, std::size_t{1} << 32);
  EXPECT_EQ(saved.max_buffer_length, mps::properties().max_buffer_length);
  const std::int64_t live = Storage::live_count();
  const Tensor x = ones({128}, DType::Float32, kMps);  // 512 bytes
  mps::set_limits({.max_ndarray_bytes = 256, .max_buffer_length = saved.max_buffer_length});
  try {
    exp(x);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[exp] MPS: total bytes of NDArray > 256"));
    EXPECT_THAT(e.what(), HasSubstr("[128]"));
  }
  mps::set_limits({.max_ndarray_bytes = saved.max_ndarray_bytes, .max_buffer_length = 1024});
  try {
    empty({1024}, DType::Float32, kMps);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Invalid buffer size"));
    EXPECT_THAT(e.what(), HasSubstr("4096 bytes"));
  }
  mps::set_limits(saved);
  EXPECT_EQ(Storage::live_count(), live + 1);
  EXPECT_EQ(exp(x).numel(), 128);
}

TEST(MpsFaults, InjectedAllocationAndCommandFailures) {
  mps::synchronize();
  const std::size_t allocated = mps::memory_allocated();
  mps::fail_allocation(2);
  const Tensor a = empty({8}, DType::Float32, kMps);
  try {
    empty({8}, DType::Float32, kMps);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_THAT(e.what(), HasSubstr("injected"));
  }
  const Tensor b = empty({8}, DType::Float32, kMps);  // only the second one failed
  mps::fail_command(2);
  const Tensor x = ones({4}, DType::Float32, kMps);  // command 1
  const Tensor y = exp(x);                           // command 2: fails when it runs
  try {
    mps::synchronize();
    FAIL() << "expected the injected failure";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[exp] injected command failure"));
  }
  EXPECT_EQ(exp(x).to_vector<float>().size(), 4u);
  mps::synchronize();
  EXPECT_GT(mps::memory_allocated(), allocated);
}

class MpsFallback : public ::testing::Test {
 protected:
  void TearDown() override {
    mps::set_op_enabled(op_id("exp"), true);
    set_fallback_enabled(false);
    mps::profiler::stop();
  }
};

TEST_F(MpsFallback, ADisabledOpRaisesOrFallsBackOnTheSameMemory) {
  const Tensor x = from_vector<float>({0.5f, -1.0f, 3.0f}, {3});
  const Tensor xm = x.to(kMps);
  mps::set_op_enabled(op_id("exp"), false);
  EXPECT_FALSE(mps::op_enabled(op_id("exp")));
  EXPECT_FALSE(mps::supports(op_id("exp"), DType::Float32));
  EXPECT_TRUE(mps::supports(op_id("add"), DType::Float32));
  try {
    exp(xm);
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[exp]"));
    EXPECT_THAT(e.what(), HasSubstr("mps:0"));
    EXPECT_THAT(e.what(), HasSubstr("MPSIM_ENABLE_FALLBACK=1"));
  }
  set_fallback_enabled(true);
  const std::int64_t before = fallback_count(op_id("exp"));
  mps::profiler::start();
  const Tensor y = exp(xm + 0);  // a queued add, then the fallback after the drain
  mps::profiler::stop();
  EXPECT_EQ(y.device(), kMps);
  EXPECT_EQ(fallback_count(op_id("exp")), before + 1);
  EXPECT_EQ(y.to_vector<float>(), exp(x).to_vector<float>());
  const std::vector<mps::OpRecord> r = mps::profiler::records();
  ASSERT_EQ(r.size(), 3u);  // the scalar's fill, add, exp
  EXPECT_EQ(r[2].op, "exp");
  EXPECT_TRUE(r[2].fallback);
  EXPECT_LE(r[1].end_ns, r[2].start_ns);
  EXPECT_EQ(mps::profiler::summary().back().fallbacks, 1);
}

TEST(MpsStrict, HostAccessToABufferWithInFlightWritesIsReported) {
  mps::set_strict(true);
  const Tensor x = ones({16}, DType::Float32, kMps);
  mps::synchronize();
  Tensor y;
  {
    mps::QueueHold hold;
    y = exp(x);
    try {
      y.data_ptr();
      ADD_FAILURE() << "expected DeviceError";
    } catch (const DeviceError& e) {
      EXPECT_THAT(e.what(), HasSubstr("strict mode"));
      EXPECT_THAT(e.what(), HasSubstr("'exp'"));
    }
    EXPECT_NO_THROW(x.data_ptr());  // only read by the queued command
  }
  mps::synchronize();
  EXPECT_NO_THROW(y.data_ptr());
  EXPECT_EQ(y.to_vector<float>()[0], std::exp(1.0f));
  mps::set_strict(false);
  {
    mps::QueueHold hold;
    y = exp(x);
    EXPECT_NO_THROW(y.data_ptr());  // not strict: not checked
  }
  mps::synchronize();
}

// Note [strict mode] in device_sim/strict.h: in strict mode a block the host frees while a
// queued command uses it goes back to the allocator at once, as on a device without deferred
// frees; the same-sized allocation that follows is served that block from the cache.
TEST(MpsStrict, ReuseOfFreedMemoryWhileACommandStillReadsItIsReported) {
  constexpr std::int64_t kN = 4096;
  mps::synchronize();
  const std::int64_t live = Storage::live_count();
  mps::set_strict(true);
  Tensor x = full({kN}, 1.0, DType::Float32, kMps);
  mps::synchronize();
  const void* x_block = x.data_ptr();
  Tensor y;
  {
    mps::QueueHold hold;
    y = exp(x);
    x = Tensor();  // legal with deferred frees; here the block is free while exp reads it
    try {
      const Tensor z = from_vector(std::vector<float>(kN, 2.0f), {kN}, kMps);
      ADD_FAILURE() << "expected DeviceError";
    } catch (const DeviceError& e) {
      EXPECT_THAT(e.what(), HasSubstr("reuse of freed memory"));
      EXPECT_THAT(e.what(), HasSubstr("'exp' still reads it"));
      EXPECT_THAT(e.what(), HasSubstr("[data_ptr]"));
    }
    // The served block was x's: the report is about a real overlap.
    Tensor w = empty({kN}, DType::Float32, kMps);
    EXPECT_EQ(w.storage()->data(), x_block);
    EXPECT_THROW(w.data_ptr(), DeviceError);
    w = Tensor();
    // Dropping a result the queued command still writes, then touching the block's new owner.
    y = Tensor();
    Tensor v = empty({kN}, DType::Float32, kMps);
    try {
      v.data_ptr();
      ADD_FAILURE() << "expected DeviceError";
    } catch (const DeviceError& e) {
      EXPECT_THAT(e.what(), HasSubstr("'exp' still writes it"));
    }
  }
  mps::synchronize();
  // Once the queue drained nothing is reported, and the commands' shadows are gone.
  EXPECT_EQ(from_vector(std::vector<float>(kN, 2.0f), {kN}, kMps).to_vector<float>()[0], 2.0f);
  // Chains of temporaries free blocks under queued commands all the time; only the host touching
  // such a block is a hazard, so in-order device work is not reported.
  Tensor c = zeros({kN}, DType::Int32, kMps);
  for (int i = 0; i < 50; ++i) c = c * 2 + 1 - c;
  EXPECT_EQ(c.to_vector<std::int32_t>(), std::vector<std::int32_t>(kN, 50));
  mps::set_strict(false);
  {
    mps::QueueHold hold;
    y = exp(c);
    c = Tensor();
    EXPECT_NO_THROW(from_vector(std::vector<float>(kN, 2.0f), {kN}, kMps));  // not strict
  }
  y = Tensor();
  mps::synchronize();
  EXPECT_EQ(Storage::live_count(), live);
}

TEST(MpsStrict, AHostPointerUsedAfterItsTensorsStorageWasFreedIsReported) {
  mps::set_strict(true);
  Tensor x = full({64}, 3.0, DType::Float32, kMps);
  Tensor y = x * 2;
  mps::synchronize();
  const float* p = y.data_ptr<float>();  // valid while y lives
  EXPECT_EQ(from_blob_copy(p, 64, DType::Float32, {64}).to_vector<float>()[0], 6.0f);
  y = Tensor();
  EXPECT_TRUE(std::isnan(p[0]));  // freed device memory is poisoned in strict mode
  try {
    from_blob_copy(p, 64, DType::Float32, {64});  // a stale pointer handed back to mpsim
    ADD_FAILURE() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[from_blob_copy] strict mode: use after free"));
    EXPECT_THAT(e.what(), HasSubstr("last used by 'mul'"));
  }
  try {
    from_blob_copy(p + 8, 1, DType::Float32, {1}, kMps);  // a pointer inside the freed block
    ADD_FAILURE() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("use after free"));
  }
  mps::set_strict(false);
  EXPECT_NO_THROW(from_blob_copy(p, 64, DType::Float32, {64}));  // not strict: not checked
}

TEST(MpsProfiler, RecordsSummaryAndChromeTrace) {
  const Tensor a = ones({1024}, DType::Float32, kMps), b = ones({1024}, DType::Float32, kMps);
  mps::synchronize();
  mps::profiler::start();
  Tensor c = a + b;
  c = c + b;
  c = c + a;
  const Tensor d = exp(c.to(DType::Float16));
  mps::synchronize();
  mps::profiler::stop();
  const std::vector<mps::OpRecord> r = mps::profiler::records();
  ASSERT_EQ(r.size(), 5u);  // add x3, copy (to float16), exp
  const mps::DeviceProperties& p = mps::properties();
  for (const mps::OpRecord& rec : r) {
    EXPECT_LE(rec.queued_ns, rec.start_ns);
    EXPECT_LE(rec.start_ns, rec.end_ns);
    EXPECT_EQ(rec.device, kMps);
    EXPECT_FALSE(rec.fallback);
  }
  EXPECT_EQ(r[0].op, "add");
  EXPECT_EQ(r[0].shapes, (std::vector<std::string>{"[1024]", "[1024]", "[1024]"}));
  EXPECT_EQ(r[0].bytes, 3u * 4096u);
  EXPECT_EQ(r[0].flops, 1024.0);
  EXPECT_DOUBLE_EQ(r[0].simulated_device_s,
                   std::max(3 * 4096 / p.bandwidth_bytes_per_s, 1024 / p.fp32_flops_per_s) +
                       p.launch_overhead_s);
  EXPECT_EQ(r[3].op, "copy");
  EXPECT_EQ(r[3].flops, 0.0);
  EXPECT_EQ(r[4].dtype, DType::Float16);
  EXPECT_EQ(r[4].bytes, 2u * 2048u);
  const std::vector<mps::OpSummary> s = mps::profiler::summary();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].op, "add");
  EXPECT_EQ(s[0].calls, 3);
  EXPECT_EQ(s[0].bytes, 3 * r[0].bytes);
  double total = 0;
  for (const mps::OpSummary& row : s) total += row.simulated_device_s;
  double expected = 0;
  for (const mps::OpRecord& rec : r) expected += rec.simulated_device_s;
  EXPECT_DOUBLE_EQ(total, expected);
  EXPECT_THAT(mps::profiler::summary_table(), HasSubstr("add"));
  const std::string json = mps::profiler::chrome_trace_json();
  EXPECT_THAT(json, HasSubstr("\"traceEvents\""));
  EXPECT_THAT(json, HasSubstr("{\"name\":\"exp\",\"cat\":\"mps\",\"ph\":\"X\""));
  const std::string path = ::testing::TempDir() + "mps_trace.json";
  mps::profiler::export_chrome_trace(path);
  std::ifstream f(path);
  std::stringstream content;
  content << f.rdbuf();
  EXPECT_EQ(content.str(), json);
  std::remove(path.c_str());
  EXPECT_THROW(mps::profiler::export_chrome_trace("/nonexistent/dir/t.json"), InvalidArgument);
  EXPECT_EQ(d.numel(), 1024);
}

// FLOPs of the products, counted from the shapes (2 per multiply-add): matmul 2 M N K,
// attention and multi_head_attention 2 L S (E + Ev) per head; the summary table's op column
// fits the longest name.
TEST(MpsProfiler, CountsTheFlopsOfProductsAndAttention) {
  const Tensor a = ones({3, 5}, DType::Float32, kMps), b = ones({5, 7}, DType::Float32, kMps);
  const Tensor q = ones({2, 4, 6, 8}, DType::Float32, kMps);       // [B, H, L, E]
  const Tensor k = ones({2, 4, 9, 8}, DType::Float32, kMps);       // [B, H, S, E]
  const Tensor qkv = ones({2, 6, 4, 3, 8}, DType::Float32, kMps);  // [B, L, H, 3, D]
  mps::synchronize();
  mps::profiler::start();
  const Tensor c = matmul(a, b);
  const Tensor o = scaled_dot_product_attention(q, k, k);
  const Tensor m = multi_head_attention(qkv);
  mps::synchronize();
  mps::profiler::stop();
  const std::vector<mps::OpRecord> r = mps::profiler::records();
  auto flops_of = [&](const std::string& op) {
    for (const mps::OpRecord& rec : r) {
      if (rec.op == op) return rec.flops;
    }
    ADD_FAILURE() << op << " not recorded";
    return -1.0;
  };
  EXPECT_EQ(flops_of("matmul"), 2.0 * 3 * 7 * 5);
  EXPECT_EQ(flops_of("scaled_dot_product_attention"), 2.0 * 2 * 4 * 6 * 9 * (8 + 8));
  EXPECT_EQ(flops_of("multi_head_attention"), 2.0 * 2 * 4 * 6 * 6 * (8 + 8));
  const std::string table = mps::profiler::summary_table();
  const std::size_t header = table.find("calls"), row = table.find("scaled_dot_product_attention");
  ASSERT_NE(row, std::string::npos);
  // Every line has its columns at the same offsets: "calls" ends where the first count ends.
  const std::size_t line_start = table.rfind('\n', row) + 1;
  const std::size_t count_end = table.find_first_of(" ", table.find_first_not_of(" ", row + 28));
  EXPECT_EQ(header + 5, count_end - line_start);
  EXPECT_EQ(c.numel() + o.numel() + m.numel(), 21 + 384 + 384);
}

// The trace parsed as JSON: the two track names, then one complete event per record with the
// record's fields, a fallback on the cpu track; times in microseconds.
TEST_F(MpsFallback, ChromeTraceEventsCarryTheRecordsFields) {
  const Tensor x = ones({2, 512}, DType::Float16, kMps);
  mps::synchronize();
  mps::set_op_enabled(op_id("exp"), false);
  set_fallback_enabled(true);
  mps::profiler::start();
  const Tensor y = exp(x * x);  // mul queued on the mps track, exp on the fallback track
  mps::synchronize();
  mps::profiler::stop();
  const std::vector<mps::OpRecord> r = mps::profiler::records();
  ASSERT_EQ(r.size(), 2u);

  const nlohmann::json trace = nlohmann::json::parse(mps::profiler::chrome_trace_json());
  const nlohmann::json& events = trace.at("traceEvents");
  ASSERT_EQ(events.size(), 4u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(events[i].at("name"), "thread_name");
    EXPECT_EQ(events[i].at("ph"), "M");
    EXPECT_EQ(events[i].at("tid"), i + 1);
  }
  EXPECT_EQ(events[0].at("args").at("name"), "mps:0 queue");
  EXPECT_EQ(events[1].at("args").at("name"), "cpu fallback");
  for (std::size_t i = 0; i < r.size(); ++i) {
    const nlohmann::json& e = events[i + 2];
    EXPECT_EQ(e.at("name"), r[i].op);
    EXPECT_EQ(e.at("cat"), r[i].fallback ? "fallback" : "mps");
    EXPECT_EQ(e.at("ph"), "X");
    EXPECT_EQ(e.at("pid"), 1);
    EXPECT_EQ(e.at("tid"), r[i].fallback ? 2 : 1);
    EXPECT_NEAR(e.at("ts").get<double>(), static_cast<double>(r[i].start_ns) / 1e3, 1e-3);
    EXPECT_NEAR(e.at("dur").get<double>(), static_cast<double>(r[i].end_ns - r[i].start_ns) / 1e3,
                1e-3);
    const nlohmann::json& args = e.at("args");
    EXPECT_EQ(args.at("shapes"), "[2, 512], [2, 512]" + std::string(i == 0 ? ", [2, 512]" : ""));
    EXPECT_EQ(args.at("dtype"), "float16");
    EXPECT_EQ(args.at("device"), "mps:0");
    EXPECT_EQ(args.at("bytes").get<std::size_t>(), r[i].bytes);
    EXPECT_EQ(args.at("flops").get<double>(), r[i].flops);
    EXPECT_NEAR(args.at("simulated_us").get<double>(), r[i].simulated_device_s * 1e6, 1e-3);
    EXPECT_NEAR(args.at("queued_us").get<double>(), static_cast<double>(r[i].queued_ns) / 1e3,
                1e-3);
  }
  EXPECT_EQ(events[2].at("name"), "mul");
  EXPECT_EQ(events[3].at("name"), "exp");
  EXPECT_EQ(events[3].at("cat"), "fallback");
  EXPECT_EQ(y.numel(), 1024);
}

TEST(MpsConfig, ParsersAndProfiles) {
  using mps::detail::parse_memory_size;
  EXPECT_EQ(parse_memory_size("8G"), std::size_t{8} << 30);
  EXPECT_EQ(parse_memory_size("512M"), std::size_t{512} << 20);
  EXPECT_EQ(parse_memory_size("64kib"), std::size_t{64} << 10);
  EXPECT_EQ(parse_memory_size("1000"), std::size_t{1000});
  EXPECT_EQ(parse_memory_size("0"), std::nullopt);
  EXPECT_EQ(parse_memory_size("8X"), std::nullopt);
  EXPECT_EQ(parse_memory_size("G"), std::nullopt);
  EXPECT_EQ(mps::chip_profiles().size(), 7u);
  const mps::ChipProfile* p = mps::detail::find_profile("m2-max");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "M2 Max");
  EXPECT_EQ(mps::detail::find_profile("M5"), nullptr);
  const mps::DeviceProperties props = mps::detail::make_properties(*p, std::size_t{8} << 30);
  EXPECT_EQ(props.recommended_max_memory, std::size_t{6} << 30);
  EXPECT_EQ(props.max_buffer_length, std::size_t{4} << 30);
  EXPECT_EQ(props.bandwidth_bytes_per_s, 400e9);
  EXPECT_EQ(mps::properties().profile, "M2 Max");  // the default (no MPSIM_MPS_PROFILE in ctest)
}

}  // namespace
}  // namespace mpsim
