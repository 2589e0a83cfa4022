// The specialization constants of Onesweep's kernels (and partition_plan's), written once for the
// host (C++) and the kernels (GLSL): the kernels declare each constant at the id defined here
// (`layout(constant_id = ONESWEEP_PASS_ID_SPIN_LIMIT)`), and the host passes a struct whose
// fields are the constants in id order, which the static_asserts below check field by field.
#ifndef GPUSORT_ONESWEEP_CONSTANTS_H
#define GPUSORT_ONESWEEP_CONSTANTS_H

// Every kernel: the workgroup size, then the key's layout (onesweep_common.glsl): the shared
// prefix, KeySpec (primitives/glsl/spec_constants.h; onesweep_clear has the workgroup alone).
#ifdef __cplusplus
#include "primitives/glsl/spec_constants.h"
#else
#include "spec_constants.h"
#endif

// onesweep_histogram.comp
#define ONESWEEP_HISTOGRAM_ID_KEYS_PER_THREAD 5
#define ONESWEEP_HISTOGRAM_ID_WIDE_INDICES 6

// onesweep_pass.comp
#define ONESWEEP_PASS_ID_MIN_SUBGROUP_SIZE 5
#define ONESWEEP_PASS_ID_MAX_SUBGROUP_SIZE 6
#define ONESWEEP_PASS_ID_KEYS_PER_THREAD 7
#define ONESWEEP_PASS_ID_SPIN_LIMIT 8
#define ONESWEEP_PASS_ID_PUBLISH_REFUSAL_PERIOD 9
#define ONESWEEP_PASS_ID_LOOKBACK_WINDOW 10
#define ONESWEEP_PASS_ID_PROFILE_OMIT 11
#define ONESWEEP_PASS_ID_FULL_TILE_COPY 12
#define ONESWEEP_PASS_ID_GUESS_TILE 13
#define ONESWEEP_PASS_ID_COUNTERS_IN_EXCHANGE 14
#define ONESWEEP_PASS_ID_PARTITION_PASS 15
#define ONESWEEP_PASS_ID_WIDE_INDICES 16
#define ONESWEEP_PASS_ID_CLAIM_BY_ID 17
#define ONESWEEP_PASS_ID_PERSISTENT 18
#define ONESWEEP_PASS_ID_PREFETCH_NEXT 19

// onesweep_copy_back.comp
#define ONESWEEP_COPY_BACK_ID_WIDE_INDICES 5

#ifdef __cplusplus

namespace gpusort {

struct OnesweepHistogramSpec {
  KeySpec key;
  uint32_t keys_per_thread, wide_indices;
};
struct OnesweepPassSpec {
  KeySpec key;
  uint32_t min_subgroup_size, max_subgroup_size, keys_per_thread, spin_limit,
      publish_refusal_period, lookback_window, profile_omit, full_tile_copy, guess_tile,
      counters_in_exchange, partition_pass, wide_indices, claim_by_id, persistent, prefetch_next;
};
struct OnesweepCopyBackSpec {
  KeySpec key;
  uint32_t wide_indices;
};

// Each field at 4 x its constant's id, and nothing after the last.
GPUSORT_SPEC_AT(OnesweepHistogramSpec, keys_per_thread, ONESWEEP_HISTOGRAM_ID_KEYS_PER_THREAD);
GPUSORT_SPEC_AT(OnesweepHistogramSpec, wide_indices, ONESWEEP_HISTOGRAM_ID_WIDE_INDICES);
static_assert(sizeof(OnesweepHistogramSpec) == 4 * (ONESWEEP_HISTOGRAM_ID_WIDE_INDICES + 1));

GPUSORT_SPEC_AT(OnesweepPassSpec, min_subgroup_size, ONESWEEP_PASS_ID_MIN_SUBGROUP_SIZE);
GPUSORT_SPEC_AT(OnesweepPassSpec, max_subgroup_size, ONESWEEP_PASS_ID_MAX_SUBGROUP_SIZE);
GPUSORT_SPEC_AT(OnesweepPassSpec, keys_per_thread, ONESWEEP_PASS_ID_KEYS_PER_THREAD);
GPUSORT_SPEC_AT(OnesweepPassSpec, spin_limit, ONESWEEP_PASS_ID_SPIN_LIMIT);
GPUSORT_SPEC_AT(OnesweepPassSpec, publish_refusal_period, ONESWEEP_PASS_ID_PUBLISH_REFUSAL_PERIOD);
GPUSORT_SPEC_AT(OnesweepPassSpec, lookback_window, ONESWEEP_PASS_ID_LOOKBACK_WINDOW);
GPUSORT_SPEC_AT(OnesweepPassSpec, profile_omit, ONESWEEP_PASS_ID_PROFILE_OMIT);
GPUSORT_SPEC_AT(OnesweepPassSpec, full_tile_copy, ONESWEEP_PASS_ID_FULL_TILE_COPY);
GPUSORT_SPEC_AT(OnesweepPassSpec, guess_tile, ONESWEEP_PASS_ID_GUESS_TILE);
GPUSORT_SPEC_AT(OnesweepPassSpec, counters_in_exchange, ONESWEEP_PASS_ID_COUNTERS_IN_EXCHANGE);
GPUSORT_SPEC_AT(OnesweepPassSpec, partition_pass, ONESWEEP_PASS_ID_PARTITION_PASS);
GPUSORT_SPEC_AT(OnesweepPassSpec, wide_indices, ONESWEEP_PASS_ID_WIDE_INDICES);
GPUSORT_SPEC_AT(OnesweepPassSpec, claim_by_id, ONESWEEP_PASS_ID_CLAIM_BY_ID);
GPUSORT_SPEC_AT(OnesweepPassSpec, persistent, ONESWEEP_PASS_ID_PERSISTENT);
GPUSORT_SPEC_AT(OnesweepPassSpec, prefetch_next, ONESWEEP_PASS_ID_PREFETCH_NEXT);
static_assert(sizeof(OnesweepPassSpec) == 4 * (ONESWEEP_PASS_ID_PREFETCH_NEXT + 1));

GPUSORT_SPEC_AT(OnesweepCopyBackSpec, wide_indices, ONESWEEP_COPY_BACK_ID_WIDE_INDICES);
static_assert(sizeof(OnesweepCopyBackSpec) == 4 * (ONESWEEP_COPY_BACK_ID_WIDE_INDICES + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_ONESWEEP_CONSTANTS_H
