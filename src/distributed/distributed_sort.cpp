// The distributed sort (include/gpusort/distributed.hpp, docs/distributed.md): local sort, split
// points, one all-to-all exchange, merge of the received runs.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <gpusort/distributed.hpp>
#include <new>
#include <optional>
#include <thread>
#include <tuple>

namespace gpusort::distributed {
namespace {

using clock = std::chrono::steady_clock;
double since(clock::time_point t) {
  return std::chrono::duration<double, std::milli>(clock::now() - t).count();
}

// Host bytes without zeroing them first (the arrays can be tens of gigabytes).
using Bytes = std::unique_ptr<uint8_t[]>;
Bytes allocate_bytes(uint64_t bytes) {
  return Bytes(new uint8_t[std::max<uint64_t>(bytes, 1)]);
}

// The sort's order of a key as one unsigned integer: the key's radix order (floats by IEEE-754
// totalOrder, signed integers offset), bits [begin_bit, end_bit) only, inverted when descending.
// gpusort's sorts order keys by exactly this, so a sorted array is non-decreasing in it.
class KeyOrder {
 public:
  KeyOrder(KeyType type, const SortOptions& options)
      : type_(type),
        size_(key_bytes(type)),
        begin_(options.begin_bit),
        descending_(options.descending) {
    const uint32_t width = size_ * 8;
    const uint32_t end = options.end_bit ? options.end_bit : width;
    if (options.begin_bit >= end || end > width)
      throw Error("distributed sort: bit range [" + std::to_string(options.begin_bit) + ", " +
                  std::to_string(options.end_bit) + ") is not within the " + std::to_string(width) +
                  "-bit key");
    const uint32_t bits = end - options.begin_bit;
    mask_ = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  }
  uint64_t max() const { return mask_; }
  uint64_t operator()(const void* key) const {
    uint64_t u;
    if (size_ == 4) {
      uint32_t v;
      std::memcpy(&v, key, 4);
      if (type_ == KeyType::i32)
        v ^= 0x80000000u;
      else if (type_ == KeyType::f32)
        v = (v & 0x80000000u) ? ~v : v | 0x80000000u;
      u = v;
    } else {
      std::memcpy(&u, key, 8);
      const uint64_t sign = uint64_t(1) << 63;
      if (type_ == KeyType::i64)
        u ^= sign;
      else if (type_ == KeyType::f64)
        u = (u & sign) ? ~u : u | sign;
    }
    u = (u >> begin_) & mask_;
    return descending_ ? ~u & mask_ : u;
  }

