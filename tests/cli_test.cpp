// The gpusort CLI driven as a subprocess (the binary's path comes from CMake as GPUSORT_CLI_PATH),
// on lavapipe with the validation layer on (GPUSORT_DEVICE=llvmpipe unless set,
// GPUSORT_VALIDATION=1; any "validation" on its stderr fails the test). Round trips compare whole
// output files with a std::stable_sort of the input; every refused input must leave the
// pre-existing output byte for byte as it was and no temporary file behind.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "test_support.hpp"

extern char** environ;

namespace gpusort::test {
namespace {

namespace fs = std::filesystem;

const std::string sentinel = "sentinel: gpusort must not touch this file\n";

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// Little-endian elements of `bytes_per_element` bytes from their bit patterns.
std::string element_bytes(const std::vector<uint64_t>& bits, uint32_t bytes_per_element) {
  std::string s(bits.size() * bytes_per_element, '\0');
  for (size_t i = 0; i < bits.size(); ++i)
    std::memcpy(&s[i * bytes_per_element], &bits[i], bytes_per_element);
  return s;
}

// A version 1.0 .npy file as numpy writes it (header padded to 64 bytes with spaces, '\n').
std::string npy_with_dict(std::string dict, const std::string& data) {
  size_t total = 10 + dict.size() + 1;
  dict.append((total + 63) / 64 * 64 - total, ' ');
  dict += '\n';
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += char(dict.size() & 0xff);
  header += char(dict.size() >> 8);
  return header + dict + data;
}

std::string npy_file(const std::string& descr, const std::string& shape, const std::string& data,
                     bool fortran_order = false) {
  return npy_with_dict("{'descr': '" + descr + "', 'fortran_order': " +
                           (fortran_order ? "True" : "False") + ", 'shape': " + shape + ", }",
                       data);
}

std::string npy_descr(KeyType t) {
  switch (t) {
    case KeyType::u32:
      return "<u4";
    case KeyType::i32:
      return "<i4";
    case KeyType::f32:
      return "<f4";
    case KeyType::u64:
      return "<u8";
    case KeyType::i64:
      return "<i8";
    case KeyType::f64:
      return "<f8";
  }
  return "?";
}

std::string npy_array(KeyType t, const std::vector<uint64_t>& bits) {
  return npy_file(npy_descr(t), "(" + std::to_string(bits.size()) + ",)",
                  element_bytes(bits, key_bytes(t)));
}

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

class CliTest : public ::testing::Test {
 public:
  fs::path root, work;

  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "gpusort-cli-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    root = pattern;
    work = root / "work";
    fs::create_directory(work);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root, ec);
  }

  fs::path at(const std::string& name) const { return work / name; }

  std::set<std::string> work_files() const {
    std::set<std::string> names;
    for (auto& e : fs::directory_iterator(work)) names.insert(e.path().filename().string());
    return names;
  }

