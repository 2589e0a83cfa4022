// Onesweep's CUDA pass (src/algorithms/onesweep/cuda, VK_NVX_binary_import) and the choice of
// kernel path (KernelPath, GPUSORT_KERNELS). The selection tests run everywhere (lavapipe has no
// NVX: there they check the SPIR-V fallback and the errors); the CudaPath* tests need a device
// that launches the CUDA kernels and skip elsewhere, saying why.
//
// Ordering tests: GPUSORT_TEST_DROP_BARRIER=<name> leaves out one barrier (caller_before,
// caller_after, plan, pass, last_pass) so that, on the GPU, the test can be shown to fail
// without it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "algorithms/onesweep/cuda/cuda_kernels.hpp"
#include "algorithms/onesweep/cuda/cuda_pass.hpp"
#include "algorithms/onesweep/onesweep.hpp"
#include "algorithms/small_sort/cuda/stream_sort.hpp"
#include "cuda/embedded_images.hpp"
#include "kernels.hpp"
#include "primitives/constants.h"
#include "primitives/push.h"
#include "test_support.hpp"
#include "algorithms/onesweep/tuning.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/recorder.hpp"

namespace gpusort::test {
namespace {

// Sets an environment variable for one scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

bool cuda_available() {
  return context().device_info().cuda_kernels;
}

// The CUDA pass kernel (its variant's name) that a device family's table gives a key class: the
// one it names, else the class's first row (choose_cuda_pass).
std::string table_kernel(const OnesweepTuning& table, uint32_t key_words, uint32_t value_words) {
  if (const char* named = table.cuda_variants[cuda::cuda_key_class(key_words, value_words)])
    return named;
  for (const cuda::CudaPassShape& row : cuda::kCudaPassShapes)
    if (row.key_words == key_words && row.value_words == value_words) return row.variant;
  return "";
}
// The kernel_path of a key class's CUDA pass by a device family's table: "cuda <kernel>", then
// " +histogram" where the histogram and plan run as a CUDA kernel too, and " +by id" where the
// table has the blocks sort the tile their id names (else they claim tiles from the pass's
// counter).
std::string table_cuda_path(const OnesweepTuning& table, uint32_t key_words, uint32_t value_words,
                            bool histogram = true) {
  const bool by_id = table.cuda_tiles_by_id[cuda::cuda_key_class(key_words, value_words)] != 0;
  return "cuda " + table_kernel(table, key_words, value_words) + (histogram ? " +histogram" : "") +
         (by_id ? " +by id" : "");
}

#define SKIP_WITHOUT_CUDA()                                                                     \
  do {                                                                                          \
    if (!cuda_available()) {                                                                    \
      GTEST_SKIP() << "the CUDA kernels cannot run on " << context().device_info().name << ": " \
                   << context().device_info().cuda_why;                                         \
    }                                                                                           \
  } while (false)

// ---- Selection (every device) ----

TEST(KernelPathSelection, EnvironmentVariable) {
  {
    ScopedEnv env("GPUSORT_KERNELS", nullptr);
    EXPECT_EQ(requested_kernel_path(KernelPath::automatic), KernelPath::automatic);
  }
  for (auto [text, path] :
       {std::pair{"", KernelPath::automatic}, std::pair{"auto", KernelPath::automatic},
        std::pair{"automatic", KernelPath::automatic}, std::pair{"spirv", KernelPath::spirv},
        std::pair{"cuda", KernelPath::cuda}}) {
    ScopedEnv env("GPUSORT_KERNELS", text);
    EXPECT_EQ(requested_kernel_path(KernelPath::automatic), path) << text;
    // The option, where set, wins.
    EXPECT_EQ(requested_kernel_path(KernelPath::spirv), KernelPath::spirv) << text;
    EXPECT_EQ(requested_kernel_path(KernelPath::cuda), KernelPath::cuda) << text;
  }
  ScopedEnv env("GPUSORT_KERNELS", "CUDA");
  try {
    requested_kernel_path(KernelPath::automatic);
    ADD_FAILURE() << "GPUSORT_KERNELS=CUDA was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "GPUSORT_KERNELS='CUDA' is not one of spirv, cuda, auto");
  }
  EXPECT_EQ(parse_kernel_path("cuda"), KernelPath::cuda);
  EXPECT_EQ(parse_kernel_path("spirv"), KernelPath::spirv);
  EXPECT_EQ(parse_kernel_path("auto"), KernelPath::automatic);
  EXPECT_THROW(parse_kernel_path("ptx"), Error);
  EXPECT_STREQ(to_string(KernelPath::cuda), "cuda");
}

// A device of the suite's physical device created without VK_NVX_binary_import
// (the features Context::wrap asks for, no extension), for Context::wrap.
class DeviceWithoutExtensions {
 public:
  DeviceWithoutExtensions() {
    Context& ctx = context();
    VkPhysicalDeviceVulkan13Features have13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features have12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            &have13};
    VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &have12};
    vkGetPhysicalDeviceFeatures2(ctx.physical_device(), &have);
    VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    f13.subgroupSizeControl = have13.subgroupSizeControl;
    f13.computeFullSubgroups = have13.computeFullSubgroups;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                         &f13};
    f12.bufferDeviceAddress = VK_TRUE;
    // What the kernels use where the device has it (Context::wrap's contract): without
    // shaderBufferInt64Atomics the look-back's 64-bit atomics fail validation (VUID-01091).
    f12.shaderBufferInt64Atomics = have12.shaderBufferInt64Atomics;
    f12.shaderSharedInt64Atomics = have12.shaderSharedInt64Atomics;
    f12.vulkanMemoryModel = have12.vulkanMemoryModel;
    f12.vulkanMemoryModelDeviceScope = have12.vulkanMemoryModelDeviceScope;
    f12.storageBuffer8BitAccess = have12.storageBuffer8BitAccess;
    f12.shaderInt8 = have12.shaderInt8;
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
    features.features.shaderInt64 = VK_TRUE;
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue.queueFamilyIndex = ctx.queue_family_index();
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    if (vkCreateDevice(ctx.physical_device(), &info, nullptr, &device_) != VK_SUCCESS)
      throw Error("the test's vkCreateDevice failed");
    vkGetDeviceQueue(device_, ctx.queue_family_index(), 0, &queue_);
  }
  ~DeviceWithoutExtensions() { vkDestroyDevice(device_, nullptr); }
  DeviceWithoutExtensions(const DeviceWithoutExtensions&) = delete;
  DeviceWithoutExtensions& operator=(const DeviceWithoutExtensions&) = delete;
  Context wrap() const {
    Context& ctx = context();
    return Context::wrap(ctx.impl().instance, ctx.physical_device(), device_, queue_,
                         ctx.queue_family_index());
  }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
};

