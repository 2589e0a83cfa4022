// gpusort sort IN OUT: sorts a raw or .npy array file (optionally with a values file carried
// along) on the GPU and writes the result in the input's format; gpusort topk IN OUT -k K, with
// the same file handling, writes the first k of that result. Everything that can be checked
// is checked before any output exists, and outputs appear only complete (array_file.hpp).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <gpusort/gpusort.hpp>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "array_file.hpp"
#include "commands.hpp"
#include "cuda/environment.hpp"
#include "host/byte_count.hpp"
#include "sort_arguments.hpp"
#include "algorithms/onesweep/tuning.hpp"  // smallest_cuda_n

namespace gpusort::cli {

uint64_t parse_bytes(const std::string& text, const std::string& option) {
  if (const std::optional<uint64_t> bytes = parse_byte_count(text)) return *bytes;
  throw Error(option + " '" + text +
              "': expected a byte count such as 1048576, 512M or 8G (K, M, G, T: powers of 1024)");
}

namespace {

namespace fs = std::filesystem;

// A progress line on standard error, for sorts that take longer than about two seconds, while
// standard error is a terminal (and --quiet is not given): bytes read and written so far against
// what the sort moves in all. A sort that completes ends the line at its final state (100 %: every
// byte read and written) and leaves it; one that fails clears it for the error.
class Progress {
 public:
  // total: the bytes read and written in all; array: the array's bytes (for the message);
  // after: when the line first shows.
  Progress(bool enabled, uint64_t total, uint64_t array, std::chrono::milliseconds after)
      : total_(total), array_(array), after_(after) {
    if (enabled && total) thread_ = std::thread([this] { show(); });
  }
  ~Progress() { finish(false); }
  // Ends the line (when one was shown): at its final state when `complete`, else cleared.
  // Nothing is shown after this.
  void finish(bool complete) {
    {
      std::lock_guard lock(mutex_);
      if (stop_) return;
      stop_ = true;
      complete_ = complete;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void add(uint64_t bytes) { done_.fetch_add(bytes, std::memory_order_relaxed); }

 private:
  void print() const {
    const double share = std::min(1.0, double(done_.load()) / double(total_));
    const bool gigabytes = array_ >= 1000000000;
    std::fprintf(stderr, "\rgpusort: sorting %.1f %s: %3.0f%%",
                 double(array_) / (gigabytes ? 1e9 : 1e6), gigabytes ? "GB" : "MB", share * 100);
    std::fflush(stderr);
  }
  void show() {
    using namespace std::chrono_literals;
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, after_, [&] { return stop_; })) return;
    do print();
    while (!wake_.wait_for(lock, 500ms, [&] { return stop_; }));
    if (complete_) {
      print();  // with the bytes moved since the last update
      std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "\r%60s\r", "");
    }
    std::fflush(stderr);
  }
  const uint64_t total_, array_;
  const std::chrono::milliseconds after_;
  std::atomic<uint64_t> done_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, complete_ = false;
  std::thread thread_;
};

// When the progress line first shows: after about 2 s, or (a test hook, cli_test.cpp) after
// GPUSORT_TEST_PROGRESS_AFTER_MS.
std::chrono::milliseconds progress_delay() {
  if (const char* after = std::getenv("GPUSORT_TEST_PROGRESS_AFTER_MS"))
    return std::chrono::milliseconds(std::atoll(after));
  return std::chrono::seconds(2);
}

fs::path parent_directory(const fs::path& file) {
  const fs::path directory = file.parent_path();
  return directory.empty() ? fs::path(".") : directory;
}

// Host memory that an out-of-core sort may hold when --host-memory-limit is not given: half of
// the physical memory (the sorted runs then wait in memory; beyond it, in temporary files).
uint64_t default_host_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return ~uint64_t(0);
  return uint64_t(pages) * uint64_t(page) / 2;
}

std::optional<KeyType> optional_type(const std::string& text, const std::string& option) {
  if (text.empty()) return std::nullopt;
  try {
    return parse_key_type(text);
  } catch (const Error& e) {
    throw Error(option + ": " + e.what());
  }
}

// The --segments file, read whole and checked (CSR offsets of n keys) before any output exists.
struct Segments {
  std::vector<uint8_t> bytes;
  SegmentOffsets offsets;
};
Segments read_segments(const std::string& path, const std::string& segment_type,
                       uint64_t key_count) {
  const std::optional<KeyType> declared = optional_type(segment_type, "--segment-type");
  if (declared && *declared != KeyType::u32 && *declared != KeyType::u64)
    throw Error("--segment-type: segment offsets are u32 or u64, not " +
                std::string(to_string(*declared)));
  ArrayFile file = open_array_file(path, "segments file", declared, "--segment-type");
  if (file.element != KeyType::u32 && file.element != KeyType::u64)
    throw Error("segments file '" + path + "' holds " + to_string(file.element) +
                " elements: segment offsets are u32 or u64");
  Segments s;
  s.bytes.resize(file.count * key_bytes(file.element));
  read_array_data(file, s.bytes.data());
  s.offsets = {s.bytes.data(), key_bytes(file.element), file.count};
  try {
    check_segment_offsets(s.offsets, key_count);
  } catch (const Error& e) {
    throw Error("segments file '" + path + "': " + e.what());
  }
  return s;
}

