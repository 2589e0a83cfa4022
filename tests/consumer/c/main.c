/* A C11 program that uses an installed gpusort through its C API alone, built by a C compiler and
 * linked by a C linker driver (tests/consumer/c/run.cmake: CMake with LANGUAGES C, and cc with
 * pkg-config). Sorts keys, and keys with values, compares every element with the expected output,
 * and exits non-zero on a difference, an error or a validation message (GPUSORT_VALIDATION=1). */
#include <gpusort/gpusort.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  gpusort_context* ctx = NULL;
  gpusort_status s = gpusort_context_create(NULL, &ctx);
  if (s != GPUSORT_OK) {
    fprintf(stderr, "gpusort_context_create: %s: %s\n", gpusort_status_name(s),
            gpusort_last_error());
    return 1;
  }
  int ok = 1;

  double keys[7] = {3.5, -1.0, 0.0, 2.25, -7.0, 1.0, 3.5};
  static const double sorted_keys[7] = {-7.0, -1.0, 0.0, 1.0, 2.25, 3.5, 3.5};
  s = gpusort_sort(ctx, GPUSORT_KEY_F64, keys, 7, NULL);
  if (s != GPUSORT_OK) fprintf(stderr, "gpusort_sort: %s\n", gpusort_last_error());
  ok &= s == GPUSORT_OK && memcmp(keys, sorted_keys, sizeof keys) == 0;

  uint32_t ids[6] = {30, 10, 20, 10, 30, 5};
  uint32_t payload[6] = {0, 1, 2, 3, 4, 5};
  static const uint32_t sorted_ids[6] = {30, 30, 20, 10, 10, 5};
  static const uint32_t sorted_payload[6] = {0, 4, 2, 1, 3, 5}; /* stable: ties in input order */
  const gpusort_sort_options descending = {1, GPUSORT_ALGORITHM_AUTOMATIC, 0, 0};
  s = gpusort_sort_by_key(ctx, GPUSORT_KEY_U32, ids, payload, 4, 6, &descending);
  if (s != GPUSORT_OK) fprintf(stderr, "gpusort_sort_by_key: %s\n", gpusort_last_error());
  ok &= s == GPUSORT_OK && memcmp(ids, sorted_ids, sizeof ids) == 0 &&
        memcmp(payload, sorted_payload, sizeof payload) == 0;

  /* The CUDA face links with no CUDA toolkit; an empty sort and the scratch query need no device. */
  uint64_t cuda_scratch = 1;
  ok &= gpusort_cuda_sort(GPUSORT_KEY_U32, NULL, NULL, 0, 0, NULL, NULL) == GPUSORT_OK;
  ok &= gpusort_cuda_scratch_bytes(GPUSORT_KEY_U32, 0, 1000, NULL, &cuda_scratch) == GPUSORT_OK &&
        cuda_scratch == 0;

  ok &= gpusort_context_validation_messages(ctx) == 0;
  gpusort_context_destroy(ctx);
  printf("gpusort C consumer: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
