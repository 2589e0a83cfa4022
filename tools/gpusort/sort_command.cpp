// gpusort sort IN OUT: sorts a raw or .npy array file (optionally with a values file carried
// along) on the GPU and writes the result in the input's format. Everything that can be checked
// is checked before any output exists, and outputs appear only complete (array_file.hpp).
#include <gpusort/gpusort.hpp>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "array_file.hpp"
#include "commands.hpp"

namespace gpusort::cli {

uint64_t parse_bytes(const std::string& text, const std::string& option) {
  auto bad = [&] {
    return Error(option + " '" + text +
                 "': expected a byte count such as 1048576, 512M or 8G (K, M, G, T: powers of "
                 "1024)");
  };
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19) throw bad();
  uint64_t value = std::stoull(text.substr(0, digits));
  std::string suffix = text.substr(digits);
  for (auto& c : suffix) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() > 1 && (suffix.substr(1) == "B" || suffix.substr(1) == "IB"))
    suffix = suffix.substr(0, 1);
  int shift = 0;
  if (suffix == "K") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else if (suffix == "T") shift = 40;
  else if (!suffix.empty() && suffix != "B") throw bad();
  if (shift && value > (~uint64_t(0) >> shift)) throw bad();
  return value << shift;
}

namespace {

namespace fs = std::filesystem;

struct SortArguments {
  std::string in, out;
  std::string type, values_in, values_out, value_type;
  bool descending = false;
  std::string algorithm = "automatic";
  std::string device;
  uint32_t begin_bit = 0, end_bit = 0;
  bool in_place = false;
  bool timings = false;
  std::string segments, segment_type, indices_out;
  std::string device_memory_limit, host_memory_limit;
  bool quiet = false;
};

// A progress line on standard error, for sorts that take longer than about two seconds, while
// standard error is a terminal (and --quiet is not given): bytes read and written so far against
// what the sort moves in all.
class Progress {
 public:
  // total: the bytes read and written in all; array: the array's bytes (for the message).
  Progress(bool enabled, uint64_t total, uint64_t array) : total_(total), array_(array) {
    if (enabled && total) thread_ = std::thread([this] { show(); });
  }
  ~Progress() { finish(); }
  // Clears the line (when one was shown); nothing is shown after this.
  void finish() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void add(uint64_t bytes) { done_.fetch_add(bytes, std::memory_order_relaxed); }

 private:
  void show() {
    using namespace std::chrono_literals;
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, 2s, [&] { return stop_; })) return;
    do {
      const double share = std::min(1.0, double(done_.load()) / double(total_));
      const bool gigabytes = array_ >= 1000000000;
      std::fprintf(stderr, "\rgpusort: sorting %.1f %s: %3.0f%%",
                   double(array_) / (gigabytes ? 1e9 : 1e6), gigabytes ? "GB" : "MB",
                   share * 100);
      std::fflush(stderr);
    } while (!wake_.wait_for(lock, 500ms, [&] { return stop_; }));
    std::fprintf(stderr, "\r%60s\r", "");
    std::fflush(stderr);
  }
  const uint64_t total_, array_;
  std::atomic<uint64_t> done_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

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

