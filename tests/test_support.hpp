// Shared by every test: one validated Context, input distributions, and the reference check
// (std::stable_sort under the same order, whole-output comparison, poisoned outputs).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <gpusort/gpusort.hpp>
#include <random>
#include <string>
#include <vector>

namespace gpusort {
class DeviceBuffer;
class SortAlgorithm;
}  // namespace gpusort

namespace gpusort::test {

// The suite's Context: lavapipe unless GPUSORT_DEVICE is set; validation on (a validation
// message fails the test that caused it, see ValidationListener in test_support.cpp).
Context& context();

// The message of the gpusort::Error that `call` throws, or "no error".
template <class Call>
std::string message_of(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Copies `bytes` at `offset` of a device buffer into host memory (on context()).
void download_range(const DeviceBuffer& from, uint64_t offset, void* to, uint64_t bytes);

enum class Distribution { uniform, all_equal, sorted, reversed, few_unique, low_entropy, special_floats };
const char* to_string(Distribution d);
const std::vector<Distribution>& all_distributions();

// A fresh seed per run (GPUSORT_TEST_SEED pins one); printed by failing checks.
uint64_t fresh_seed();

// Random key bits of a given width following a distribution (special_floats: NaN of both signs
// with payloads, +-inf, +-0, denormals, mixed with ordinary values; for integer keys, extremes).
std::vector<uint64_t> make_key_bits(KeyType type, uint64_t n, Distribution d, std::mt19937_64& rng);

// One key type x value width x order: the parameter of every algorithm's suite.
struct Combo {
  KeyType key;
  uint32_t value_bytes;
  bool descending;
};
// Every key type x values 0/4/8 bytes x ascending/descending.
std::vector<Combo> all_combos();
// A gtest parameter name such as "f32_values4_descending".
std::string combo_name(const ::testing::TestParamInfo<Combo>& info);

struct SortCase {
  Algorithm algorithm = Algorithm::automatic;
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;
  bool descending = false;
  uint64_t n = 0;
  Distribution distribution = Distribution::uniform;
  uint32_t begin_bit = 0, end_bit = 0;
  uint64_t device_memory_limit = 0;  // SortOptions::device_memory_limit (out of core beyond it)
  SortTimings* timings = nullptr;    // receives the sort's SortTimings when set
  KernelPath kernels = KernelPath::automatic;  // SortOptions::kernels
  std::string describe(uint64_t seed) const;
};

// Sorts a fresh input with gpusort::sort / sort_by_key and checks the whole output against
// std::stable_sort of the same input (values: the identity permutation, so stability and the
// pairing are checked exactly; keys compared bitwise).
::testing::AssertionResult check_sort(const SortCase& c);

// Fails when the running test has caused a Vulkan validation message (checked at the end of every
// check_* helper).
::testing::AssertionResult no_new_validation_messages();

// For unstable sorts (bitonic): the same input and key comparison, but within every run of keys
// that compare equal the output need only hold the same (key bits, value) pairs as the
// reference run: each output pair exists in the input and each input pair appears exactly once.
::testing::AssertionResult check_unstable_sort(const SortCase& c);

// Every 2^k - 1, 2^k and 2^k + 1 up to max (plus 0), in increasing order: the boundaries of
// workgroups, tiles and bitonic blocks, which are all powers of two.
std::vector<uint64_t> sizes_around_powers_of_two(uint64_t max);

// Sorts u32 `keys` with u32 values (the identity) `repeats` times in a row through `algorithm`'s
// record (one scratch buffer), n on the host or, when `indirect`, read from a GPU buffer over
// max_n = keys.size() elements; checks the whole output against std::stable_sort of the first n
// (beyond n the buffers must be untouched) and that no validation message came. A failure's
// message starts with `what`. `after`, when given, then inspects the scratch buffer.
::testing::AssertionResult check_u32_pairs(
    const SortAlgorithm& algorithm, const std::vector<uint32_t>& keys, uint64_t n, bool indirect,
    bool descending, const std::string& what, int repeats = 1,
    const std::function<::testing::AssertionResult(const DeviceBuffer& scratch)>& after = {});

// Radix order of a key's bits, as the shaders define it (keys.glsl); descending inverted.
uint64_t radix_order(KeyType type, uint64_t bits, bool descending);

}  // namespace gpusort::test
