/* The C API from C11: the convenient face on host arrays, the engine face on buffers and a
 * command buffer this file creates itself (inside one submit with fills, copies and the
 * caller's barriers), error codes and the thread-local error message. Runs on the device of
 * GPUSORT_DEVICE with validation on; any validation message fails it. Prints "N passed, N failed"
 * and exits nonzero on a failure. */
#include <gpusort/gpusort.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

static int passed = 0, failed = 0;

#define CHECK(condition, ...)                                                \
  do {                                                                       \
    if (condition) {                                                         \
      ++passed;                                                              \
    } else {                                                                 \
      ++failed;                                                              \
      fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #condition); \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
    }                                                                        \
  } while (0)

#define CHECK_OK(call)                                                                          \
  do {                                                                                          \
    gpusort_status status_ = (call);                                                            \
    CHECK(status_ == GPUSORT_OK, "%s: %s", gpusort_status_name(status_), gpusort_last_error()); \
  } while (0)

/* A call that fails with `status` and exactly `message`: the C function's name and the problem in
 * the C API's own terms (its parameters, never the C++ layer's names). */
#define CHECK_ERROR(call, status, message) check_error((call), (status), (message), #call, __LINE__)

static void check_error(gpusort_status got, gpusort_status status, const char* message,
                        const char* call, int line) {
  const char* got_message = gpusort_last_error();
  CHECK(got == status && strcmp(got_message, message) == 0,
        "line %d: %s\n  got      %s '%s'\n  expected %s '%s'", line, call, gpusort_status_name(got),
        got_message, gpusort_status_name(status), message);
}

/* The exact message when it is a format: snprintf into a static buffer. */
static const char* format(const char* pattern, ...) {
  static char text[2][512];
  static int which = 0;
  which ^= 1;
  va_list arguments;
  va_start(arguments, pattern);
  vsnprintf(text[which], sizeof text[which], pattern, arguments);
  va_end(arguments);
  return text[which];
}

static const uint32_t poison = 0xDEADBEEFu;

static uint64_t random_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
  random_state ^= random_state << 13;
  random_state ^= random_state >> 7;
  random_state ^= random_state << 17;
  return random_state;
}

