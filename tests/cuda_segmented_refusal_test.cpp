// The CUDA face's segmented sort and argsort where they cannot run (CI: no NVIDIA driver;
// tests/cuda/segmented_cases.cu runs them on the GPU): a call refuses with the face's one line,
// after its arguments are checked and before touching them; n = 0 needs no device; the scratch
// size answers without one; bad arguments are named, by the C++ face and the C one.
#include <gpusort/gpusort.h>
#include <gtest/gtest.h>

#include <gpusort/cuda.hpp>
#include <string>

#include "test_support.hpp"

namespace {

using gpusort::test::message_of;

TEST(CudaSegmented, WithoutTheDriverEveryCallIsAOneLineError) {
  if (gpusort::cuda::unavailable_why().empty())
    GTEST_SKIP() << "a CUDA driver is here: tests/cuda/segmented_cases.cu";
  const std::string expected = "the CUDA face cannot run: " + gpusort::cuda::unavailable_why();
  float keys[4] = {3, 1, 2, 0};
  uint32_t values[4] = {1, 2, 3, 4}, offsets[3] = {0, 2, 4};
  uint64_t indices[4] = {5, 5, 5, 5}, offsets64[2] = {0, 4};
  EXPECT_EQ(message_of([&] { gpusort::cuda::segmented_sort(keys, 4, offsets, 2, nullptr); }),
            expected);
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::segmented_sort_by_key(keys, values, 4, offsets, 2, nullptr);
            }),
            expected);
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::segmented_argsort(keys, indices, 4, offsets, 2, nullptr);
            }),
            expected);
  // One segment: the plain sort's.
  EXPECT_EQ(message_of([&] { gpusort::cuda::segmented_sort(keys, 4, offsets64, 1, nullptr); }),
            expected);
  EXPECT_EQ(keys[0], 3.0f);
  EXPECT_EQ(values[0], 1u);
  EXPECT_EQ(indices[0], 5u);
  EXPECT_EQ(gpusort_cuda_segmented_sort(GPUSORT_KEY_F32, keys, nullptr, 0, 4, offsets, 4, 2,
                                        nullptr, nullptr),
            GPUSORT_ERROR_NOT_AVAILABLE);
  EXPECT_EQ(std::string(gpusort_last_error()), "gpusort_cuda_segmented_sort: " + expected);
  EXPECT_EQ(gpusort_cuda_segmented_argsort(GPUSORT_KEY_F32, keys, indices, 8, 4, offsets, 4, 2,
                                           nullptr, nullptr),
            GPUSORT_ERROR_NOT_AVAILABLE);
}

TEST(CudaSegmented, NothingToSortNeedsNoDevice) {
  EXPECT_NO_THROW(gpusort::cuda::segmented_sort_raw(gpusort::KeyType::u32, nullptr, nullptr, 0, 0,
                                                    nullptr, 4, 0, nullptr));
  EXPECT_NO_THROW(gpusort::cuda::segmented_argsort_raw(gpusort::KeyType::f64, nullptr, nullptr, 8,
                                                       0, nullptr, 8, 3, nullptr));
  EXPECT_EQ(gpusort_cuda_segmented_sort(GPUSORT_KEY_U64, nullptr, nullptr, 0, 0, nullptr, 4, 0,
                                        nullptr, nullptr),
            GPUSORT_OK);
}

