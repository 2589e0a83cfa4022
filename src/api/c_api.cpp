// The C API (include/gpusort/gpusort.h): thin wrappers over the C++ faces that turn every
// exception into a gpusort_status plus a thread-local message.
#include <gpusort/gpusort.h>

#include <cstddef>
#include <cstdint>
#include <gpusort/gpusort.hpp>
#include <initializer_list>
#include <new>
#include <string>
#include <string_view>

#include "dispatch/dispatch.hpp"
#include <gpusort/cuda.hpp>
#include "vulkan/context_impl.hpp"

static_assert(GPUSORT_KEY_F64 == uint32_t(gpusort::KeyType::f64));
static_assert(GPUSORT_ALGORITHM_ONESWEEP == uint32_t(gpusort::Algorithm::onesweep));

struct gpusort_context {
  gpusort::Context context;
};

struct gpusort_sorter {
  gpusort::Sorter sorter;
};

struct gpusort_segmented_sorter {
  gpusort::SegmentedSorter sorter;
};

struct gpusort_topk_selector {
  gpusort::TopKSelector selector;
};

namespace {

thread_local std::string last_error;
thread_local VkResult last_vk_result = VK_SUCCESS;

gpusort_status fail(gpusort_status status, const std::string& message, VkResult result) {
  last_error = message;
  last_vk_result = result;
  return status;
}

// Names of the C++ layer's own calls that its messages start with; the C function's name takes
// their place. Whatever else the C++ layer would name in C++ terms (its types, parameters and
// streams) is checked here first, in the C function's terms.
constexpr std::string_view cxx_callers[] = {"Sorter::record: ",
                                            "Sorter::record_indirect: ",
                                            "SegmentedSorter::record: ",
                                            "SegmentedSorter::record_indirect: ",
                                            "Sorter: ",
                                            "SegmentedSorter: ",
                                            "Context::wrap: ",
                                            "sort_segments_streamed: ",
                                            "sort_segments_raw: "};

std::string message_of(const char* function, std::string_view what) {
  for (std::string_view caller : cxx_callers)
    if (what.starts_with(caller)) {
      what.remove_prefix(caller.size());
      break;
    }
  return std::string(function) + ": " + std::string(what);
}

// Runs `body`, mapping what it throws onto a status and a message that starts with `function`, the
// C function's name; clears the thread's error on success.
template <class Body>
gpusort_status guarded(const char* function, Body&& body) {
  try {
    body();
    last_error.clear();
    last_vk_result = VK_SUCCESS;
    return GPUSORT_OK;
  } catch (const gpusort::Error& e) {
    const VkResult r = e.result();
    const std::string message = message_of(function, e.what());
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
      return fail(GPUSORT_ERROR_OUT_OF_MEMORY, message, r);
    if (r != VK_SUCCESS) return fail(GPUSORT_ERROR_VULKAN, message, r);
    if (message.find("not available yet") != std::string::npos ||
        message.find("the CUDA face cannot run") != std::string::npos)
      return fail(GPUSORT_ERROR_NOT_AVAILABLE, message, r);
    return fail(GPUSORT_ERROR_INVALID_ARGUMENT, message, r);
  } catch (const std::bad_alloc&) {
    return fail(GPUSORT_ERROR_OUT_OF_MEMORY, message_of(function, "out of host memory"),
                VK_SUCCESS);
  } catch (const std::exception& e) {
    return fail(GPUSORT_ERROR_UNKNOWN, message_of(function, e.what()), VK_SUCCESS);
  } catch (...) {
    return fail(GPUSORT_ERROR_UNKNOWN, message_of(function, "unknown exception"), VK_SUCCESS);
  }
}

[[noreturn]] void invalid(const std::string& message) {
  throw gpusort::Error(message);
}

void require(const void* pointer, const char* what) {
  if (!pointer) invalid(std::string(what) + " is NULL");
}

// The C++ face's top-k errors start with "topk: ", which gives way to the C function's name.
template <class Body>
void without_topk_prefix(Body&& body) {
  try {
    body();
  } catch (const gpusort::Error& e) {
    const std::string_view what = e.what();
    if (!what.starts_with("topk: ")) throw;
    throw gpusort::Error(std::string(what.substr(6)));
  }
}

void require_handle(const void* handle, const char* what) {
  if (!handle) invalid(std::string(what) + " is VK_NULL_HANDLE");
}

// A width parameter (value_bytes, index_bytes, ...): one of `allowed`, spelled out in `expected`.
void check_width(uint32_t bytes, std::initializer_list<uint32_t> allowed, const char* what,
                 const char* expected) {
  for (uint32_t a : allowed)
    if (bytes == a) return;
  invalid(std::string(what) + " must be " + expected + ", not " + std::to_string(bytes));
}

// A host array of `count` elements of `bytes` each: beyond the address space, `count` is wrong
// (and byte counts computed from it would wrap around).
void check_array(uint64_t count, uint64_t bytes, const char* count_name, const char* array) {
  const uint64_t most = uint64_t(PTRDIFF_MAX) / bytes;
  if (count > most)
    invalid(std::string(count_name) + " = " + std::to_string(count) + " is too large: " + array +
            " of " + std::to_string(bytes) + " bytes each would not fit in memory (at most " +
            std::to_string(most) + ")");
}

gpusort::KeyType key_type(gpusort_key_type t, const char* what) {
  if (uint32_t(t) > uint32_t(GPUSORT_KEY_F64))
    invalid(std::string(what) + " " + std::to_string(int(t)) + " is not a gpusort_key_type");
  return gpusort::KeyType(t);
}

gpusort::Algorithm algorithm(gpusort_algorithm a, const char* what) {
  if (uint32_t(a) >= gpusort::algorithm_registry().size())
    invalid(std::string(what) + " " + std::to_string(int(a)) + " is not a gpusort_algorithm");
  return gpusort::Algorithm(a);
}

// begin_bit and end_bit of options or a config (`owner`: "options->", "config->").
void check_bits(gpusort::KeyType key, uint32_t begin_bit, uint32_t end_bit, const char* owner) {
  const uint32_t width = 8 * gpusort::key_bytes(key);
  const uint32_t end = end_bit ? end_bit : width;
  if (end > width || begin_bit >= end)
    invalid(std::string(owner) + "begin_bit = " + std::to_string(begin_bit) + ", " + owner +
            "end_bit = " + std::to_string(end_bit) + ": bits [" + std::to_string(begin_bit) + ", " +
            std::to_string(end) + ") are empty or beyond the " + std::to_string(width) + "-bit " +
            gpusort::to_string(key) + " key");
}

gpusort::SortOptions sort_options(const gpusort_sort_options* o, gpusort::KeyType key) {
  if (!o) return {};
  gpusort::SortOptions options{o->descending != 0, algorithm(o->algorithm, "options->algorithm"),
                               o->begin_bit, o->end_bit};
  check_bits(key, o->begin_bit, o->end_bit, "options->");
  return options;
}

gpusort::cuda::Options cuda_options(const gpusort_cuda_options* o, gpusort::KeyType key) {
  if (!o) return {};
  check_bits(key, o->begin_bit, o->end_bit, "options->");
  return {o->descending != 0, o->begin_bit, o->end_bit, o->count, o->scratch, o->scratch_size};
}

// The values buffer of a record call against the value_bytes its sorter was created with.
void check_values_ref(gpusort_buffer_ref values, uint32_t value_bytes) {
  if (value_bytes == 0 && values.buffer)
    invalid("values.buffer is given, but the sorter was created with value_bytes = 0");
  if (value_bytes != 0 && !values.buffer)
    invalid("values.buffer is VK_NULL_HANDLE, but the sorter was created with value_bytes = " +
            std::to_string(value_bytes));
}

gpusort::BufferRef ref(gpusort_buffer_ref r) {
  return {r.buffer, r.offset};
}

}  // namespace