  // Runs the CLI in `work` with its output captured beside it; fails the test if its stderr
  // mentions validation.
  CliRun run(const std::vector<std::string>& args) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      std::string entry = *e;
      if (entry.rfind("GPUSORT_VALIDATION=", 0) == 0) continue;
      env_strings.push_back(entry);
    }
    if (!std::getenv("GPUSORT_DEVICE")) env_strings.push_back("GPUSORT_DEVICE=llvmpipe");
    env_strings.push_back("GPUSORT_VALIDATION=1");
    std::vector<char*> env, argv;
    for (auto& s : env_strings) env.push_back(s.data());
    env.push_back(nullptr);
    std::vector<std::string> arg_strings{GPUSORT_CLI_PATH};
    arg_strings.insert(arg_strings.end(), args.begin(), args.end());
    for (auto& s : arg_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    const fs::path out_path = root / "stdout", err_path = root / "stderr";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    // The CLI resolves relative paths against the working directory: make that `work`.
    const fs::path previous = fs::current_path();
    fs::current_path(work);
    pid_t pid = 0;
    int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), env.data());
    fs::current_path(previous);
    posix_spawn_file_actions_destroy(&actions);
    CliRun r;
    if (spawned != 0) {
      ADD_FAILURE() << "cannot start " << GPUSORT_CLI_PATH << ": " << std::strerror(spawned);
      return r;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_bytes(out_path);
    r.err = read_bytes(err_path);
    EXPECT_EQ(r.err.find("validation"), std::string::npos) << "Vulkan validation messages:\n"
                                                           << r.err;
    return r;
  }

  // Expects the CLI to refuse: non-zero exit, one line "gpusort: error: ..." containing
  // `problem`, the sentinel outputs unchanged and no file added or removed.
  void expect_refused(const std::vector<std::string>& args, const std::string& problem,
                      const std::vector<std::string>& outputs = {"out"}) {
    for (auto& o : outputs)
      if (!fs::exists(at(o))) write_bytes(at(o), sentinel);
    std::map<std::string, Snapshot> before;
    for (auto& name : work_files())
      if (fs::is_regular_file(at(name))) before[name] = snapshot(at(name));
    CliRun r = run(args);
    EXPECT_NE(r.exit_code, 0) << "accepted: " << ::testing::PrintToString(args);
    EXPECT_EQ(r.err.rfind("gpusort: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line:\n" << r.err;
    EXPECT_NE(r.err.find(problem), std::string::npos)
        << "message does not name '" << problem << "':\n"
        << r.err;
    for (auto& name : work_files())
      if (fs::is_regular_file(at(name))) EXPECT_TRUE(before.count(name)) << "left behind: " << name;
    for (auto& [name, was] : before) {
      ASSERT_TRUE(fs::exists(at(name))) << name << " was removed";
      EXPECT_TRUE(snapshot(at(name)) == was) << name << " was changed";
    }
  }

 private:
  // Small files are compared byte for byte; the multi-gigabyte sparse inputs by size and time.
  struct Snapshot {
    uintmax_t size = 0;
    fs::file_time_type modified;
    std::string bytes;
    bool operator==(const Snapshot&) const = default;
  };
  static Snapshot snapshot(const fs::path& path) {
    constexpr uintmax_t compared_bytes = 1 << 20;
    Snapshot s{fs::file_size(path), fs::last_write_time(path), ""};
    if (s.size <= compared_bytes) s.bytes = read_bytes(path);
    return s;
  }
};

// ---- round trips ----

struct RoundTrip {
  KeyType key = KeyType::u32;
  bool npy = true;
  std::optional<KeyType> value;  // values file's element type
  bool values_npy = true;
  bool descending = false;
  uint64_t n = 0;
  Distribution distribution = Distribution::uniform;
  bool pass_type_for_npy = false;  // also give --type / --value-type for .npy files (must agree)
  uint32_t begin_bit = 0, end_bit = 0;
};

void check_round_trip(CliTest& t, const RoundTrip& c) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(
      "keys " + std::string(to_string(c.key)) + (c.npy ? " .npy" : " raw") + ", n " +
      std::to_string(c.n) + ", " + to_string(c.distribution) +
      (c.descending ? ", descending" : "") +
      (c.value ? std::string(", values ") + to_string(*c.value) + (c.values_npy ? " .npy" : " raw")
               : "") +
      ", seed " + std::to_string(seed) + " (rerun with GPUSORT_TEST_SEED=" + std::to_string(seed) +
      ")");
  for (auto& name : t.work_files()) fs::remove(t.at(name));
  std::mt19937_64 rng(seed);
  const std::vector<uint64_t> keys = make_key_bits(c.key, c.n, c.distribution, rng);
  std::vector<uint64_t> values(c.n);
  if (c.value) {
    const uint32_t width = key_bytes(*c.value) * 8;
    // Distinct values (the index in the low bits) so the permutation is checked exactly.
    for (uint64_t i = 0; i < c.n; ++i) values[i] = width == 64 ? (rng() << 32) | i : i;
  }

  // Reference: stable sort of the radix order restricted to the bit range.
  const uint32_t width = key_bytes(c.key) * 8;
  const uint32_t end = c.end_bit ? c.end_bit : width;
  const uint64_t range_mask =
      (end - c.begin_bit == 64 ? ~0ull : ((1ull << (end - c.begin_bit)) - 1)) << c.begin_bit;
  std::vector<uint64_t> order(c.n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
    return (radix_order(c.key, keys[a], c.descending) & range_mask) <
           (radix_order(c.key, keys[b], c.descending) & range_mask);
  });
  std::vector<uint64_t> sorted_keys(c.n), sorted_values(c.n);
  for (uint64_t i = 0; i < c.n; ++i) {
    sorted_keys[i] = keys[order[i]];
    sorted_values[i] = values[order[i]];
  }

  auto encode = [](KeyType t, bool npy, const std::vector<uint64_t>& bits) {
    return npy ? npy_array(t, bits) : element_bytes(bits, key_bytes(t));
  };
  const std::string in = c.npy ? "in.npy" : "in.bin", out = c.npy ? "out.npy" : "out.bin";
  write_bytes(t.at(in), encode(c.key, c.npy, keys));
  std::vector<std::string> args{"sort", in, out};
  if (!c.npy || c.pass_type_for_npy) args.insert(args.end(), {"--type", to_string(c.key)});
  if (c.value) {
    const std::string vin = c.values_npy ? "values.npy" : "values.bin";
    write_bytes(t.at(vin), encode(*c.value, c.values_npy, values));
    args.insert(args.end(), {"--values", vin, "--values-out", "values-" + out});
    if (!c.values_npy || c.pass_type_for_npy)
      args.insert(args.end(), {"--value-type", to_string(*c.value)});
  }
  if (c.descending) args.push_back("--descending");
  if (c.begin_bit) args.insert(args.end(), {"--begin-bit", std::to_string(c.begin_bit)});
  if (c.end_bit) args.insert(args.end(), {"--end-bit", std::to_string(c.end_bit)});

  CliRun r = t.run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(read_bytes(t.at(out)) == encode(c.key, c.npy, sorted_keys)) << "sorted keys differ";
  if (c.value)
    EXPECT_TRUE(read_bytes(t.at("values-" + out)) == encode(*c.value, c.values_npy, sorted_values))
        << "sorted values differ";
  // Inputs are never modified.
  EXPECT_TRUE(read_bytes(t.at(in)) == encode(c.key, c.npy, keys));
  std::set<std::string> expected{in, out};
  if (c.value) expected.insert({c.values_npy ? "values.npy" : "values.bin", "values-" + out});
  EXPECT_EQ(t.work_files(), expected) << "unexpected files (temporary files left behind?)";
}