TEST(CudaSegmented, ScratchSizesNeedNoDevice) {
  using gpusort::KeyType;
  namespace cuda = gpusort::cuda;
  // One segment: the plain sort's scratch.
  EXPECT_EQ(cuda::segmented_scratch_bytes(KeyType::u32, 4, 1000, 1), cuda::scratch_bytes(KeyType::u32, 4, 1000));
  EXPECT_EQ(cuda::segmented_argsort_scratch_bytes(KeyType::f32, 8, 1000, 1),
            cuda::argsort_scratch_bytes(KeyType::f32, 8, 1000));
  // More: the two argsorts', the positions, the sorted keys, the segments, the second order, and
  // a copy of the values.
  const uint64_t n = 1u << 20;
  const uint64_t least = n * 4 * 4 + cuda::argsort_scratch_bytes(KeyType::u32, 4, n);
  EXPECT_GE(cuda::segmented_scratch_bytes(KeyType::u32, 0, n, 100), least);
  EXPECT_GE(cuda::segmented_scratch_bytes(KeyType::f64, 8, n, 100), least + n * 4 + n * 8);
  uint64_t bytes = 0;
  EXPECT_EQ(gpusort_cuda_segmented_scratch_bytes(GPUSORT_KEY_I64, 8, n, 100, nullptr, &bytes),
            GPUSORT_OK);
  EXPECT_EQ(bytes, cuda::segmented_scratch_bytes(KeyType::i64, 8, n, 100));
  EXPECT_EQ(gpusort_cuda_segmented_argsort_scratch_bytes(GPUSORT_KEY_I32, 4, n, 100, nullptr,
                                                         &bytes),
            GPUSORT_OK);
  EXPECT_EQ(bytes, cuda::segmented_argsort_scratch_bytes(KeyType::i32, 4, n, 100));
}

TEST(CudaSegmented, BadArgumentsAreNamed) {
  using gpusort::KeyType;
  namespace cuda = gpusort::cuda;
  uint32_t keys[4] = {3, 1, 2, 0}, offsets[3] = {0, 2, 4}, count = 4;
  EXPECT_EQ(message_of([&] {
              cuda::segmented_sort_raw(KeyType::u32, keys, nullptr, 0, 4, offsets, 2, 2, nullptr);
            }),
            "segmented sort: offsets are 4 or 8 bytes wide, not 2");
  EXPECT_EQ(message_of([&] {
              cuda::segmented_sort_raw(KeyType::u32, keys, keys, 2, 4, offsets, 4, 2, nullptr);
            }),
            "segmented sort: values are 0, 4 or 8 bytes wide, not 2");
  EXPECT_EQ(message_of([&] {
              cuda::segmented_argsort_raw(KeyType::u32, keys, keys, 2, 4, offsets, 4, 2, nullptr);
            }),
            "segmented argsort: indices are 4 or 8 bytes wide, not 2");
  EXPECT_EQ(message_of([&] {
              cuda::segmented_sort_raw(KeyType::u32, keys, nullptr, 0, 4, offsets, 4, 0, nullptr);
            }),
            "segmented sort: no segments for 4 keys");
  EXPECT_EQ(message_of([&] {
              cuda::segmented_sort_raw(KeyType::u32, keys, nullptr, 0, 4, nullptr, 4, 2, nullptr);
            }),
            "segmented sort: offsets is null");
  EXPECT_EQ(message_of([&] {
              cuda::segmented_argsort_raw(KeyType::u32, keys, nullptr, 4, 4, offsets, 4, 2,
                                          nullptr);
            }),
            "segmented argsort: indices is null");
  cuda::Options counted;
  counted.count = &count;
  EXPECT_EQ(message_of([&] { cuda::segmented_scratch_bytes(KeyType::u32, 0, 4, 2, counted); }),
            "segmented sort: a GPU-side count does not apply (the offsets give n)");
  EXPECT_EQ(message_of([&] {
              cuda::segmented_argsort_scratch_bytes(KeyType::u32, 4, uint64_t(1) << 32, 2);
            }),
            "segmented argsort: the CUDA face sorts fewer than 2^32 elements, not 4294967296");
  EXPECT_EQ(gpusort_cuda_segmented_sort(GPUSORT_KEY_U32, keys, nullptr, 0, 4, offsets, 3, 2,
                                        nullptr, nullptr),
            GPUSORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(gpusort_last_error()),
            "gpusort_cuda_segmented_sort: offset_bytes must be 4 or 8, not 3");
}

}  // namespace