// Asked for where it cannot run: one line naming the device and why. Where the suite's device runs
// the CUDA kernels, the same device wrapped without VK_NVX_binary_import cannot.
TEST(KernelPathSelection, CudaWhereUnavailableIsAOneLineError) {
  std::optional<DeviceWithoutExtensions> raw;
  std::optional<Context> wrapped;
  if (cuda_available()) {
    raw.emplace();
    wrapped = raw->wrap();
    EXPECT_EQ(wrapped->device_info().cuda_why,
              "VK_NVX_binary_import is not enabled on the device (a wrapped device: the caller's "
              "choice)");
  }
  {
    Context ctx = wrapped ? *wrapped : context();
    const std::string why = ctx.device_info().cuda_why;
    EXPECT_FALSE(ctx.device_info().cuda_kernels);
    EXPECT_FALSE(why.empty());
    const SortSpec spec = make_sort_spec(KeyType::u32, 0, false, 0, 0);
    try {
      make_onesweep(ctx.impl(), spec, OnesweepOptions{.kernels = KernelPath::cuda});
      ADD_FAILURE() << "kernels=cuda was accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message, "the CUDA kernels (kernels=cuda) cannot run on " + ctx.device_info().name +
                             ": " + why);
      EXPECT_EQ(message.find('\n'), std::string::npos);
    }
    // Through the public faces: the option, and the environment variable.
    std::vector<uint32_t> keys(300000, 7);
    SortOptions options;
    options.algorithm = Algorithm::onesweep;
    options.kernels = KernelPath::cuda;
    EXPECT_THROW(sort(ctx, std::span(keys), options), Error);
    SorterConfig config;
    config.algorithm = Algorithm::onesweep;
    config.kernels = KernelPath::cuda;
    EXPECT_THROW(Sorter(ctx, config), Error);
    ScopedEnv env("GPUSORT_KERNELS", "cuda");
    config.kernels = KernelPath::automatic;
    EXPECT_THROW(Sorter(ctx, config), Error);
    config.kernels = KernelPath::spirv;  // the option wins over the variable
    EXPECT_NO_THROW(Sorter(ctx, config));
  }
  wrapped.reset();  // before its device
}

// SPIR-V whenever asked for, wherever the CUDA kernels cannot run, and for 8-byte values (no
// CUDA kernel) whatever was asked for.
TEST(KernelPathSelection, SpirvWhenAskedUnavailableOrUncovered) {
  auto& impl = context().impl();
  ScopedEnv env("GPUSORT_KERNELS", nullptr);
  ScopedEnv histogram_env("GPUSORT_CUDA_HISTOGRAM", nullptr);
  for (KeyType key : {KeyType::u32, KeyType::f64}) {
    const SortSpec spec = make_sort_spec(key, 4, false, 0, 0);
    EXPECT_EQ(
        make_onesweep(impl, spec, OnesweepOptions{.kernels = KernelPath::spirv})->pass_kernels(),
        "spirv");
    const std::string automatic = make_onesweep(impl, spec, OnesweepOptions{})->pass_kernels();
    // Where the CUDA pass runs, so does the CUDA histogram; tiles by id where the family's table
    // says so (src/algorithms/onesweep/tuning.cpp).
    const OnesweepTuning& table = onesweep_tuning(impl.info);
    EXPECT_EQ(automatic, !cuda_available()     ? std::string("spirv")
                         : key == KeyType::u32 ? table_cuda_path(table, 1, 1)
                                               : table_cuda_path(table, 2, 1));
    const SortSpec wide_values = make_sort_spec(key, 8, false, 0, 0);
    EXPECT_EQ(make_onesweep(impl, wide_values, OnesweepOptions{.kernels = KernelPath::cuda})
                  ->pass_kernels(),
              "spirv");
  }
}

// The kernels the host launches by name: the NVX path's and the CUDA face's small-array sorts'.
std::vector<std::string> kernel_names() {
  std::vector<std::string> names = cuda::function_names();
  for (const std::string& name : cuda::small_sort_function_names()) names.push_back(name);
  return names;
}

// The library embeds a cubin for every architecture built and PTX of the newest, each holding
// every kernel the host launches by name; DeviceInfo says whether they can run and why not.
TEST(KernelPathSelection, EmbeddedKernels) {
#if GPUSORT_CUDA_KERNELS
  ASSERT_FALSE(cuda::embedded_cubins().empty());
  bool has_sm90 = false;
  for (const cuda::EmbeddedCubin& cubin : cuda::embedded_cubins()) {
    ASSERT_GT(cubin.size, 4u);
    EXPECT_EQ(std::memcmp(cubin.data,
                          "\x7f"
                          "ELF",
                          4),
              0)
        << "sm_" << cubin.arch;
    has_sm90 |= cubin.arch == 90;
    const std::string image(reinterpret_cast<const char*>(cubin.data), cubin.size);
    for (const std::string& name : kernel_names())
      EXPECT_NE(image.find(name + '\0'), std::string::npos) << name;
  }
  EXPECT_TRUE(has_sm90);
  const cuda::EmbeddedPtx ptx = cuda::embedded_ptx();
  const std::string text(ptx.text, ptx.size);
  EXPECT_EQ(std::strlen(ptx.text), ptx.size);
  EXPECT_NE(text.find(".target sm_" + std::to_string(ptx.arch)), std::string::npos);
  for (const std::string& name : kernel_names())
    EXPECT_NE(text.find(".entry " + name + "("), std::string::npos) << name;
#else
  EXPECT_FALSE(context().device_info().cuda_kernels);
  EXPECT_EQ(context().device_info().cuda_why,
            "the library was built without the CUDA kernels (no nvcc)");
#endif
  if (!cuda_available()) {
    EXPECT_FALSE(context().device_info().cuda_why.empty());
  }
}

// `gpusort devices` names the path each device gets.
std::string run_cli(const std::string& arguments) {
  std::string output;
  FILE* pipe = popen((std::string(GPUSORT_CLI_PATH) + " " + arguments + " 2>&1").c_str(), "r");
  if (!pipe) return output;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, got);
  pclose(pipe);
  return output;
}

TEST(KernelPathSelection, DevicesCommandNamesThePath) {
  {
    ScopedEnv env("GPUSORT_KERNELS", nullptr);
    const std::string out = run_cli("devices");
    EXPECT_NE(out.find("onesweep passes: "), std::string::npos) << out;
    if (!cuda_available()) {
      EXPECT_NE(out.find("onesweep passes: spirv (CUDA kernels unavailable: " +
                         context().device_info().cuda_why + ")"),
                std::string::npos)
          << out;
    } else {
      EXPECT_NE(out.find("onesweep passes: cuda (VK_NVX_binary_import, embedded " +
                         cuda::embedded_images() + ", loaded by the first sort; "),
                std::string::npos)
          << out;
    }
  }
  {
    ScopedEnv env("GPUSORT_KERNELS", "spirv");
    EXPECT_NE(run_cli("devices").find("onesweep passes: spirv (GPUSORT_KERNELS=spirv)"),
              std::string::npos);
  }
  ScopedEnv env("GPUSORT_KERNELS", "fast");
  EXPECT_NE(run_cli("devices").find(
                "gpusort: error: GPUSORT_KERNELS='fast' is not one of spirv, cuda, auto"),
            std::string::npos);
}

