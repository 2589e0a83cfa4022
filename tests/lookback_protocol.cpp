// Host test of src/algorithms/onesweep/cuda/lookback.cuh, the look-back the CUDA pass kernels run
// (onesweep_pass.cu), built with the host compiler: each block
// is emulated by THREADS host threads that share a std::barrier (__syncthreads) and a Shared
// struct (shared memory), running the very code the kernel runs. A block gets a tile, publishes
// its digit counts (unless it refuses), looks back, publishes its inclusive prefix and records
// each digit's exclusive prefix, which must equal the counts of all earlier tiles. Blocks start
// in order, reversed or shuffled, with at most `resident` running at once, so that blocks wait
// on predecessors that have not started (only the fallback gets them through: no forward
// progress is assumed), and two passes share the table without clearing it (tags grow). Tables
// shorter than the tile count make readers meet reused slots. Threads yield at random in the
// atomics to vary the interleavings.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/onesweep/cuda/lookback.cuh"

using gpusort::cuda::Lookback;
using gpusort::cuda::LookbackEntry;
using gpusort::cuda::LookbackParams;

namespace {

constexpr uint32_t kRadix = gpusort::cuda::kLookbackRadix;  // digits of a pass
constexpr uint32_t kDigitBits = 8;                          // key bits a pass sorts by
static_assert(kRadix == 1u << kDigitBits);

struct HostBlock {
  static inline thread_local uint32_t index = 0;
  static inline thread_local std::barrier<>* block_barrier = nullptr;
  static inline thread_local uint64_t jitter_state = 0;

