// Prefix scans against std::exclusive_scan / std::inclusive_scan.
#include "test_support.hpp"

#include <numeric>

namespace gpusort::test {
namespace {

template <class T> void check_scans(uint64_t n) {
  std::mt19937_64 rng(fresh_seed());
  std::vector<T> in(n);
  // Large values so u32 sums wrap, as the scans must.
  for (auto& x : in) x = T(rng());
  std::vector<T> expected(n), out(n, T(0xDEADBEEF));
  std::exclusive_scan(in.begin(), in.end(), expected.begin(), T(0));
  exclusive_scan(context(), std::span<const T>(in), std::span<T>(out));
  EXPECT_EQ(out, expected) << "exclusive, n=" << n;
  std::inclusive_scan(in.begin(), in.end(), expected.begin());
  std::fill(out.begin(), out.end(), T(0xDEADBEEF));
  inclusive_scan(context(), std::span<const T>(in), std::span<T>(out));
  EXPECT_EQ(out, expected) << "inclusive, n=" << n;
}

const uint64_t scan_sizes[] = {0, 1, 2, 255, 256, 2047, 2048, 2049, 100'000, 2048 * 2048 + 3};

TEST(Scan, U32MatchesStd) {
  for (uint64_t n : scan_sizes) check_scans<uint32_t>(n);
}

TEST(Scan, U64MatchesStd) {
  for (uint64_t n : scan_sizes) check_scans<uint64_t>(n);
}

TEST(Scan, InPlaceAliasing) {
  std::vector<uint32_t> data(5000);
  std::iota(data.begin(), data.end(), 1u);
  std::vector<uint32_t> expected(data.size());
  std::exclusive_scan(data.begin(), data.end(), expected.begin(), 0u);
  exclusive_scan(context(), std::span<const uint32_t>(data), std::span<uint32_t>(data));
  EXPECT_EQ(data, expected);
}

TEST(Scan, RejectsMismatchedLengths) {
  std::vector<uint32_t> in(10), out(9);
  EXPECT_THROW(exclusive_scan(context(), std::span<const uint32_t>(in), std::span<uint32_t>(out)), Error);
}

}  // namespace
}  // namespace gpusort::test