// A bad value of a CUDA switch is refused by every sort, also where the CUDA pass would not run:
// a small array, another algorithm, GPUSORT_KERNELS=spirv, a device without the CUDA kernels, the
// CLI. The keys are left as they were.
TEST(KernelPathSelection, CudaSwitchesRefusedByEverySort) {
  const std::pair<const char*, const char*> switches[] = {
      {"GPUSORT_CUDA_HISTOGRAM", "abc"},      {"GPUSORT_CUDA_HISTOGRAM", "7"},
      {"GPUSORT_CUDA_PREFETCH", "-1"},        {"GPUSORT_CUDA_MODULE", "sass"},
      {"GPUSORT_CUDA_RANK_SORT_MAX_N", "4k"}, {"GPUSORT_CUDA_OVERLAP", "yes"}};
  const std::string messages[] = {"GPUSORT_CUDA_HISTOGRAM='abc' is not 0, 1 or 2",
                                  "GPUSORT_CUDA_HISTOGRAM='7' is not 0, 1 or 2",
                                  "GPUSORT_CUDA_PREFETCH='-1' is not a number of tiles (0 to "
                                  "999999999)",
                                  "GPUSORT_CUDA_MODULE='sass' is not ptx or cubin",
                                  "GPUSORT_CUDA_RANK_SORT_MAX_N='4k' is not a number of keys (0 to "
                                  "999999999)",
                                  "GPUSORT_CUDA_OVERLAP='yes' is not 0 or 1"};
  for (size_t i = 0; i < std::size(switches); ++i) {
    ScopedEnv env(switches[i].first, switches[i].second);
    for (const char* kernels : {"", "spirv"}) {
      ScopedEnv path("GPUSORT_KERNELS", kernels);
      for (Algorithm algorithm : {Algorithm::automatic, Algorithm::bitonic}) {
        std::vector<uint32_t> keys(1000);
        for (uint32_t k = 0; k < keys.size(); ++k) keys[k] = 999 - k;
        const std::vector<uint32_t> before = keys;
        try {
          sort(context(), std::span(keys), SortOptions{.algorithm = algorithm});
          ADD_FAILURE() << switches[i].first << "='" << switches[i].second << "' was accepted";
        } catch (const Error& e) {
          EXPECT_EQ(std::string(e.what()), messages[i]);
        }
        EXPECT_EQ(keys, before);
      }
    }
    const std::string in = ::testing::TempDir() + "cuda_switch_in.bin";
    const std::string out = ::testing::TempDir() + "cuda_switch_out.bin";
    std::remove(out.c_str());
    FILE* f = std::fopen(in.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const uint32_t keys[3] = {3, 1, 2};
    std::fwrite(keys, sizeof(uint32_t), 3, f);
    std::fclose(f);
    EXPECT_EQ(run_cli("sort " + in + " " + out + " --type u32"),
              "gpusort: error: " + messages[i] + "\n");
    EXPECT_EQ(std::fopen(out.c_str(), "rb"), nullptr);
  }
}

// A Context created for the SPIR-V kernels (ContextOptions::kernels, or GPUSORT_KERNELS=spirv)
// leaves VK_NVX_binary_import off, says so, and refuses kernels=cuda with that reason; it still
// sorts. The CLI creates one for inputs smaller than any table's CUDA sizes.
TEST(KernelPathSelection, SpirvContextLeavesTheExtensionOff) {
  EXPECT_EQ(smallest_cuda_n(), uint64_t(1) << 19);
  const std::string index = std::to_string(context().device_info().index);
  for (bool by_environment : {false, true}) {
    ScopedEnv env("GPUSORT_KERNELS", by_environment ? "spirv" : nullptr);
    Context ctx = Context::create(ContextOptions{
        .device = index, .kernels = by_environment ? KernelPath::automatic : KernelPath::spirv});
    EXPECT_FALSE(ctx.device_info().cuda_kernels);
    EXPECT_EQ(vkGetDeviceProcAddr(ctx.device(), "vkCmdCuLaunchKernelNVX"), nullptr);
    if (cuda_available())
      EXPECT_EQ(ctx.device_info().cuda_why,
                "the Context was created for the SPIR-V kernels only (kernels=spirv)");
    else
      EXPECT_EQ(ctx.device_info().cuda_why, context().device_info().cuda_why);
    std::vector<uint32_t> keys(uint64_t(1) << 20);
    for (uint32_t i = 0; i < keys.size(); ++i) keys[i] = uint32_t(keys.size()) - 1 - i;
    if (!by_environment) {
      try {
        sort(ctx, std::span(keys), SortOptions{.kernels = KernelPath::cuda});
        ADD_FAILURE() << "kernels=cuda was accepted";
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "the CUDA kernels (kernels=cuda) cannot run on " +
                                             ctx.device_info().name + ": " +
                                             ctx.device_info().cuda_why);
      }
    }
    sort(ctx, std::span(keys));
    for (uint32_t i = 0; i < keys.size(); ++i) ASSERT_EQ(keys[i], i);
  }
}

// Context::load_cuda_kernels where they cannot run: one line naming the device and why.
TEST(KernelPathSelection, LoadWhereUnavailableIsAOneLineError) {
  if (cuda_available()) GTEST_SKIP() << "the CUDA kernels can run on this device";
  try {
    context().load_cuda_kernels();
    ADD_FAILURE() << "load_cuda_kernels() returned";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "the CUDA kernels cannot run on " +
                                         context().device_info().name + ": " +
                                         context().device_info().cuda_why);
  }
}

// Only NVIDIA's families choose the CUDA pass by themselves (where the device can run it: the
// integrated GPUs take the discrete table, and a module that does not load leaves them SPIR-V).
TEST(KernelPathSelection, TuningTables) {
  for (uint32_t f = 0; f < device_family_count; ++f) {
    const DeviceFamily family = DeviceFamily(f);
    const auto& from = onesweep_tuning(family).cuda_from_n;
    if (family == DeviceFamily::nvidia || family == DeviceFamily::nvidia_integrated) {
      // Measured (src/algorithms/onesweep/tuning.cpp): 32-bit keys alone from 2^19, the pairs
      // and u64 above 2^20, u64+u32 from 2^20.
      EXPECT_EQ(from, (std::array<uint64_t, 4>{1ull << 19, (1ull << 20) + 1, (1ull << 20) + 1,
                                               1ull << 20}))
          << to_string(family);
    } else if (family == DeviceFamily::nvidia_h200) {
      // The H200: 32-bit keys alone from 2^19, the others above 2^20 (its u64+u32 kernel is
      // slower than SPIR-V at 2^20).
      EXPECT_EQ(from, (std::array<uint64_t, 4>{1ull << 19, (1ull << 20) + 1, (1ull << 20) + 1,
                                               (1ull << 20) + 1}))
          << to_string(family);
    } else {
      EXPECT_EQ(from, (std::array<uint64_t, 4>{})) << to_string(family);
    }
  }
}

