// The radix select's step, done where it is needed instead of in a dispatch of its own: from the
// histograms of passes [0, passes_done) (in the state block) and min(k, n), the prefix selected so
// far, the keys strictly below it (before) and how many of the result its candidates still give
// (remaining). Each pass's digit is the one whose bucket holds the remaining-th candidate. The
// candidate list: list_pass, the first pass q >= 1 whose candidates (the keys whose digits before
// q are the prefix selected by then: the bucket of pass q - 1) fit `capacity` entries, and
// `listed`, their count (all ones where none fits up to passes_done, or for k = 0); pass q lists
// them and the passes after it read only them. Every invocation of the workgroup calls it
// (barriers); include after topk_scan.glsl, with a workgroup size that divides TOPK_BINS.
shared uint64_t selected_prefix;
shared uint selected_before, selected_remaining, selected_bucket;

void select_digits(uint64_t state_address, uint passes_done, uint capacity, out uint64_t prefix,
                   out uint before, out uint remaining, out uint list_pass, out uint listed) {
  prefix = 0;
  before = 0;
  remaining = state_word(state_address, TOPK_STATE_K);
  list_pass = 0xffffffffu;
  listed = 0xffffffffu;
  if (remaining == 0) return;  // uniform: k = 0 selects nothing
  const uint t = gl_LocalInvocationID.x;
  const uint per = TOPK_BINS / gl_WorkGroupSize.x;
  for (uint p = 0; p < passes_done; ++p) {
    const uvec2 digit = topk_digit(p);
    U32Array histogram = U32Array(state_address + (TOPK_STATE_WORDS + p * TOPK_BINS) * 4);
    uint sum = 0;
    for (uint b = 0; b < per; ++b) sum += histogram.v[t * per + b];
    uint total;
    const uint below = workgroup_exclusive_scan(sum, total);
    // One invocation holds the remaining-th candidate.
    if (below < remaining && remaining <= below + sum) {
      uint c = below;
      for (uint b = 0; b < per; ++b) {
        const uint h = histogram.v[t * per + b];
        if (c + h >= remaining) {
          selected_prefix = prefix | (uint64_t(t * per + b) << digit.x);
          selected_before = before + c;
          selected_remaining = remaining - c;
          selected_bucket = h;
          break;
        }
        c += h;
      }
    }
    barrier();
    prefix = selected_prefix;
    before = selected_before;
    remaining = selected_remaining;
    if (list_pass == 0xffffffffu && selected_bucket <= capacity) {
      list_pass = p + 1;
      listed = selected_bucket;
    }
    barrier();  // read before the next pass writes them
  }
}
