// Specialization constants and the layout of the small state block shared by the Onesweep
// kernels (shaders/onesweep_*.comp, host side src/algorithms/onesweep/onesweep.cpp).
#include "constants.h"
#include "key_spec.glsl"

#include "state.h"
const uint RADIX = ONESWEEP_RADIX;
const uint DIGIT_BITS = ONESWEEP_DIGIT_BITS;
const uint MAX_PASSES = ONESWEEP_MAX_PASSES;
// The state block's words, commands and plan bits: state.h.
const uint CONTROL_PARTITION_COUNTER = ONESWEEP_CONTROL_PARTITION_COUNTER;
const uint CONTROL_PLAN = ONESWEEP_CONTROL_PLAN;
const uint CONTROL_COPY_BACK = ONESWEEP_CONTROL_COPY_BACK;
const uint CONTROL_FALLBACKS = ONESWEEP_CONTROL_FALLBACKS;
const uint CONTROL_PARTITION_DIGIT = ONESWEEP_CONTROL_PARTITION_DIGIT;
const uint CONTROL_PARTITION_BIT = ONESWEEP_CONTROL_PARTITION_BIT;
const uint CONTROL_PARTITION_BITS = ONESWEEP_CONTROL_PARTITION_BITS;
const uint CONTROL_HISTOGRAM_TICKET = ONESWEEP_CONTROL_HISTOGRAM_TICKET;
const uint CONTROL_WORDS = ONESWEEP_CONTROL_WORDS;
const uint DISPATCH_HISTOGRAM = ONESWEEP_DISPATCH_HISTOGRAM;
const uint DISPATCH_PASS = ONESWEEP_DISPATCH_PASS;
const uint DISPATCH_COPY_BACK = ONESWEEP_DISPATCH_COPY_BACK;
const uint DISPATCH_COMMANDS = ONESWEEP_DISPATCH_COMMANDS;
uint64_t dispatch_command(uint64_t dispatch_address, uint command) {
  return dispatch_address + command * 12;
}
const uint PLAN_ACTIVE = ONESWEEP_PLAN_ACTIVE;
const uint PLAN_INPUT_ALT = ONESWEEP_PLAN_INPUT_ALT;
const uint PLAN_FIRST = ONESWEEP_PLAN_FIRST;
const uint PLAN_LAST = ONESWEEP_PLAN_LAST;

#include "keys.glsl"

uint pass_bit(uint begin_bit, uint pass) { return begin_bit + pass * DIGIT_BITS; }
uint pass_digit_bits(uint begin_bit, uint end_bit, uint pass) {
  return min(DIGIT_BITS, end_bit - pass_bit(begin_bit, pass));
}
