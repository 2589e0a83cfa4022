// CPU drivers (lavapipe, SwiftShader): no timing target, correctness only; every value is the
// generic one for narrow subgroups (src/tuning/generic.hpp). The test suite runs here.
#include "tuning/generic.hpp"

namespace gpusort {

constexpr Tuning cpu_tuning = with_family(narrow_subgroups_table, DeviceFamily::cpu);

}  // namespace gpusort
