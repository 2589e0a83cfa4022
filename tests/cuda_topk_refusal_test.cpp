// Top-k on the CUDA face where it cannot run (CI: no NVIDIA driver; tests/cuda/topk_cases.cu runs
// it on the GPU): a call refuses with the face's one line, after its arguments are checked and
// before touching them; k = 0 and n = 0 need no device; the scratch size answers without one; bad
// arguments are named, by the C++ face and the C one; the select's digits cover the compared bits.
#include <gpusort/gpusort.h>
#include <gtest/gtest.h>

#include <gpusort/cuda.hpp>
#include <string>

#include "algorithms/topk/cuda/topk_params.hpp"
#include "test_support.hpp"

namespace {

using gpusort::test::message_of;

TEST(CudaTopK, WithoutTheDriverEveryCallIsAOneLineError) {
  if (gpusort::cuda::unavailable_why().empty())
    GTEST_SKIP() << "a CUDA driver is here: tests/cuda/topk_cases.cu";
  const std::string expected = "the CUDA face cannot run: " + gpusort::cuda::unavailable_why();
  float keys[4] = {3, 1, 2, 0}, out[2] = {7, 7};
  uint32_t values[4] = {1, 2, 3, 4}, values_out[2] = {9, 9};
  uint64_t indices[2] = {5, 5};
  EXPECT_EQ(message_of([&] { gpusort::cuda::topk(keys, 4, 2, out, nullptr); }), expected);
  EXPECT_EQ(
      message_of([&] { gpusort::cuda::topk_by_key(keys, values, 4, 2, out, values_out, nullptr); }),
      expected);
  EXPECT_EQ(message_of([&] { gpusort::cuda::topk_indices(keys, 4, 2, out, indices, nullptr); }),
            expected);
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::topk_indices<float, uint64_t>(keys, 4, 4, nullptr, indices, nullptr);
            }),
            expected);
  // Nothing was touched.
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(values_out[1], 9u);
  EXPECT_EQ(indices[0], 5u);
  EXPECT_EQ(gpusort_cuda_topk(GPUSORT_KEY_F32, keys, 4, 2, out, nullptr, nullptr, 0, nullptr, 0,
                              nullptr, nullptr),
            GPUSORT_ERROR_NOT_AVAILABLE);
  EXPECT_EQ(std::string(gpusort_last_error()), "gpusort_cuda_topk: " + expected);
}

TEST(CudaTopK, NothingToSelectNeedsNoDevice) {
  EXPECT_NO_THROW(gpusort::cuda::topk_raw(gpusort::KeyType::f64, nullptr, 0, 0, nullptr, nullptr,
                                          nullptr, 0, nullptr, 0, nullptr));
  uint32_t keys[3] = {1, 2, 3};
  EXPECT_NO_THROW(gpusort::cuda::topk<uint32_t>(keys, 3, 0, nullptr, nullptr));
  EXPECT_EQ(gpusort_cuda_topk(GPUSORT_KEY_U64, nullptr, 0, 0, nullptr, nullptr, nullptr, 0, nullptr,
                              0, nullptr, nullptr),
            GPUSORT_OK);
}

TEST(CudaTopK, ScratchSizesNeedNoDevice) {
  using gpusort::KeyType;
  EXPECT_EQ(gpusort::cuda::topk_scratch_bytes(KeyType::u32, 0, 0), 0u);
  EXPECT_EQ(gpusort::cuda::topk_scratch_bytes(KeyType::u32, 1000, 0), 0u);
  // The state and histograms, the candidate list (n / 8), two u64 per tile of 2048 keys, k keys
  // and k positions, and the survivors' sort.
  const uint64_t n = 1u << 20, k = 1024;
  const uint64_t least = 6 * 2048 * 4 + n / 8 * 4 + 2 * (n / 2048) * 8 + k * 8;
  EXPECT_GE(gpusort::cuda::topk_scratch_bytes(KeyType::u32, n, k), least);
  EXPECT_GE(gpusort::cuda::topk_scratch_bytes(KeyType::f64, n, n),
            least + n * 8 + gpusort::cuda::scratch_bytes(KeyType::f64, 4, n));
  uint64_t bytes = 0;
  EXPECT_EQ(gpusort_cuda_topk_scratch_bytes(GPUSORT_KEY_I64, n, k, nullptr, &bytes), GPUSORT_OK);
  EXPECT_EQ(bytes, gpusort::cuda::topk_scratch_bytes(KeyType::i64, n, k));
}