TEST_F(CliTest, NpyKeysRoundTrip) {
  check_round_trip(*this, {.key = KeyType::u32, .n = 3001});
  check_round_trip(*this, {.key = KeyType::f64,
                           .descending = true,
                           .n = 2500,
                           .distribution = Distribution::special_floats,
                           .pass_type_for_npy = true});
}

TEST_F(CliTest, NpyKeysWithNpyValuesRoundTrip) {
  check_round_trip(*this, {.key = KeyType::f32,
                           .value = KeyType::i32,
                           .n = 2000,
                           .distribution = Distribution::special_floats});
  check_round_trip(*this, {.key = KeyType::i64,
                           .value = KeyType::u64,
                           .descending = true,
                           .n = 1777,
                           .distribution = Distribution::few_unique,
                           .pass_type_for_npy = true});
}

// The files stream through gpusort's staging memory in pieces: with 4 KiB slots, arrays of
// tens of KB take many, and the npy header's offset applies to every piece read and written.
TEST_F(CliTest, FilesStreamThroughManyStagingSlots) {
  ::setenv("GPUSORT_STAGING_BYTES", "4096", 1);
  check_round_trip(*this, {.key = KeyType::f64,
                           .value = KeyType::u32,
                           .descending = true,
                           .n = 5003,
                           .distribution = Distribution::special_floats});
  check_round_trip(*this, {.key = KeyType::u32,
                           .npy = false,
                           .value = KeyType::i64,
                           .values_npy = false,
                           .n = 4099,
                           .distribution = Distribution::few_unique});
  ::unsetenv("GPUSORT_STAGING_BYTES");
  for (auto& name : work_files()) fs::remove(at(name));
  write_bytes(at("in.bin"), element_bytes({3, 1, 2}, 4));
  ::setenv("GPUSORT_STAGING_BYTES", "1k", 1);
  CliRun r = run({"sort", "in.bin", "out.bin", "--type", "u32"});
  ::unsetenv("GPUSORT_STAGING_BYTES");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "gpusort: error: GPUSORT_STAGING_BYTES='1k': expected a byte count from 4096 "
                   "to 1073741824\n");
  EXPECT_FALSE(fs::exists(at("out.bin")));
}

