// gpusort_distributed_bench: the distributed sort, host memory to host memory, beside one GPU's
// sort of the same array (out of core when it exceeds the device) and a parallel CPU sort.
//
//   mpirun -np 2 gpusort_distributed_bench --n 16G --type u32          # 2^34 keys in all
//   mpirun -np 2 gpusort_distributed_bench --n 8G --per-rank --type u32  # weak scaling
//   gpusort_distributed_bench --n 16G --type u32 --only single,cpu     # the baselines alone
//
// Every rank makes its share of the keys (uniform random bits, seeded by the rank; values, when
// asked for, the positions), then the ranks sort them together, timed from a barrier before to a
// barrier after: the host-to-host time. Each rank's stages (local sort and its transfers, split,
// exchange, merge) are printed, and the result is checked (each slice sorted, slices in order,
// no element lost). Then rank 0 alone sorts the concatenation of the same keys on its GPU
// (gpusort::sort_raw: in core when it fits, else out of core, runs merged on the CPU) and on all
// its cores (std::sort of one chunk per thread, then gpusort::merge_sorted_runs' parallel merge).
// docs/distributed.md shows a run and how to carry it to a machine without MPI installed.
#include <algorithm>
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
  std::string only = "distributed,single,cpu";
  dist::Merge merge = dist::Merge::automatic;
  bool balanced = true;
  bool partition_first = false;
  uint64_t device_memory_limit = 0;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "gpusort_distributed_bench: error: %s\n"
               "usage: [mpirun -np P] gpusort_distributed_bench [--n N[K|M|G]] [--per-rank]\n"
               "  [--type u32|i32|f32|u64|i64|f64] [--values 0|4|8] [--repeat R]\n"
               "  [--only distributed,single,cpu] [--merge automatic|gpu|cpu] [--natural]\n"
               "  [--partition-first]\n"
               "  [--device-memory-limit BYTES[K|M|G]] [--threads T]\n"
               "N: keys in all (with --per-rank: on each rank); K, M, G: powers of 1024\n",
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
    else if (arg == "--type")
      a.type = parse_key_type(next());
    else if (arg == "--values")
      a.value_bytes = uint32_t(std::atoi(next().c_str()));
    else if (arg == "--repeat")
      a.repeat = std::max(1, std::atoi(next().c_str()));
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
    else if (arg == "--merge") {
      const std::string m = next();
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

using Bytes = std::unique_ptr<uint8_t[]>;
Bytes bytes(uint64_t n) {
  return Bytes(new uint8_t[std::max<uint64_t>(n, 1)]);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
double best(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

// std::sort of one chunk per thread, then the chunks merged in parallel (integers only: their
// operator< is gpusort's order).
template <class K>
void cpu_sort(K* keys, uint64_t n, unsigned threads, KeyType type) {
  std::vector<uint64_t> bounds(threads + 1);
  for (unsigned t = 0; t <= threads; ++t) bounds[t] = n * t / threads;
  parallel_for(threads, threads,
               [&](uint64_t t, uint64_t) { std::sort(keys + bounds[t], keys + bounds[t + 1]); });
  std::vector<SortedRun> runs;
  for (unsigned t = 0; t < threads; ++t)
    runs.push_back({keys + bounds[t], nullptr, bounds[t + 1] - bounds[t]});
  Bytes merged = bytes(n * sizeof(K));
  uint8_t* to = merged.get();
  merge_sorted_runs(
      type, 0, runs,
      [to](uint64_t offset, const void* from, uint64_t b) { std::memcpy(to + offset, from, b); },
      {});
  std::memcpy(keys, merged.get(), n * sizeof(K));
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
    std::snprintf(line, sizeof line, "rank %d: %s, device %s", rank, name,
                  ctx.device_info().name.c_str());
    MPI_Gather(line, 512, MPI_CHAR, names.data(), 512, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("%d rank(s), %llu %s keys in all%s, %s\n", ranks,
                  static_cast<unsigned long long>(total), to_string(a.type),
                  vs ? (" with " + std::to_string(vs) + "-byte values").c_str() : "",
                  a.balanced ? "balanced slices" : "natural buckets");
      for (int r = 0; r < ranks; ++r) std::printf("  %s\n", &names[size_t(r) * 512]);
    }

    if (want_distributed) {
      Bytes keys = bytes(mine * ks), values = bytes(mine * vs);
      make_keys(keys.get(), values.get(), first, mine, ks, vs, a.threads);
      std::vector<double> totals;
      dist::DistributedTimings timings;
      Bytes out_keys, out_values;
      dist::Slice slice;
      for (int i = 0; i < a.repeat; ++i) {
        dist::DistributedOptions options;
        options.sort.device_memory_limit = a.device_memory_limit;
        options.balanced = a.balanced;
        options.partition_first = a.partition_first;
        options.merge = a.merge;
        options.timings = &timings;
        MPI_Barrier(MPI_COMM_WORLD);
        const auto started = clock_type::now();
        slice = dist::sort_raw(
            ctx, MPI_COMM_WORLD, a.type, keys.get(), mine, values.get(), vs,
            [&](uint64_t n) { return (out_keys = bytes(n * ks)).get(); },
            [&](uint64_t n) { return (out_values = bytes(n * vs)).get(); }, options);
        MPI_Barrier(MPI_COMM_WORLD);
        totals.push_back(since(started));
        const double per_rank[] = {timings.local_sort_ms,
                                   timings.local.upload_ms,
                                   timings.local.sort_gpu_ms,
                                   timings.local.download_ms,
                                   timings.local.merge_ms,
                                   double(timings.local.runs),
                                   timings.split_ms,
                                   timings.exchange_ms,
                                   timings.merge_ms,
                                   timings.total_ms,
                                   double(timings.bytes_sent),
                                   double(slice.count),
                                   timings.final_sort.upload_ms,
                                   timings.final_sort.sort_gpu_ms,
                                   timings.final_sort.download_ms};
        constexpr int fields = int(sizeof(per_rank) / sizeof(per_rank[0]));
        std::vector<double> all(size_t(ranks) * fields);
        MPI_Gather(per_rank, fields, MPI_DOUBLE, all.data(), fields, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
          std::printf(
              "distributed, run %d: %.3f s host to host, %.4g G keys/s\n"
              "  rank  local sort (upload    sort download cpu-merge runs)    split exchange  "
              "sent GB    merge (upload    sort download)    total (ms)  elements\n",
              i + 1, totals.back() / 1e3, double(total) / totals.back() / 1e6);
          for (int r = 0; r < ranks; ++r) {
            const double* t = &all[size_t(r) * fields];
            std::printf(
                "  %4d %10.1f (%8.1f %8.1f %8.1f %8.1f %4.0f) %8.1f %8.1f %8.2f %8.1f (%8.1f %8.1f "
                "%8.1f) %8.1f  %.0f\n",
                r, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[10] / 1e9, t[8], t[12], t[13],
                t[14], t[9], t[11]);
          }
          std::fflush(stdout);
        }
      }
      // The result: each slice sorted (by the key's order: checked through a gpusort sort of a
      // copy, which must not change it), the slices in order, none lost.
      int ok = 1;
      {
        Bytes copy = bytes(slice.count * ks);
        if (slice.count) std::memcpy(copy.get(), out_keys.get(), slice.count * ks);
        if (slice.count > 1) sort_raw(ctx, a.type, copy.get(), slice.count, nullptr, 0, {});
        ok = slice.count == 0 || std::memcmp(copy.get(), out_keys.get(), slice.count * ks) == 0;
        // Boundaries: rank r's last key <= rank r+1's first, in the sort's order.
        uint64_t edge[2] = {0, 0};
        int has = slice.count > 0;
        if (has) {
          std::memcpy(&edge[0], out_keys.get(), ks);
          std::memcpy(&edge[1], out_keys.get() + (slice.count - 1) * ks, ks);
        }
        std::vector<uint64_t> edges(size_t(ranks) * 2);
        std::vector<int> present(static_cast<size_t>(ranks));
        MPI_Gather(edge, 2, MPI_UINT64_T, edges.data(), 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        MPI_Gather(&has, 1, MPI_INT, present.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
          std::vector<uint8_t> boundary;
          for (int r = 0; r < ranks; ++r)
            if (present[size_t(r)])
              for (int e = 0; e < 2; ++e)
                boundary.insert(boundary.end(),
                                reinterpret_cast<uint8_t*>(&edges[size_t(r) * 2 + e]),
                                reinterpret_cast<uint8_t*>(&edges[size_t(r) * 2 + e]) + ks);
          std::vector<uint8_t> sorted = boundary;
          if (boundary.size() > ks)
            sort_raw(ctx, a.type, sorted.data(), boundary.size() / ks, nullptr, 0, {});
          // Sorting must not reorder firsts and lasts in rank order, unless they are equal keys.
          if (sorted != boundary) ok = 0;
        }
        uint64_t count = slice.count;
        MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (count != total) ok = 0;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      }
      if (rank == 0)
        std::printf("distributed: median %.3f s, %.4g G keys/s; result %s\n", median(totals) / 1e3,
                    double(total) / median(totals) / 1e6, ok ? "checked" : "WRONG");
      if (!ok) status = 1;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && (want_single || want_cpu)) {
      // The concatenation of the ranks' keys, made again (the same bits).
      Bytes keys = bytes(total * ks), values = bytes(total * vs);
      if (want_single) {
        std::vector<double> times;
        SortTimings stages;
        for (int i = 0; i < a.repeat; ++i) {
          make_keys(keys.get(), values.get(), 0, total, ks, vs, a.threads);
          SortOptions options;
          options.device_memory_limit = a.device_memory_limit;
          options.timings = &stages;
          const auto started = clock_type::now();
          sort_raw(ctx, a.type, keys.get(), total, vs ? values.get() : nullptr, vs, options);
          times.push_back(since(started));
          std::printf(
              "single GPU, run %d: %.3f s, %.4g G keys/s (%s; upload %.1f, sort %.1f, "
              "download %.1f, CPU merge %.1f ms, %llu run(s))\n",
              i + 1, times.back() / 1e3, double(total) / times.back() / 1e6,
              ctx.device_info().name.c_str(), stages.upload_ms, stages.sort_gpu_ms,
              stages.download_ms, stages.merge_ms, static_cast<unsigned long long>(stages.runs));
          std::fflush(stdout);
        }
        std::printf("single GPU: median %.3f s, %.4g G keys/s; best %.3f s, %.4g G keys/s\n",
                    median(times) / 1e3, double(total) / median(times) / 1e6, best(times) / 1e3,
                    double(total) / best(times) / 1e6);
      }
      if (want_cpu) {
        if (a.type == KeyType::f32 || a.type == KeyType::f64 || vs) {
          std::printf("parallel CPU sort: skipped (integer keys without values only)\n");
        } else {
          std::vector<double> times;
          for (int i = 0; i < a.repeat; ++i) {
            make_keys(keys.get(), nullptr, 0, total, ks, 0, a.threads);
            const auto started = clock_type::now();
            switch (a.type) {
              case KeyType::u32:
                cpu_sort(reinterpret_cast<uint32_t*>(keys.get()), total, a.threads, a.type);
                break;
              case KeyType::i32:
                cpu_sort(reinterpret_cast<int32_t*>(keys.get()), total, a.threads, a.type);
                break;
              case KeyType::u64:
                cpu_sort(reinterpret_cast<uint64_t*>(keys.get()), total, a.threads, a.type);
                break;
              default:
                cpu_sort(reinterpret_cast<int64_t*>(keys.get()), total, a.threads, a.type);
                break;
            }
            times.push_back(since(started));
            std::printf("parallel CPU sort (%u threads), run %d: %.3f s, %.4g G keys/s\n",
                        a.threads, i + 1, times.back() / 1e3, double(total) / times.back() / 1e6);
            std::fflush(stdout);
          }
          std::printf(
              "parallel CPU sort: median %.3f s, %.4g G keys/s; best %.3f s, %.4g G keys/s\n",
              median(times) / 1e3, double(total) / median(times) / 1e6, best(times) / 1e3,
              double(total) / best(times) / 1e6);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpusort_distributed_bench: error: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