// `in_place` says whether this pair may be the same file (--in-place given for OUT/IN or
// VOUT/VIN); crossed pairs such as OUT/VIN are always refused. "-" is standard input as an input
// and standard output as an output: never the same.
void refuse_same(const std::string& output, const std::string& output_name,
                 const std::string& input, const std::string& input_name,
                 std::optional<bool> in_place) {
  if (output == standard_stream || input == standard_stream) return;
  if (!same_file(output, input)) return;
  if (in_place.value_or(false)) return;
  throw Error(output_name + " '" + output + "' is the same file as " + input_name + " '" + input +
              "'" + (in_place ? " (pass --in-place to replace it)" : ""));
}

// Before reading gigabytes: would the keys and values fit the device at all?
void check_device_capacity(const Context& ctx, const ArrayFile& keys, const ArrayFile* values) {
  const DeviceInfo& d = ctx.device_info();
  const uint64_t key_bytes_total = keys.count * key_bytes(keys.element);
  const uint64_t value_bytes_total = values ? values->count * key_bytes(values->element) : 0;
  auto too_large = [&](const std::string& what) {
    return Error(std::to_string(keys.count) + " elements are too large for the device '" + d.name +
                 "': " + what);
  };
  if (key_bytes_total > d.max_buffer_bytes || value_bytes_total > d.max_buffer_bytes)
    throw too_large(std::to_string(std::max(key_bytes_total, value_bytes_total)) +
                    " bytes in one buffer, but its largest buffer is " +
                    std::to_string(d.max_buffer_bytes) + " bytes");
  if (d.device_local_bytes && key_bytes_total + value_bytes_total > d.device_local_bytes)
    throw too_large(std::to_string(key_bytes_total + value_bytes_total) +
                    " bytes of keys and values, but it has " +
                    std::to_string(d.device_local_bytes) + " bytes of device memory");
}

// A file the sort writes, for the checks made before any work.
struct PlannedFile {
  std::string name;  // as messages name it: "the output file 'out'"
  fs::path path;     // a file in its directory (whose file system holds it)
  uint64_t bytes;    // its final size
};

// Refuses files that cannot be written whole: one beyond the file-size limit (ulimit -f), or
// those of one file system together beyond its free space (each named with its size).
void check_planned_files(const std::vector<PlannedFile>& files) {
  const uint64_t size_limit = file_size_limit();
  for (const PlannedFile& file : files)
    if (file.bytes > size_limit)
      throw Error(file.name + " would be " + std::to_string(file.bytes) +
                  " bytes, more than the file-size limit of " + std::to_string(size_limit) +
                  " bytes (ulimit -f)");
  std::map<uint64_t, std::vector<const PlannedFile*>> by_file_system;
  for (const PlannedFile& file : files) by_file_system[file_system_of(file.path)].push_back(&file);
  for (const auto& [file_system, group] : by_file_system) {
    uint64_t needed = 0;
    for (const PlannedFile* file : group) needed += file->bytes;
    const uint64_t free_bytes = free_disk_bytes(group.front()->path);
    if (needed <= free_bytes) continue;
    std::string names;
    for (size_t i = 0; i < group.size(); ++i) {
      if (i) names += i + 1 == group.size() ? " and " : ", ";
      names += group[i]->name;
      if (group.size() > 1) names += " (" + std::to_string(group[i]->bytes) + " bytes)";
    }
    throw Error("not enough disk space for " + names + ": " +
                (group.size() > 1 ? "they need " + std::to_string(needed) + " bytes together"
                                  : "it needs " + std::to_string(needed) + " bytes") +
                ", " + std::to_string(free_bytes) + " are free");
  }
}

// What the arguments say before any file is opened (names first: a typo should not cost a
// device start-up).
struct SortSettings {
  std::optional<KeyType> declared_key, declared_value;
  SortOptions options;
  uint64_t host_limit = 0;
  bool with_values = false, segmented = false, with_indices = false;
  // Plain sorts take any count (beyond gpusort::max_elements out of core); segmented sorts and
  // argsort sort in core, at most max_elements.
  bool plain() const { return !segmented && !with_indices; }
};