  static void jitter() {
    jitter_state = jitter_state * 6364136223846793005ull + 1442695040888963407ull;
    if ((jitter_state >> 60) == 0) std::this_thread::yield();
  }
  static uint32_t thread() { return index; }
  static void sync() { block_barrier->arrive_and_wait(); }
  static LookbackEntry load_entry(LookbackEntry* p) {
    jitter();
    return std::atomic_ref<LookbackEntry>(*p).load(std::memory_order_relaxed);
  }
  template <class T>
  static void atomic_max(T* p, T v) {
    std::atomic_ref<T> a(*p);
    T current = a.load(std::memory_order_relaxed);
    while (current < v && !a.compare_exchange_weak(current, v, std::memory_order_relaxed)) {
    }
  }
  static void max_entry(LookbackEntry* p, LookbackEntry v) {
    jitter();
    atomic_max(p, v);
  }
  static void shared_max(uint32_t* p, uint32_t v) { atomic_max(p, v); }
  static void shared_add(uint32_t* p, uint32_t v) {
    std::atomic_ref<uint32_t>(*p).fetch_add(v, std::memory_order_relaxed);
  }
  static void global_add(uint32_t* p, uint32_t v) {
    std::atomic_ref<uint32_t>(*p).fetch_add(v, std::memory_order_relaxed);
  }
};

enum class Order { in_order, reversed, shuffled };

struct Scenario {
  const char* name;
  Order order;
  uint32_t resident;        // blocks running at once
  uint32_t slots;           // table length in tiles (a power of two)
  uint32_t refusal_period;  // tiles p % period == period - 1 never publish (0: all do)
  uint32_t spin_limit;
  bool expect_fallbacks;
};

// PACKED: the fallback's 16-bit counts; then half the keys have digit 1 in both passes, so
// that a recounted tile holds more than 255 of one odd digit (the upper half of a word).
// MASK_WALK: windows in place walked by bit masks (the kernels' kHintMaskWalk).
template <int THREADS, uint32_t TILE, int WINDOW, bool PACKED = false, bool MASK_WALK = false>
bool run_scenario(const Scenario& sc, uint32_t n, uint64_t seed) {
  using LB = Lookback<HostBlock, uint32_t, THREADS, TILE, WINDOW, PACKED, MASK_WALK>;
  constexpr int kBins = LB::kBins;
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> keys(n);
  for (auto& k : keys) {
    k = uint32_t(rng()) & (rng() % 3 == 0 ? 0x0707u : 0xFFFFu);  // some digits crowded
    if (PACKED && rng() % 2 == 0) k = 0x0101u;
  }
  const uint32_t tiles = (n + TILE - 1) / TILE;
  std::vector<LookbackEntry> table(size_t(sc.slots) * kRadix, 0);
  uint32_t fallbacks = 0;
  bool ok = true;
  for (uint32_t pass = 0; pass < 2; ++pass) {
    const LookbackParams params{n, pass * kDigitBits, 1 + pass * tiles, sc.slots - 1,
                                sc.spin_limit};
    // What every tile must find: the counts of all earlier tiles, per digit.
    std::vector<std::vector<uint32_t>> counts(tiles, std::vector<uint32_t>(kRadix, 0));
    for (uint32_t i = 0; i < n; ++i) ++counts[i / TILE][(keys[i] >> params.bit) & 0xFF];
    std::vector<std::vector<uint32_t>> found(tiles, std::vector<uint32_t>(kRadix, UINT32_MAX));

    std::vector<uint32_t> order(tiles);
    for (uint32_t t = 0; t < tiles; ++t) order[t] = t;
    if (sc.order == Order::reversed) std::reverse(order.begin(), order.end());
    if (sc.order == Order::shuffled) std::shuffle(order.begin(), order.end(), rng);

    // Blocks start in `order`, at most `resident` at once (the first ones of a wave need not be
    // the earliest tiles).
    for (uint32_t first = 0; first < tiles; first += sc.resident) {
      std::vector<std::unique_ptr<std::barrier<>>> barriers;
      std::vector<std::unique_ptr<typename LB::Shared>> shared;
      std::vector<std::thread> threads;
      const uint32_t wave = std::min(sc.resident, tiles - first);
      for (uint32_t b = 0; b < wave; ++b) {
        barriers.push_back(std::make_unique<std::barrier<>>(THREADS));
        shared.push_back(std::make_unique<typename LB::Shared>());
      }
      for (uint32_t b = 0; b < wave; ++b) {
        const uint32_t tile = order[first + b];
        for (uint32_t t = 0; t < uint32_t(THREADS); ++t) {
          threads.emplace_back([&, b, tile, t] {
            HostBlock::index = t;
            HostBlock::block_barrier = barriers[b].get();
            HostBlock::jitter_state = seed ^ (uint64_t(tile) << 20) ^ t ^ (uint64_t(pass) << 40);
            typename LB::Shared& s = *shared[b];
            const uint32_t tag = params.first_tag + tile;
            const bool publishes =
                sc.refusal_period == 0 || tile % sc.refusal_period != sc.refusal_period - 1;
            // The ranking's counts, published before the look-back (tile 0's are inclusive).
            uint32_t bins[kBins];
            for (int u = 0; u < kBins; ++u) {
              const int bin = LB::thread_bin(u);
              bins[u] = bin < int(kRadix) ? counts[tile][bin] : 0;
              if (publishes && bin < int(kRadix))
                LB::publish(table.data(), params.slot_mask, tile, uint32_t(bin), tag, tile == 0,
                            bins[u]);
            }
            LB::prepare(s);
            HostBlock::sync();
            uint32_t exclusive[kBins];
            LB::run(s, keys.data(), table.data(), &fallbacks, params, tile, exclusive);
            for (int u = 0; u < kBins; ++u) {
              const int bin = LB::thread_bin(u);
              if (bin >= int(kRadix)) continue;
              if (publishes && tile != 0)
                LB::publish(table.data(), params.slot_mask, tile, uint32_t(bin), tag, true,
                            exclusive[u] + bins[u]);
              found[tile][bin] = exclusive[u];
            }
          });
        }
      }
      for (auto& t : threads) t.join();
    }
    std::vector<uint32_t> prefix(kRadix, 0);
    for (uint32_t tile = 0; tile < tiles && ok; ++tile) {
      for (uint32_t d = 0; d < kRadix; ++d) {
        if (found[tile][d] != prefix[d]) {
          std::printf("  %s: pass %u tile %u digit %u: exclusive prefix %u, expected %u\n", sc.name,
                      pass, tile, d, found[tile][d], prefix[d]);
          ok = false;
          break;
        }
        prefix[d] += counts[tile][d];
      }
    }
  }
  if (ok && sc.expect_fallbacks && fallbacks == 0) {
    std::printf("  %s: no look-back fell back\n", sc.name);
    ok = false;
  }
  std::printf("%-4s %s: %d threads, tile %u, window %d%s, n %u, %u fallbacks\n", ok ? "ok" : "FAIL",
              sc.name, THREADS, TILE, WINDOW,
              PACKED ? ", 16-bit fallback counts" : (MASK_WALK ? ", walked by masks" : ""), n,
              fallbacks);
  return ok;
}

}  // namespace