 private:
  KeyType type_;
  uint32_t size_, begin_;
  bool descending_;
  uint64_t mask_ = 0;
};

// A sorted host array seen through its order.
struct SortedKeys {
  const uint8_t* data;
  uint64_t n;
  uint32_t size;
  const KeyOrder& order;
  uint64_t at(uint64_t i) const { return order(data + i * size); }
  // First index whose order is >= v (lower) or > v (upper).
  uint64_t lower(uint64_t v) const {
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (at(mid) < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  uint64_t upper(uint64_t v) const {
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (at(mid) <= v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
};

void check_mpi(int status, const char* what) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw Error(std::string(what) + ": " + std::string(text, size_t(length)));
  }
}

// Rank r's first element of the global order in the balanced layout: r * N / P without overflow.
uint64_t balanced_start(uint64_t total, int rank, int ranks) {
  return uint64_t((unsigned __int128)total * uint64_t(rank) / uint64_t(ranks));
}

// Exact split points: for each rank d > 0, how many of this rank's sorted elements come before
// global position start(d). A binary search over the key order finds the key at that position
// (one MPI_Allreduce of P - 1 counts per bit); the elements equal to it are then split by rank.
std::vector<uint64_t> exact_splits(MPI_Comm comm, const SortedKeys& keys, uint64_t total,
                                   uint64_t& rounds) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const size_t targets = size_t(ranks - 1);
  std::vector<uint64_t> goal(targets), lo(targets, 0), hi(targets, keys.order.max());
  for (size_t i = 0; i < targets; ++i) goal[i] = balanced_start(total, int(i) + 1, ranks);
  if (total == 0) return std::vector<uint64_t>(targets, 0);
  std::vector<uint64_t> counts(targets), mid(targets);
  // lo[i]: the smallest order value v with (global count of order <= v) > goal[i].
  for (;;) {
    bool open = false;
    for (size_t i = 0; i < targets; ++i) {
      open |= lo[i] < hi[i];
      mid[i] = lo[i] + (hi[i] - lo[i]) / 2;
      counts[i] = lo[i] < hi[i] ? keys.upper(mid[i]) : 0;
    }
    if (!open) break;  // the same on every rank: lo and hi follow global counts
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, counts.data(), int(targets), MPI_UINT64_T, MPI_SUM, comm),
              "MPI_Allreduce");
    ++rounds;
    for (size_t i = 0; i < targets; ++i) {
      if (lo[i] >= hi[i]) continue;
      if (counts[i] > goal[i])
        hi[i] = mid[i];
      else
        lo[i] = mid[i] + 1;
    }
  }
  // Below: elements ordered before the key; equal: those equal to it, taken rank by rank.
  std::vector<uint64_t> below(targets), equal(targets), equal_before(targets, 0);
  for (size_t i = 0; i < targets; ++i) {
    below[i] = keys.lower(lo[i]);
    equal[i] = keys.upper(lo[i]) - below[i];
  }
  std::vector<uint64_t> below_total(below);
  check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, below_total.data(), int(targets), MPI_UINT64_T, MPI_SUM, comm),
      "MPI_Allreduce");
  check_mpi(
      MPI_Exscan(equal.data(), equal_before.data(), int(targets), MPI_UINT64_T, MPI_SUM, comm),
      "MPI_Exscan");
  rounds += 2;
  if (rank == 0) std::fill(equal_before.begin(), equal_before.end(), 0);  // undefined there
  std::vector<uint64_t> splits(targets);
  for (size_t i = 0; i < targets; ++i) {
    const uint64_t wanted = goal[i] - below_total[i];  // equal elements before position goal[i]
    const uint64_t take =
        wanted <= equal_before[i] ? 0 : std::min(equal[i], wanted - equal_before[i]);
    splits[i] = below[i] + take;
  }
  return splits;
}

// A sample of the global order: key order, then rank, then position in that rank's sorted array.
struct Sample {
  uint64_t order, rank, position;
  bool operator<(const Sample& o) const {
    return std::tie(order, rank, position) < std::tie(o.order, o.rank, o.position);
  }
};

// Natural split points: regular samples (evenly spaced in the global order of the ranks' inputs,
// so a rank with more elements gives more), gathered on every rank; splitters evenly spaced among
// them. Ties with a splitter are resolved by (rank, position), so equal keys are split too.
std::vector<uint64_t> sampled_splits(MPI_Comm comm, const SortedKeys& keys, uint64_t total,
                                     uint64_t first, uint32_t per_rank, uint64_t& rounds) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const uint64_t wanted = uint64_t(per_rank) * uint64_t(ranks);
  const uint64_t step = std::max<uint64_t>(1, total / std::max<uint64_t>(wanted, 1));
  std::vector<Sample> mine;
  for (uint64_t i = (step - first % step) % step; i < keys.n; i += step)
    mine.push_back({keys.at(i), uint64_t(rank), i});
  const int mine_words = int(mine.size() * 3);
  std::vector<int> words(static_cast<size_t>(ranks)), displs(size_t(ranks), 0);
  check_mpi(MPI_Allgather(&mine_words, 1, MPI_INT, words.data(), 1, MPI_INT, comm),
            "MPI_Allgather");
  for (int r = 1; r < ranks; ++r) displs[size_t(r)] = displs[size_t(r) - 1] + words[size_t(r) - 1];
  std::vector<Sample> all(size_t(displs.back() + words.back()) / 3);
  check_mpi(MPI_Allgatherv(mine.data(), mine_words, MPI_UINT64_T, all.data(), words.data(),
                           displs.data(), MPI_UINT64_T, comm),
            "MPI_Allgatherv");
  rounds += 2;
  std::sort(all.begin(), all.end());
  std::vector<uint64_t> splits(size_t(ranks - 1), 0);
  if (all.empty()) return splits;
  for (size_t i = 0; i + 1 < size_t(ranks); ++i) {
    const Sample& s = all[(i + 1) * all.size() / size_t(ranks)];
    const uint64_t below = keys.lower(s.order);
    if (uint64_t(rank) < s.rank)
      splits[i] = keys.upper(s.order);
    else if (uint64_t(rank) == s.rank)
      splits[i] = s.position;
    else
      splits[i] = below;
  }
  return splits;
}