void run_sort(const SortArguments& a) {
  // Names first: a typo should not cost a device start-up.
  const std::optional<KeyType> declared_key = optional_type(a.type, "--type");
  const std::optional<KeyType> declared_value = optional_type(a.value_type, "--value-type");
  SortOptions options;
  options.descending = a.descending;
  options.algorithm = parse_algorithm(a.algorithm);
  options.begin_bit = a.begin_bit;
  options.end_bit = a.end_bit;
  if (!a.device_memory_limit.empty())
    options.device_memory_limit = parse_bytes(a.device_memory_limit, "--device-memory-limit");
  const uint64_t host_limit = a.host_memory_limit.empty()
                                  ? default_host_memory_limit()
                                  : parse_bytes(a.host_memory_limit, "--host-memory-limit");

  const bool with_values = !a.values_in.empty();
  if (with_values && a.values_out.empty())
    throw Error(
        "--values needs --values-out VOUT: where to write the values in their sorted order");
  if (!with_values && !a.values_out.empty())
    throw Error("--values-out needs --values VIN: the values to carry along with the keys");
  if (!with_values && !a.value_type.empty()) throw Error("--value-type needs --values VIN");
  const bool segmented = !a.segments.empty(), with_indices = !a.indices_out.empty();
  if (!segmented && !a.segment_type.empty())
    throw Error("--segment-type needs --segments OFFSETS");

  // An output never silently replaces an input.
  refuse_same(a.out, "OUT", a.in, "IN", a.in_place);
  if (with_values) {
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
  if (segmented) {
    refuse_same(a.out, "OUT", a.segments, "OFFSETS", std::nullopt);
    if (with_values) refuse_same(a.values_out, "VOUT", a.segments, "OFFSETS", std::nullopt);
    if (a.segments == standard_stream &&
        (a.in == standard_stream || (with_values && a.values_in == standard_stream)))
      throw Error("OFFSETS is '-' like another input: only one of them can be standard input");
  }
  if (with_indices) {
    refuse_same(a.indices_out, "IDX", a.in, "IN", std::nullopt);
    if (with_values) refuse_same(a.indices_out, "IDX", a.values_in, "VIN", std::nullopt);
    if (segmented) refuse_same(a.indices_out, "IDX", a.segments, "OFFSETS", std::nullopt);
    if (a.indices_out == standard_stream &&
        (a.out == standard_stream || (with_values && a.values_out == standard_stream)))
      throw Error("IDX is '-' like another output: only one of them can be standard output");
    if (same_file(a.indices_out, a.out))
      throw Error("OUT and IDX are the same file '" + a.out + "'");
    if (with_values && same_file(a.indices_out, a.values_out))
      throw Error("VOUT and IDX are the same file '" + a.values_out + "'");
  }

  // Plain sorts take any count (beyond gpusort::max_elements out of core); segmented sorts and
  // argsort sort in core, at most max_elements.
  const bool any_count = !segmented && !with_indices;
  ArrayFile keys = open_array_file(a.in, "keys file", declared_key, "--type", any_count);
  std::optional<ArrayFile> values;
  if (with_values) {
    values =
        open_array_file(a.values_in, "values file", declared_value, "--value-type", any_count);
    if (values->count != keys.count)
      throw Error("key/value count mismatch: keys file '" + a.in + "' holds " +
                  std::to_string(keys.count) + " elements but values file '" + a.values_in +
                  "' holds " + std::to_string(values->count));
  }

  std::optional<Segments> segments;
  if (segmented) segments = read_segments(a.segments, a.segment_type, keys.count);

  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  };
  const auto started = clock::now();
  ContextOptions context_options;
  context_options.device = a.device;
  Context ctx = Context::create(context_options);
  const double device_ms = since(started);
  const bool plain = !segmented && !with_indices;
  if (!plain && (!a.device_memory_limit.empty() || !a.host_memory_limit.empty()))
    throw Error(std::string(segmented ? "--segments" : "--indices-out") +
                " sorts in device memory: --device-memory-limit and --host-memory-limit apply "
                "to plain sorts");
  if (!plain) check_device_capacity(ctx, keys, values ? &*values : nullptr);
  const uint32_t key_size = key_bytes(keys.element);
  const uint32_t value_size = values ? key_bytes(values->element) : 0;
  const uint64_t array_bytes = keys.count * (key_size + value_size);
  // In core when the array fits the device (budget), else out of core: sorted runs merged on the
  // CPU, waiting in host memory, or in temporary files beside OUT beyond the host budget.
  const uint64_t run =
      plain ? max_run_elements(ctx, keys.element, value_size, keys.count, options) : keys.count;
  const bool through_files = run < keys.count && array_bytes > host_limit;
  // Created before the work so that an unwritable destination is reported first.
  OutputSet outputs;
  PendingOutput& key_output = outputs.add(a.out, "output file");
  PendingOutput* value_output =
      with_values ? &outputs.add(a.values_out, "values output file") : nullptr;
  PendingOutput* index_output =
      with_indices ? &outputs.add(a.indices_out, "indices output file") : nullptr;
  {
    // The outputs' temporary files (and the runs') must fit the disk: refused before any work,
    // after an unwritable destination.
    uint64_t needed = keys.count * key_size + (through_files ? array_bytes : 0);
    if (values && same_file(parent_directory(a.out), parent_directory(a.values_out)))
      needed += keys.count * value_size;
    const uint64_t free_bytes = key_output.is_stream() ? ~uint64_t(0) : free_disk_bytes(a.out);
    if (needed > free_bytes)
      throw Error("not enough disk space for the output file '" + a.out + "': " +
                  (through_files ? "it and the sorted runs need " : "it needs ") +
                  std::to_string(needed) + " bytes, " + std::to_string(free_bytes) +
                  " are free");
  }

  // The permutation: u32 while every index fits, in IN's format.
  const KeyType index_type = keys.count < (uint64_t(1) << 32) ? KeyType::u32 : KeyType::u64;

  // The files stream straight into gpusort's staging memory and out of it again, on several
  // threads: no host copy of the arrays is made in core (standard input and output excepted).
  // Every byte is read before any is written.
  ArrayReader key_reader(keys);
  std::optional<ArrayReader> value_reader;
  if (values) value_reader.emplace(*values);
  key_output.write_header(keys.format, keys.element, keys.count);
  if (values) value_output->write_header(values->format, values->element, values->count);
  if (index_output) index_output->write_header(keys.format, index_type, keys.count);
  Progress progress(!a.quiet && ::isatty(STDERR_FILENO),
                    array_bytes * (through_files ? 3 : 2), array_bytes);
  auto reader = [&progress](ArrayReader& from, uint64_t base) {
    return HostReader([&progress, &from, base](uint64_t offset, void* to, uint64_t bytes) {
      from.read(base + offset, to, bytes);
      progress.add(bytes);
    });
  };
  auto writer = [&progress](auto& to, uint64_t base) {
    return HostWriter([&progress, &to, base](uint64_t offset, const void* from, uint64_t bytes) {
      to.write_at(base + offset, from, bytes);
      progress.add(bytes);
    });
  };
  auto stream = [&](ArrayReader& from, PendingOutput& to) {
    return HostStream{reader(from, 0), writer(to, 0)};
  };
  SortTimings stages;
  options.timings = &stages;
  try {
    if (segmented || with_indices) {
      sort_segments_streamed(
          ctx, keys.element, keys.count, stream(key_reader, key_output),
          value_size, values ? stream(*value_reader, *value_output) : HostStream{},
          segments ? segments->offsets : SegmentOffsets{},
          index_output ? HostWriter([index_output](uint64_t offset, const void* from,
                                                   uint64_t bytes) {
            index_output->write_at(offset, from, bytes);
          })
                       : HostWriter{},
          key_bytes(index_type), options);
    } else if (!through_files) {
      sort_streamed(ctx, keys.element, keys.count, stream(key_reader, key_output), value_size,
                    values ? stream(*value_reader, *value_output) : HostStream{}, options);
    } else {
      // Runs sorted on the device into temporary files beside OUT, then merged from there
      // (mapped: the page cache holds what it can) into the outputs.
      const fs::path beside = parent_directory(fs::absolute(a.out));
      ScratchFile key_runs(beside, "sorted runs");
      std::optional<ScratchFile> value_runs;
      if (values) value_runs.emplace(beside, "sorted runs");
      SortTimings total{.bytes = array_bytes, .runs = 0};
      const auto started_runs = clock::now();
      for (uint64_t base = 0; base < keys.count; base += run) {
        const uint64_t length = std::min(run, keys.count - base);
        options.timings = &stages;
        sort_streamed(
            ctx, keys.element, length,
            HostStream{reader(key_reader, base * key_size), writer(key_runs, base * key_size)},
            value_size,
            values ? HostStream{reader(*value_reader, base * value_size),
                                writer(*value_runs, base * value_size)}
                   : HostStream{},
            options);
        total.read_ms += stages.read_ms, total.upload_ms += stages.upload_ms;
        total.sort_gpu_ms += stages.sort_gpu_ms, total.download_ms += stages.download_ms;
        total.write_ms += stages.write_ms, ++total.runs;
      }
      // Test hook (cli_test.cpp): a pause between the runs and the merge, for a signal to land.
      if (const char* pause = std::getenv("GPUSORT_TEST_MERGE_DELAY_MS"))
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoll(pause)));
      const auto merging = clock::now();
      const char* key_data = key_runs.map(keys.count * key_size);
      const char* value_data = values ? value_runs->map(keys.count * value_size) : nullptr;
      std::vector<SortedRun> runs;
      for (uint64_t base = 0; base < keys.count; base += run)
        runs.push_back({key_data + base * key_size,
                        value_data ? value_data + base * value_size : nullptr,
                        std::min(run, keys.count - base)});
      merge_sorted_runs(keys.element, value_size, runs, writer(key_output, 0),
                        values ? writer(*value_output, 0) : HostWriter{}, options);
      total.merge_ms = since(merging);
      total.total_ms = since(started_runs);
      stages = total;
    }
  } catch (const Error& e) {
    if (e.result() == VK_ERROR_OUT_OF_DEVICE_MEMORY || e.result() == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw Error(std::to_string(keys.count) + " elements are too large for the device '" +
                      ctx.device_info().name + "' (" + e.what() + ")",
                  e.result());
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("not enough host memory to sort " + std::to_string(keys.count) + " elements (" +
                std::to_string(array_bytes) + " bytes) on the device '" +
                ctx.device_info().name + "'" +
                (run < keys.count ? ": lower --host-memory-limit to keep the sorted runs in "
                                    "temporary files"
                                  : ""));
  }
  progress.finish();
  if (ctx.validation_messages() != 0)
    throw Error("the Vulkan validation layer reported " +
                std::to_string(ctx.validation_messages()) +
                " message(s) (printed above); no output written");

  const auto flushing = clock::now();
  key_output.finish();
  if (values) value_output->finish();
  if (index_output) index_output->finish();
  const double flush_ms = since(flushing);
  const auto committing = clock::now();
  outputs.commit();
  const double commit_ms = since(committing);
  if (a.timings) {
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
                 mb, device_ms, stages.read_ms, stages.upload_ms, stages.sort_gpu_ms,
                 stages.download_ms, stages.write_ms, flush_ms, commit_ms);
    if (stages.runs > 1)
      std::fprintf(stderr,
                   "  merge     %10.3f ms  out of core: %llu sorted runs merged on the CPU%s\n",
                   stages.merge_ms, static_cast<unsigned long long>(stages.runs),
                   through_files ? ", from temporary files" : "");
    std::fprintf(stderr, "  total     %10.3f ms\n", since(started));
  }
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
      "together (and IDX). '-' reads standard input (IN or VIN) or writes standard output (OUT or VOUT);\n"
      "an existing FIFO or device as OUT or VOUT is written into directly.\n"
      "Types: u32 i32 f32 u64 i64 f64 (floats in IEEE-754 totalOrder).");
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
  cmd->add_option("-a,--algorithm", args->algorithm,
                  "automatic, onesweep, radix_reduce_scan, bitonic, odd_even or partition")
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
  cmd->callback([args] { run_sort(*args); });
});

}  // namespace
}  // namespace gpusort::cli