TEST_F(CliTest, TimingsNameEveryStage) {
  write_bytes(at("in.bin"), element_bytes({5, 9, 1, 7}, 4));
  CliRun r = run({"sort", "in.bin", "out.bin", "--type", "u32", "--timings"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out.bin")) == element_bytes({1, 5, 7, 9}, 4));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("gpusort: timings (0.0 MB each way)\n", 0), 0u) << r.err;
  for (const char* stage : {"device", "read", "upload", "sort", "download", "write", "flush",
                            "commit", "total"})
    EXPECT_NE(r.err.find("\n  " + std::string(stage) + " "), std::string::npos)
        << stage << " missing from:\n"
        << r.err;
}

TEST_F(CliTest, RawKeysRoundTrip) {
  check_round_trip(*this, {.key = KeyType::i32,
                           .npy = false,
                           .descending = true,
                           .n = 2049,
                           .distribution = Distribution::low_entropy});
  check_round_trip(*this, {.key = KeyType::u64, .npy = false, .n = 1500});
}

TEST_F(CliTest, RawKeysWithRawValuesRoundTrip) {
  check_round_trip(*this, {.key = KeyType::u64,
                           .npy = false,
                           .value = KeyType::u32,
                           .values_npy = false,
                           .n = 1500,
                           .distribution = Distribution::low_entropy});
  check_round_trip(*this, {.key = KeyType::f32,
                           .npy = false,
                           .value = KeyType::u64,
                           .values_npy = false,
                           .descending = true,
                           .n = 1234,
                           .distribution = Distribution::few_unique});
}

TEST_F(CliTest, MixedFormatsKeepEachFilesFormat) {
  check_round_trip(
      *this,
      {.key = KeyType::u32, .npy = false, .value = KeyType::f64, .values_npy = true, .n = 999});
}

TEST_F(CliTest, EmptyAndSingleElementArrays) {
  check_round_trip(*this, {.key = KeyType::u32, .n = 0});
  check_round_trip(
      *this,
      {.key = KeyType::f32, .npy = false, .value = KeyType::u32, .values_npy = false, .n = 1});
}

TEST_F(CliTest, BitRange) {
  check_round_trip(*this, {.key = KeyType::u32,
                           .npy = false,
                           .value = KeyType::u32,
                           .values_npy = false,
                           .n = 1000,
                           .begin_bit = 4,
                           .end_bit = 12});
}

// ---- refused inputs ----

class CliRefusal : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    write_bytes(at("keys.bin"), element_bytes({5, 3, 9, 1}, 4));
    write_bytes(at("values.bin"), element_bytes({50, 30, 90, 10}, 4));
    write_bytes(at("keys.npy"), npy_array(KeyType::u32, {5, 3, 9, 1}));
  }
};

TEST_F(CliRefusal, RawSizeNotMultipleOfElement) {
  write_bytes(at("odd.bin"), std::string(10, 'x'));
  expect_refused({"sort", "odd.bin", "out", "--type", "u32"},
                 "size 10 bytes is not a multiple of the 4-byte u32");
  write_bytes(at("three.bin"), element_bytes({1, 2, 3}, 4));
  expect_refused({"sort", "three.bin", "out", "--type", "u64"},
                 "size 12 bytes is not a multiple of the 8-byte u64");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "odd.bin", "--values-out",
                  "vout", "--value-type", "u64"},
                 "values file 'odd.bin': size 10 bytes is not a multiple", {"out", "vout"});
}

TEST_F(CliRefusal, KeyValueCountMismatch) {
  write_bytes(at("three.bin"), element_bytes({1, 2, 3}, 4));
  expect_refused(
      {"sort", "keys.bin", "out", "--type", "u32", "--values", "three.bin", "--values-out", "vout",
       "--value-type", "u32"},
      "count mismatch: keys file 'keys.bin' holds 4 elements but values file 'three.bin' holds 3",
      {"out", "vout"});
}

TEST_F(CliRefusal, UnknownNames) {
  expect_refused({"sort", "keys.bin", "out", "--type", "u16"}, "unknown key type 'u16'");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "values.bin",
                  "--values-out", "vout", "--value-type", "u8"},
                 "unknown key type 'u8'", {"out", "vout"});
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--algorithm", "quicksort"},
                 "unknown algorithm 'quicksort'");
}

TEST_F(CliRefusal, MissingOrUnreadableFiles) {
  expect_refused({"sort", "missing.bin", "out", "--type", "u32"},
                 "keys file 'missing.bin': cannot open: No such file");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "missing.bin",
                  "--values-out", "vout", "--value-type", "u32"},
                 "values file 'missing.bin': cannot open", {"out", "vout"});
  fs::create_directory(at("directory"));
  expect_refused({"sort", "directory", "out", "--type", "u32"}, "not a regular file");
  expect_refused({"sort", "keys.bin", "missing-directory/out", "--type", "u32"},
                 "cannot create a temporary file in 'missing-directory'");
  EXPECT_FALSE(fs::exists(at("missing-directory")));
}

