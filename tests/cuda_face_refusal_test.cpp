// The CUDA face where it cannot run (CI: no NVIDIA driver; tests/cuda/cuda_face_test.cu runs it on
// the GPU): every call, C++ and C, refuses with one line naming why, before touching its
// arguments; the size queries, which need no device, answer; bad arguments are named.
#include <gtest/gtest.h>
#include <gpusort/cuda.hpp>
#include <gpusort/gpusort.h>

#include <string>

#include "test_support.hpp"

namespace {

using gpusort::test::message_of;

bool driver_missing() {
  return !gpusort::cuda::unavailable_why().empty();
}

TEST(CudaFace, WithoutTheDriverEveryCallIsAOneLineError) {
  if (!driver_missing()) GTEST_SKIP() << "a CUDA driver is here: tests/cuda/cuda_face_test.cu";
  const std::string why = gpusort::cuda::unavailable_why();
  EXPECT_EQ(why.find('\n'), std::string::npos);
  const std::string expected = "the CUDA face cannot run: " + why;
  uint32_t keys[4] = {3, 1, 2, 0};
  EXPECT_EQ(message_of([&] { gpusort::cuda::sort(keys, 4, nullptr); }), expected);
  uint32_t indices[4];
  EXPECT_EQ(message_of([&] { gpusort::cuda::argsort(keys, indices, 4, nullptr); }), expected);
  // Nothing was touched.
  EXPECT_EQ(keys[0], 3u);
  EXPECT_EQ(keys[3], 0u);

  EXPECT_EQ(gpusort_cuda_sort(GPUSORT_KEY_U32, keys, nullptr, 0, 4, nullptr, nullptr),
            GPUSORT_ERROR_NOT_AVAILABLE);
  EXPECT_EQ(std::string(gpusort_last_error()), "gpusort_cuda_sort: " + expected);
  EXPECT_EQ(gpusort_cuda_argsort(GPUSORT_KEY_F32, keys, indices, 8, 4, nullptr, nullptr),
            GPUSORT_ERROR_NOT_AVAILABLE);
  EXPECT_EQ(std::string(gpusort_last_error()), "gpusort_cuda_argsort: " + expected);
}

TEST(CudaFace, EmptySortsNeedNoDevice) {
  // n = 0 is done before the driver is asked for: it succeeds everywhere.
  EXPECT_NO_THROW(gpusort::cuda::sort_raw(gpusort::KeyType::f64, nullptr, nullptr, 0, 0, nullptr));
  EXPECT_EQ(gpusort_cuda_sort(GPUSORT_KEY_U64, nullptr, nullptr, 8, 0, nullptr, nullptr),
            GPUSORT_OK);
}

TEST(CudaFace, ScratchSizesNeedNoDevice) {
  // One block sorts 1,000 32-bit keys: no scratch; the rank sort of 64-bit keys in place reads a
  // copy of them (and of their values); Onesweep's above: the key copy at least.
  EXPECT_EQ(gpusort::cuda::scratch_bytes(gpusort::KeyType::u32, 0, 1000), 0u);
  EXPECT_EQ(gpusort::cuda::scratch_bytes(gpusort::KeyType::u64, 0, 1000), 8192u);
  EXPECT_EQ(gpusort::cuda::scratch_bytes(gpusort::KeyType::u64, 4, 1000), 12032u);
  EXPECT_GE(gpusort::cuda::scratch_bytes(gpusort::KeyType::u32, 0, 1u << 20), 4u << 20);
  EXPECT_GE(gpusort::cuda::scratch_bytes(gpusort::KeyType::u64, 4, 1u << 20), 12u << 20);
  // 8-byte values: positions and a copy of the values besides.
  EXPECT_GE(gpusort::cuda::scratch_bytes(gpusort::KeyType::u32, 8, 1000), 12000u);
  // Argsort: the key copy (and u32 positions for u64 indices).
  EXPECT_GE(gpusort::cuda::argsort_scratch_bytes(gpusort::KeyType::f32, 4, 1000), 4000u);
  EXPECT_GE(gpusort::cuda::argsort_scratch_bytes(gpusort::KeyType::f32, 8, 1000), 8000u);
  uint64_t bytes = 1;
  EXPECT_EQ(gpusort_cuda_scratch_bytes(GPUSORT_KEY_U32, 0, 1000, nullptr, &bytes), GPUSORT_OK);
  EXPECT_EQ(bytes, 0u);
}

TEST(CudaFace, BadArgumentsAreNamed) {
  uint64_t bytes = 0;
  EXPECT_EQ(gpusort_cuda_scratch_bytes(GPUSORT_KEY_U32, 2, 10, nullptr, &bytes),
            GPUSORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(gpusort_last_error()),
            "gpusort_cuda_scratch_bytes: value_bytes must be 0, 4 or 8, not 2");
  gpusort_cuda_options options{};
  options.begin_bit = 8, options.end_bit = 8;
  EXPECT_EQ(gpusort_cuda_sort(GPUSORT_KEY_U32, nullptr, nullptr, 0, 0, nullptr, &options),
            GPUSORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(gpusort_last_error()),
            "gpusort_cuda_sort: options->begin_bit = 8, options->end_bit = 8: bits [8, 8) are empty "
            "or beyond the 32-bit u32 key");
  EXPECT_EQ(gpusort_cuda_argsort(GPUSORT_KEY_U32, nullptr, nullptr, 2, 0, nullptr, nullptr),
            GPUSORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(gpusort_last_error()),
            "gpusort_cuda_argsort: index_bytes must be 4 or 8, not 2");
  EXPECT_THROW(gpusort::cuda::sort_raw(gpusort::KeyType::u32, nullptr, nullptr, 0,
                                       uint64_t(1) << 32, nullptr),
               gpusort::Error);
}

TEST(CudaFace, NumpyOrderAndSortedKeysNeedNoDeviceToSize) {
  using gpusort::KeyType;
  gpusort::cuda::Options numpy;
  numpy.numpy_float_order = true;
  // Floats in NumPy's order sorted around the sort (the sizes of the rank sort): room for the
  // set-aside keys and the chunk records besides.
  EXPECT_GE(gpusort::cuda::scratch_bytes(KeyType::f32, 0, 1000, numpy),
            gpusort::cuda::scratch_bytes(KeyType::f32, 0, 1000) + 4000);
  EXPECT_GE(gpusort::cuda::scratch_bytes(KeyType::f64, 8, 4000, numpy),
            gpusort::cuda::scratch_bytes(KeyType::f64, 8, 4000) + 32000);
  // A sorted copy (keys_in) sets nothing aside: its source stays.
  gpusort::cuda::Options numpy_copy = numpy;
  const float source[1] = {0.0f};
  numpy_copy.keys_in = source;
  EXPECT_EQ(gpusort::cuda::scratch_bytes(KeyType::f32, 0, 8000, numpy_copy) + 32000,
            gpusort::cuda::scratch_bytes(KeyType::f32, 0, 8000, numpy));
  // Onesweep's sizes sort NumPy's order in the passes: no room besides the sort's.
  for (const uint64_t n :
       {uint64_t(100000), uint64_t(1u << 20), uint64_t(1u << 24) + 1, uint64_t(1u << 28)}) {
    EXPECT_EQ(gpusort::cuda::scratch_bytes(KeyType::f32, 0, n, numpy),
              gpusort::cuda::scratch_bytes(KeyType::f32, 0, n));
    EXPECT_EQ(gpusort::cuda::scratch_bytes(KeyType::f64, 8, n, numpy),
              gpusort::cuda::scratch_bytes(KeyType::f64, 8, n));
  }
  // Integers ignore it; argsort sorts a canonical copy in the same room.
  EXPECT_EQ(gpusort::cuda::scratch_bytes(KeyType::i64, 0, 1u << 20, numpy),
            gpusort::cuda::scratch_bytes(KeyType::i64, 0, 1u << 20));
  EXPECT_EQ(gpusort::cuda::argsort_scratch_bytes(KeyType::f32, 8, 1u << 20, numpy),
            gpusort::cuda::argsort_scratch_bytes(KeyType::f32, 8, 1u << 20));
  // Sorted keys in the caller's array: no key copy in scratch.
  gpusort::cuda::Options sorted_keys;
  int caller_keys = 0;
  sorted_keys.sorted_keys = &caller_keys;
  EXPECT_EQ(gpusort::cuda::argsort_scratch_bytes(KeyType::f32, 4, 1000, sorted_keys) + 4096,
            gpusort::cuda::argsort_scratch_bytes(KeyType::f32, 4, 1000));
  // NumPy's order is over whole keys.
  numpy.begin_bit = 0, numpy.end_bit = 16;
  try {
    gpusort::cuda::scratch_bytes(KeyType::f32, 0, 1000, numpy);
    ADD_FAILURE() << "no error";
  } catch (const gpusort::Error& e) {
    EXPECT_EQ(std::string(e.what()), "numpy_float_order sorts the full key, not bits [0, 16)");
  }
  EXPECT_NO_THROW(gpusort::cuda::scratch_bytes(KeyType::u32, 0, 1000, numpy));
}

}  // namespace
