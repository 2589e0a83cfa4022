// The distributed sort under mpirun (tests/CMakeLists.txt runs it on 2, 3 and 4 ranks): every case
// gives each rank its own input (every key type, values, orders, bit ranges, skewed and
// adversarial distributions, empty, one-element and uneven ranks), sorts them together, and
// rank 0 compares the whole output of every rank, byte for byte, with one stable gpusort sort of
// the concatenation (rank 0's input, then rank 1's, ...), cut where the slices say. Values are
// the elements' positions in that concatenation, so any instability shows.
//
// Usage: distributed_sort_test [CASE-SUBSTRING [STRIDE OFFSET]]; exit status 0 when every case
// passed (an empty CASE-SUBSTRING takes every case).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <gpusort/distributed.hpp>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "device_path.hpp"  // the device-resident path's decision (internal)

namespace {

using namespace gpusort;
namespace dist = gpusort::distributed;

enum class Dist { uniform, all_equal, one_value_99, few_distinct, sorted, reversed, specials };
const char* name(Dist d) {
  switch (d) {
    case Dist::uniform:
      return "uniform";
    case Dist::all_equal:
      return "all_equal";
    case Dist::one_value_99:
      return "one_value_99";
    case Dist::few_distinct:
      return "few_distinct";
    case Dist::sorted:
      return "sorted";
    case Dist::reversed:
      return "reversed";
    case Dist::specials:
      return "specials";
  }
  return "?";
}

// Sizes of the ranks' inputs, by pattern.
enum class Sizes { even, uneven, empty_ranks, one_each, fewer_than_ranks, all_empty, large };
const char* name(Sizes s) {
  switch (s) {
    case Sizes::even:
      return "even";
    case Sizes::uneven:
      return "uneven";
    case Sizes::empty_ranks:
      return "empty_ranks";
    case Sizes::one_each:
      return "one_each";
    case Sizes::fewer_than_ranks:
      return "fewer_than_ranks";
    case Sizes::all_empty:
      return "all_empty";
    case Sizes::large:
      return "large";
  }
  return "?";
}
uint64_t size_of(Sizes s, int rank, int ranks) {
  switch (s) {
    case Sizes::even:
      return 700;
    case Sizes::uneven:
      return uint64_t(37 + 911 * rank * rank % 1500);
    case Sizes::empty_ranks:
      return rank % 2 == 0 ? 0 : 600 + uint64_t(rank) * 13;
    case Sizes::one_each:
      return 1;
    case Sizes::fewer_than_ranks:
      return rank == ranks - 1 ? uint64_t(ranks - 1) : 0;
    case Sizes::all_empty:
      return 0;
    case Sizes::large:
      return 30000;
  }
  return 0;
}

struct Case {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 4;
  bool descending = false;
  uint32_t begin_bit = 0, end_bit = 0;
  Dist dist = Dist::uniform;
  Sizes sizes = Sizes::uneven;
  bool balanced = true;
  dist::Merge merge = dist::Merge::automatic;
  uint64_t max_message_bytes = 0;  // the exchange's rounds when small
  uint64_t device_memory_limit = 0;
  bool partition_first = false;
  uint32_t samples_per_rank = 0;  // few: buckets far from balanced, the rebalancing does more
  uint64_t chunk_bytes = 0;       // the built-in exchange's messages: tiny makes many per pair
  bool sorter = false;            // through the one Sorter that these cases share (reuse)
  // The path: automatic (host on lavapipe: a reason must be recorded), shared_device (the
  // device-resident path on one Vulkan device: lavapipe), device (CUDA peer copies: skipped
  // with the reason where it cannot run), host.
  dist::DeviceExchange exchange = dist::DeviceExchange::automatic;
  // The device-resident path's elements per in-core sort (GPUSORT_TEST_DEVICE_PATH_RUN): small,
  // the share is sorted in several runs and the slice in several parts (both asserted).
  uint64_t device_run = 0;
  // Through the Sorter, with the inputs and the output storage registered with the GPU
  // (Sorter::register_host_memory) for the sort and unregistered after it: the device-resident
  // path moves their whole pages straight (asserted for large shares), the rest through staging.
  bool registered = false;
  std::string describe() const {
    std::string s = std::string(to_string(key)) + "_v" + std::to_string(value_bytes) +
                    (descending ? "_desc" : "_asc") + "_" + name(dist) + "_" + name(sizes);
    if (begin_bit || end_bit)
      s += "_bits" + std::to_string(begin_bit) + "-" + std::to_string(end_bit);
    if (!balanced) s += "_natural";
    if (merge == dist::Merge::cpu) s += "_cpumerge";
    if (merge == dist::Merge::gpu) s += "_gpumerge";
    if (max_message_bytes) s += "_msg" + std::to_string(max_message_bytes);
    if (device_memory_limit) s += "_outofcore";
    if (partition_first) s += "_partitionfirst";
    if (samples_per_rank) s += "_samples" + std::to_string(samples_per_rank);
    if (chunk_bytes) s += "_chunk" + std::to_string(chunk_bytes);
    if (sorter) s += "_sorter";
    if (exchange == dist::DeviceExchange::host) s += "_hostexchange";
    if (exchange == dist::DeviceExchange::device) s += "_deviceexchange";
    if (exchange == dist::DeviceExchange::shared_device) s += "_shareddevice";
    if (device_run) s += "_run" + std::to_string(device_run);
    if (registered) s += "_registered";
    return s;
  }
};

bool is_float(KeyType t) {
  return t == KeyType::f32 || t == KeyType::f64;
}
bool is_signed(KeyType t) {
  return t == KeyType::i32 || t == KeyType::i64;
}

// The bits of a key of type t holding the number x (sorted and reversed inputs).
uint64_t number_bits(KeyType t, int64_t x) {
  switch (t) {
    case KeyType::u32:
      return uint32_t(x);
    case KeyType::i32:
      return uint32_t(int32_t(x));
    case KeyType::f32:
      return std::bit_cast<uint32_t>(float(x) * 0.5f);
    case KeyType::u64:
      return uint64_t(x) * 0x100000001ull;
    case KeyType::i64:
      return uint64_t(x * 0x100000001ll);
    case KeyType::f64:
      return std::bit_cast<uint64_t>(double(x) * 0.25);
  }
  return 0;
}

uint64_t special_bits(KeyType t, std::mt19937_64& rng) {
  const bool wide = key_bytes(t) == 8;
  switch (rng() % 10) {
    case 0:
      return wide ? 0x7ff8000000000000ull | (rng() & 0xfff) : 0x7fc00000u | (rng() & 0xff);
    case 1:
      return wide ? 0xfff8000000000000ull | (rng() & 0xfff) : 0xffc00000u | (rng() & 0xff);
    case 2:
      return 0;  // +0
    case 3:
      return wide ? 0x8000000000000000ull : 0x80000000u;  // -0
    case 4:
      return wide ? 0x7ff0000000000000ull : 0x7f800000u;  // +inf
    case 5:
      return wide ? 0xfff0000000000000ull : 0xff800000u;  // -inf
    case 6:
      return wide ? 1 : 1;  // the smallest denormal
    default:
      return number_bits(t, int64_t(rng() % 200) - 100);
  }
}

// Rank r's keys (as bits) for a case; `first` is its position in the concatenation, `total` N.
std::vector<uint64_t> make_keys(const Case& c, int rank, uint64_t n, uint64_t first, uint64_t total,
                                uint64_t seed) {
  std::mt19937_64 rng(seed * 1000003 + uint64_t(rank));
  const uint64_t width_mask = key_bytes(c.key) == 8 ? ~uint64_t(0) : 0xffffffffull;
  std::vector<uint64_t> few(4);
  std::mt19937_64 shared(seed);  // the same values on every rank
  for (uint64_t& f : few) f = shared() & width_mask;
  const uint64_t common = shared() & width_mask;
  std::vector<uint64_t> bits(n);
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t g = int64_t(first + i);
    switch (c.dist) {
      case Dist::uniform:
        bits[i] = rng() & width_mask;
        break;
      case Dist::all_equal:
        bits[i] = common;
        break;
      case Dist::one_value_99:
        bits[i] = rng() % 100 == 0 ? rng() & width_mask : common;
        break;
      case Dist::few_distinct:
        bits[i] = few[rng() % 4];
        break;
      case Dist::sorted:
        bits[i] = number_bits(c.key, g - int64_t(total / 2));
        break;
      case Dist::reversed:
        bits[i] = number_bits(c.key, int64_t(total / 2) - g);
        break;
      case Dist::specials:
        bits[i] = is_float(c.key) ? special_bits(c.key, rng)
                                  : (rng() % 3 == 0 ? 0 : ~uint64_t(0)) & width_mask;
        break;
    }
  }
  (void)is_signed;
  return bits;
}