/* Radix order of float bits (IEEE totalOrder), as gpusort sorts them. */
static uint32_t f32_order(uint32_t bits) {
  return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

/* Checks that keys[0..n) with values[0..n) is the stable sort of input[values[i]] by order(),
 * i.e. values are a permutation of 0..n, each key is its input key, keys ascend, and equal keys
 * keep their input order. Together these say the output is exactly std::stable_sort's. */
static int is_stable_sort_u32(const uint32_t* input, const uint32_t* keys, const uint32_t* values,
                              uint32_t n, int is_float) {
  unsigned char* seen = calloc(n ? n : 1, 1);
  int ok = 1;
  for (uint32_t i = 0; i < n && ok; ++i) {
    uint32_t v = values[i];
    if (v >= n || seen[v] || keys[i] != input[v]) {
      fprintf(stderr, "  element %u: key 0x%08x value %u\n", i, keys[i], v);
      ok = 0;
      break;
    }
    seen[v] = 1;
    if (i > 0) {
      uint32_t a = is_float ? f32_order(keys[i - 1]) : keys[i - 1];
      uint32_t b = is_float ? f32_order(keys[i]) : keys[i];
      if (a > b || (a == b && values[i - 1] > v)) {
        fprintf(stderr, "  elements %u, %u out of order\n", i - 1, i);
        ok = 0;
      }
    }
  }
  free(seen);
  return ok;
}

/* An algorithm by name (the reference and experimental ones have no enumerator). */
static gpusort_algorithm algorithm_named(const char* name) {
  gpusort_algorithm a = GPUSORT_ALGORITHM_AUTOMATIC;
  if (gpusort_algorithm_from_name(name, &a) != GPUSORT_OK) {
    fprintf(stderr, "gpusort_algorithm_from_name(\"%s\"): %s\n", name, gpusort_last_error());
    exit(1);
  }
  return a;
}

/* How many algorithms the library has: gpusort_algorithm_name's names up to its first NULL. */
static uint32_t algorithm_count(void) {
  uint32_t count = 0;
  while (gpusort_algorithm_name(count)) ++count;
  return count;
}

/* Every name the library lists and its value agree both ways, and the names are distinct; the
 * stable enumerators have their documented names; unknown names and NULL arguments are refused by
 * name, listing every algorithm. */
static void test_algorithm_names(void) {
  const uint32_t count = algorithm_count();
  CHECK(count > GPUSORT_ALGORITHM_ONESWEEP, "%u algorithms: the stable enumerators are missing",
        count);
  if (count <= GPUSORT_ALGORITHM_ONESWEEP) return;
  char names[1024] = ""; /* "automatic, onesweep, ..." */
  for (uint32_t i = 0; i < count; ++i) {
    const char* name = gpusort_algorithm_name(i);
    CHECK(name[0] != '\0', "algorithm %u has an empty name", i);
    for (uint32_t j = 0; j < i; ++j)
      CHECK(strcmp(name, gpusort_algorithm_name(j)) != 0, "algorithms %u and %u are both %s", j, i,
            name);
    gpusort_algorithm a = (gpusort_algorithm)(i + 1);
    CHECK_OK(gpusort_algorithm_from_name(name, &a));
    CHECK((uint32_t)a == i, "gpusort_algorithm_from_name(%s) gave %u, expected %u", name,
          (uint32_t)a, i);
    CHECK(strlen(names) + strlen(name) + 3 < sizeof names, "the names overflow the test's buffer");
    if (i > 0) strcat(names, ", ");
    strcat(names, name);
  }
  CHECK(gpusort_algorithm_name(count + 1) == NULL && gpusort_algorithm_name(UINT32_MAX) == NULL,
        "a name past the last algorithm");
  CHECK(strcmp(gpusort_algorithm_name(GPUSORT_ALGORITHM_AUTOMATIC), "automatic") == 0 &&
            strcmp(gpusort_algorithm_name(GPUSORT_ALGORITHM_ONESWEEP), "onesweep") == 0,
        "the stable enumerators' names");
  CHECK(algorithm_named("automatic") == GPUSORT_ALGORITHM_AUTOMATIC &&
            algorithm_named("onesweep") == GPUSORT_ALGORITHM_ONESWEEP,
        "the stable enumerators match their names");
  gpusort_algorithm a = GPUSORT_ALGORITHM_AUTOMATIC;
  CHECK_ERROR(
      gpusort_algorithm_from_name("quick", &a), GPUSORT_ERROR_INVALID_ARGUMENT,
      format("gpusort_algorithm_from_name: unknown algorithm 'quick' (expected one of %s)", names));
  CHECK_ERROR(gpusort_algorithm_from_name(NULL, &a), GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_algorithm_from_name: name is NULL");
  CHECK_ERROR(gpusort_algorithm_from_name("bitonic", NULL), GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_algorithm_from_name: algorithm is NULL");
}

static int compare_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

static void test_convenient_face(gpusort_context* ctx) {
  enum { n = 20000 };
  uint64_t* keys = malloc(n * sizeof *keys);
  uint64_t* expected = malloc(n * sizeof *expected);
  for (uint32_t i = 0; i < n; ++i) keys[i] = expected[i] = next_random() >> (i % 40);
  qsort(expected, n, sizeof *expected, compare_u64);
  CHECK_OK(gpusort_sort(ctx, GPUSORT_KEY_U64, keys, n, NULL));
  CHECK(memcmp(keys, expected, sizeof(uint64_t) * n) == 0, "gpusort_sort u64 differs from qsort");
  /* Released cached memory is allocated again by the next sort. */
  gpusort_context_release_cached_memory(ctx);
  gpusort_context_release_cached_memory(NULL);
  for (uint32_t i = 0; i < n; ++i) keys[i] = expected[(i * 7919u) % n];
  CHECK_OK(gpusort_sort(ctx, GPUSORT_KEY_U64, keys, n, NULL));
  CHECK(memcmp(keys, expected, sizeof(uint64_t) * n) == 0,
        "gpusort_sort u64 after releasing the cache differs from qsort");

  uint32_t* fkeys = malloc(n * sizeof *fkeys);
  uint32_t* input = malloc(n * sizeof *input);
  uint32_t* values = malloc(n * sizeof *values);
  for (uint32_t i = 0; i < n; ++i) {
    /* Few distinct floats of both signs (ties check stability), plus -0/+0 and infinities. */
    static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u};
    fkeys[i] = input[i] =
        (i % 7 == 0) ? specials[i % 4] : (uint32_t)(next_random() % 50) * 0x01000000u;
    values[i] = i;
  }
  gpusort_sort_options options = {0, GPUSORT_ALGORITHM_AUTOMATIC, 0, 0};
  CHECK_OK(gpusort_sort_by_key(ctx, GPUSORT_KEY_F32, fkeys, values, 4, n, &options));
  CHECK(is_stable_sort_u32(input, fkeys, values, n, 1),
        "gpusort_sort_by_key f32 is not the stable sort");
  free(keys);
  free(expected);
  free(fkeys);
  free(input);
  free(values);
}

static void test_segments(gpusort_context* ctx) {
  const uint32_t input[7] = {3, 1, 2, 9, 8, 7, 5};
  const uint32_t offsets[4] = {0, 3, 3, 7};
  uint32_t keys[7], indices[7];
  uint64_t wide[7];
  memcpy(keys, input, sizeof keys);
  CHECK_OK(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, keys, NULL, 0, offsets, 4, 4,
                                 indices, 4, NULL));
  static const uint32_t sorted[7] = {1, 2, 3, 5, 7, 8, 9}, order[7] = {1, 2, 0, 6, 5, 4, 3};
  CHECK(memcmp(keys, sorted, sizeof keys) == 0,
        "gpusort_sort_segments: keys not sorted per segment");
  CHECK(memcmp(indices, order, sizeof indices) == 0, "gpusort_sort_segments: wrong permutation");
  gpusort_sort_options descending = {1, GPUSORT_ALGORITHM_AUTOMATIC, 0, 0};
  CHECK_OK(gpusort_argsort(ctx, GPUSORT_KEY_U32, input, 7, wide, 8, &descending));
  static const uint64_t reversed[7] = {3, 4, 5, 6, 0, 2, 1};
  CHECK(memcmp(wide, reversed, sizeof wide) == 0, "gpusort_argsort: wrong permutation");
  gpusort_segmented_sorter_config config = {
      GPUSORT_KEY_F64, 8, 8, GPUSORT_ALGORITHM_AUTOMATIC, 0, 0, 0};
  gpusort_segmented_sorter* sorter = NULL;
  CHECK_OK(gpusort_segmented_sorter_create(ctx, &config, &sorter));
  uint64_t bytes = 0;
  // n beyond the fast path's largest class: the global path's copies of keys and values count.
  CHECK_OK(gpusort_segmented_sorter_scratch_bytes(sorter, 100000, 10, &bytes));
  CHECK(bytes > 100000 * 8, "segmented scratch of %llu bytes", (unsigned long long)bytes);
  gpusort_segmented_sorter_destroy(sorter);
}

static void test_topk(gpusort_context* ctx) {
  const int32_t input[9] = {4, -1, 7, -1, 9, 0, 7, 3, -5};
  const uint32_t values[9] = {10, 11, 12, 13, 14, 15, 16, 17, 18};
  int32_t keys_out[4];
  uint32_t values_out[4];
  uint64_t indices[4];
  /* The 4 smallest: -5, -1 (position 1), -1 (position 3), 0. */
  CHECK_OK(gpusort_topk(ctx, GPUSORT_KEY_I32, 9, input, 4, keys_out, values, values_out, 4, NULL,
                        0, 0, indices, 8, NULL));
  static const int32_t smallest[4] = {-5, -1, -1, 0};
  static const uint32_t smallest_values[4] = {18, 11, 13, 15};
  static const uint64_t smallest_at[4] = {8, 1, 3, 5};
  CHECK(memcmp(keys_out, smallest, sizeof keys_out) == 0, "gpusort_topk: wrong keys");
  CHECK(memcmp(values_out, smallest_values, sizeof values_out) == 0, "gpusort_topk: wrong values");
  CHECK(memcmp(indices, smallest_at, sizeof indices) == 0, "gpusort_topk: wrong indices");
  /* The 3 largest: 9, 7 (position 2), 7 (position 6). */
  gpusort_sort_options largest = {1, GPUSORT_ALGORITHM_AUTOMATIC, 0, 0};
  uint32_t at[3];
  CHECK_OK(gpusort_topk(ctx, GPUSORT_KEY_I32, 9, input, 3, keys_out, NULL, NULL, 0, NULL, 0, 0, at,
                        4, &largest));
  static const int32_t top[3] = {9, 7, 7};
  static const uint32_t top_at[3] = {4, 2, 6};
  CHECK(memcmp(keys_out, top, sizeof top) == 0, "gpusort_topk: wrong largest keys");
  CHECK(memcmp(at, top_at, sizeof top_at) == 0, "gpusort_topk: wrong largest indices");
  /* Per segment: {4, -1, 7}, {}, {-1, 9, 0, 7, 3, -5}; k = 2 gives 2 + 0 + 2. */
  const uint32_t offsets[4] = {0, 3, 3, 9};
  uint64_t count = 0;
  CHECK_OK(gpusort_topk_segments_count(offsets, 4, 4, 2, &count));
  CHECK(count == 4, "gpusort_topk_segments_count: %llu", (unsigned long long)count);
  CHECK_OK(gpusort_topk(ctx, GPUSORT_KEY_I32, 9, input, 2, keys_out, NULL, NULL, 0, offsets, 4, 4,
                        at, 4, NULL));
  static const int32_t per_segment[4] = {-1, 4, -5, -1};
  static const uint32_t per_segment_at[4] = {1, 0, 8, 3};
  CHECK(memcmp(keys_out, per_segment, sizeof per_segment) == 0, "gpusort_topk: wrong segment keys");
  CHECK(memcmp(at, per_segment_at, sizeof per_segment_at) == 0,
        "gpusort_topk: wrong segment indices");
  CHECK_ERROR(gpusort_topk(ctx, GPUSORT_KEY_I32, 9, input, 10, keys_out, NULL, NULL, 0, NULL, 0, 0,
                           NULL, 0, NULL),
              GPUSORT_ERROR_INVALID_ARGUMENT, "gpusort_topk: topk: k = 10 is more than the 9 keys");
  CHECK_ERROR(gpusort_topk(ctx, GPUSORT_KEY_I32, 9, input, 2, keys_out, values, NULL, 4, NULL, 0,
                           0, NULL, 0, NULL),
              GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_topk: values is given, but values_out is NULL");
  gpusort_topk_config config = {GPUSORT_KEY_F32, 4, 1, 0, 0, GPUSORT_ALGORITHM_AUTOMATIC, 0};
  gpusort_topk_selector* selector = NULL;
  CHECK_OK(gpusort_topk_selector_create(ctx, &config, &selector));
  uint64_t bytes = 0;
  CHECK_OK(gpusort_topk_selector_scratch_bytes(selector, 100000, 100, &bytes));
  CHECK(bytes > 100 * 8, "top-k scratch of %llu bytes", (unsigned long long)bytes);
  CHECK_OK(gpusort_topk_selector_segments_scratch_bytes(selector, 100000, 100, 10, &bytes));
  CHECK(bytes > 1000 * 4, "per-segment top-k scratch of %llu bytes", (unsigned long long)bytes);
  gpusort_topk_selector_destroy(selector);
  config.offset_bytes = 2;
  CHECK_ERROR(gpusort_topk_selector_create(ctx, &config, &selector), GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_topk_selector_create: config->offset_bytes must be 0, 4 or 8, not 2");
}

static int other_thread_error_is_empty(void* unused) {
  (void)unused;
  return gpusort_last_error()[0] == '\0';
}

static void test_errors(gpusort_context* ctx) {
  uint32_t keys[4] = {3, 1, 2, 0}, values[4] = {0, 1, 2, 3};
  CHECK_ERROR(gpusort_sort_by_key(ctx, GPUSORT_KEY_U32, keys, values, 3, 4, NULL),
              GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_sort_by_key: value_bytes must be 4 or 8, not 3");

  /* The message is the calling thread's own: another thread sees none. */
  thrd_t thread;
  int other_empty = 0;
  CHECK(thrd_create(&thread, other_thread_error_is_empty, NULL) == thrd_success, "thrd_create");
  thrd_join(thread, &other_empty);
  CHECK(other_empty, "another thread sees this thread's error");
  CHECK(gpusort_last_error()[0] != '\0', "the error was lost");

  CHECK_ERROR(gpusort_sort(NULL, GPUSORT_KEY_U32, keys, 4, NULL), GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_sort: context is NULL");
  CHECK_ERROR(gpusort_sort(ctx, (gpusort_key_type)17, keys, 4, NULL),
              GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_sort: key_type 17 is not a gpusort_key_type");
  CHECK_ERROR(gpusort_sort(ctx, GPUSORT_KEY_U32, NULL, 4, NULL), GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_sort: keys is NULL");
  const uint32_t past_last = algorithm_count(); /* the first value that is no algorithm */
  gpusort_sort_options options = {0, (gpusort_algorithm)past_last, 0, 0};
  CHECK_ERROR(gpusort_sort(ctx, GPUSORT_KEY_U32, keys, 4, &options), GPUSORT_ERROR_INVALID_ARGUMENT,
              format("gpusort_sort: options->algorithm %u is not a gpusort_algorithm", past_last));
  gpusort_sort_options bits = {0, GPUSORT_ALGORITHM_AUTOMATIC, 8, 40};
  CHECK_ERROR(gpusort_sort(ctx, GPUSORT_KEY_U32, keys, 4, &bits), GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_sort: options->begin_bit = 8, options->end_bit = 40: bits [8, 40) are "
              "empty or beyond the 32-bit u32 key");
  CHECK_ERROR(gpusort_sort_by_key(ctx, GPUSORT_KEY_U32, keys, NULL, 4, 4, NULL),
              GPUSORT_ERROR_INVALID_ARGUMENT, "gpusort_sort_by_key: values is NULL");
  CHECK_ERROR(gpusort_argsort(ctx, GPUSORT_KEY_U32, keys, 4, values, 2, NULL),
              GPUSORT_ERROR_INVALID_ARGUMENT, "gpusort_argsort: index_bytes must be 4 or 8, not 2");
  CHECK_ERROR(gpusort_argsort(ctx, GPUSORT_KEY_U32, keys, 4, NULL, 4, NULL),
              GPUSORT_ERROR_INVALID_ARGUMENT, "gpusort_argsort: indices is NULL");
  CHECK_ERROR(gpusort_context_create(NULL, NULL), GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_context_create: out_context is NULL");

  /* A success clears the message. */
  CHECK_OK(gpusort_sort(ctx, GPUSORT_KEY_U32, keys, 4, NULL));
  CHECK(gpusort_last_error()[0] == '\0', "message '%s' after a success", gpusort_last_error());
  CHECK(keys[0] == 0 && keys[1] == 1 && keys[2] == 2 && keys[3] == 3, "4 keys not sorted");
}

/* Every problem of gpusort_sort_segments' arguments, one at a time, each named by its C
 * parameter. */
static void test_segments_errors(gpusort_context* ctx) {
  uint32_t keys[7] = {3, 1, 2, 9, 8, 7, 5}, out[7], values[7] = {0}, indices[7];
  const uint32_t offsets[4] = {0, 3, 3, 7};
  gpusort_sort_options bitonic = {0, algorithm_named("bitonic"), 0, 0};
  gpusort_sort_options algorithm = {0, (gpusort_algorithm)-1, 0, 0};
  gpusort_sort_options bits = {0, GPUSORT_ALGORITHM_AUTOMATIC, 40, 0};
  const gpusort_status invalid = GPUSORT_ERROR_INVALID_ARGUMENT;
  CHECK_ERROR(gpusort_sort_segments(NULL, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, offsets, 4, 4,
                                    NULL, 0, NULL),
              invalid, "gpusort_sort_segments: context is NULL");
  CHECK_ERROR(gpusort_sort_segments(ctx, (gpusort_key_type)6, 7, keys, out, NULL, 0, offsets, 4, 4,
                                    NULL, 0, NULL),
              invalid, "gpusort_sort_segments: key_type 6 is not a gpusort_key_type");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, NULL, out, NULL, 0, offsets, 4, 4,
                                    NULL, 0, NULL),
              invalid, "gpusort_sort_segments: keys is NULL");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, NULL, NULL, 0, offsets, 4, 4,
                                    NULL, 0, NULL),
              invalid,
              "gpusort_sort_segments: keys_out, values and indices are all NULL: nothing to write");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 4, offsets, 4, 4,
                                    NULL, 0, NULL),
              invalid, "gpusort_sort_segments: values is NULL, but value_bytes is 4");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, values, 0, offsets, 4, 4,
                                    NULL, 0, NULL),
              invalid,
              "gpusort_sort_segments: value_bytes must be 4 or 8 (values is not NULL), not 0");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, offsets, 2, 4,
                                    NULL, 0, NULL),
              invalid,
              "gpusort_sort_segments: offset_bytes must be 4 or 8 (offsets are given), not 2");
  CHECK_ERROR(
      gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, NULL, 4, 4, NULL, 0, NULL),
      invalid, "gpusort_sort_segments: offsets is NULL, but offset_count is 4");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, offsets, 4, 0,
                                    NULL, 0, NULL),
              invalid,
              "gpusort_sort_segments: offset_count is 0, but offsets is not NULL (S segments need "
              "S + 1 offsets, from 0 to n = 7)");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, offsets, 4, 4,
                                    indices, 3, NULL),
              invalid,
              "gpusort_sort_segments: index_bytes must be 4 or 8 (indices is not NULL), not 3");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, offsets, 4, 4,
                                    NULL, 0, &algorithm),
              invalid, "gpusort_sort_segments: options->algorithm -1 is not a gpusort_algorithm");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, offsets, 4, 4,
                                    NULL, 0, &bits),
              invalid,
              "gpusort_sort_segments: options->begin_bit = 40, options->end_bit = 0: bits [40, 32) "
              "are empty or beyond the 32-bit u32 key");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, offsets, 4, 4,
                                    NULL, 0, &bitonic),
              invalid,
              "gpusort_sort_segments: segmented sort and argsort need a stable sort: bitonic is "
              "not stable");
  const uint32_t first_not_0[4] = {1, 3, 3, 7}, last_not_n[4] = {0, 3, 3, 6};
  const uint32_t decreasing[4] = {0, 4, 3, 7};
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, first_not_0, 4, 4,
                                    NULL, 0, NULL),
              invalid, "gpusort_sort_segments: segment offsets: the first is 1, not 0");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, last_not_n, 4, 4,
                                    NULL, 0, NULL),
              invalid,
              "gpusort_sort_segments: segment offsets: the last is 6, not n = 7 (the number of "
              "keys)");
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, decreasing, 4, 4,
                                    NULL, 0, NULL),
              invalid,
              "gpusort_sort_segments: segment offsets decrease at index 2: offsets[1] = 4 > "
              "offsets[2] = 3");
  /* None of them wrote anything; the same call with its arguments right sorts. */
  static const uint32_t input[7] = {3, 1, 2, 9, 8, 7, 5}, sorted[7] = {1, 2, 3, 5, 7, 8, 9};
  CHECK(memcmp(keys, input, sizeof keys) == 0, "a failed call changed keys");
  CHECK_OK(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 7, keys, out, NULL, 0, offsets, 4, 4, NULL,
                                 0, NULL));
  CHECK(memcmp(out, sorted, sizeof out) == 0 && memcmp(keys, input, sizeof keys) == 0,
        "gpusort_sort_segments into keys_out");
}

