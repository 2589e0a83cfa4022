// The C API (include/gpusort/gpusort.h): thin wrappers over the C++ faces that turn every
// exception into a gpusort_status plus a thread-local message.
#include <gpusort/gpusort.h>

#include <gpusort/gpusort.hpp>

#include "vulkan/context_impl.hpp"

#include <new>
#include <optional>
#include <string>

static_assert(GPUSORT_KEY_F64 == uint32_t(gpusort::KeyType::f64));
static_assert(GPUSORT_ALGORITHM_ODD_EVEN == uint32_t(gpusort::Algorithm::odd_even));
static_assert(GPUSORT_ALGORITHM_PARTITION == uint32_t(gpusort::Algorithm::partition));

struct gpusort_context {
  gpusort::Context context;
};

struct gpusort_sorter {
  gpusort::Sorter sorter;
};

struct gpusort_segmented_sorter {
  gpusort::SegmentedSorter sorter;
};

namespace {

thread_local std::string last_error;
thread_local VkResult last_vk_result = VK_SUCCESS;

gpusort_status fail(gpusort_status status, const std::string& message, VkResult result) {
  last_error = message;
  last_vk_result = result;
  return status;
}

// Runs `body`, mapping what it throws onto a status; clears the thread's error on success.
template <class Body>
gpusort_status guarded(Body&& body) {
  try {
    body();
    last_error.clear();
    last_vk_result = VK_SUCCESS;
    return GPUSORT_OK;
  } catch (const gpusort::Error& e) {
    const VkResult r = e.result();
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
      return fail(GPUSORT_ERROR_OUT_OF_MEMORY, e.what(), r);
    if (r != VK_SUCCESS) return fail(GPUSORT_ERROR_VULKAN, e.what(), r);
    if (std::string(e.what()).find("not available yet") != std::string::npos)
      return fail(GPUSORT_ERROR_NOT_AVAILABLE, e.what(), r);
    return fail(GPUSORT_ERROR_INVALID_ARGUMENT, e.what(), r);
  } catch (const std::bad_alloc&) {
    return fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory", VK_SUCCESS);
  } catch (const std::exception& e) {
    return fail(GPUSORT_ERROR_UNKNOWN, e.what(), VK_SUCCESS);
  } catch (...) {
    return fail(GPUSORT_ERROR_UNKNOWN, "unknown exception", VK_SUCCESS);
  }
}

void require(const void* pointer, const char* what) {
  if (!pointer) throw gpusort::Error(std::string(what) + " is NULL");
}

gpusort::KeyType key_type(gpusort_key_type t) {
  if (uint32_t(t) > uint32_t(GPUSORT_KEY_F64))
    throw gpusort::Error("invalid gpusort_key_type " + std::to_string(int(t)));
  return gpusort::KeyType(t);
}

gpusort::Algorithm algorithm(gpusort_algorithm a) {
  if (uint32_t(a) > uint32_t(GPUSORT_ALGORITHM_PARTITION))
    throw gpusort::Error("invalid gpusort_algorithm " + std::to_string(int(a)));
  return gpusort::Algorithm(a);
}

gpusort::SortOptions sort_options(const gpusort_sort_options* o) {
  if (!o) return {};
  return {o->descending != 0, algorithm(o->algorithm), o->begin_bit, o->end_bit};
}

gpusort::BufferRef ref(gpusort_buffer_ref r) { return {r.buffer, r.offset}; }

}  // namespace