// Each pass kernel is built per key order; a sort takes the one of its key kind and order.
TEST(KernelPathSelection, KeyOrderKernels) {
  const struct {
    KeyType key;
    bool descending;
    const char* suffix;
  } cases[] = {{KeyType::u32, false, ""},     {KeyType::u64, false, ""},
               {KeyType::u32, true, "_desc"}, {KeyType::u64, true, "_desc"},
               {KeyType::i32, false, "_i"},   {KeyType::i64, true, "_i_desc"},
               {KeyType::f32, false, "_f"},   {KeyType::f64, true, "_f_desc"}};
  for (const auto& c : cases) {
    const SortSpec spec = make_sort_spec(c.key, 0, c.descending, 0, 0);
    const uint32_t order = cuda::cuda_key_order(spec.key_kind, spec.descending);
    ASSERT_LT(order, cuda::kCudaKeyOrderCount);
    EXPECT_STREQ(cuda::kCudaKeyOrderSuffixes[order], c.suffix)
        << to_string(c.key) << (c.descending ? " descending" : "");
  }
  EXPECT_EQ(cuda::kCudaPassFunctionCount, cuda::kCudaPassShapeCount * cuda::kCudaKeyOrderCount);
}

// The Context's functions are made from these names in this order; the host finds a pass row's
// kernel for a key order, and a histogram row's, at the indices the launches use.
TEST(KernelPathSelection, FunctionNamesInTheLaunchOrder) {
  const std::vector<std::string> names = cuda::function_names();
  ASSERT_EQ(names.size(), size_t(cuda::kCudaPassFunctionCount + cuda::kCudaHistogramShapeCount));
  for (uint32_t row = 0; row < cuda::kCudaPassShapeCount; ++row)
    for (uint32_t order = 0; order < cuda::kCudaKeyOrderCount; ++order)
      EXPECT_EQ(
          names.at(cuda::cuda_pass_function(row, order)),
          std::string(cuda::kCudaPassShapes[row].kernel) + cuda::kCudaKeyOrderSuffixes[order]);
  for (uint32_t row = 0; row < cuda::kCudaHistogramShapeCount; ++row)
    EXPECT_EQ(names.at(cuda::cuda_histogram_function(row)), cuda::kCudaHistogramShapes[row].kernel);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
}

// Each table names, per key class, a kernel of that class (or none: the class's first); the
// H100's and the H200's differ in u64+u32's alone (src/algorithms/onesweep/tuning.cpp).
TEST(KernelPathSelection, TablesNameKernelsThatExist) {
  for (uint32_t f = 0; f < device_family_count; ++f) {
    const auto& variants = onesweep_tuning(DeviceFamily(f)).cuda_variants;
    for (uint32_t key_words : {1u, 2u})
      for (uint32_t value_words : {0u, 1u}) {
        const char* variant = variants[cuda::cuda_key_class(key_words, value_words)];
        if (!variant) continue;
        uint32_t rows = 0;
        for (const cuda::CudaPassShape& row : cuda::kCudaPassShapes)
          rows += row.key_words == key_words && row.value_words == value_words &&
                  std::string(row.variant) == variant;
        EXPECT_EQ(rows, 1u) << to_string(DeviceFamily(f)) << " " << key_words << "+" << value_words
                            << " " << variant;
      }
  }
  const auto& h100 = onesweep_tuning(DeviceFamily::nvidia).cuda_variants;
  const auto& h200 = onesweep_tuning(DeviceFamily::nvidia_h200).cuda_variants;
  for (uint32_t c = 0; c < 3; ++c) EXPECT_STREQ(h100[c], h200[c]) << c;
  EXPECT_STREQ(h100[3], "1024x12seg1");
  EXPECT_STREQ(h200[3], "384x18s3pk");
}

// Chosen by itself, the CUDA pass takes the sizes from the table's threshold, SPIR-V below; asked
// for, every size.
TEST(KernelPathSelection, SizesChosenByItself) {
  SKIP_WITHOUT_CUDA();
  ScopedEnv env("GPUSORT_KERNELS", nullptr);
  ScopedEnv histogram_env("GPUSORT_CUDA_HISTOGRAM", nullptr);
  SorterConfig config;
  config.algorithm = Algorithm::onesweep;
  Sorter automatic(context(), config);
  // The CUDA histogram and plan come with the CUDA pass (src/algorithms/onesweep/tuning.cpp), from
  // the device family's threshold.
  const OnesweepTuning& table = onesweep_tuning(context().impl().info);
  EXPECT_EQ(automatic.kernel_path(table.cuda_from_n[0] - 1), "spirv");
  // Tiles by id where the table's cuda_tiles_by_id says so (32-bit keys alone and u64+u32 on
  // every NVIDIA family; u32 pairs on the H200), else from the pass's counter.
  const std::string keys_alone = table_cuda_path(table, 1, 0);
  EXPECT_EQ(automatic.kernel_path(table.cuda_from_n[0]), keys_alone);
  EXPECT_EQ(automatic.kernel_path((1 << 20) + 1), keys_alone);
  config.kernels = KernelPath::cuda;
  Sorter cuda(context(), config);
  EXPECT_EQ(cuda.kernel_path(1000), keys_alone);
  config.value_bytes = 4;
  EXPECT_EQ(Sorter(context(), config).kernel_path(1000), table_cuda_path(table, 1, 1));
  config.value_bytes = 0;
  config.key = KeyType::u64;
  config.value_bytes = 4;
  config.kernels = KernelPath::automatic;
  // u64+u32: the device family's kernel and threshold (the H100's and the H200's differ).
  const std::string u64_values = table_cuda_path(table, 2, 1);
  const uint64_t from = table.cuda_from_n[3];
  EXPECT_EQ(Sorter(context(), config).kernel_path(from - 1), "spirv");
  EXPECT_EQ(Sorter(context(), config).kernel_path(from), u64_values);
  config.kernels = KernelPath::cuda;
  EXPECT_EQ(Sorter(context(), config).kernel_path(1 << 26), u64_values);
  {
    ScopedEnv spirv_histogram("GPUSORT_CUDA_HISTOGRAM", "0");
    EXPECT_EQ(Sorter(context(), config).kernel_path(1 << 26),
              table_cuda_path(table, 2, 1, /*histogram=*/false));
  }
}

