// gpusort sort IN OUT: sorts a raw or .npy array file (optionally with a values file carried
// along) on the GPU and writes the result in the input's format. Everything that can be checked
// is checked before any output exists, and outputs appear only complete (array_file.hpp).
#include <gpusort/gpusort.hpp>
#include <chrono>
#include <cstdio>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "array_file.hpp"
#include "commands.hpp"

namespace gpusort::cli {
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
};


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
  if (key_bytes_total > d.max_allocation_bytes || value_bytes_total > d.max_allocation_bytes)
    throw too_large(std::to_string(std::max(key_bytes_total, value_bytes_total)) +
                    " bytes in one buffer, but its largest allocation is " +
                    std::to_string(d.max_allocation_bytes) + " bytes");
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

  ArrayFile keys = open_array_file(a.in, "keys file", declared_key, "--type");
  std::optional<ArrayFile> values;
  if (with_values) {
    values = open_array_file(a.values_in, "values file", declared_value, "--value-type");
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
  check_device_capacity(ctx, keys, values ? &*values : nullptr);

  // Created before the work so that an unwritable destination is reported first.
  OutputSet outputs;
  PendingOutput& key_output = outputs.add(a.out, "output file");
  PendingOutput* value_output =
      with_values ? &outputs.add(a.values_out, "values output file") : nullptr;
  PendingOutput* index_output =
      with_indices ? &outputs.add(a.indices_out, "indices output file") : nullptr;
  // The permutation: u32 while every index fits, in IN's format.
  const KeyType index_type = keys.count < (uint64_t(1) << 32) ? KeyType::u32 : KeyType::u64;

  // The files stream straight into gpusort's staging memory and out of it again, on several
  // threads: no host copy of the arrays is made (standard input and output excepted). Every
  // byte is read before any is written.
  ArrayReader key_reader(keys);
  std::optional<ArrayReader> value_reader;
  if (values) value_reader.emplace(*values);
  key_output.write_header(keys.format, keys.element, keys.count);
  if (values) value_output->write_header(values->format, values->element, values->count);
  if (index_output) index_output->write_header(keys.format, index_type, keys.count);
  auto stream = [](ArrayReader& reader, PendingOutput& output) {
    return HostStream{
        [&reader](uint64_t offset, void* to, uint64_t bytes) { reader.read(offset, to, bytes); },
        [&output](uint64_t offset, const void* from, uint64_t bytes) {
          output.write_at(offset, from, bytes);
        }};
  };
  SortTimings stages;
  options.timings = &stages;
  try {
    if (segmented || with_indices)
      sort_segments_streamed(
          ctx, keys.element, keys.count, stream(key_reader, key_output),
          values ? key_bytes(values->element) : 0,
          values ? stream(*value_reader, *value_output) : HostStream{},
          segments ? segments->offsets : SegmentOffsets{},
          index_output ? HostWriter([index_output](uint64_t offset, const void* from,
                                                   uint64_t bytes) {
            index_output->write_at(offset, from, bytes);
          })
                       : HostWriter{},
          key_bytes(index_type), options);
    else
      sort_streamed(ctx, keys.element, keys.count, stream(key_reader, key_output),
                    values ? key_bytes(values->element) : 0,
                    values ? stream(*value_reader, *value_output) : HostStream{}, options);
  } catch (const Error& e) {
    if (e.result() == VK_ERROR_OUT_OF_DEVICE_MEMORY || e.result() == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw Error(std::to_string(keys.count) + " elements are too large for the device '" +
                      ctx.device_info().name + "' (" + e.what() + ")",
                  e.result());
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("not enough host memory to stage " + std::to_string(keys.count) +
                " elements for the device '" + ctx.device_info().name + "'");
  }
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
                 "  commit    %10.3f ms  streams written, files renamed into place\n"
                 "  total     %10.3f ms\n",
                 mb, device_ms, stages.read_ms, stages.upload_ms, stages.sort_gpu_ms,
                 stages.download_ms, stages.write_ms, flush_ms, commit_ms, since(started));
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
  cmd->add_flag("--timings", args->timings,
                "Print the time of each stage (device, read, upload, sort, download, write, "
                "flush, commit) to standard error");
  cmd->callback([args] { run_sort(*args); });
});

}  // namespace
}  // namespace gpusort::cli