SortSettings parse_settings(const SortArguments& a) {
  SortSettings s;
  s.declared_key = optional_type(a.type, "--type");
  s.declared_value = optional_type(a.value_type, "--value-type");
  s.options.descending = a.descending;
  s.options.algorithm = parse_algorithm(a.algorithm);
  s.options.kernels = parse_kernel_path(a.kernels);
  s.options.begin_bit = a.begin_bit;
  s.options.end_bit = a.end_bit;
  if (!a.device_memory_limit.empty())
    s.options.device_memory_limit = parse_bytes(a.device_memory_limit, "--device-memory-limit");
  s.host_limit = a.host_memory_limit.empty()
                     ? default_host_memory_limit()
                     : parse_bytes(a.host_memory_limit, "--host-memory-limit");

  s.with_values = !a.values_in.empty();
  if (s.with_values && a.values_out.empty())
    throw Error(
        "--values needs --values-out VOUT: where to write the values in their sorted order");
  if (!s.with_values && !a.values_out.empty())
    throw Error("--values-out needs --values VIN: the values to carry along with the keys");
  if (!s.with_values && !a.value_type.empty()) throw Error("--value-type needs --values VIN");
  s.segmented = !a.segments.empty(), s.with_indices = !a.indices_out.empty();
  if (!s.segmented && !a.segment_type.empty())
    throw Error("--segment-type needs --segments OFFSETS");
  return s;
}

// An output never silently replaces an input.
void refuse_overlaps(const SortArguments& a, const SortSettings& s) {
  refuse_same(a.out, "OUT", a.in, "IN", a.in_place);
  if (s.with_values) {
    refuse_same(a.values_out, "VOUT", a.values_in, "VIN", a.in_place);
    refuse_same(a.out, "OUT", a.values_in, "VIN", std::nullopt);
    refuse_same(a.values_out, "VOUT", a.in, "IN", std::nullopt);
    if (a.in == standard_stream && a.values_in == standard_stream)
      throw Error("IN and VIN are both '-': only one of them can be standard input");
    if (a.out == standard_stream && a.values_out == standard_stream)
      throw Error("OUT and VOUT are both '-': only one of them can be standard output");
    if (same_file(a.out, a.values_out))
      throw Error("OUT and VOUT are the same file '" + a.out + "'");
  }
  if (s.segmented) {
    refuse_same(a.out, "OUT", a.segments, "OFFSETS", std::nullopt);
    if (s.with_values) refuse_same(a.values_out, "VOUT", a.segments, "OFFSETS", std::nullopt);
    if (a.segments == standard_stream &&
        (a.in == standard_stream || (s.with_values && a.values_in == standard_stream)))
      throw Error("OFFSETS is '-' like another input: only one of them can be standard input");
  }
  if (s.with_indices) {
    refuse_same(a.indices_out, "IDX", a.in, "IN", std::nullopt);
    if (s.with_values) refuse_same(a.indices_out, "IDX", a.values_in, "VIN", std::nullopt);
    if (s.segmented) refuse_same(a.indices_out, "IDX", a.segments, "OFFSETS", std::nullopt);
    if (a.indices_out == standard_stream &&
        (a.out == standard_stream || (s.with_values && a.values_out == standard_stream)))
      throw Error("IDX is '-' like another output: only one of them can be standard output");
    if (same_file(a.indices_out, a.out))
      throw Error("OUT and IDX are the same file '" + a.out + "'");
    if (s.with_values && same_file(a.indices_out, a.values_out))
      throw Error("VOUT and IDX are the same file '" + a.values_out + "'");
  }
}

// The input files, opened and checked (the segments read whole).
struct SortInputs {
  ArrayFile keys;
  std::optional<ArrayFile> values;
  std::optional<Segments> segments;
};

SortInputs open_inputs(const SortArguments& a, const SortSettings& s) {
  SortInputs in{open_array_file(a.in, "keys file", s.declared_key, "--type", s.plain()), {}, {}};
  if (s.with_values) {
    in.values =
        open_array_file(a.values_in, "values file", s.declared_value, "--value-type", s.plain());
    if (in.values->count != in.keys.count)
      throw Error("key/value count mismatch: keys file '" + a.in + "' holds " +
                  std::to_string(in.keys.count) + " elements but values file '" + a.values_in +
                  "' holds " + std::to_string(in.values->count));
  }
  if (s.segmented) in.segments = read_segments(a.segments, a.segment_type, in.keys.count);
  return in;
}

Context create_context(const SortArguments& a, const SortOptions& options, uint64_t count) {
  ContextOptions context_options;
  context_options.device = a.device;
  // Fewer keys than any device sorts with the CUDA pass by itself: a device without it is made
  // faster (ContextOptions::kernels).
  const KernelPath kernels = requested_kernel_path(options.kernels);
  context_options.kernels =
      kernels == KernelPath::automatic && count < smallest_cuda_n() ? KernelPath::spirv : kernels;
  return Context::create(context_options);
}

// How the sort moves its data, decided on the device.
struct SortPlan {
  uint32_t key_size = 0, value_size = 0;
  uint64_t array_bytes = 0;
  uint64_t run = 0;            // elements per sorted run (the key count: in core)
  bool through_files = false;  // the runs wait in temporary files
};