extern "C" {

gpusort_status gpusort_context_create(const gpusort_context_options* options,
                                      gpusort_context** out_context) {
  return guarded("gpusort_context_create", [&] {
    require(out_context, "out_context");
    *out_context = nullptr;
    gpusort::ContextOptions o;
    if (options) {
      if (options->device) o.device = options->device;
      o.validation = options->validation != 0;
      o.synchronization_validation = options->synchronization_validation != 0;
    }
    *out_context = new gpusort_context{gpusort::Context::create(o)};
  });
}

gpusort_status gpusort_context_wrap(VkInstance instance, VkPhysicalDevice physical_device,
                                    VkDevice device, VkQueue queue, uint32_t queue_family_index,
                                    gpusort_context** out_context) {
  return guarded("gpusort_context_wrap", [&] {
    require(out_context, "out_context");
    *out_context = nullptr;
    require_handle(instance, "instance");
    require_handle(physical_device, "physical_device");
    require_handle(device, "device");
    require_handle(queue, "queue");
    *out_context = new gpusort_context{
        gpusort::Context::wrap(instance, physical_device, device, queue, queue_family_index)};
  });
}

void gpusort_context_destroy(gpusort_context* context) {
  delete context;
}

VkInstance gpusort_context_instance(const gpusort_context* c) {
  return c ? c->context.impl().instance : VK_NULL_HANDLE;
}
VkPhysicalDevice gpusort_context_physical_device(const gpusort_context* c) {
  return c ? c->context.physical_device() : VK_NULL_HANDLE;
}
VkDevice gpusort_context_device(const gpusort_context* c) {
  return c ? c->context.device() : VK_NULL_HANDLE;
}
VkQueue gpusort_context_queue(const gpusort_context* c) {
  return c ? c->context.queue() : VK_NULL_HANDLE;
}
uint32_t gpusort_context_queue_family_index(const gpusort_context* c) {
  return c ? c->context.queue_family_index() : 0;
}
uint64_t gpusort_context_validation_messages(const gpusort_context* c) {
  return c ? c->context.validation_messages() : 0;
}

void gpusort_context_release_cached_memory(gpusort_context* c) {
  if (c) c->context.release_cached_memory();
}

gpusort_status gpusort_sort(gpusort_context* context, gpusort_key_type type, void* keys, uint64_t n,
                            const gpusort_sort_options* options) {
  return guarded("gpusort_sort", [&] {
    require(context, "context");
    const gpusort::KeyType key = key_type(type, "key_type");
    const gpusort::SortOptions o = sort_options(options, key);
    check_array(n, gpusort::key_bytes(key), "n", "keys");
    if (n) require(keys, "keys");
    gpusort::sort_raw(context->context, key, keys, n, nullptr, 0, o);
  });
}

gpusort_status gpusort_sort_by_key(gpusort_context* context, gpusort_key_type type, void* keys,
                                   void* values, uint32_t value_bytes, uint64_t n,
                                   const gpusort_sort_options* options) {
  return guarded("gpusort_sort_by_key", [&] {
    require(context, "context");
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(value_bytes, {4, 8}, "value_bytes", "4 or 8");
    const gpusort::SortOptions o = sort_options(options, key);
    check_array(n, gpusort::key_bytes(key), "n", "keys");
    check_array(n, value_bytes, "n", "values");
    if (n) {
      require(keys, "keys");
      require(values, "values");
    }
    gpusort::sort_raw(context->context, key, keys, n, values, value_bytes, o);
  });
}

gpusort_status gpusort_sorter_create(gpusort_context* context, const gpusort_sorter_config* config,
                                     gpusort_sorter** out_sorter) {
  return guarded("gpusort_sorter_create", [&] {
    require(out_sorter, "out_sorter");
    *out_sorter = nullptr;
    require(context, "context");
    require(config, "config");
    const gpusort::KeyType key = key_type(config->key, "config->key");
    check_width(config->value_bytes, {0, 4, 8}, "config->value_bytes", "0, 4 or 8");
    check_width(config->count_bytes, {0, 4, 8}, "config->count_bytes", "0, 4 or 8");
    check_bits(key, config->begin_bit, config->end_bit, "config->");
    gpusort::SorterConfig c{key,
                            config->value_bytes,
                            algorithm(config->algorithm, "config->algorithm"),
                            config->descending != 0,
                            config->begin_bit,
                            config->end_bit,
                            config->count_bytes};
    *out_sorter = new gpusort_sorter{gpusort::Sorter(context->context, c)};
  });
}

void gpusort_sorter_destroy(gpusort_sorter* sorter) {
  delete sorter;
}

gpusort_status gpusort_sorter_scratch_bytes(const gpusort_sorter* sorter, uint64_t max_n,
                                            uint64_t* out_bytes) {
  return guarded("gpusort_sorter_scratch_bytes", [&] {
    require(sorter, "sorter");
    require(out_bytes, "out_bytes");
    *out_bytes = sorter->sorter.scratch_bytes(max_n);
  });
}

gpusort_status gpusort_sorter_record(const gpusort_sorter* sorter, VkCommandBuffer command_buffer,
                                     gpusort_buffer_ref keys, gpusort_buffer_ref values,
                                     gpusort_buffer_ref scratch, uint64_t n) {
  return guarded("gpusort_sorter_record", [&] {
    require(sorter, "sorter");
    require_handle(command_buffer, "command_buffer");
    check_values_ref(values, sorter->sorter.config().value_bytes);
    sorter->sorter.record(command_buffer, ref(keys), ref(values), ref(scratch), n);
  });
}

gpusort_status gpusort_sorter_record_indirect(const gpusort_sorter* sorter,
                                              VkCommandBuffer command_buffer,
                                              gpusort_buffer_ref keys, gpusort_buffer_ref values,
                                              gpusort_buffer_ref scratch, gpusort_buffer_ref count,
                                              uint64_t max_n) {
  return guarded("gpusort_sorter_record_indirect", [&] {
    require(sorter, "sorter");
    require_handle(command_buffer, "command_buffer");
    check_values_ref(values, sorter->sorter.config().value_bytes);
    sorter->sorter.record_indirect(command_buffer, ref(keys), ref(values), ref(scratch), ref(count),
                                   max_n);
  });
}

gpusort_status gpusort_sort_segments(gpusort_context* context, gpusort_key_type type, uint64_t n,
                                     const void* keys, void* keys_out, void* values,
                                     uint32_t value_bytes, const void* offsets,
                                     uint32_t offset_bytes, uint64_t offset_count, void* indices,
                                     uint32_t index_bytes, const gpusort_sort_options* options) {
  return guarded("gpusort_sort_segments", [&] {
    require(context, "context");
    const gpusort::KeyType key = key_type(type, "key_type");
    if (values) check_width(value_bytes, {4, 8}, "value_bytes", "4 or 8 (values is not NULL)");
    if (indices) check_width(index_bytes, {4, 8}, "index_bytes", "4 or 8 (indices is not NULL)");
    if (offsets || offset_count)
      check_width(offset_bytes, {4, 8}, "offset_bytes", "4 or 8 (offsets are given)");
    const gpusort::SortOptions o = sort_options(options, key);
    check_array(n, gpusort::key_bytes(key), "n", "keys");
    if (values) check_array(n, value_bytes, "n", "values");
    if (indices) check_array(n, index_bytes, "n", "indices");
    if (offsets || offset_count) check_array(offset_count, offset_bytes, "offset_count", "offsets");
    if (n) require(keys, "keys");
    if (n && value_bytes && !values)
      invalid("values is NULL, but value_bytes is " + std::to_string(value_bytes));
    if (offset_count && !offsets)
      invalid("offsets is NULL, but offset_count is " + std::to_string(offset_count));
    if (offsets && !offset_count)
      invalid(
          "offset_count is 0, but offsets is not NULL (S segments need S + 1 offsets, from 0 "
          "to n = " +
          std::to_string(n) + ")");
    if (n && !keys_out && !values && !indices)
      invalid("keys_out, values and indices are all NULL: nothing to write");
    gpusort::SegmentOffsets segment_offsets;
    if (offsets) segment_offsets = {offsets, offset_bytes, offset_count};
    gpusort::sort_segments_raw(context->context, key, n, keys, keys_out, values ? value_bytes : 0,
                               values, segment_offsets, indices, indices ? index_bytes : 0, o);
  });
}

gpusort_status gpusort_argsort(gpusort_context* context, gpusort_key_type type, const void* keys,
                               uint64_t n, void* indices, uint32_t index_bytes,
                               const gpusort_sort_options* options) {
  return guarded("gpusort_argsort", [&] {
    require(context, "context");
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(index_bytes, {4, 8}, "index_bytes", "4 or 8");
    const gpusort::SortOptions o = sort_options(options, key);
    check_array(n, gpusort::key_bytes(key), "n", "keys");
    check_array(n, index_bytes, "n", "indices");
    if (n) {
      require(keys, "keys");
      require(indices, "indices");
    }
    gpusort::sort_segments_raw(context->context, key, n, keys, nullptr, 0, nullptr, {}, indices,
                               index_bytes, o);
  });
}

gpusort_status gpusort_topk(gpusort_context* context, gpusort_key_type type, uint64_t n,
                            const void* keys, uint64_t k, void* keys_out, const void* values,
                            void* values_out, uint32_t value_bytes, const void* offsets,
                            uint32_t offset_bytes, uint64_t offset_count, void* indices,
                            uint32_t index_bytes, const gpusort_sort_options* options) {
  return guarded("gpusort_topk", [&] {
    require(context, "context");
    const gpusort::KeyType key = key_type(type, "key_type");
    if (values || values_out)
      check_width(value_bytes, {4, 8}, "value_bytes", "4 or 8 (values are given)");
    if (indices) check_width(index_bytes, {4, 8}, "index_bytes", "4 or 8 (indices is not NULL)");
    if (offsets || offset_count)
      check_width(offset_bytes, {4, 8}, "offset_bytes", "4 or 8 (offsets are given)");
    const gpusort::SortOptions o = sort_options(options, key);
    check_array(n, gpusort::key_bytes(key), "n", "keys");
    if (values) check_array(n, value_bytes, "n", "values");
    if (offsets || offset_count) check_array(offset_count, offset_bytes, "offset_count", "offsets");
    if (n) require(keys, "keys");
    if (bool(values) != bool(values_out))
      invalid(values ? "values is given, but values_out is NULL"
                     : "values_out is given, but values is NULL");
    if (offset_count && !offsets)
      invalid("offsets is NULL, but offset_count is " + std::to_string(offset_count));
    if (offsets && !offset_count)
      invalid("offset_count is 0, but offsets is not NULL (S segments need S + 1 offsets, from 0 "
              "to n = " + std::to_string(n) + ")");
    if (n && k && !keys_out && !values_out && !indices)
      invalid("keys_out, values_out and indices are all NULL: nothing to write");
    const uint32_t vb = values ? value_bytes : 0, ib = indices ? index_bytes : 0;
    if (offsets)
      gpusort::topk_segments_raw(context->context, key, n, keys, {offsets, offset_bytes, offset_count},
                                 k, keys_out, vb, values, values_out, indices, ib, o);
    else
      gpusort::topk_raw(context->context, key, n, keys, k, keys_out, vb, values, values_out,
                        indices, ib, o);
  });
}

gpusort_status gpusort_topk_segments_count(const void* offsets, uint32_t offset_bytes,
                                           uint64_t offset_count, uint64_t k,
                                           uint64_t* out_count) {
  return guarded("gpusort_topk_segments_count", [&] {
    require(out_count, "out_count");
    check_width(offset_bytes, {4, 8}, "offset_bytes", "4 or 8");
    if (offset_count) require(offsets, "offsets");
    *out_count = gpusort::topk_segments_count({offsets, offset_bytes, offset_count}, k);
  });
}

gpusort_status gpusort_topk_selector_create(gpusort_context* context,
                                            const gpusort_topk_config* config,
                                            gpusort_topk_selector** out_selector) {
  return guarded("gpusort_topk_selector_create", [&] {
    require(out_selector, "out_selector");
    *out_selector = nullptr;
    require(context, "context");
    require(config, "config");
    const gpusort::KeyType key = key_type(config->key, "config->key");
    check_width(config->value_bytes, {0, 4, 8}, "config->value_bytes", "0, 4 or 8");
    check_bits(key, config->begin_bit, config->end_bit, "config->");
    gpusort::TopKConfig c;
    c.key = key;
    c.value_bytes = config->value_bytes;
    c.largest = config->largest != 0;
    c.begin_bit = config->begin_bit;
    c.end_bit = config->end_bit;
    c.algorithm = algorithm(config->algorithm, "config->algorithm");
    c.offset_bytes = config->offset_bytes ? config->offset_bytes : 4;
    check_width(c.offset_bytes, {4, 8}, "config->offset_bytes", "0, 4 or 8");
    *out_selector = new gpusort_topk_selector{gpusort::TopKSelector(context->context, c)};
  });
}

void gpusort_topk_selector_destroy(gpusort_topk_selector* selector) {
  delete selector;
}

gpusort_status gpusort_topk_selector_scratch_bytes(const gpusort_topk_selector* selector,
                                                   uint64_t max_n, uint64_t k,
                                                   uint64_t* out_bytes) {
  return guarded("gpusort_topk_selector_scratch_bytes", [&] {
    require(selector, "selector");
    require(out_bytes, "out_bytes");
    *out_bytes = selector->selector.scratch_bytes(max_n, k);
  });
}

gpusort_status gpusort_topk_selector_record(
    const gpusort_topk_selector* selector, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref keys_out, gpusort_buffer_ref values_out,
    gpusort_buffer_ref indices, gpusort_buffer_ref scratch, uint64_t n, uint64_t k) {
  return guarded("gpusort_topk_selector_record", [&] {
    require(selector, "selector");
    require_handle(command_buffer, "command_buffer");
    selector->selector.record(command_buffer, ref(keys), ref(values), ref(keys_out),
                              ref(values_out), ref(indices), ref(scratch), n, k);
  });
}

gpusort_status gpusort_topk_selector_segments_scratch_bytes(const gpusort_topk_selector* selector,
                                                            uint64_t max_n, uint64_t max_segments,
                                                            uint64_t k, uint64_t* out_bytes) {
  return guarded("gpusort_topk_selector_segments_scratch_bytes", [&] {
    require(selector, "selector");
    require(out_bytes, "out_bytes");
    *out_bytes = selector->selector.segments_scratch_bytes(max_n, max_segments, k);
  });
}

gpusort_status gpusort_topk_selector_record_segments(
    const gpusort_topk_selector* selector, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref offsets, gpusort_buffer_ref keys_out,
    gpusort_buffer_ref values_out, gpusort_buffer_ref indices, gpusort_buffer_ref scratch,
    uint64_t n, uint64_t segments, uint64_t k) {
  return guarded("gpusort_topk_selector_record_segments", [&] {
    require(selector, "selector");
    require_handle(command_buffer, "command_buffer");
    selector->selector.record_segments(command_buffer, ref(keys), ref(values), ref(offsets),
                                       ref(keys_out), ref(values_out), ref(indices), ref(scratch),
                                       n, segments, k);
  });
}

gpusort_status gpusort_topk_selector_record_indirect(
    const gpusort_topk_selector* selector, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref keys_out, gpusort_buffer_ref values_out,
    gpusort_buffer_ref indices, gpusort_buffer_ref scratch, gpusort_buffer_ref count,
    uint64_t max_n, uint64_t k) {
  return guarded("gpusort_topk_selector_record_indirect", [&] {
    require(selector, "selector");
    require_handle(command_buffer, "command_buffer");
    selector->selector.record_indirect(command_buffer, ref(keys), ref(values), ref(keys_out),
                                       ref(values_out), ref(indices), ref(scratch), ref(count),
                                       max_n, k);
  });
}

gpusort_status gpusort_segmented_sorter_create(gpusort_context* context,
                                               const gpusort_segmented_sorter_config* config,
                                               gpusort_segmented_sorter** out_sorter) {
  return guarded("gpusort_segmented_sorter_create", [&] {
    require(out_sorter, "out_sorter");
    *out_sorter = nullptr;
    require(context, "context");
    require(config, "config");
    const gpusort::KeyType key = key_type(config->key, "config->key");
    check_width(config->value_bytes, {0, 4, 8}, "config->value_bytes", "0, 4 or 8");
    check_width(config->offset_bytes, {4, 8}, "config->offset_bytes", "4 or 8");
    check_bits(key, config->begin_bit, config->end_bit, "config->");
    gpusort::SegmentedSorterConfig c{key,
                                     config->value_bytes,
                                     config->offset_bytes,
                                     algorithm(config->algorithm, "config->algorithm"),
                                     config->descending != 0,
                                     config->begin_bit,
                                     config->end_bit};
    *out_sorter = new gpusort_segmented_sorter{gpusort::SegmentedSorter(context->context, c)};
  });
}

void gpusort_segmented_sorter_destroy(gpusort_segmented_sorter* sorter) {
  delete sorter;
}

gpusort_status gpusort_segmented_sorter_scratch_bytes(const gpusort_segmented_sorter* sorter,
                                                      uint64_t max_n, uint64_t max_segments,
                                                      uint64_t* out_bytes) {
  return guarded("gpusort_segmented_sorter_scratch_bytes", [&] {
    require(sorter, "sorter");
    require(out_bytes, "out_bytes");
    *out_bytes = sorter->sorter.scratch_bytes(max_n, max_segments);
  });
}

gpusort_status gpusort_segmented_sorter_record(
    const gpusort_segmented_sorter* sorter, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref offsets, gpusort_buffer_ref indices,
    gpusort_buffer_ref scratch, uint64_t n, uint64_t segments) {
  return guarded("gpusort_segmented_sorter_record", [&] {
    require(sorter, "sorter");
    require_handle(command_buffer, "command_buffer");
    check_values_ref(values, sorter->sorter.config().value_bytes);
    if (segments == 0 && n != 0)
      invalid("segments is 0, but n is " + std::to_string(n) + " (offsets[segments] must be n)");
    sorter->sorter.record(command_buffer, ref(keys), ref(values), ref(offsets), ref(indices),
                          ref(scratch), n, segments);
  });
}

gpusort_status gpusort_segmented_sorter_record_indirect(
    const gpusort_segmented_sorter* sorter, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref offsets, gpusort_buffer_ref indices,
    gpusort_buffer_ref scratch, gpusort_buffer_ref segment_count, uint64_t max_n,
    uint64_t max_segments) {
  return guarded("gpusort_segmented_sorter_record_indirect", [&] {
    require(sorter, "sorter");
    require_handle(command_buffer, "command_buffer");
    check_values_ref(values, sorter->sorter.config().value_bytes);
    sorter->sorter.record_indirect(command_buffer, ref(keys), ref(values), ref(offsets),
                                   ref(indices), ref(scratch), ref(segment_count), max_n,
                                   max_segments);
  });
}

const char* gpusort_last_error(void) {
  return last_error.c_str();
}
VkResult gpusort_last_vk_result(void) {
  return last_vk_result;
}

gpusort_status gpusort_algorithm_from_name(const char* name, gpusort_algorithm* algorithm) {
  return guarded("gpusort_algorithm_from_name", [&] {
    require(name, "name");
    require(algorithm, "algorithm");
    *algorithm = gpusort_algorithm(gpusort::parse_algorithm(name));
  });
}

const char* gpusort_algorithm_name(uint32_t index) {
  const auto registry = gpusort::algorithm_registry();
  return index < registry.size() ? registry[index].name : nullptr;
}

gpusort_status gpusort_cuda_scratch_bytes(gpusort_key_type type, uint32_t value_bytes, uint64_t n,
                                          const gpusort_cuda_options* options, uint64_t* bytes) {
  return guarded("gpusort_cuda_scratch_bytes", [&] {
    require(bytes, "bytes");
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(value_bytes, {0, 4, 8}, "value_bytes", "0, 4 or 8");
    *bytes = gpusort::cuda::scratch_bytes(key, value_bytes, n, cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_argsort_scratch_bytes(gpusort_key_type type, uint32_t index_bytes,
                                                  uint64_t n, const gpusort_cuda_options* options,
                                                  uint64_t* bytes) {
  return guarded("gpusort_cuda_argsort_scratch_bytes", [&] {
    require(bytes, "bytes");
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(index_bytes, {4, 8}, "index_bytes", "4 or 8");
    *bytes = gpusort::cuda::argsort_scratch_bytes(key, index_bytes, n, cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_sort(gpusort_key_type type, void* keys, void* values,
                                 uint32_t value_bytes, uint64_t n, gpusort_cuda_stream stream,
                                 const gpusort_cuda_options* options) {
  return guarded("gpusort_cuda_sort", [&] {
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(value_bytes, {0, 4, 8}, "value_bytes", "0, 4 or 8");
    const gpusort::cuda::Options o = cuda_options(options, key);
    if (n) require(keys, "keys");
    if (n && value_bytes) require(values, "values");
    gpusort::cuda::sort_raw(key, keys, value_bytes ? values : nullptr, value_bytes, n, stream, o);
  });
}

gpusort_status gpusort_cuda_argsort(gpusort_key_type type, const void* keys, void* indices,
                                    uint32_t index_bytes, uint64_t n, gpusort_cuda_stream stream,
                                    const gpusort_cuda_options* options) {
  return guarded("gpusort_cuda_argsort", [&] {
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(index_bytes, {4, 8}, "index_bytes", "4 or 8");
    const gpusort::cuda::Options o = cuda_options(options, key);
    if (n) {
      require(keys, "keys");
      require(indices, "indices");
    }
    gpusort::cuda::argsort_raw(key, keys, indices, index_bytes, n, stream, o);
  });
}

gpusort_status gpusort_cuda_segmented_scratch_bytes(gpusort_key_type type, uint32_t value_bytes,
                                                    uint64_t n, uint64_t segments,
                                                    const gpusort_cuda_options* options,
                                                    uint64_t* bytes) {
  return guarded("gpusort_cuda_segmented_scratch_bytes", [&] {
    require(bytes, "bytes");
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(value_bytes, {0, 4, 8}, "value_bytes", "0, 4 or 8");
    *bytes = gpusort::cuda::segmented_scratch_bytes(key, value_bytes, n, segments,
                                                    cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_segmented_argsort_scratch_bytes(gpusort_key_type type,
                                                            uint32_t index_bytes, uint64_t n,
                                                            uint64_t segments,
                                                            const gpusort_cuda_options* options,
                                                            uint64_t* bytes) {
  return guarded("gpusort_cuda_segmented_argsort_scratch_bytes", [&] {
    require(bytes, "bytes");
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(index_bytes, {4, 8}, "index_bytes", "4 or 8");
    *bytes = gpusort::cuda::segmented_argsort_scratch_bytes(key, index_bytes, n, segments,
                                                            cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_segmented_sort(gpusort_key_type type, void* keys, void* values,
                                           uint32_t value_bytes, uint64_t n, const void* offsets,
                                           uint32_t offset_bytes, uint64_t segments,
                                           gpusort_cuda_stream stream,
                                           const gpusort_cuda_options* options) {
  return guarded("gpusort_cuda_segmented_sort", [&] {
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(value_bytes, {0, 4, 8}, "value_bytes", "0, 4 or 8");
    check_width(offset_bytes, {4, 8}, "offset_bytes", "4 or 8");
    gpusort::cuda::segmented_sort_raw(key, keys, values, value_bytes, n, offsets, offset_bytes,
                                      segments, stream, cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_segmented_argsort(gpusort_key_type type, const void* keys,
                                              void* indices, uint32_t index_bytes, uint64_t n,
                                              const void* offsets, uint32_t offset_bytes,
                                              uint64_t segments, gpusort_cuda_stream stream,
                                              const gpusort_cuda_options* options) {
  return guarded("gpusort_cuda_segmented_argsort", [&] {
    const gpusort::KeyType key = key_type(type, "key_type");
    check_width(index_bytes, {4, 8}, "index_bytes", "4 or 8");
    check_width(offset_bytes, {4, 8}, "offset_bytes", "4 or 8");
    gpusort::cuda::segmented_argsort_raw(key, keys, indices, index_bytes, n, offsets,
                                         offset_bytes, segments, stream,
                                         cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_topk_scratch_bytes(gpusort_key_type type, uint64_t n, uint64_t k,
                                               const gpusort_cuda_options* options,
                                               uint64_t* bytes) {
  return guarded("gpusort_cuda_topk_scratch_bytes", [&] {
    require(bytes, "bytes");
    const gpusort::KeyType key = key_type(type, "key_type");
    without_topk_prefix([&] {
      *bytes = gpusort::cuda::topk_scratch_bytes(key, n, k, cuda_options(options, key));
    });
  });
}

gpusort_status gpusort_cuda_topk(gpusort_key_type type, const void* keys, uint64_t n, uint64_t k,
                                 void* keys_out, const void* values, void* values_out,
                                 uint32_t value_bytes, void* indices, uint32_t index_bytes,
                                 gpusort_cuda_stream stream, const gpusort_cuda_options* options) {
  return guarded("gpusort_cuda_topk", [&] {
    const gpusort::KeyType key = key_type(type, "key_type");
    without_topk_prefix([&] {
      gpusort::cuda::topk_raw(key, keys, n, k, keys_out, values, values_out, value_bytes, indices,
                              index_bytes, stream, cuda_options(options, key));
    });
  });
}

gpusort_status gpusort_cuda_topk_segments_scratch_bytes(gpusort_key_type type, uint64_t n,
                                                        uint64_t segments, uint64_t k,
                                                        const gpusort_cuda_options* options,
                                                        uint64_t* bytes) {
  return guarded("gpusort_cuda_topk_segments_scratch_bytes", [&] {
    require(bytes, "bytes");
    const gpusort::KeyType key = key_type(type, "key_type");
    *bytes = gpusort::cuda::topk_segments_scratch_bytes(key, n, segments, k,
                                                        cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_topk_segments(gpusort_key_type type, const void* keys, uint64_t n,
                                          const void* offsets, uint32_t offset_bytes,
                                          uint64_t segments, uint64_t k, void* keys_out,
                                          const void* values, void* values_out,
                                          uint32_t value_bytes, void* indices,
                                          uint32_t index_bytes, uint32_t* result_offsets,
                                          gpusort_cuda_stream stream,
                                          const gpusort_cuda_options* options) {
  return guarded("gpusort_cuda_topk_segments", [&] {
    const gpusort::KeyType key = key_type(type, "key_type");
    gpusort::cuda::topk_segments_raw(key, keys, n, offsets, offset_bytes, segments, k, keys_out,
                                     values, values_out, value_bytes, indices, index_bytes,
                                     result_offsets, stream, cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_topk_rows_scratch_bytes(gpusort_key_type type, uint64_t rows,
                                                    uint64_t row_length, uint64_t k,
                                                    const gpusort_cuda_options* options,
                                                    uint64_t* bytes) {
  return guarded("gpusort_cuda_topk_rows_scratch_bytes", [&] {
    require(bytes, "bytes");
    const gpusort::KeyType key = key_type(type, "key_type");
    *bytes = gpusort::cuda::topk_rows_scratch_bytes(key, rows, row_length, k,
                                                    cuda_options(options, key));
  });
}

gpusort_status gpusort_cuda_topk_rows(gpusort_key_type type, const void* keys, uint64_t rows,
                                      uint64_t row_length, uint64_t k, void* keys_out,
                                      const void* values, void* values_out, uint32_t value_bytes,
                                      void* indices, uint32_t index_bytes,
                                      gpusort_cuda_stream stream,
                                      const gpusort_cuda_options* options) {
  return guarded("gpusort_cuda_topk_rows", [&] {
    const gpusort::KeyType key = key_type(type, "key_type");
    gpusort::cuda::topk_rows_raw(key, keys, rows, row_length, k, keys_out, values, values_out,
                                 value_bytes, indices, index_bytes, stream,
                                 cuda_options(options, key));
  });
}

const char* gpusort_status_name(gpusort_status status) {
  switch (status) {
    case GPUSORT_OK:
      return "GPUSORT_OK";
    case GPUSORT_ERROR_INVALID_ARGUMENT:
      return "GPUSORT_ERROR_INVALID_ARGUMENT";
    case GPUSORT_ERROR_NOT_AVAILABLE:
      return "GPUSORT_ERROR_NOT_AVAILABLE";
    case GPUSORT_ERROR_VULKAN:
      return "GPUSORT_ERROR_VULKAN";
    case GPUSORT_ERROR_OUT_OF_MEMORY:
      return "GPUSORT_ERROR_OUT_OF_MEMORY";
    case GPUSORT_ERROR_UNKNOWN:
      return "GPUSORT_ERROR_UNKNOWN";
  }
  return "invalid gpusort_status";
}

}  // extern "C"