/* Counts near 2^64 (n = UINT64_MAX and its neighbours, and counts whose byte size wraps around to
 * a few bytes) are invalid arguments naming the count, at every entry point that takes one. A
 * host array can hold at most PTRDIFF_MAX bytes. */
static void test_counts(gpusort_context* ctx) {
  const gpusort_status invalid = GPUSORT_ERROR_INVALID_ARGUMENT;
  static uint64_t array[8];
  const uint64_t most4 = (uint64_t)PTRDIFF_MAX / 4, most8 = (uint64_t)PTRDIFF_MAX / 8;
  const char* too_large =
      "%s: %s = %llu is too large: %s of %u bytes each would not fit in memory "
      "(at most %llu)";
#define TOO_LARGE(function, count, value, array, bytes, most)                               \
  format(too_large, function, count, (unsigned long long)(value), array, (unsigned)(bytes), \
         (unsigned long long)(most))
  /* 2^62 + 1 four-byte keys are 2^64 + 4 bytes: 4 once wrapped. */
  const uint64_t huge[] = {UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 63, ((uint64_t)1 << 62) + 1,
                           most4 + 1,  most8 + 1};
  for (size_t i = 0; i < sizeof huge / sizeof *huge; ++i) {
    const uint64_t n = huge[i];
    if (n > most4) {
      CHECK_ERROR(gpusort_sort(ctx, GPUSORT_KEY_U32, array, n, NULL), invalid,
                  TOO_LARGE("gpusort_sort", "n", n, "keys", 4, most4));
      CHECK_ERROR(gpusort_sort_by_key(ctx, GPUSORT_KEY_F32, array, array, 4, n, NULL), invalid,
                  TOO_LARGE("gpusort_sort_by_key", "n", n, "keys", 4, most4));
      CHECK_ERROR(gpusort_argsort(ctx, GPUSORT_KEY_I32, array, n, array, 4, NULL), invalid,
                  TOO_LARGE("gpusort_argsort", "n", n, "keys", 4, most4));
      CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, n, array, array, NULL, 0, NULL, 0, 0,
                                        NULL, 0, NULL),
                  invalid, TOO_LARGE("gpusort_sort_segments", "n", n, "keys", 4, most4));
    }
    /* Keys that fit, 8-byte values or indices that do not. */
    CHECK_ERROR(gpusort_sort(ctx, GPUSORT_KEY_F64, array, n, NULL), invalid,
                TOO_LARGE("gpusort_sort", "n", n, "keys", 8, most8));
    CHECK_ERROR(gpusort_sort_by_key(ctx, GPUSORT_KEY_U32, array, array, 8, n, NULL), invalid,
                n > most4 ? TOO_LARGE("gpusort_sort_by_key", "n", n, "keys", 4, most4)
                          : TOO_LARGE("gpusort_sort_by_key", "n", n, "values", 8, most8));
    CHECK_ERROR(gpusort_argsort(ctx, GPUSORT_KEY_U32, array, n, array, 8, NULL), invalid,
                n > most4 ? TOO_LARGE("gpusort_argsort", "n", n, "keys", 4, most4)
                          : TOO_LARGE("gpusort_argsort", "n", n, "indices", 8, most8));
    CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, n, array, NULL, array, 8, NULL, 0, 0,
                                      NULL, 0, NULL),
                invalid,
                n > most4 ? TOO_LARGE("gpusort_sort_segments", "n", n, "keys", 4, most4)
                          : TOO_LARGE("gpusort_sort_segments", "n", n, "values", 8, most8));
    CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, n, array, array, NULL, 0, NULL, 0, 0,
                                      array, 8, NULL),
                invalid,
                n > most4 ? TOO_LARGE("gpusort_sort_segments", "n", n, "keys", 4, most4)
                          : TOO_LARGE("gpusort_sort_segments", "n", n, "indices", 8, most8));
    CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 4, array, array, NULL, 0, array, 8, n,
                                      NULL, 0, NULL),
                invalid,
                TOO_LARGE("gpusort_sort_segments", "offset_count", n, "offsets", 8, most8));
  }
