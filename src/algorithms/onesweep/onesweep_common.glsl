// Specialization constants and the layout of the small state block shared by the Onesweep
// kernels (shaders/onesweep_*.comp, host side src/algorithms/onesweep/onesweep.cpp).
#include "constants.h"
layout(local_size_x_id = ONESWEEP_ID_WORKGROUP) in;
layout(constant_id = ONESWEEP_ID_KEY_WORDS) const uint KEY_WORDS = 1;
layout(constant_id = ONESWEEP_ID_KEY_KIND) const uint KEY_KIND = 0;
layout(constant_id = ONESWEEP_ID_DESCENDING) const uint DESCENDING = 0;
layout(constant_id = ONESWEEP_ID_VALUE_WORDS) const uint VALUE_WORDS = 0;

const uint RADIX = 256;
const uint DIGIT_BITS = 8;
const uint MAX_PASSES = 8;  // 64-bit keys / 8-bit digits

// The control block (u32 words): one partition counter per pass, then one plan word per pass,
// then the copy-back flag and a count of fallbacks (for tests and tuning), the partition sort's
// words and the histogram's ticket. The clear kernel zeroes it before every sort.
const uint CONTROL_PARTITION_COUNTER = 0;
const uint CONTROL_PLAN = MAX_PASSES;
const uint CONTROL_COPY_BACK = 2 * MAX_PASSES;
const uint CONTROL_FALLBACKS = 2 * MAX_PASSES + 1;  // how often a look-back recounted a tile
// The partition sort's choice (partition_plan.comp): its pass index + 1 (0: Onesweep's passes
// run instead), that digit's lowest bit and width.
const uint CONTROL_PARTITION_DIGIT = 2 * MAX_PASSES + 2;
const uint CONTROL_PARTITION_BIT = 2 * MAX_PASSES + 3;
const uint CONTROL_PARTITION_BITS = 2 * MAX_PASSES + 4;
// Drawn by every onesweep_histogram.comp workgroup once its counts are added: the last to draw
// makes the plan (src/algorithms/onesweep/onesweep_plan.glsl).
const uint CONTROL_HISTOGRAM_TICKET = 2 * MAX_PASSES + 5;
const uint CONTROL_WORDS = 2 * MAX_PASSES + 6;

// The VkDispatchIndirectCommands (3 u32 each) that size steps on the GPU: the histogram's, only
// with a GPU-side count (written by onesweep_clear.comp), each pass's and the copy-back's, always
// (written by the plan, src/algorithms/onesweep/onesweep_plan.glsl: no workgroups for a skipped pass, or for a
// copy-back that is not needed).
const uint DISPATCH_HISTOGRAM = 0;
const uint DISPATCH_PASS = 1;  // + the pass
const uint DISPATCH_COPY_BACK = 1 + MAX_PASSES;
const uint DISPATCH_COMMANDS = 2 + MAX_PASSES;
uint64_t dispatch_command(uint64_t dispatch_address, uint command) {
  return dispatch_address + command * 12;
}

// Plan word bits, written by the plan (src/algorithms/onesweep/onesweep_plan.glsl) from the histograms: a pass
// whose digit is the same for every key is inactive (skipped); active passes ping-pong starting
// from the caller's buffer ("a"), the first maps keys to radix order on read and the last maps
// them back.
const uint PLAN_ACTIVE = 1u;
const uint PLAN_INPUT_ALT = 2u;  // reads the scratch copy ("b"), writes "a"
const uint PLAN_FIRST = 4u;
const uint PLAN_LAST = 8u;

#include "keys.glsl"

uint pass_bit(uint begin_bit, uint pass) { return begin_bit + pass * DIGIT_BITS; }
uint pass_digit_bits(uint begin_bit, uint end_bit, uint pass) {
  return min(DIGIT_BITS, end_bit - pass_bit(begin_bit, pass));
}
