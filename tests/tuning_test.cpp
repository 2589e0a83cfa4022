// The device families and their tables (src/tuning, each algorithm's tuning.cpp), without a GPU:
// fake devices of every family get their family, and every family's rows keep the tables'
// invariants: every family has every row, size bands ascend, tile shapes fit the device's limits
// and the kernels' constants, the CUDA kernels the rows name exist. The values themselves are the
// tables' (each cites its measurement); this test does not restate them.
#include "algorithms/onesweep/tuning.hpp"
#include "algorithms/partition_sort/tuning.hpp"
#include "algorithms/segmented_sort/tuning.hpp"
#include "algorithms/small_sort/tuning.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "algorithms/onesweep/cuda/cuda_kernels.hpp"

namespace gpusort {
namespace {

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
    EXPECT_EQ(std::string(to_string(f.family)).find("unknown"), std::string::npos);
  }
  // Every family has its own name.
  for (uint32_t a = 0; a < device_family_count; ++a) {
    for (uint32_t b = a + 1; b < device_family_count; ++b)
      EXPECT_STRNE(to_string(DeviceFamily(a)), to_string(DeviceFamily(b)));
  }
}

DeviceFamily family_at(uint32_t f) {
  return DeviceFamily(f);
}

// The key classes of OnesweepTuning, with the CUDA key class of each that has one.
struct OnesweepClass {
  uint32_t key_words, value_words;
};
constexpr OnesweepClass cuda_classes[] = {{1, 0}, {1, 1}, {2, 0}, {2, 1}};

// Onesweep's shared memory for a tile (onesweep.cpp's shared_bytes): per-subgroup digit counters
// (16-bit, two to a word) inside or beside the exchange array, and five radix-wide arrays.
uint32_t onesweep_shared_bytes(const DeviceInfo& info, OnesweepTile tile, bool counters_inside) {
  constexpr uint32_t radix = 256;
  const uint32_t counter_words = tile.workgroup / info.min_subgroup_size * radix / 2;
  const uint32_t exchange_words = tile.workgroup * tile.keys_per_thread;
  const uint32_t words =
      counters_inside ? std::max(exchange_words, counter_words) : exchange_words + counter_words;
  return words * 4 + 5 * radix * 4 + 256;
}

bool power_of_two(uint64_t v) {
  return std::has_single_bit(v);
}

// Every family has a row in every table.
TEST(Tuning, EveryFamilyHasEveryRow) {
  for (uint32_t f = 0; f < device_family_count; ++f) {
    const DeviceFamily family = family_at(f);
    SCOPED_TRACE(to_string(family));
    const OnesweepTuning& o = onesweep_tuning(family);
    for (const OnesweepKeyTuning* keys : {&o.keys32, &o.keys32_values, &o.keys64}) {
      EXPECT_NE(keys->large.workgroup, 0u);
      EXPECT_NE(keys->large.keys_per_thread, 0u);
    }
    EXPECT_NE(o.lookback_window, 0u);
    EXPECT_NE(o.histogram_groups_per_unit, 0u);
    EXPECT_NE(o.persistent_min_rounds, 0u);
    EXPECT_NE(small_sort_tuning(family).bands[0].log2_max_n, 0u);
    EXPECT_NE(segmented_tuning(family).log2_min_tile, 0u);
    EXPECT_NE(segmented_tuning(family).merge_workgroup, 0u);
    EXPECT_NE(segmented_tuning(family).bucket_workgroup, 0u);
    EXPECT_NE(partition_tuning(family).max_bucket, 0u);
  }
}