SortPlan plan_sort(const SortArguments& a, const SortSettings& s, const SortInputs& in,
                   Context& ctx) {
  if (!s.plain() && (!a.device_memory_limit.empty() || !a.host_memory_limit.empty()))
    throw Error(std::string(s.segmented ? "--segments" : "--indices-out") +
                " sorts in device memory: --device-memory-limit and --host-memory-limit apply "
                "to plain sorts");
  if (!s.plain()) check_device_capacity(ctx, in.keys, in.values ? &*in.values : nullptr);
  SortPlan p;
  p.key_size = key_bytes(in.keys.element);
  p.value_size = in.values ? key_bytes(in.values->element) : 0;
  p.array_bytes = in.keys.count * (p.key_size + p.value_size);
  // In core when the array fits the device (budget), else out of core: sorted runs merged on the
  // CPU, waiting in host memory, or in temporary files beside OUT beyond the host budget.
  p.run = s.plain() ? max_run_elements(ctx, in.keys.element, p.value_size, in.keys.count, s.options)
                    : in.keys.count;
  p.through_files = p.run < in.keys.count && p.array_bytes > s.host_limit;
  return p;
}

// The outputs of one sort, in the command's OutputSet.
struct SortOutputs {
  PendingOutput* keys = nullptr;
  PendingOutput* values = nullptr;   // with --values
  PendingOutput* indices = nullptr;  // with --indices-out
  KeyType index_type = KeyType::u32;
};

// Created before the work so that an unwritable destination is reported first.
SortOutputs add_outputs(OutputSet& outputs, const SortArguments& a, const SortSettings& s,
                        const SortInputs& in) {
  SortOutputs out;
  out.keys = &outputs.add(a.out, "output file");
  if (s.with_values) out.values = &outputs.add(a.values_out, "values output file");
  if (s.with_indices) out.indices = &outputs.add(a.indices_out, "indices output file");
  // The permutation: u32 while every index fits, in IN's format.
  out.index_type = in.keys.count < (uint64_t(1) << 32) ? KeyType::u32 : KeyType::u64;
  return out;
}

// Every file written must fit the file-size limit and, with the others on its file system, the
// free space: refused before any work, after an unwritable destination.
void check_written_files(const SortArguments& a, const SortInputs& in, const SortPlan& plan,
                         const SortOutputs& out) {
  const ArrayFile& keys = in.keys;
  std::vector<PlannedFile> files;
  auto output = [&](const PendingOutput* to, const std::string& name, const std::string& path,
                    FileFormat format, KeyType element) {
    if (to && !to->is_stream())
      files.push_back({name + " '" + path + "'", to->temporary_path(),
                       array_file_bytes(format, element, keys.count)});
  };
  output(out.keys, "the output file", a.out, keys.format, keys.element);
  if (in.values)
    output(out.values, "the values output file", a.values_out, in.values->format,
           in.values->element);
  output(out.indices, "the indices output file", a.indices_out, keys.format, out.index_type);
  if (plan.through_files) {
    const fs::path beside = parent_directory(fs::absolute(a.out)) / "runs";
    files.push_back({"the keys' sorted runs", beside, keys.count * plan.key_size});
    if (in.values)
      files.push_back({"the values' sorted runs", beside, keys.count * plan.value_size});
  }
  check_planned_files(files);
}

