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

// One collective sort on this rank: what its steps share. Members in the order the steps make
// them (they are destroyed in reverse, the temporary outputs' descriptors before the outputs).
class CollectiveSort {
 public:
  explicit CollectiveSort(const SortArguments& a) : a_(a) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &ranks_);
    started_ = clock::now();
  }

  // 1. Arguments and inputs, checked on every rank; rank 0 creates the temporary outputs, whose
  // names and header sizes every rank then learns.
  void check_and_create_outputs() {
    agree_uninterrupted(comm_, [&] {
      const DeclaredTypes declared = check_arguments();
      open_inputs(declared);
      if (rank_ == 0) create_outputs();
    });
    broadcast(comm_, key_out_.temporary, key_out_.data_offset);
    if (values_) broadcast(comm_, value_out_.temporary, value_out_.data_offset);
    if (rank_ != 0)
      for (SharedOutput* shared : {&key_out_, &value_out_})
        if (!shared->temporary.empty()) shared->removal.emplace(shared->temporary);
  }

  // 2. Each rank's slice of the inputs, and its device.
  void read_slices() {
    const int local_rank = dist::node_local_rank(comm_);  // collective: outside the agreed step
    agree_uninterrupted(comm_, [&] {
      for (SharedOutput* shared : {&key_out_, &value_out_})
        if (!shared->temporary.empty()) {
          shared->fd = ::open(shared->temporary.c_str(), O_WRONLY | O_CLOEXEC);
          if (shared->fd < 0)
            throw Error("cannot open the temporary output file '" + shared->temporary +
                        "' that rank 0 created (a sort under mpirun writes its output through a "
                        "file system every rank shares): " +
                        std::strerror(errno));
        }
      test_failure(rank_, "read");
      const auto reading = clock::now();
      const uint32_t ks = key_bytes(keys_->element);
      ArrayReader key_reader(*keys_);
      key_reader.read(first_ * ks, key_slice_.allocate(count_ * ks), count_ * ks);
      if (values_) {
        const uint32_t vs = key_bytes(values_->element);
        ArrayReader value_reader(*values_);
        value_reader.read(first_ * vs, value_slice_.allocate(count_ * vs), count_ * vs);
      }
      read_ms_ = since(reading);
      const auto creating = clock::now();
      ContextOptions context_options;
      context_options.device = a_.device.empty() ? dist::default_device_for(local_rank) : a_.device;
      ctx_.emplace(Context::create(context_options));
      device_ms_ = since(creating);
    });
  }

  // 3. The sort (it agrees on failures itself).
  void sort() {
    agree_uninterrupted(comm_, [&] { test_failure(rank_, "sort"); });
    dist::DistributedOptions distributed;
    distributed.sort = options_;
    distributed.timings = &timings_;
    slice_ = dist::sort_raw(
        *ctx_, comm_, keys_->element, key_slice_.data.data(), count_, value_slice_.data.data(),
        values_ ? key_bytes(values_->element) : 0,
        [&](uint64_t n) { return sorted_keys_.allocate(n * key_bytes(keys_->element)); },
        [&](uint64_t n) { return sorted_values_.allocate(n * key_bytes(values_->element)); },
        distributed);
    key_slice_ = {}, value_slice_ = {};
    test_failure(rank_, "kill");
  }

  // 4. Every rank writes its slice at its offset and flushes it (rank 0 the headers too).
  void write_slices() {
    agree_uninterrupted(comm_, [&] {
      test_failure(rank_, "write");
      if (ctx_->validation_messages() != 0)
        throw Error("the Vulkan validation layer reported " +
                    std::to_string(ctx_->validation_messages()) +
                    " message(s) (printed above); no output written");
      const auto writing = clock::now();
      auto put = [&](SharedOutput& shared, const Bytes& data, uint32_t size,
                     const std::string& who) {
        write_fully(shared.fd, data.data.data(), slice_.count * size,
                    shared.data_offset + slice_.global_offset * size, who);
        if (::fdatasync(shared.fd) != 0)
          throw Error(who + ": cannot flush to disk: " + std::strerror(errno));
        if (shared.pending) shared.pending->finish();
      };
      put(key_out_, sorted_keys_, key_bytes(keys_->element), "output file '" + a_.out + "'");
      if (values_)
        put(value_out_, sorted_values_, key_bytes(values_->element),
            "values output file '" + a_.values_out + "'");
      write_ms_ = since(writing);
    });
    ctx_.reset();
    sorted_keys_ = {}, sorted_values_ = {};
  }

  // Every rank's stages, gathered while MPI runs (with --timings); rank 0 prints them after the
  // commit.
  void gather_timings() {
    all_timings_.resize(a_.timings && rank_ == 0 ? size_t(ranks_) * fields : 0);
    if (!a_.timings) return;
    const double mine[fields] = {device_ms_,
                                 read_ms_,
                                 timings_.local_sort_ms,
                                 timings_.local.upload_ms,
                                 timings_.local.sort_gpu_ms,
                                 timings_.local.download_ms,
                                 timings_.split_ms,
                                 timings_.exchange_ms,
                                 timings_.merge_ms,
                                 write_ms_,
                                 0,  // the commit: rank 0's, after MPI
                                 since(started_),
                                 double(slice_.count),
                                 double(timings_.bytes_sent)};
    MPI_Gather(mine, fields, MPI_DOUBLE, all_timings_.data(), fields, MPI_DOUBLE, 0, comm_);
  }

  // 5. Rank 0 renames the temporary files over OUT (and VOUT), after MPI_Finalize (which takes
  // tens of milliseconds) and only when no rank has been interrupted (step 4 checked every rank;
  // rank 0 checks again right before): once mpirun has been interrupted it reports failure
  // whatever the ranks do, so the renames are the last thing before the exit. A failure here is
  // rank 0's alone (the other ranks have left MPI).
  void commit(MpiSession& mpi) {
    mpi.finalize();
    if (rank_ != 0) return;
    const auto committing = clock::now();
    try {
      check_not_interrupted();
      outputs_.commit();
    } catch (const std::exception& e) {
      throw Error("rank 0: " + std::string(e.what()));  // in the form of the agreed failures
    }
    if (a_.timings) {
      all_timings_[10] = since(committing);
      all_timings_[11] = since(started_);
      print_timings(ranks_, all_timings_, fields, slice_.global_count, timings_);
    }
  }

 private:
  static constexpr int fields = 14;  // of each rank's timings
  struct DeclaredTypes {
    std::optional<KeyType> key, value;
  };

  // The options, refused where a sort under mpirun has no use for them, and parsed.
  DeclaredTypes check_arguments() {
    auto refuse = [](bool given, const std::string& what) {
      if (given) throw Error(what + " is not available in a sort under mpirun with several ranks");
    };
    refuse(!a_.segments.empty() || !a_.segment_type.empty(), "--segments");
    refuse(!a_.indices_out.empty(), "--indices-out");
    refuse(a_.in_place, "--in-place");
    refuse(!a_.host_memory_limit.empty(), "--host-memory-limit");
    for (const std::string* path : {&a_.in, &a_.out, &a_.values_in, &a_.values_out})
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
    DeclaredTypes declared{type(a_.type, "--type"), type(a_.value_type, "--value-type")};
    options_.descending = a_.descending;
    options_.algorithm = parse_algorithm(a_.algorithm);
    options_.begin_bit = a_.begin_bit;
    options_.end_bit = a_.end_bit;
    if (!a_.device_memory_limit.empty())
      options_.device_memory_limit = parse_bytes(a_.device_memory_limit, "--device-memory-limit");
    const bool with_values = !a_.values_in.empty();
    if (with_values && a_.values_out.empty())
      throw Error(
          "--values needs --values-out VOUT: where to write the values in their sorted order");
    if (!with_values && !a_.values_out.empty())
      throw Error("--values-out needs --values VIN: the values to carry along with the keys");
    if (!with_values && !a_.value_type.empty()) throw Error("--value-type needs --values VIN");
    for (const std::string* output : {&a_.out, &a_.values_out})
      for (const std::string* input : {&a_.in, &a_.values_in})
        if (!output->empty() && !input->empty() && same_file(*output, *input))
          throw Error("'" + *output + "' is both an input and an output");
    if (with_values && same_file(a_.out, a_.values_out))
      throw Error("OUT and VOUT are the same file '" + a_.out + "'");
    return declared;
  }

  // The inputs opened on every rank, and this rank's slice of them.
  void open_inputs(const DeclaredTypes& declared) {
    keys_ =
        open_array_file(a_.in, "keys file", declared.key, "--type", true, InputReaders::every_rank);
    if (!a_.values_in.empty()) {
      values_ = open_array_file(a_.values_in, "values file", declared.value, "--value-type", true,
                                InputReaders::every_rank);
      if (values_->count != keys_->count)
        throw Error("key/value count mismatch: keys file '" + a_.in + "' holds " +
                    std::to_string(keys_->count) + " elements but values file '" + a_.values_in +
                    "' holds " + std::to_string(values_->count));
      const uint32_t width = key_bytes(values_->element);
      if (width != 4 && width != 8) throw Error("values are 4 or 8 bytes wide");
    }
    first_ = uint64_t((unsigned __int128)keys_->count * uint64_t(rank_) / uint64_t(ranks_));
    count_ =
        uint64_t((unsigned __int128)keys_->count * uint64_t(rank_ + 1) / uint64_t(ranks_)) - first_;
  }

  // Rank 0: the temporary outputs with their headers, checked against the file-size limit and
  // the free space.
  void create_outputs() {
    auto create = [&](SharedOutput& shared, const std::string& path, const std::string& role,
                      const ArrayFile& like) {
      shared.pending = &outputs_.add(path, role);
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
    create(key_out_, a_.out, "output file", *keys_);
    if (values_) create(value_out_, a_.values_out, "values output file", *values_);
    // Both outputs on one file system must fit its free space together.
    uint64_t needed = array_file_bytes(keys_->format, keys_->element, keys_->count);
    const bool together = values_ && file_system_of(key_out_.pending->temporary_path()) ==
                                         file_system_of(value_out_.pending->temporary_path());
    if (together) needed += array_file_bytes(values_->format, values_->element, values_->count);
    if (needed > free_disk_bytes(key_out_.pending->temporary_path()))
      throw Error("not enough disk space for the output file '" + a_.out + "'" +
                  (together ? " and the values output file" : "") + ": " + std::to_string(needed) +
                  " bytes needed, " +
                  std::to_string(free_disk_bytes(key_out_.pending->temporary_path())) +
                  " are free");
  }

  const SortArguments& a_;
  MPI_Comm comm_ = MPI_COMM_WORLD;
  int rank_ = 0, ranks_ = 1;
  clock::time_point started_;
  SortOptions options_;
  std::optional<ArrayFile> keys_, values_;
  OutputSet outputs_;
  SharedOutput key_out_, value_out_;
  uint64_t first_ = 0, count_ = 0;  // this rank's slice of the inputs
  Bytes key_slice_, value_slice_;
  double read_ms_ = 0, device_ms_ = 0, write_ms_ = 0;
  std::optional<Context> ctx_;
  dist::DistributedTimings timings_;
  Bytes sorted_keys_, sorted_values_;
  dist::Slice slice_;
  std::vector<double> all_timings_;
};

void run_collective(const SortArguments& a, MpiSession& mpi) {
  CollectiveSort sort(a);
  sort.check_and_create_outputs();
  sort.read_slices();
  sort.sort();
  sort.write_slices();
  sort.gather_timings();
  sort.commit(mpi);
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
