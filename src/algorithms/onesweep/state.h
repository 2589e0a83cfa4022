// Onesweep's state block, written once for every reader: the GLSL kernels (onesweep_common.glsl),
// the CUDA kernels (cuda/onesweep_pass.cu) and the host (onesweep.cpp, the CUDA face's sort). The
// clear zeroes it before every sort: the digit counts, the control words and the look-back table.
#ifndef GPUSORT_ONESWEEP_STATE_H
#define GPUSORT_ONESWEEP_STATE_H

#define ONESWEEP_RADIX 256
#define ONESWEEP_DIGIT_BITS 8
#define ONESWEEP_MAX_PASSES 8  // 64-bit keys / 8-bit digits

// The control block (u32 words): one partition counter per pass, then one plan word per pass,
// then the copy-back flag and a count of fallbacks (for tests and tuning), the partition sort's
// words and the histogram's ticket.
#define ONESWEEP_CONTROL_PARTITION_COUNTER 0  // + the pass
#define ONESWEEP_CONTROL_PLAN 8               // + the pass
#define ONESWEEP_CONTROL_COPY_BACK 16
#define ONESWEEP_CONTROL_FALLBACKS 17  // how often a look-back recounted a tile
// The partition sort's choice (partition_plan.comp): its pass index + 1 (0: Onesweep's passes
// run instead), that digit's lowest bit and width.
#define ONESWEEP_CONTROL_PARTITION_DIGIT 18
#define ONESWEEP_CONTROL_PARTITION_BIT 19
#define ONESWEEP_CONTROL_PARTITION_BITS 20
// Drawn by every histogram workgroup once its counts are added: the last to draw makes the plan
// (onesweep_plan.glsl, and the CUDA histogram's HistogramAndPlan).
#define ONESWEEP_CONTROL_HISTOGRAM_TICKET 21
#define ONESWEEP_CONTROL_WORDS 22

// The indirect dispatch commands (3 u32 each) that size steps on the GPU: the histogram's, only
// with a GPU-side count (written by the clear), each pass's and the copy-back's, always (written
// by the plan: no workgroups for a skipped pass, or for a copy-back that is not needed).
#define ONESWEEP_DISPATCH_HISTOGRAM 0
#define ONESWEEP_DISPATCH_PASS 1  // + the pass
#define ONESWEEP_DISPATCH_COPY_BACK 9
#define ONESWEEP_DISPATCH_COMMANDS 10

// Plan word bits, written by the plan from the histograms: a pass whose digit is the same for
// every key is inactive (skipped); active passes ping-pong starting from the caller's buffer
// ("a"), the first maps keys to radix order on read and the last maps them back.
#define ONESWEEP_PLAN_ACTIVE 1u
#define ONESWEEP_PLAN_INPUT_ALT 2u  // reads the scratch copy ("b"), writes "a"
#define ONESWEEP_PLAN_FIRST 4u
#define ONESWEEP_PLAN_LAST 8u

// One look-back table entry: 64 bits (tag, inclusive flag, count), per slot and digit.
#define ONESWEEP_LOOKBACK_ENTRY_BYTES 8

#if defined(__cplusplus)
static_assert(ONESWEEP_CONTROL_PLAN == ONESWEEP_CONTROL_PARTITION_COUNTER + ONESWEEP_MAX_PASSES);
static_assert(ONESWEEP_CONTROL_COPY_BACK == ONESWEEP_CONTROL_PLAN + ONESWEEP_MAX_PASSES);
static_assert(ONESWEEP_DISPATCH_COPY_BACK == ONESWEEP_DISPATCH_PASS + ONESWEEP_MAX_PASSES);
static_assert(ONESWEEP_CONTROL_WORDS == ONESWEEP_CONTROL_HISTOGRAM_TICKET + 1);
#endif

#endif  // GPUSORT_ONESWEEP_STATE_H
