// The specialization constants of the top-k kernels, written once for the host (C++) and the
// kernels (GLSL): each kernel's own constants after the shared prefix it takes
// (primitives/glsl/spec_constants.h), checked field by field below. topk_init takes the workgroup
// alone (WorkgroupSpec); topk_gather the workgroup and the value width.
#ifndef GPUSORT_TOPK_CONSTANTS_H
#define GPUSORT_TOPK_CONSTANTS_H

#ifdef __cplusplus
#include "primitives/glsl/spec_constants.h"
#else
#include "spec_constants.h"
#endif

// topk_histogram, topk_count, topk_write: keys per invocation (a tile is workgroup x items keys),
// after the workgroup, key layout and compared bits.
#define TOPK_ID_ITEMS 7

// topk_gather: 32-bit words per value (1 or 2), after the workgroup.
#define TOPK_GATHER_ID_WORDS 1

// topk_segment: the offsets' 32-bit words (1: u32, 2: u64), how many keys of a segment it keeps
// in shared memory and whether it sorts the results itself (1) or leaves them in input order for
// the segmented sort (0), how many keys an invocation loads at once in a read of the whole
// segment, and whether it bounds the k-th key by the invocations' least keys first (1), after the
// key kernels' constants; topk_segment_sizes: the offsets' words, after the workgroup.
#define TOPK_SEGMENT_ID_OFFSET_WORDS 8
#define TOPK_SEGMENT_ID_CACHED_KEYS 9
#define TOPK_SEGMENT_ID_SORTED 10
#define TOPK_SEGMENT_ID_READS 11
#define TOPK_SEGMENT_ID_BOUND 12
#define TOPK_SEGMENT_SIZES_ID_OFFSET_WORDS 1

// The radix select's widest digit and the most passes it takes (a 64-bit key in 11-bit digits).
#define TOPK_MAX_DIGIT_BITS 11
#define TOPK_BINS 2048
#define TOPK_MAX_PASSES 6

// The state block at the start of the scratch, in u32 words (topk_common.glsl reads it).
#define TOPK_STATE_N 0          // the element count (the caller's, or the GPU-side one, clamped)
#define TOPK_STATE_K 1          // min(k, n)
#define TOPK_STATE_REMAINING 2  // of the k, how many the candidates of the current prefix give
#define TOPK_STATE_BEFORE 3     // keys strictly before the selected prefix (at the end: the k-th key)
#define TOPK_STATE_PREFIX 4     // u64 (words 4, 5): the selected digits so far, in radix order
#define TOPK_STATE_NEED_EQUAL 6 // keys equal to the k-th key that the result takes
#define TOPK_STATE_CURSOR 7     // the candidate list's next free entry
#define TOPK_STATE_WORDS 16     // then TOPK_MAX_PASSES histograms of TOPK_BINS u32

#ifdef __cplusplus

namespace gpusort {

struct TopKKeySpec {
  SortKeySpec key;
  uint32_t items;
};
GPUSORT_SPEC_AT(TopKKeySpec, items, TOPK_ID_ITEMS);
static_assert(sizeof(TopKKeySpec) == 4 * (TOPK_ID_ITEMS + 1));

struct TopKSegmentSpec {
  TopKKeySpec key;
  uint32_t offset_words;
  uint32_t cached_keys;  // at least 1
  uint32_t sorted;       // k at most the workgroup and TOPK_BINS / (key words + 1)
  uint32_t reads;        // at least 1
  uint32_t bound;        // 1: the bound from the invocations' least keys first (SORTED)
};
GPUSORT_SPEC_AT(TopKSegmentSpec, offset_words, TOPK_SEGMENT_ID_OFFSET_WORDS);
GPUSORT_SPEC_AT(TopKSegmentSpec, cached_keys, TOPK_SEGMENT_ID_CACHED_KEYS);
GPUSORT_SPEC_AT(TopKSegmentSpec, sorted, TOPK_SEGMENT_ID_SORTED);
GPUSORT_SPEC_AT(TopKSegmentSpec, reads, TOPK_SEGMENT_ID_READS);
GPUSORT_SPEC_AT(TopKSegmentSpec, bound, TOPK_SEGMENT_ID_BOUND);
static_assert(sizeof(TopKSegmentSpec) == 4 * (TOPK_SEGMENT_ID_BOUND + 1));

struct TopKSegmentSizesSpec {
  uint32_t workgroup, offset_words;
};
GPUSORT_SPEC_AT(TopKSegmentSizesSpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(TopKSegmentSizesSpec, offset_words, TOPK_SEGMENT_SIZES_ID_OFFSET_WORDS);
static_assert(sizeof(TopKSegmentSizesSpec) == 4 * (TOPK_SEGMENT_SIZES_ID_OFFSET_WORDS + 1));

struct TopKGatherSpec {
  uint32_t workgroup, words;
};
GPUSORT_SPEC_AT(TopKGatherSpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(TopKGatherSpec, words, TOPK_GATHER_ID_WORDS);
static_assert(sizeof(TopKGatherSpec) == 4 * (TOPK_GATHER_ID_WORDS + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_TOPK_CONSTANTS_H