TEST(CudaTopK, BadArgumentsAreNamed) {
  using gpusort::KeyType;
  uint32_t keys[4] = {3, 1, 2, 0}, out[4];
  EXPECT_EQ(message_of([&] { gpusort::cuda::topk(keys, 4, 5, out, nullptr); }),
            "topk: k = 5 is more than the 4 keys");
  EXPECT_EQ(gpusort_cuda_topk(GPUSORT_KEY_U32, keys, 4, 5, out, nullptr, nullptr, 0, nullptr, 0,
                              nullptr, nullptr),
            GPUSORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(gpusort_last_error()), "gpusort_cuda_topk: k = 5 is more than the 4 keys");
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::topk_raw(KeyType::u32, keys, 4, 2, out, keys, nullptr, 4, nullptr, 0,
                                      nullptr);
            }),
            "topk: values need both the input values and values_out");
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::topk_raw(KeyType::u32, keys, 4, 2, out, keys, out, 2, nullptr, 0,
                                      nullptr);
            }),
            "topk: values are 4 or 8 bytes wide, not 2");
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::topk_raw(KeyType::u32, keys, 4, 2, out, nullptr, nullptr, 0, out, 2,
                                      nullptr);
            }),
            "topk: indices are 4 or 8 bytes wide, not 2");
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::topk_raw(KeyType::u32, nullptr, 4, 2, out, nullptr, nullptr, 0,
                                      nullptr, 0, nullptr);
            }),
            "topk: keys are null");
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::topk_raw(KeyType::u32, keys, 4, 2, nullptr, nullptr, nullptr, 0,
                                      nullptr, 0, nullptr);
            }),
            "topk: nothing to write (no output keys, values or indices)");
  EXPECT_EQ(
      message_of([&] { gpusort::cuda::topk_scratch_bytes(KeyType::u32, uint64_t(1) << 32, 1); }),
      "topk: the CUDA face takes fewer than 2^32 keys, not 4294967296");
  gpusort::cuda::Options numpy;
  numpy.numpy_float_order = true;
  numpy.end_bit = 16;
  EXPECT_EQ(message_of([&] { gpusort::cuda::topk_scratch_bytes(KeyType::f32, 10, 1, numpy); }),
            "topk: numpy_float_order compares the full key, not bits [0, 16)");
  EXPECT_NO_THROW(gpusort::cuda::topk_scratch_bytes(KeyType::u32, 10, 1, numpy));
  gpusort_cuda_options bits{};
  bits.begin_bit = 8, bits.end_bit = 8;
  uint64_t bytes = 0;
  EXPECT_EQ(gpusort_cuda_topk_scratch_bytes(GPUSORT_KEY_U32, 10, 1, &bits, &bytes),
            GPUSORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(gpusort_last_error()),
            "gpusort_cuda_topk_scratch_bytes: options->begin_bit = 8, options->end_bit = 8: bits "
            "[8, 8) are empty or beyond the 32-bit u32 key");
}

// The select's digits: from the top of the compared bits down, contiguous, at most 11 bits each,
// covering [begin_bit, end_bit) exactly, within the passes and histograms the scratch holds.
TEST(CudaTopK, DigitsCoverTheComparedBits) {
  using namespace gpusort::cuda;
  for (uint32_t width : {32u, 64u})
    for (uint32_t begin = 0; begin < width; ++begin)
      for (uint32_t end = begin + 1; end <= width; ++end) {
        const uint32_t passes = topk_passes(begin, end);
        ASSERT_GE(passes, 1u);
        ASSERT_LE(passes, kTopKMaxPasses);
        uint32_t top = end;
        for (uint32_t p = 0; p < passes; ++p) {
          const TopKDigit d = topk_digit(begin, end, p);
          ASSERT_GE(d.bits, 1u) << begin << " " << end << " " << p;
          ASSERT_LE(d.bits, kTopKDigitBits);
          ASSERT_EQ(d.bit + d.bits, top) << begin << " " << end << " " << p;
          top = d.bit;
        }
        ASSERT_EQ(top, begin) << begin << " " << end;
      }
}