#undef TOO_LARGE
  /* The largest arrays that fit the address space go on to the sort's own limits (the device
   * memory limit of runs out of core, 2^31 - 1 keys for segmented sorts). */
  const char* prefix = "gpusort_sort: a device memory limit of ";
  gpusort_status s = gpusort_sort(ctx, GPUSORT_KEY_U64, array, most8, NULL);
  CHECK(s == invalid && strncmp(gpusort_last_error(), prefix, strlen(prefix)) == 0, "%s '%s'",
        gpusort_status_name(s), gpusort_last_error());
  CHECK_ERROR(gpusort_argsort(ctx, GPUSORT_KEY_U32, array, most8, array, 8, NULL), invalid,
              format("gpusort_argsort: %llu elements: gpusort sorts at most 2147483647 (2^31 - 1)",
                     (unsigned long long)most8));
  CHECK_ERROR(gpusort_sort_segments(ctx, GPUSORT_KEY_U32, 4, array, array, NULL, 0, array, 8, most8,
                                    NULL, 0, NULL),
              invalid,
              format("gpusort_sort_segments: %llu segments: gpusort sorts at most 2147483647 (2^31 "
                     "- 1)",
                     (unsigned long long)(most8 - 1)));

  /* The engine face's scratch sizes. */
  gpusort_sorter* sorter = NULL;
  gpusort_segmented_sorter* segmented = NULL;
  gpusort_sorter_config config = {GPUSORT_KEY_U32, 0, algorithm_named("radix_reduce_scan")};
  gpusort_segmented_sorter_config segmented_config = {GPUSORT_KEY_U64, 0, 4};
  CHECK_OK(gpusort_sorter_create(ctx, &config, &sorter));
  CHECK_OK(gpusort_segmented_sorter_create(ctx, &segmented_config, &segmented));
  const uint64_t counts[] = {UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 63, (uint64_t)1 << 32};
  const char* limit = "%s: %llu %s: gpusort sorts at most 2147483647 (2^31 - 1)%s";
  uint64_t bytes = 0;
  for (size_t i = 0; i < sizeof counts / sizeof *counts; ++i) {
    const unsigned long long c = counts[i];
    CHECK_ERROR(
        gpusort_sorter_scratch_bytes(sorter, c, &bytes), invalid,
        format(limit, "gpusort_sorter_scratch_bytes", c, "elements", " in one device sort"));
    CHECK_ERROR(gpusort_segmented_sorter_scratch_bytes(segmented, c, 1, &bytes), invalid,
                format(limit, "gpusort_segmented_sorter_scratch_bytes", c, "elements", ""));
    CHECK_ERROR(gpusort_segmented_sorter_scratch_bytes(segmented, 1, c, &bytes), invalid,
                format(limit, "gpusort_segmented_sorter_scratch_bytes", c, "segments", ""));
  }
  gpusort_sorter_destroy(sorter);
  gpusort_segmented_sorter_destroy(segmented);
}

