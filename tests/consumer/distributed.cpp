// Sorts keys spread over the ranks (mpirun -np 2 or more) through an installed
// gpusort::distributed; rank 0 gathers every slice and compares the whole with std::sort of the
// concatenation. Exits non-zero on any rank when the result is wrong, a rank's slice is not its
// equal share, or a validation message appeared (GPUSORT_VALIDATION=1 turns the layer on).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <gpusort/distributed.hpp>
#include <vector>

namespace dist = gpusort::distributed;

// Rank r's keys: 1000 + 7r scrambled values, repeated and negative ones among them.
std::vector<int32_t> keys_of(int rank) {
  std::vector<int32_t> keys(1000 + 7 * size_t(rank));
  for (size_t i = 0; i < keys.size(); ++i)
    keys[i] = int32_t((i * 2654435761u + uint32_t(rank) * 40503u) % 20011u) - 10000;
  return keys;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int ok = 1;
  try {
    gpusort::ContextOptions options;
    options.device = dist::default_device(MPI_COMM_WORLD);
    gpusort::Context ctx = gpusort::Context::create(options);
    const std::vector<int32_t> mine = keys_of(rank);
    const std::vector<int32_t> slice =
        dist::sort<int32_t>(ctx, MPI_COMM_WORLD, std::span<const int32_t>(mine));
    if (ctx.validation_messages() != 0) ok = 0;

    const size_t P = static_cast<size_t>(ranks);
    int count = int(slice.size());
    std::vector<int> counts(P), offsets(P, 0);
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (size_t r = 1; r < P; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    std::vector<int32_t> all(rank == 0 ? size_t(offsets.back() + counts.back()) : 0);
    MPI_Gatherv(slice.data(), count, MPI_INT32_T, all.data(), counts.data(), offsets.data(),
                MPI_INT32_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::vector<int32_t> expected;
      for (int r = 0; r < ranks; ++r) {
        const std::vector<int32_t> keys = keys_of(r);
        expected.insert(expected.end(), keys.begin(), keys.end());
      }
      std::sort(expected.begin(), expected.end());
      const size_t n = expected.size();
      for (size_t r = 0; r < P; ++r)
        if (size_t(counts[r]) != n * (r + 1) / P - n * r / P) ok = 0;  // equal shares (+-1)
      if (all != expected) ok = 0;
      std::printf("gpusort_distributed_consumer on %d ranks (%s): %s\n", ranks,
                  ctx.device_info().name.c_str(), ok ? "ok" : "WRONG");
    }
  } catch (const std::exception& e) {
    std::printf("gpusort_distributed_consumer, rank %d: %s\n", rank, e.what());
    ok = 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
