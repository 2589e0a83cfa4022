// Specialization constants 0-4, the prefix every kernel that reads keys declares (KeySpec of
// spec_constants.h): the workgroup size and the key's layout (keys.glsl reads it).
#include "spec_constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = SPEC_ID_KEY_WORDS) const uint KEY_WORDS = 1;
layout(constant_id = SPEC_ID_KEY_KIND) const uint KEY_KIND = 0;
layout(constant_id = SPEC_ID_DESCENDING) const uint DESCENDING = 0;
layout(constant_id = SPEC_ID_VALUE_WORDS) const uint VALUE_WORDS = 0;