std::vector<uint8_t> pack(const std::vector<uint64_t>& bits, uint32_t size) {
  std::vector<uint8_t> out(bits.size() * size);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(out.data() + i * size, &bits[i], size);
  return out;
}

bool run_case(Context& ctx, dist::Sorter& sorter, const Case& c, uint64_t seed) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const uint32_t ks = key_bytes(c.key), vs = c.value_bytes;
  std::vector<uint64_t> sizes(static_cast<size_t>(ranks)), firsts(size_t(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r) {
    sizes[size_t(r)] = size_of(c.sizes, r, ranks);
    firsts[size_t(r) + 1] = firsts[size_t(r)] + sizes[size_t(r)];
  }
  const uint64_t total = firsts.back();
  auto keys_of = [&](int r) {
    return pack(make_keys(c, r, sizes[size_t(r)], firsts[size_t(r)], total, seed), ks);
  };
  auto values_of = [&](int r) {
    std::vector<uint64_t> v(sizes[size_t(r)]);
    for (uint64_t i = 0; i < v.size(); ++i) v[i] = firsts[size_t(r)] + i;
    return pack(v, vs);
  };
  const std::vector<uint8_t> keys = keys_of(rank);
  const std::vector<uint8_t> values = vs ? values_of(rank) : std::vector<uint8_t>{};

  std::unique_ptr<dist::Exchange> exchange =
      c.max_message_bytes ? dist::make_mpi_exchange(c.max_message_bytes) : nullptr;
  dist::DistributedOptions options;
  options.sort.descending = c.descending;
  options.sort.begin_bit = c.begin_bit;
  options.sort.end_bit = c.end_bit;
  options.sort.device_memory_limit = c.device_memory_limit;
  options.balanced = c.balanced;
  options.merge = c.merge;
  options.exchange = exchange.get();
  options.partition_first = c.partition_first;
  options.samples_per_rank = c.samples_per_rank;
  options.chunk_bytes = c.chunk_bytes;
  options.device_exchange = c.exchange;
  dist::DistributedTimings timings;
  options.timings = &timings;
  std::vector<uint8_t> out_keys, out_values;
  // With c.registered: registered before the sort, unregistered after it.
  const std::vector<uint8_t>* const registered_buffers[] = {&keys, &values, &out_keys, &out_values};
  std::string error;
  dist::Slice slice;
  try {
    auto keys_out = [&](uint64_t n) {
      out_keys.resize(n * ks);
      return static_cast<void*>(out_keys.data());
    };
    auto values_out = [&](uint64_t n) {
      out_values.resize(n * vs);
      return static_cast<void*>(out_values.data());
    };
    if (c.device_run)
      setenv("GPUSORT_TEST_DEVICE_PATH_RUN", std::to_string(c.device_run).c_str(), 1);
    if (c.registered) {
      // The output storage at its largest (every element), so that the allocators' resize keeps
      // the registered addresses.
      out_keys.assign(total * ks, 0);
      out_values.assign(total * vs, 0);
      for (const std::vector<uint8_t>* v : registered_buffers)
        if (!v->empty()) sorter.register_host_memory(v->data(), v->size());
    }
    if (c.sorter || c.registered)
      slice = sorter.sort_raw(c.key, keys.data(), sizes[size_t(rank)], values.data(), vs, keys_out,
                              values_out, options);
    else
      slice = dist::sort_raw(ctx, MPI_COMM_WORLD, c.key, keys.data(), sizes[size_t(rank)],
                             values.data(), vs, keys_out, values_out, options);
  } catch (const std::exception& e) {
    error = e.what();
  }
  unsetenv("GPUSORT_TEST_DEVICE_PATH_RUN");
  if (c.registered)
    for (const std::vector<uint8_t>* v : registered_buffers)
      if (!v->empty() && !sorter.unregister_host_memory(v->data()) && error.empty())
        error = "a registration was gone before unregister_host_memory";
  // The device-resident path asked for and refused here (no CUDA, no peer access): skipped, with
  // the reason, on every rank alike (the refusal is agreed on).
  const std::string refused_text = "the device exchange cannot run: ";
  int skip =
      c.exchange == dist::DeviceExchange::device && error.find(refused_text) != std::string::npos;
  MPI_Allreduce(MPI_IN_PLACE, &skip, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (skip) {
    if (rank == 0)
      std::printf("SKIP %s: %s\n", c.describe().c_str(),
                  error.substr(error.find(refused_text) + refused_text.size()).c_str());
    return true;
  }
  // Which path ran: the one asked for; automatic and host record why it was not the device's.
  std::string path_error;
  if (error.empty()) {
    const bool device = c.exchange == dist::DeviceExchange::device ||
                        c.exchange == dist::DeviceExchange::shared_device;
    if (device && !timings.device_resident) path_error = "the device-resident path did not run";
    if (c.exchange == dist::DeviceExchange::host && timings.device_resident)
      path_error = "the device-resident path ran where the host one was asked for";
    if ((c.exchange == dist::DeviceExchange::automatic ||
         c.exchange == dist::DeviceExchange::host) &&
        !timings.device_resident && timings.device_refused.empty())
      path_error = "the host path ran and no reason was recorded";
    if (c.registered && device && c.sizes == Sizes::large && timings.direct_bytes == 0)
      path_error = "no byte of the registered memory moved straight";
    if (!c.registered && timings.direct_bytes != 0)
      path_error = std::to_string(timings.direct_bytes) + " bytes moved straight, none registered";
    if (c.device_run && c.sizes == Sizes::large && timings.local_runs < 2)
      path_error = "the share was sorted in " + std::to_string(timings.local_runs) + " run(s)";
    if (c.device_run && c.sizes == Sizes::large && timings.final_sort.runs < 2)
      path_error =
          "the slice was sorted in " + std::to_string(timings.final_sort.runs) + " part(s)";
  }
  int path_ok = path_error.empty();
  MPI_Allreduce(MPI_IN_PLACE, &path_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!path_ok) {
    if (!path_error.empty())
      std::printf("FAIL %s: rank %d: %s\n", c.describe().c_str(), rank, path_error.c_str());
    return false;
  }
  // Tiny chunks: more than one message per pair of ranks on average.
  uint64_t messages = timings.messages;
  MPI_Allreduce(MPI_IN_PLACE, &messages, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  // A small device memory limit: several sorted runs per rank, exchanged piece by piece.
  uint64_t local_runs = timings.local_runs;
  MPI_Allreduce(MPI_IN_PLACE, &local_runs, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  // ... and the merge on the GPU in several ranges of the key order (each fits the device).
  uint64_t merge_parts = timings.final_sort.runs;
  MPI_Allreduce(MPI_IN_PLACE, &merge_parts, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);

  // Everything to rank 0.
  uint64_t mine[3] = {slice.count, slice.global_offset, slice.global_count};
  std::vector<uint64_t> slices(size_t(ranks) * 3);
  MPI_Gather(mine, 3, MPI_UINT64_T, slices.data(), 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  auto gather_bytes = [&](const std::vector<uint8_t>& part) {
    int bytes = int(part.size());
    std::vector<int> counts(static_cast<size_t>(ranks)), displs(size_t(ranks), 0);
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 1; r < ranks; ++r)
      displs[size_t(r)] = displs[size_t(r) - 1] + counts[size_t(r) - 1];
    std::vector<uint8_t> all(rank == 0 ? size_t(displs.back() + counts.back()) : 0);
    MPI_Gatherv(part.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0,
                MPI_COMM_WORLD);
    return all;
  };
  const std::vector<uint8_t> all_keys = gather_bytes(out_keys);
  const std::vector<uint8_t> all_values = gather_bytes(out_values);
  int errors = error.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  int ok = 1;
  std::string why;
  if (errors) {
    ok = 0;
    why = "threw: " + error;
  } else if (rank == 0) {
    std::vector<uint8_t> ref_keys, ref_values;
    for (int r = 0; r < ranks; ++r) {
      const std::vector<uint8_t> k = keys_of(r);
      ref_keys.insert(ref_keys.end(), k.begin(), k.end());
      if (vs) {
        const std::vector<uint8_t> v = values_of(r);
        ref_values.insert(ref_values.end(), v.begin(), v.end());
      }
    }
    SortOptions reference;
    reference.descending = c.descending;
    reference.begin_bit = c.begin_bit;
    reference.end_bit = c.end_bit;
    if (total)
      sort_raw(ctx, c.key, ref_keys.data(), total, vs ? ref_values.data() : nullptr, vs, reference);
    uint64_t offset = 0, largest = 0;
    for (int r = 0; r < ranks; ++r) {
      const uint64_t count = slices[size_t(r) * 3], start = slices[size_t(r) * 3 + 1];
      largest = std::max(largest, count);
      if (slices[size_t(r) * 3 + 2] != total)
        why = "rank " + std::to_string(r) + ": wrong global count";
      if (start != offset)
        why = "rank " + std::to_string(r) + ": global offset " + std::to_string(start) +
              ", expected " + std::to_string(offset);
      if (c.balanced) {
        const uint64_t want =
            uint64_t((unsigned __int128)total * uint64_t(r + 1) / uint64_t(ranks)) -
            uint64_t((unsigned __int128)total * uint64_t(r) / uint64_t(ranks));
        if (count != want)
          why = "rank " + std::to_string(r) + " holds " + std::to_string(count) +
                " elements, balanced is " + std::to_string(want);
      }
      offset += count;
    }
    if (why.empty() && offset != total)
      why = "the slices hold " + std::to_string(offset) + " of " + std::to_string(total);
    // Natural buckets must not pile equal keys onto one rank: regular sampling bounds a bucket
    // near N / P (checked loosely, for inputs large enough to tell).
    if (why.empty() && !c.balanced && total >= uint64_t(ranks) * 200 &&
        double(largest) > 1.5 * double(total) / ranks + 16)
      why = "natural buckets unbalanced: the largest holds " + std::to_string(largest) + " of " +
            std::to_string(total);
    if (why.empty() && c.chunk_bytes && c.chunk_bytes <= 64 && total >= 1000 && ranks > 1 &&
        messages <= uint64_t(ranks) * uint64_t(ranks - 1))
      why = "only " + std::to_string(messages) + " messages with " + std::to_string(c.chunk_bytes) +
            "-byte chunks";
    if (why.empty() && c.device_memory_limit && c.sizes == Sizes::large && !c.partition_first &&
        local_runs < 2)
      why = "the local sort made " + std::to_string(local_runs) + " run(s), expected several";
    if (why.empty() && c.device_memory_limit && c.sizes == Sizes::large && !c.partition_first &&
        c.merge != dist::Merge::cpu && merge_parts < 2)
      why = "the merge on the GPU ran in " + std::to_string(merge_parts) +
            " part(s), expected several";
    if (why.empty() && all_keys != ref_keys) {
      uint64_t i = 0;
      while (i < total && std::memcmp(&all_keys[i * ks], &ref_keys[i * ks], ks) == 0) ++i;
      why = "keys differ from the reference first at global position " + std::to_string(i);
    }
    if (why.empty() && all_values != ref_values) {
      uint64_t i = 0;
      while (i < total && std::memcmp(&all_values[i * vs], &ref_values[i * vs], vs) == 0) ++i;
      why = "values differ from the reference first at global position " + std::to_string(i);
    }
    ok = why.empty();
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("%s %s (N=%llu, seed %llu)%s%s\n", ok ? "PASS" : "FAIL", c.describe().c_str(),
                static_cast<unsigned long long>(total), static_cast<unsigned long long>(seed),
                ok ? "" : ": ", why.c_str());
    std::fflush(stdout);
  }
  return ok;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const KeyType types[] = {KeyType::u32, KeyType::i32, KeyType::f32,
                           KeyType::u64, KeyType::i64, KeyType::f64};
  for (KeyType t : types) {
    const uint32_t width = key_bytes(t) * 8;
    const uint32_t wide_value = 8;
    // Every distribution, with values (the positions: stability shows), both orders.
    for (Dist d : {Dist::uniform, Dist::all_equal, Dist::one_value_99, Dist::few_distinct,
                   Dist::sorted, Dist::reversed, Dist::specials}) {
      cases.push_back({.key = t, .value_bytes = 4, .dist = d});
      cases.push_back({.key = t,
                       .value_bytes = wide_value,
                       .descending = true,
                       .dist = d,
                       .sizes = Sizes::empty_ranks});
    }
    // Keys alone; a bit range (keys equal in it but not outside show stability without values).
    cases.push_back({.key = t, .value_bytes = 0, .dist = Dist::uniform});
    cases.push_back(
        {.key = t, .value_bytes = 0, .begin_bit = 3, .end_bit = width / 2, .dist = Dist::uniform});
    cases.push_back({.key = t,
                     .value_bytes = 4,
                     .descending = true,
                     .begin_bit = width - 6,
                     .end_bit = width - 1,
                     .dist = Dist::uniform,
                     .sizes = Sizes::even});
    // Natural bucket sizes, on skewed inputs too.
    cases.push_back({.key = t, .value_bytes = 4, .dist = Dist::uniform, .balanced = false});
    cases.push_back({.key = t,
                     .value_bytes = 8,
                     .dist = Dist::all_equal,
                     .sizes = Sizes::even,
                     .balanced = false});
    cases.push_back({.key = t,
                     .value_bytes = 4,
                     .descending = true,
                     .dist = Dist::one_value_99,
                     .balanced = false});
  }
  // Tiny and empty ranks.
  for (Sizes s : {Sizes::one_each, Sizes::fewer_than_ranks, Sizes::all_empty}) {
    cases.push_back({.key = KeyType::u32, .value_bytes = 4, .dist = Dist::uniform, .sizes = s});
    cases.push_back({.key = KeyType::f64,
                     .value_bytes = 8,
                     .descending = true,
                     .dist = Dist::all_equal,
                     .sizes = s,
                     .balanced = false});
  }
  // Both merges; the exchange in many small rounds (the path of messages beyond 2^31 bytes).
  for (dist::Merge m : {dist::Merge::cpu, dist::Merge::gpu}) {
    cases.push_back(
        {.key = KeyType::u64, .value_bytes = 8, .dist = Dist::few_distinct, .merge = m});
    cases.push_back({.key = KeyType::f32,
                     .value_bytes = 4,
                     .descending = true,
                     .dist = Dist::specials,
                     .balanced = false,
                     .merge = m});
  }
  cases.push_back(
      {.key = KeyType::i32, .value_bytes = 4, .dist = Dist::uniform, .max_message_bytes = 40});
  cases.push_back({.key = KeyType::f64,
                   .value_bytes = 8,
                   .dist = Dist::all_equal,
                   .balanced = false,
                   .merge = dist::Merge::cpu,
                   .max_message_bytes = 24});
  // Larger shares, sorted out of core on every rank (a small device memory limit).
  cases.push_back({.key = KeyType::u32,
                   .value_bytes = 4,
                   .dist = Dist::few_distinct,
                   .sizes = Sizes::large,
                   .device_memory_limit = 256 * 1024});
  // Partition first, sort once: every key type, skewed inputs, both layouts, tiny and empty ranks,
  // the exchange in rounds, the sort out of core.
  for (KeyType t : types) {
    cases.push_back({.key = t, .value_bytes = 4, .dist = Dist::uniform, .partition_first = true});
    cases.push_back({.key = t,
                     .value_bytes = 8,
                     .descending = true,
                     .dist = Dist::one_value_99,
                     .sizes = Sizes::empty_ranks,
                     .partition_first = true});
    cases.push_back({.key = t,
                     .value_bytes = 4,
                     .dist = Dist::all_equal,
                     .balanced = false,
                     .partition_first = true});
    cases.push_back({.key = t,
                     .value_bytes = 0,
                     .begin_bit = 2,
                     .end_bit = 9,
                     .dist = Dist::specials,
                     .partition_first = true});
  }
  for (Sizes s : {Sizes::one_each, Sizes::fewer_than_ranks, Sizes::all_empty, Sizes::even})
    cases.push_back({.key = KeyType::i64,
                     .value_bytes = 8,
                     .dist = Dist::sorted,
                     .sizes = s,
                     .partition_first = true});
  cases.push_back({.key = KeyType::f32,
                   .value_bytes = 4,
                   .dist = Dist::reversed,
                   .balanced = false,
                   .partition_first = true});
  cases.push_back({.key = KeyType::u64,
                   .value_bytes = 8,
                   .dist = Dist::few_distinct,
                   .max_message_bytes = 40,
                   .partition_first = true});
  cases.push_back({.key = KeyType::u32,
                   .value_bytes = 4,
                   .dist = Dist::few_distinct,
                   .sizes = Sizes::large,
                   .device_memory_limit = 256 * 1024,
                   .partition_first = true});
  // Few samples: uneven buckets, which the balanced layout evens out by moving pieces.
  for (KeyType t : {KeyType::u32, KeyType::f64}) {
    cases.push_back({.key = t,
                     .value_bytes = 4,
                     .dist = Dist::uniform,
                     .partition_first = true,
                     .samples_per_rank = 3});
    cases.push_back({.key = t,
                     .value_bytes = 8,
                     .descending = true,
                     .dist = Dist::few_distinct,
                     .sizes = Sizes::empty_ranks,
                     .partition_first = true,
                     .samples_per_rank = 2});
  }
  // The built-in exchange in tiny chunks (many messages per pair, keys and values chunked
  // alike), with either merge, natural buckets, skewed and tiny inputs, runs out of core.
  cases.push_back({.key = KeyType::u32, .value_bytes = 4, .dist = Dist::uniform, .chunk_bytes = 8});
  cases.push_back({.key = KeyType::u64,
                   .value_bytes = 8,
                   .dist = Dist::few_distinct,
                   .merge = dist::Merge::cpu,
                   .chunk_bytes = 24});
  cases.push_back({.key = KeyType::f32,
                   .value_bytes = 8,
                   .descending = true,
                   .dist = Dist::specials,
                   .sizes = Sizes::empty_ranks,
                   .balanced = false,
                   .merge = dist::Merge::gpu,
                   .chunk_bytes = 16});
  cases.push_back({.key = KeyType::i64,
                   .value_bytes = 0,
                   .begin_bit = 5,
                   .end_bit = 40,
                   .dist = Dist::one_value_99,
                   .chunk_bytes = 8});
  for (Sizes s : {Sizes::one_each, Sizes::fewer_than_ranks, Sizes::all_empty})
    cases.push_back({.key = KeyType::u32,
                     .value_bytes = 4,
                     .dist = Dist::sorted,
                     .sizes = s,
                     .chunk_bytes = 4});
  for (dist::Merge m : {dist::Merge::cpu, dist::Merge::gpu})
    for (bool balanced : {true, false})
      cases.push_back({.key = KeyType::u32,
                       .value_bytes = 4,
                       .dist = Dist::uniform,
                       .sizes = Sizes::large,
                       .balanced = balanced,
                       .merge = m,
                       .device_memory_limit = 256 * 1024,
                       .chunk_bytes = 4096});
  cases.push_back({.key = KeyType::f64,
                   .value_bytes = 8,
                   .dist = Dist::all_equal,
                   .sizes = Sizes::large,
                   .device_memory_limit = 512 * 1024,
                   .chunk_bytes = 1000});
  // One Sorter, many sorts: its buffers grow, shrink in use and are reused, across key types,
  // value widths, sizes, merges and empty inputs; the same sort twice.
  for (int twice = 0; twice < 2; ++twice)
    cases.push_back({.key = KeyType::u32,
                     .value_bytes = 4,
                     .dist = Dist::uniform,
                     .sizes = Sizes::large,
                     .merge = dist::Merge::cpu,
                     .device_memory_limit = 256 * 1024,
                     .chunk_bytes = 2048,
                     .sorter = true});
  cases.push_back({.key = KeyType::i32, .value_bytes = 0, .dist = Dist::reversed, .sorter = true});
  cases.push_back({.key = KeyType::u64,
                   .value_bytes = 8,
                   .dist = Dist::few_distinct,
                   .sizes = Sizes::large,
                   .merge = dist::Merge::cpu,
                   .sorter = true});
  cases.push_back(
      {.key = KeyType::f32, .value_bytes = 4, .sizes = Sizes::all_empty, .sorter = true});
  cases.push_back({.key = KeyType::f64,
                   .value_bytes = 8,
                   .descending = true,
                   .dist = Dist::specials,
                   .sizes = Sizes::empty_ranks,
                   .balanced = false,
                   .chunk_bytes = 64,
                   .sorter = true});
  cases.push_back({.key = KeyType::u32,
                   .value_bytes = 4,
                   .dist = Dist::uniform,
                   .sizes = Sizes::one_each,
                   .sorter = true});
  // The device-resident path: on one Vulkan device shared by the ranks (runs on lavapipe), and
  // with CUDA peer copies (GPUs only; skipped with the reason elsewhere), each through the shared
  // Sorter (its GPU buffers grown and reused) and through a Sorter of one call.
  for (dist::DeviceExchange e :
       {dist::DeviceExchange::shared_device, dist::DeviceExchange::device}) {
    for (KeyType t : types) {
      cases.push_back({.key = t, .value_bytes = 4, .dist = Dist::uniform, .exchange = e});
      cases.push_back({.key = t,
                       .value_bytes = 8,
                       .descending = true,
                       .dist = Dist::specials,
                       .sizes = Sizes::empty_ranks,
                       .sorter = true,
                       .exchange = e});
    }
    for (Dist d :
         {Dist::all_equal, Dist::one_value_99, Dist::few_distinct, Dist::sorted, Dist::reversed})
      cases.push_back(
          {.key = KeyType::u32, .value_bytes = 4, .dist = d, .sorter = true, .exchange = e});
    for (Sizes z :
         {Sizes::even, Sizes::one_each, Sizes::fewer_than_ranks, Sizes::all_empty, Sizes::large})
      cases.push_back({.key = KeyType::f32,
                       .value_bytes = 4,
                       .dist = Dist::uniform,
                       .sizes = z,
                       .sorter = true,
                       .exchange = e});
    cases.push_back({.key = KeyType::u64, .value_bytes = 0, .dist = Dist::uniform, .exchange = e});
    cases.push_back({.key = KeyType::u32,
                     .value_bytes = 0,
                     .dist = Dist::few_distinct,
                     .sizes = Sizes::large,
                     .sorter = true,
                     .exchange = e});
    cases.push_back({.key = KeyType::i64,
                     .value_bytes = 4,
                     .begin_bit = 8,
                     .end_bit = 40,
                     .dist = Dist::uniform,
                     .sorter = true,
                     .exchange = e});
    cases.push_back({.key = KeyType::f64,
                     .value_bytes = 8,
                     .descending = true,
                     .dist = Dist::one_value_99,
                     .sizes = Sizes::large,
                     .exchange = e});
    // Several runs per share and parts per slice (a small in-core limit).
    for (Dist d : {Dist::uniform, Dist::one_value_99, Dist::all_equal, Dist::few_distinct})
      cases.push_back({.key = KeyType::u32,
                       .value_bytes = 4,
                       .dist = d,
                       .sizes = Sizes::large,
                       .sorter = true,
                       .exchange = e,
                       .device_run = 4096});
    cases.push_back({.key = KeyType::f64,
                     .value_bytes = 8,
                     .descending = true,
                     .dist = Dist::specials,
                     .sizes = Sizes::large,
                     .exchange = e,
                     .device_run = 3000});
    cases.push_back({.key = KeyType::u64,
                     .value_bytes = 0,
                     .dist = Dist::uniform,
                     .sizes = Sizes::uneven,
                     .sorter = true,
                     .exchange = e,
                     .device_run = 100});
  }
  cases.push_back({.key = KeyType::u32,
                   .value_bytes = 4,
                   .dist = Dist::uniform,
                   .exchange = dist::DeviceExchange::host});
  // Registered host memory: transfers straight from and into it on the device-resident path (in
  // one run and in several runs and parts, keys alone and with values), ignored by the host path.
  cases.push_back({.key = KeyType::u32,
                   .value_bytes = 4,
                   .dist = Dist::uniform,
                   .sizes = Sizes::large,
                   .exchange = dist::DeviceExchange::shared_device,
                   .registered = true});
  cases.push_back({.key = KeyType::f64,
                   .value_bytes = 8,
                   .descending = true,
                   .dist = Dist::specials,
                   .sizes = Sizes::large,
                   .exchange = dist::DeviceExchange::shared_device,
                   .device_run = 3000,
                   .registered = true});
  cases.push_back({.key = KeyType::u64,
                   .value_bytes = 0,
                   .dist = Dist::few_distinct,
                   .sizes = Sizes::uneven,
                   .exchange = dist::DeviceExchange::shared_device,
                   .registered = true});
  cases.push_back({.key = KeyType::i32,
                   .value_bytes = 4,
                   .dist = Dist::one_value_99,
                   .sizes = Sizes::large,
                   .exchange = dist::DeviceExchange::device,
                   .registered = true});
  cases.push_back({.key = KeyType::u32,
                   .value_bytes = 4,
                   .dist = Dist::uniform,
                   .sizes = Sizes::large,
                   .exchange = dist::DeviceExchange::host,
                   .registered = true});
  return cases;
}

// The device-resident path's decision (device_path_refusal), on facts made up to cover each
// condition; and, on this machine, automatic's reason and the shared_device refusal of natural
// buckets, every rank alike.
bool device_path_decision_checks(Context& ctx, dist::Sorter& sorter) {
  using dist::detail::device_path_refusal;
  using dist::detail::DevicePathFacts;
  std::string why;
  auto expect = [&](const DevicePathFacts& f, const std::string& want, const char* what) {
    const std::string got = device_path_refusal(f);
    if (got != want) why = std::string(what) + ": '" + got + "', expected '" + want + "'";
  };
  DevicePathFacts ok;
  expect(ok, "", "every condition holds");
  DevicePathFacts f = ok;
  f.requested = dist::DeviceExchange::host;
  expect(f, "the host exchange was asked for", "host asked for");
  f = ok, f.partition_first = true;
  expect(f, "partition_first runs on the host path", "partition first");
  f = ok, f.custom_exchange = true;
  expect(f, "a caller's Exchange runs on the host path", "custom exchange");
  f = ok, f.balanced = false;
  expect(f, "natural bucket sizes run on the host path", "natural buckets");
  f = ok, f.stable_algorithm = false;
  expect(f, "the algorithm is not stable (bitonic)", "bitonic");
  f = ok, f.node_error = "rank 1: its node holds 1 of the 2 ranks";
  f.peer_error = "rank 0: no peer access";
  expect(f, f.node_error, "another node (before peer access)");
  f = ok, f.backend_error = "rank 0: p2p: libcuda.so.1 not found";
  f.fit_error = "rank 1: too large";
  expect(f, f.backend_error, "no CUDA (before the fit)");
  f = ok, f.peer_error = "rank 1: no peer access to rank 0's GPU";
  expect(f, f.peer_error, "no peer access");
  f = ok, f.fit_error = "rank 0: two buffers exceed the device";
  expect(f, f.fit_error, "does not fit");

  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<uint32_t> keys(1000 + size_t(rank));
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = uint32_t(i * 2654435761u);
  dist::DistributedTimings timings;
  dist::DistributedOptions options;
  options.timings = &timings;
  try {
    dist::sort<uint32_t>(ctx, MPI_COMM_WORLD, keys, options);
    if (!timings.device_resident && timings.device_refused.empty())
      why = "automatic: the host path ran without a reason";
    // shared_device with natural buckets: refused on every rank with the same message.
    options.device_exchange = dist::DeviceExchange::shared_device;
    options.balanced = false;
    try {
      std::vector<uint32_t> out;
      sorter.sort_raw(
          KeyType::u32, keys.data(), keys.size(), nullptr, 0,
          [&](uint64_t n) {
            out.resize(n);
            return static_cast<void*>(out.data());
          },
          {}, options);
      why = "shared_device with natural buckets did not throw";
    } catch (const Error& e) {
      const std::string want =
          "distributed sort: the device exchange cannot run: natural bucket sizes run on the host "
          "path";
      if (e.what() != want) why = std::string("threw '") + e.what() + "', expected '" + want + "'";
    }
  } catch (const std::exception& e) {
    why = e.what();
  }
  int all_ok = why.empty();
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!why.empty()) std::printf("FAIL device path decision, rank %d: %s\n", rank, why.c_str());
  if (rank == 0 && all_ok)
    std::printf("PASS device path decision (automatic here: %s)\n",
                timings.device_resident ? "device" : timings.device_refused.c_str());
  return all_ok;
}

// HostBuffer, prefault and usable_cores, on each rank.
bool host_memory_checks() {
  std::string why;
  dist::HostBuffer empty;
  if (empty.data() || empty.capacity()) why = "an empty HostBuffer holds memory";
  dist::HostBuffer b(5000);
  if (!b.data() || b.capacity() < 5000 || reinterpret_cast<uintptr_t>(b.data()) % (2 << 20))
    why = "HostBuffer(5000): no 2 MiB-aligned storage of 5000 bytes";
  for (uint64_t i = 0; i < b.capacity(); i += 4096)
    if (b.data()[i] != 0) why = "HostBuffer: a touched page is not zero";
  std::memset(b.data(), 7, 5000);
  uint8_t* const first = b.data();
  b.reserve(100);  // fits: kept as it is
  if (b.data() != first || b.data()[4999] != 7) why = "HostBuffer::reserve moved a buffer that fit";
  b.reserve(b.capacity() + 1);
  if (b.capacity() < (4 << 20)) why = "HostBuffer::reserve did not grow";
  dist::HostBuffer moved(std::move(b));
  if (b.data() || !moved.data()) why = "HostBuffer: a move left the source holding memory";
  std::vector<uint8_t> v(300000, 9);
  dist::prefault(v.data(), v.size(), 3);
  if (std::count(v.begin(), v.end(), 0) != 300000 / 4096 + 1) why = "prefault: not one zero a page";
  if (dist::usable_cores() < 1) why = "usable_cores() is 0";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int ok = why.empty();
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!why.empty()) std::printf("FAIL host memory, rank %d: %s\n", rank, why.c_str());
  if (rank == 0 && ok) std::printf("PASS host memory\n");
  return ok;
}

// Sorter::register_host_memory's refusals, each with its one-line reason and nothing left
// registered: an empty range, a range overlapping one registered (from either side, and the
// same start); unregistering what is not registered.
bool registration_checks(dist::Sorter& sorter) {
  std::string why;
  std::vector<uint8_t> memory(64 * 4096);
  uint8_t* const p = memory.data();
  auto refused = [&](const void* data, uint64_t bytes, const std::string& reason,
                     const char* what) {
    try {
      sorter.register_host_memory(data, bytes);
      why = std::string(what) + ": registered";
    } catch (const Error& e) {
      const std::string text = e.what();
      if (text.find(reason) == std::string::npos || text.find('\n') != std::string::npos)
        why = std::string(what) + ": '" + text + "' does not say '" + reason + "'";
    }
  };
  try {
    refused(p, 0, "an empty range", "zero bytes");
    refused(nullptr, 4096, "an empty range", "no address");
    sorter.register_host_memory(p + 8 * 4096, 16 * 4096);
    refused(p, 8 * 4096 + 1, "overlaps a range registered before", "overlapping its start");
    refused(p + 23 * 4096, 4096, "overlaps a range registered before", "overlapping its end");
    refused(p + 8 * 4096, 4096, "overlaps a range registered before", "the same start");
    sorter.register_host_memory(p, 8 * 4096);  // adjacent: fine
    if (sorter.unregister_host_memory(p + 4096)) why = "unregistered a range never registered";
    if (!sorter.unregister_host_memory(p) || !sorter.unregister_host_memory(p + 8 * 4096))
      why = "a registration could not be released";
    if (sorter.unregister_host_memory(p)) why = "a registration was released twice";
  } catch (const std::exception& e) {
    why = e.what();
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int ok = why.empty();
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!why.empty()) std::printf("FAIL registration, rank %d: %s\n", rank, why.c_str());
  if (rank == 0 && ok) std::printf("PASS registration\n");
  return ok;
}

// The last rank's output allocator fails (throws, or gives no storage) while the local sort's
// thread is still running (several runs): every rank throws the same "rank R: ..." (no rank left waiting, the sort's threads
// stopped), and the sorter sorts correctly afterwards.
bool failure_checks(Context& ctx, dist::Sorter& sorter, uint64_t seed) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<uint32_t> keys(20000);
  std::mt19937_64 rng(seed + uint64_t(rank));
  for (uint32_t& k : keys) k = uint32_t(rng());
  std::vector<uint32_t> out;
  dist::DistributedOptions options;
  options.sort.device_memory_limit = 128 * 1024;
  options.chunk_bytes = 1024;
  std::string error;
  // The allocator throws, then (null_storage) returns no storage.
  for (int null_storage = 0; null_storage < 2 && error.empty(); ++null_storage) {
    for (int use_sorter = 0; use_sorter < 2; ++use_sorter) {
      try {
        auto allocate = [&](uint64_t n) -> void* {
          if (rank == ranks - 1) {
            if (null_storage) return nullptr;
            throw Error("no room for the output");
          }
          out.resize(n);
          return out.data();
        };
        if (use_sorter)
          sorter.sort_raw(KeyType::u32, keys.data(), keys.size(), nullptr, 0, allocate, {},
                          options);
        else
          dist::sort_raw(ctx, MPI_COMM_WORLD, KeyType::u32, keys.data(), keys.size(), nullptr, 0,
                         allocate, {}, options);
        error = "did not throw";
      } catch (const Error& e) {
        const std::string want =
            "rank " + std::to_string(ranks - 1) + ": " +
            (null_storage ? "distributed sort: the output allocator gave no storage for " +
                                std::to_string(keys.size()) + " elements"
                          : std::string("no room for the output"));
        if (e.what() != want)
          error = std::string("threw '") + e.what() + "', expected '" + want + "'";
      }
      if (!error.empty()) break;
    }
  }
  // Afterwards: the same sorter sorts, checked by rank 0 against std::sort of everything.
  std::vector<uint32_t> result;
  if (error.empty()) {
    try {
      result = dist::sort<uint32_t>(ctx, MPI_COMM_WORLD, keys, options);
      dist::Slice slice = sorter.sort_raw(
          KeyType::u32, keys.data(), keys.size(), nullptr, 0,
          [&](uint64_t n) {
            out.resize(n);
            return static_cast<void*>(out.data());
          },
          {}, options);
      if (out != result || slice.count != out.size()) error = "the sorter's result differs";
    } catch (const std::exception& e) {
      error = std::string("after the failure: ") + e.what();
    }
  }
  int bytes = int(result.size() * 4), all_bytes = 0;
  std::vector<int> counts(static_cast<size_t>(ranks)), displs(static_cast<size_t>(ranks), 0);
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 1; r < ranks; ++r) displs[size_t(r)] = displs[size_t(r) - 1] + counts[size_t(r) - 1];
  if (rank == 0) all_bytes = displs.back() + counts.back();
  std::vector<uint32_t> all(size_t(all_bytes) / 4), reference(keys.size() * size_t(ranks));
  MPI_Gatherv(result.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0,
              MPI_COMM_WORLD);
  MPI_Gather(keys.data(), int(keys.size() * 4), MPI_BYTE, reference.data(), int(keys.size() * 4),
             MPI_BYTE, 0, MPI_COMM_WORLD);
  if (rank == 0 && error.empty()) {
    std::sort(reference.begin(), reference.end());
    if (all != reference) error = "the sort after the failure is wrong";
  }
  int ok = error.empty();
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!error.empty()) std::printf("FAIL failure_checks, rank %d: %s\n", rank, error.c_str());
  if (rank == 0 && ok) std::printf("PASS failure_checks\n");
  return ok;
}

