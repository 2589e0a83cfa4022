// Out-of-core sorting: runs sorted on the device, merged on the CPU (see out_of_core.hpp).
#include "host/out_of_core.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host/key_order.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort {

namespace {

using clock = std::chrono::steady_clock;
double ms_since(clock::time_point t) {
  return std::chrono::duration<double, std::milli>(clock::now() - t).count();
}

// Runs f(part) for part in [0, parts) on that many threads; rethrows the first exception.
void on_threads(unsigned parts, const std::function<void(unsigned)>& f) {
  if (parts <= 1) return f(0);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(parts);
  for (unsigned p = 1; p < parts; ++p)
    threads.emplace_back([&, p] {
      try {
        f(p);
      } catch (...) {
        errors[p] = std::current_exception();
      }
    });
  try {
    f(0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

unsigned host_threads(unsigned requested) {
  return requested ? requested : std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
}

// The merge of runs of K keys and V values (void: none).
template <class K, class V>
class RunMerger {
 public:
  RunMerger(const SortSpec& spec, std::span<const SortedRun> runs) : field_(spec), runs_(runs) {
    for (const SortedRun& r : runs) total_ += r.n;
  }
  uint64_t total() const { return total_; }

  // Positions in each run of the first `rank` elements of the merged order.
  std::vector<uint64_t> split(uint64_t rank) const {
    const size_t k = runs_.size();
    std::vector<uint64_t> at(k, 0);
    if (rank == 0) return at;
    if (rank >= total_) {
      for (size_t r = 0; r < k; ++r) at[r] = runs_[r].n;
      return at;
    }
    // The smallest field value v with more than `rank` elements <= v: the rank-th element's.
    auto count_not_above = [&](uint64_t v) {
      uint64_t count = 0;
      for (size_t r = 0; r < k; ++r) count += bound(r, v, true);
      return count;
    };
    uint64_t lo = 0, hi = field_.mask;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (count_not_above(mid) > rank)
        hi = mid;
      else
        lo = mid + 1;
    }
    // Elements below v all come first; of those equal to v, the earlier runs' first (stable).
    uint64_t left = rank;
    for (size_t r = 0; r < k; ++r) at[r] = bound(r, lo, false), left -= at[r];
    for (size_t r = 0; r < k && left; ++r) {
      const uint64_t take = std::min(bound(r, lo, true) - at[r], left);
      at[r] += take;
      left -= take;
    }
    return at;
  }

  // Merges the elements between two splits, in pieces of at most `piece` elements, each handed
  // to emit(output index, keys, values, count) in order. A loser tree over the runs: each node
  // keeps the loser of the match played there, so an element taken from run r costs one match per
  // level on r's path to the root (log2 k compares, one per loaded node, no branches on the keys)
  // where a binary heap's sift costs two compares per level and unpredictable branches.
  template <class Emit>
  void merge(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to, K* keys, V* values,
             uint64_t piece, const Emit& emit) const {
    const size_t k = runs_.size();
    size_t leaves = 1;
    while (leaves < k) leaves *= 2;
    // Each run's head after the one in the tree is computed one round ahead: a round then waits
    // on one load (`after`) instead of the key's load and its field.
    struct Cursor {
      Head after = exhausted;
      const char *key = nullptr, *end = nullptr, *value = nullptr;
    };
    std::vector<Cursor> cursor(leaves);
    // The first round, bottom up: winner[node] goes on to the parent's match, tree[node] keeps
    // the loser; leaves at [leaves, 2 leaves), those beyond the runs exhausted.
    std::vector<Head> winner(2 * leaves, exhausted), tree(leaves);
    for (size_t r = 0; r < k; ++r) {
      cursor[r].key = static_cast<const char*>(runs_[r].keys) + from[r] * sizeof(K);
      cursor[r].end = cursor[r].key + (to[r] - from[r]) * sizeof(K);
      if constexpr (!std::is_void_v<V>)
        cursor[r].value = static_cast<const char*>(runs_[r].values) + from[r] * sizeof(V);
      if (from[r] < to[r]) winner[leaves + r] = head(cursor[r].key, uint32_t(r));
      if (to[r] - from[r] > 1) cursor[r].after = head(cursor[r].key + sizeof(K), uint32_t(r));
    }
    for (size_t node = leaves - 1; node > 0; --node) {
      winner[node] = std::min(winner[2 * node], winner[2 * node + 1]);
      tree[node] = std::max(winner[2 * node], winner[2 * node + 1]);
    }
    Head top = winner[1];  // one run: its leaf
    uint64_t out = 0, filled = 0;
    auto advance = [&](uint64_t m) {
      if ((filled += m) == piece) {
        emit(out, keys, values, filled);
        out += filled;
        filled = 0;
      }
    };
    uint32_t last = uint32_t(k), wins = 0;  // the previous round's winner; rounds in a row it won
    while (top != exhausted) {
      const uint32_t r = uint32_t(top);
      Cursor& c = cursor[r];
      std::memcpy(&keys[filled], c.key, sizeof(K));
      c.key += sizeof(K);
      if constexpr (!std::is_void_v<V>) {
        std::memcpy(&values[filled], c.value, sizeof(V));
        c.value += sizeof(V);
      }
      advance(1);
      Head next = c.after;
      // The third round in a row that r wins: copy at once what r has ahead of the best of the
      // others (the smallest loser on r's path), without playing matches, so that equal keys and
      // runs that do not interleave move in bulk. Counted without a branch, and entered on the
      // third win rather than the second: ~1/k^2 of the rounds on uniform keys instead of ~1/k
      // (entered on the second, its mispredictions cost the uniform merge ~8 %:
      // docs/design/host-path.md).
      wins = (wins + 1) * uint32_t(r == last);
      last = r;
      if (wins >= 2) [[unlikely]] {
        Head second = exhausted;
        for (size_t node = (leaves + r) / 2; node; node /= 2) second = std::min(second, tree[node]);
        if (next < second) {
          // How many are ahead (the first is): galloping, then a binary search, so that a long
          // stretch costs O(log) compares and is read once, by the copy.
          const uint64_t left = uint64_t(c.end - c.key) / sizeof(K);
          auto ahead = [&](uint64_t i) { return head(c.key + i * sizeof(K), r) < second; };
          uint64_t lo = 0, hi = 1;  // lo is ahead; hi is not, or is `left`
          while (hi < left && ahead(hi)) lo = hi, hi = std::min(2 * hi, left);
          while (hi - lo > 1) {
            const uint64_t mid = lo + (hi - lo) / 2;
            (ahead(mid) ? lo : hi) = mid;
          }
          for (uint64_t m = hi; m;) {
            const uint64_t now = std::min(m, piece - filled);
            std::memcpy(&keys[filled], c.key, now * sizeof(K));
            c.key += now * sizeof(K);
            if constexpr (!std::is_void_v<V>) {
              std::memcpy(&values[filled], c.value, now * sizeof(V));
              c.value += now * sizeof(V);
            }
            m -= now;
            advance(now);
          }
          next = c.key != c.end ? head(c.key, r) : exhausted;
        }
      }
      c.after = c.end - c.key > ptrdiff_t(sizeof(K)) ? head(c.key + sizeof(K), r) : exhausted;
      // Run r's next head plays r's matches again, leaf to root: the smaller goes on. The loser
      // is stored unconditionally (a ^ b ^ winner), so the compiler selects with cmov instead of
      // branching on the keys (GCC makes a conditional store of std::max a branch).
      for (size_t node = (leaves + r) / 2; node; node /= 2) {
        const Head other = tree[node];
        const Head winner = other < next ? other : next;
        tree[node] = other ^ next ^ winner;
        next = winner;
      }
      top = next;
    }
    if (filled) emit(out, keys, values, filled);
  }

 private:
  // A run's head as one unsigned number: the key's field above the run's index, so that one
  // comparison orders by field and breaks ties by run (the earlier first: stable). An exhausted
  // run's is all ones: after every real head, even one whose field is the largest, since real
  // run indices are below 2^32 - 1. 4-byte keys have fields of at most 32 bits.
  using Head = std::conditional_t<sizeof(K) == 4, uint64_t, unsigned __int128>;
  static constexpr Head exhausted = ~Head(0);
  Head head(const char* key_bytes, uint32_t run) const {
    K key;
    std::memcpy(&key, key_bytes, sizeof(K));
    return Head(field_(key)) << 32 | run;
  }

  uint64_t field(size_t r, uint64_t i) const {
    K key;
    std::memcpy(&key, static_cast<const char*>(runs_[r].keys) + i * sizeof(K), sizeof(K));
    return field_(key);
  }
  // The first position in run r whose field is above v (upper) or not below v (lower).
  uint64_t bound(size_t r, uint64_t v, bool upper) const {
    uint64_t lo = 0, hi = runs_[r].n;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      const uint64_t f = field(r, mid);
      if (upper ? f <= v : f < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  KeyField field_;
  std::span<const SortedRun> runs_;
  uint64_t total_ = 0;
};

template <class K, class V>
void merge_typed(const SortSpec& spec, std::span<const SortedRun> runs, const MergeTarget& target,
                 unsigned threads) {
  RunMerger<K, V> merger(spec, runs);
  const uint64_t n = merger.total();
  if (n == 0) return;
  constexpr uint64_t min_part = uint64_t(1) << 16;  // smaller parts are not worth a thread
  const unsigned parts = unsigned(std::clamp<uint64_t>(n / min_part, 1, host_threads(threads)));
  constexpr uint64_t writer_piece = uint64_t(1) << 16;  // elements per writer call
  constexpr uint32_t value_size = [] {
    if constexpr (std::is_void_v<V>)
      return 0u;
    else
      return uint32_t(sizeof(V));
  }();
  on_threads(parts, [&](unsigned p) {
    const uint64_t begin = n * p / parts, end = n * (p + 1) / parts;
    const auto from = merger.split(begin), to = merger.split(end);
    if (target.keys) {
      auto* keys = reinterpret_cast<K*>(target.keys) + begin;
      V* values = nullptr;
      if constexpr (!std::is_void_v<V>) values = reinterpret_cast<V*>(target.values) + begin;
      merger.merge(from, to, keys, values, end - begin + 1, [](uint64_t, K*, V*, uint64_t) {});
      return;
    }
    std::vector<K> keys(std::min(writer_piece, end - begin));
    using Slot = std::conditional_t<std::is_void_v<V>, char, V>;
    std::vector<Slot> values(value_size ? keys.size() : 0);
    V* value_data = nullptr;
    if constexpr (!std::is_void_v<V>) value_data = values.data();
    merger.merge(from, to, keys.data(), value_data, keys.size(),
                 [&](uint64_t at, K* k, V* v, uint64_t count) {
                   (*target.keys_writer)((begin + at) * sizeof(K), k, count * sizeof(K));
                   if constexpr (!std::is_void_v<V>)
                     (*target.values_writer)((begin + at) * sizeof(V), v, count * sizeof(V));
                 });
  });
}

template <class K>
void merge_key(const SortSpec& spec, std::span<const SortedRun> runs, const MergeTarget& target,
               unsigned threads) {
  switch (spec.value_words) {
    case 0:
      return merge_typed<K, void>(spec, runs, target, threads);
    case 1:
      return merge_typed<K, uint32_t>(spec, runs, target, threads);
    default:
      return merge_typed<K, uint64_t>(spec, runs, target, threads);
  }
}

void add_run_timings(SortTimings& total, const SortTimings& run) {
  total.upload_ms += run.upload_ms;
  total.read_ms += run.read_ms;
  total.sort_gpu_ms += run.sort_gpu_ms;
  total.download_ms += run.download_ms;
  total.write_ms += run.write_ms;
}

// Sorts the runs one after another; stream(base, length) gives run's keys and values streams.
template <class Streams>
void sort_runs(Context::Impl& ctx, const SortSpec& spec, Algorithm requested, uint64_t n,
               uint64_t run, SortTimings& timings, const Streams& streams) {
  for (uint64_t base = 0; base < n; base += run) {
    const uint64_t length = std::min(run, n - base);
    auto [keys, values] = streams(base);
    SortTimings t;
    ctx.host_path().sort(spec, requested, length, keys, values, &t);
    add_run_timings(timings, t);
  }
}

std::vector<SortedRun> sorted_runs(const SortSpec& spec, uint64_t n, uint64_t run, const char* keys,
                                   const char* values) {
  std::vector<SortedRun> runs;
  for (uint64_t base = 0; base < n; base += run)
    runs.push_back({keys + base * spec.key_words * 4,
                    values ? values + base * spec.value_words * 4 : nullptr,
                    std::min(run, n - base)});
  return runs;
}

// Host memory for the merge's output and the kept runs: fresh anonymous pages, asked to be huge
// (2 MiB) pages where the kernel offers them, because the first touch of 4 KiB pages is what the
// merge of large arrays waits on (2^32 u64 keys: 8 Mi page faults; docs/design/host-path.md).
struct HostPages {
  uint64_t bytes = 0;
  void operator()(char* p) const {
    if (p) ::munmap(p, bytes);
  }
};
using HostBuffer = std::unique_ptr<char[], HostPages>;
HostBuffer host_buffer(uint64_t bytes) {
  if (bytes == 0) return HostBuffer(nullptr, HostPages{});
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: where refused, 4 KiB pages
  // Every page touched first here, on all threads, each over its own contiguous share: the runs'
  // downloads fault it otherwise piece by piece, several threads on one huge page at once, and
  // 2^32 u64 keys' download took 7.4 s instead of 1.3 (0.8 after ~4 s of this:
  // docs/design/host-path.md, where faulting them in the background while the runs sort was
  // slower still).
  constexpr uint64_t page = 4096, threaded_bytes = uint64_t(64) << 20;
  auto* first = static_cast<volatile char*>(p);
  const unsigned parts = bytes >= threaded_bytes ? host_threads(0) : 1;
  on_threads(parts, [&](unsigned part) {
    for (uint64_t at = bytes * part / parts / page * page; at < bytes * (part + 1) / parts;
         at += page)
      first[at] = 0;
  });
  return HostBuffer(static_cast<char*>(p), HostPages{bytes});
}

// A run's stream: its elements read from `read` at `base` on, the sorted run written to `kept`
// (a host buffer where the runs wait for the merge).
HostStream kept_run(HostReader read, uint64_t base, char* kept) {
  return HostStream{[read = std::move(read), base](uint64_t offset, void* to, uint64_t size) {
                      read(base + offset, to, size);
                    },
                    [kept](uint64_t offset, const void* from, uint64_t size) {
                      streaming_copy(kept + offset, from, size);
                    }};
}

}  // namespace

uint64_t run_elements(Context::Impl& ctx, const SortSpec& spec, Algorithm requested, uint64_t n,
                      uint64_t limit) {
  HostPath& host = ctx.host_path();
  // An algorithm with a limit below gpusort::max_elements (odd_even) refuses such an n in core;
  // beyond an algorithm's limit (2^31 - 1, Onesweep's 2^32), runs of at most that many make the
  // sort possible out of core.
  const uint64_t algorithm_max = host.max_elements(spec, requested);
  if (n <= 1 || (n > algorithm_max && algorithm_max < max_elements)) return n;
  const DeviceInfo& device = ctx.info;
  const uint64_t budget =
      limit ? limit : (device.device_local_bytes ? device.device_local_bytes : ~uint64_t(0));
  const uint64_t largest = device.max_buffer_bytes ? device.max_buffer_bytes : ~uint64_t(0);
  // Every buffer (keys, values, scratch) fits the largest buffer, and together they fit the budget.
  auto fits = [&](uint64_t m) {
    for (uint64_t bytes : host.buffer_bytes(spec, requested, m))
      if (bytes > largest) return false;
    return host.device_bytes(spec, requested, m) <= budget;
  };
  if (n <= algorithm_max && fits(n)) return n;
  // The largest run that fits (the scratch of `automatic` changes algorithm with the size, so
  // fits() need not be monotonic: lo always fits, which is all that matters).
  uint64_t lo = 0, hi = std::min(n - 1, algorithm_max);
  while (lo < hi) {
    const uint64_t mid = hi - (hi - lo) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == 0 || (n - 1) / lo + 1 > max_runs)  // n >= 2: no (n + lo - 1) to wrap around
    throw Error("a device memory limit of " + std::to_string(budget) + " bytes is too small for " +
                std::to_string(n) + " " + to_string(spec.key) + " keys" +
                (spec.value_words ? " with " + std::to_string(spec.value_words * 4) + "-byte values"
                                  : std::string()) +
                ": " + (lo ? "runs of " + std::to_string(lo) + " elements" : "no run") +
                " fit, at most " + std::to_string(max_runs) + " runs are merged");
  return lo;
}

void merge_runs(const SortSpec& spec, std::span<const SortedRun> runs, const MergeTarget& target,
                unsigned threads) {
  switch (spec.key) {
    case KeyType::u32:
      return merge_key<uint32_t>(spec, runs, target, threads);
    case KeyType::i32:
      return merge_key<int32_t>(spec, runs, target, threads);
    case KeyType::f32:
      return merge_key<float>(spec, runs, target, threads);
    case KeyType::u64:
      return merge_key<uint64_t>(spec, runs, target, threads);
    case KeyType::i64:
      return merge_key<int64_t>(spec, runs, target, threads);
    case KeyType::f64:
      return merge_key<double>(spec, runs, target, threads);
  }
}

namespace {

// Sorts the n elements that `keys` and `values` (empty without values) read in runs of `run`, each
// sorted run kept in a host buffer, and merges the runs into `target`.
void sort_in_kept_runs(Context::Impl& ctx, const SortSpec& spec, Algorithm requested, uint64_t n,
                       const HostReader& keys, const HostReader& values, const MergeTarget& target,
                       uint64_t run, SortTimings* timings) {
  const auto start = clock::now();
  const uint64_t key_size = spec.key_words * 4, value_size = spec.value_words * 4;
  SortTimings t{.bytes = n * (key_size + value_size), .runs = (n + run - 1) / run};
  auto run_keys = host_buffer(n * key_size), run_values = host_buffer(n * value_size);
  sort_runs(ctx, spec, requested, n, run, t, [&](uint64_t base) {
    return std::pair{kept_run(keys, base * key_size, run_keys.get() + base * key_size),
                     spec.value_words
                         ? kept_run(values, base * value_size, run_values.get() + base * value_size)
                         : HostStream{}};
  });
  const auto merging = clock::now();
  const auto runs = sorted_runs(spec, n, run, run_keys.get(), run_values.get());
  merge_runs(spec, runs, target);
  t.merge_ms = ms_since(merging);
  t.total_ms = ms_since(start);
  if (timings) *timings = t;
}

}  // namespace

void sort_arrays_out_of_core(Context::Impl& ctx, const SortSpec& spec, Algorithm requested,
                             uint64_t n, void* keys, void* values, uint64_t run,
                             SortTimings* timings) {
  // The sorted runs are merged straight into the caller's arrays: sorting them in place would
  // need the merge's output elsewhere and a copy back, one more pass over all the data
  // (docs/design/host-path.md).
  auto* value_bytes = spec.value_words ? static_cast<char*>(values) : nullptr;
  sort_in_kept_runs(ctx, spec, requested, n, memory_reader(keys),
                    value_bytes ? memory_reader(value_bytes) : HostReader{},
                    MergeTarget{static_cast<char*>(keys), value_bytes}, run, timings);
}

void sort_streamed_out_of_core(Context::Impl& ctx, const SortSpec& spec, Algorithm requested,
                               uint64_t n, const HostStream& keys, const HostStream& values,
                               uint64_t run, SortTimings* timings) {
  sort_in_kept_runs(ctx, spec, requested, n, keys.read, values.read,
                    MergeTarget{nullptr, nullptr, &keys.write, &values.write}, run, timings);
}

}  // namespace gpusort
