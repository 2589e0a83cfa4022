// `mpirun -np P gpusort sort IN OUT [options]`: the ranks sort one file together
// (gpusort::distributed). Each rank reads its slice of IN (rank r: elements [r*n/P, (r+1)*n/P)),
// the ranks sort, and each writes its slice of the sorted array at its offset into one temporary
// file beside OUT, which rank 0 created; when every rank has written and flushed its part, the
// ranks leave MPI and rank 0 renames it over OUT, the last thing before it exits. Every step ends
// with the ranks agreeing on success: a failure on any rank ends every rank with
// "gpusort: error: rank R: <what failed>", OUT untouched, the temporary file removed (only a
// failed rename, after MPI, is reported by rank 0 alone).
// Interruptions: mpirun ends a job (Ctrl-C, a rank that died) by sending every rank SIGCONT, then
// SIGTERM and SIGKILL (array_file.hpp, interrupt_on_launcher_continue). On the SIGCONT, or a
// terminating signal, the first rank to see it removes the temporary files (every rank knows
// their names), and the ranks fail at their next step; rank 0 never renames once interrupted. So
// an interrupted sort leaves OUT as it was with a failure status, unless the signal reaches
// mpirun in the last few milliseconds, once rank 0 has renamed and is exiting.
// Without an MPI launcher, or with one rank, nothing here runs and MPI is never initialized: the
// single-process sort runs as it always has.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <gpusort/distributed.hpp>
#include <optional>
#include <string>
#include <vector>

#include "array_file.hpp"
#include "commands.hpp"
#include "sort_arguments.hpp"

namespace gpusort::cli {
namespace {

namespace dist = gpusort::distributed;
namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;
double since(clock::time_point t) {
  return std::chrono::duration<double, std::milli>(clock::now() - t).count();
}

// MPI for the collective sort's lifetime; finalized on every path (the ranks reach it together:
// every failure has been agreed on first), or before the commit (finalize()).
struct MpiSession {
  MpiSession() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  ~MpiSession() { finalize(); }
  static bool finalized() {
    int done = 0;
    MPI_Finalized(&done);
    return done;
  }
  void finalize() {
    if (!finalized()) MPI_Finalize();
  }
};

// Host memory touched on several threads when allocated (dist::HostBuffer), so that reading the
// input into it and the sort's writes into it fault no page in on the way.
struct Bytes {
  dist::HostBuffer data;
  uint64_t size = 0;
  void* allocate(uint64_t bytes) {
    data = dist::HostBuffer(std::max<uint64_t>(bytes, 1));
    size = bytes;
    return data.data();
  }
};

void write_fully(int fd, const void* data, uint64_t bytes, uint64_t at, const std::string& who) {
  const auto* in = static_cast<const char*>(data);
  while (bytes > 0) {
    const size_t chunk = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    const ssize_t put = ::pwrite(fd, in, chunk, off_t(at));
    if (put < 0) {
      if (errno == EINTR) continue;
      throw Error(who + ": cannot write: " + std::strerror(errno));
    }
    in += put, at += uint64_t(put), bytes -= uint64_t(put);
  }
}

// One output file: created by rank 0 (a PendingOutput: temporary file, removal on failure and on
// signals), written by every rank through its own descriptor.
struct SharedOutput {
  PendingOutput* pending = nullptr;  // rank 0
  std::string temporary;             // every rank, after the broadcast
  // The other ranks, after the broadcast: whichever rank is interrupted first removes the file.
  std::optional<RemovedOnInterruption> removal;
  uint64_t data_offset = 0;  // the npy header's bytes
  int fd = -1;
  ~SharedOutput() {
    if (fd >= 0) ::close(fd);
  }
};

// The failure of every step once the launcher began ending the job (interruption()).
void check_not_interrupted() {
  if (interruption()) throw Error("interrupted: the MPI launcher is ending the job");
}

// dist::agree, failing on every rank once any rank is interrupted, so that the ranks leave
// together with OUT untouched. What an interrupted step failed at (a temporary file already
// removed, say) is reported as the interruption.
void agree_uninterrupted(MPI_Comm comm, const std::function<void()>& step) {
  dist::agree(comm, [&] {
    try {
      step();
    } catch (...) {
      check_not_interrupted();
      throw;
    }
    check_not_interrupted();
  });
}

void broadcast(MPI_Comm comm, std::string& text, uint64_t& number) {
  uint64_t length = text.size();
  MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm);
  MPI_Bcast(&number, 1, MPI_UINT64_T, 0, comm);
  text.resize(length);
  MPI_Bcast(text.data(), int(length), MPI_CHAR, 0, comm);
}

// Test hook (tests/distributed/cli_collective_test.py): GPUSORT_TEST_FAIL_RANK=R makes rank R
// fail at the step GPUSORT_TEST_FAIL_STEP names (read, sort, write; default read), or, with
// GPUSORT_TEST_FAIL_STEP=kill, end with SIGKILL after the sort.
void test_failure(int rank, const char* step) {
  const char* who = std::getenv("GPUSORT_TEST_FAIL_RANK");
  if (!who || std::atoi(who) != rank) return;
  const char* at = std::getenv("GPUSORT_TEST_FAIL_STEP");
  const std::string wanted = at && *at ? at : "read";
  if (wanted != step) return;
  if (wanted == "kill") ::raise(SIGKILL);
  throw Error(std::string("test failure injected at the ") + step + " step");
}

// The timings table: every rank's stages, gathered by rank 0 (`all`, `fields` per rank).
void print_timings(int ranks, const std::vector<double>& all, int fields, uint64_t elements,
                   const dist::DistributedTimings& timings) {
  std::fprintf(stderr, "gpusort: timings of the sort on %d ranks (ms; %llu elements)\n", ranks,
               static_cast<unsigned long long>(elements));
  // The path (the same on every rank): local / merge are the device-resident path's upload,
  // sort and final sort with download when it ran.
  if (timings.device_resident)
    std::fprintf(stderr, "  path: device resident (keys stay on the GPUs; peer copies)\n");
  else
    std::fprintf(stderr, "  path: host exchange%s%s%s\n",
                 timings.device_refused.empty() ? "" : " (device-resident path not taken: ",
                 timings.device_refused.c_str(), timings.device_refused.empty() ? "" : ")");
  std::fprintf(stderr,
               "  rank   device     read    local (upload    sort  download)    split "
               " exchange    merge    write   commit    total  elements  sent MB\n");
  for (int r = 0; r < ranks; ++r) {
    const double* t = &all[size_t(r) * size_t(fields)];
    std::fprintf(stderr,
                 "  %4d %8.1f %8.1f %8.1f (%8.1f %8.1f %8.1f) %8.1f %9.1f %8.1f %8.1f %8.1f "
                 "%8.1f %9.0f %8.1f\n",
                 r, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12],
                 t[13] / 1e6);
  }
}