/* A second context wrapping the first one's device, as an engine wraps its own. */
static void test_wrap(gpusort_context* ctx) {
  gpusort_context* wrapped = NULL;
  CHECK_OK(gpusort_context_wrap(gpusort_context_instance(ctx), gpusort_context_physical_device(ctx),
                                gpusort_context_device(ctx), gpusort_context_queue(ctx),
                                gpusort_context_queue_family_index(ctx), &wrapped));
  if (!wrapped) return;
  CHECK(gpusort_context_device(wrapped) == gpusort_context_device(ctx), "wrapped another device");
  int32_t keys[1000];
  for (int i = 0; i < 1000; ++i) keys[i] = (int32_t)(next_random() % 2001) - 1000;
  gpusort_sort_options descending = {1, GPUSORT_ALGORITHM_AUTOMATIC, 0, 0};
  CHECK_OK(gpusort_sort(wrapped, GPUSORT_KEY_I32, keys, 1000, &descending));
  int ordered = 1;
  for (int i = 1; i < 1000; ++i) ordered &= keys[i - 1] >= keys[i];
  CHECK(ordered, "i32 descending through a wrapped context is not sorted");
  gpusort_context* invalid = NULL;
  VkInstance instance = gpusort_context_instance(ctx);
  VkPhysicalDevice physical = gpusort_context_physical_device(ctx);
  VkDevice device = gpusort_context_device(ctx);
  VkQueue queue = gpusort_context_queue(ctx);
  CHECK_ERROR(gpusort_context_wrap(NULL, physical, device, queue, 0, &invalid),
              GPUSORT_ERROR_INVALID_ARGUMENT, "gpusort_context_wrap: instance is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_context_wrap(instance, NULL, device, queue, 0, &invalid),
              GPUSORT_ERROR_INVALID_ARGUMENT,
              "gpusort_context_wrap: physical_device is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_context_wrap(instance, physical, NULL, queue, 0, &invalid),
              GPUSORT_ERROR_INVALID_ARGUMENT, "gpusort_context_wrap: device is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_context_wrap(instance, physical, device, NULL, 0, &invalid),
              GPUSORT_ERROR_INVALID_ARGUMENT, "gpusort_context_wrap: queue is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_context_wrap(instance, physical, device, queue, 0, NULL),
              GPUSORT_ERROR_INVALID_ARGUMENT, "gpusort_context_wrap: out_context is NULL");
  CHECK(invalid == NULL, "a failed gpusort_context_wrap set its context");
  /* A queue family the physical device does not have. */
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, NULL);
  CHECK_ERROR(gpusort_context_wrap(instance, physical, device, queue, 1000, &invalid),
              GPUSORT_ERROR_INVALID_ARGUMENT,
              format("gpusort_context_wrap: queue family 1000 does not exist (the physical device "
                     "has %u queue families)",
                     families));
  CHECK(invalid == NULL, "a failed gpusort_context_wrap set its context");
  gpusort_context_destroy(invalid);
  gpusort_context_destroy(wrapped); /* the device stays: it is ctx's */
}

/* Device names that match nothing, and indices beyond any integer type, are invalid arguments
 * with a message naming them. */
static void test_device_selection(void) {
  static const char* const wanted[][2] = {
      {"4294967296", "no Vulkan device has index '4294967296'"},
      {"18446744073709551616", "device index '18446744073709551616' is out of range"},
      {"no-such-gpu", "no Vulkan device matches 'no-such-gpu'"},
  };
  for (size_t i = 0; i < sizeof wanted / sizeof *wanted; ++i) {
    gpusort_context* ctx = NULL;
    gpusort_context_options options = {wanted[i][0], 0, 0};
    gpusort_status s = gpusort_context_create(&options, &ctx);
    const char* function = "gpusort_context_create: ";
    CHECK(s == GPUSORT_ERROR_INVALID_ARGUMENT && ctx == NULL &&
              strncmp(gpusort_last_error(), function, strlen(function)) == 0 &&
              strstr(gpusort_last_error(), wanted[i][1]) != NULL &&
              strchr(gpusort_last_error(), '\n') == NULL,
          "device '%s': %s '%s'", wanted[i][0], gpusort_status_name(s), gpusort_last_error());
    gpusort_context_destroy(ctx);
  }
}

/* One context used by several threads at once (gpusort.hpp allows it): each thread sorts its own
 * arrays, and every result is compared in full with qsort's. */
enum { sorting_threads = 6, thread_sorts = 3, thread_n = 3000 };

typedef struct {
  gpusort_context* ctx;
  uint64_t seed;
  int failures;
} ThreadSorts;