extern "C" {

gpusort_status gpusort_context_create(const gpusort_context_options* options,
                                      gpusort_context** out_context) {
  return guarded([&] {
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
  return guarded([&] {
    require(out_context, "out_context");
    *out_context = nullptr;
    *out_context = new gpusort_context{
        gpusort::Context::wrap(instance, physical_device, device, queue, queue_family_index)};
  });
}

void gpusort_context_destroy(gpusort_context* context) { delete context; }

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

gpusort_status gpusort_sort(gpusort_context* context, gpusort_key_type type, void* keys,
                            uint64_t n, const gpusort_sort_options* options) {
  return guarded([&] {
    require(context, "context");
    if (n) require(keys, "keys");
    gpusort::sort_raw(context->context, key_type(type), keys, n, nullptr, 0,
                      sort_options(options));
  });
}

gpusort_status gpusort_sort_by_key(gpusort_context* context, gpusort_key_type type, void* keys,
                                   void* values, uint32_t value_bytes, uint64_t n,
                                   const gpusort_sort_options* options) {
  return guarded([&] {
    require(context, "context");
    if (value_bytes != 4 && value_bytes != 8)
      throw gpusort::Error("values must be 4 or 8 bytes wide, not " + std::to_string(value_bytes));
    if (n) {
      require(keys, "keys");
      require(values, "values");
    }
    gpusort::sort_raw(context->context, key_type(type), keys, n, values, value_bytes,
                      sort_options(options));
  });
}

gpusort_status gpusort_sorter_create(gpusort_context* context, const gpusort_sorter_config* config,
                                     gpusort_sorter** out_sorter) {
  return guarded([&] {
    require(out_sorter, "out_sorter");
    *out_sorter = nullptr;
    require(context, "context");
    require(config, "config");
    gpusort::SorterConfig c{key_type(config->key), config->value_bytes,
                            algorithm(config->algorithm), config->descending != 0,
                            config->begin_bit, config->end_bit, config->count_bytes};
    *out_sorter = new gpusort_sorter{gpusort::Sorter(context->context, c)};
  });
}

void gpusort_sorter_destroy(gpusort_sorter* sorter) { delete sorter; }

gpusort_status gpusort_sorter_scratch_bytes(const gpusort_sorter* sorter, uint64_t max_n,
                                            uint64_t* out_bytes) {
  return guarded([&] {
    require(sorter, "sorter");
    require(out_bytes, "out_bytes");
    *out_bytes = sorter->sorter.scratch_bytes(max_n);
  });
}

gpusort_status gpusort_sorter_record(const gpusort_sorter* sorter, VkCommandBuffer command_buffer,
                                     gpusort_buffer_ref keys, gpusort_buffer_ref values,
                                     gpusort_buffer_ref scratch, uint64_t n) {
  return guarded([&] {
    require(sorter, "sorter");
    sorter->sorter.record(command_buffer, ref(keys), ref(values), ref(scratch), n);
  });
}

gpusort_status gpusort_sorter_record_indirect(const gpusort_sorter* sorter,
                                              VkCommandBuffer command_buffer,
                                              gpusort_buffer_ref keys, gpusort_buffer_ref values,
                                              gpusort_buffer_ref scratch, gpusort_buffer_ref count,
                                              uint64_t max_n) {
  return guarded([&] {
    require(sorter, "sorter");
    sorter->sorter.record_indirect(command_buffer, ref(keys), ref(values), ref(scratch),
                                   ref(count), max_n);
  });
}

gpusort_status gpusort_sort_segments(gpusort_context* context, gpusort_key_type type, uint64_t n,
                                     const void* keys, void* keys_out, void* values,
                                     uint32_t value_bytes, const void* offsets,
                                     uint32_t offset_bytes, uint64_t offset_count, void* indices,
                                     uint32_t index_bytes, const gpusort_sort_options* options) {
  return guarded([&] {
    require(context, "context");
    if (n) require(keys, "keys");
    if (n && value_bytes) require(values, "values");
    if (!values) value_bytes = 0;
    gpusort::SegmentOffsets o;
    if (offsets || offset_count) o = {offsets, offset_bytes, offset_count};
    gpusort::sort_segments_raw(context->context, key_type(type), n, keys, keys_out, value_bytes,
                               values, o, indices, indices ? index_bytes : 0,
                               sort_options(options));
  });
}

gpusort_status gpusort_argsort(gpusort_context* context, gpusort_key_type type, const void* keys,
                               uint64_t n, void* indices, uint32_t index_bytes,
                               const gpusort_sort_options* options) {
  return guarded([&] {
    require(context, "context");
    if (n) {
      require(keys, "keys");
      require(indices, "indices");
    }
    if (index_bytes != 4 && index_bytes != 8)
      throw gpusort::Error("argsort indices are 4 or 8 bytes wide, not " +
                           std::to_string(index_bytes));
    gpusort::sort_segments_raw(context->context, key_type(type), n, keys, nullptr, 0, nullptr, {},
                               indices, index_bytes, sort_options(options));
  });
}

gpusort_status gpusort_segmented_sorter_create(gpusort_context* context,
                                               const gpusort_segmented_sorter_config* config,
                                               gpusort_segmented_sorter** out_sorter) {
  return guarded([&] {
    require(out_sorter, "out_sorter");
    *out_sorter = nullptr;
    require(context, "context");
    require(config, "config");
    gpusort::SegmentedSorterConfig c{key_type(config->key), config->value_bytes,
                                     config->offset_bytes, algorithm(config->algorithm),
                                     config->descending != 0, config->begin_bit, config->end_bit};
    *out_sorter = new gpusort_segmented_sorter{gpusort::SegmentedSorter(context->context, c)};
  });
}

void gpusort_segmented_sorter_destroy(gpusort_segmented_sorter* sorter) { delete sorter; }

gpusort_status gpusort_segmented_sorter_scratch_bytes(const gpusort_segmented_sorter* sorter,
                                                      uint64_t max_n, uint64_t max_segments,
                                                      uint64_t* out_bytes) {
  return guarded([&] {
    require(sorter, "sorter");
    require(out_bytes, "out_bytes");
    *out_bytes = sorter->sorter.scratch_bytes(max_n, max_segments);
  });
}

gpusort_status gpusort_segmented_sorter_record(const gpusort_segmented_sorter* sorter,
                                               VkCommandBuffer command_buffer,
                                               gpusort_buffer_ref keys, gpusort_buffer_ref values,
                                               gpusort_buffer_ref offsets,
                                               gpusort_buffer_ref indices,
                                               gpusort_buffer_ref scratch, uint64_t n,
                                               uint64_t segments) {
  return guarded([&] {
    require(sorter, "sorter");
    sorter->sorter.record(command_buffer, ref(keys), ref(values), ref(offsets), ref(indices),
                          ref(scratch), n, segments);
  });
}

gpusort_status gpusort_segmented_sorter_record_indirect(
    const gpusort_segmented_sorter* sorter, VkCommandBuffer command_buffer,
    gpusort_buffer_ref keys, gpusort_buffer_ref values, gpusort_buffer_ref offsets,
    gpusort_buffer_ref indices, gpusort_buffer_ref scratch, gpusort_buffer_ref segment_count,
    uint64_t max_n, uint64_t max_segments) {
  return guarded([&] {
    require(sorter, "sorter");
    sorter->sorter.record_indirect(command_buffer, ref(keys), ref(values), ref(offsets),
                                   ref(indices), ref(scratch), ref(segment_count), max_n,
                                   max_segments);
  });
}

const char* gpusort_last_error(void) { return last_error.c_str(); }
VkResult gpusort_last_vk_result(void) { return last_vk_result; }

const char* gpusort_status_name(gpusort_status status) {
  switch (status) {
    case GPUSORT_OK: return "GPUSORT_OK";
    case GPUSORT_ERROR_INVALID_ARGUMENT: return "GPUSORT_ERROR_INVALID_ARGUMENT";
    case GPUSORT_ERROR_NOT_AVAILABLE: return "GPUSORT_ERROR_NOT_AVAILABLE";
    case GPUSORT_ERROR_VULKAN: return "GPUSORT_ERROR_VULKAN";
    case GPUSORT_ERROR_OUT_OF_MEMORY: return "GPUSORT_ERROR_OUT_OF_MEMORY";
    case GPUSORT_ERROR_UNKNOWN: return "GPUSORT_ERROR_UNKNOWN";
  }
  return "invalid gpusort_status";
}

}  // extern "C"