// memcpy on up to 16 threads (64 MiB or more each).
void parallel_copy(uint8_t* to, const uint8_t* from, uint64_t bytes) {
  const uint64_t piece = uint64_t(64) << 20;
  const unsigned threads =
      unsigned(std::min<uint64_t>({16, std::max(1u, std::thread::hardware_concurrency()),
                                   std::max<uint64_t>(1, bytes / piece)}));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back([=] {
      const uint64_t begin = bytes * t / threads, end = bytes * (t + 1) / threads;
      std::memcpy(to + begin, from + begin, end - begin);
    });
  if (bytes) std::memcpy(to, from, bytes / threads);
  for (std::thread& th : pool) th.join();
}

class MpiExchange final : public Exchange {
 public:
  explicit MpiExchange(uint64_t max_message_bytes)
      : max_(max_message_bytes ? max_message_bytes : uint64_t(1) << 30) {}

  void exchange(MPI_Comm comm, const void* send, std::span<const uint64_t> send_counts,
                std::span<const uint64_t> send_offsets, void* recv,
                std::span<const uint64_t> recv_counts,
                std::span<const uint64_t> recv_offsets) override {
    const size_t ranks = send_counts.size();
    const uint64_t limit = std::min<uint64_t>(max_, INT_MAX);
    int fits = 1;
    for (size_t r = 0; r < ranks; ++r)
      if (send_counts[r] > limit || recv_counts[r] > limit || send_offsets[r] > INT_MAX ||
          recv_offsets[r] > INT_MAX)
        fits = 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
    // The rank's own part is copied here, on several threads (MPI would copy it on one).
    int self_rank = 0;
    MPI_Comm_rank(comm, &self_rank);
    const size_t self = size_t(self_rank);
    parallel_copy(static_cast<uint8_t*>(recv) + recv_offsets[self],
                  static_cast<const uint8_t*>(send) + send_offsets[self], send_counts[self]);
    if (fits) {
      std::vector<int> sc(ranks), sd(ranks), rc(ranks), rd(ranks);
      for (size_t r = 0; r < ranks; ++r) {
        if (r == self) continue;  // 0: copied above
        sc[r] = int(send_counts[r]), sd[r] = int(send_offsets[r]);
        rc[r] = int(recv_counts[r]), rd[r] = int(recv_offsets[r]);
      }
      check_mpi(MPI_Alltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(), rd.data(),
                              MPI_BYTE, comm),
                "MPI_Alltoallv");
      return;
    }
    // Rounds of point-to-point messages of at most `limit` bytes; messages between one pair of
    // ranks with one tag arrive in the order sent, so the pieces need no numbering.
    std::vector<MPI_Request> requests;
    for (size_t r = 0; r < ranks; ++r)
      for (uint64_t done = 0; r != self && done < recv_counts[r]; done += limit)
        requests.push_back(MPI_REQUEST_NULL),
            check_mpi(MPI_Irecv(static_cast<uint8_t*>(recv) + recv_offsets[r] + done,
                                int(std::min(limit, recv_counts[r] - done)), MPI_BYTE, int(r), 0,
                                comm, &requests.back()),
                      "MPI_Irecv");
    for (size_t r = 0; r < ranks; ++r)
      for (uint64_t done = 0; r != self && done < send_counts[r]; done += limit)
        requests.push_back(MPI_REQUEST_NULL),
            check_mpi(MPI_Isend(static_cast<const uint8_t*>(send) + send_offsets[r] + done,
                                int(std::min(limit, send_counts[r] - done)), MPI_BYTE, int(r), 0,
                                comm, &requests.back()),
                      "MPI_Isend");
    check_mpi(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall");
  }

 private:
  uint64_t max_;
};