TEST_F(CliRefusal, MissingTypes) {
  expect_refused({"sort", "keys.bin", "out"},
                 "raw array (no .npy header), so --type must give its element type");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "values.bin",
                  "--values-out", "vout"},
                 "values file 'values.bin': is a raw array (no .npy header), so --value-type",
                 {"out", "vout"});
  expect_refused({"sort", "keys.npy", "out", "--type", "i32"},
                 "holds dtype '<u4' (u32) but --type says i32");
}

TEST_F(CliRefusal, ValuesOptionsIncomplete) {
  expect_refused(
      {"sort", "keys.bin", "out", "--type", "u32", "--values", "values.bin", "--value-type", "u32"},
      "--values needs --values-out");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values-out", "vout"},
                 "--values-out needs --values", {"out", "vout"});
}

TEST_F(CliRefusal, MalformedNpy) {
  const std::string data = element_bytes({1, 2, 3, 4}, 4);
  std::string full = npy_file("<u4", "(4,)", data);
  write_bytes(at("cut-header.npy"), full.substr(0, 30));
  expect_refused({"sort", "cut-header.npy", "out"}, "malformed .npy file (ends inside the header)");
  write_bytes(at("bad-dict.npy"), npy_file("<u4", "(4,", data));
  expect_refused({"sort", "bad-dict.npy", "out"}, "malformed .npy header");
  std::string no_newline = full;
  no_newline[full.size() - data.size() - 1] = ' ';
  write_bytes(at("no-newline.npy"), no_newline);
  expect_refused({"sort", "no-newline.npy", "out"},
                 "malformed .npy header (does not end with a newline)");
  std::string version = full;
  version[6] = '\x09';
  write_bytes(at("version.npy"), version);
  expect_refused({"sort", "version.npy", "out"}, "unsupported .npy format version 9.0");
  write_bytes(at("truncated.npy"), npy_file("<u4", "(5,)", data));
  expect_refused(
      {"sort", "truncated.npy", "out"},
      "truncated: the header declares 5 elements (20 bytes) but only 16 bytes follow it");
  write_bytes(at("trailing.npy"), npy_file("<u4", "(3,)", data));
  expect_refused({"sort", "trailing.npy", "out"},
                 "4 bytes after the 3 elements the header declares");
}

TEST_F(CliRefusal, UnsupportedNpyArrays) {
  const std::string data = element_bytes({1, 2, 3, 4}, 4);
  write_bytes(at("big-endian.npy"), npy_file(">u4", "(4,)", data));
  expect_refused({"sort", "big-endian.npy", "out"}, "big-endian dtype '>u4' is not supported");
  write_bytes(at("fortran.npy"), npy_file("<u4", "(2, 2)", data, true));
  expect_refused({"sort", "fortran.npy", "out"}, "Fortran-order arrays are not supported");
  write_bytes(at("matrix.npy"), npy_file("<u4", "(2, 2)", data));
  expect_refused({"sort", "matrix.npy", "out"}, "has shape (2, 2); only 1-D arrays are supported");
  write_bytes(at("scalar.npy"), npy_file("<u4", "()", data.substr(0, 4)));
  expect_refused({"sort", "scalar.npy", "out"}, "has shape (); only 1-D arrays are supported");
  write_bytes(at("object.npy"), npy_file("|O", "(4,)", data));
  expect_refused({"sort", "object.npy", "out"}, "object arrays (dtype '|O') are not supported");
  write_bytes(at("u16.npy"), npy_file("<u2", "(8,)", data));
  expect_refused({"sort", "u16.npy", "out"}, "unsupported dtype '<u2'");
  write_bytes(
      at("record.npy"),
      npy_with_dict("{'descr': [('a', '<u4')], 'fortran_order': False, 'shape': (4,), }", data));
  expect_refused({"sort", "record.npy", "out"}, "structured (record) dtypes are not supported");
}

