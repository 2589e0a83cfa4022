// The distributed sort (include/gpusort/distributed.hpp, docs/distributed.md): the local sort in
// runs on a thread of its own, the split points and the chunked exchange on the calling thread as
// the sorted runs reach the host, and the merge of the received runs (on the GPU, uploading what
// has arrived, or on the CPU).
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <gpusort/distributed.hpp>
#include <map>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "device_path.hpp"
#include "split.hpp"
#include "vulkan/host_import.hpp"

namespace gpusort::distributed {
namespace {

using detail::allocate_outputs;
using detail::balanced_start;
using detail::check_mpi;
using detail::exact_cuts;
using detail::KeyOrder;

using clock = std::chrono::steady_clock;
double since(clock::time_point t) {
  return std::chrono::duration<double, std::milli>(clock::now() - t).count();
}

// Host bytes without zeroing them first (the arrays can be tens of gigabytes).
using Bytes = std::unique_ptr<uint8_t[]>;
Bytes allocate_bytes(uint64_t bytes) {
  return Bytes(new uint8_t[std::max<uint64_t>(bytes, 1)]);
}

// A sample of the global order: key order, then rank, then position in that rank's sorted array.
struct Sample {
  uint64_t order, rank, position;
  bool operator<(const Sample& o) const {
    return std::tie(order, rank, position) < std::tie(o.order, o.rank, o.position);
  }
};

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

// Splitters of the partition-first sort: samples of the unsorted inputs, evenly spaced in the
// global input order, each (key order, rank, input position); the global stable order is that
// triple's order. Collective.
std::vector<Sample> sample_splitters(MPI_Comm comm, const KeyOrder& order, const uint8_t* in_keys,
                                     uint32_t key_size, uint64_t n, uint64_t total,
                                     uint64_t first, uint64_t per_rank) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const size_t P = size_t(ranks);
  const uint64_t step = std::max<uint64_t>(1, total / std::max<uint64_t>(per_rank * P, 1));
  std::vector<Sample> mine;
  for (uint64_t i = (step - first % step) % step; i < n; i += step)
    mine.push_back({order(in_keys + i * key_size), uint64_t(rank), i});
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
  return splitters;
}

// The input partitioned by bucket, bucket d's elements from offsets[d], counts[d] of them.
struct Buckets {
  Bytes keys, values;
  std::vector<uint64_t> counts, offsets;
};

// A stable partition by bucket (the number of splitters at or below the element), on several
// threads, each a contiguous range of the input: bucket-major, thread-minor offsets. Collective
// (agreed on).
Buckets partition_by_bucket(MPI_Comm comm, const KeyOrder& order,
                            const std::vector<Sample>& splitters, const uint8_t* in_keys,
                            const uint8_t* in_values, uint64_t n, uint32_t key_size,
                            uint32_t value_bytes) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const size_t P = size_t(ranks);
  const unsigned threads = unsigned(std::min<uint64_t>(
      {16, std::max(1u, std::thread::hardware_concurrency()), std::max<uint64_t>(1, n / 4096)}));
  auto bucket_of = [&](uint64_t i) {
    const Sample e{order(in_keys + i * key_size), uint64_t(rank), i};
    return size_t(std::upper_bound(splitters.begin(), splitters.end(), e) - splitters.begin());
  };
  std::vector<uint64_t> counts(size_t(threads) * P, 0);
  auto for_threads = [&](const std::function<void(unsigned, uint64_t, uint64_t)>& f) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { f(t, n * t / threads, n * (t + 1) / threads); });
    for (std::thread& th : pool) th.join();
  };
  Buckets b;
  b.counts.assign(P, 0), b.offsets.assign(P, 0);
  agree(comm, [&] {
    b.keys = allocate_bytes(n * key_size);
    if (value_bytes) b.values = allocate_bytes(n * value_bytes);
    for_threads([&](unsigned t, uint64_t begin, uint64_t end) {
      for (uint64_t i = begin; i < end; ++i) ++counts[size_t(t) * P + bucket_of(i)];
    });
    std::vector<uint64_t> at(size_t(threads) * P);
    uint64_t running = 0;
    for (size_t d = 0; d < P; ++d) {
      b.offsets[d] = running;
      for (unsigned t = 0; t < threads; ++t) {
        at[size_t(t) * P + d] = running;
        running += counts[size_t(t) * P + d];
      }
      b.counts[d] = running - b.offsets[d];
    }
    for_threads([&](unsigned t, uint64_t begin, uint64_t end) {
      uint64_t* next = &at[size_t(t) * P];
      for (uint64_t i = begin; i < end; ++i) {
        const uint64_t to = next[bucket_of(i)]++;
        std::memcpy(b.keys.get() + to * key_size, in_keys + i * key_size, key_size);
        if (value_bytes)
          std::memcpy(b.values.get() + to * value_bytes, in_values + i * value_bytes,
                      value_bytes);
      }
    });
  });
  return b;
}

// One exchange of elements of `size` bytes: counts and offsets in elements.
void exchange_elements(Exchange& ex, MPI_Comm comm, const std::vector<uint64_t>& sc,
                       const std::vector<uint64_t>& so, const uint8_t* from,
                       const std::vector<uint64_t>& rc, const std::vector<uint64_t>& ro,
                       uint8_t* to, uint32_t size) {
  auto times = [](std::vector<uint64_t> v, uint32_t size) {
    for (uint64_t& c : v) c *= size;
    return v;
  };
  ex.exchange(comm, from, times(sc, size), times(so, size), to, times(rc, size), times(ro, size));
}

