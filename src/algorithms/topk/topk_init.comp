#version 460
// Top-k, step 1 (one workgroup): the state block (the element count, min(k, n), nothing selected
// yet) and the histograms of the digit passes cleared.
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;

#define PUSH_TOPK_INIT
#include "push.h"

void main() {
  const uint t = gl_LocalInvocationID.x;
  U32Array state = U32Array(state_address);
  for (uint w = t; w < histogram_words; w += gl_WorkGroupSize.x) state.v[TOPK_STATE_WORDS + w] = 0;
  if (t == 0) {
    const uint count = element_count(count_address, n);
    const uint kept = min(k, count);
    state.v[TOPK_STATE_N] = count;
    state.v[TOPK_STATE_K] = kept;
    state.v[TOPK_STATE_REMAINING] = kept;
    state.v[TOPK_STATE_BEFORE] = 0;
    U64Array(state_address).v[TOPK_STATE_PREFIX / 2] = 0;
    state.v[TOPK_STATE_NEED_EQUAL] = 0;
    state.v[TOPK_STATE_CURSOR] = 0;
  }
}
