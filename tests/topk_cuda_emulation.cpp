// Host test of the CUDA face's top-k kernels (src/algorithms/topk/cuda/topk_select.cu), built with
// the host compiler: the very kernel code, each block emulated by its threads, blocks one after
// another (tests/cuda_emulation/; CUB's BlockScan by a stand-in there). The launches of
// src/api/cuda_topk.cpp in the same order (the bound's, or init; then the digits), small grids so
// that blocks stride over several tiles, the candidate list made by the first pass whose
// candidates fit it (the second, a later one) and refused, the bound's list fitting and
// overflowing, and a long list's sort (list_order); the face's sort of the survivors by
// std::stable_sort. The cooperative launches meet at grid barriers, which the emulation's blocks
// (one after another) cannot: a grid of one block runs them, wider grids their stages a launch
// each (the same functions). Every result is compared whole with
// the first k of std::stable_sort: keys before the k-th in input order, the equal ones after them,
// positions, and the state the later launches read. Needs no GPU, no nvcc.
#include "emulated_cuda.hpp"
#include "emulated_keys.hpp"
// clang-format off: the kernels after the built-ins
#include "algorithms/topk/cuda/topk_select.cu"
// clang-format on

#include <cstdio>
#include <numeric>
#include <random>
#include <string>

namespace {

using namespace gpusort::cuda;
using u64 = unsigned long long;

int failures = 0, checks = 0;
int bucket_sorts = 0;   // long lists sorted by buckets
bool bucketed = false;  // the last run's

using cuda_emulation::launch;

// The digits' stages as launches of their own, for grids wider than the emulation's grid barrier.
template <class U>
void histogram_stage(const TopKParams p) {
  topk::histogram<U>(p);
}
template <class U>
void count_stage(const TopKParams p) {
  topk::count<U>(p);
}
void scan_sums_stage(const TopKParams p) {
  topk::scan_sums(p);
}
void scan_runs_stage(const TopKParams p) {
  topk::scan_runs(p);
}
template <class U>
void write_stage(const TopKParams p) {
  topk::write<U>(p);
}
// The bound's stages likewise.
template <class U>
void bound_entries_stage(const TopKParams p) {
  __shared__ topk::SelectShared select;
  topk::bound_entries<U>(p, topk::select_digits(topk_entries_params(p), topk::passes(p), select,
                                                kTopKBoundBucket));
}
template <class U>
void bound_list_stage(const TopKParams p) {
  topk::bound_list<U>(p, topk::stored_bound<U>(p));
}
// A long list's sort likewise: the first read; the buckets' scatter and sort (nothing where the
// passes sort it); the passes' phase p.pass (nothing where the buckets did).
template <class U>
void list_order_start_stage(const TopKParams p) {
  __shared__ topk::ListBuckets<U> buckets;
  topk::list_order_start<U>(p, buckets);
}
template <class U>
bool list_buckets_planned(const TopKParams& p, topk::ListBuckets<U>& buckets) {
  topk::list_bucket_span<U>(p, buckets);
  return topk::list_bucket_plan<U>(p, buckets);
}
template <class U>
void list_bucket_scatter_stage(const TopKParams p) {
  __shared__ topk::ListBuckets<U> buckets;
  if (list_buckets_planned<U>(p, buckets)) topk::list_bucket_scatter<U>(p, buckets);
}
template <class U>
void list_bucket_sort_stage(const TopKParams p) {
  __shared__ topk::ListBuckets<U> buckets;
  if (list_buckets_planned<U>(p, buckets)) topk::list_bucket_sort<U>(p, buckets);
}
template <class U>
void list_order_phase_stage(const TopKParams p) {
  __shared__ topk::ListBuckets<U> buckets;
  __shared__ topk::ListPasses passes;
  if (list_buckets_planned<U>(p, buckets)) return;
  topk::list_passes<U>(p, passes);
  if (p.pass < topk::list_phases(p, passes)) topk::list_phase<U>(p, passes, p.pass);
}

struct Case {
  uint32_t key_bytes, kind;  // kind: 0 unsigned, 1 signed, 2 float
  const char* spread;  // "uniform", "few", "equal", "sorted", "specials", "narrow12", "narrow24"
  uint32_t n, k;
  bool descending = false;
  uint32_t begin_bit = 0, end_bit = 0;  // end 0: the full key
  bool numpy = false;
  uint32_t count = ~0u;    // below n: the GPU-side count
  uint32_t grid = 3;       // blocks of the striding kernels
  int capacity = -1;       // the candidate list; -1: the face's (min(n, n / 8 + 1024))
  uint32_t entries = 0;    // the bound's entries (a multiple of 1024); 0: no bound
  int list_capacity = -1;  // the bound's list; -1: the face's (2 k + 2048)
  uint32_t offset = 0;     // keys this many past a 16-byte boundary
};

template <class U>
U canonical_of(U bits, const Case& c) {
  return c.numpy ? gpusort::FloatKeyBits<U>::canonical(bits) : bits;
}

template <class U>
u64 compared(const Case& c, U raw, u64 mask) {
  U o = gpusort::to_radix_order<U>(canonical_of<U>(raw, c), c.kind);
  if (c.descending) o = ~o;
  return u64(o) & mask;
}

// The bound's list: the case's, or the face's (2 k + 2048).
uint32_t case_list_capacity(const Case& c) {
  return c.list_capacity >= 0 ? uint32_t(c.list_capacity) : 2 * c.k + 2048;
}

// buckets: list_order may sort the bound's list by buckets (the face's default), else by its
// passes. Sets `bucketed` where the buckets sorted it.
template <class U>
void run(const Case& c, uint64_t seed, bool buckets) {
  ++checks;
  bucketed = false;
  const std::vector<U> storage = cuda_emulation::make_keys<U>(c.spread, c.n + c.offset, seed);
  const U* keys = storage.data() + c.offset;
  const uint32_t width = sizeof(U) * 8, end = c.end_bit ? c.end_bit : width;
  const u64 mask = cuda_emulation::range_mask(c.begin_bit, end);
  const uint32_t n = std::min(c.count, c.n), k = std::min(c.k, n);

  // The face's scratch, as host memory (stale contents, as the caller's scratch may hold).
  const uint32_t tiles = (c.n + kTopKTile - 1) / kTopKTile;
  const uint32_t capacity = c.capacity >= 0 ? uint32_t(c.capacity) : std::min(c.n, c.n / 8 + 1024);
  std::vector<uint32_t> state(kTopKStateWords + kTopKMaxPasses * kTopKBins, 0xdeadbeef);
  std::vector<uint32_t> candidates(std::max(capacity, 1u), 0xdeadbeef);
  std::vector<u64> tile_counts(tiles, 0xdeadbeefdeadbeefull), tile_offsets(tiles, 7);
  std::vector<u64> block_sums(kTopKScanBlocks, 9);
  std::vector<U> keys_out(c.k + 1, U(0x5c5c5c5c5c5c5c5cull));
  std::vector<uint32_t> positions(c.k + 1, 0x5c5c5c5cu);
  std::vector<U> entries(std::max(c.entries, 1u), U(0x5c5c5c5c5c5c5c5cull));
  std::vector<uint32_t> bound_state(kTopKBoundStateWords, 0xdeadbeef);
  const uint32_t list_capacity = case_list_capacity(c);
  if (c.entries != 0) candidates.resize(std::max(capacity, list_capacity), 0xdeadbeef);
  std::vector<U> list_keys(list_capacity + 1, U(0x5c5c5c5c5c5c5c5cull));
  std::vector<uint32_t> list_positions(list_capacity + 1, 0xdeadbeef);
  // A list past one block's sort: list_order sorts it, the digits' result too.
  const bool long_list = c.entries != 0 && topk_long_list(list_capacity);
  std::vector<U> list_keys_b(list_capacity + 1, U(0x5c5c5c5c5c5c5c5cull));
  std::vector<uint32_t> list_positions_b(list_capacity + 1, 0xdeadbeef);
  std::vector<uint32_t> list_counts(long_list ? topk_list_counts_words(list_capacity) : 1,
                                    0xdeadbeef);
  const uint32_t qualifying_capacity =
      c.entries != 0 ? topk_qualifying_capacity(c.n, c.entries, sizeof(U), c.k) : 0;
  std::vector<uint32_t> qualifying(qualifying_capacity + 1, 0xdeadbeef);
  // Where no entries' shares are read, the groups' lows (stale, as the caller's scratch may be).
  const bool lows = c.entries != 0 && qualifying_capacity == 0;
  std::vector<U> group_lows(lows ? topk_groups(c.n, sizeof(U)) : 0, U(0x5c5c5c5c5c5c5c5cull));
  // With the bound, its last launch writes the results as the caller wants them: by the seed,
  // u32 positions alone, u64 indices with 4-byte values, or u32 positions with 8-byte values.
  const bool bounded = c.entries != 0;
  const uint32_t outputs = bounded ? uint32_t(seed % 3) : 0;
  std::vector<u64> values(c.n + c.offset), indices64(c.k + 1, 0x5c5c5c5c5c5c5c5cull);
  for (uint32_t i = 0; i < values.size(); ++i) values[i] = i * 0x9e3779b97f4a7c15ull + 1;
  std::vector<uint32_t> values32(values.begin(), values.end());
  std::vector<u64> values_out(c.k + 1, 0x5c5c5c5c5c5c5c5cull);
  std::vector<uint32_t> values_out32(c.k + 1, 0x5c5c5c5cu);
  TopKParams p{};
  p.keys = keys;
  p.keys_out = keys_out.data();
  p.positions = positions.data();
  p.state = state.data();
  p.candidates = candidates.data();
  p.tile_counts = tile_counts.data();
  p.tile_offsets = tile_offsets.data();
  p.block_sums = block_sums.data();
  const uint32_t count32 = c.count;
  p.count = c.count < c.n ? &count32 : nullptr;
  p.mask = mask;
  p.n = c.n;
  p.k = c.k;
  p.tiles = tiles;
  p.capacity = capacity;
  p.key_kind = c.kind;
  p.descending = c.descending;
  p.numpy = c.numpy;
  p.begin_bit = c.begin_bit;
  p.end_bit = end;
  p.list_buckets = buckets ? 1 : 0;
  const bool wide = sizeof(U) == 8;
  if (outputs == 1) {
    p.indices64 = indices64.data();
    p.values = values32.data() + c.offset;
    p.values_out = values_out32.data();
    p.value_bytes = 4;
  } else if (outputs == 2) {
    p.values = values.data() + c.offset;
    p.values_out = values_out.data();
    p.value_bytes = 8;
  }
  if (bounded) {  // the bound: as the face launches it
    p.candidates = candidates.data();
    p.entries = entries.data();
    p.bound_state = bound_state.data();
    p.entries_n = c.entries;
    p.list_capacity = list_capacity;
    p.list_keys = list_keys.data();
    p.list_positions = list_positions.data();
    p.list_keys_b = list_keys_b.data();
    p.list_positions_b = list_positions_b.data();
    p.list_counts = list_counts.data();
    p.qualifying = qualifying.data();
    p.qualifying_capacity = qualifying_capacity;
    p.group_lows = lows ? group_lows.data() : nullptr;
    // The entries (the bound's state block cleared first, as the face does): as the face launches
    // them, or (a grid of one block) each thread taking several readers.
    std::fill(bound_state.begin(), bound_state.end(), 0u);
    launch(lows ? (wide ? gpusort_topk_least_lows_64 : gpusort_topk_least_lows_32)
                : (wide ? gpusort_topk_least_64 : gpusort_topk_least_32),
           c.grid == 1 ? 1 : c.entries / (16 / sizeof(U)) / kTopKThreads, kTopKThreads, p);
    if (c.grid == 1) {
      launch(wide ? gpusort_topk_bound_64 : gpusort_topk_bound_32, 1, kTopKThreads, p);
    } else {
      TopKParams e = topk_entries_params(p);
      for (uint32_t pass = 1; pass < topk_passes(c.begin_bit, end); ++pass) {  // (0: least's)
        e.pass = pass;
        launch(histogram_stage<U>, 2, kTopKThreads, e);
      }
      launch(bound_entries_stage<U>, c.grid, kTopKThreads, p);
      launch(bound_list_stage<U>, c.grid, kTopKThreads, p);
    }
  } else {
    launch(gpusort_topk_init, 1, kTopKThreads, p);
  }
  // The digits (with the bound, their result written into the list).
  TopKParams compaction = p;
  if (bounded) {
    compaction.keys_out = list_keys.data();
    compaction.positions = list_positions.data();
  }
  if (c.grid == 1) {
    launch(wide ? gpusort_topk_digits_64 : gpusort_topk_digits_32, 1, kTopKThreads, compaction);
  } else {
    for (uint32_t pass = 0; pass < topk_passes(c.begin_bit, end); ++pass) {
      compaction.pass = pass;
      launch(histogram_stage<U>, c.grid, kTopKThreads, compaction);
    }
    launch(count_stage<U>, c.grid, kTopKThreads, compaction);
    launch(scan_sums_stage, c.grid, kTopKThreads, compaction);
    launch(scan_runs_stage, c.grid, kTopKThreads, compaction);
    launch(write_stage<U>, c.grid, kTopKThreads, compaction);
  }
  // The bound's list (or the digits' result): list_sort up to a block's sort; a longer one
  // list_order, its first k written. A grid of one block runs list_order; wider ones (at most the
  // case's) its stages.
  const uint32_t list_count = state[kTopKStateListed];
  if (bounded && !long_list)
    launch(wide ? gpusort_topk_list_sort_64 : gpusort_topk_list_sort_32, 1, kTopKListSortThreads,
           p);
  if (long_list) {
    const uint32_t list_grid = std::min(c.grid, topk_list_blocks(list_capacity));
    if (list_grid == 1) {
      launch(wide ? gpusort_topk_list_order_64 : gpusort_topk_list_order_32, 1, kTopKThreads, p);
    } else {
      launch(list_order_start_stage<U>, list_grid, kTopKThreads, p);
      launch(list_bucket_scatter_stage<U>, list_grid, kTopKThreads, p);
      launch(list_bucket_sort_stage<U>, list_grid, kTopKThreads, p);
      for (p.pass = 0; p.pass < 2 * kTopKListPasses + 1; ++p.pass)
        launch(list_order_phase_stage<U>, list_grid, kTopKThreads, p);
    }
  }

  // The reference: the stable order of the first n keys.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return compared<U>(c, keys[a], mask) < compared<U>(c, keys[b], mask);
  });
  char what[200];
  std::snprintf(what, sizeof what,
                "%u-bit kind %u %s n=%u k=%u count=%d %s bits [%u,%u)%s grid %u capacity %d "
                "entries %u%s",
                width, c.kind, c.spread, c.n, c.k, c.count < c.n ? int(c.count) : -1,
                c.descending ? "desc" : "asc", c.begin_bit, end, c.numpy ? " numpy" : "", c.grid,
                c.capacity, c.entries, long_list ? (buckets ? " buckets" : " passes") : "");
  auto fail = [&](const std::string& why) {
    if (++failures <= 30) std::fprintf(stderr, "FAIL %s: %s\n", what, why.c_str());
  };
  if (state[kTopKStateN] != n || state[kTopKStateK] != k) return fail("state n or k");
  // Spread and sorted keys fit the bound's list (about 1.15 k and k); where it fits, the result
  // is the whole sorted one.
  const bool listed = c.entries != 0 && state[kTopKStateBounded] <= list_capacity;
  if (c.entries != 0 && k != 0 && c.list_capacity < 0 && 4 * k <= c.entries &&
      (std::string(c.spread) == "uniform" || std::string(c.spread) == "sorted") && !listed)
    return fail("the bound listed " + std::to_string(state[kTopKStateBounded]) + " keys");
  // The bound's long list is sorted by buckets where asked, no bucket holds more than
  // kTopKListBucketMost and each block's buckets fit its sort (its stretch and the fullest
  // bucket, less one): every key counted in its bucket, and then scattered once.
  if (buckets && long_list && listed) {
    uint64_t counted = 0, scattered = 0;
    uint32_t most = 0;
    for (uint32_t j = 0; j < kTopKListBuckets; ++j) {
      counted += bound_state[kTopKBoundBucketTotals + j];
      scattered += bound_state[kTopKBoundBucketFill + j];
      most = std::max(most, bound_state[kTopKBoundBucketTotals + j]);
    }
    const uint32_t count = state[kTopKStateBounded];
    const uint32_t list_grid = std::min(c.grid, topk_list_blocks(list_capacity));
    const bool fits = most <= kTopKListBucketMost &&
                      (count + list_grid - 1) / list_grid + most <= kTopKListBucketEntries + 1;
    if (counted != count || scattered != (fits ? count : 0))
      return fail("the buckets counted " + std::to_string(counted) + " and scattered " +
                  std::to_string(scattered) + " of " + std::to_string(count) + " keys");
    bucket_sorts += fits;
    bucketed = fits;
  }
  // Their k entries at or below the bound are listed where the capacity takes them: the second
  // read then takes only their shares. (In NumPy's order, the NaNs among random bits tie.)
  if (c.entries != 0 && k != 0 && qualifying_capacity != 0 && !c.numpy &&
      (std::string(c.spread) == "uniform" || std::string(c.spread) == "sorted") &&
      state[kTopKStateQualifying] > qualifying_capacity)
    return fail(std::to_string(state[kTopKStateQualifying]) + " entries at or below the bound");
  // The bound's whole sorted result (its list's, or the digits' result sorted): the original keys,
  // the positions or indices, the values; nothing past k written.
  auto check_sorted_result = [&] {
    for (uint32_t i = 0; i < k; ++i) {
      const u64 position = outputs == 1 ? indices64[i] : positions[i];
      if (position != order[i] || keys_out[i] != keys[order[i]])
        return fail("result " + std::to_string(i));
      if ((outputs == 1 && values_out32[i] != values32[c.offset + order[i]]) ||
          (outputs == 2 && values_out[i] != values[c.offset + order[i]]))
        return fail("value " + std::to_string(i));
    }
    for (uint32_t i = k; i <= c.k; ++i)
      if (keys_out[i] != U(0x5c5c5c5c5c5c5c5cull) ||
          (outputs == 1 ? indices64[i] != 0x5c5c5c5c5c5c5c5cull : positions[i] != 0x5c5c5c5cu) ||
          values_out32[i] != 0x5c5c5c5cu || values_out[i] != 0x5c5c5c5c5c5c5c5cull)
        return fail("wrote past the results at " + std::to_string(i));
  };
  if (listed) return check_sorted_result();
  if (k == 0) {
    if (keys_out[0] != U(0x5c5c5c5c5c5c5c5cull) || positions[0] != 0x5c5c5c5cu)
      fail("k = 0 wrote a result");
    return;
  }
  const u64 kth = compared<U>(c, keys[order[k - 1]], mask);
  const u64 state_kth = u64(state[kTopKStatePrefix]) | (u64(state[kTopKStatePrefix + 1]) << 32);
  uint32_t before = 0;
  while (before < k && compared<U>(c, keys[order[before]], mask) < kth) ++before;
  if (state_kth != kth) return fail("the k-th key");
  if (state[kTopKStateBefore] != before) return fail("before");
  if (state[kTopKStateNeedEqual] != k - before) return fail("need_equal");
  if (bounded) {  // the digits' result went into the list; a long one's sort took `before`
    if (long_list && list_count != before)
      return fail("the list's count " + std::to_string(list_count));
    return check_sorted_result();
  }
  // The compaction: keys before the k-th in input order, then the first equal ones.
  std::vector<uint32_t> compacted(order.begin(), order.begin() + k);
  std::sort(compacted.begin(), compacted.begin() + before);
  for (uint32_t i = 0; i < k; ++i) {
    if (positions[i] != compacted[i])
      return fail("position " + std::to_string(i) + " is " + std::to_string(positions[i]) +
                  ", expected " + std::to_string(compacted[i]));
    if (keys_out[i] != canonical_of<U>(keys[compacted[i]], c))
      return fail("key " + std::to_string(i));
  }
  if (keys_out[c.k] != U(0x5c5c5c5c5c5c5c5cull) || positions[c.k] != 0x5c5c5c5cu ||
      (k < c.k && positions[k] != 0x5c5c5c5cu))
    return fail("wrote past the results");
  // The survivors' sort (the face's stable sort of [0, before) by the compared key, positions
  // with them), then the whole result against the reference.
  std::vector<uint32_t> sorted(positions.begin(), positions.begin() + k);
  std::stable_sort(sorted.begin(), sorted.begin() + before, [&](uint32_t a, uint32_t b) {
    return compared<U>(c, keys[a], mask) < compared<U>(c, keys[b], mask);
  });
  if (!std::equal(sorted.begin(), sorted.end(), order.begin())) fail("the sorted result");
}

