// Pieces of the distributed sort shared by its host-staged and device-resident paths: the key
// order every split works in, MPI error checks, and the exact balanced split points.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <gpusort/gpusort.hpp>
#include <string>
#include <vector>

namespace gpusort::distributed::detail {

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

inline void check_mpi(int status, const char* what) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw Error(std::string(what) + ": " + std::string(text, size_t(length)));
  }
}

// Rank r's first element of the global order in the balanced layout: r * N / P without overflow.
inline uint64_t balanced_start(uint64_t total, int rank, int ranks) {
  return uint64_t((unsigned __int128)total * uint64_t(rank) / uint64_t(ranks));
}

// Exact split points over the rank's runs: cuts[q][i] = how many of run q's elements come before
// global position start(i + 1). The global stable order is (order, rank, run, position): the
// elements equal to the key at a boundary are taken rank by rank, run by run.
// RunsT: runs(), order (a KeyOrder), upper(q, v) and lower(q, v) (elements of run q ordered at
// most / below v).
template <class RunsT>
std::vector<std::vector<uint64_t>> exact_cuts(MPI_Comm comm, const RunsT& runs, uint64_t total,
                                              uint64_t& rounds) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const size_t targets = size_t(ranks - 1), R = runs.runs();
  std::vector<std::vector<uint64_t>> cuts(R, std::vector<uint64_t>(targets, 0));
  if (total == 0 || targets == 0) return cuts;
  std::vector<uint64_t> goal(targets), lo(targets, 0), hi(targets, runs.order.max());
  for (size_t i = 0; i < targets; ++i) goal[i] = balanced_start(total, int(i) + 1, ranks);
  std::vector<uint64_t> counts(targets), mid(targets);
  for (;;) {
    bool open = false;
    for (size_t i = 0; i < targets; ++i) {
      open |= lo[i] < hi[i];
      mid[i] = lo[i] + (hi[i] - lo[i]) / 2;
      counts[i] = 0;
      if (lo[i] < hi[i])
        for (size_t q = 0; q < R; ++q) counts[i] += runs.upper(q, mid[i]);
    }
    if (!open) break;
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
  std::vector<uint64_t> below(targets, 0), equal(targets, 0), equal_before(targets, 0);
  std::vector<std::vector<uint64_t>> low(R, std::vector<uint64_t>(targets)), eq = low;
  for (size_t i = 0; i < targets; ++i)
    for (size_t q = 0; q < R; ++q) {
      low[q][i] = runs.lower(q, lo[i]);
      eq[q][i] = runs.upper(q, lo[i]) - low[q][i];
      below[i] += low[q][i];
      equal[i] += eq[q][i];
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
  for (size_t i = 0; i < targets; ++i) {
    // Equal elements before position goal[i] still to take on this rank, run by run.
    const uint64_t wanted = goal[i] - below_total[i];
    uint64_t take = wanted <= equal_before[i] ? 0 : std::min(equal[i], wanted - equal_before[i]);
    for (size_t q = 0; q < R; ++q) {
      const uint64_t here = std::min(take, eq[q][i]);
      cuts[q][i] = low[q][i] + here;
      take -= here;
    }
  }
  return cuts;
}

}  // namespace gpusort::distributed::detail
