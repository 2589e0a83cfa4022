// gpusort_distributed_bench: the distributed sort, host memory to host memory, beside one GPU's
// sort of the same array (out of core when it exceeds the device) and a parallel CPU sort.
//
//   mpirun --bind-to none -np 2 gpusort_distributed_bench --n 16G --type u32   # 2^34 keys in all
//   mpirun --bind-to none -np 2 gpusort_distributed_bench --n 8G --per-rank --type u32  # weak
//   gpusort_distributed_bench --n 16G --type u32 --only single,cpu     # the baselines alone
//
// (--bind-to none: Open MPI binds each of 2 ranks or fewer to ONE core by default; every rank
// prints the cores it may use and warns when it is held to fewer than the machine has.)
// Every rank makes its share of the keys (uniform random bits, a counter hashed; values, when
// asked for, the positions). One distributed::Sorter and the output buffers are allocated and
// touched (pre-faulted, on several threads) once, before the first timed sort, and reused by every
// repeat, after --warmup untimed sorts (default 1: the first sort pays first-use costs, such as
// the device-resident path's GPU buffers and peer mappings). The ranks sort together, timed from a
// barrier before to a barrier after: the host-to-host time. Each rank's stages (local sort and its
// transfers, split, exchange, merge) are printed, and the result is checked on the CPU (each slice
// non-decreasing in the sort's order, the slices in order, and the multiset kept: element count and
// an order-independent hash of every key and value against the input's). Then rank 0 alone sorts
// the concatenation of the same keys on all its cores (a parallel LSD radix sort, integer keys) and
// on its GPU (gpusort::sort_raw: in core when it fits, else out of core, runs merged on the CPU),
// each checked. docs/distributed.md shows a run; bench_two_gpus.sh runs the measured rows.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <gpusort/distributed.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace gpusort;
namespace dist = gpusort::distributed;
using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

struct Arguments {
  uint64_t n = uint64_t(1) << 24;
  bool per_rank = false;
  KeyType type = KeyType::u32;
  uint32_t value_bytes = 0;
  int repeat = 3;
  int baseline_repeat = 1;
  std::string only = "distributed,single,cpu";
  dist::Merge merge = dist::Merge::automatic;
  bool balanced = true;
  bool partition_first = false;
  uint64_t device_memory_limit = 0;
  uint64_t chunk_bytes = 0;
  unsigned threads = dist::usable_cores();
  dist::DeviceExchange exchange = dist::DeviceExchange::automatic;
  int warmup = 1;  // untimed sorts before the timed ones (first-use costs: device buffers, ...)
  bool register_host = false;  // the inputs and outputs registered with the GPU (setup, untimed)
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "gpusort_distributed_bench: error: %s\n"
               "usage: [mpirun -np P] gpusort_distributed_bench [--n N[K|M|G]] [--per-rank]\n"
               "  [--type u32|i32|f32|u64|i64|f64] [--values 0|4|8] [--repeat R]\n"
               "  [--baseline-repeat R] [--only distributed,single,cpu]\n"
               "  [--merge automatic|gpu|cpu] [--natural] [--partition-first]\n"
               "  [--exchange automatic|host|device|shared-device] [--warmup W] [--register]\n"
               "  [--device-memory-limit BYTES[K|M|G]] [--chunk-bytes BYTES[K|M|G]] [--threads T]\n"
               "N: keys in all (with --per-rank: on each rank); K, M, G: powers of 1024;\n"
               "--threads: host threads for making keys and the CPU sort (default: usable cores)\n"
               "--register: register the inputs and outputs with the GPU before the sorts\n"
               "  (Sorter::register_host_memory; its time is printed apart)\n",
               problem.c_str());
  std::exit(2);
}

