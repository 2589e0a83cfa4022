#version 460
// Top-k, the radix select's step after each pass (one workgroup of 256): the digit whose
// candidates hold the remaining-th smallest of them, appended to the prefix; the candidates of
// smaller digits are all in the result (added to `before`), the remaining count shrinks by them.
// After the last pass the prefix is the k-th key (its compared bits), `before` counts the keys
// below it and need_equal how many keys equal to it the result takes (the first by position).
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;

#define PUSH_TOPK_SELECT
#include "push.h"

#define SCAN_T uint
shared SCAN_T scan_tree[gl_WorkGroupSize.x];
#include "scan.glsl"

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint per = TOPK_BINS / gl_WorkGroupSize.x;  // bins per invocation (the workgroup divides them)
  U32Array state = U32Array(state_address);
  U32Array histogram = U32Array(histogram_address);
  const uint remaining = state.v[TOPK_STATE_REMAINING];
  uint sum = 0;
  for (uint b = 0; b < per; ++b) sum += histogram.v[t * per + b];
  uint total;
  const uint before = workgroup_exclusive_scan(sum, total);
  // One invocation holds the remaining-th candidate (none when remaining is 0: k = 0).
  if (before < remaining && remaining <= before + sum) {
    uint c = before;
    for (uint b = 0; b < per; ++b) {
      const uint h = histogram.v[t * per + b];
      if (c + h >= remaining) {
        state.v[TOPK_STATE_BEFORE] += c;
        state.v[TOPK_STATE_REMAINING] = remaining - c;
        state.v[TOPK_STATE_NEED_EQUAL] = remaining - c;
        U64Array(state_address).v[TOPK_STATE_PREFIX / 2] |= uint64_t(t * per + b) << bit;
        break;
      }
      c += h;
    }
  }
}