static int sort_from_thread(void* argument) {
  ThreadSorts* t = argument;
  uint64_t* keys = malloc(thread_n * sizeof *keys);
  uint64_t* expected = malloc(thread_n * sizeof *expected);
  uint32_t* input = malloc(thread_n * sizeof *input);
  uint32_t* ukeys = malloc(thread_n * sizeof *ukeys);
  uint32_t* values = malloc(thread_n * sizeof *values);
  uint64_t state = t->seed;
  for (int round = 0; round < thread_sorts; ++round) {
    for (uint32_t i = 0; i < thread_n; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      keys[i] = expected[i] = state >> (round * 20);
      input[i] = ukeys[i] = (uint32_t)(state >> 40) % 100; /* ties check stability */
      values[i] = i;
    }
    qsort(expected, thread_n, sizeof *expected, compare_u64);
    if (gpusort_sort(t->ctx, GPUSORT_KEY_U64, keys, thread_n, NULL) != GPUSORT_OK ||
        memcmp(keys, expected, thread_n * sizeof *keys) != 0)
      ++t->failures;
    if (gpusort_sort_by_key(t->ctx, GPUSORT_KEY_U32, ukeys, values, 4, thread_n, NULL) !=
            GPUSORT_OK ||
        !is_stable_sort_u32(input, ukeys, values, thread_n, 0))
      ++t->failures;
  }
  free(keys);
  free(expected);
  free(input);
  free(ukeys);
  free(values);
  return 0;
}

static void test_threads_share_a_context(gpusort_context* ctx) {
  thrd_t threads[sorting_threads];
  ThreadSorts work[sorting_threads];
  int started[sorting_threads];
  for (int i = 0; i < sorting_threads; ++i) {
    work[i].ctx = ctx;
    work[i].seed = next_random();
    work[i].failures = 0;
    started[i] = thrd_create(&threads[i], sort_from_thread, &work[i]) == thrd_success;
    CHECK(started[i], "thrd_create");
  }
  for (int i = 0; i < sorting_threads; ++i) {
    if (!started[i]) continue;
    thrd_join(threads[i], NULL);
    CHECK(work[i].failures == 0, "thread %d: %d of %d sorts wrong or failed", i, work[i].failures,
          2 * thread_sorts);
  }
}

/* ---- Engine face: everything below is the caller's Vulkan code ---- */

typedef struct {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void* mapped;
} Buffer;

static Buffer make_buffer(gpusort_context* ctx, VkDeviceSize bytes, int for_gpusort,
                          int host_visible) {
  VkDevice device = gpusort_context_device(ctx);
  Buffer b = {VK_NULL_HANDLE, VK_NULL_HANDLE, NULL};
  VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (for_gpusort)
    info.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                  VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (vkCreateBuffer(device, &info, NULL, &b.buffer) != VK_SUCCESS) abort();
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(gpusort_context_physical_device(ctx), &memory);
  VkMemoryPropertyFlags wanted =
      host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                   : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < memory.memoryTypeCount && type == UINT32_MAX; ++i)
    if ((req.memoryTypeBits & (1u << i)) &&
        (memory.memoryTypes[i].propertyFlags & wanted) == wanted)
      type = i;
  if (type == UINT32_MAX) abort();
  VkMemoryAllocateFlagsInfo flags = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.pNext = for_gpusort ? &flags : NULL;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  if (vkAllocateMemory(device, &alloc, NULL, &b.memory) != VK_SUCCESS) abort();
  if (vkBindBufferMemory(device, b.buffer, b.memory, 0) != VK_SUCCESS) abort();
  if (host_visible && vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped) != VK_SUCCESS)
    abort();
  return b;
}

static void free_buffer(gpusort_context* ctx, Buffer* b) {
  vkDestroyBuffer(gpusort_context_device(ctx), b->buffer, NULL);
  vkFreeMemory(gpusort_context_device(ctx), b->memory, NULL);
}

static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier b = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, NULL, 0, NULL);
}

static void copy(VkCommandBuffer cmd, Buffer* src, VkDeviceSize src_offset, Buffer* dst,
                 VkDeviceSize dst_offset, VkDeviceSize bytes) {
  VkBufferCopy region = {src_offset, dst_offset, bytes};
  vkCmdCopyBuffer(cmd, src->buffer, dst->buffer, 1, &region);
}

/* The engine face's argument problems, each named by its C parameter, and counts near 2^64. Every
 * call fails before it records anything. */