uint64_t parse_count(const std::string& text) {
  char* end = nullptr;
  const uint64_t number = std::strtoull(text.c_str(), &end, 10);
  const std::string suffix = end;
  if (end == text.c_str()) usage("'" + text + "' is not a count");
  if (suffix.empty()) return number;
  if (suffix == "K") return number << 10;
  if (suffix == "M") return number << 20;
  if (suffix == "G") return number << 30;
  usage("'" + text + "': the suffix is K, M or G");
}

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--n")
      a.n = parse_count(next());
    else if (arg == "--per-rank")
      a.per_rank = true;
    else if (arg == "--register")
      a.register_host = true;
    else if (arg == "--type")
      a.type = parse_key_type(next());
    else if (arg == "--values")
      a.value_bytes = uint32_t(std::atoi(next().c_str()));
    else if (arg == "--repeat")
      a.repeat = std::max(1, std::atoi(next().c_str()));
    else if (arg == "--baseline-repeat")
      a.baseline_repeat = std::max(1, std::atoi(next().c_str()));
    else if (arg == "--chunk-bytes")
      a.chunk_bytes = parse_count(next());
    else if (arg == "--only")
      a.only = next();
    else if (arg == "--natural")
      a.balanced = false;
    else if (arg == "--partition-first")
      a.partition_first = true;
    else if (arg == "--device-memory-limit")
      a.device_memory_limit = parse_count(next());
    else if (arg == "--threads")
      a.threads = unsigned(std::max(1, std::atoi(next().c_str())));
    else if (arg == "--warmup")
      a.warmup = std::max(0, std::atoi(next().c_str()));
    else if (arg == "--exchange") {
      const std::string e = next();
      if (e == "automatic")
        a.exchange = dist::DeviceExchange::automatic;
      else if (e == "host")
        a.exchange = dist::DeviceExchange::host;
      else if (e == "device")
        a.exchange = dist::DeviceExchange::device;
      else if (e == "shared-device")
        a.exchange = dist::DeviceExchange::shared_device;
      else
        usage("--exchange is automatic, host, device or shared-device");
    } else if (arg == "--merge") {
      const std::string m = next();
      if (m != "gpu" && m != "cpu" && m != "automatic") usage("--merge is automatic, gpu or cpu");
      a.merge = m == "gpu"   ? dist::Merge::gpu
                : m == "cpu" ? dist::Merge::cpu
                             : dist::Merge::automatic;
    } else
      usage("unknown argument '" + arg + "'");
  }
  if (a.value_bytes != 0 && a.value_bytes != 4 && a.value_bytes != 8)
    usage("--values is 0, 4 or 8");
  return a;
}

// Uniform random bits, from a counter (splitmix64), on every core: element i of the global
// array has the same bits whichever process makes it.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
void parallel_for(uint64_t n, unsigned threads, const std::function<void(uint64_t, uint64_t)>& f) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { f(n * t / threads, n * (t + 1) / threads); });
  for (std::thread& th : pool) th.join();
}
void make_keys(uint8_t* keys, uint8_t* values, uint64_t first, uint64_t n, uint32_t key_size,
               uint32_t value_bytes, unsigned threads) {
  parallel_for(n, threads, [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      const uint64_t bits = mix(first + i);
      std::memcpy(keys + i * key_size, &bits, key_size);
      if (value_bytes) {
        const uint64_t position = first + i;
        std::memcpy(values + i * value_bytes, &position, value_bytes);
      }
    }
  });
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
double best(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

// A key's bits as an unsigned number in the sort's (ascending) order: IEEE-754 totalOrder for
// floats, offset for signed integers.
uint64_t order_of(KeyType type, const uint8_t* key) {
  if (key_bytes(type) == 4) {
    uint32_t v;
    std::memcpy(&v, key, 4);
    if (type == KeyType::i32) v ^= 0x80000000u;
    if (type == KeyType::f32) v = (v & 0x80000000u) ? ~v : v | 0x80000000u;
    return v;
  }
  uint64_t v;
  std::memcpy(&v, key, 8);
  const uint64_t sign = uint64_t(1) << 63;
  if (type == KeyType::i64) v ^= sign;
  if (type == KeyType::f64) v = (v & sign) ? ~v : v | sign;
  return v;
}

// An order-independent hash of n keys (and values): the sum of a mix of each element.
uint64_t multiset_hash(const uint8_t* keys, const uint8_t* values, uint64_t n, uint32_t ks,
                       uint32_t vs, unsigned threads) {
  std::atomic<uint64_t> sum{0};
  parallel_for(n, threads, [&](uint64_t begin, uint64_t end) {
    uint64_t local = 0;
    for (uint64_t i = begin; i < end; ++i) {
      uint64_t k = 0, v = 0;
      std::memcpy(&k, keys + i * ks, ks);
      if (vs) std::memcpy(&v, values + i * vs, vs);
      local += mix(k ^ mix(v + 0x51ed2701ull));
    }
    sum += local;
  });
  return sum;
}

// Whether n keys are non-decreasing in the sort's order (on several threads).
bool non_decreasing(KeyType type, const uint8_t* keys, uint64_t n, unsigned threads) {
  const uint32_t ks = key_bytes(type);
  std::atomic<bool> ok{true};
  parallel_for(n, threads, [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = std::max<uint64_t>(begin, 1); i < end && ok; ++i)
      if (order_of(type, keys + (i - 1) * ks) > order_of(type, keys + i * ks)) ok = false;
  });
  return ok;
}