// A duplicate of the caller's communicator, so that the sort's messages never match theirs.
struct OwnComm {
  MPI_Comm comm = MPI_COMM_NULL;
  explicit OwnComm(MPI_Comm from) { check_mpi(MPI_Comm_dup(from, &comm), "MPI_Comm_dup"); }
  ~OwnComm() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace

std::unique_ptr<Exchange> make_mpi_exchange(uint64_t max_message_bytes) {
  return std::make_unique<MpiExchange>(max_message_bytes);
}

void agree(MPI_Comm comm, const std::function<void()>& step) {
  std::string message;
  bool failed = false;
  try {
    step();
  } catch (const std::bad_alloc&) {
    failed = true, message = "out of host memory";
  } catch (const std::exception& e) {
    failed = true, message = e.what();
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  int first = failed ? rank : ranks;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == ranks) return;
  int length = int(message.size());
  check_mpi(MPI_Bcast(&length, 1, MPI_INT, first, comm), "MPI_Bcast");
  message.resize(size_t(length));
  check_mpi(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm), "MPI_Bcast");
  throw Error("rank " + std::to_string(first) + ": " + message);
}

int node_local_rank(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

std::string default_device(MPI_Comm comm) {
  return default_device_for(node_local_rank(comm));
}

std::string default_device_for(int local) {
  if (const char* env = std::getenv("GPUSORT_DEVICE"); env && *env) return env;
  auto preference = [](VkPhysicalDeviceType type) {
    switch (type) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return 0;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return 1;
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return 2;
      case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return 3;
      default:
        return 4;
    }
  };
  std::vector<DeviceInfo> usable;
  for (DeviceInfo& d : Context::list_devices())
    if (d.usable) usable.push_back(std::move(d));
  if (usable.empty()) return {};  // Context::create then says why
  int best = 4;
  for (const DeviceInfo& d : usable) best = std::min(best, preference(d.type));
  std::vector<uint32_t> candidates;
  for (const DeviceInfo& d : usable)
    if (preference(d.type) == best) candidates.push_back(d.index);
  return std::to_string(candidates[size_t(local) % candidates.size()]);
}

namespace {

// The partition-first sort (DistributedOptions::partition_first); comm is the sort's own.
Slice partition_first(Context& ctx, MPI_Comm comm, KeyType key_type, const void* keys, uint64_t n,
                      const void* values, uint32_t value_bytes, const Allocate& keys_out,
                      const Allocate& values_out, const DistributedOptions& options,
                      clock::time_point started) {
  DistributedTimings timings;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const size_t P = size_t(ranks);
  const uint32_t key_size = key_bytes(key_type);
  const auto* in_keys = static_cast<const uint8_t*>(keys);
  const auto* in_values = static_cast<const uint8_t*>(values);
  std::optional<KeyOrder> order;
  agree(comm, [&] {
    if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8)
      throw Error("distributed sort: values are 4 or 8 bytes wide, not " +
                  std::to_string(value_bytes));
    if (n && !keys) throw Error("distributed sort: no keys given for " + std::to_string(n));
    if (n && value_bytes && !values)
      throw Error("distributed sort: no values given for " + std::to_string(n) + " keys");
    if (!keys_out || (value_bytes && !values_out))
      throw Error("distributed sort: no output allocator given");
    order.emplace(key_type, options.sort);
  });

