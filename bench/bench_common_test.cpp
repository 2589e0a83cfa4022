// The benchmark protocol's host logic (bench_common.hpp), without a GPU: when a spin-up counts
// as settled, how it keeps the GPU fed, and how rows are flagged and written.
#include "bench_common.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpusort::bench {
namespace {

// A stand-in for the GPU: batches queued by begin(), finished in order by finish(), each
// taking repeats x the per-sort time that `per_sort(batch index)` gives (its clock ramp).
template <class PerSort>
struct FakeGpu {
  PerSort per_sort;
  double sleep_ms = 0;  // host time finish() takes (the batch's wall time)
  std::vector<uint32_t> queued;
  uint32_t started = 0, finished = 0, max_queued = 0;
  std::vector<double> per_sort_seen;

  void begin(uint32_t repeats) {
    queued.push_back(repeats), ++started;
    max_queued = std::max<uint32_t>(max_queued, uint32_t(queued.size()));
  }
  double finish() {
    EXPECT_FALSE(queued.empty());
    const uint32_t repeats = queued.front();
    queued.erase(queued.begin());
    if (sleep_ms > 0)
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleep_ms));
    const double t = per_sort(finished++);
    per_sort_seen.push_back(t);
    return t * repeats;
  }
  template <class P>
  SpinUp run(const P& p) {
    return p.spin_up([&](uint32_t repeats) { begin(repeats); }, [&] { return finish(); });
  }
};
template <class PerSort>
FakeGpu<PerSort> fake_gpu(PerSort f) {
  FakeGpu<PerSort> gpu{f, 0, {}, 0, 0, 0, {}};
  return gpu;
}

// Counted by samples alone: no minimum time, no window, a generous cap.
Protocol by_samples() {
  Protocol p;
  p.spin_up_ms = 0, p.spin_up_max_ms = 60000, p.steady_window_ms = 0;
  p.steady_min_samples = 5, p.steady_tolerance = 0.03;
  return p;
}

TEST(BenchProtocol, SteadyNeedsTheLastSamplesWithinTolerance) {
  const Protocol p = by_samples();
  using S = std::vector<std::pair<double, double>>;
  EXPECT_FALSE(p.steady(S{{1, 1.0}, {2, 1.0}, {3, 1.0}, {4, 1.0}}));  // too few
  EXPECT_TRUE(p.steady(S{{1, 1.0}, {2, 1.01}, {3, 1.02}, {4, 1.0}, {5, 1.029}}));
  EXPECT_FALSE(p.steady(S{{1, 1.0}, {2, 1.01}, {3, 1.02}, {4, 1.0}, {5, 1.04}}));
  // Earlier, slower samples (the clock ramping) do not count once five steady ones follow.
  EXPECT_TRUE(p.steady(S{{1, 5.0}, {2, 3.0}, {3, 1.0}, {4, 1.0}, {5, 1.0}, {6, 1.0}, {7, 1.0}}));
  // The window: every sample of the last steady_window_ms counts, beyond the last five.
  Protocol w = p;
  w.steady_window_ms = 10;
  EXPECT_FALSE(w.steady(S{{1, 2.0}, {2, 1.0}, {3, 1.0}, {4, 1.0}, {5, 1.0}, {6, 1.0}}));
  EXPECT_TRUE(w.steady(S{{1, 2.0}, {20, 1.0}, {21, 1.0}, {22, 1.0}, {23, 1.0}, {24, 1.0}}));
}

// The spin-up must not end while the sort is still speeding up (the old protocol stopped after
// a fixed 200 ms whatever the times did): with a ramp over the first 12 batches it ends on the
// flat part, and keeps two batches queued all along so the GPU never waits for the host.
TEST(BenchProtocol, SpinUpRunsUntilTheTimesSettle) {
  auto gpu = fake_gpu([](uint32_t batch) { return batch < 12 ? 5.0 - 0.3 * batch : 1.0; });
  const SpinUp s = gpu.run(by_samples());
  EXPECT_EQ(s.state, SpinUp::State::steady);
  EXPECT_GE(s.batches, 12u + 5u);
  for (size_t i = gpu.per_sort_seen.size() - 5; i < gpu.per_sort_seen.size(); ++i)
    EXPECT_DOUBLE_EQ(gpu.per_sort_seen[i], 1.0);
  EXPECT_DOUBLE_EQ(s.per_sort_ms, 1.0);
  EXPECT_EQ(gpu.max_queued, 2u);
  // One batch left queued for the caller to put its runs behind, and counted.
  EXPECT_EQ(s.unfinished, 1u);
  EXPECT_EQ(gpu.queued.size(), 1u);
  EXPECT_EQ(gpu.started, s.batches + s.unfinished);
}