// The parallel CPU baseline: a stable LSD radix sort of integer keys by 8-bit digits on all the
// threads (each thread counts and scatters its own contiguous block; the digit-major,
// thread-minor offsets keep it stable), ping-ponging with `temp`; digits that every key shares
// are skipped (the totals of every digit come from one first pass; each pass counts its blocks).
template <class U>
void radix_sort(U* keys, U* temp, uint64_t n, unsigned threads, U flip) {
  constexpr unsigned digits = sizeof(U);
  threads = unsigned(std::max<uint64_t>(1, std::min<uint64_t>(threads, n / 65536 + 1)));
  std::vector<std::array<uint64_t, 256 * digits>> counts(threads);
  parallel_for(threads, threads, [&](uint64_t t, uint64_t) {
    auto& c = counts[t];
    c.fill(0);
    const uint64_t begin = n * t / threads, end = n * (t + 1) / threads;
    for (uint64_t i = begin; i < end; ++i) {
      const U k = keys[i] ^ flip;
      for (unsigned d = 0; d < digits; ++d) ++c[d * 256 + ((k >> (8 * d)) & 0xff)];
    }
  });
  U* from = keys;
  U* to = temp;
  for (unsigned d = 0; d < digits; ++d) {
    // The same digit everywhere: nothing to do for it.
    uint64_t largest = 0;
    for (unsigned b = 0; b < 256; ++b) {
      uint64_t all = 0;
      for (unsigned t = 0; t < threads; ++t) all += counts[t][d * 256 + b];
      largest = std::max(largest, all);
    }
    if (largest == n) continue;
    // Per block, its own counts of this digit (the blocks' counts per digit are positional:
    // recount, since the order changed after the previous pass).
    std::vector<std::array<uint64_t, 256>> at(threads);
    parallel_for(threads, threads, [&](uint64_t t, uint64_t) {
      at[t].fill(0);
      const uint64_t begin = n * t / threads, end = n * (t + 1) / threads;
      for (uint64_t i = begin; i < end; ++i) ++at[t][((from[i] ^ flip) >> (8 * d)) & 0xff];
    });
    uint64_t running = 0;
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned t = 0; t < threads; ++t) {
        const uint64_t c = at[t][b];
        at[t][b] = running;
        running += c;
      }
    parallel_for(threads, threads, [&](uint64_t t, uint64_t) {
      uint64_t* next = at[t].data();
      const uint64_t begin = n * t / threads, end = n * (t + 1) / threads;
      for (uint64_t i = begin; i < end; ++i)
        to[next[((from[i] ^ flip) >> (8 * d)) & 0xff]++] = from[i];
    });
    std::swap(from, to);
  }
  if (from != keys) std::memcpy(keys, from, n * sizeof(U));
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Arguments a = parse(argc, argv);
  const uint32_t ks = key_bytes(a.type), vs = a.value_bytes;
  const uint64_t total = a.per_rank ? a.n * uint64_t(ranks) : a.n;
  const uint64_t first = uint64_t((unsigned __int128)total * uint64_t(rank) / uint64_t(ranks));
  const uint64_t mine =
      uint64_t((unsigned __int128)total * uint64_t(rank + 1) / uint64_t(ranks)) - first;
  const bool want_distributed = a.only.find("distributed") != std::string::npos;
  const bool want_single = a.only.find("single") != std::string::npos;
  const bool want_cpu = a.only.find("cpu") != std::string::npos;
  int status = 0;
  try {
    ContextOptions context_options;
    context_options.device = dist::default_device(MPI_COMM_WORLD);
    Context ctx = Context::create(context_options);
    char name[MPI_MAX_PROCESSOR_NAME];
    int name_length = 0;
    MPI_Get_processor_name(name, &name_length);
    std::vector<char> names(size_t(ranks) * 512);
    char line[512];
    const unsigned cores = dist::usable_cores(), machine = std::thread::hardware_concurrency();
    std::snprintf(line, sizeof line, "rank %d: %s, device %s, may run on %u of %u cores%s", rank,
                  name, ctx.device_info().name.c_str(), cores, machine,
                  cores < machine && cores * unsigned(ranks) < machine
                      ? " (WARNING: bound by the launcher; mpirun --bind-to none)"
                      : "");
    MPI_Gather(line, 512, MPI_CHAR, names.data(), 512, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("%d rank(s), %llu %s keys in all%s, %s\n", ranks,
                  static_cast<unsigned long long>(total), to_string(a.type),
                  vs ? (" with " + std::to_string(vs) + "-byte values").c_str() : "",
                  a.balanced ? "balanced slices" : "natural buckets");
      for (int r = 0; r < ranks; ++r) std::printf("  %s\n", &names[size_t(r) * 512]);
      std::fflush(stdout);
    }

    if (want_distributed) {
      // Setup, untimed: the keys, the sorter's buffers and the outputs, touched once.
      const auto preparing = clock_type::now();
      dist::HostBuffer keys(mine * ks), values(mine * vs);
      make_keys(keys.data(), values.data(), first, mine, ks, vs, a.threads);
      const uint64_t input_hash =
          multiset_hash(keys.data(), values.data(), mine, ks, vs, a.threads);
      // The largest slice: balanced N/P (+1); natural buckets up to ~1.5 N/P.
      const uint64_t even = total / uint64_t(ranks) + 1;
      const uint64_t slice_max = a.balanced ? even : even + even / 2;
      dist::DistributedOptions options;
      options.sort.device_memory_limit = a.device_memory_limit;
      options.balanced = a.balanced;
      options.partition_first = a.partition_first;
      options.merge = a.merge;
      options.chunk_bytes = a.chunk_bytes;
      options.device_exchange = a.exchange;
      dist::Sorter sorter(ctx, MPI_COMM_WORLD);
      // A receive buffer for the other ranks' pieces (about (P - 1) / P of the slice, 2 % spare)
      // when the merge reads them while it writes the output: on the CPU, or on the GPU in parts.
      const bool receive_buffer =
          ranks > 1 && (a.merge == dist::Merge::cpu ||
                        max_run_elements(ctx, a.type, vs, slice_max, options.sort) < slice_max);
      sorter.reserve(a.type, vs, mine,
                     receive_buffer ? slice_max - slice_max / uint64_t(ranks) + slice_max / 50 : 0);
      dist::HostBuffer out_keys(slice_max * ks), out_values(slice_max * vs);
      const double prepare_ms = since(preparing);
      if (rank == 0)
        std::printf("setup (untimed): keys made, sorter and output buffers touched: %.1f s\n",
                    prepare_ms / 1e3);
      std::vector<const void*> registered_at;  // released before the buffers are unmapped
      if (a.register_host) {
        // The inputs and outputs pinned and imported once (the outputs never move: balanced
        // slices stay within slice_max, natural ones within 1.5x).
        MPI_Barrier(MPI_COMM_WORLD);
        const auto registering = clock_type::now();
        uint64_t registered = 0;
        for (auto [data, bytes] : {std::pair<void*, uint64_t>{keys.data(), mine * ks},
                                   {values.data(), mine * vs},
                                   {out_keys.data(), out_keys.capacity()},
                                   {out_values.data(), out_values.capacity()}})
          if (bytes) {
            sorter.register_host_memory(data, bytes);
            registered_at.push_back(data);
            registered += bytes;
          }
        double ms = since(registering), slowest = 0;
        MPI_Reduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
          std::printf(
              "registered the inputs and outputs with the GPU (untimed): %.2f GB on rank "
              "0, %.1f ms on the slowest rank\n",
              double(registered) / 1e9, slowest);
      }
      std::vector<double> totals;
      dist::DistributedTimings timings;
      dist::Slice slice;
      options.timings = &timings;
      for (int i = -a.warmup; i < a.repeat; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const auto started = clock_type::now();
        slice = sorter.sort_raw(
            a.type, keys.data(), mine, values.data(), vs,
            [&](uint64_t n) {
              if (a.register_host && n * ks > out_keys.capacity())
                throw Error("the slice outgrew its registered output buffer");
              out_keys.reserve(n * ks);  // grows (and is touched) only past slice_max
              return static_cast<void*>(out_keys.data());
            },
            [&](uint64_t n) {
              if (a.register_host && n * vs > out_values.capacity())
                throw Error("the slice outgrew its registered output buffer");
              out_values.reserve(n * vs);
              return static_cast<void*>(out_values.data());
            },
            options);
        MPI_Barrier(MPI_COMM_WORLD);
        if (i < 0) {  // a warm-up: untimed
          if (rank == 0)
            std::printf("warm-up sort (untimed): %.3f s, path: %s\n", since(started) / 1e3,
                        timings.device_resident
                            ? "device resident"
                            : ("host (" + timings.device_refused + ")").c_str());
          continue;
        }
        totals.push_back(since(started));
        const double per_rank[] = {timings.local_sort_ms,
                                   timings.local.upload_ms,
                                   timings.local.sort_gpu_ms,
                                   timings.local.download_ms,
                                   double(timings.local_runs),
                                   timings.split_ms,
                                   timings.exchange_ms,
                                   timings.merge_ms,
                                   timings.total_ms,
                                   double(timings.bytes_sent),
                                   double(slice.count),
                                   timings.final_sort.upload_ms,
                                   timings.final_sort.sort_gpu_ms,
                                   timings.final_sort.download_ms,
                                   double(timings.messages),
                                   timings.prefault_ms};
        constexpr int fields = int(sizeof(per_rank) / sizeof(per_rank[0]));
        std::vector<double> all(size_t(ranks) * fields);
        MPI_Gather(per_rank, fields, MPI_DOUBLE, all.data(), fields, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
          std::printf(
              "distributed, run %d: %.3f s host to host, %.4g G keys/s\n"
              "  rank local sort (upload     sort download runs)    split exchange  sent GB "
              "msgs     merge (upload     sort download)  transfers prefault    total (ms)  "
              "elements\n",
              i + 1, totals.back() / 1e3, double(total) / totals.back() / 1e6);
          if (timings.device_resident)
            std::printf(
                "  path: device resident (upload, local sort, cuts = split, peer copies = "
                "exchange, final sort, download; no merge upload); rank 0 moved %.3g GB straight "
                "from and to registered memory\n",
                double(timings.direct_bytes) / 1e9);
          else
            std::printf("  path: host exchange (device-resident path not taken: %s)\n",
                        timings.device_refused.c_str());
          for (int r = 0; r < ranks; ++r) {
            const double* t = &all[size_t(r) * fields];
            std::printf(
                "  %4d %10.1f (%8.1f %8.1f %8.1f %4.0f) %8.1f %8.1f %8.2f %4.0f %9.1f (%8.1f "
                "%8.1f %8.1f) %10.1f %8.1f %8.1f  %.0f\n",
                r, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[9] / 1e9, t[14], t[7], t[11], t[12],
                t[13], t[1] + t[3] + t[11] + t[13], t[15], t[8], t[10]);
          }
          std::fflush(stdout);
        }
      }
      // The result, on the CPU: each slice non-decreasing, rank r's last key <= rank r+1's first,
      // and no element lost or changed (count and multiset hash of keys and values).
      int ok = non_decreasing(a.type, out_keys.data(), slice.count, a.threads);
      uint64_t hashes[2] = {input_hash, multiset_hash(out_keys.data(), out_values.data(),
                                                      slice.count, ks, vs, a.threads)};
      MPI_Allreduce(MPI_IN_PLACE, hashes, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      if (hashes[0] != hashes[1]) ok = 0;
      uint64_t edge[3] = {
          slice.count > 0, slice.count ? order_of(a.type, out_keys.data()) : 0,
          slice.count ? order_of(a.type, out_keys.data() + (slice.count - 1) * ks) : 0};
      std::vector<uint64_t> edges(size_t(ranks) * 3);
      MPI_Allgather(edge, 3, MPI_UINT64_T, edges.data(), 3, MPI_UINT64_T, MPI_COMM_WORLD);
      uint64_t last = 0;
      for (int r = 0; r < ranks; ++r)
        if (edges[size_t(r) * 3]) {
          if (edges[size_t(r) * 3 + 1] < last) ok = 0;
          last = edges[size_t(r) * 3 + 2];
        }
      uint64_t count = slice.count;
      MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      if (count != total) ok = 0;
      MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (rank == 0)
        std::printf(
            "distributed: median %.3f s, %.4g G keys/s; best %.3f s, %.4g G keys/s; "
            "result %s\n",
            median(totals) / 1e3, double(total) / median(totals) / 1e6, best(totals) / 1e3,
            double(total) / best(totals) / 1e6, ok ? "checked" : "WRONG");
      std::fflush(stdout);
      if (!ok) status = 1;
      for (const void* data : registered_at) sorter.unregister_host_memory(data);
    }  // every rank's buffers are freed here, before rank 0's baselines

    MPI_Barrier(MPI_COMM_WORLD);  // every rank's buffers freed
    if (rank == 0 && (want_single || want_cpu)) {
      // The concatenation of the ranks' keys, made again (the same bits), touched once.
      dist::HostBuffer keys(total * ks), values(total * vs);
      if (want_cpu) {
        if (a.type == KeyType::f32 || a.type == KeyType::f64 || vs) {
          std::printf("parallel CPU sort: skipped (integer keys without values only)\n");
        } else {
          dist::HostBuffer temp(total * ks);
          std::vector<double> times;
          for (int i = 0; i < a.baseline_repeat; ++i) {
            make_keys(keys.data(), nullptr, 0, total, ks, 0, a.threads);
            const uint64_t before = multiset_hash(keys.data(), nullptr, total, ks, 0, a.threads);
            const auto started = clock_type::now();
            if (ks == 4)
              radix_sort(reinterpret_cast<uint32_t*>(keys.data()),
                         reinterpret_cast<uint32_t*>(temp.data()), total, a.threads,
                         a.type == KeyType::i32 ? 0x80000000u : 0u);
            else
              radix_sort(reinterpret_cast<uint64_t*>(keys.data()),
                         reinterpret_cast<uint64_t*>(temp.data()), total, a.threads,
                         a.type == KeyType::i64 ? uint64_t(1) << 63 : 0);
            times.push_back(since(started));
            const bool ok = non_decreasing(a.type, keys.data(), total, a.threads) &&
                            multiset_hash(keys.data(), nullptr, total, ks, 0, a.threads) == before;
            if (!ok) status = 1;
            std::printf(
                "parallel CPU sort (LSD radix, %u threads), run %d: %.3f s, %.4g G keys/s; "
                "result %s\n",
                a.threads, i + 1, times.back() / 1e3, double(total) / times.back() / 1e6,
                ok ? "checked" : "WRONG");
            std::fflush(stdout);
          }
          std::printf(
              "parallel CPU sort: median %.3f s, %.4g G keys/s; best %.3f s, %.4g G keys/s\n",
              median(times) / 1e3, double(total) / median(times) / 1e6, best(times) / 1e3,
              double(total) / best(times) / 1e6);
        }
      }
      if (want_single) {
        std::vector<double> times;
        SortTimings stages;
        for (int i = 0; i < a.baseline_repeat; ++i) {
          make_keys(keys.data(), values.data(), 0, total, ks, vs, a.threads);
          const uint64_t before =
              multiset_hash(keys.data(), values.data(), total, ks, vs, a.threads);
          SortOptions options;
          options.device_memory_limit = a.device_memory_limit;
          options.timings = &stages;
          const auto started = clock_type::now();
          sort_raw(ctx, a.type, keys.data(), total, vs ? values.data() : nullptr, vs, options);
          times.push_back(since(started));
          const bool ok =
              non_decreasing(a.type, keys.data(), total, a.threads) &&
              multiset_hash(keys.data(), values.data(), total, ks, vs, a.threads) == before;
          if (!ok) status = 1;
          std::printf(
              "single GPU, run %d: %.3f s, %.4g G keys/s (%s; upload %.1f, sort %.1f, "
              "download %.1f, CPU merge %.1f ms, %llu run(s)); result %s\n",
              i + 1, times.back() / 1e3, double(total) / times.back() / 1e6,
              ctx.device_info().name.c_str(), stages.upload_ms, stages.sort_gpu_ms,
              stages.download_ms, stages.merge_ms, static_cast<unsigned long long>(stages.runs),
              ok ? "checked" : "WRONG");
          std::fflush(stdout);
        }
        std::printf("single GPU: median %.3f s, %.4g G keys/s; best %.3f s, %.4g G keys/s\n",
                    median(times) / 1e3, double(total) / median(times) / 1e6, best(times) / 1e3,
                    double(total) / best(times) / 1e6);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpusort_distributed_bench: error: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // The other ranks wait for rank 0's baselines without spinning on a core (a blocking
  // collective polls), so that the CPU baseline has the machine.
  MPI_Request done = MPI_REQUEST_NULL;
  MPI_Ibcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD, &done);
  for (int finished = 0; !finished;) {
    MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
    if (!finished) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  MPI_Finalize();
  return status;
}