  // 1. Splitters: samples of the unsorted inputs, evenly spaced in the global input order, each
  // (key order, rank, input position); the global stable order is that triple's order.
  const auto splitting = clock::now();
  uint64_t total = n, first = 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Allreduce");
  check_mpi(MPI_Exscan(&n, &first, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Exscan");
  if (rank == 0) first = 0;
  const uint64_t per_rank = options.samples_per_rank ? options.samples_per_rank : 1024;
  const uint64_t step = std::max<uint64_t>(1, total / std::max<uint64_t>(per_rank * P, 1));
  std::vector<Sample> mine;
  for (uint64_t i = (step - first % step) % step; i < n; i += step)
    mine.push_back({(*order)(in_keys + i * key_size), uint64_t(rank), i});
  const int mine_words = int(mine.size() * 3);
  std::vector<int> words(P), displs(P, 0);
  check_mpi(MPI_Allgather(&mine_words, 1, MPI_INT, words.data(), 1, MPI_INT, comm),
            "MPI_Allgather");
  for (size_t r = 1; r < P; ++r) displs[r] = displs[r - 1] + words[r - 1];
  std::vector<Sample> samples(size_t(displs.back() + words.back()) / 3);
  check_mpi(MPI_Allgatherv(mine.data(), mine_words, MPI_UINT64_T, samples.data(), words.data(),
                           displs.data(), MPI_UINT64_T, comm),
            "MPI_Allgatherv");
  std::sort(samples.begin(), samples.end());
  std::vector<Sample> splitters;
  for (size_t i = 1; i < P && !samples.empty(); ++i)
    splitters.push_back(samples[i * samples.size() / P]);
  timings.split_rounds = 4;
  timings.split_ms = since(splitting);

  // 2. A stable partition by bucket (the number of splitters at or below the element), on several
  // threads, each a contiguous range of the input: bucket-major, thread-minor offsets.
  const auto partitioning = clock::now();
  const unsigned threads = unsigned(std::min<uint64_t>(
      {16, std::max(1u, std::thread::hardware_concurrency()), std::max<uint64_t>(1, n / 4096)}));
  auto bucket_of = [&](uint64_t i) {
    const Sample e{(*order)(in_keys + i * key_size), uint64_t(rank), i};
    return size_t(std::upper_bound(splitters.begin(), splitters.end(), e) - splitters.begin());
  };
  std::vector<uint64_t> counts(size_t(threads) * P, 0);
  auto for_threads = [&](const std::function<void(unsigned, uint64_t, uint64_t)>& f) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { f(t, n * t / threads, n * (t + 1) / threads); });
    for (std::thread& th : pool) th.join();
  };
  Bytes send_keys, send_values;
  std::vector<uint64_t> send_counts(P, 0), send_offsets(P, 0);
  agree(comm, [&] {
    send_keys = allocate_bytes(n * key_size);
    if (value_bytes) send_values = allocate_bytes(n * value_bytes);
    for_threads([&](unsigned t, uint64_t begin, uint64_t end) {
      for (uint64_t i = begin; i < end; ++i) ++counts[size_t(t) * P + bucket_of(i)];
    });
    std::vector<uint64_t> at(size_t(threads) * P);
    uint64_t running = 0;
    for (size_t d = 0; d < P; ++d) {
      send_offsets[d] = running;
      for (unsigned t = 0; t < threads; ++t) {
        at[size_t(t) * P + d] = running;
        running += counts[size_t(t) * P + d];
      }
      send_counts[d] = running - send_offsets[d];
    }
    for_threads([&](unsigned t, uint64_t begin, uint64_t end) {
      uint64_t* next = &at[size_t(t) * P];
      for (uint64_t i = begin; i < end; ++i) {
        const uint64_t to = next[bucket_of(i)]++;
        std::memcpy(send_keys.get() + to * key_size, in_keys + i * key_size, key_size);
        if (value_bytes)
          std::memcpy(send_values.get() + to * value_bytes, in_values + i * value_bytes,
                      value_bytes);
      }
    });
  });
  timings.local_sort_ms = since(partitioning);