// Per segment: the call refuses where the driver is missing, touching nothing; nothing to do needs
// no device; bad arguments are named first; the scratch size answers without a device.
TEST(CudaTopK, PerSegmentRefusals) {
  using gpusort::KeyType;
  using gpusort::cuda::topk_segments_raw;
  float keys[4] = {3, 1, 2, 0}, out[4] = {7, 7, 7, 7};
  uint32_t offsets[3] = {0, 2, 4}, result_offsets[3] = {9, 9, 9}, values[4] = {1, 2, 3, 4};
  if (!gpusort::cuda::unavailable_why().empty()) {
    const std::string expected = "the CUDA face cannot run: " + gpusort::cuda::unavailable_why();
    EXPECT_EQ(message_of([&] {
                topk_segments_raw(KeyType::f32, keys, 4, offsets, 4, 2, 1, out, nullptr, nullptr,
                                  0, nullptr, 0, result_offsets, nullptr);
              }),
              expected);
    EXPECT_EQ(out[0], 7.0f);
    EXPECT_EQ(result_offsets[0], 9u);
    EXPECT_EQ(gpusort_cuda_topk_segments(GPUSORT_KEY_F32, keys, 4, offsets, 4, 2, 1, out, nullptr,
                                         nullptr, 0, nullptr, 0, result_offsets, nullptr, nullptr),
              GPUSORT_ERROR_NOT_AVAILABLE);
    EXPECT_EQ(std::string(gpusort_last_error()), "gpusort_cuda_topk_segments: " + expected);
  }
  EXPECT_NO_THROW(topk_segments_raw(KeyType::f32, keys, 4, offsets, 4, 2, 0, out, nullptr, nullptr,
                                    0, nullptr, 0, result_offsets, nullptr));
  EXPECT_NO_THROW(topk_segments_raw(KeyType::u64, nullptr, 0, offsets, 8, 1, 3, nullptr, nullptr,
                                    nullptr, 0, nullptr, 0, nullptr, nullptr));
  EXPECT_EQ(result_offsets[0], 9u);
  auto refusal = [&](const gpusort::cuda::Options& options, uint32_t offset_bytes,
                     uint64_t segments, const void* value_in, void* keys_out,
                     uint32_t* places) {
    return message_of([&] {
      topk_segments_raw(KeyType::f32, keys, 4, offsets, offset_bytes, segments, 1, keys_out,
                        value_in, nullptr, 4, nullptr, 0, places, nullptr, options);
    });
  };
  EXPECT_EQ(refusal({}, 3, 2, nullptr, out, nullptr),
            "topk_segments: offsets are 4 or 8 bytes wide, not 3");
  EXPECT_EQ(refusal({}, 4, 0, nullptr, out, nullptr), "topk_segments: no segments for 4 keys");
  gpusort::cuda::Options counted;
  counted.count = offsets;
  EXPECT_EQ(refusal(counted, 4, 2, nullptr, out, nullptr),
            "topk_segments: options.count, keys_in and sorted_keys do not apply (the offsets give "
            "n)");
  gpusort::cuda::Options numpy;
  numpy.numpy_float_order = true;
  numpy.end_bit = 16;
  EXPECT_EQ(refusal(numpy, 4, 2, nullptr, out, nullptr),
            "topk_segments: numpy_float_order compares the full key, not bits [0, 16)");
  EXPECT_EQ(refusal({}, 4, 2, values, out, nullptr),
            "topk_segments: values need both the input values and values_out");
  EXPECT_EQ(refusal({}, 4, 2, nullptr, nullptr, nullptr),
            "topk_segments: nothing to write (no output keys, values, indices or result offsets)");
  EXPECT_EQ(out[0], 7.0f);
  // The scratch: the segmented argsort's positions and its scratch, and the result offsets.
  EXPECT_EQ(gpusort::cuda::topk_segments_scratch_bytes(KeyType::u32, 0, 1, 5), 0u);
  EXPECT_GE(gpusort::cuda::topk_segments_scratch_bytes(KeyType::u32, 1000, 10, 5),
            1000 * 4 + gpusort::cuda::segmented_argsort_scratch_bytes(KeyType::u32, 4, 1000, 10) +
                11 * 4);
  uint64_t bytes = 0;
  EXPECT_EQ(gpusort_cuda_topk_segments_scratch_bytes(GPUSORT_KEY_F64, 1000, 10, 5, nullptr, &bytes),
            GPUSORT_OK);
  EXPECT_EQ(bytes, gpusort::cuda::topk_segments_scratch_bytes(KeyType::f64, 1000, 10, 5));
  // Rows: the segmented argsort's scratch with their offsets made on the GPU (what rows the device
  // takes a block each do not use); 2^32 keys refused.
  EXPECT_GE(gpusort::cuda::topk_rows_scratch_bytes(KeyType::u32, 10, 100, 5),
            gpusort::cuda::topk_segments_scratch_bytes(KeyType::u32, 1000, 10, 5) + 11 * 8);
  EXPECT_EQ(gpusort_cuda_topk_rows_scratch_bytes(GPUSORT_KEY_F32, 10, 20000, 5, nullptr, &bytes),
            GPUSORT_OK);
  EXPECT_EQ(bytes, gpusort::cuda::topk_rows_scratch_bytes(KeyType::f32, 10, 20000, 5));
  EXPECT_EQ(message_of([&] {
              gpusort::cuda::topk_rows_raw(KeyType::f32, keys, 1u << 16, 1u << 16, 1, out, nullptr,
                                           nullptr, 0, nullptr, 0, nullptr);
            }),
            "topk_rows: 65536 rows of 65536 keys: the CUDA face takes fewer than 2^32 keys");
  EXPECT_NO_THROW(gpusort::cuda::topk_rows_raw(KeyType::f32, keys, 2, 2, 0, out, nullptr, nullptr,
                                               0, nullptr, 0, nullptr));
  if (!gpusort::cuda::unavailable_why().empty())
    EXPECT_EQ(gpusort_cuda_topk_rows(GPUSORT_KEY_F32, keys, 2, 2, 1, out, nullptr, nullptr, 0,
                                     nullptr, 0, nullptr, nullptr),
              GPUSORT_ERROR_NOT_AVAILABLE);
  EXPECT_EQ(out[0], 7.0f);
}

}  // namespace
