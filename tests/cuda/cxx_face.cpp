// The C++ face's options that the C face lacks (numpy_float_order, sorted_keys, keys_in), for
// cuda_face_test.cu, which nvcc compiles as C++17 (the C++ face's header needs C++20).
#include <gpusort/cuda.hpp>
#include <string>

// Sorts (argsort: index_bytes in value_bytes) as the C face does, with those options; "" or the
// error's text.
std::string cxx_face_call(bool argsort, int key_type, void* keys, void* values,
                          unsigned value_bytes, unsigned long long n, void* stream, bool descending,
                          unsigned begin_bit, unsigned end_bit, const unsigned* count,
                          bool numpy_float_order, void* sorted_keys, const void* keys_in) {
  gpusort::cuda::Options options;
  options.descending = descending;
  options.begin_bit = begin_bit;
  options.end_bit = end_bit;
  options.count = count;
  options.numpy_float_order = numpy_float_order;
  options.sorted_keys = sorted_keys;
  options.keys_in = keys_in;
  const auto type = gpusort::KeyType(key_type);
  auto* s = static_cast<gpusort::cuda::Stream>(stream);
  try {
    if (argsort)
      gpusort::cuda::argsort_raw(type, keys, values, value_bytes, n, s, options);
    else
      gpusort::cuda::sort_raw(type, keys, values, value_bytes, n, s, options);
  } catch (const gpusort::Error& e) {
    return e.what();
  }
  return "";
}