  // 3. The exchange: rank d receives bucket d of every rank, in rank order.
  const auto exchanging = clock::now();
  std::vector<uint64_t> recv_counts(P), recv_offsets(P, 0);
  check_mpi(
      MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, comm),
      "MPI_Alltoall");
  for (size_t s = 1; s < P; ++s) recv_offsets[s] = recv_offsets[s - 1] + recv_counts[s - 1];
  const uint64_t m = recv_offsets.back() + recv_counts.back();
  uint64_t slice_first = 0;  // where this rank's bucket starts in the global order
  check_mpi(MPI_Exscan(&m, &slice_first, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Exscan");
  if (rank == 0) slice_first = 0;
  // Balanced: the final counts; natural: the buckets as they are (received into the output).
  const uint64_t final_first = options.balanced ? balanced_start(total, rank, ranks) : slice_first;
  const uint64_t final_count =
      options.balanced ? balanced_start(total, rank + 1, ranks) - final_first : m;
  void* out_keys = nullptr;
  void* out_values = nullptr;
  Bytes bucket_keys, bucket_values;
  agree(comm, [&] {
    out_keys = keys_out(final_count);
    if (value_bytes) out_values = values_out(final_count);
    if (final_count && (!out_keys || (value_bytes && !out_values)))
      throw Error("distributed sort: the output allocator gave no storage for " +
                  std::to_string(final_count) + " elements");
    if (options.balanced) {
      bucket_keys = allocate_bytes(m * key_size);
      if (value_bytes) bucket_values = allocate_bytes(m * value_bytes);
    }
  });
  uint8_t* sorted_keys = options.balanced ? bucket_keys.get() : static_cast<uint8_t*>(out_keys);
  uint8_t* sorted_values =
      options.balanced ? bucket_values.get() : static_cast<uint8_t*>(out_values);
  std::unique_ptr<Exchange> default_exchange;
  Exchange* ex = options.exchange;
  if (!ex) default_exchange = make_mpi_exchange(), ex = default_exchange.get();
  auto times = [](std::vector<uint64_t> v, uint32_t size) {
    for (uint64_t& c : v) c *= size;
    return v;
  };
  auto move = [&](const std::vector<uint64_t>& sc, const std::vector<uint64_t>& so,
                  const uint8_t* from, const std::vector<uint64_t>& rc,
                  const std::vector<uint64_t>& ro, uint8_t* to, uint32_t size) {
    ex->exchange(comm, from, times(sc, size), times(so, size), to, times(rc, size),
                 times(ro, size));
  };
  move(send_counts, send_offsets, send_keys.get(), recv_counts, recv_offsets, sorted_keys,
       key_size);
  if (value_bytes)
    move(send_counts, send_offsets, send_values.get(), recv_counts, recv_offsets, sorted_values,
         value_bytes);
  for (size_t r = 0; r < P; ++r)
    if (r != size_t(rank)) {
      timings.bytes_sent += send_counts[r] * (key_size + value_bytes);
      timings.bytes_received += recv_counts[r] * (key_size + value_bytes);
    }
  send_keys.reset();
  send_values.reset();
  timings.exchange_ms = since(exchanging);

  // 4. One stable sort of the received buckets (in rank order, each in input order): this
  // rank's slice of the global stable order.
  const auto sorting = clock::now();
  agree(comm, [&] {
    SortOptions local = options.sort;
    local.timings = &timings.final_sort;
    if (m > 1) sort_raw(ctx, key_type, sorted_keys, m, sorted_values, value_bytes, local);
  });
  timings.merge_ms = since(sorting);

  // 5. Balanced: contiguous pieces of the sorted buckets move to the ranks whose final range
  // holds them; received in rank order they are already in order.
  if (options.balanced) {
    const auto balancing = clock::now();
    std::vector<uint64_t> all_first(P), all_count(P);
    check_mpi(MPI_Allgather(&slice_first, 1, MPI_UINT64_T, all_first.data(), 1, MPI_UINT64_T, comm),
              "MPI_Allgather");
    check_mpi(MPI_Allgather(&m, 1, MPI_UINT64_T, all_count.data(), 1, MPI_UINT64_T, comm),
              "MPI_Allgather");
    std::vector<uint64_t> sc(P), so(P), rc(P), ro(P);
    for (size_t d = 0; d < P; ++d) {
      // What this rank holds of d's final range, and what d holds of this rank's.
      const uint64_t d_begin = balanced_start(total, int(d), ranks);
      const uint64_t d_end = balanced_start(total, int(d) + 1, ranks);
      const uint64_t lo = std::max(slice_first, d_begin), hi = std::min(slice_first + m, d_end);
      sc[d] = hi > lo ? hi - lo : 0;
      so[d] = hi > lo ? lo - slice_first : 0;
      const uint64_t their_lo = std::max(all_first[d], final_first);
      const uint64_t their_hi = std::min(all_first[d] + all_count[d], final_first + final_count);
      rc[d] = their_hi > their_lo ? their_hi - their_lo : 0;
      ro[d] = their_hi > their_lo ? their_lo - final_first : 0;
    }
    move(sc, so, sorted_keys, rc, ro, static_cast<uint8_t*>(out_keys), key_size);
    if (value_bytes)
      move(sc, so, sorted_values, rc, ro, static_cast<uint8_t*>(out_values), value_bytes);
    timings.exchange_ms += since(balancing);
  }

  Slice slice;
  slice.count = final_count;
  slice.global_offset = final_first;
  slice.global_count = total;
  timings.total_ms = since(started);
  if (options.timings) *options.timings = timings;
  return slice;
}

}  // namespace

