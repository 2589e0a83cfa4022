// The CUDA face's top-k through the C++ face, for topk_cases.cu (nvcc compiles it as C++17; the
// C++ face's header needs C++20): NumPy's float order, which the C face lacks, and the templates.
#include <gpusort/cuda.hpp>
#include <string>

// topk_raw with the options the C face has and numpy_float_order; "" or the error's text.
std::string cxx_topk_call(int key_type, const void* keys, unsigned long long n,
                          unsigned long long k, void* keys_out, const void* values,
                          void* values_out, unsigned value_bytes, void* indices,
                          unsigned index_bytes, void* stream, bool descending, unsigned begin_bit,
                          unsigned end_bit, const unsigned* count, bool numpy_float_order) {
  gpusort::cuda::Options options;
  options.descending = descending;
  options.begin_bit = begin_bit;
  options.end_bit = end_bit;
  options.count = count;
  options.numpy_float_order = numpy_float_order;
  try {
    gpusort::cuda::topk_raw(gpusort::KeyType(key_type), keys, n, k, keys_out, values, values_out,
                            value_bytes, indices, index_bytes,
                            static_cast<gpusort::cuda::Stream>(stream), options);
  } catch (const gpusort::Error& e) {
    return e.what();
  }
  return "";
}

// The templates on f32 keys: topk, topk_by_key (u64 values), topk_indices (u32, keys too).
std::string cxx_topk_templates(const float* keys, const unsigned long long* values,
                               unsigned long long n, unsigned long long k, float* keys_out,
                               unsigned long long* values_out, float* keys_out2, unsigned* indices,
                               float* keys_out3, void* stream) {
  auto* s = static_cast<gpusort::cuda::Stream>(stream);
  try {
    gpusort::cuda::topk(keys, n, k, keys_out, s);
    gpusort::cuda::topk_by_key(keys, values, n, k, keys_out2, values_out, s);
    gpusort::cuda::topk_indices(keys, n, k, keys_out3, indices, s);
  } catch (const gpusort::Error& e) {
    return e.what();
  }
  return "";
}