// Readers and writers of the files from a byte offset, each byte counted for the progress line.
struct CountedStreams {
  Progress& progress;
  HostReader reader(ArrayReader& from, uint64_t base) const {
    return HostReader(
        [&progress = progress, &from, base](uint64_t offset, void* to, uint64_t bytes) {
          from.read(base + offset, to, bytes);
          progress.add(bytes);
        });
  }
  template <class To>
  HostWriter writer(To& to, uint64_t base) const {
    return HostWriter(
        [&progress = progress, &to, base](uint64_t offset, const void* from, uint64_t bytes) {
          to.write_at(base + offset, from, bytes);
          progress.add(bytes);
        });
  }
  HostStream stream(ArrayReader& from, PendingOutput& to) const {
    return HostStream{reader(from, 0), writer(to, 0)};
  }
};

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// Out of core through files: runs sorted on the device into temporary files beside OUT, then
// merged from there (mapped: the page cache holds what it can) into the outputs. The stages of
// all runs together.
SortTimings sort_through_files(Context& ctx, const SortArguments& a, const SortInputs& in,
                               const SortPlan& plan, const SortOutputs& out,
                               const CountedStreams& io, ArrayReader& key_reader,
                               std::optional<ArrayReader>& value_reader, SortOptions options) {
  const ArrayFile& keys = in.keys;
  const uint32_t key_size = plan.key_size, value_size = plan.value_size;
  const uint64_t run = plan.run;
  const fs::path beside = parent_directory(fs::absolute(a.out));
  ScratchFile key_runs(beside, "sorted runs");
  std::optional<ScratchFile> value_runs;
  if (in.values) value_runs.emplace(beside, "sorted runs");
  SortTimings stages, total{.bytes = plan.array_bytes, .runs = 0};
  const auto started_runs = std::chrono::steady_clock::now();
  for (uint64_t base = 0; base < keys.count; base += run) {
    const uint64_t length = std::min(run, keys.count - base);
    options.timings = &stages;
    sort_streamed(
        ctx, keys.element, length,
        HostStream{io.reader(key_reader, base * key_size), io.writer(key_runs, base * key_size)},
        value_size,
        in.values ? HostStream{io.reader(*value_reader, base * value_size),
                               io.writer(*value_runs, base * value_size)}
                  : HostStream{},
        options);
    total.read_ms += stages.read_ms, total.upload_ms += stages.upload_ms;
    total.sort_gpu_ms += stages.sort_gpu_ms, total.download_ms += stages.download_ms;
    total.write_ms += stages.write_ms, ++total.runs;
  }
  // Test hook (cli_test.cpp): a pause between the runs and the merge, for a signal to land.
  if (const char* pause = std::getenv("GPUSORT_TEST_MERGE_DELAY_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoll(pause)));
  const auto merging = std::chrono::steady_clock::now();
  const char* key_data = key_runs.map(keys.count * key_size);
  const char* value_data = in.values ? value_runs->map(keys.count * value_size) : nullptr;
  std::vector<SortedRun> runs;
  for (uint64_t base = 0; base < keys.count; base += run)
    runs.push_back({key_data + base * key_size,
                    value_data ? value_data + base * value_size : nullptr,
                    std::min(run, keys.count - base)});
  merge_sorted_runs(keys.element, value_size, runs, io.writer(*out.keys, 0),
                    in.values ? io.writer(*out.values, 0) : HostWriter{}, options);
  total.merge_ms = ms_since(merging);
  total.total_ms = ms_since(started_runs);
  return total;
}

// The sort itself. The files stream straight into gpusort's staging memory and out of it again,
// on several threads: no host copy of the arrays is made in core (standard input and output
// excepted). Every byte is read before any is written. Returns the stages' times.
SortTimings sort_files(Context& ctx, const SortArguments& a, const SortSettings& s,
                       const SortInputs& in, const SortPlan& plan, const SortOutputs& out) {
  const ArrayFile& keys = in.keys;
  SortOptions options = s.options;
  ArrayReader key_reader(keys);
  std::optional<ArrayReader> value_reader;
  if (in.values) value_reader.emplace(*in.values);
  out.keys->write_header(keys.format, keys.element, keys.count);
  if (in.values) out.values->write_header(in.values->format, in.values->element, in.values->count);
  if (out.indices) out.indices->write_header(keys.format, out.index_type, keys.count);
  Progress progress(!a.quiet && ::isatty(STDERR_FILENO),
                    plan.array_bytes * (plan.through_files ? 3 : 2), plan.array_bytes,
                    progress_delay());
  const CountedStreams io{progress};
  SortTimings stages;
  options.timings = &stages;
  try {
    if (s.segmented || s.with_indices) {
      PendingOutput* index_output = out.indices;
      sort_segments_streamed(
          ctx, keys.element, keys.count, io.stream(key_reader, *out.keys), plan.value_size,
          in.values ? io.stream(*value_reader, *out.values) : HostStream{},
          in.segments ? in.segments->offsets : SegmentOffsets{},
          index_output
              ? HostWriter([index_output](uint64_t offset, const void* from, uint64_t bytes) {
                  index_output->write_at(offset, from, bytes);
                })
              : HostWriter{},
          key_bytes(out.index_type), options);
    } else if (!plan.through_files) {
      sort_streamed(ctx, keys.element, keys.count, io.stream(key_reader, *out.keys),
                    plan.value_size,
                    in.values ? io.stream(*value_reader, *out.values) : HostStream{}, options);
    } else {
      stages = sort_through_files(ctx, a, in, plan, out, io, key_reader, value_reader, options);
    }
  } catch (const Error& e) {
    if (e.result() == VK_ERROR_OUT_OF_DEVICE_MEMORY || e.result() == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw Error(std::to_string(keys.count) + " elements are too large for the device '" +
                      ctx.device_info().name + "' (" + e.what() + ")",
                  e.result());
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("not enough host memory to sort " + std::to_string(keys.count) + " elements (" +
                std::to_string(plan.array_bytes) + " bytes) on the device '" +
                ctx.device_info().name + "'" +
                (plan.run < keys.count ? ": lower --host-memory-limit to keep the sorted runs in "
                                         "temporary files"
                                       : ""));
  }
  progress.finish(ctx.validation_messages() == 0);
  if (ctx.validation_messages() != 0)
    throw Error("the Vulkan validation layer reported " +
                std::to_string(ctx.validation_messages()) +
                " message(s) (printed above); no output written");
  return stages;
}

// --timings: each stage's time on standard error.
struct StageTimes {
  double device_ms, flush_ms, commit_ms, total_ms;
};
void print_timings(const SortTimings& stages, const StageTimes& t, bool through_files) {
  const double mb = double(stages.bytes) / 1e6;
  std::fprintf(stderr,
               "gpusort: timings (%.1f MB each way)\n"
               "  device    %10.3f ms  Vulkan instance and device\n"
               "  read      %10.3f ms  files -> staging memory, during the upload\n"
               "  upload    %10.3f ms  until the sort could start, read included\n"
               "  sort      %10.3f ms  GPU time\n"
               "  download  %10.3f ms  from the sort's end, write included\n"
               "  write     %10.3f ms  staging memory -> temporary files, during the download\n"
               "  flush     %10.3f ms  fsync of the outputs\n"
               "  commit    %10.3f ms  streams written, files renamed into place\n",
               mb, t.device_ms, stages.read_ms, stages.upload_ms, stages.sort_gpu_ms,
               stages.download_ms, stages.write_ms, t.flush_ms, t.commit_ms);
  if (stages.runs > 1)
    std::fprintf(stderr,
                 "  merge     %10.3f ms  out of core: %llu sorted runs merged on the CPU%s\n",
                 stages.merge_ms, static_cast<unsigned long long>(stages.runs),
                 through_files ? ", from temporary files" : "");
  std::fprintf(stderr, "  total     %10.3f ms\n", t.total_ms);
}

// Every check that can be made is made before any output exists: the arguments, the inputs, the
// device's capacity, the outputs' directories, sizes and free space; then the sort, then the
// outputs committed together.
void run_sort(const SortArguments& a) {
  const SortSettings s = parse_settings(a);
  refuse_overlaps(a, s);
  const SortInputs in = open_inputs(a, s);

  const auto started = std::chrono::steady_clock::now();
  Context ctx = create_context(a, s.options, in.keys.count);
  StageTimes times{.device_ms = ms_since(started)};
  const SortPlan plan = plan_sort(a, s, in, ctx);
  OutputSet outputs;
  const SortOutputs out = add_outputs(outputs, a, s, in);
  check_written_files(a, in, plan, out);

  const SortTimings stages = sort_files(ctx, a, s, in, plan, out);

  const auto flushing = std::chrono::steady_clock::now();
  out.keys->finish();
  if (out.values) out.values->finish();
  if (out.indices) out.indices->finish();
  times.flush_ms = ms_since(flushing);
  const auto committing = std::chrono::steady_clock::now();
  outputs.commit();
  times.commit_ms = ms_since(committing);
  if (a.timings) {
    times.total_ms = ms_since(started);
    print_timings(stages, times, plan.through_files);
  }
}

// ---- gpusort topk IN OUT -k K ----
//
// The k smallest (--largest: largest) keys of IN, sorted, ties by position: the first k of `gpusort
// sort` of the same input and options (per segment with --segments: each segment's first
// min(k, its length), one after another). The inputs are read whole, then checked like the sort's
// (the same refusals of overlapping files, counts and segment offsets); only the k results are
// written, in IN's format.
struct TopKArguments {
  SortArguments sort;  // the sort's options and files (descending: --largest)
  uint64_t k = 0;
};

void run_topk(const TopKArguments& t) {
  const SortArguments& a = t.sort;
  const SortSettings s = parse_settings(a);
  refuse_overlaps(a, s);
  SortInputs in{open_array_file(a.in, "keys file", s.declared_key, "--type"), {}, {}};
  if (s.with_values) {
    in.values = open_array_file(a.values_in, "values file", s.declared_value, "--value-type");
    if (in.values->count != in.keys.count)
      throw Error("key/value count mismatch: keys file '" + a.in + "' holds " +
                  std::to_string(in.keys.count) + " elements but values file '" + a.values_in +
                  "' holds " + std::to_string(in.values->count));
  }
  if (s.segmented) in.segments = read_segments(a.segments, a.segment_type, in.keys.count);
  const uint64_t n = in.keys.count, k = t.k;
  if (!s.segmented && k > n)
    throw Error("-k " + std::to_string(k) + " is more than the " + std::to_string(n) +
                " keys in keys file '" + a.in + "'");
  const uint64_t results = s.segmented ? topk_segments_count(in.segments->offsets, k) : k;

  const auto started = std::chrono::steady_clock::now();
  Context ctx = create_context(a, s.options, n);
  check_device_capacity(ctx, in.keys, in.values ? &*in.values : nullptr);
  OutputSet outputs;
  SortOutputs out = add_outputs(outputs, a, s, in);
  {
    std::vector<PlannedFile> files;
    auto planned = [&](const PendingOutput* to, const std::string& name, const std::string& path,
                       FileFormat format, KeyType element) {
      if (to && !to->is_stream())
        files.push_back({name + " '" + path + "'", to->temporary_path(),
                         array_file_bytes(format, element, results)});
    };
    planned(out.keys, "the output file", a.out, in.keys.format, in.keys.element);
    if (in.values)
      planned(out.values, "the values output file", a.values_out, in.values->format,
              in.values->element);
    planned(out.indices, "the indices output file", a.indices_out, in.keys.format,
            out.index_type);
    check_planned_files(files);
  }

  const uint32_t key_size = key_bytes(in.keys.element);
  const uint32_t value_size = in.values ? key_bytes(in.values->element) : 0;
  const uint32_t index_size = key_bytes(out.index_type);
  std::vector<char> keys(n * key_size), values(n * value_size);
  read_array_data(in.keys, keys.data());
  if (in.values) read_array_data(*in.values, values.data());
  std::vector<char> keys_out(results * key_size), values_out(results * value_size),
      indices(s.with_indices ? results * index_size : 0);
  SortTimings stages;
  SortOptions options = s.options;
  options.timings = &stages;
  void* values_in = in.values ? values.data() : nullptr;
  void* values_to = in.values ? values_out.data() : nullptr;
  void* indices_to = s.with_indices ? indices.data() : nullptr;
  if (s.segmented)
    topk_segments_raw(ctx, in.keys.element, n, keys.data(), in.segments->offsets, k,
                      keys_out.data(), value_size, values_in, values_to, indices_to, index_size,
                      options);
  else
    topk_raw(ctx, in.keys.element, n, keys.data(), k, keys_out.data(), value_size, values_in,
             values_to, indices_to, index_size, options);
  if (ctx.validation_messages() != 0)
    throw Error("the Vulkan validation layer reported " +
                std::to_string(ctx.validation_messages()) +
                " message(s) (printed above); no output written");
  out.keys->write_array(in.keys.format, in.keys.element, keys_out.data(), results);
  if (in.values)
    out.values->write_array(in.values->format, in.values->element, values_out.data(), results);
  if (out.indices) out.indices->write_array(in.keys.format, out.index_type, indices.data(), results);
  outputs.commit();
  if (a.timings)
    std::fprintf(stderr, "gpusort: top-k of %llu keys, k = %llu: %.3f ms in all, %.3f ms GPU\n",
                 static_cast<unsigned long long>(n), static_cast<unsigned long long>(k),
                 ms_since(started), stages.sort_gpu_ms);
}

const CLI::Validator non_empty_path(
    [](const std::string& path) {
      return path.empty() ? std::string("an empty path names no file") : std::string();
    },
    "PATH");

CommandRegistration registration([](CLI::App& app) {
  auto args = std::make_shared<SortArguments>();
  auto* cmd =
      app.add_subcommand("sort", "Sort an array file (raw little-endian or .npy) on the GPU");
  cmd->footer(
      "IN is read as .npy when it starts with the npy magic, else as a raw little-endian array.\n"
      "OUT is written in IN's format; outputs appear only when complete, keys and values\n"
      "together (and IDX). '-' reads standard input (IN or VIN) or writes standard output (OUT or "
      "VOUT);\n"
      "an existing FIFO or device as OUT or VOUT is written into directly.\n"
      "Types: u32 i32 f32 u64 i64 f64 (floats in IEEE-754 totalOrder).\n"
      "Under mpirun with several ranks the ranks sort IN together, each on its own GPU\n"
      "(docs/distributed.md).");
  cmd->add_option("IN", args->in, "Keys to sort ('-': standard input)")
      ->required()
      ->check(non_empty_path);
  cmd->add_option("OUT", args->out, "Where to write the sorted keys ('-': standard output)")
      ->required()
      ->check(non_empty_path);
  cmd->add_option("-t,--type", args->type,
                  "Key type (required for raw IN; must match a .npy dtype)");
  cmd->add_option("--values", args->values_in, "Values to carry along with the keys (VIN)")
      ->check(non_empty_path);
  cmd->add_option("--values-out", args->values_out,
                  "Where to write the values in sorted order (VOUT)")
      ->check(non_empty_path);
  cmd->add_option(
      "--value-type", args->value_type,
      "Value element type: u32 or u64 (any of the key types works; required for raw VIN, must "
      "match a .npy dtype)");
  cmd->add_flag("-d,--descending", args->descending, "Sort in descending order (still stable)");
  std::string algorithms;
  for (const std::string& name : gpusort::algorithm_names())
    algorithms += (algorithms.empty() ? "" : ", ") + name;
  cmd->add_option("-a,--algorithm", args->algorithm, "One of: " + algorithms)
      ->capture_default_str();
  cmd->add_option("--kernels", args->kernels,
                  "Onesweep's pass kernels: auto (CUDA through VK_NVX_binary_import where the "
                  "device has it; GPUSORT_KERNELS), spirv or cuda")
      ->capture_default_str();
  cmd->add_option("--device", args->device,
                  "Device index or name substring (default: GPUSORT_DEVICE, else the best device)");
  cmd->add_option("--begin-bit", args->begin_bit, "First key bit (of the radix order) to sort by");
  cmd->add_option("--end-bit", args->end_bit, "One past the last key bit to sort by (0: all)");
  cmd->add_flag("--in-place", args->in_place, "Allow OUT to be IN (and VOUT to be VIN)");
  cmd->add_option("--segments", args->segments,
                  "Sort each segment on its own: S + 1 CSR offsets (OFFSETS, .npy or raw, u32 or "
                  "u64), non-decreasing from 0 to the key count")
      ->check(non_empty_path);
  cmd->add_option("--segment-type", args->segment_type,
                  "Offset type of a raw OFFSETS file: u32 or u64 (must match a .npy dtype)");
  cmd->add_option("--indices-out", args->indices_out,
                  "Also write the stable sorting permutation (IDX: u32, in IN's format): the "
                  "input position of each output element")
      ->check(non_empty_path);
  cmd->add_option("--device-memory-limit", args->device_memory_limit,
                  "Device memory the sort may use (BYTES, with K, M, G or T: powers of 1024; "
                  "default: the device's). Larger arrays are sorted out of core: in runs that "
                  "fit, merged on the CPU");
  cmd->add_option("--host-memory-limit", args->host_memory_limit,
                  "Host memory for an out-of-core sort's sorted runs (BYTES, as above; default: "
                  "half the physical memory); beyond it the runs go to temporary files beside "
                  "OUT");
  cmd->add_flag("-q,--quiet", args->quiet,
                "No progress line (shown on a terminal for sorts longer than about 2 s)");
  cmd->add_flag("--timings", args->timings,
                "Print the time of each stage (device, read, upload, sort, download, write, "
                "flush, commit) to standard error");
  cmd->callback([args] {
    // Under mpirun with several ranks (and a CLI built with MPI), the ranks sort IN together.
    if (collective_sort() && collective_sort()(*args)) return;
    run_sort(*args);
  });
});

CommandRegistration topk_registration([](CLI::App& app) {
  auto args = std::make_shared<TopKArguments>();
  SortArguments& a = args->sort;
  auto* cmd = app.add_subcommand(
      "topk", "The k smallest (or largest) keys of an array file, sorted, on the GPU");
  cmd->footer(
      "Writes the first k of `gpusort sort` of IN (the same options: ties by position, the\n"
      "float order, bit ranges): in IN's format, with their values (--values) or positions\n"
      "(--indices-out). With --segments, each segment's first min(k, its length), one after\n"
      "another. Outputs appear only when complete, together. Types: u32 i32 f32 u64 i64 f64.");
  cmd->add_option("IN", a.in, "Keys ('-': standard input)")->required()->check(non_empty_path);
  cmd->add_option("OUT", a.out, "Where to write the k keys ('-': standard output)")
      ->required()
      ->check(non_empty_path);
  cmd->add_option("-k", args->k, "How many keys (0 to the key count)")->required();
  cmd->add_flag("-l,--largest", a.descending, "The k largest (the first k of the descending sort)");
  cmd->add_option("-t,--type", a.type, "Key type (required for raw IN; must match a .npy dtype)");
  cmd->add_option("--values", a.values_in, "Values of the keys (VIN)")->check(non_empty_path);
  cmd->add_option("--values-out", a.values_out, "Where to write the k keys' values (VOUT)")
      ->check(non_empty_path);
  cmd->add_option("--value-type", a.value_type,
                  "Value element type (required for raw VIN, must match a .npy dtype)");
  cmd->add_option("--indices-out", a.indices_out,
                  "Also write the k keys' positions in IN (IDX: u32, in IN's format)")
      ->check(non_empty_path);
  cmd->add_option("--segments", a.segments,
                  "Top k of each segment: S + 1 CSR offsets (OFFSETS, .npy or raw, u32 or u64)")
      ->check(non_empty_path);
  cmd->add_option("--segment-type", a.segment_type,
                  "Offset type of a raw OFFSETS file: u32 or u64 (must match a .npy dtype)");
  std::string algorithms;
  for (const std::string& name : gpusort::algorithm_names())
    algorithms += (algorithms.empty() ? "" : ", ") + name;
  cmd->add_option("-a,--algorithm", a.algorithm, "The sort of the k keys: one of " + algorithms)
      ->capture_default_str();
  cmd->add_option("--device", a.device,
                  "Device index or name substring (default: GPUSORT_DEVICE, else the best device)");
  cmd->add_option("--begin-bit", a.begin_bit, "First key bit (of the radix order) to compare");
  cmd->add_option("--end-bit", a.end_bit, "One past the last key bit to compare (0: all)");
  cmd->add_flag("--timings", a.timings, "Print the time taken to standard error");
  cmd->callback([args] { run_topk(*args); });
});

}  // namespace
}  // namespace gpusort::cli
