// The device families and their tables (src/tuning), without a GPU: fake devices of every family,
// and the values each gets checked against the rules the algorithms applied before the tables
// existed (copied below as `before`), so that moving the numbers changed nothing on any device.
#include "tuning/tuning.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpusort {
namespace {

// The rules as they were in the algorithms' own files (onesweep.cpp's onesweep_shape_row and
// *_by_default rules, small_sort.cpp's wanted[] bands, segmented_sort.cpp's and
// partition_sort.cpp's constants, host_path.cpp's default_copy_engine), verbatim where they were
// code.
namespace before {

bool counters_in_exchange_by_default(uint32_t key_words, uint32_t value_words) {
  return key_words == 1 && value_words == 0;
}
struct OnesweepShape {
  uint32_t workgroup = 0, keys_per_thread = 0;
};
struct OnesweepShapeBand {
  uint64_t max_n = 0;
  OnesweepShape shape;
};
struct OnesweepShapeRow {
  OnesweepShape large;
  std::array<OnesweepShapeBand, 2> small_bands;
  bool tiles_by_id = false;
  uint32_t persistent_groups_per_unit = 0;
};
OnesweepShapeRow onesweep_shape_row(const DeviceInfo& info, bool counters_in_exchange) {
  if (info.min_subgroup_size >= 32)
    return {{512, counters_in_exchange ? 20u : 16u},
            {{{uint64_t(1) << 18, {384, 8}},
              {uint64_t(1) << (counters_in_exchange ? 22 : 19), {512, 8}}}},
            info.vendor_id == 0x10de,
            info.vendor_id == 0x10de ? 1u : 0u};
  return {{std::max<uint32_t>(64, info.max_subgroup_size), 8}, {}};
}
uint32_t full_tile_copy(uint32_t key_words, uint32_t value_words) {
  return key_words == 2 || value_words != 0 ? 1u : 0u;
}
uint32_t guess_tile(uint32_t key_words) {
  return key_words == 1 ? 1u : 0u;
}
uint32_t prefetch_next(uint32_t key_words, uint32_t value_words) {
  return key_words == 1 && value_words == 0 ? 1u : 0u;
}
constexpr uint64_t persistent_min_rounds = 8;
// Onesweep::persistent_groups with the large tile (tiles = the tiles of max_n).
uint32_t persistent_groups(const DeviceInfo& info, uint32_t key_words, uint32_t value_words,
                           uint64_t tiles) {
  if (key_words != 1 || value_words != 0) return 0;
  const uint32_t groups =
      onesweep_shape_row(info, counters_in_exchange_by_default(key_words, value_words))
          .persistent_groups_per_unit *
      info.compute_units;
  return tiles >= persistent_min_rounds * groups ? groups : 0;
}
uint32_t claim_by_id(const DeviceInfo& info, uint32_t key_words, uint32_t value_words,
                     uint64_t tiles) {
  if (persistent_groups(info, key_words, value_words, tiles) != 0) return 0;
  return onesweep_shape_row(info, counters_in_exchange_by_default(key_words, value_words))
                 .tiles_by_id
             ? 1u
             : 0u;
}
constexpr uint32_t histogram_groups_per_unit = 1;
constexpr uint32_t lookback_window = 16;  // OnesweepOptions' default

// small_sort.cpp's automatic_small_bands, before the shapes are fitted to the device.
struct Wanted {
  uint32_t log2_max_n, tile_workgroup, merge_lanes, merge_group_tiles;
  bool adaptive_buckets;
  uint32_t single_workgroup = 512;
  bool bare_keys_only = false;
};
constexpr Wanted wanted[] = {{11, 256, 8, 0, false, 1024, true},
                             {14, 256, 8, 0, false},
                             {15, 512, 4, 0, false},
                             {16, 512, 4, 8, false},
                             {17, 512, 4, 8, true}};
// SmallSortShape's defaults for the fields automatic_small_bands left to them.
constexpr uint32_t items = 2, merge_workgroup = 256, merge_tiles_per_round = 4,
                   merge_bucket_bits = 0;
constexpr bool subgroup_sort = true;

// segmented_sort.cpp.
constexpr uint32_t log2_first_class = 3, log2_min_tile = 8, log2_items = 2, log2_max_blocks = 3;
constexpr uint32_t wanted_merge_workgroup = 256, wanted_bucket_workgroup = 512,
                   default_bucket_keys_per_thread = 8, bucket_subgroups = 16;

// partition_sort.cpp.
uint32_t tuned_max_bucket(const DeviceInfo&) {
  return 1u << 14;
}

// host_path.cpp: true for shader copies.
bool shader_copies(const DeviceInfo& device) {
  return device.vendor_id == 0x10de && device.type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
}

}  // namespace before

struct FakeDevice {
  const char* name;
  uint32_t vendor_id;
  VkPhysicalDeviceType type;
  uint32_t min_subgroup_size, max_subgroup_size;
  uint32_t compute_units;
  DeviceFamily family;
};

DeviceInfo info_of(const FakeDevice& f) {
  DeviceInfo d;
  d.name = f.name;
  d.vendor_id = f.vendor_id;
  d.type = f.type;
  d.min_subgroup_size = f.min_subgroup_size;
  d.max_subgroup_size = f.max_subgroup_size;
  d.subgroup_size = f.max_subgroup_size;
  d.compute_units = f.compute_units;
  d.shared_memory_bytes = 49152;
  d.max_workgroup_size = 1024;
  return d;
}

constexpr VkPhysicalDeviceType discrete = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
                               integrated = VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
                               cpu = VK_PHYSICAL_DEVICE_TYPE_CPU;

const std::vector<FakeDevice>& fake_devices() {
  static const std::vector<FakeDevice> devices = {
      {"NVIDIA H100 80GB HBM3", 0x10de, discrete, 32, 32, 132, DeviceFamily::nvidia},
      {"NVIDIA H200", 0x10de, discrete, 32, 32, 132, DeviceFamily::nvidia_h200},
      {"NVIDIA H200 NVL", 0x10de, discrete, 32, 32, 132, DeviceFamily::nvidia_h200},
      {"NVIDIA GH200 480GB", 0x10de, discrete, 32, 32, 132, DeviceFamily::nvidia},
      {"NVIDIA GeForce RTX 4090", 0x10de, discrete, 32, 32, 128, DeviceFamily::nvidia},
      {"NVIDIA without SM count", 0x10de, discrete, 32, 32, 0, DeviceFamily::nvidia},
      {"NVIDIA Orin (Tegra)", 0x10de, integrated, 32, 32, 16, DeviceFamily::nvidia_integrated},
      {"AMD Radeon RX 7900 XTX (RADV)", 0x1002, discrete, 32, 64, 96, DeviceFamily::amd},
      {"AMD Radeon Vega (GCN)", 0x1002, discrete, 64, 64, 64, DeviceFamily::amd},
      {"AMD Radeon 780M", 0x1002, integrated, 32, 64, 12, DeviceFamily::amd},
      {"Intel Arc A770", 0x8086, discrete, 8, 32, 0, DeviceFamily::intel},
      {"Intel UHD Graphics 770", 0x8086, integrated, 8, 32, 0, DeviceFamily::intel},
      {"Intel Arc B580 (Xe2)", 0x8086, discrete, 16, 32, 0, DeviceFamily::intel},
      {"llvmpipe (8 lanes)", 0x10005, cpu, 8, 8, 0, DeviceFamily::cpu},
      {"llvmpipe (4 lanes)", 0x10005, cpu, 4, 4, 0, DeviceFamily::cpu},
      {"llvmpipe (16 lanes)", 0x10005, cpu, 16, 16, 0, DeviceFamily::cpu},
      {"llvmpipe (32 lanes)", 0x10005, cpu, 32, 32, 0, DeviceFamily::wide_subgroups},
      {"llvmpipe (64 lanes)", 0x10005, cpu, 64, 64, 0, DeviceFamily::wide_subgroups},
      {"SwiftShader Device", 0x1ae0, cpu, 4, 4, 0, DeviceFamily::cpu},
      {"Apple M2 (MoltenVK)", 0x106b, integrated, 32, 32, 10, DeviceFamily::wide_subgroups},
      {"Adreno 740", 0x5143, integrated, 64, 128, 0, DeviceFamily::wide_subgroups},
      {"Mali-G715", 0x13b5, integrated, 16, 16, 0, DeviceFamily::narrow_subgroups},
      {"PowerVR (4 to 64)", 0x1010, integrated, 4, 64, 0, DeviceFamily::narrow_subgroups},
      {"Other GPU (1 to 128)", 0x1234, discrete, 1, 128, 0, DeviceFamily::narrow_subgroups},
  };
  return devices;
}

struct KeyClass {
  uint32_t key_words, value_words;
};
constexpr KeyClass key_classes[] = {{1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}, {2, 2}};

// Every n whose choice could differ: powers of two up to 2^32 and their neighbours.
std::vector<uint64_t> sizes() {
  std::vector<uint64_t> n;
  for (uint32_t log2 = 0; log2 <= 32; ++log2)
    for (int64_t d : {-1, 0, 1})
      if (int64_t(uint64_t(1) << log2) + d >= 0) n.push_back((uint64_t(1) << log2) + d);
  return n;
}

std::string name_of(const FakeDevice& f, const KeyClass& k) {
  return std::string(f.name) + ", key words " + std::to_string(k.key_words) + ", value words " +
         std::to_string(k.value_words);
}

TEST(Tuning, EveryDeviceGetsItsFamily) {
  for (const FakeDevice& f : fake_devices()) {
    EXPECT_EQ(device_family(info_of(f)), f.family) << f.name;
    const Tuning& t = tuning_for(info_of(f));
    EXPECT_EQ(t.family, f.family) << f.name;
    EXPECT_EQ(std::string(to_string(t.family)).find("unknown"), std::string::npos);
  }
  // Every family has its own table, and its own name.
  for (uint32_t a = 0; a < device_family_count; ++a) {
    EXPECT_EQ(tuning_for(DeviceFamily(a)).family, DeviceFamily(a));
    for (uint32_t b = a + 1; b < device_family_count; ++b)
      EXPECT_STRNE(to_string(DeviceFamily(a)), to_string(DeviceFamily(b)));
  }
}

// The large tile, the bands and every switch of the pass, per key class, and the tile that runs
// for each n, as onesweep.cpp chose them before.
TEST(Tuning, OnesweepChoosesAsBefore) {
  for (const FakeDevice& f : fake_devices()) {
    const DeviceInfo info = info_of(f);
    const OnesweepTuning& o = tuning_for(info).onesweep;
    for (const KeyClass& k : key_classes) {
      SCOPED_TRACE(name_of(f, k));
      const OnesweepKeyTuning& keys = onesweep_keys(o, k.key_words, k.value_words);
      const bool cie = before::counters_in_exchange_by_default(k.key_words, k.value_words);
      const before::OnesweepShapeRow row = before::onesweep_shape_row(info, cie);
      EXPECT_EQ(keys.counters_in_exchange, cie);
      EXPECT_EQ(uint32_t(keys.full_tile_copy), before::full_tile_copy(k.key_words, k.value_words));
      EXPECT_EQ(uint32_t(keys.guess_tile), before::guess_tile(k.key_words));
      EXPECT_EQ(uint32_t(keys.prefetch_next), before::prefetch_next(k.key_words, k.value_words));
      EXPECT_EQ(o.histogram_groups_per_unit, before::histogram_groups_per_unit);
      EXPECT_EQ(o.lookback_window, before::lookback_window);
      const OnesweepTile large = onesweep_tile_on(info, keys.large);
      EXPECT_EQ(large.workgroup, row.large.workgroup);
      EXPECT_EQ(large.keys_per_thread, row.large.keys_per_thread);
      for (size_t b = 0; b < keys.bands.size(); ++b) {
        EXPECT_EQ(keys.bands[b].max_n, row.small_bands[b].max_n);
        if (keys.bands[b].max_n == 0) continue;
        const OnesweepTile tile = onesweep_tile_on(info, keys.bands[b].tile);
        EXPECT_EQ(tile.workgroup, row.small_bands[b].shape.workgroup);
        EXPECT_EQ(tile.keys_per_thread, row.small_bands[b].shape.keys_per_thread);
      }
      for (uint64_t n : sizes()) {
        // make_onesweep's size switch: the first band (ascending) whose max_n holds n, else the
        // large tile.
        before::OnesweepShape expected = row.large;
        for (const auto& band : row.small_bands)
          if (band.max_n != 0 && n <= band.max_n) {
            expected = band.shape;
            break;
          }
        const OnesweepTile chosen = onesweep_tile_for(info, keys, n);
        EXPECT_EQ(chosen.workgroup, expected.workgroup) << "n " << n;
        EXPECT_EQ(chosen.keys_per_thread, expected.keys_per_thread) << "n " << n;
        // The large tile's persistence and claims (bands run one workgroup per tile).
        const uint64_t tiles =
            std::max<uint64_t>(1, (n + large.workgroup * large.keys_per_thread - 1) /
                                      (large.workgroup * large.keys_per_thread));
        const uint32_t groups = keys.persistent_groups_per_unit * info.compute_units;
        const uint32_t persistent = tiles >= o.persistent_min_rounds * groups ? groups : 0;
        EXPECT_EQ(persistent, before::persistent_groups(info, k.key_words, k.value_words, tiles))
            << "n " << n;
        const uint32_t by_id = persistent != 0 ? 0u : uint32_t(o.tiles_by_id);
        EXPECT_EQ(by_id, before::claim_by_id(info, k.key_words, k.value_words, tiles)) << "n " << n;
      }
    }
  }
}

// automatic's small-array bands as automatic_small_bands wanted them before (the fitting to the
// device, small_sort_shape, is the same code after), and the band each n falls in.
TEST(Tuning, SmallSortBandsAsBefore) {
  for (const FakeDevice& f : fake_devices()) {
    SCOPED_TRACE(f.name);
    const SmallSortTuning& s = tuning_for(info_of(f)).small_sort;
    size_t used = 0;
    for (const SmallSortBandTuning& b : s.bands)
      if (b.log2_max_n != 0) ++used;
    ASSERT_EQ(used, std::size(before::wanted));
    for (size_t i = 0; i < used; ++i) {
      const SmallSortBandTuning& b = s.bands[i];
      const before::Wanted& w = before::wanted[i];
      EXPECT_EQ(b.log2_max_n, w.log2_max_n);
      EXPECT_EQ(b.bare_keys_only, w.bare_keys_only);
      EXPECT_EQ(b.items, before::items);
      EXPECT_EQ(b.single_workgroup, w.single_workgroup);
      EXPECT_EQ(b.tile_workgroup, w.tile_workgroup);
      EXPECT_EQ(b.merge_workgroup, before::merge_workgroup);
      EXPECT_EQ(b.subgroup_sort, before::subgroup_sort);
      EXPECT_EQ(b.merge_tiles_per_round, before::merge_tiles_per_round);
      EXPECT_EQ(b.merge_bucket_bits, before::merge_bucket_bits);
      EXPECT_EQ(b.merge_lanes, w.merge_lanes);
      EXPECT_EQ(b.merge_group_tiles, w.merge_group_tiles);
      EXPECT_EQ(b.adaptive_buckets, w.adaptive_buckets);
      EXPECT_EQ(b.skip_sorted_tiles, w.adaptive_buckets);
    }
    for (bool bare : {false, true})
      for (uint64_t n : sizes()) {
        int expected = -1, chosen = -1;
        for (size_t i = 0; i < std::size(before::wanted) && expected < 0; ++i)
          if ((bare || !before::wanted[i].bare_keys_only) &&
              n <= uint64_t(1) << before::wanted[i].log2_max_n)
            expected = int(i);
        for (size_t i = 0; i < used && chosen < 0; ++i)
          if ((bare || !s.bands[i].bare_keys_only) && n <= uint64_t(1) << s.bands[i].log2_max_n)
            chosen = int(i);
        EXPECT_EQ(chosen, expected) << "n " << n << (bare ? ", bare keys" : "");
      }
  }
}

TEST(Tuning, SegmentedPartitionAndHostAsBefore) {
  for (const FakeDevice& f : fake_devices()) {
    SCOPED_TRACE(f.name);
    const DeviceInfo info = info_of(f);
    const Tuning& t = tuning_for(info);
    EXPECT_EQ(t.segmented.log2_first_class, before::log2_first_class);
    EXPECT_EQ(t.segmented.log2_min_tile, before::log2_min_tile);
    EXPECT_EQ(t.segmented.log2_items, before::log2_items);
    EXPECT_EQ(t.segmented.log2_max_blocks, before::log2_max_blocks);
    EXPECT_EQ(t.segmented.merge_workgroup, before::wanted_merge_workgroup);
    EXPECT_EQ(t.segmented.bucket_workgroup, before::wanted_bucket_workgroup);
    EXPECT_EQ(t.segmented.bucket_max_subgroups, before::bucket_subgroups);
    EXPECT_EQ(t.segmented.bucket_keys_per_thread, before::default_bucket_keys_per_thread);
    EXPECT_EQ(t.partition.max_bucket, before::tuned_max_bucket(info));
    EXPECT_EQ(t.host.shader_copies, before::shader_copies(info));
  }
}

}  // namespace
}  // namespace gpusort