void run_collective(const SortArguments& a, MpiSession& mpi) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const auto started = clock::now();

  // 1. Arguments and inputs, checked on every rank; rank 0 creates the temporary outputs.
  SortOptions options;
  std::optional<ArrayFile> keys, values;
  OutputSet outputs;
  SharedOutput key_out, value_out;
  uint64_t first = 0, count = 0;
  agree_uninterrupted(comm, [&] {
    auto refuse = [](bool given, const std::string& what) {
      if (given) throw Error(what + " is not available in a sort under mpirun with several ranks");
    };
    refuse(!a.segments.empty() || !a.segment_type.empty(), "--segments");
    refuse(!a.indices_out.empty(), "--indices-out");
    refuse(a.in_place, "--in-place");
    refuse(!a.host_memory_limit.empty(), "--host-memory-limit");
    for (const std::string* path : {&a.in, &a.out, &a.values_in, &a.values_out})
      if (*path == standard_stream)
        throw Error(
            "standard input and output ('-') are not available in a sort under mpirun with "
            "several ranks: name files");
    auto type = [](const std::string& text, const std::string& option) -> std::optional<KeyType> {
      if (text.empty()) return std::nullopt;
      try {
        return parse_key_type(text);
      } catch (const Error& e) {
        throw Error(option + ": " + e.what());
      }
    };
    const std::optional<KeyType> declared_key = type(a.type, "--type");
    const std::optional<KeyType> declared_value = type(a.value_type, "--value-type");
    options.descending = a.descending;
    options.algorithm = parse_algorithm(a.algorithm);
    options.begin_bit = a.begin_bit;
    options.end_bit = a.end_bit;
    if (!a.device_memory_limit.empty())
      options.device_memory_limit = parse_bytes(a.device_memory_limit, "--device-memory-limit");
    const bool with_values = !a.values_in.empty();
    if (with_values && a.values_out.empty())
      throw Error(
          "--values needs --values-out VOUT: where to write the values in their sorted order");
    if (!with_values && !a.values_out.empty())
      throw Error("--values-out needs --values VIN: the values to carry along with the keys");
    if (!with_values && !a.value_type.empty()) throw Error("--value-type needs --values VIN");
    for (const std::string* output : {&a.out, &a.values_out})
      for (const std::string* input : {&a.in, &a.values_in})
        if (!output->empty() && !input->empty() && same_file(*output, *input))
          throw Error("'" + *output + "' is both an input and an output");
    if (with_values && same_file(a.out, a.values_out))
      throw Error("OUT and VOUT are the same file '" + a.out + "'");

    keys =
        open_array_file(a.in, "keys file", declared_key, "--type", true, InputReaders::every_rank);
    if (with_values) {
      values = open_array_file(a.values_in, "values file", declared_value, "--value-type", true,
                               InputReaders::every_rank);
      if (values->count != keys->count)
        throw Error("key/value count mismatch: keys file '" + a.in + "' holds " +
                    std::to_string(keys->count) + " elements but values file '" + a.values_in +
                    "' holds " + std::to_string(values->count));
      const uint32_t width = key_bytes(values->element);
      if (width != 4 && width != 8) throw Error("values are 4 or 8 bytes wide");
    }
    first = uint64_t((unsigned __int128)keys->count * uint64_t(rank) / uint64_t(ranks));
    count = uint64_t((unsigned __int128)keys->count * uint64_t(rank + 1) / uint64_t(ranks)) - first;
    if (rank == 0) {
      auto create = [&](SharedOutput& shared, const std::string& path, const std::string& role,
                        const ArrayFile& like) {
        shared.pending = &outputs.add(path, role);
        if (shared.pending->is_stream())
          throw Error(role + " '" + path +
                      "' is not a regular file: a sort under mpirun writes regular files");
        const uint64_t bytes = array_file_bytes(like.format, like.element, like.count);
        if (bytes > file_size_limit())
          throw Error(role + " '" + path + "' would be " + std::to_string(bytes) +
                      " bytes, more than the file-size limit (ulimit -f)");
        shared.pending->write_header(like.format, like.element, like.count);
        shared.temporary = shared.pending->temporary_path().string();
        shared.data_offset = bytes - like.count * key_bytes(like.element);
      };
      create(key_out, a.out, "output file", *keys);
      if (values) create(value_out, a.values_out, "values output file", *values);
      // Both outputs on one file system must fit its free space together.
      uint64_t needed = array_file_bytes(keys->format, keys->element, keys->count);
      const bool together = values && file_system_of(key_out.pending->temporary_path()) ==
                                          file_system_of(value_out.pending->temporary_path());
      if (together) needed += array_file_bytes(values->format, values->element, values->count);
      if (needed > free_disk_bytes(key_out.pending->temporary_path()))
        throw Error("not enough disk space for the output file '" + a.out + "'" +
                    (together ? " and the values output file" : "") + ": " +
                    std::to_string(needed) + " bytes needed, " +
                    std::to_string(free_disk_bytes(key_out.pending->temporary_path())) +
                    " are free");
    }
  });
  broadcast(comm, key_out.temporary, key_out.data_offset);
  if (values) broadcast(comm, value_out.temporary, value_out.data_offset);
  if (rank != 0)
    for (SharedOutput* shared : {&key_out, &value_out})
      if (!shared->temporary.empty()) shared->removal.emplace(shared->temporary);

  // 2. Each rank's slice of the inputs, and its device.
  Bytes key_slice, value_slice;
  double read_ms = 0, device_ms = 0;
  std::optional<Context> ctx;
  const int local_rank = dist::node_local_rank(comm);  // collective: outside the agreed step
  agree_uninterrupted(comm, [&] {
    for (SharedOutput* shared : {&key_out, &value_out})
      if (!shared->temporary.empty()) {
        shared->fd = ::open(shared->temporary.c_str(), O_WRONLY | O_CLOEXEC);
        if (shared->fd < 0)
          throw Error("cannot open the temporary output file '" + shared->temporary +
                      "' that rank 0 created (a sort under mpirun writes its output through a "
                      "file system every rank shares): " +
                      std::strerror(errno));
      }
    test_failure(rank, "read");
    const auto reading = clock::now();
    const uint32_t ks = key_bytes(keys->element);
    ArrayReader key_reader(*keys);
    key_reader.read(first * ks, key_slice.allocate(count * ks), count * ks);
    if (values) {
      const uint32_t vs = key_bytes(values->element);
      ArrayReader value_reader(*values);
      value_reader.read(first * vs, value_slice.allocate(count * vs), count * vs);
    }
    read_ms = since(reading);
    const auto creating = clock::now();
    ContextOptions context_options;
    context_options.device = a.device.empty() ? dist::default_device_for(local_rank) : a.device;
    ctx.emplace(Context::create(context_options));
    device_ms = since(creating);
  });

  // 3. The sort (it agrees on failures itself).
  agree_uninterrupted(comm, [&] { test_failure(rank, "sort"); });
  dist::DistributedTimings timings;
  dist::DistributedOptions distributed;
  distributed.sort = options;
  distributed.timings = &timings;
  Bytes sorted_keys, sorted_values;
  const dist::Slice slice = dist::sort_raw(
      *ctx, comm, keys->element, key_slice.data.data(), count, value_slice.data.data(),
      values ? key_bytes(values->element) : 0,
      [&](uint64_t n) { return sorted_keys.allocate(n * key_bytes(keys->element)); },
      [&](uint64_t n) { return sorted_values.allocate(n * key_bytes(values->element)); },
      distributed);
  key_slice = {}, value_slice = {};
  test_failure(rank, "kill");

  // 4. Every rank writes its slice at its offset and flushes it (rank 0 the headers too).
  double write_ms = 0;
  agree_uninterrupted(comm, [&] {
    test_failure(rank, "write");
    if (ctx->validation_messages() != 0)
      throw Error("the Vulkan validation layer reported " +
                  std::to_string(ctx->validation_messages()) +
                  " message(s) (printed above); no output written");
    const auto writing = clock::now();
    auto put = [&](SharedOutput& shared, const Bytes& data, uint32_t size, const std::string& who) {
      write_fully(shared.fd, data.data.data(), slice.count * size,
                  shared.data_offset + slice.global_offset * size, who);
      if (::fdatasync(shared.fd) != 0)
        throw Error(who + ": cannot flush to disk: " + std::strerror(errno));
      if (shared.pending) shared.pending->finish();
    };
    put(key_out, sorted_keys, key_bytes(keys->element), "output file '" + a.out + "'");
    if (values)
      put(value_out, sorted_values, key_bytes(values->element),
          "values output file '" + a.values_out + "'");
    write_ms = since(writing);
  });
  ctx.reset();
  sorted_keys = {}, sorted_values = {};

  // Every rank's stages, gathered while MPI runs; rank 0 prints them after the commit.
  constexpr int fields = 14;
  std::vector<double> all_timings(a.timings && rank == 0 ? size_t(ranks) * fields : 0);
  if (a.timings) {
    const double mine[fields] = {device_ms,
                                 read_ms,
                                 timings.local_sort_ms,
                                 timings.local.upload_ms,
                                 timings.local.sort_gpu_ms,
                                 timings.local.download_ms,
                                 timings.split_ms,
                                 timings.exchange_ms,
                                 timings.merge_ms,
                                 write_ms,
                                 0,  // the commit: rank 0's, after MPI
                                 since(started),
                                 double(slice.count),
                                 double(timings.bytes_sent)};
    MPI_Gather(mine, fields, MPI_DOUBLE, all_timings.data(), fields, MPI_DOUBLE, 0, comm);
  }

  // 5. Rank 0 renames the temporary files over OUT (and VOUT), after MPI_Finalize (which takes
  // tens of milliseconds) and only when no rank has been interrupted (step 4 checked every rank;
  // rank 0 checks again right before): once mpirun has been interrupted it reports failure
  // whatever the ranks do, so the renames are the last thing before the exit. A failure here is
  // rank 0's alone (the other ranks have left MPI).
  mpi.finalize();
  if (rank != 0) return;
  const auto committing = clock::now();
  try {
    check_not_interrupted();
    outputs.commit();
  } catch (const std::exception& e) {
    throw Error("rank 0: " + std::string(e.what()));  // in the form of the agreed failures
  }
  if (a.timings) {
    all_timings[10] = since(committing);
    all_timings[11] = since(started);
    print_timings(ranks, all_timings, fields, slice.global_count, timings);
  }
}

// Set before or after mpi_launch.cpp's registration (which then leaves this one).
const bool registered = [] {
  collective_sort() = [](const SortArguments& a) {
    if (launched_ranks() <= 1) return false;
    interrupt_on_launcher_continue();  // from the start: a Ctrl-C on mpirun may come at any time
    bool failed = false;
    {
      MpiSession mpi;
      int ranks = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &ranks);
      if (ranks <= 1) return false;
      try {
        run_collective(a, mpi);
      } catch (const std::exception& e) {
        // Every rank has the same (agreed) failure: each prints its line before any exits,
        // since mpirun ends the other ranks as soon as one exits with a nonzero status. (A
        // failure of the commit, after MPI, is rank 0's alone.)
        std::fprintf(stderr, "gpusort: error: %s\n", e.what());
        std::fflush(stderr);
        if (!MpiSession::finalized()) MPI_Barrier(MPI_COMM_WORLD);
        failed = true;
      }
    }
    if (failed) std::exit(1);
    return true;
  };
  return true;
}();

}  // namespace
}  // namespace gpusort::cli