// Small sorts go many to a batch: repeats double while a batch is under spin_up_submission_ms.
TEST(BenchProtocol, SpinUpBatchesGrowUntilTheyKeepTheGpuBusy) {
  // 10 us a sort once the clock is up, after 20 batches of ramp.
  auto gpu = fake_gpu([](uint32_t batch) { return batch < 20 ? 0.02 - 0.0005 * batch : 0.01; });
  Protocol p = by_samples();
  p.spin_up_submission_ms = 2;
  std::vector<uint32_t> sizes;
  p.spin_up([&](uint32_t repeats) { sizes.push_back(repeats), gpu.begin(repeats); },
            [&] { return gpu.finish(); });
  ASSERT_GE(sizes.size(), 2u);
  EXPECT_EQ(sizes[0], 1u);
  EXPECT_GE(sizes.back(), 128u);  // a batch of >= 2 ms at the ramp's speed
  EXPECT_LE(sizes.back(), p.spin_up_max_repeats);
}

TEST(BenchProtocol, SpinUpHonoursItsMinimumAndCap) {
  // Times that never settle: the cap ends it, and says so.
  auto jumpy = fake_gpu([](uint32_t batch) { return batch % 2 ? 1.0 : 1.5; });
  jumpy.sleep_ms = 1;
  Protocol p = by_samples();
  p.spin_up_max_ms = 30;
  const auto start = std::chrono::steady_clock::now();
  SpinUp s = jumpy.run(p);
  EXPECT_EQ(s.state, SpinUp::State::cap);
  EXPECT_GE(s.ms, 30);
  const double waited =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 30);
  // Steady from the start, but the minimum is still spent.
  auto flat = fake_gpu([](uint32_t) { return 1.0; });
  flat.sleep_ms = 1;
  p.spin_up_ms = 25, p.spin_up_max_ms = 1000;
  s = flat.run(p);
  EXPECT_EQ(s.state, SpinUp::State::steady);
  EXPECT_GE(s.ms, 25);
  // Sorts so long that too few finish before the cap: no verdict ("few"), not a flag.
  auto slow = fake_gpu([](uint32_t) { return 1.0; });
  slow.sleep_ms = 12;
  p.spin_up_ms = 0, p.spin_up_max_ms = 20;
  s = slow.run(p);
  EXPECT_EQ(s.state, SpinUp::State::few);
  // Off (--quick): nothing queued at all.
  Protocol quick;
  quick.make_quick();
  auto none = fake_gpu([](uint32_t) { return 1.0; });
  s = none.run(quick);
  EXPECT_EQ(s.state, SpinUp::State::off);
  EXPECT_EQ(none.started, 0u);
}

Row measured_row(std::vector<double> ms, SpinUp::State spin = SpinUp::State::steady) {
  Row r = Row::of("gpusort", "automatic", parse_key_configs("u32")[0], 1024);
  r.ms = std::move(ms);
  r.spin.state = spin;
  r.spin.ms = 2000;
  return r;
}