TEST_F(CliRefusal, MoreThanMaxElements) {
  const std::string count = std::to_string(max_elements + 1);
  write_bytes(at("huge.npy"), npy_file("<u4", "(" + count + ",)", ""));
  expect_refused({"sort", "huge.npy", "out"},
                 "holds " + count + " elements, more than gpusort's maximum");
  // A sparse raw file: its size says 2^31 elements, but it occupies no disk space.
  write_bytes(at("huge.bin"), "");
  fs::resize_file(at("huge.bin"), (max_elements + 1) * 4);
  expect_refused({"sort", "huge.bin", "out", "--type", "u32"},
                 "holds " + count + " elements, more than");
}

TEST_F(CliRefusal, TooLargeForTheDevice) {
  // One element more than the test device's largest allocation holds, as a sparse file; refused
  // before the data is read.
  const uint64_t n = context().device_info().max_allocation_bytes / 8 + 1;
  ASSERT_LE(n, max_elements) << "the test device allows allocations beyond max_elements";
  write_bytes(at("large.bin"), "");
  fs::resize_file(at("large.bin"), n * 8);
  expect_refused({"sort", "large.bin", "out", "--type", "u64"},
                 std::to_string(n) + " elements are too large for the device");
}

TEST_F(CliRefusal, BadBitRange) {
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--end-bit", "40"},
                 "bit range [0, 40) is empty or beyond");
}

TEST_F(CliRefusal, OutputEqualToInputNeedsInPlace) {
  expect_refused({"sort", "keys.bin", "keys.bin", "--type", "u32"},
                 "OUT 'keys.bin' is the same file as IN 'keys.bin' (pass --in-place", {});
  expect_refused({"sort", "keys.bin", "./sub/../keys.bin", "--type", "u32"},
                 "is the same file as IN", {});
  fs::create_hard_link(at("keys.bin"), at("hard-link.bin"));
  expect_refused({"sort", "keys.bin", "hard-link.bin", "--type", "u32"}, "is the same file as IN",
                 {});
  fs::create_symlink("keys.bin", at("symlink.bin"));
  expect_refused({"sort", "symlink.bin", "keys.bin", "--type", "u32"}, "is the same file as IN",
                 {});
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "values.bin",
                  "--values-out", "values.bin", "--value-type", "u32"},
                 "VOUT 'values.bin' is the same file as VIN 'values.bin' (pass --in-place",
                 {"out"});
  // Crossed pairs and OUT == VOUT are refused even with --in-place.
  expect_refused({"sort", "keys.bin", "values.bin", "--type", "u32", "--values", "values.bin",
                  "--values-out", "vout", "--value-type", "u32", "--in-place"},
                 "OUT 'values.bin' is the same file as VIN", {"vout"});
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "values.bin",
                  "--values-out", "out", "--value-type", "u32", "--in-place"},
                 "OUT and VOUT are the same file", {"out"});

  CliRun r =
      run({"sort", "symlink.bin", "symlink.bin", "--type", "u32", "--values", "values.bin",
           "--values-out", "values.bin", "--value-type", "u32", "--in-place", "--descending"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(at("symlink.bin"))) << "the link was replaced instead of its target";
  EXPECT_TRUE(read_bytes(at("keys.bin")) == element_bytes({9, 5, 3, 1}, 4));
  EXPECT_TRUE(read_bytes(at("values.bin")) == element_bytes({90, 50, 30, 10}, 4));
  r = run({"sort", "keys.npy", "keys.npy", "--in-place"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("keys.npy")) == npy_array(KeyType::u32, {1, 3, 5, 9}));
  EXPECT_EQ(work_files(), (std::set<std::string>{"hard-link.bin", "keys.bin", "keys.npy", "out",
                                                 "symlink.bin", "values.bin", "vout"}));
}

TEST_F(CliRefusal, ExistingOutputIsReplacedWhole) {
  write_bytes(at("out"), sentinel + sentinel + sentinel);
  CliRun r = run({"sort", "keys.bin", "out", "--type", "u32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out")) == element_bytes({1, 3, 5, 9}, 4));
}

TEST_F(CliTest, DemoVerifiesAndReportsThroughput) {
  CliRun r = run({"demo", "--n", "5000", "--type", "f32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The device the suite runs on (lavapipe unless GPUSORT_DEVICE names another).
  EXPECT_NE(r.out.find("device: " + context().device_info().name), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU sort time:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("end-to-end incl. transfers:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of which (median run): upload "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GKeys/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verified: all 6 results equal std::sort on all 5000 keys"),
            std::string::npos)
      << r.out;
  r = run({"demo", "--n", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind("gpusort: error: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace gpusort::test