static void test_engine_errors(gpusort_context* ctx) {
  const gpusort_status invalid = GPUSORT_ERROR_INVALID_ARGUMENT;
  gpusort_sorter* sorter = NULL;
  gpusort_sorter_config bad = {GPUSORT_KEY_U32, 0, GPUSORT_ALGORITHM_AUTOMATIC, 0, 0, 0, 3};
  CHECK_ERROR(gpusort_sorter_create(ctx, &bad, &sorter), invalid,
              "gpusort_sorter_create: config->count_bytes must be 0, 4 or 8, not 3");
  bad.count_bytes = 8;
  bad.value_bytes = 2;
  CHECK_ERROR(gpusort_sorter_create(ctx, &bad, &sorter), invalid,
              "gpusort_sorter_create: config->value_bytes must be 0, 4 or 8, not 2");
  bad.value_bytes = 4;
  bad.key = (gpusort_key_type)9;
  CHECK_ERROR(gpusort_sorter_create(ctx, &bad, &sorter), invalid,
              "gpusort_sorter_create: config->key 9 is not a gpusort_key_type");
  bad.key = GPUSORT_KEY_I64;
  bad.algorithm = (gpusort_algorithm)algorithm_count();
  CHECK_ERROR(gpusort_sorter_create(ctx, &bad, &sorter), invalid,
              format("gpusort_sorter_create: config->algorithm %u is not a gpusort_algorithm",
                     algorithm_count()));
  bad.algorithm = GPUSORT_ALGORITHM_ONESWEEP;
  bad.begin_bit = 64;
  CHECK_ERROR(gpusort_sorter_create(ctx, &bad, &sorter), invalid,
              "gpusort_sorter_create: config->begin_bit = 64, config->end_bit = 0: bits [64, 64) "
              "are empty or beyond the 64-bit i64 key");
  CHECK_ERROR(gpusort_sorter_create(ctx, NULL, &sorter), invalid,
              "gpusort_sorter_create: config is NULL");
  CHECK_ERROR(gpusort_sorter_create(NULL, &bad, &sorter), invalid,
              "gpusort_sorter_create: context is NULL");
  CHECK(sorter == NULL, "a failed gpusort_sorter_create set its sorter");
  gpusort_segmented_sorter* segmented = NULL;
  gpusort_segmented_sorter_config bad_segmented = {GPUSORT_KEY_U32, 0, 2};
  CHECK_ERROR(gpusort_segmented_sorter_create(ctx, &bad_segmented, &segmented), invalid,
              "gpusort_segmented_sorter_create: config->offset_bytes must be 4 or 8, not 2");
  bad_segmented.offset_bytes = 8;
  bad_segmented.algorithm = algorithm_named("bitonic");
  CHECK_ERROR(gpusort_segmented_sorter_create(ctx, &bad_segmented, &segmented), invalid,
              "gpusort_segmented_sorter_create: segmented sort and argsort need a stable sort: "
              "bitonic is not stable");

  gpusort_sorter_config config = {GPUSORT_KEY_U32, 0, algorithm_named("radix_reduce_scan")};
  gpusort_segmented_sorter_config segmented_config = {GPUSORT_KEY_U64, 4, 4};
  CHECK_OK(gpusort_sorter_create(ctx, &config, &sorter));
  CHECK_OK(gpusort_segmented_sorter_create(ctx, &segmented_config, &segmented));
  if (!sorter || !segmented) return;
  uint64_t scratch_bytes = 0;
  CHECK_ERROR(gpusort_sorter_scratch_bytes(sorter, 100, NULL), invalid,
              "gpusort_sorter_scratch_bytes: out_bytes is NULL");
  CHECK_ERROR(gpusort_sorter_scratch_bytes(NULL, 100, &scratch_bytes), invalid,
              "gpusort_sorter_scratch_bytes: sorter is NULL");
  CHECK_OK(gpusort_sorter_scratch_bytes(sorter, 100, &scratch_bytes));
  Buffer keys = make_buffer(ctx, 1024, 1, 0), scratch = make_buffer(ctx, scratch_bytes, 1, 0);
  VkDevice device = gpusort_context_device(ctx);
  VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = gpusort_context_queue_family_index(ctx);
  VkCommandPool pool;
  vkCreateCommandPool(device, &pool_info, NULL, &pool);
  VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd;
  vkAllocateCommandBuffers(device, &alloc, &cmd);
  VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(cmd, &begin);

  const gpusort_buffer_ref none = {VK_NULL_HANDLE, 0}, keys_ref = {keys.buffer, 0};
  const gpusort_buffer_ref scratch_ref = {scratch.buffer, 0}, odd = {keys.buffer, 4};
  CHECK_ERROR(gpusort_sorter_record(NULL, cmd, keys_ref, none, scratch_ref, 100), invalid,
              "gpusort_sorter_record: sorter is NULL");
  CHECK_ERROR(gpusort_sorter_record(sorter, VK_NULL_HANDLE, keys_ref, none, scratch_ref, 100),
              invalid, "gpusort_sorter_record: command_buffer is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_sorter_record(sorter, cmd, none, none, scratch_ref, 100), invalid,
              "gpusort_sorter_record: keys.buffer is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_sorter_record(sorter, cmd, odd, none, scratch_ref, 100), invalid,
              "gpusort_sorter_record: keys.offset 4 is not a multiple of 16");
  CHECK_ERROR(gpusort_sorter_record(sorter, cmd, keys_ref, keys_ref, scratch_ref, 100), invalid,
              "gpusort_sorter_record: values.buffer is given, but the sorter was created with "
              "value_bytes = 0");
  CHECK_ERROR(gpusort_sorter_record(sorter, cmd, keys_ref, none, keys_ref, 100), invalid,
              "gpusort_sorter_record: keys and scratch overlap (for 100 elements)");
  CHECK_ERROR(gpusort_sorter_record_indirect(sorter, VK_NULL_HANDLE, keys_ref, none, scratch_ref,
                                             keys_ref, 100),
              invalid, "gpusort_sorter_record_indirect: command_buffer is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_sorter_record_indirect(sorter, cmd, none, none, scratch_ref, keys_ref, 100),
              invalid, "gpusort_sorter_record_indirect: keys.buffer is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_sorter_record_indirect(sorter, cmd, keys_ref, none, scratch_ref, none, 100),
              invalid, "gpusort_sorter_record_indirect: count.buffer is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_segmented_sorter_record(segmented, VK_NULL_HANDLE, keys_ref, keys_ref,
                                              keys_ref, none, scratch_ref, 5, 1),
              invalid, "gpusort_segmented_sorter_record: command_buffer is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_segmented_sorter_record(segmented, cmd, keys_ref, none, keys_ref, none,
                                              scratch_ref, 5, 1),
              invalid,
              "gpusort_segmented_sorter_record: values.buffer is VK_NULL_HANDLE, but the sorter "
              "was created with value_bytes = 4");
  CHECK_ERROR(gpusort_segmented_sorter_record(segmented, cmd, keys_ref, keys_ref, keys_ref, none,
                                              scratch_ref, 5, 0),
              invalid,
              "gpusort_segmented_sorter_record: segments is 0, but n is 5 (offsets[segments] must "
              "be n)");
  CHECK_ERROR(gpusort_segmented_sorter_record(segmented, cmd, none, keys_ref, keys_ref, none,
                                              scratch_ref, 5, 1),
              invalid, "gpusort_segmented_sorter_record: keys.buffer is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_segmented_sorter_record_indirect(segmented, cmd, keys_ref, keys_ref, none,
                                                       none, scratch_ref, keys_ref, 5, 1),
              invalid,
              "gpusort_segmented_sorter_record_indirect: offsets.buffer is VK_NULL_HANDLE");
  CHECK_ERROR(gpusort_segmented_sorter_record_indirect(segmented, cmd, keys_ref, keys_ref, keys_ref,
                                                       none, scratch_ref, none, 5, 1),
              invalid,
              "gpusort_segmented_sorter_record_indirect: segment_count.buffer is VK_NULL_HANDLE");
  gpusort_segmented_sorter_destroy(segmented);
  segmented_config.value_bytes = 0;
  CHECK_OK(gpusort_segmented_sorter_create(ctx, &segmented_config, &segmented));
  if (!segmented) return;

  /* Counts near 2^64. */
  const uint64_t counts[] = {UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 63, (uint64_t)1 << 32};
  for (size_t i = 0; i < sizeof counts / sizeof *counts; ++i) {
    const unsigned long long c = counts[i];
    const char* limit = "%s: %llu %s: gpusort sorts at most 2147483647 (2^31 - 1)%s";
    CHECK_ERROR(gpusort_sorter_record(sorter, cmd, none, none, none, c), invalid,
                format(limit, "gpusort_sorter_record", c, "elements", " in one device sort"));
    CHECK_ERROR(
        gpusort_sorter_record_indirect(sorter, cmd, none, none, none, none, c), invalid,
        format(limit, "gpusort_sorter_record_indirect", c, "elements", " in one device sort"));
    CHECK_ERROR(gpusort_segmented_sorter_record(segmented, cmd, none, none, none, none, none, c, 1),
                invalid, format(limit, "gpusort_segmented_sorter_record", c, "elements", ""));
    CHECK_ERROR(gpusort_segmented_sorter_record(segmented, cmd, none, none, none, none, none, 1, c),
                invalid, format(limit, "gpusort_segmented_sorter_record", c, "segments", ""));
    CHECK_ERROR(gpusort_segmented_sorter_record_indirect(segmented, cmd, none, none, none, none,
                                                         none, none, c, 1),
                invalid,
                format(limit, "gpusort_segmented_sorter_record_indirect", c, "elements", ""));
    CHECK_ERROR(gpusort_segmented_sorter_record_indirect(segmented, cmd, none, none, none, none,
                                                         none, none, 1, c),
                invalid,
                format(limit, "gpusort_segmented_sorter_record_indirect", c, "segments", ""));
  }
  vkEndCommandBuffer(cmd);
  vkDestroyCommandPool(device, pool, NULL);
  free_buffer(ctx, &keys);
  free_buffer(ctx, &scratch);
  gpusort_sorter_destroy(sorter);
  gpusort_segmented_sorter_destroy(segmented);
}