Slice sort_raw(Context& ctx, MPI_Comm user_comm, KeyType key_type, const void* keys, uint64_t n,
               const void* values, uint32_t value_bytes, const Allocate& keys_out,
               const Allocate& values_out, const DistributedOptions& options) {
  const auto started = clock::now();
  DistributedTimings timings;
  OwnComm own(user_comm);
  MPI_Comm comm = own.comm;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const uint32_t key_size = key_bytes(key_type);

  // Every rank must sort the same way: differing arguments would deadlock or mix orders.
  {
    const SortOptions& o = options.sort;
    uint64_t mine[9] = {uint64_t(key_type),
                        value_bytes,
                        o.descending,
                        uint64_t(o.algorithm),
                        o.begin_bit,
                        o.end_bit,
                        options.balanced,
                        uint64_t(options.merge),
                        options.partition_first};
    uint64_t low[9], high[9];
    check_mpi(MPI_Allreduce(mine, low, 9, MPI_UINT64_T, MPI_MIN, comm), "MPI_Allreduce");
    check_mpi(MPI_Allreduce(mine, high, 9, MPI_UINT64_T, MPI_MAX, comm), "MPI_Allreduce");
    if (!std::equal(low, low + 9, high))
      throw Error(
          "distributed sort: the ranks were called with different key types, value widths or "
          "options");
  }

  if (options.partition_first)
    return partition_first(ctx, comm, key_type, keys, n, values, value_bytes, keys_out, values_out,
                           options, started);

  // 1. The local sort, on a copy (the input stays as it is).
  std::optional<KeyOrder> order;
  Bytes sorted_keys, sorted_values;
  agree(comm, [&] {
    if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8)
      throw Error("distributed sort: values are 4 or 8 bytes wide, not " +
                  std::to_string(value_bytes));
    if (n && !keys) throw Error("distributed sort: no keys given for " + std::to_string(n));
    if (n && value_bytes && !values)
      throw Error("distributed sort: no values given for " + std::to_string(n) + " keys");
    if (!keys_out || (value_bytes && !values_out))
      throw Error("distributed sort: no output allocator given");
    order.emplace(key_type, options.sort);
    const auto t = clock::now();
    sorted_keys = allocate_bytes(n * key_size);
    if (value_bytes) sorted_values = allocate_bytes(n * value_bytes);
    SortOptions local = options.sort;
    local.timings = &timings.local;
    // Streamed from the caller's arrays into the sorted copies through gpusort's staging memory
    // (on several threads): no separate host copy first.
    auto stream = [](const void* from, uint8_t* to) {
      return HostStream{[from](uint64_t offset, void* destination, uint64_t bytes) {
                          std::memcpy(destination, static_cast<const uint8_t*>(from) + offset,
                                      bytes);
                        },
                        [to](uint64_t offset, const void* source, uint64_t bytes) {
                          std::memcpy(to + offset, source, bytes);
                        }};
    };
    if (n)
      sort_streamed(ctx, key_type, n, stream(keys, sorted_keys.get()), value_bytes,
                    value_bytes ? stream(values, sorted_values.get()) : HostStream{}, local);
    timings.local_sort_ms = since(t);
  });

  // 2. Split points: counts[d] of the sorted elements go to rank d.
  const auto splitting = clock::now();
  uint64_t total = n, first = 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Allreduce");
  check_mpi(MPI_Exscan(&n, &first, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Exscan");
  if (rank == 0) first = 0;
  timings.split_rounds = 2;
  const SortedKeys view{sorted_keys.get(), n, key_size, *order};
  std::vector<uint64_t> splits;
  if (options.balanced)
    splits = exact_splits(comm, view, total, timings.split_rounds);
  else
    splits = sampled_splits(comm, view, total, first,
                            options.samples_per_rank ? options.samples_per_rank : 256,
                            timings.split_rounds);
  std::vector<uint64_t> send_counts(static_cast<size_t>(ranks)),
      send_offsets(static_cast<size_t>(ranks));
  for (int d = 0; d < ranks; ++d) {
    const uint64_t begin = d == 0 ? 0 : splits[size_t(d) - 1];
    const uint64_t end = d + 1 == ranks ? n : splits[size_t(d)];
    send_offsets[size_t(d)] = begin;
    send_counts[size_t(d)] = end - begin;
  }
  timings.split_ms = since(splitting);

  // 3. The exchange.
  const auto exchanging = clock::now();
  std::vector<uint64_t> recv_counts(static_cast<size_t>(ranks)), recv_offsets(size_t(ranks), 0);
  check_mpi(
      MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, comm),
      "MPI_Alltoall");
  for (int s = 1; s < ranks; ++s)
    recv_offsets[size_t(s)] = recv_offsets[size_t(s) - 1] + recv_counts[size_t(s) - 1];
  const uint64_t m = recv_offsets.back() + recv_counts.back();
  Merge merge = options.merge;
  void* out_keys = nullptr;
  void* out_values = nullptr;
  Bytes recv_keys, recv_values;
  agree(comm, [&] {
    if (merge == Merge::automatic)
      merge = m <= 1 || max_run_elements(ctx, key_type, value_bytes, m, options.sort) >= m
                  ? Merge::gpu
                  : Merge::cpu;
    out_keys = keys_out(m);
    if (value_bytes) out_values = values_out(m);
    if (m && (!out_keys || (value_bytes && !out_values)))
      throw Error("distributed sort: the output allocator gave no storage for " +
                  std::to_string(m) + " elements");
    if (merge == Merge::cpu) {
      recv_keys = allocate_bytes(m * key_size);
      if (value_bytes) recv_values = allocate_bytes(m * value_bytes);
    }
  });
  std::unique_ptr<Exchange> default_exchange;
  Exchange* ex = options.exchange;
  if (!ex) default_exchange = make_mpi_exchange(), ex = default_exchange.get();
  auto bytes_of = [](std::vector<uint64_t> counts, uint32_t size) {
    for (uint64_t& c : counts) c *= size;
    return counts;
  };
  auto move = [&](const uint8_t* from, void* to, uint32_t size) {
    ex->exchange(comm, from, bytes_of(send_counts, size), bytes_of(send_offsets, size), to,
                 bytes_of(recv_counts, size), bytes_of(recv_offsets, size));
  };
  move(sorted_keys.get(), merge == Merge::cpu ? recv_keys.get() : out_keys, key_size);
  if (value_bytes)
    move(sorted_values.get(), merge == Merge::cpu ? recv_values.get() : out_values, value_bytes);
  for (int r = 0; r < ranks; ++r)
    if (r != rank) {
      timings.bytes_sent += send_counts[size_t(r)] * (key_size + value_bytes);
      timings.bytes_received += recv_counts[size_t(r)] * (key_size + value_bytes);
    }
  sorted_keys.reset();
  sorted_values.reset();
  timings.exchange_ms = since(exchanging);

  // 4. The received runs, in rank order, merged stably.
  const auto merging = clock::now();
  agree(comm, [&] {
    if (m == 0) return;
    // One sorted run (one rank sent everything, or there is one rank) needs no merge.
    const bool one_run =
        std::count_if(recv_counts.begin(), recv_counts.end(), [](uint64_t c) { return c; }) <= 1;
    if (merge == Merge::gpu && one_run) return;  // received straight into the output
    if (merge == Merge::gpu) {                   // received straight into the output
      SortOptions final_sort = options.sort;
      final_sort.timings = &timings.final_sort;
      if (m > 1) sort_raw(ctx, key_type, out_keys, m, out_values, value_bytes, final_sort);
      return;
    }
    std::vector<SortedRun> runs;
    for (int s = 0; s < ranks; ++s)
      if (recv_counts[size_t(s)])
        runs.push_back(
            {recv_keys.get() + recv_offsets[size_t(s)] * key_size,
             value_bytes ? recv_values.get() + recv_offsets[size_t(s)] * value_bytes : nullptr,
             recv_counts[size_t(s)]});
    auto writer = [](void* base) {
      return HostWriter([base](uint64_t offset, const void* from, uint64_t bytes) {
        std::memcpy(static_cast<uint8_t*>(base) + offset, from, bytes);
      });
    };
    merge_sorted_runs(key_type, value_bytes, runs, writer(out_keys),
                      value_bytes ? writer(out_values) : HostWriter{}, options.sort);
  });
  timings.merge_ms = since(merging);

  Slice slice;
  slice.count = m;
  slice.global_count = total;
  check_mpi(MPI_Exscan(&m, &slice.global_offset, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Exscan");
  if (rank == 0) slice.global_offset = 0;
  timings.total_ms = since(started);
  if (options.timings) *options.timings = timings;
  return slice;
}

}  // namespace gpusort::distributed