// Ranks called differently: every rank throws the same message, naming the first rank that
// differs from rank 0 and its first differing argument or option, with both values; the sorter
// sorts afterwards.
bool mismatch_checks(dist::Sorter& sorter) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string last = std::to_string(ranks - 1);
  std::vector<uint32_t> keys(100 + size_t(rank)), out;
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = uint32_t(i * 2654435761u);
  auto allocate = [&](uint64_t n) {
    out.resize(n);
    return static_cast<void*>(out.data());
  };
  std::string why;
  auto expect = [&](KeyType type, const dist::DistributedOptions& options, const std::string& want,
                    const char* what) {
    try {
      sorter.sort_raw(type, keys.data(), keys.size(), nullptr, 0, allocate, {}, options);
      why = std::string(what) + ": did not throw";
    } catch (const Error& e) {
      if (e.what() != want)
        why = std::string(what) + ": threw '" + e.what() + "', expected '" + want + "'";
    }
  };
  try {
    // The last rank sorts descending.
    dist::DistributedOptions options;
    options.sort.descending = rank == ranks - 1;
    expect(KeyType::u32, options,
           "distributed sort: rank " + last + "'s sort.descending=true differs from rank 0's false",
           "descending on the last rank");
    // Every other rank differs in two ways: rank 1's first difference is named.
    options = {};
    if (rank > 0) options.merge = dist::Merge::cpu, options.chunk_bytes = 4096;
    expect(rank > 0 ? KeyType::f32 : KeyType::u32, options,
           "distributed sort: rank 1's key_type=f32 differs from rank 0's u32",
           "key type and options on every rank but 0");
    // Afterwards, sorts alike.
    dist::Slice slice =
        sorter.sort_raw(KeyType::u32, keys.data(), keys.size(), nullptr, 0, allocate, {}, {});
    if (slice.count != out.size() || !std::is_sorted(out.begin(), out.end()))
      why = "the sort after the mismatches is wrong";
  } catch (const std::exception& e) {
    why = e.what();
  }
  int ok = why.empty();
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!why.empty()) std::printf("FAIL mismatch_checks, rank %d: %s\n", rank, why.c_str());
  if (rank == 0 && ok) std::printf("PASS mismatch_checks\n");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // [FILTER] [STRIDE OFFSET]: the cases whose name contains FILTER, every STRIDE-th from OFFSET.
  const std::string filter = argc > 1 ? argv[1] : "";
  const int stride = argc > 3 ? std::atoi(argv[2]) : 1, first = argc > 3 ? std::atoi(argv[3]) : 0;
  uint64_t seed = 0;
  if (rank == 0) {
    const char* pinned = std::getenv("GPUSORT_TEST_SEED");
    seed = pinned ? std::strtoull(pinned, nullptr, 10) : std::random_device{}();
  }
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  int failed = 0, ran = 0;
  try {
    ContextOptions context_options;
    context_options.device = dist::default_device(MPI_COMM_WORLD);
    Context ctx = Context::create(context_options);
    dist::Sorter sorter(ctx, MPI_COMM_WORLD);
    uint64_t case_seed = seed;
    int index = -1;
    for (const Case& c : all_cases()) {
      ++case_seed, ++index;
      if (!filter.empty() && c.describe().find(filter) == std::string::npos) continue;
      if (stride > 1 && index % stride != first) continue;
      ++ran;
      if (!run_case(ctx, sorter, c, case_seed)) ++failed;
    }
    if (filter.empty() || filter == "checks") {
      ++ran;
      if (!host_memory_checks()) ++failed;
      ++ran;
      if (!registration_checks(sorter)) ++failed;
      ++ran;
      if (!failure_checks(ctx, sorter, seed)) ++failed;
      ++ran;
      if (!device_path_decision_checks(ctx, sorter)) ++failed;
      ++ran;
      if (!mismatch_checks(sorter)) ++failed;
    }
    if (ctx.validation_messages()) {
      std::printf("FAIL rank %d: %llu validation messages\n", rank,
                  static_cast<unsigned long long>(ctx.validation_messages()));
      ++failed;
    }
  } catch (const std::exception& e) {
    std::printf("FAIL rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%d of %d cases failed\n", failed, ran);
  MPI_Finalize();
  return failed ? 1 : 0;
}