/* Two sorts in one command buffer: f32 keys with u32 values through record_indirect (the count
 * written on the GPU by vkCmdFillBuffer, smaller than max_n) and u32 keys through record. */
static void test_engine_face(gpusort_context* ctx) {
  enum { max_n = 3000, count = 2000 };
  VkDevice device = gpusort_context_device(ctx);
  gpusort_sorter *pairs = NULL, *keys_only = NULL;
  gpusort_sorter_config pairs_config = {GPUSORT_KEY_F32, 4, GPUSORT_ALGORITHM_AUTOMATIC, 0, 0, 0};
  gpusort_sorter_config keys_config = {GPUSORT_KEY_U32, 0, GPUSORT_ALGORITHM_AUTOMATIC, 1, 0, 0};
  CHECK_OK(gpusort_sorter_create(ctx, &pairs_config, &pairs));
  CHECK_OK(gpusort_sorter_create(ctx, &keys_config, &keys_only));
  if (!pairs || !keys_only) return;
  uint64_t scratch_pairs = 0, scratch_keys = 0;
  CHECK_OK(gpusort_sorter_scratch_bytes(pairs, max_n, &scratch_pairs));
  CHECK_OK(gpusort_sorter_scratch_bytes(keys_only, max_n, &scratch_keys));

  const VkDeviceSize bytes = max_n * 4;
  Buffer upload = make_buffer(ctx, 3 * bytes, 0, 1), readback = make_buffer(ctx, 3 * bytes, 0, 1);
  Buffer fkeys = make_buffer(ctx, bytes, 1, 0), values = make_buffer(ctx, bytes, 1, 0);
  Buffer ukeys = make_buffer(ctx, bytes, 1, 0), count_buffer = make_buffer(ctx, 16, 1, 0);
  Buffer scratch1 = make_buffer(ctx, scratch_pairs, 1, 0),
         scratch2 = make_buffer(ctx, scratch_keys, 1, 0);

  uint32_t* in = upload.mapped; /* [f32 keys | values | u32 keys] */
  for (uint32_t i = 0; i < max_n; ++i) {
    in[i] = (uint32_t)(next_random() % 64) * 0x00800000u ^ (i % 3 ? 0u : 0x80000000u);
    in[max_n + i] = i;
    in[2 * max_n + i] = (uint32_t)next_random();
  }

  VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = gpusort_context_queue_family_index(ctx);
  VkCommandPool pool;
  vkCreateCommandPool(device, &pool_info, NULL, &pool);
  VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd;
  vkAllocateCommandBuffers(device, &alloc, &cmd);
  VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(cmd, &begin);

  /* Poison scratch, then produce keys, values and the count with transfers. */
  vkCmdFillBuffer(cmd, scratch1.buffer, 0, VK_WHOLE_SIZE, poison);
  vkCmdFillBuffer(cmd, scratch2.buffer, 0, VK_WHOLE_SIZE, poison);
  copy(cmd, &upload, 0, &fkeys, 0, bytes);
  copy(cmd, &upload, bytes, &values, 0, bytes);
  copy(cmd, &upload, 2 * bytes, &ukeys, 0, bytes);
  vkCmdFillBuffer(cmd, count_buffer.buffer, 0, 4, count);
  barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  gpusort_buffer_ref none = {VK_NULL_HANDLE, 0};
  gpusort_buffer_ref fkeys_ref = {fkeys.buffer, 0}, values_ref = {values.buffer, 0},
                     ukeys_ref = {ukeys.buffer, 0};
  gpusort_buffer_ref scratch1_ref = {scratch1.buffer, 0}, scratch2_ref = {scratch2.buffer, 0};
  gpusort_buffer_ref count_ref = {count_buffer.buffer, 0};
  CHECK_OK(gpusort_sorter_record_indirect(pairs, cmd, fkeys_ref, values_ref, scratch1_ref,
                                          count_ref, max_n));
  CHECK_OK(gpusort_sorter_record(keys_only, cmd, ukeys_ref, none, scratch2_ref, max_n));
  barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  copy(cmd, &fkeys, 0, &readback, 0, bytes);
  copy(cmd, &values, 0, &readback, bytes, bytes);
  copy(cmd, &ukeys, 0, &readback, 2 * bytes, bytes);
  barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  vkEndCommandBuffer(cmd);

  VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  vkCreateFence(device, &fence_info, NULL, &fence);
  VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  CHECK(vkQueueSubmit(gpusort_context_queue(ctx), 1, &submit, fence) == VK_SUCCESS,
        "vkQueueSubmit");
  CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS, "vkWaitForFences");

  const uint32_t* out = readback.mapped;
  CHECK(is_stable_sort_u32(in, out, out + max_n, count, 1),
        "record_indirect: first %d not the stable sort", count);
  int tail_kept = 1;
  for (uint32_t i = count; i < max_n; ++i) tail_kept &= out[i] == in[i] && out[max_n + i] == i;
  CHECK(tail_kept, "record_indirect touched elements beyond the count");
  /* Descending u32 keys: compare with the input sorted by qsort. */
  uint64_t* expected = malloc(max_n * sizeof *expected);
  for (uint32_t i = 0; i < max_n; ++i) expected[i] = in[2 * max_n + i];
  qsort(expected, max_n, sizeof *expected, compare_u64);
  int keys_ok = 1;
  for (uint32_t i = 0; i < max_n; ++i)
    keys_ok &= out[2 * max_n + i] == (uint32_t)expected[max_n - 1 - i];
  CHECK(keys_ok, "record: descending u32 keys differ from qsort");
  free(expected);

  vkDestroyFence(device, fence, NULL);
  vkDestroyCommandPool(device, pool, NULL);
  Buffer* buffers[] = {&upload, &readback,     &fkeys,    &values,
                       &ukeys,  &count_buffer, &scratch1, &scratch2};
  for (size_t i = 0; i < sizeof buffers / sizeof *buffers; ++i) free_buffer(ctx, buffers[i]);
  gpusort_sorter_destroy(pairs);
  gpusort_sorter_destroy(keys_only);
}

int main(void) {
  gpusort_context* ctx = NULL;
  gpusort_context_options options = {NULL, 1, 1}; /* device: GPUSORT_DEVICE, else the best */
  gpusort_status s = gpusort_context_create(&options, &ctx);
  if (s != GPUSORT_OK) {
    fprintf(stderr, "gpusort_context_create: %s: %s\n", gpusort_status_name(s),
            gpusort_last_error());
    printf("0 passed, 1 failed\n");
    return 1;
  }
  test_algorithm_names();
  test_convenient_face(ctx);
  test_segments(ctx);
  test_topk(ctx);
  test_errors(ctx);
  test_segments_errors(ctx);
  test_counts(ctx);
  test_engine_errors(ctx);
  test_wrap(ctx);
  test_device_selection();
  test_threads_share_a_context(ctx);
  test_engine_face(ctx);
  uint64_t messages = gpusort_context_validation_messages(ctx);
  CHECK(messages == 0, "%llu Vulkan validation messages (printed above)",
        (unsigned long long)messages);
  gpusort_context_destroy(ctx);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