// `gpusort sort --kernels`: the option reaches the sort; cuda where it cannot run is one line.
TEST(KernelPathSelection, SortCommandOption) {
  ScopedEnv env("GPUSORT_KERNELS", nullptr);
  const std::string dir = ::testing::TempDir();
  const std::string in = dir + "/gpusort_kernels_in.bin", out = dir + "/gpusort_kernels_out.bin";
  std::vector<uint32_t> keys(200'000);
  std::mt19937_64 rng(fresh_seed());
  for (uint32_t& k : keys) k = uint32_t(rng());
  {
    FILE* f = std::fopen(in.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(keys.data(), 4, keys.size(), f), keys.size());
    std::fclose(f);
  }
  const std::string device = " --device " + std::to_string(context().device_info().index);
  const std::string common = "sort " + in + " " + out + " --type u32 -a onesweep" + device;
  EXPECT_NE(
      run_cli(common + " --kernels gpu")
          .find("gpusort: error: unknown kernel path 'gpu' (expected one of auto, spirv, cuda)"),
      std::string::npos);
  for (const char* path : {"spirv", "cuda"}) {
    std::remove(out.c_str());
    const std::string output = run_cli(common + " --kernels " + path);
    if (std::string(path) == "cuda" && !cuda_available()) {
      EXPECT_NE(output.find("gpusort: error: the CUDA kernels (kernels=cuda) cannot run on " +
                            context().device_info().name + ": " + context().device_info().cuda_why),
                std::string::npos)
          << output;
      continue;
    }
    std::vector<uint32_t> sorted(keys.size());
    FILE* f = std::fopen(out.c_str(), "rb");
    ASSERT_NE(f, nullptr) << output;
    ASSERT_EQ(std::fread(sorted.data(), 4, sorted.size(), f), sorted.size()) << output;
    std::fclose(f);
    std::vector<uint32_t> expected = keys;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(sorted, expected) << path;
  }
  std::remove(in.c_str());
  std::remove(out.c_str());
}

// ---- The CUDA pass (devices that launch it) ----

SortCase cuda_case(KeyType key, uint32_t value_bytes, bool descending, uint64_t n,
                   Distribution d = Distribution::uniform) {
  SortCase c;
  c.algorithm = Algorithm::onesweep;
  c.key = key;
  c.value_bytes = value_bytes;
  c.descending = descending;
  c.n = n;
  c.distribution = d;
  c.kernels = KernelPath::cuda;
  return c;
}

uint32_t cuda_tile(KeyType key, uint32_t value_bytes) {
  const SortSpec spec = make_sort_spec(key, value_bytes, false, 0, 0);
  return make_onesweep(context().impl(), spec, OnesweepOptions{.kernels = KernelPath::cuda})
      ->tile_keys();
}

const KeyType all_keys[] = {KeyType::u32, KeyType::i32, KeyType::f32,
                            KeyType::u64, KeyType::i64, KeyType::f64};

// Every key type with and without 4-byte values, both orders, sizes around the tile.
TEST(CudaPath, EveryKeyTypeAroundTiles) {
  SKIP_WITHOUT_CUDA();
  for (KeyType key : all_keys)
    for (uint32_t value_bytes : {0u, 4u}) {
      const uint64_t tile = cuda_tile(key, value_bytes);
      for (bool descending : {false, true})
        for (uint64_t n : {uint64_t(2), uint64_t(3), tile - 1, tile, tile + 1, 2 * tile,
                           3 * tile + 17, uint64_t(100003)}) {
          const Distribution d = key == KeyType::f32 || key == KeyType::f64
                                     ? Distribution::special_floats
                                     : Distribution::low_entropy;
          EXPECT_TRUE(check_sort(cuda_case(key, value_bytes, descending, n, d)));
        }
    }
}

TEST(CudaPath, EveryKeyTypeUpToMillions) {
  SKIP_WITHOUT_CUDA();
  for (KeyType key : all_keys)
    for (uint32_t value_bytes : {0u, 4u})
      for (uint64_t n : {uint64_t(1) << 20, uint64_t(3'000'017)})
        EXPECT_TRUE(check_sort(
            cuda_case(key, value_bytes, key == KeyType::i64, n,
                      key == KeyType::f32 ? Distribution::special_floats : Distribution::uniform)));
}

TEST(CudaPath, EveryDistribution) {
  SKIP_WITHOUT_CUDA();
  for (KeyType key : {KeyType::u32, KeyType::f32, KeyType::i64, KeyType::f64})
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_sort(cuda_case(key, 4, false, 250'001, d)));
}

// Every pass skipped (all keys equal) and some skipped (few digits differ).
TEST(CudaPath, SkippedPasses) {
  SKIP_WITHOUT_CUDA();
  for (KeyType key : all_keys)
    for (uint32_t value_bytes : {0u, 4u})
      for (uint64_t n : {uint64_t(5000), uint64_t(400'001)}) {
        EXPECT_TRUE(check_sort(cuda_case(key, value_bytes, false, n, Distribution::all_equal)));
        EXPECT_TRUE(check_sort(cuda_case(key, value_bytes, true, n, Distribution::few_unique)));
      }
}

TEST(CudaPath, BitRanges) {
  SKIP_WITHOUT_CUDA();
  struct Range {
    KeyType key;
    uint32_t begin, end;
  };
  for (Range r :
       {Range{KeyType::u32, 0, 12}, Range{KeyType::u32, 5, 29}, Range{KeyType::i32, 31, 32},
        Range{KeyType::f32, 3, 24}, Range{KeyType::u64, 13, 64}, Range{KeyType::u64, 28, 37},
        Range{KeyType::i64, 0, 40}, Range{KeyType::f64, 17, 63}})
    for (uint32_t value_bytes : {0u, 4u})
      for (bool descending : {false, true}) {
        SortCase c = cuda_case(r.key, value_bytes, descending, 300'007);
        c.begin_bit = r.begin;
        c.end_bit = r.end;
        EXPECT_TRUE(check_sort(c));
      }
}

// GPU-side counts (record_indirect): 0, 1, around a tile and many tiles, over a larger max_n.
TEST(CudaPath, GpuSideCounts) {
  SKIP_WITHOUT_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const uint64_t max_n = 200'003;
  auto bits = make_key_bits(KeyType::u32, max_n, Distribution::low_entropy, rng);
  const std::vector<uint32_t> keys(bits.begin(), bits.end());
  for (bool descending : {false, true}) {
    auto algorithm =
        make_onesweep(context().impl(), make_sort_spec(KeyType::u32, 4, descending, 0, 0),
                      OnesweepOptions{.kernels = KernelPath::cuda});
    ASSERT_EQ(algorithm->pass_kernels().rfind("cuda", 0), 0u);
    const uint64_t tile = algorithm->tile_keys();
    for (uint64_t n :
         {uint64_t(0), uint64_t(1), uint64_t(2), tile - 1, tile + 1, uint64_t(150'000), max_n})
      EXPECT_TRUE(
          check_u32_pairs(*algorithm, keys, n, true, descending, "count " + std::to_string(n), 2));
  }
}

// The engine face through the CUDA pass, every key type, n on the host and on the GPU.
TEST(CudaPath, SorterRecordIndirect) {
  SKIP_WITHOUT_CUDA();
  for (KeyType key : {KeyType::u64, KeyType::f32})
    for (uint64_t n : {uint64_t(0), uint64_t(777), uint64_t(123'456)}) {
      SorterConfig config;
      config.key = key;
      config.algorithm = Algorithm::onesweep;
      config.kernels = KernelPath::cuda;
      Sorter sorter(context(), config);
      const uint64_t max_n = 200'000, width = key_bytes(key);
      std::mt19937_64 rng(fresh_seed());
      auto bits = make_key_bits(key, max_n, Distribution::uniform, rng);
      std::vector<uint8_t> host(max_n * width);
      for (uint64_t i = 0; i < max_n; ++i) std::memcpy(&host[i * width], &bits[i], width);
      auto& impl = context().impl();
      DeviceBuffer keys(impl, host.size(), MemoryKind::device_local);
      DeviceBuffer scratch(impl, sorter.scratch_bytes(max_n), MemoryKind::device_local);
      DeviceBuffer count(impl, 4, MemoryKind::device_local);
      upload(impl, keys, host.data(), host.size());
      const uint32_t count_value = uint32_t(n);
      upload(impl, count, &count_value, 4);
      impl.submit([&](VkCommandBuffer cmd) {
        Recorder::full_barrier(cmd);
        sorter.record_indirect(cmd, keys.ref(), {}, scratch.ref(), count.ref(), max_n);
        Recorder::full_barrier(cmd);
      });
      std::vector<uint8_t> out(host.size());
      download(impl, keys, out.data(), out.size());
      std::vector<uint64_t> expected(bits.begin(), bits.begin() + n);
      std::stable_sort(expected.begin(), expected.end(), [&](uint64_t a, uint64_t b) {
        return radix_order(key, a, false) < radix_order(key, b, false);
      });
      for (uint64_t i = 0; i < max_n; ++i) {
        uint64_t got = 0;
        std::memcpy(&got, &out[i * width], width);
        const uint64_t want = i < n ? expected[i] : bits[i];
        ASSERT_EQ(got, want) << to_string(key) << " count " << n << " at " << i;
      }
    }
}

// The look-back's fallback forced: tiles that never publish, spin limits of 2 and 0, a table of
// a few slots; every output right and fallbacks counted.
TEST(CudaPath, LookbackFallbackForced) {
  SKIP_WITHOUT_CUDA();
  for (uint32_t spin_limit : {2u, 0u})
    for (uint32_t period : {3u, 0u}) {
      OnesweepOptions options{
          .lookback_slots = 8, .spin_limit = spin_limit, .publish_refusal_period = period};
      options.kernels = KernelPath::cuda;
      auto algorithm =
          make_onesweep(context().impl(), make_sort_spec(KeyType::u32, 4, false, 0, 0), options);
      const uint64_t max_n = 20 * uint64_t(algorithm->tile_keys()) + 99;
      std::mt19937_64 rng(fresh_seed());
      auto bits = make_key_bits(KeyType::u32, max_n, Distribution::uniform, rng);
      const std::vector<uint32_t> keys(bits.begin(), bits.end());
      auto fallbacks = [&](const DeviceBuffer& scratch) -> ::testing::AssertionResult {
        if (period == 0 && spin_limit != 0) return ::testing::AssertionSuccess();
        uint32_t count = 0;
        download_range(scratch, algorithm->fallback_count_offset(max_n), &count, 4);
        if (count == 0) return ::testing::AssertionFailure() << "no look-back fell back";
        return ::testing::AssertionSuccess();
      };
      for (bool indirect : {false, true})
        EXPECT_TRUE(check_u32_pairs(
            *algorithm, keys, max_n, indirect, false,
            "spin " + std::to_string(spin_limit) + " period " + std::to_string(period), 2,
            fallbacks));
    }
}

// Tiles by id (block i sorts tile i, no claim on the pass's counter): the look-back's fallback
// covers blocks that start late; every key class, n on the host and on the GPU.
TEST(CudaPath, ClaimByIdSorts) {
  SKIP_WITHOUT_CUDA();
  for (KeyType key : {KeyType::u32, KeyType::u64})
    for (uint32_t value_bytes : {0u, 4u}) {
      OnesweepOptions options{.claim_by_id = 1};
      options.kernels = KernelPath::cuda;
      if (key == KeyType::u32 && value_bytes == 4) {
        auto algorithm =
            make_onesweep(context().impl(), make_sort_spec(key, 4, false, 0, 0), options);
        const uint64_t max_n = 30 * uint64_t(algorithm->tile_keys()) + 5;
        std::mt19937_64 rng(fresh_seed());
        auto bits = make_key_bits(KeyType::u32, max_n, Distribution::uniform, rng);
        const std::vector<uint32_t> keys(bits.begin(), bits.end());
        for (bool indirect : {false, true})
          EXPECT_TRUE(check_u32_pairs(*algorithm, keys, max_n - 7, indirect, false, "by id", 2));
      }
      // The whole-output check of the public face, the option through the engine's algorithm.
      auto algorithm =
          make_onesweep(context().impl(), make_sort_spec(key, value_bytes, false, 0, 0), options);
      EXPECT_EQ(algorithm->pass_kernels().rfind("cuda", 0), 0u);
    }
}

// Prefetch ahead (GPUSORT_CUDA_PREFETCH, OnesweepOptions::cuda_prefetch_tiles): a block that
// claims tile t prefetches tile t + D into L2. D of 1, a few, about the resident blocks and more
// than the tiles there are; every key class; n not a multiple of the tile, on the host and from the
// GPU (where the count's last tile is not max_n's); whole outputs. A bad value is an error.
TEST(CudaPath, PrefetchAheadSorts) {
  SKIP_WITHOUT_CUDA();
  for (const char* tiles : {"1", "3", "264", "100000"}) {
    ScopedEnv env("GPUSORT_CUDA_PREFETCH", tiles);
    for (KeyType key : {KeyType::u32, KeyType::f32, KeyType::u64, KeyType::i64})
      for (uint32_t value_bytes : {0u, 4u}) {
        const uint64_t tile = cuda_tile(key, value_bytes);
        const SortSpec spec = make_sort_spec(key, value_bytes, false, 0, 0);
        EXPECT_NE(
            make_onesweep(context().impl(), spec, OnesweepOptions{.kernels = KernelPath::cuda})
                ->pass_kernels()
                .find(std::string(" +prefetch ") + tiles),
            std::string::npos);
        for (uint64_t n : {tile + 1, 5 * tile - 3, 40 * tile + 17})
          EXPECT_TRUE(check_sort(cuda_case(
              key, value_bytes, key == KeyType::i64, n,
              key == KeyType::f32 ? Distribution::special_floats : Distribution::uniform)))
              << "prefetch " << tiles;
      }
  }
  for (int32_t tiles : {2, 7, 300}) {
    OnesweepOptions options{.cuda_prefetch_tiles = tiles};
    options.kernels = KernelPath::cuda;
    for (bool descending : {false, true}) {
      auto algorithm = make_onesweep(context().impl(),
                                     make_sort_spec(KeyType::u32, 4, descending, 0, 0), options);
      ASSERT_NE(algorithm->pass_kernels().find(" +prefetch " + std::to_string(tiles)),
                std::string::npos);
      const uint64_t tile = algorithm->tile_keys();
      const uint64_t max_n = 20 * tile + 5;
      std::mt19937_64 rng(fresh_seed());
      auto bits = make_key_bits(KeyType::u32, max_n, Distribution::uniform, rng);
      const std::vector<uint32_t> keys(bits.begin(), bits.end());
      for (uint64_t n : {uint64_t(0), uint64_t(1), tile - 1, 2 * tile + 1, 9 * tile + 3, max_n})
        for (bool indirect : {false, true})
          EXPECT_TRUE(check_u32_pairs(*algorithm, keys, n, indirect, descending,
                                      "prefetch " + std::to_string(tiles) + " count " +
                                          std::to_string(n) + (indirect ? " on the GPU" : ""),
                                      2));
    }
  }
  for (const char* bad : {"-1", "x", "1e3", "1234567890"}) {
    ScopedEnv env("GPUSORT_CUDA_PREFETCH", bad);
    try {
      make_onesweep(context().impl(), make_sort_spec(KeyType::u32, 0, false, 0, 0),
                    OnesweepOptions{.kernels = KernelPath::cuda});
      ADD_FAILURE() << "no error for GPUSORT_CUDA_PREFETCH='" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("GPUSORT_CUDA_PREFETCH='") + bad +
                                           "' is not a number of tiles (0 to 999999999)");
    }
  }
}

// The histogram and plan as CUDA kernels (GPUSORT_CUDA_HISTOGRAM=1: one shared histogram per
// block, 2: two): every key type with and without values, sizes of a few keys (fewer than a
// 16-byte vector, the rest counted apart), around the tile and of many blocks; skipped passes, bit
// ranges, GPU-side counts; whole outputs.
TEST(CudaPath, HistogramKernelsSort) {
  SKIP_WITHOUT_CUDA();
  for (const char* variant : {"1", "2"}) {
    ScopedEnv env("GPUSORT_CUDA_HISTOGRAM", variant);
    for (KeyType key : all_keys)
      for (uint32_t value_bytes : {0u, 4u}) {
        const uint64_t tile = cuda_tile(key, value_bytes);
        EXPECT_NE(make_onesweep(context().impl(), make_sort_spec(key, value_bytes, false, 0, 0),
                                OnesweepOptions{.kernels = KernelPath::cuda})
                      ->pass_kernels()
                      .find(std::string(variant) == "1" ? "+histogram" : "+histogram c2"),
                  std::string::npos);
        for (uint64_t n :
             {uint64_t(1), uint64_t(2), uint64_t(3), uint64_t(5), tile + 1, uint64_t(100'003)})
          for (Distribution d :
               {Distribution::uniform, Distribution::few_unique,
                key == KeyType::f32 || key == KeyType::f64 ? Distribution::special_floats
                                                           : Distribution::low_entropy})
            EXPECT_TRUE(check_sort(cuda_case(key, value_bytes, n % 2 == 0, n, d)))
                << "histogram " << variant;
        EXPECT_TRUE(
            check_sort(cuda_case(key, value_bytes, false, 70'001, Distribution::all_equal)));
        EXPECT_TRUE(check_sort(cuda_case(key, value_bytes, true, 1'000'003)))
            << "histogram " << variant;
      }
    for (KeyType key : {KeyType::u32, KeyType::u64}) {
      SortCase c = cuda_case(key, 4, false, 300'007);
      c.begin_bit = key == KeyType::u32 ? 5 : 13;
      c.end_bit = key == KeyType::u32 ? 29 : 51;
      EXPECT_TRUE(check_sort(c)) << "histogram " << variant;
    }
    auto algorithm = make_onesweep(context().impl(), make_sort_spec(KeyType::u32, 4, false, 0, 0),
                                   OnesweepOptions{.kernels = KernelPath::cuda});
    const uint64_t tile = algorithm->tile_keys(), max_n = 6 * tile + 11;
    std::mt19937_64 rng(fresh_seed());
    auto bits = make_key_bits(KeyType::u32, max_n, Distribution::uniform, rng);
    const std::vector<uint32_t> keys(bits.begin(), bits.end());
    for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(7), tile + 3, max_n})
      EXPECT_TRUE(
          check_u32_pairs(*algorithm, keys, n, true, false,
                          std::string("histogram ") + variant + " count " + std::to_string(n), 2));
  }
  ScopedEnv env("GPUSORT_CUDA_HISTOGRAM", "3");
  try {
    make_onesweep(context().impl(), make_sort_spec(KeyType::u32, 0, false, 0, 0),
                  OnesweepOptions{.kernels = KernelPath::cuda});
    ADD_FAILURE() << "no error for GPUSORT_CUDA_HISTOGRAM=3";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "GPUSORT_CUDA_HISTOGRAM='3' is not 0, 1 or 2");
  }
}

// The CUDA kernels are loaded by the first sort that runs them, not before: not by the Context's
// creation, nor by sorts that take the SPIR-V path (a small array, GPUSORT_KERNELS=spirv).
TEST(CudaPath, ModuleLoadedByTheFirstSortThatRunsIt) {
  SKIP_WITHOUT_CUDA();
  ScopedEnv automatic("GPUSORT_KERNELS", nullptr);
  Context fresh =
      Context::create(ContextOptions{.device = std::to_string(context().device_info().index)});
  EXPECT_EQ(fresh.impl().nvx.module, VK_NULL_HANDLE);
  std::mt19937_64 rng(fresh_seed());
  auto sorts = [&](uint64_t n) {
    const auto bits = make_key_bits(KeyType::u32, n, Distribution::uniform, rng);
    std::vector<uint32_t> keys(bits.begin(), bits.end()), reference = keys;
    std::sort(reference.begin(), reference.end());
    sort(fresh, std::span(keys));
    return keys == reference;
  };
  EXPECT_TRUE(sorts(1000));
  EXPECT_EQ(fresh.impl().nvx.module, VK_NULL_HANDLE);
  {
    ScopedEnv spirv("GPUSORT_KERNELS", "spirv");
    EXPECT_TRUE(sorts(uint64_t(1) << 21));
    EXPECT_EQ(fresh.impl().nvx.module, VK_NULL_HANDLE);
  }
  EXPECT_TRUE(sorts(uint64_t(1) << 21));
  EXPECT_NE(fresh.impl().nvx.module, VK_NULL_HANDLE);
  EXPECT_EQ(fresh.load_cuda_kernels().rfind("cubin sm_", 0), 0u);
}

// The module as PTX (JIT) sorts too: a Context of its own with GPUSORT_CUDA_MODULE=ptx.
TEST(CudaPath, PtxModuleSorts) {
  SKIP_WITHOUT_CUDA();
  ScopedEnv only_ptx("GPUSORT_CUDA_MODULE", "ptx");
  Context ptx_context =
      Context::create(ContextOptions{.device = std::to_string(context().device_info().index)});
  ASSERT_TRUE(ptx_context.device_info().cuda_kernels) << ptx_context.device_info().cuda_why;
  const std::string module = ptx_context.load_cuda_kernels();
  EXPECT_EQ(module.rfind("PTX", 0), 0u) << module;
  std::mt19937_64 rng(fresh_seed());
  for (KeyType key : {KeyType::u32, KeyType::u64}) {
    auto bits = make_key_bits(key, 500'000, Distribution::uniform, rng);
    std::vector<uint32_t> values(bits.size());
    for (uint32_t i = 0; i < values.size(); ++i) values[i] = i;
    std::vector<uint64_t> reference = bits;
    std::stable_sort(reference.begin(), reference.end());
    SortOptions options;
    options.algorithm = Algorithm::onesweep;
    options.kernels = KernelPath::cuda;
    if (key == KeyType::u32) {
      std::vector<uint32_t> keys(bits.begin(), bits.end());
      sort_by_key(ptx_context, std::span(keys), std::span(values), options);
      for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(keys[i], reference[i]) << i;
    } else {
      std::vector<uint64_t> keys = bits;
      sort_by_key(ptx_context, std::span(keys), std::span(values), options);
      for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(keys[i], reference[i]) << i;
    }
  }
}

// ---- Ordering: NVX launches against Vulkan dispatches, transfers and the caller's work ----

bool dropped(const char* name) {
  const char* env = std::getenv("GPUSORT_TEST_DROP_BARRIER");
  return env && std::strcmp(env, name) == 0;
}

void transfer_to_compute(VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                       1, &b, 0, nullptr, 0, nullptr);
}
void compute_to_transfer(VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                       1, &b, 0, nullptr, 0, nullptr);
}

// n u32 keys (values: their positions) produced on the GPU right before the sort by `produce`
// (a transfer or a compute dispatch of the caller's), sorted through the CUDA pass with `options`
// (its steps' barriers), and read right after by `consume` (the caller's compute dispatch or
// transfer) into `out`; the whole output checked. Large, so that a missing barrier shows.
::testing::AssertionResult check_ordering(bool produce_by_transfer, bool consume_by_transfer,
                                          uint32_t end_bit, const OnesweepOptions& options) {
  auto& impl = context().impl();
  const uint64_t n = uint64_t(1) << 24;
  std::mt19937_64 rng(fresh_seed());
  std::vector<uint32_t> source(n);
  for (auto& k : source) k = uint32_t(rng()) & uint32_t((uint64_t(1) << end_bit) - 1);
  auto algorithm = make_onesweep(impl, make_sort_spec(KeyType::u32, 0, false, 0, end_bit), options);
  if (algorithm->pass_kernels().rfind("cuda", 0) != 0)
    return ::testing::AssertionFailure() << "not the CUDA pass: " << algorithm->pass_kernels();
  DeviceBuffer pristine(impl, n * 4, MemoryKind::device_local);
  DeviceBuffer keys(impl, n * 4, MemoryKind::device_local);
  DeviceBuffer out(impl, n * 4, MemoryKind::device_local);
  DeviceBuffer scratch(impl, algorithm->scratch_bytes(n), MemoryKind::device_local);
  upload(impl, pristine, source.data(), n * 4);
  const uint32_t groups = 4096;
  impl.submit([&](VkCommandBuffer cmd) {
    Recorder rec(impl, cmd);
    Recorder::full_barrier(cmd);
    // The caller's work that writes the keys right before the sort.
    if (produce_by_transfer) {
      VkBufferCopy region{0, 0, n * 4};
      vkCmdCopyBuffer(cmd, pristine.buffer(), keys.buffer(), 1, &region);
      if (!dropped("caller_before")) transfer_to_compute(cmd);
    } else {
      // One workgroup: a long-running writer, so that work after it, unordered, would overlap it.
      rec.dispatch(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}), 1,
                   CopyElementsPush{pristine.address(), keys.address(), 0, uint32_t(n), 1});
      if (!dropped("caller_before")) rec.compute_barrier();
    }
    algorithm->record(rec,
                      SortTargets{keys.address(), 0, scratch.address(), scratch.buffer(), 0, 0, n});
    // The caller's work that reads the result right after: the sort ends with a compute barrier
    // (its contract), which covers a compute dispatch (caller_after: the test's options leave out
    // that barrier and the one after the last pass); a transfer needs the caller's own.
    if (consume_by_transfer) {
      if (!dropped("caller_after")) compute_to_transfer(cmd);
      VkBufferCopy region{0, 0, n * 4};
      vkCmdCopyBuffer(cmd, keys.buffer(), out.buffer(), 1, &region);
    } else {
      rec.dispatch(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}), groups,
                   CopyElementsPush{keys.address(), out.address(), 0, uint32_t(n), groups});
    }
    Recorder::full_barrier(cmd);
  });
  std::vector<uint32_t> got(n);
  download(impl, out, got.data(), n * 4);
  std::vector<uint32_t> expected = source;
  std::sort(expected.begin(), expected.end());
  for (uint64_t i = 0; i < n; ++i)
    if (got[i] != expected[i])
      return ::testing::AssertionFailure()
             << "key " << i << " is " << got[i] << ", expected " << expected[i];
  return ::testing::AssertionSuccess();
}

OnesweepOptions cuda_options_dropping(uint32_t barriers) {
  OnesweepOptions options;
  options.kernels = KernelPath::cuda;
  options.drop_barriers = barriers;
  return options;
}

// The caller's transfer / dispatch writes the keys, the caller's dispatch / transfer reads the
// result: both ways round (GPUSORT_TEST_DROP_BARRIER=caller_before or caller_after drops the
// caller's barrier). Without caller_after's barriers the test fails on the H100. Without
// caller_before's it still passed there, and cannot be made to fail with a compute writer: the
// sort's first step (the clear) does not touch the keys, and the compute barrier after it already
// waits for every earlier dispatch, the caller's writer too; a transfer writer is formally not
// covered by that barrier, but the H100 did not start the sort's reads before the copy ended.
TEST(CudaPathOrdering, CallersWorkBeforeAndAfter) {
  SKIP_WITHOUT_CUDA();
  // caller_after with a dispatch reading the result: without the sort's closing barrier and the
  // one after its last pass (32-bit keys: four passes), that dispatch may overlap the last NVX
  // pass.
  const uint32_t closing = dropped("caller_after") ? (1u << 4) | (1u << 9) : 0u;
  for (bool produce_by_transfer : {true, false})
    for (bool consume_by_transfer : {false, true})
      EXPECT_TRUE(check_ordering(produce_by_transfer, consume_by_transfer, 32,
                                 cuda_options_dropping(consume_by_transfer ? 0u : closing)))
          << "produced by " << (produce_by_transfer ? "transfer" : "dispatch") << ", consumed by "
          << (consume_by_transfer ? "transfer" : "dispatch");
}

// The sort's own steps: the SPIR-V plan before the first NVX pass (plan), NVX pass after NVX pass
// (pass), and the last NVX pass before the SPIR-V copy-back (last_pass: 24-bit keys, three
// passes, so the copy-back runs).
TEST(CudaPathOrdering, StepsOfTheSort) {
  SKIP_WITHOUT_CUDA();
  const uint32_t plan = dropped("plan") ? 1u : 0u, pass = dropped("pass") ? 2u : 0u,
                 last = dropped("last_pass") ? 8u : 0u;
  EXPECT_TRUE(check_ordering(true, false, 32, cuda_options_dropping(plan))) << "plan";
  EXPECT_TRUE(check_ordering(true, false, 32, cuda_options_dropping(pass))) << "pass";
  EXPECT_TRUE(check_ordering(true, false, 24, cuda_options_dropping(last))) << "last pass";
}

}  // namespace
}  // namespace gpusort::test
