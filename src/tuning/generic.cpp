// Devices of no family of their own: by subgroup width (the tables: src/tuning/generic.hpp).
#include "tuning/generic.hpp"

namespace gpusort {

constexpr Tuning wide_subgroups_tuning = wide_subgroups_table;
constexpr Tuning narrow_subgroups_tuning = narrow_subgroups_table;

}  // namespace gpusort