int main() {
  const Scenario scenarios[] = {
      {"in order", Order::in_order, 4, 64, 0, 64, false},
      {"in order, 2-slot table", Order::in_order, 4, 2, 0, 64, false},
      {"in order, 1-slot table", Order::in_order, 3, 1, 0, 64, false},
      {"reversed, one block at a time", Order::reversed, 1, 64, 0, 4, true},
      {"reversed, 3 at a time, 4 slots", Order::reversed, 3, 4, 0, 4, true},
      {"shuffled, every 3rd tile refuses", Order::shuffled, 4, 64, 3, 4, true},
      {"shuffled, refusals, 8 slots", Order::shuffled, 3, 8, 2, 2, true},
  };
  int failed = 0, passed = 0;
  for (const Scenario& sc : scenarios) {
    // 64 threads: four digits per thread; windows of 16 and 1 entries.
    (run_scenario<64, 128, 16>(sc, 24 * 128 + 37, 1) ? passed : failed)++;
    (run_scenario<64, 128, 1>(sc, 20 * 128, 2) ? passed : failed)++;
    // 384 threads: one digit per thread, a third of the threads without one (as the kernels).
    (run_scenario<384, 768, 16>(sc, 7 * 768 + 5, 3) ? passed : failed)++;
    // The fallback's counts two to a word (variants with kHintPackedFallback).
    (run_scenario<384, 768, 16, true>(sc, 7 * 768 + 5, 4) ? passed : failed)++;
    (run_scenario<64, 128, 16, true>(sc, 24 * 128 + 37, 5) ? passed : failed)++;
    // Windows in place walked by bit masks (kHintMaskWalk), of 16 and of 1 entry.
    (run_scenario<64, 128, 16, false, true>(sc, 24 * 128 + 37, 8) ? passed : failed)++;
    (run_scenario<64, 128, 1, false, true>(sc, 20 * 128, 9) ? passed : failed)++;
  }
  // More tiles than a table of 32 slots: windows of 16 and 8 in place walked by bit masks
  // (window_in_place) meet unpublished entries, refusals and reused slots.
  const Scenario long_scenarios[] = {
      {"shuffled, 32 slots, 70 tiles", Order::shuffled, 6, 32, 0, 4, false},
      {"shuffled, every 3rd tile refuses, 32 slots, 70 tiles", Order::shuffled, 6, 32, 3, 4, true},
      {"reversed, 3 at a time, 32 slots, 70 tiles", Order::reversed, 3, 32, 0, 4, true},
  };
  // The pass kernels' window of 8, by masks and entry by entry.
  for (const Scenario& sc : long_scenarios) {
    (run_scenario<64, 128, 16, false, true>(sc, 70 * 128 + 9, 6) ? passed : failed)++;
    (run_scenario<64, 128, 8, false, true>(sc, 70 * 128 + 9, 7) ? passed : failed)++;
    (run_scenario<64, 128, 8>(sc, 70 * 128 + 9, 10) ? passed : failed)++;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