TEST(BenchRows, SpreadAndFlags) {
  Protocol p;  // max_spread 5 %
  Row r = measured_row({10, 10.1, 9.9, 10, 10.2, 10, 9.8, 10, 10.1, 10, 10});
  r.finish(p);
  EXPECT_DOUBLE_EQ(r.ms_median, 10);
  EXPECT_DOUBLE_EQ(r.ms_min, 9.8);
  EXPECT_DOUBLE_EQ(r.ms_max, 10.2);
  EXPECT_NEAR(r.ms_q1, 10, 1e-12);
  EXPECT_NEAR(r.ms_q3, 10.05, 1e-12);
  EXPECT_TRUE(r.steady()) << r.unsteady;

  // The first runs at a lowered clock (the 24.4 against 8.4 us): 5 of 11 slow.
  Row slow = measured_row({24.4, 20, 16, 12, 9, 8.4, 8.4, 8.5, 8.4, 8.4, 8.4});
  slow.finish(p);
  EXPECT_FALSE(slow.steady());
  EXPECT_NE(slow.unsteady.find("spread"), std::string::npos) << slow.unsteady;

  // Tight runs after a spin-up that never settled are flagged too.
  Row capped = measured_row({10, 10, 10, 10, 10}, SpinUp::State::cap);
  capped.finish(p);
  EXPECT_FALSE(capped.steady());
  EXPECT_NE(capped.unsteady.find("spin-up unsettled after 2000 ms"), std::string::npos)
      << capped.unsteady;
  Row few = measured_row({10, 10, 10, 10, 10}, SpinUp::State::few);
  few.finish(p);
  EXPECT_TRUE(few.steady());

  // A few-microsecond row spreading a few tenths of a microsecond is launch jitter, not a clock:
  // steady below the absolute floor, flagged at the same relative spread above it.
  Row tiny = measured_row({0.0070, 0.0066, 0.0072, 0.0070, 0.0064, 0.0071, 0.0070, 0.0065});
  tiny.finish(p);
  EXPECT_GT(tiny.spread(), p.max_spread);
  EXPECT_TRUE(tiny.steady()) << tiny.unsteady;
  Row wide = measured_row({0.070, 0.066, 0.072, 0.070, 0.064, 0.071, 0.070, 0.065});
  wide.finish(p);
  EXPECT_FALSE(wide.steady());

  // The threshold is the protocol's.
  Protocol loose;
  loose.max_spread = 1.0;
  slow.finish(loose);
  EXPECT_TRUE(slow.steady());
}

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(BenchRows, JsonAndCsvCarryTheSpreadAndTheFlag) {
  Protocol p;
  Row good = measured_row({1, 1, 1, 1, 1});
  good.finish(p);
  good.sm_clock_mhz = 1980;
  good.face = "cuda";
  Row bad = measured_row({1, 2, 3, 4, 5});
  bad.finish(p);
  Row skipped = Row::of("gpusort", "odd_even", parse_key_configs("u32")[0], 1 << 20);
  skipped.skipped = "rejected";
  const std::string dir = ::testing::TempDir();
  RunInfo info{"gpusort", "dev", "drv", "cmd", p, 1, "no NVML"};
  write_json(dir + "rows.json", info, {good, bad, skipped});
  const std::string json = read_all(dir + "rows.json");
  EXPECT_NE(json.find("\"steady\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"steady\": false, \"unsteady\": \"spread"), std::string::npos) << json;
  EXPECT_NE(json.find("\"sm_clock_mhz\": 1980"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"sm_clock_mhz\": -1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"spin_up\": {\"state\": \"steady\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"max_spread\": 0.05"), std::string::npos) << json;
  EXPECT_NE(json.find("\"sm_clock_source\": \"no NVML\""), std::string::npos) << json;
  // The face where a row names one, only there.
  EXPECT_NE(json.find("\"algorithm\": \"automatic\", \"face\": \"cuda\", \"config\""),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find("\"face\"", json.find("\"face\"") + 1), std::string::npos) << json;

  write_csv(dir + "rows.csv", {good, bad, skipped});
  std::istringstream csv(read_all(dir + "rows.csv"));
  std::string header, line;
  std::getline(csv, header);
  // The columns of before first, in their order; the new ones after `skipped`.
  EXPECT_EQ(header.rfind("implementation,algorithm,config,key_bytes,value_bytes,n,ms_median,ms_min,"
                         "ms_max,gkeys_per_s,gb_per_s,scratch_bytes,warmups,runs,sets,verified,"
                         "skipped,",
                         0),
            0u)
      << header;
  const auto columns = [](const std::string& text) {
    size_t count = 1;
    bool quoted = false;
    for (char ch : text) quoted ^= ch == '"', count += !quoted && ch == ',';
    return count;
  };
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    EXPECT_EQ(columns(line), columns(header)) << line;
  }
  EXPECT_EQ(rows, 3);
  EXPECT_NE(header.find(",kernels,face"), std::string::npos) << header;
  const std::string text = read_all(dir + "rows.csv");
  EXPECT_NE(text.find(",true,\"\",steady,2000,1980,\"\",cuda\n"), std::string::npos) << text;
  EXPECT_NE(text.find(",\"rejected\",,,,,,,,,\"\",\n"), std::string::npos) << text;
}

TEST(BenchRows, TheTableShowsTheFlag) {
  Protocol p;
  Row bad = measured_row({1, 2, 3, 4, 5});
  bad.finish(p);
  Row good = measured_row({1, 1, 1, 1, 1});
  good.finish(p);
  ::testing::internal::CaptureStdout();
  print_row(good, true);
  print_row(bad, false);
  print_unsteady_summary({good, bad});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("NOT STEADY: spread 66.7% > 5.0%"), std::string::npos) << out;
  EXPECT_NE(out.find("NOT STEADY: 1 of 2 measured rows"), std::string::npos) << out;
  const std::string first = out.substr(0, out.find('\n'));
  EXPECT_EQ(first.find("NOT STEADY"), std::string::npos) << first;
  EXPECT_NE(first.find("   0.0%    2000       -"), std::string::npos)
      << first;  // spread, spin, MHz
}

TEST(BenchClock, AbsentNvmlGivesNoClock) {
  // Where libnvidia-ml.so.1 is missing (this suite's machines) or sees no such GPU.
  const unsigned char uuid[16] = {};
  SmClock clock(uuid, false);
  if (!clock.available()) {
    EXPECT_EQ(clock.mhz(), -1);
    EXPECT_FALSE(clock.how().empty());
  }
}

}  // namespace
}  // namespace gpusort::bench