// Onesweep's bands ascend and hold smaller tiles than the large one; every tile fits the devices
// of its family (workgroup size, shared memory, 16-bit counters); the tile chosen for n is the
// first band that holds n.
TEST(Tuning, OnesweepBandsAscendAndTilesFit) {
  for (const FakeDevice& f : fake_devices()) {
    // Subgroups that may be one lane wide need more per-subgroup counters than any tile's
    // shared memory holds: Onesweep refuses such devices whatever the table says.
    if (f.min_subgroup_size < 4) continue;
    const DeviceInfo info = info_of(f);
    const OnesweepTuning& o = onesweep_tuning(info);
    for (const KeyClass& k : key_classes) {
      SCOPED_TRACE(name_of(f, k));
      const OnesweepKeyTuning& keys = onesweep_keys(o, k.key_words, k.value_words);
      const OnesweepTile large = onesweep_tile_on(info, keys.large);
      const uint64_t large_keys = uint64_t(large.workgroup) * large.keys_per_thread;
      uint64_t previous = 0;
      bool unused_seen = false;
      std::vector<OnesweepTile> tiles = {large};
      for (const OnesweepBand& band : keys.bands) {
        if (band.max_n == 0) {
          unused_seen = true;
          continue;
        }
        EXPECT_FALSE(unused_seen) << "a used band after an unused one";
        EXPECT_GT(band.max_n, previous) << "bands ascend";
        previous = band.max_n;
        const OnesweepTile tile = onesweep_tile_on(info, band.tile);
        EXPECT_LE(uint64_t(tile.workgroup) * tile.keys_per_thread, large_keys)
            << "a band's tile is at most the large one";
        tiles.push_back(tile);
      }
      for (const OnesweepTile& tile : tiles) {
        EXPECT_LE(tile.workgroup, info.max_workgroup_size);
        EXPECT_EQ(tile.workgroup % info.max_subgroup_size, 0u);
        EXPECT_GE(tile.keys_per_thread, 1u);
        EXPECT_LT(tile.workgroup * tile.keys_per_thread, 65536u) << "16-bit digit counters";
        EXPECT_LE(onesweep_shared_bytes(info, tile, keys.counters_in_exchange),
                  info.shared_memory_bytes)
            << tile.workgroup << " x " << tile.keys_per_thread;
      }
      for (uint64_t n : sizes()) {
        OnesweepTile expected = large;
        for (const OnesweepBand& band : keys.bands)
          if (band.max_n != 0 && n <= band.max_n) {
            expected = onesweep_tile_on(info, band.tile);
            break;
          }
        const OnesweepTile chosen = onesweep_tile_for(info, keys, n);
        EXPECT_EQ(chosen.workgroup, expected.workgroup) << "n " << n;
        EXPECT_EQ(chosen.keys_per_thread, expected.keys_per_thread) << "n " << n;
      }
    }
    EXPECT_TRUE(power_of_two(o.lookback_window)) << f.name;
  }
}

// The CUDA columns name kernels that exist (cuda_kernels.hpp) for their key class; only NVIDIA's
// families run them; smallest_cuda_n is the least of them.
TEST(Tuning, CudaRowsNameKernelsThatExist) {
  uint64_t smallest = UINT64_MAX;
  for (uint32_t f = 0; f < device_family_count; ++f) {
    const DeviceFamily family = family_at(f);
    SCOPED_TRACE(to_string(family));
    const OnesweepTuning& o = onesweep_tuning(family);
    const bool nvidia = family == DeviceFamily::nvidia || family == DeviceFamily::nvidia_h200 ||
                        family == DeviceFamily::nvidia_integrated;
    for (uint32_t c = 0; c < 4; ++c) {
      const OnesweepClass& k = cuda_classes[c];
      ASSERT_EQ(cuda::cuda_key_class(k.key_words, k.value_words), c);
      bool class_has_kernel = false, variant_found = false;
      for (const cuda::CudaPassShape& shape : cuda::kCudaPassShapes) {
        if (shape.key_words != k.key_words || shape.value_words != k.value_words) continue;
        class_has_kernel = true;
        if (o.cuda_variants[c] && std::string(o.cuda_variants[c]) == shape.variant)
          variant_found = true;
      }
      if (o.cuda_variants[c]) {
        EXPECT_TRUE(variant_found) << "class " << c << ": no kernel " << o.cuda_variants[c];
      }
      if (o.cuda_from_n[c] != 0) {
        EXPECT_TRUE(nvidia) << "class " << c << ": CUDA kernels on a device that has none";
        EXPECT_TRUE(class_has_kernel) << "class " << c;
        smallest = std::min(smallest, o.cuda_from_n[c]);
      }
      EXPECT_LE(o.cuda_tiles_by_id[c], 1u) << "class " << c;
    }
    // cuda_histogram picks the v-th histogram kernel of each key width (0: none).
    for (uint32_t key_words : {1u, 2u}) {
      uint32_t rows = 0;
      for (const cuda::CudaHistogramShape& shape : cuda::kCudaHistogramShapes)
        if (shape.key_words == key_words) ++rows;
      EXPECT_LE(o.cuda_histogram, rows) << key_words * 32 << "-bit keys";
    }
    if (!nvidia) {
      EXPECT_EQ(o.cuda_histogram, 0u);
    }
  }
  EXPECT_EQ(smallest_cuda_n(), smallest);
}