void run_case(const Case& c, uint64_t seed) {
  // A long list that the buckets sorted: by the passes alone too.
  for (bool buckets : {true, false}) {
    if (c.key_bytes == 4)
      run<uint32_t>(c, seed, buckets);
    else
      run<unsigned long long>(c, seed, buckets);
    if (!bucketed) break;
  }
}

}  // namespace

// topk_cuda_emulation [--full]: --full adds sizes, k and spreads (minutes on two cores).
int main(int argc, char** argv) {
  const bool full = argc > 1 && std::string(argv[1]) == "--full";
  uint64_t seed = 1;
  const std::vector<uint32_t> sizes =
      full ? std::vector<uint32_t>{1, 2, 100, 2047, 2049, 9000} : std::vector<uint32_t>{100, 9000};
  for (uint32_t bytes : {4u, 8u})
    for (uint32_t kind : {0u, 1u, 2u}) {
      for (uint32_t n : sizes)
        for (uint32_t k : {0u, 1u, 37u, 2048u, n - 1, n}) {
          if (k > n) continue;
          for (bool desc : {false, true}) {
            if (!full && desc != (k % 2 == 1)) continue;
            run_case({bytes, kind, "uniform", n, k, desc}, ++seed);
            if (full || n > 2048)  // (one block: the digits' cooperative kernel)
              run_case({bytes, kind, "few", n, k, desc, 0, 0, false, ~0u, k % 2 ? 3u : 1u}, ++seed);
          }
        }
      for (const char* spread : {"narrow12", "narrow24"})
        for (uint32_t k : {1u, 4000u}) run_case({bytes, kind, spread, 9000, k, k == 1}, ++seed);
      for (const char* spread : {"equal", "sorted", "specials"})
        for (uint32_t k : {1u, 500u, 4999u})
          if (full || k == 500) run_case({bytes, kind, spread, 5000, k, kind == 1}, ++seed);
      // Bit ranges: one pass (no list), two, and the top bits.
      const uint32_t w = bytes * 8;
      for (auto [b, e] :
           {std::pair<uint32_t, uint32_t>{3, 5}, {0, 11}, {0, 12}, {8, w - 8}, {w - 20, 0}})
        for (const char* spread : {"uniform", "few"})
          if (full || spread[0] == (b % 2 == 1 ? 'f' : 'u'))
            run_case({bytes, kind, spread, 7000, 1000, b % 2 == 1, b, e}, ++seed);
      // GPU-side counts; the list refused (capacity 0); one block; many blocks.
      for (uint32_t count : {0u, 1u, 3000u})
        run_case({bytes, kind, "few", 9000, 2000, false, 0, 0, false, count}, ++seed);
      run_case({bytes, kind, "uniform", 9000, 300, false, 0, 0, false, ~0u, 3, 0}, ++seed);
      run_case({bytes, kind, "uniform", 9000, 300, true, 0, 0, false, ~0u, 1}, ++seed);
      run_case({bytes, kind, "uniform", 9000, 8999, false, 0, 0, false, ~0u, 7}, ++seed);
    }
  // The bound: spread keys (their list), piled ones (its overflow), sorted, specials, bit ranges,
  // GPU-side counts (entries without keys), k above the entries.
  for (uint32_t bytes : {4u, 8u})
    for (uint32_t kind : {0u, 1u, 2u}) {
      for (const char* spread :
           {"uniform", "few", "equal", "sorted", "reversed", "specials", "narrow12"})
        for (uint32_t k : {1u, 37u, 256u}) {
          run_case({bytes, kind, spread, 20000, k, k == 37, 0, 0, false, ~0u, 5, -1, 1024}, ++seed);
          if (kind == 2)
            run_case({bytes, kind, spread, 20000, k, k != 37, 0, 0, true, ~0u, 5, -1, 1024},
                     ++seed);
        }
      run_case({bytes, kind, "uniform", 20000, 3000, false, 0, 0, false, ~0u, 5, -1, 1024}, ++seed);
      run_case(
          {bytes, kind, "uniform", 20000, 100, true, 4, bytes * 8 - 3, false, ~0u, 5, -1, 1024},
          ++seed);
      // Shares read in several batches of a block.
      run_case({bytes, kind, "uniform", 150000, 100, kind == 1, 0, 0, false, ~0u, 3, -1, 4096},
               ++seed);
      // The groups' lows read in several batches of one block (k past the entries' shares).
      run_case({bytes, kind, "uniform", 150000, 3000, kind == 2, 0, 0, false, ~0u, 1, -1, 4096},
               ++seed);
      // The list overflowed (a list of 40 for k = 37): the digits give the result.
      run_case({bytes, kind, "uniform", 20000, 37, false, 0, 0, false, ~0u, 5, -1, 1024, 40},
               ++seed);
      run_case({bytes, kind, "few", 20000, 37, true, 0, 0, false, ~0u, 1, -1, 1024}, ++seed);
      run_case({bytes, kind, "uniform", 20000, 37, false, 0, 0, false, ~0u, 1, -1, 1024}, ++seed);
      // A list longer than one block sorts: sorted by list_order; where it overflows (k as many as
      // the entries: about 6,000 keys at or below the bound), the digits' result, about k distinct
      // keys before the k-th, written into it for that sort (many blocks, one); GPU-side counts, of
      // 0 too.
      run_case({bytes, kind, "few", 20000, 200, true, 0, 0, false, ~0u, 5, -1, 1024, 5000}, ++seed);
      run_case({bytes, kind, "uniform", 20000, 1024, false, 0, 0, false, ~0u, 5, -1, 1024, 4100},
               ++seed);
      run_case({bytes, kind, "uniform", 20000, 1024, true, 0, 0, false, ~0u, 1, -1, 1024, 4100},
               ++seed);
      run_case({bytes, kind, "few", 20000, 3000, true, 0, 0, false, 9000, 5, -1, 1024}, ++seed);
      run_case({bytes, kind, "few", 20000, 200, false, 0, 0, false, 0, 5, -1, 1024, 5000}, ++seed);
      run_case({bytes, kind, "uniform", 20000, 200, false, 0, 0, false, ~0u, 5, -1, 1024, 5000},
               ++seed);
      run_case({bytes, kind, "uniform", 20000, 200, true, 0, 0, false, ~0u, 1, -1, 1024, 5000},
               ++seed);
      // The digits' result in a long list whose keys before the k-th are all equal (about 4,000
      // of the first of five values in the order, then the second's): no pass moves anything.
      for (uint32_t grid : {5u, 1u})
        run_case(
            {bytes, kind, "few", 20000, 5000, kind == 2, 0, 0, false, ~0u, grid, -1, 1024, 5000},
            ++seed);
      // The bound's long list sorted by its key's passes, its runs of equal keys put in position
      // order after them: runs of 3, of 32 (the most one thread orders) and of 33 (the full sort),
      // in one block and in five; the run at the k-th key's place.
      for (const char* spread : {"groups3", "groups32", "groups33"})
        for (uint32_t grid : {5u, 1u})
          run_case({bytes, kind, spread, 20000, 1500, grid == 1, 0, 0, false, ~0u, grid, -1, 4096},
                   ++seed);
      // Nine blocks: the last one's places count the eight blocks before it (the five-block cases
      // above have at most four before a block).
      for (const char* spread : {"uniform", "groups33"})
        run_case({bytes, kind, spread, 20000, 1500, false, 0, 0, false, ~0u, 9, -1, 4096, 10000},
                 ++seed);
      // A long list in two blocks' stretches of two chunks each (17-bit positions: three passes).
      run_case({bytes, kind, "uniform", 100000, 5000, kind == 1, 0, 0, false, ~0u, 2, -1, 20480},
               ++seed);
      // Not aligned to 16 bytes: a load a key.
      run_case({bytes, kind, "uniform", 20001, 200, true, 0, 0, false, ~0u, 5, -1, 2048, -1, 1},
               ++seed);
      for (uint32_t count : {0u, 1u, 300u, 9000u})
        run_case({bytes, kind, "uniform", 20000, 200, false, 0, 0, false, count, 5, -1, 1024},
                 ++seed);
    }
  // NumPy's float order.
  for (uint32_t bytes : {4u, 8u})
    for (bool desc : {false, true})
      for (uint32_t k : {1u, 700u, 3000u})
        run_case({bytes, 2, "specials", 3000, k, desc, 0, 0, true}, ++seed);
  if (bucket_sorts < 24) {  // (spread keys' long lists of few blocks: most of the long lists)
    std::fprintf(stderr, "FAIL only %d long lists sorted by buckets\n", bucket_sorts);
    ++failures;
  }
  std::printf("topk_cuda_emulation: %d of %d checks failed (%d long lists by buckets)\n", failures,
              checks, bucket_sorts);
  return failures == 0 ? 0 : 1;
}