// Balanced: contiguous pieces of the sorted buckets (this rank's m from slice_first of the global
// order) move to the ranks whose final range holds them (this rank's final_count from
// final_first); received in rank order they are already in order. Collective.
void move_to_final_ranges(Exchange& ex, MPI_Comm comm, uint64_t total, uint64_t slice_first,
                          uint64_t m, uint64_t final_first, uint64_t final_count,
                          const uint8_t* sorted_keys, const uint8_t* sorted_values,
                          void* out_keys, void* out_values, uint32_t key_size,
                          uint32_t value_bytes) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const size_t P = size_t(ranks);
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
  exchange_elements(ex, comm, sc, so, sorted_keys, rc, ro, static_cast<uint8_t*>(out_keys),
                    key_size);
  if (value_bytes)
    exchange_elements(ex, comm, sc, so, sorted_values, rc, ro, static_cast<uint8_t*>(out_values),
                      value_bytes);
}

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

  // 1. Splitters (sample_splitters).
  const auto splitting = clock::now();
  uint64_t total = n, first = 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Allreduce");
  check_mpi(MPI_Exscan(&n, &first, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Exscan");
  if (rank == 0) first = 0;
  const uint64_t per_rank = options.samples_per_rank ? options.samples_per_rank : 1024;
  const std::vector<Sample> splitters =
      sample_splitters(comm, *order, in_keys, key_size, n, total, first, per_rank);
  timings.split_rounds = 4;
  timings.split_ms = since(splitting);

  // 2. The stable partition by bucket.
  const auto partitioning = clock::now();
  Buckets send =
      partition_by_bucket(comm, *order, splitters, in_keys, in_values, n, key_size, value_bytes);
  const std::vector<uint64_t>& send_counts = send.counts;
  const std::vector<uint64_t>& send_offsets = send.offsets;
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
    allocate_outputs(keys_out, values_out, final_count, value_bytes, out_keys, out_values);
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
  exchange_elements(*ex, comm, send_counts, send_offsets, send.keys.get(), recv_counts,
                    recv_offsets, sorted_keys, key_size);
  if (value_bytes)
    exchange_elements(*ex, comm, send_counts, send_offsets, send.values.get(), recv_counts,
                      recv_offsets, sorted_values, value_bytes);
  for (size_t r = 0; r < P; ++r)
    if (r != size_t(rank)) {
      timings.bytes_sent += send_counts[r] * (key_size + value_bytes);
      timings.bytes_received += recv_counts[r] * (key_size + value_bytes);
    }
  send.keys.reset();
  send.values.reset();
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

  // 5. Balanced: the sorted buckets to the final ranges.
  if (options.balanced) {
    const auto balancing = clock::now();
    move_to_final_ranges(*ex, comm, total, slice_first, m, final_first, final_count, sorted_keys,
                         sorted_values, out_keys, out_values, key_size, value_bytes);
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

// ---- Host memory ----

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return unsigned(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

void prefault(void* data, uint64_t bytes, unsigned threads) {
  if (!data || !bytes) return;
  if (!threads) threads = std::min(32u, usable_cores());
  // 64 MiB or more per thread.
  threads = unsigned(std::min<uint64_t>(threads, std::max<uint64_t>(1, bytes >> 26)));
  auto* p = static_cast<uint8_t*>(data);
  auto touch = [p, bytes, threads](unsigned t) {
    const uint64_t page = 4096, begin = bytes * t / threads, end = bytes * (t + 1) / threads;
    for (uint64_t i = begin; i < end; i = (i / page + 1) * page) p[i] = 0;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(touch, t);
  touch(0);
  for (std::thread& th : pool) th.join();
}

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : map_(o.map_), mapped_(o.mapped_), data_(o.data_), capacity_(o.capacity_) {
  o.map_ = nullptr, o.mapped_ = 0, o.data_ = nullptr, o.capacity_ = 0;
}
HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    map_ = o.map_, mapped_ = o.mapped_, data_ = o.data_, capacity_ = o.capacity_;
    o.map_ = nullptr, o.mapped_ = 0, o.data_ = nullptr, o.capacity_ = 0;
  }
  return *this;
}
HostBuffer::~HostBuffer() {
  release();
}
void HostBuffer::release() {
  if (map_) ::munmap(map_, mapped_);
  map_ = nullptr, mapped_ = 0, data_ = nullptr, capacity_ = 0;
}
void HostBuffer::reserve(uint64_t bytes) {
  if (bytes <= capacity_) return;
  release();
  const uint64_t huge = uint64_t(2) << 20;  // aligned to huge pages, so that whole ones are used
  const uint64_t size = (bytes + huge - 1) / huge * huge;
  void* map =
      ::mmap(nullptr, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::bad_alloc();
  auto* aligned =
      reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(map) + huge - 1) / huge * huge);
  ::madvise(aligned, size, MADV_HUGEPAGE);  // a hint: without THP, 4 KiB pages
  map_ = map, mapped_ = size + huge, data_ = aligned, capacity_ = size;
  prefault(data_, size);
}

// ---- The sort ----

struct Sorter::State {
  Context& ctx;
  OwnComm own;
  HostBuffer sorted_keys, sorted_values, recv_keys, recv_values;
  detail::DevicePathState device;  // the device-resident path's GPU buffers
  HostImports imports;              // host memory registered with the GPU
  State(Context& c, MPI_Comm comm) : ctx(c), own(comm), imports(c.impl()) {}
};

Sorter::Sorter(Context& ctx, MPI_Comm comm) : state_(std::make_unique<State>(ctx, comm)) {}
Sorter::~Sorter() = default;

void Sorter::release_device_memory() {
  detail::release_device_path(state_->own.comm, state_->device);
}

void Sorter::register_host_memory(const void* data, uint64_t bytes) {
  state_->imports.add(data, bytes);
}

bool Sorter::unregister_host_memory(const void* data) { return state_->imports.remove(data); }

void Sorter::reserve(KeyType key_type, uint32_t value_bytes, uint64_t local, uint64_t received) {
  const uint32_t ks = key_bytes(key_type);
  state_->sorted_keys.reserve(local * ks);
  state_->sorted_values.reserve(local * value_bytes);
  state_->recv_keys.reserve(received * ks);
  state_->recv_values.reserve(received * value_bytes);
}

namespace {

// The contiguous prefix of a stream of pieces that arrive in any order (disjoint ranges).
struct Prefix {
  uint64_t done = 0;
  std::map<uint64_t, uint64_t> pending;
  void add(uint64_t begin, uint64_t end) {
    if (begin != done) {
      pending[begin] = end;
      return;
    }
    done = end;
    for (auto it = pending.begin(); it != pending.end() && it->first == done;
         it = pending.erase(it))
      done = it->second;
  }
};

// What the threads of one sort share: the local runs' download progress (written by the local
// sort's writers), the received pieces' arrival (by the MPI thread), waited for by the split, the
// sends and the GPU merge's readers. Everything below `mutex` is read and written under it.
struct Shared {
  std::mutex mutex;
  std::condition_variable changed;
  std::atomic<bool> stop{false};  // an abort: readers and writers throw, waiters give up
  // Local runs: bytes of keys / values downloaded (a prefix), and finished (sorted and downloaded,
  // or failed: then the rest goes out as it is and the ranks throw at the end).
  std::vector<Prefix> run_keys, run_values;
  std::vector<char> run_finished;
  // Received pieces: elements of keys / values arrived, a prefix.
  std::vector<uint64_t> piece_keys, piece_values;
  void notify() { changed.notify_all(); }
};

struct Stopped : std::exception {
  const char* what() const noexcept override { return "distributed sort: stopped"; }
};

// The rank's sorted runs in host memory, seen through the key order; reads wait for the download.
struct Runs {
  Shared& shared;
  const uint8_t* keys;
  uint32_t size;
  const KeyOrder& order;
  uint64_t length;  // elements per run (the last may hold fewer)
  std::vector<uint64_t> first, count;
  size_t runs() const { return count.size(); }
  // Elements of run q on the host (under shared.mutex).
  uint64_t there(size_t q) const {
    return shared.run_finished[q] ? count[q] : shared.run_keys[q].done / size;
  }
  uint64_t at(size_t q, uint64_t i) const { return order(keys + (first[q] + i) * size); }
  // How many of run q's leading elements can be searched for v: all once finished, else the
  // prefix on the host once it holds an element ordered after v.
  uint64_t known_for(size_t q, uint64_t v) const {
    std::unique_lock lock(shared.mutex);
    shared.changed.wait(lock, [&] {
      const uint64_t k = there(q);
      return shared.run_finished[q] || (k > 0 && at(q, k - 1) > v);
    });
    return there(q);
  }
  // Run q's element i, once there.
  uint64_t wait_at(size_t q, uint64_t i) const {
    std::unique_lock lock(shared.mutex);
    shared.changed.wait(lock, [&] { return there(q) > i; });
    return at(q, i);
  }
  uint64_t search(size_t q, uint64_t v, bool upper) const {
    uint64_t lo = 0, hi = known_for(q, v);
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (upper ? at(q, mid) <= v : at(q, mid) < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  uint64_t lower(size_t q, uint64_t v) const { return search(q, v, false); }
  uint64_t upper(size_t q, uint64_t v) const { return search(q, v, true); }
};

// Natural split points over the runs: regular samples (evenly spaced in the global input order),
// tagged (order, rank, local index: run then position), gathered on every rank; splitters evenly
// spaced among them.
std::vector<std::vector<uint64_t>> sampled_cuts(MPI_Comm comm, const Runs& runs, uint64_t n,
                                                uint64_t total, uint64_t first, uint32_t per_rank,
                                                uint64_t& rounds) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const size_t R = runs.runs();
  const uint64_t wanted = uint64_t(per_rank) * uint64_t(ranks);
  const uint64_t step = std::max<uint64_t>(1, total / std::max<uint64_t>(wanted, 1));
  std::vector<Sample> mine;
  for (uint64_t i = (step - first % step) % step; i < n; i += step)
    mine.push_back({runs.wait_at(i / runs.length, i % runs.length), uint64_t(rank), i});
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
  std::vector<std::vector<uint64_t>> cuts(R, std::vector<uint64_t>(size_t(ranks - 1), 0));
  if (all.empty()) return cuts;
  for (size_t i = 0; i + 1 < size_t(ranks); ++i) {
    const Sample& s = all[(i + 1) * all.size() / size_t(ranks)];
    const size_t sq = size_t(s.position / runs.length);
    for (size_t q = 0; q < R; ++q) {
      const bool before = uint64_t(rank) < s.rank || (uint64_t(rank) == s.rank && q < sq);
      const bool same = uint64_t(rank) == s.rank && q == sq;
      cuts[q][i] = same     ? s.position % runs.length
                   : before ? runs.upper(q, s.order)
                            : runs.lower(q, s.order);
    }
  }
  return cuts;
}

// One argument or option that every rank must pass alike: its name as the API spells it, its
// value, and how a message shows that value.
struct Agreed {
  const char* name;
  uint64_t value;
  std::string (*show)(uint64_t);
};

std::string show_number(uint64_t v) {
  return std::to_string(v);
}
std::string show_bool(uint64_t v) {
  return v ? "true" : "false";
}
std::string show_key_type(uint64_t v) {
  return to_string(KeyType(v));
}
std::string show_algorithm(uint64_t v) {
  return to_string(Algorithm(v));
}
std::string show_merge(uint64_t v) {
  static const char* const names[] = {"automatic", "gpu", "cpu"};
  return v < std::size(names) ? names[v] : std::to_string(v);
}
std::string show_device_exchange(uint64_t v) {
  static const char* const names[] = {"automatic", "host", "device", "shared_device"};
  return v < std::size(names) ? names[v] : std::to_string(v);
}
std::string show_exchange(uint64_t custom) {
  return custom ? "a caller's Exchange" : "the built-in one";
}

// Throws gpusort::Error on every rank when any rank passed one of `mine` differently from rank
// 0: differing arguments would deadlock or mix orders. The message names the first such rank,
// its first differing argument and both values. Collective.
void check_same_on_every_rank(MPI_Comm comm, const std::vector<Agreed>& mine) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const size_t fields = mine.size();
  std::vector<uint64_t> values(fields), all(fields * size_t(ranks));
  for (size_t f = 0; f < fields; ++f) values[f] = mine[f].value;
  check_mpi(MPI_Allgather(values.data(), int(fields), MPI_UINT64_T, all.data(), int(fields),
                          MPI_UINT64_T, comm),
            "MPI_Allgather");
  for (size_t r = 1; r < size_t(ranks); ++r)
    for (size_t f = 0; f < fields; ++f)
      if (const uint64_t theirs = all[r * fields + f]; theirs != all[f])
        throw Error("distributed sort: rank " + std::to_string(r) + "'s " + mine[f].name + "=" +
                    mine[f].show(theirs) + " differs from rank 0's " + mine[f].show(all[f]));
}

// Joins the sort's threads on every way out; on an exception, stops them first.
struct Threads {
  Shared& shared;
  std::vector<std::thread> running;
  ~Threads() {
    if (std::any_of(running.begin(), running.end(), [](std::thread& t) { return t.joinable(); })) {
      shared.stop = true;
      shared.notify();
    }
    for (std::thread& t : running)
      if (t.joinable()) t.join();
  }
};

// Adds one streamed sort's phase timings into a sum over several sorts.
void add_timings(SortTimings& into, const SortTimings& part) {
  into.upload_ms += part.upload_ms;
  into.read_ms += part.read_ms;
  into.sort_gpu_ms += part.sort_gpu_ms;
  into.download_ms += part.download_ms;
  into.write_ms += part.write_ms;
  into.bytes += part.bytes;
}

int rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int ranks_in(MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  return ranks;
}

// One call's arguments, as Sorter::sort_raw got them.
struct Call {
  KeyType key_type;
  const void* keys;
  uint64_t n;
  const void* values;
  uint32_t value_bytes;
  const Allocate& keys_out;
  const Allocate& values_out;
  const DistributedOptions& options;
  uint64_t chunk_bytes;  // options.chunk_bytes or its default
};

// Throws gpusort::Error on every rank when any rank's arguments or options differ from rank 0's.
void check_call_agrees(MPI_Comm comm, const Call& c) {
  const DistributedOptions& options = c.options;
  const SortOptions& o = options.sort;
  check_same_on_every_rank(
      comm, {{"key_type", uint64_t(c.key_type), show_key_type},
             {"value_bytes", c.value_bytes, show_number},
             {"sort.descending", o.descending, show_bool},
             {"sort.algorithm", uint64_t(o.algorithm), show_algorithm},
             {"sort.begin_bit", o.begin_bit, show_number},
             {"sort.end_bit", o.end_bit, show_number},
             {"balanced", options.balanced, show_bool},
             {"merge", uint64_t(options.merge), show_merge},
             {"partition_first", options.partition_first, show_bool},
             {"chunk_bytes", c.chunk_bytes, show_number},
             {"exchange", options.exchange != nullptr, show_exchange},
             {"device_exchange", uint64_t(options.device_exchange), show_device_exchange}});
}

// Throws gpusort::Error where the arguments cannot be sorted (on this rank; agree() makes it
// every rank's).
void check_arguments(const Call& c) {
  if (c.value_bytes != 0 && c.value_bytes != 4 && c.value_bytes != 8)
    throw Error("distributed sort: values are 4 or 8 bytes wide, not " +
                std::to_string(c.value_bytes));
  if (c.n && !c.keys) throw Error("distributed sort: no keys given for " + std::to_string(c.n));
  if (c.n && c.value_bytes && !c.values)
    throw Error("distributed sort: no values given for " + std::to_string(c.n) + " keys");
  if (!c.keys_out || (c.value_bytes && !c.values_out))
    throw Error("distributed sort: no output allocator given");
  if (c.chunk_bytes > (uint64_t(512) << 20))
    throw Error("distributed sort: chunk_bytes " + std::to_string(c.chunk_bytes) +
                " exceeds 512 MiB");
}

// The sizes every rank knows before the local sort: elements in all, the most local runs of any
// rank (every rank holds that many, some empty), the rank's first element in the global input.
struct Extent {
  size_t local_runs = 0;  // this rank's
  uint64_t total = 0;
  size_t R = 1;
  uint64_t first = 0;
};

Extent measure_extent(MPI_Comm comm, uint64_t n, uint64_t run_length) {
  Extent e;
  e.local_runs = n ? size_t((n + run_length - 1) / run_length) : 0;
  uint64_t sums[2] = {n, e.local_runs};  // total elements; the most runs of any rank
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &sums[0], 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &sums[1], 1, MPI_UINT64_T, MPI_MAX, comm), "MPI_Allreduce");
  e.total = sums[0];
  e.R = std::max<size_t>(1, size_t(sums[1]));
  check_mpi(MPI_Exscan(&n, &e.first, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Exscan");
  if (rank_in(comm) == 0) e.first = 0;
  return e;
}

// One rank, one run: sorted straight into the output, nothing else to do.
Slice sort_alone(Context& ctx, MPI_Comm comm, const Call& c, DistributedTimings& timings) {
  agree(comm, [&] {
    const auto t = clock::now();
    void* out_k = nullptr;
    void* out_v = nullptr;
    allocate_outputs(c.keys_out, c.values_out, c.n, c.value_bytes, out_k, out_v);
    SortOptions local = c.options.sort;
    local.timings = &timings.local;
    auto stream = [](const void* from, void* to) {
      return HostStream{[from](uint64_t offset, void* destination, uint64_t bytes) {
                          std::memcpy(destination, static_cast<const uint8_t*>(from) + offset,
                                      bytes);
                        },
                        [to](uint64_t offset, const void* source, uint64_t bytes) {
                          std::memcpy(static_cast<uint8_t*>(to) + offset, source, bytes);
                        }};
    };
    if (c.n)
      sort_streamed(ctx, c.key_type, c.n, stream(c.keys, out_k), c.value_bytes,
                    c.value_bytes ? stream(c.values, out_v) : HostStream{}, local);
    timings.local_sort_ms = since(t);
  });
  return Slice{c.n, 0, c.n};
}

// The host memory a sort works in (Sorter::State's, kept between sorts).
struct HostBuffers {
  HostBuffer& sorted_keys;
  HostBuffer& sorted_values;
  HostBuffer& recv_keys;
  HostBuffer& recv_values;
};

// The built-in exchange's bookkeeping (HostPathSort::exchange_by_mpi): the receives posted, the
// sends still to post, what has arrived beyond each piece's prefix.
struct Traffic {
  struct Receive {
    size_t piece;
    uint64_t end;  // elements of the piece arrived once this one is
    bool is_values;
  };
  struct Send {
    size_t q;
    uint64_t begin, end;  // elements of run q
  };
  uint64_t chunk = 1;                // elements per message
  std::vector<MPI_Request> requests;
  std::vector<Receive> receives;     // receives[i] belongs to requests[i]
  size_t receive_requests = 0;       // the first requests, the receives
  std::vector<std::vector<Send>> sends;  // per destination, in (run, position) order
  std::vector<size_t> next_keys, next_values;  // per destination, the next send of each stream
  // Per piece, the ends of the chunks done beyond its arrived prefix.
  std::vector<std::set<uint64_t>> done_keys, done_values;
  std::vector<int> indices;
  size_t pending = 0;  // requests in flight
};

// The host path's sort once the arguments are checked and the run length known: the local sort
// run by run on a thread of its own (1), the split points while the runs download (2), the
// exchange of the pieces as their runs reach the host (3), and the merge (4), on the GPU on a
// thread of its own from the end of the local sort, or on the CPU at the end. The members carry
// the state from phase to phase; the threads (declared last) are stopped and joined before any
// of it goes.
class HostPathSort {
 public:
  HostPathSort(Context& ctx, MPI_Comm comm, const Call& c, const HostBuffers& buffers,
               const KeyOrder& order, const Extent& extent, DistributedTimings& timings)
      : ctx(ctx), comm(comm), key_type(c.key_type), keys(c.keys), n(c.n), values(c.values),
        value_bytes(c.value_bytes), keys_out(c.keys_out), values_out(c.values_out),
        options(c.options), chunk_bytes(c.chunk_bytes), sorted_keys(buffers.sorted_keys),
        sorted_values(buffers.sorted_values), recv_keys(buffers.recv_keys),
        recv_values(buffers.recv_values), order(order), timings(timings),
        total(extent.total), first(extent.first), local_runs(extent.local_runs), R(extent.R),
        P(size_t(ranks_in(comm))), self(size_t(rank_in(comm))), ks(key_bytes(c.key_type)),
        vs(c.value_bytes), runs{shared, nullptr, ks, order, 1, {}, {}},
        local_done(extent.local_runs == 0) {}

  Slice run(uint64_t run_length) {
    start_local_sort(run_length);
    split();
    lay_out_slice();
    const auto exchanging = clock::now();
    if (options.exchange)
      exchange_by_caller();
    else
      exchange_by_mpi();
    timings.exchange_ms = since(exchanging);
    merge_all();
    return slice();
  }

 private:
  // 1. The local sort, run by run, into the sorter's buffers, on a thread of its own: this
  // thread meanwhile finds the split points and sends what is on the host.
  void start_local_sort(uint64_t run_length) {
    agree(comm, [&] {
      const auto t = clock::now();
      sorted_keys.reserve(n * ks);
      sorted_values.reserve(n * vs);
      timings.prefault_ms += since(t);
    });
    shared.run_keys.resize(local_runs);
    shared.run_values.resize(local_runs);
    shared.run_finished.assign(local_runs, 0);
    runs.keys = sorted_keys.data();
    runs.length = run_length;
    for (size_t q = 0; q < local_runs; ++q) {
      runs.first.push_back(q * run_length);
      runs.count.push_back(std::min(run_length, n - q * run_length));
    }
    // Ranks with fewer runs than R hold empty ones (every rank exchanges R pieces per pair).
    while (runs.count.size() < R) {
      runs.first.push_back(n), runs.count.push_back(0);
      shared.run_keys.emplace_back(), shared.run_values.emplace_back();
      shared.run_finished.push_back(1);
    }
    threads.running.emplace_back([this] { local_sort(); });
  }

  // The local sort's thread: each run sorted from the input into the sorter's buffers, its
  // download's progress published in `shared`.
  void local_sort() {
    const auto t = clock::now();
    try {
      for (size_t q = 0; q < local_runs; ++q) {
        const uint64_t at = runs.first[q];
        auto stream = [&, q, at](const uint8_t* from, uint8_t* to, uint32_t size,
                                 std::vector<Prefix>& prefix) {
          return HostStream{
              [&, from, at, size](uint64_t offset, void* destination, uint64_t bytes) {
                if (shared.stop) throw Stopped();
                std::memcpy(destination, from + at * size + offset, bytes);
              },
              [&, to, at, size, q](uint64_t offset, const void* source, uint64_t bytes) {
                if (shared.stop) throw Stopped();
                std::memcpy(to + at * size + offset, source, bytes);
                std::lock_guard lock(shared.mutex);
                prefix[q].add(offset, offset + bytes);
                shared.notify();
              }};
        };
        SortTimings run_timings;
        SortOptions local = options.sort;
        local.timings = &run_timings;
        sort_streamed(
            ctx, key_type, runs.count[q],
            stream(static_cast<const uint8_t*>(keys), sorted_keys.data(), ks, shared.run_keys),
            value_bytes,
            value_bytes ? stream(static_cast<const uint8_t*>(values), sorted_values.data(), vs,
                                 shared.run_values)
                        : HostStream{},
            local);
        add_timings(timings.local, run_timings);
        std::lock_guard lock(shared.mutex);
        shared.run_finished[q] = 1;
        shared.notify();
      }
    } catch (...) {
      // The rest goes out as it is (no rank is left waiting); every rank throws at the end.
      local_failure = std::current_exception();
      std::lock_guard lock(shared.mutex);
      std::fill(shared.run_finished.begin(), shared.run_finished.end(), 1);
      shared.notify();
    }
    timings.local.runs = local_runs;
    timings.local_sort_ms = since(t);
    local_done = true;
    std::lock_guard lock(shared.mutex);
    shared.notify();
  }

  // 2. Split points, while the runs download: cuts[q][d] of run q's elements go to ranks < d+1.
  void split() {
    const auto splitting = clock::now();
    cuts = options.balanced
               ? exact_cuts(comm, runs, total, timings.split_rounds)
               : sampled_cuts(comm, runs, n, total, first,
                              options.samples_per_rank ? options.samples_per_rank : 256,
                              timings.split_rounds);
    send_counts.resize(P * R), recv_counts.resize(P * R);
    for (size_t d = 0; d < P; ++d)
      for (size_t q = 0; q < R; ++q) send_counts[d * R + q] = cut(q, d + 1) - cut(q, d);
    check_mpi(MPI_Alltoall(send_counts.data(), int(R), MPI_UINT64_T, recv_counts.data(), int(R),
                           MPI_UINT64_T, comm),
              "MPI_Alltoall");
    timings.split_ms = since(splitting);
  }

  // Piece (d, q): run q's elements [cut(q, d), cut(q, d + 1)) go to rank d.
  uint64_t cut(size_t q, size_t d) const {
    return d == 0 ? 0 : d == P ? runs.count[q] : cuts[q][d - 1];
  }

  // The slice: the received pieces in (source rank, run) order; `slot` places them in it, `packed`
  // in the receive buffer (the rank's own pieces are not received: they stay where they are).
  // The merge's way, the outputs, and where the pieces are received.
  void lay_out_slice() {
    m = std::accumulate(recv_counts.begin(), recv_counts.end(), uint64_t(0));
    std::vector<uint64_t> slot(P * R), packed(P * R);
    for (size_t p = 0, at = 0, at_packed = 0; p < P * R; ++p) {
      slot[p] = at, packed[p] = at_packed;
      at += recv_counts[p];
      if (p / R == self)
        own += recv_counts[p];
      else
        at_packed += recv_counts[p];
      nonempty += recv_counts[p] != 0;
    }
    merge = options.merge;
    agree(comm, [&] {
      if (nonempty <= 1) {
        merge = Merge::gpu;  // nothing to merge: a remote piece lands in the output, ours is copied
      } else {
        if (merge == Merge::automatic) merge = Merge::gpu;
        if (merge == Merge::gpu) {
          const uint64_t run = max_run_elements(ctx, key_type, value_bytes, m, options.sort);
          parts = (m + run - 1) / run;
        }
      }
      allocate_outputs(keys_out, values_out, m, value_bytes, out_keys, out_values);
      if (merge == Merge::cpu || parts > 1) {
        const auto t = clock::now();
        recv_keys.reserve((m - own) * ks);
        recv_values.reserve((m - own) * vs);
        timings.prefault_ms += since(t);
      }
    });
    // The other ranks' pieces are received into the output where they lie in the slice, unless
    // the merge reads them while writing the output (on the CPU, or on the GPU in parts): then
    // into the receive buffer, packed.
    const bool receive_buffer = merge == Merge::cpu || parts > 1;
    recv_k = receive_buffer ? recv_keys.data() : static_cast<uint8_t*>(out_keys);
    recv_v = receive_buffer ? recv_values.data() : static_cast<uint8_t*>(out_values);
    place = receive_buffer ? packed : slot;
    for (size_t p = 0; p < P * R; ++p)
      if (p / R != self) {
        timings.bytes_received += recv_counts[p] * (ks + vs);
        timings.bytes_sent += send_counts[p] * (ks + vs);
      }
    shared.piece_keys.assign(P * R, 0);
    shared.piece_values.assign(P * R, 0);
    for (size_t q = 0; q < R; ++q)  // our own pieces are there once the local sort is
      shared.piece_keys[self * R + q] = shared.piece_values[self * R + q] =
          recv_counts[self * R + q];
    merge_on_gpu = merge == Merge::gpu && nonempty > 1;
  }

  // Piece p's keys (or values): where they are.
  const uint8_t* piece_data(size_t p, bool is_values) const {
    const uint32_t size = is_values ? vs : ks;
    if (p / R == self)
      return (is_values ? sorted_values.data() : sorted_keys.data()) +
             (runs.first[p % R] + cut(p % R, self)) * size;
    return (is_values ? recv_v : recv_k) + place[p] * size;
  }

  // How many of piece p's elements have arrived (under the mutex).
  uint64_t arrived(size_t p, bool is_values) const {
    return p / R == self ? recv_counts[p]
                         : (is_values ? shared.piece_values[p] : shared.piece_keys[p]);
  }

  // Piece p's elements ordered before v (upper: or equal to it). A search for v waits only for a
  // piece's prefix up to an element ordered after v (the pieces arrive in order).
  uint64_t bound(size_t p, uint64_t v, bool upper) {
    const uint8_t* keys_of = piece_data(p, false);
    uint64_t hi;
    {
      std::unique_lock lock(shared.mutex);
      shared.changed.wait(lock, [&] {
        const uint64_t k = arrived(p, false);
        return shared.stop || k == recv_counts[p] ||
               (k > 0 && order(keys_of + (k - 1) * ks) > v);
      });
      if (shared.stop) throw Stopped();
      hi = arrived(p, false);
    }
    uint64_t lo = 0;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      const uint64_t o = order(keys_of + mid * ks);
      if (upper ? o <= v : o < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  // Local exact selection: taken[p] of each piece come before position g of the stable merge of
  // the pieces (order, then piece).
  std::vector<uint64_t> select(uint64_t g) {
    std::vector<uint64_t> taken(P * R);
    if (g >= m) return recv_counts;
    uint64_t lo = 0, hi = order.max();
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      uint64_t count = 0;
      for (size_t p = 0; p < P * R; ++p)
        if (recv_counts[p]) count += bound(p, mid, true);
      if (count > g)
        hi = mid;
      else
        lo = mid + 1;
    }
    uint64_t take = g;
    for (size_t p = 0; p < P * R; ++p)
      if (recv_counts[p]) take -= (taken[p] = bound(p, lo, false));
    for (size_t p = 0; p < P * R; ++p) {
      if (!recv_counts[p]) continue;
      const uint64_t equal = bound(p, lo, true) - taken[p], here = std::min(take, equal);
      taken[p] += here, take -= here;
    }
    return taken;
  }

  // The merge on the GPU (its thread): stable sorts of the pieces in (rank, run) order, read from
  // where they are (our own from the sorted runs, the others as they arrive) and written into the
  // output; in `parts` ranges of the order (each a contiguous range of every piece) when the
  // slice exceeds the device, each sorted in core and written at its place.
  void gpu_merge() {
    const auto t = clock::now();
    try {
      std::vector<uint64_t> from = std::vector<uint64_t>(P * R, 0);
      for (uint64_t k = 0; k < parts; ++k) {
        const std::vector<uint64_t> to = select(m * (k + 1) / parts);
        merge_part(k, from, to);
        from = to;
      }
    } catch (...) {
      merge_failure = std::current_exception();
    }
    merge_ms = since(t);
  }

  // Part k of the merge on the GPU: each piece's elements [from[p], to[p]).
  void merge_part(uint64_t k, const std::vector<uint64_t>& from, const std::vector<uint64_t>& to) {
    const uint64_t begin = m * k / parts, end = m * (k + 1) / parts;
    std::vector<uint64_t> at(P * R + 1, 0);  // where each piece's range starts in the part
    for (size_t p = 0; p < P * R; ++p) at[p + 1] = at[p] + (to[p] - from[p]);
    auto reader = [&](bool is_values) {
      return [&, is_values](uint64_t offset, void* destination, uint64_t bytes) {
        const uint32_t size = is_values ? vs : ks;
        auto* out = static_cast<uint8_t*>(destination);
        while (bytes) {
          // The piece holding byte `offset` of the part: the last starting at or before it.
          const size_t p =
              size_t(std::upper_bound(at.begin(), at.end() - 1, offset / size) - at.begin()) - 1;
          const uint64_t within = offset - at[p] * size;
          const uint64_t take = std::min(bytes, (at[p + 1] - at[p]) * size - within);
          const uint64_t need = from[p] * size + within + take;  // bytes of the piece
          if (p / R != self) {
            std::unique_lock lock(shared.mutex);
            shared.changed.wait(lock,
                                [&] { return shared.stop || arrived(p, is_values) * size >= need; });
            if (shared.stop) throw Stopped();
          }
          std::memcpy(out, piece_data(p, is_values) + need - take, take);
          out += take, offset += take, bytes -= take;
        }
      };
    };
    auto writer = [begin](void* base, uint32_t size) {
      return [base, at = begin * size](uint64_t offset, const void* source, uint64_t bytes) {
        std::memcpy(static_cast<uint8_t*>(base) + at + offset, source, bytes);
      };
    };
    SortTimings part_timings;
    SortOptions final_sort = options.sort;
    final_sort.timings = &part_timings;
    sort_streamed(ctx, key_type, end - begin, HostStream{reader(false), writer(out_keys, ks)},
                  value_bytes,
                  value_bytes ? HostStream{reader(true), writer(out_values, vs)} : HostStream{},
                  final_sort);
    add_timings(timings.final_sort, part_timings);
    timings.final_sort.runs = k + 1;
  }

  // Starts the merge on the GPU once the local sort is done (once).
  void start_merge() {
    if (!merge_on_gpu || merge_started || !local_done) return;
    merge_started = true;
    merge_thread.running.emplace_back([this] { gpu_merge(); });
  }

  void wait_for_local_sort() {
    std::unique_lock lock(shared.mutex);
    shared.changed.wait(lock, [&] { return bool(local_done); });
  }

  // 3. The exchange by a caller's Exchange: once the local sort is done, one call per run.
  void exchange_by_caller() {
    wait_for_local_sort();
    for (size_t q = 0; q < R; ++q) {
      for (const bool is_values : {false, true}) {
        if (is_values && !value_bytes) continue;
        const uint32_t size = is_values ? vs : ks;
        std::vector<uint64_t> sc(P, 0), so(P, 0), rc(P, 0), ro(P, 0);
        for (size_t d = 0; d < P; ++d) {
          if (d == self) continue;
          sc[d] = send_counts[d * R + q] * size, so[d] = cut(q, d) * size;
          rc[d] = recv_counts[d * R + q] * size, ro[d] = place[d * R + q] * size;
        }
        const uint8_t* run =
            (is_values ? sorted_values.data() : sorted_keys.data()) + runs.first[q] * size;
        options.exchange->exchange(comm, run, sc, so, is_values ? recv_v : recv_k, rc, ro);
      }
    }
    std::lock_guard lock(shared.mutex);
    shared.piece_keys = recv_counts;
    shared.piece_values = recv_counts;
    shared.notify();
  }

  // 3. The built-in exchange: pieces in chunks, sent as soon as their run's prefix is on the
  // host; the merge on the GPU started as soon as the local sort is done.
  void exchange_by_mpi() {
    Traffic traffic;
    traffic.chunk = std::max<uint64_t>(1, chunk_bytes / ks);
    post_receives(traffic);
    plan_sends(traffic);
    unsigned idle = 0;
    for (;;) {
      bool progressed = post_ready_sends(traffic);
      progressed = take_completions(traffic) || progressed;
      start_merge();
      if (!traffic.pending && sent_all(traffic)) break;
      // Idle: with messages in flight, keep polling (MPI's progress moves their data: a pause
      // slows the shared-memory transport), yielding the core, and pausing briefly now and then;
      // with none, wait for the download.
      idle = progressed ? 0 : idle + 1;
      if (idle && (!traffic.pending || idle % 1024 == 0)) {
        std::unique_lock lock(shared.mutex);
        shared.changed.wait_for(lock, std::chrono::microseconds(traffic.pending ? 50 : 1000));
      } else if (idle) {
        std::this_thread::yield();
      }
    }
  }

  // The receives, first, each piece's chunks in order (messages of one pair and tag match in
  // order).
  void post_receives(Traffic& t) {
    for (size_t p = 0; p < P * R; ++p) {
      if (p / R == self) continue;
      for (uint64_t at = 0; at < recv_counts[p]; at += t.chunk) {
        const uint64_t count = std::min(t.chunk, recv_counts[p] - at);
        for (const bool is_values : {false, true}) {
          if (is_values && !value_bytes) continue;
          const uint32_t size = is_values ? vs : ks;
          t.requests.push_back(MPI_REQUEST_NULL);
          t.receives.push_back({p, at + count, is_values});
          check_mpi(
              MPI_Irecv((is_values ? recv_v : recv_k) + (place[p] + at) * size, int(count * size),
                        MPI_BYTE, int(p / R), is_values ? 2 : 1, comm, &t.requests.back()),
              "MPI_Irecv");
        }
      }
    }
    t.receive_requests = t.requests.size();
    t.pending = t.receive_requests;
    t.done_keys.resize(P * R), t.done_values.resize(P * R);
  }

  // The sends: per destination and stream, a cursor over its chunks in (run, position) order.
  void plan_sends(Traffic& t) const {
    t.sends.resize(P);
    for (size_t d = 0; d < P; ++d)
      if (d != self)
        for (size_t q = 0; q < R; ++q)
          for (uint64_t at = cut(q, d); at < cut(q, d + 1); at += t.chunk)
            t.sends[d].push_back({q, at, std::min(at + t.chunk, cut(q, d + 1))});
    t.next_keys.assign(P, 0), t.next_values.assign(P, 0);
  }

  bool sent_all(const Traffic& t) const {
    for (size_t d = 0; d < P; ++d)
      if (t.next_keys[d] < t.sends[d].size() ||
          (value_bytes && t.next_values[d] < t.sends[d].size()))
        return false;
    return true;
  }

  // Posts the sends whose data is on the host; whether any was.
  bool post_ready_sends(Traffic& t) {
    bool progressed = false;
    std::vector<uint64_t> there_k(R), there_v(R);
    {
      std::lock_guard lock(shared.mutex);
      for (size_t q = 0; q < R; ++q) {
        there_k[q] = runs.there(q);
        there_v[q] =
            shared.run_finished[q] ? runs.count[q] : shared.run_values[q].done / std::max(vs, 1u);
      }
    }
    for (size_t d = 0; d < P; ++d) {
      for (const bool is_values : {false, true}) {
        if (is_values && !value_bytes) continue;
        size_t& next = is_values ? t.next_values[d] : t.next_keys[d];
        const std::vector<uint64_t>& there = is_values ? there_v : there_k;
        const uint32_t size = is_values ? vs : ks;
        const uint8_t* base = is_values ? sorted_values.data() : sorted_keys.data();
        const std::vector<Traffic::Send>& sends = t.sends[d];
        while (next < sends.size() && there[sends[next].q] >= sends[next].end) {
          const Traffic::Send& s = sends[next++];
          t.requests.push_back(MPI_REQUEST_NULL);
          check_mpi(
              MPI_Isend(base + (runs.first[s.q] + s.begin) * size, int((s.end - s.begin) * size),
                        MPI_BYTE, int(d), is_values ? 2 : 1, comm, &t.requests.back()),
              "MPI_Isend");
          ++t.pending, ++timings.messages, progressed = true;
        }
      }
    }
    return progressed;
  }

  // What has completed: each piece's arrived prefix moved on; whether anything completed.
  bool take_completions(Traffic& t) {
    if (!t.pending) return false;
    t.indices.resize(t.requests.size());
    int completed = 0;
    check_mpi(MPI_Testsome(int(t.requests.size()), t.requests.data(), &completed,
                           t.indices.data(), MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (completed == MPI_UNDEFINED || completed <= 0) return false;
    t.pending -= size_t(completed);
    std::lock_guard lock(shared.mutex);
    for (int i = 0; i < completed; ++i) {
      const size_t r = size_t(t.indices[size_t(i)]);
      if (r >= t.receive_requests) continue;  // a send
      const Traffic::Receive& rv = t.receives[r];
      auto& done = rv.is_values ? t.done_values[rv.piece] : t.done_keys[rv.piece];
      auto& prefix = rv.is_values ? shared.piece_values[rv.piece] : shared.piece_keys[rv.piece];
      done.insert(rv.end);
      for (;;) {  // chunks are `chunk` elements long (the last of a piece shorter)
        const auto it = done.find(std::min(prefix + t.chunk, recv_counts[rv.piece]));
        if (it == done.end()) break;
        prefix = *it;
        done.erase(it);
      }
    }
    shared.notify();
    return true;
  }

  // 4. The merge. On the GPU it has been running since the local sort ended (or starts now).
  void merge_all() {
    wait_for_local_sort();
    start_merge();
    for (std::thread& t : threads.running) t.join();
    for (std::thread& t : merge_thread.running) t.join();
    const auto merging = clock::now();
    agree(comm, [&] {
      if (local_failure) std::rethrow_exception(local_failure);
      if (merge_failure) std::rethrow_exception(merge_failure);
      if (m == 0 || merge_on_gpu) return;
      if (nonempty == 1)
        copy_own_piece();
      else
        cpu_merge();
    });
    timings.merge_ms = merge_on_gpu ? merge_ms : since(merging);
  }

  // One piece: a remote one was received into the output; ours is copied there.
  void copy_own_piece() {
    for (size_t q = 0; q < R; ++q)
      if (recv_counts[self * R + q]) {
        const uint64_t from = runs.first[q] + cut(q, self);
        parallel_copy(static_cast<uint8_t*>(out_keys), sorted_keys.data() + from * ks, m * ks);
        if (value_bytes)
          parallel_copy(static_cast<uint8_t*>(out_values), sorted_values.data() + from * vs,
                        m * vs);
      }
  }

  // The merge on the CPU, once every piece is there.
  void cpu_merge() {
    std::vector<SortedRun> pieces;
    for (size_t p = 0; p < P * R; ++p) {
      if (!recv_counts[p]) continue;
      if (p / R == self) {
        const uint64_t from = runs.first[p % R] + cut(p % R, self);
        pieces.push_back({sorted_keys.data() + from * ks,
                          value_bytes ? sorted_values.data() + from * vs : nullptr,
                          recv_counts[p]});
      } else {
        pieces.push_back({recv_k + place[p] * ks, value_bytes ? recv_v + place[p] * vs : nullptr,
                          recv_counts[p]});
      }
    }
    auto writer = [](void* base) {
      return HostWriter([base](uint64_t offset, const void* from, uint64_t bytes) {
        std::memcpy(static_cast<uint8_t*>(base) + offset, from, bytes);
      });
    };
    merge_sorted_runs(key_type, value_bytes, pieces, writer(out_keys),
                      value_bytes ? writer(out_values) : HostWriter{}, options.sort);
  }

  Slice slice() const {
    Slice s;
    s.count = m;
    s.global_count = total;
    check_mpi(MPI_Exscan(&m, &s.global_offset, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Exscan");
    if (self == 0) s.global_offset = 0;
    return s;
  }

  // The call.
  Context& ctx;
  MPI_Comm comm;
  const KeyType key_type;
  const void* const keys;
  const uint64_t n;
  const void* const values;
  const uint32_t value_bytes;
  const Allocate& keys_out;
  const Allocate& values_out;
  const DistributedOptions& options;
  const uint64_t chunk_bytes;
  HostBuffer& sorted_keys;
  HostBuffer& sorted_values;
  HostBuffer& recv_keys;
  HostBuffer& recv_values;
  const KeyOrder& order;
  DistributedTimings& timings;
  const uint64_t total, first;
  const size_t local_runs, R, P, self;
  const uint32_t ks, vs;
  // 1. The local sort's progress, shared with its thread.
  Shared shared;
  Runs runs;
  std::exception_ptr local_failure, merge_failure;
  std::atomic<bool> local_done;
  // 2. The split: cuts[q][d], and the elements of each piece (d * R + q) sent and received.
  std::vector<std::vector<uint64_t>> cuts;
  std::vector<uint64_t> send_counts, recv_counts;
  // The slice and where its pieces are received.
  uint64_t m = 0, own = 0, nonempty = 0;
  std::vector<uint64_t> place;
  Merge merge = Merge::automatic;
  void* out_keys = nullptr;
  void* out_values = nullptr;
  uint64_t parts = 1;  // of the merge on the GPU: each fits the device
  uint8_t* recv_k = nullptr;
  uint8_t* recv_v = nullptr;
  // 4. The merge.
  bool merge_on_gpu = false, merge_started = false;
  double merge_ms = 0;
  // Last: on an exception the threads are stopped and joined (the merge's first) before anything
  // they use goes.
  Threads threads{shared, {}};
  Threads merge_thread{shared, {}};
};

}  // namespace

Slice Sorter::sort_raw(KeyType key_type, const void* keys, uint64_t n, const void* values,
                       uint32_t value_bytes, const Allocate& keys_out, const Allocate& values_out,
                       const DistributedOptions& options) {
  const auto started = clock::now();
  State& st = *state_;
  Context& ctx = st.ctx;
  MPI_Comm comm = st.own.comm;
  DistributedTimings timings;
  const Call call{key_type,   keys,       n,       values,
                  value_bytes, keys_out, values_out, options,
                  options.chunk_bytes ? options.chunk_bytes : uint64_t(64) << 20};
  check_call_agrees(comm, call);

  if (options.partition_first) {
    // (The options agree on every rank: the refusal too.)
    if (options.device_exchange == DeviceExchange::device ||
        options.device_exchange == DeviceExchange::shared_device)
      throw Error(
          "distributed sort: the device exchange cannot run: partition_first runs on the host "
          "path");
    const Slice slice = partition_first(ctx, comm, key_type, keys, n, values, value_bytes,
                                        keys_out, values_out, options, started);
    if (options.timings && options.device_exchange == DeviceExchange::automatic)
      options.timings->device_refused = "partition_first runs on the host path";
    return slice;
  }

  // 0. Checks; the run length of the local sort (the whole share when it fits the device).
  std::optional<KeyOrder> order;
  uint64_t run_length = 1;
  agree(comm, [&] {
    check_arguments(call);
    order.emplace(key_type, options.sort);
    if (n) run_length = max_run_elements(ctx, key_type, value_bytes, n, options.sort);
  });
  // The device-resident path where it can run (DistributedOptions::device_exchange); else the
  // host path, in one run when it is alone, or HostPathSort's phases.
  Slice slice;
  if (!detail::device_path_sort(ctx, comm, st.device, key_type, keys, n, values, value_bytes,
                                keys_out, values_out, options, &st.imports, timings, slice)) {
    const Extent extent = measure_extent(comm, n, run_length);
    timings.split_rounds = 3;
    timings.local_runs = extent.local_runs;
    if (ranks_in(comm) == 1 && extent.R == 1) {
      slice = sort_alone(ctx, comm, call, timings);
    } else {
      HostPathSort sort(ctx, comm, call,
                        {st.sorted_keys, st.sorted_values, st.recv_keys, st.recv_values}, *order,
                        extent, timings);
      slice = sort.run(run_length);
    }
  }
  timings.total_ms = since(started);
  if (options.timings) *options.timings = timings;
  return slice;
}

Slice sort_raw(Context& ctx, MPI_Comm comm, KeyType key_type, const void* keys, uint64_t n,
               const void* values, uint32_t value_bytes, const Allocate& keys_out,
               const Allocate& values_out, const DistributedOptions& options) {
  Sorter sorter(ctx, comm);
  return sorter.sort_raw(key_type, keys, n, values, value_bytes, keys_out, values_out, options);
}

}  // namespace gpusort::distributed