// The small-array sort's bands ascend and their shapes are ones small_sort has kernels for.
TEST(Tuning, SmallSortBandsAscendAndShapesExist) {
  for (uint32_t f = 0; f < device_family_count; ++f) {
    SCOPED_TRACE(to_string(family_at(f)));
    const SmallSortTuning& s = small_sort_tuning(family_at(f));
    uint32_t previous = 0;
    bool unused_seen = false, keys_with_values = false;
    for (const SmallSortBandTuning& b : s.bands) {
      if (b.log2_max_n == 0) {
        unused_seen = true;
        continue;
      }
      SCOPED_TRACE("band to 2^" + std::to_string(b.log2_max_n));
      EXPECT_FALSE(unused_seen) << "a used band after an unused one";
      EXPECT_GT(b.log2_max_n, previous) << "bands ascend";
      previous = b.log2_max_n;
      keys_with_values |= !b.bare_keys_only;
      EXPECT_TRUE(b.items == 1 || b.items == 2 || b.items == 4 || b.items == 8);
      for (uint32_t workgroup : {b.single_workgroup, b.tile_workgroup, b.merge_workgroup}) {
        EXPECT_TRUE(power_of_two(workgroup)) << workgroup;
        EXPECT_LE(workgroup, 1024u);
      }
      EXPECT_TRUE(b.merge_tiles_per_round == 4 || b.merge_tiles_per_round == 8);
      EXPECT_LE(b.merge_bucket_bits, 12u);
      EXPECT_TRUE(power_of_two(b.merge_lanes));
      EXPECT_LE(b.merge_lanes, 32u);
      EXPECT_TRUE(b.merge_group_tiles == 0 || power_of_two(b.merge_group_tiles));
    }
    EXPECT_TRUE(keys_with_values) << "a band for keys with values";
  }
}

// The segmented sort's size classes nest (the first class no larger than the smallest tile, whose
// workgroup fits), its workgroups fit, and the partition sort's largest bucket is a power of two.
TEST(Tuning, SegmentedAndPartitionShapesFit) {
  for (uint32_t f = 0; f < device_family_count; ++f) {
    SCOPED_TRACE(to_string(family_at(f)));
    const SegmentedTuning& s = segmented_tuning(family_at(f));
    EXPECT_LE(s.log2_first_class, s.log2_min_tile);
    EXPECT_LT(s.log2_items, s.log2_min_tile);
    EXPECT_LE(s.log2_min_tile - s.log2_items, 10u) << "a workgroup of at most 1024";
    EXPECT_GE(s.log2_max_blocks, 1u);
    for (uint32_t workgroup : {s.merge_workgroup, s.bucket_workgroup}) {
      EXPECT_TRUE(power_of_two(workgroup)) << workgroup;
      EXPECT_LE(workgroup, 1024u);
    }
    EXPECT_GE(s.bucket_max_subgroups, 1u);
    EXPECT_GE(s.bucket_keys_per_thread, 1u);
    EXPECT_TRUE(power_of_two(partition_tuning(family_at(f)).max_bucket));
  }
}

}  // namespace
}  // namespace gpusort
