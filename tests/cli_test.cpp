// The gpusort CLI driven as a subprocess (the binary's path comes from CMake as GPUSORT_CLI_PATH),
// on lavapipe with the validation layer on (GPUSORT_DEVICE=llvmpipe unless set,
// GPUSORT_VALIDATION=1; any "validation" on its stderr fails the test). Round trips compare whole
// output files with a std::stable_sort of the input; every refused input must leave the
// pre-existing output byte for byte as it was and no temporary file behind.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "host/host_path.hpp"
#include "test_support.hpp"
#include "tuning/tuning.hpp"
#include "vulkan/context_impl.hpp"

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
  int exit_code = -1;  // 128 + the signal when the CLI was killed by one
  std::string out, err;
};

struct RunOptions {
  std::optional<std::string> standard_input;  // fed through a pipe; else /dev/null
  std::vector<std::string> environment;       // NAME=value entries added or replacing
  std::chrono::seconds timeout{300};          // then the CLI is killed and the test fails
};

// Feeds `bytes` to a pipe's write end from a thread, then closes it.
class PipeFeeder {
 public:
  PipeFeeder(int fd, std::string bytes)
      : thread_([fd, bytes = std::move(bytes)] {
          // A CLI that refuses before reading leaves no reader: the write must fail with EPIPE,
          // not raise SIGPIPE in the test process (thread-directed; discarded with the thread).
          sigset_t pipe_signal;
          sigemptyset(&pipe_signal);
          sigaddset(&pipe_signal, SIGPIPE);
          pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
          size_t done = 0;
          while (done < bytes.size()) {
            ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (put < 0 && errno == EINTR) continue;
            if (put <= 0) break;  // the reader went away
            done += size_t(put);
          }
          ::close(fd);
        }) {}
  ~PipeFeeder() { thread_.join(); }

 private:
  std::thread thread_;
};

// Reads a FIFO from a thread until its writer closes it (or until stop()), without ever blocking
// on the FIFO: opened non-blocking, so a CLI that never opens it cannot hang the test.
class FifoReader {
 public:
  explicit FifoReader(const fs::path& fifo) {
    fd_ = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    thread_ = std::thread([this] {
      char buffer[4096];
      while (fd_ >= 0) {
        pollfd p{fd_, POLLIN, 0};
        ::poll(&p, 1, 50);
        ssize_t got = ::read(fd_, buffer, sizeof buffer);
        if (got > 0) {
          bytes_.append(buffer, size_t(got));
          continue;
        }
        if ((got == 0 && (p.revents & POLLHUP)) || stop_) break;
      }
    });
  }
  // Stops once the FIFO holds no more data; returns what was read.
  std::string finish() {
    stop_ = true;
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return bytes_;
  }
  ~FifoReader() {
    if (thread_.joinable()) finish();
  }

 private:
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::string bytes_;
  std::thread thread_;
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

  // Starts the CLI in `work` (it resolves relative paths against the working directory) with
  // the given standard input and output descriptors and stderr written to `err_path`. The
  // environment selects lavapipe (unless GPUSORT_DEVICE is set) and turns validation on;
  // `environment` adds to it or replaces entries. Returns the pid, or -1 (test failed).
  pid_t spawn(const std::vector<std::string>& args, int standard_input, int standard_output,
              const fs::path& err_path, const std::vector<std::string>& environment = {}) {
    std::vector<std::string> env_strings;
    auto replaced = [&](const std::string& entry) {
      for (auto& e : environment)
        if (entry.substr(0, entry.find('=') + 1) == e.substr(0, e.find('=') + 1)) return true;
      return entry.rfind("GPUSORT_VALIDATION=", 0) == 0;
    };
    for (char** e = environ; *e; ++e)
      if (!replaced(*e)) env_strings.push_back(*e);
    auto given = [&](const std::string& prefix) {
      return std::any_of(environment.begin(), environment.end(),
                         [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
    };
    if (!std::getenv("GPUSORT_DEVICE") && !given("GPUSORT_DEVICE="))
      env_strings.push_back("GPUSORT_DEVICE=llvmpipe");
    if (!given("GPUSORT_VALIDATION=")) env_strings.push_back("GPUSORT_VALIDATION=1");
    env_strings.insert(env_strings.end(), environment.begin(), environment.end());
    std::vector<char*> env, argv;
    for (auto& s : env_strings) env.push_back(s.data());
    env.push_back(nullptr);
    std::vector<std::string> arg_strings{GPUSORT_CLI_PATH};
    arg_strings.insert(arg_strings.end(), args.begin(), args.end());
    for (auto& s : arg_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, standard_input, 0);
    posix_spawn_file_actions_adddup2(&actions, standard_output, 1);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    const fs::path previous = fs::current_path();
    fs::current_path(work);
    pid_t pid = 0;
    int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), env.data());
    fs::current_path(previous);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      ADD_FAILURE() << "cannot start " << GPUSORT_CLI_PATH << ": " << std::strerror(spawned);
      return -1;
    }
    return pid;
  }

  // Waits for `pid`; kills it (and fails the test) after `timeout`. The exit code, or 128 + the
  // signal that ended it.
  static int wait_for(pid_t pid, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (true) {
      pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (done < 0 && errno != EINTR) return -1;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "the CLI did not finish within " << timeout.count() << " s";
        ::kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Runs the CLI with its output captured beside `work`; fails the test if its stderr mentions
  // validation.
  CliRun run(const std::vector<std::string>& args, const RunOptions& options = {}) {
    const fs::path out_path = root / "stdout", err_path = root / "stderr";
    CliRun r;
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int in = -1, feed = -1;
    if (options.standard_input) {
      int ends[2];
      if (::pipe2(ends, O_CLOEXEC) == 0) in = ends[0], feed = ends[1];
    } else {
      in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    if (out < 0 || in < 0) {
      ADD_FAILURE() << "cannot set up the CLI's standard streams: " << std::strerror(errno);
      return r;
    }
    pid_t pid = spawn(args, in, out, err_path, options.environment);
    ::close(in);
    ::close(out);
    {
      std::optional<PipeFeeder> feeder;
      if (feed >= 0) feeder.emplace(feed, *options.standard_input);
      if (pid < 0) return r;
      r.exit_code = wait_for(pid, options.timeout);
    }
    r.out = read_bytes(out_path);
    r.err = read_bytes(err_path);
    EXPECT_EQ(r.err.find("validation"), std::string::npos) << "Vulkan validation messages:\n"
                                                           << r.err;
    return r;
  }

  // Expects the CLI to refuse: non-zero exit, one line "gpusort: error: ..." containing
  // `problem`, the sentinel outputs unchanged and no file added or removed.
  void expect_refused(const std::vector<std::string>& args, const std::string& problem,
                      const std::vector<std::string>& outputs = {"out"},
                      const RunOptions& options = {}) {
    for (auto& o : outputs)
      if (!fs::exists(at(o))) write_bytes(at(o), sentinel);
    std::map<std::string, Snapshot> before;
    for (auto& name : work_files())
      if (fs::is_regular_file(at(name))) before[name] = snapshot(at(name));
    CliRun r = run(args, options);
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
// GPUSORT_STAGING_BYTES takes the byte counts of the CLI's options (4K is 4096).
TEST_F(CliTest, FilesStreamThroughManyStagingSlots) {
  ::setenv("GPUSORT_STAGING_BYTES", "4K", 1);
  check_round_trip(*this, {.key = KeyType::f64,
                           .value = KeyType::u32,
                           .descending = true,
                           .n = 5003,
                           .distribution = Distribution::special_floats});
  ::setenv("GPUSORT_STAGING_BYTES", "4096", 1);
  check_round_trip(*this, {.key = KeyType::u32,
                           .npy = false,
                           .value = KeyType::i64,
                           .values_npy = false,
                           .n = 4099,
                           .distribution = Distribution::few_unique});
  ::unsetenv("GPUSORT_STAGING_BYTES");
  for (auto& name : work_files()) fs::remove(at(name));
  write_bytes(at("in.bin"), element_bytes({3, 1, 2}, 4));
  // Set but empty: as if unset.
  CliRun r = run({"sort", "in.bin", "out.bin", "--type", "u32"},
                 {.environment = {"GPUSORT_STAGING_BYTES="}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out.bin")) == element_bytes({1, 2, 3}, 4));
  fs::remove(at("out.bin"));
  for (const char* bad : {"1k", "2G", "4096x", "-4096", "0x1000", " 4K"}) {
    r = run({"sort", "in.bin", "out.bin", "--type", "u32"},
            {.environment = {std::string("GPUSORT_STAGING_BYTES=") + bad}});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.err, "gpusort: error: GPUSORT_STAGING_BYTES='" + std::string(bad) +
                         "': expected a byte count from 4096 (4K) to 1073741824 (1G), such as "
                         "65536, 64K or 32M (K, M, G: powers of 1024)\n");
    EXPECT_FALSE(fs::exists(at("out.bin")));
  }
}

TEST_F(CliTest, TimingsNameEveryStage) {
  write_bytes(at("in.bin"), element_bytes({5, 9, 1, 7}, 4));
  CliRun r = run({"sort", "in.bin", "out.bin", "--type", "u32", "--timings"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out.bin")) == element_bytes({1, 5, 7, 9}, 4));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("gpusort: timings (0.0 MB each way)\n", 0), 0u) << r.err;
  for (const char* stage :
       {"device", "read", "upload", "sort", "download", "write", "flush", "commit", "total"})
    EXPECT_NE(r.err.find("\n  " + std::string(stage) + " "), std::string::npos)
        << stage << " missing from:\n"
        << r.err;
}

// `gpusort devices` names the tuning family of each device it lists (src/tuning), whatever the
// machine has: every device one known family (src/tuning's names, the H200's nvidia_h200 among
// them); lavapipe's, where it is present, is cpu.
TEST_F(CliTest, DevicesNameTheirTuningFamily) {
  CliRun r = run({"devices"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> known;
  for (uint32_t f = 0; f < device_family_count; ++f) known.push_back(to_string(DeviceFamily(f)));
  EXPECT_EQ(known.size(), 8u);
  EXPECT_NE(std::find(known.begin(), known.end(), "nvidia_h200"), known.end());
  std::vector<std::string> families;
  size_t devices = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
      ++devices;
      continue;
    }
    const std::string tag = "   tuning family: ";
    if (line.rfind(tag, 0) == 0) {
      families.push_back(line.substr(tag.size()));
      EXPECT_NE(std::find(known.begin(), known.end(), families.back()), known.end()) << r.out;
    }
  }
  ASSERT_GT(devices, 0u) << r.out;
  EXPECT_EQ(families.size(), devices) << r.out;
  // lavapipe (when installed: always in CI) is a CPU driver.
  const size_t lavapipe = r.out.find("llvmpipe");
  if (lavapipe != std::string::npos) {
    const size_t family = r.out.find("tuning family: ", lavapipe);
    ASSERT_NE(family, std::string::npos) << r.out;
    EXPECT_EQ(r.out.substr(family, r.out.find('\n', family) - family), "tuning family: cpu")
        << r.out;
  }
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
  std::string version = full;
  version[6] = '\x09';
  write_bytes(at("version.npy"), version);
  expect_refused({"sort", "version.npy", "out"}, "unsupported .npy format version 9.0");
  version[6] = '\x01';
  version[7] = '\x05';
  write_bytes(at("version.npy"), version);
  expect_refused({"sort", "version.npy", "out"},
                 "unsupported .npy format version 1.5 (NumPy writes 1.0, 2.0 and 3.0)");
  write_bytes(at("not-a-tuple.npy"), npy_file("<u4", "(4)", data));
  expect_refused({"sort", "not-a-tuple.npy", "out"},
                 "malformed .npy header ('shape' is (4), an integer in parentheses rather than a "
                 "tuple such as (4,))");
  // What Python's literal_eval refuses, or NumPy's checks of the dict after it.
  const std::vector<std::pair<std::string, std::string>> refused_shapes{
      {"(04,)", "(the integer 04 has a leading zero, which Python refuses)"},
      {"(1__0,)", "(an invalid number near '_')"},
      {"(4_,)", "(an invalid number near '_')"},
      {"(-4,)", "(the shape entry -4 is negative)"},
      {"(--4,)", "(a sign applies only to a number, once)"},
      {"(True,)", "(the shape entry True is not an integer)"},
      {"(4.0,)", "(the shape entry 4.0 is not an integer)"},
      {"[4]", "('shape' is [4], not a tuple of integers)"},
      {"(4,,)", "(expected a value, found ',')"}};
  for (const auto& [shape, problem] : refused_shapes) {
    write_bytes(at("shape.npy"), npy_file("<u4", shape, data));
    expect_refused({"sort", "shape.npy", "out"}, "malformed .npy header " + problem);
  }
  const std::vector<std::pair<std::string, std::string>> refused_dicts{
      {"{'descr': '<u4', 'fortran_order': 0, 'shape': (4,)}",
       "('fortran_order' is 0, neither True nor False)"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (4,), 'extra': 1}",
       "(unexpected key 'extra')"},
      {"{'descr': '<u4', 'shape': (4,)}",
       "(the header lacks one of 'descr', 'fortran_order', 'shape')"},
      {"{'descr': b'<u4', 'fortran_order': False, 'shape': (4,)}",
       "('descr' is b'<u4', not a dtype string)"},
      {"{'descr': f'<u4', 'fortran_order': False, 'shape': (4,)}", "(f-strings are not literals)"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (4,)} 5",
       "(unexpected '5' after the closing '}')"},
      {"{'descr', 'fortran_order', 'shape'}", "(it is not a dict)"}};
  for (const auto& [dict, problem] : refused_dicts) {
    write_bytes(at("dict.npy"), npy_with_dict(dict, data));
    expect_refused({"sort", "dict.npy", "out"}, "malformed .npy header " + problem);
  }
  write_bytes(at("truncated.npy"), npy_file("<u4", "(5,)", data));
  expect_refused(
      {"sort", "truncated.npy", "out"},
      "truncated: the header declares 5 elements (20 bytes) but only 16 bytes follow it");
  write_bytes(at("trailing.npy"), npy_file("<u4", "(3,)", data));
  expect_refused({"sort", "trailing.npy", "out"},
                 "malformed .npy file (4 bytes after the 3 elements the header declares; np.load "
                 "would ignore them, gpusort refuses rather than drop data)");
}

TEST_F(CliRefusal, UnsupportedNpyArrays) {
  const std::string data = element_bytes({1, 2, 3, 4}, 4);
  write_bytes(at("big-endian.npy"), npy_file(">u4", "(4,)", data));
  expect_refused({"sort", "big-endian.npy", "out"}, "big-endian dtype '>u4' is not supported");
  write_bytes(at("fortran.npy"), npy_file("<u4", "(2, 2)", data, true));
  expect_refused({"sort", "fortran.npy", "out"},
                 "has shape (2, 2); only 1-D arrays are supported (and it is in Fortran order)");
  write_bytes(at("matrix.npy"), npy_file("<u4", "(2, 2)", data));
  expect_refused({"sort", "matrix.npy", "out"}, "has shape (2, 2); only 1-D arrays are supported");
  write_bytes(at("scalar.npy"), npy_file("<u4", "()", data.substr(0, 4)));
  expect_refused({"sort", "scalar.npy", "out"}, "has shape (); only 1-D arrays are supported");
  write_bytes(at("object.npy"), npy_file("|O", "(4,)", data));
  expect_refused({"sort", "object.npy", "out"}, "object arrays (dtype '|O') are not supported");
  write_bytes(at("u16.npy"), npy_file("<u2", "(8,)", data));
  expect_refused({"sort", "u16.npy", "out"},
                 "unsupported dtype '<u2' (supported: <u4 <i4 <f4 <u8 <i8 <f8, also with '|', '=' "
                 "or no byte order)");
  write_bytes(at("network-order.npy"), npy_file("!u4", "(4,)", data));
  expect_refused({"sort", "network-order.npy", "out"}, "unsupported dtype '!u4'");
  write_bytes(
      at("subarray.npy"),
      npy_with_dict("{'descr': ('<u4', (2,)), 'fortran_order': False, 'shape': (2,)}", data));
  expect_refused({"sort", "subarray.npy", "out"}, "subarray dtype ('<u4', (2,)) is not supported");
  write_bytes(
      at("record.npy"),
      npy_with_dict("{'descr': [('a', '<u4')], 'fortran_order': False, 'shape': (4,), }", data));
  expect_refused({"sort", "record.npy", "out"}, "structured (record) dtypes are not supported");
}

// An .npy file exactly as given: magic, version major.0, header length, `header`, `data`.
std::string npy_exact(int major, const std::string& header, const std::string& data) {
  std::string s = "\x93NUMPY";
  s += char(major);
  s += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) s += char((header.size() >> (8 * i)) & 0xff);
  return s + header + data;
}

// Headers that NumPy loads (np.load of each, NumPy 1.24) though NumPy writes none of them: the
// dict is read with Python's literal_eval (any quotes, spacing, key order, underscores in and
// prefixes of integers, parentheses, comments, joined strings, escapes; a key given twice takes
// its last value; no final newline), 'descr' as numpy.dtype reads it ('|' and '=' are native, so
// little-endian here; no byte order; character codes and names), Python 2's 10L in versions 1.0
// and 2.0, and Fortran order for a 1-D array (the same layout).
TEST_F(CliTest, NpyHeadersThatNumPyLoads) {
  const std::vector<uint64_t> keys{5, 3, 9, 1, 7, 2, 8, 0, 6, 4};
  const std::string u32 = element_bytes(keys, 4);
  const std::string sorted_u32 = npy_array(KeyType::u32, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  struct Spelling {
    int major;
    std::string header;
  };
  const std::vector<Spelling> spellings{
      {1, "{'descr': '|u4', 'fortran_order': False, 'shape': (10,), }"},
      {1, "{'descr': '=u4', 'fortran_order': False, 'shape': (10,)}\n"},
      {1, "{'descr': 'u4', 'fortran_order': False, 'shape': (10,)}"},
      {1, "{\"descr\": \"<u4\", \"fortran_order\": False, \"shape\": (1_0,)}"},
      {1, "{'shape':(10L,),'fortran_order':False,'descr':'<u4'}"},
      {2, "{'descr': '<I', 'fortran_order': False, 'shape': ( 10 , ), }   \n"},
      {3, "  {'descr': '<' 'u4',  # comment\n 'fortran_order': True, 'shape': ((10),)}\r\n"},
      {1, "{'descr': '<u8', 'fortran_order': False, 'shape': (10,), 'descr': '<u4'}"},
      {1, "{'descr': '\\x3cu4', 'fortran_order': (False), 'shape': (0xa,)}"},
      {3, "{'descr': u'uint32', 'fortran_order': False, 'shape': (+0o12,)}"},
      {1, "{'descr': r'<u4', 'fortran_order': False,\\\n 'shape': (0b_1010,)}\x0c"}};
  for (const Spelling& spelling : spellings) {
    SCOPED_TRACE("version " + std::to_string(spelling.major) + ".0 header " + spelling.header);
    write_bytes(at("in.npy"), npy_exact(spelling.major, spelling.header, u32));
    CliRun r = run({"sort", "in.npy", "out.npy"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(read_bytes(at("out.npy")) == sorted_u32);
  }
  // Other key types through their character codes and byte orders.
  const std::vector<uint64_t> signed_keys{5, uint64_t(-3), 9, uint64_t(-1)};
  write_bytes(at("in.npy"), npy_exact(1, "{'descr': '=q', 'fortran_order': False, 'shape': (4,)}",
                                      element_bytes(signed_keys, 8)));
  CliRun r = run({"sort", "in.npy", "out.npy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out.npy")) ==
              npy_array(KeyType::i64, {uint64_t(-3), uint64_t(-1), 5, 9}));
  std::vector<uint64_t> floats;
  for (double d : {2.5, -1.0, 0.0, 1e300}) floats.push_back(std::bit_cast<uint64_t>(d));
  write_bytes(at("in.npy"), npy_exact(3, "{'descr': '|f8', 'fortran_order': False, 'shape': (4,)}",
                                      element_bytes(floats, 8)));
  r = run({"sort", "in.npy", "out.npy", "--type", "f64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out.npy")) ==
              npy_array(KeyType::f64, {floats[1], floats[2], floats[0], floats[3]}));
  // A version 3.0 header does not take Python 2's long suffix (NumPy drops it for 1.0 and 2.0).
  write_bytes(at("in.npy"),
              npy_exact(3, "{'descr': '<u4', 'fortran_order': False, 'shape': (10L,)}", u32));
  r = run({"sort", "in.npy", "out.npy"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("malformed .npy header (an invalid number near 'L')"), std::string::npos)
      << r.err;
}

// Segmented sorts and argsort sort in core, at most max_elements; a plain sort takes any count
// (beyond max_elements out of core): its only refusal of this header is that the data is missing.
TEST_F(CliRefusal, MoreThanMaxElements) {
  const std::string count = std::to_string(max_elements + 1);
  write_bytes(at("huge.npy"), npy_file("<u4", "(" + count + ",)", ""));
  expect_refused({"sort", "huge.npy", "out", "--indices-out", "idx"},
                 "holds " + count + " elements, more than gpusort's maximum");
  expect_refused({"sort", "huge.npy", "out"}, "truncated: the header declares " + count);
  const std::string beyond = std::to_string((uint64_t(1) << 56) + 1);  // past what 64 bits address
  write_bytes(at("beyond.npy"), npy_file("<u4", "(" + beyond + ",)", ""));
  expect_refused({"sort", "beyond.npy", "out"}, "holds " + beyond + " elements, more than the");
  // A sparse raw file: its size says 2^31 elements, but it occupies no disk space.
  write_bytes(at("huge.bin"), "");
  fs::resize_file(at("huge.bin"), (max_elements + 1) * 4);
  expect_refused({"sort", "huge.bin", "out", "--type", "u32", "--indices-out", "idx"},
                 "holds " + count + " elements, more than");
}

TEST_F(CliRefusal, TooLargeForTheDevice) {
  // One element more than the test device's largest allocation holds, as a sparse file; refused
  // before the data is read. (A plain sort takes it out of core: the argsort sorts in core.) On a
  // device whose largest allocation holds more than max_elements u64 keys (an H200's 140 GiB:
  // 18.8 G), the element limit comes first: then max_elements + 1 is refused by that.
  const uint64_t by_device = context().device_info().max_buffer_bytes / 8 + 1;
  const bool device_first = by_device <= max_elements;
  const uint64_t n = device_first ? by_device : max_elements + 1;
  write_bytes(at("large.bin"), "");
  fs::resize_file(at("large.bin"), n * 8);
  expect_refused({"sort", "large.bin", "out", "--type", "u64", "--indices-out", "idx"},
                 device_first
                     ? std::to_string(n) + " elements are too large for the device"
                     : "holds " + std::to_string(n) + " elements, more than gpusort's maximum of " +
                           std::to_string(max_elements));
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

// ---- special files, standard streams, links and the commit of keys with values ----

// Outputs that exist and are not regular files are written into, never replaced.
TEST_F(CliRefusal, FifoOutputIsWrittenIntoNotReplaced) {
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0644), 0) << std::strerror(errno);
  FifoReader reader(at("fifo"));
  CliRun r = run({"sort", "keys.bin", "fifo", "--type", "u32"});
  const std::string received = reader.finish();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(received == element_bytes({1, 3, 5, 9}, 4)) << received.size() << " bytes";
  EXPECT_TRUE(fs::is_fifo(at("fifo"))) << "the FIFO was replaced";
  EXPECT_EQ(work_files(), (std::set<std::string>{"fifo", "keys.bin", "keys.npy", "values.bin"}));

  // Values into the FIFO, keys into a file.
  FifoReader values_reader(at("fifo"));
  r = run({"sort", "keys.npy", "out.npy", "--values", "values.bin", "--values-out", "fifo",
           "--value-type", "u32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(values_reader.finish() == element_bytes({10, 30, 50, 90}, 4));
  EXPECT_TRUE(read_bytes(at("out.npy")) == npy_array(KeyType::u32, {1, 3, 5, 9}));
  EXPECT_TRUE(fs::is_fifo(at("fifo")));
}

// Never run against a CLI that replaces special files: as root it would replace /dev/null.
TEST_F(CliRefusal, DevNullOutputStaysACharacterDevice) {
  CliRun r = run({"sort", "keys.bin", "/dev/null", "--type", "u32", "--values", "values.bin",
                  "--values-out", "vout", "--value-type", "u32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_character_file("/dev/null")) << "/dev/null was replaced";
  EXPECT_TRUE(read_bytes(at("vout")) == element_bytes({10, 30, 50, 90}, 4));
  EXPECT_EQ(work_files(), (std::set<std::string>{"keys.bin", "keys.npy", "values.bin", "vout"}));
}

TEST_F(CliRefusal, SocketOutputIsRefused) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = at("socket").string();
  ASSERT_LT(path.size(), sizeof address.sun_path);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  expect_refused({"sort", "keys.bin", "socket", "--type", "u32"},
                 "output file 'socket': is a socket", {});
  EXPECT_TRUE(fs::is_socket(at("socket")));
  ::close(s);
}

// A FIFO (or /dev/stdin on a pipe) as IN or VIN is refused at once, not waited on.
TEST_F(CliRefusal, FifoInputIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0644), 0) << std::strerror(errno);
  RunOptions quick{.timeout = std::chrono::seconds(60)};
  expect_refused(
      {"sort", "fifo", "out", "--type", "u32"},
      "keys file 'fifo': is a FIFO, not a regular file (give '-' to read standard input)", {"out"},
      quick);
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "fifo", "--values-out",
                  "vout", "--value-type", "u32"},
                 "values file 'fifo': is a FIFO, not a regular file", {"out", "vout"}, quick);
  quick.standard_input = element_bytes({2, 1}, 4);
  expect_refused({"sort", "/dev/stdin", "out", "--type", "u32"},
                 "keys file '/dev/stdin': is a FIFO, not a regular file", {"out"}, quick);
}

TEST_F(CliRefusal, StandardInputAndOutput) {
  // Raw keys from a pipe.
  CliRun r = run({"sort", "-", "out", "--type", "u32"},
                 {.standard_input = element_bytes({7, 2, 9, 2, 0}, 4)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out")) == element_bytes({0, 2, 2, 7, 9}, 4));
  // .npy keys from a pipe, told apart by the magic; the output is .npy too.
  r = run({"sort", "-", "out.npy", "--descending"},
          {.standard_input = npy_array(KeyType::i64, {5, uint64_t(-3), 8})});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out.npy")) == npy_array(KeyType::i64, {8, 5, uint64_t(-3)}));
  // Values from a pipe.
  r = run({"sort", "keys.bin", "out", "--type", "u32", "--values", "-", "--values-out", "vout",
           "--value-type", "u32"},
          {.standard_input = element_bytes({50, 30, 90, 10}, 4)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out")) == element_bytes({1, 3, 5, 9}, 4));
  EXPECT_TRUE(read_bytes(at("vout")) == element_bytes({10, 30, 50, 90}, 4));
  // Keys to standard output; then values to standard output, keys to a file.
  r = run({"sort", "keys.npy", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == npy_array(KeyType::u32, {1, 3, 5, 9}));
  fs::remove(at("out"));
  r = run({"sort", "keys.bin", "out", "--type", "u32", "--values", "values.bin", "--values-out",
           "-", "--value-type", "u32", "--descending"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == element_bytes({90, 50, 30, 10}, 4));
  EXPECT_TRUE(read_bytes(at("out")) == element_bytes({9, 5, 3, 1}, 4));
  // Both from a pipe into standard output.
  r = run({"sort", "-", "-", "--type", "u64"}, {.standard_input = element_bytes({3, 1, 2}, 8)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == element_bytes({1, 2, 3}, 8));
  EXPECT_EQ(work_files(), (std::set<std::string>{"keys.bin", "keys.npy", "out", "out.npy",
                                                 "values.bin", "vout"}));

  expect_refused({"sort", "-", "out", "--type", "u32", "--values", "-", "--values-out", "vout",
                  "--value-type", "u32"},
                 "IN and VIN are both '-'", {"out", "vout"});
  expect_refused({"sort", "keys.bin", "-", "--type", "u32", "--values", "values.bin",
                  "--values-out", "-", "--value-type", "u32"},
                 "OUT and VOUT are both '-'", {});
  expect_refused({"sort", "-", "out"}, "keys file '-' (standard input): is a raw array", {"out"},
                 {.standard_input = element_bytes({1}, 4)});
}

// No bytes at all is an empty raw array when the type is given, from a file or standard input
// alike (a pipe or /dev/null); without a type nothing says what it holds, and the error says the
// input is empty.
TEST_F(CliRefusal, EmptyInputs) {
  const std::string empty_stdin =
      "keys file '-' (standard input): standard input is empty (no .npy header gives an element "
      "type: pass --type to sort an empty array)";
  for (const std::optional<std::string>& input :
       {std::optional<std::string>(""), std::optional<std::string>()}) {
    SCOPED_TRACE(input ? "an empty pipe" : "/dev/null");
    CliRun r = run({"sort", "-", "out", "--type", "u32"}, {.standard_input = input});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(fs::is_regular_file(at("out")) && read_bytes(at("out")).empty());
    fs::remove(at("out"));
    r = run({"sort", "-", "-", "--type", "f64"}, {.standard_input = input});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    expect_refused({"sort", "-", "out"}, empty_stdin, {"out"}, {.standard_input = input});
    expect_refused({"sort", "-", "out", "--descending"}, empty_stdin, {"out"},
                   {.standard_input = input});
    fs::remove(at("out"));
  }
  write_bytes(at("empty.bin"), "");
  CliRun r = run({"sort", "empty.bin", "out", "--type", "u64", "--values", "-", "--values-out",
                  "vout", "--value-type", "u32"},
                 {.standard_input = ""});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out")).empty() && read_bytes(at("vout")).empty());
  fs::remove(at("out"));
  fs::remove(at("vout"));
  expect_refused({"sort", "empty.bin", "out"},
                 "keys file 'empty.bin': the file is empty (no .npy header gives an element type: "
                 "pass --type to sort an empty array)");
  expect_refused(
      {"sort", "empty.bin", "out", "--type", "u32", "--values", "-", "--values-out", "vout"},
      "values file '-' (standard input): standard input is empty (no .npy header gives "
      "an element type: pass --value-type to sort an empty array)",
      {"out", "vout"}, {.standard_input = ""});
}

// gpusort sort in.npy - --descending | gpusort sort - out.npy
TEST_F(CliRefusal, Pipeline) {
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  pid_t first = spawn({"sort", "keys.npy", "-", "--descending"}, null_in, ends[1], root / "err1");
  pid_t second = spawn({"sort", "-", "out.npy"}, ends[0], null_out, root / "err2");
  for (int fd : {ends[0], ends[1], null_in, null_out}) ::close(fd);
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  EXPECT_EQ(wait_for(first, std::chrono::seconds(300)), 0) << read_bytes(root / "err1");
  EXPECT_EQ(wait_for(second, std::chrono::seconds(300)), 0) << read_bytes(root / "err2");
  EXPECT_TRUE(read_bytes(at("out.npy")) == npy_array(KeyType::u32, {1, 3, 5, 9}));
}

// Links to missing files are followed like links to existing ones: the target is written.
TEST_F(CliRefusal, DanglingSymlinkOutputCreatesItsTarget) {
  fs::create_directory(at("sub"));
  fs::create_symlink("sub/target.bin", at("link.bin"));
  fs::create_symlink("link.bin", at("link-to-link.bin"));
  CliRun r = run({"sort", "keys.bin", "link-to-link.bin", "--type", "u32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(at("link.bin")) && fs::is_symlink(at("link-to-link.bin")));
  EXPECT_TRUE(read_bytes(at("sub/target.bin")) == element_bytes({1, 3, 5, 9}, 4));
  EXPECT_EQ(fs::read_symlink(at("link.bin")), "sub/target.bin");

  // Two dangling links to one file are one file.
  fs::create_symlink("sub/missing.bin", at("first.bin"));
  fs::create_symlink("./sub/../sub/missing.bin", at("second.bin"));
  expect_refused({"sort", "keys.bin", "first.bin", "--type", "u32", "--values", "values.bin",
                  "--values-out", "second.bin", "--value-type", "u32"},
                 "OUT and VOUT are the same file 'first.bin'", {});
  EXPECT_FALSE(fs::exists(at("sub/missing.bin")));
}

// The temporary file's name does not grow with OUT's, so any valid name works.
TEST_F(CliRefusal, LongestFileNamesWork) {
  const std::string name = std::string(251, 'k') + ".bin";  // 255 bytes, Linux's NAME_MAX
  CliRun r = run({"sort", "keys.bin", name, "--type", "u32", "--values", "values.bin",
                  "--values-out", std::string(244, 'v'), "--value-type", "u32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at(name)) == element_bytes({1, 3, 5, 9}, 4));
  EXPECT_TRUE(read_bytes(at(std::string(244, 'v'))) == element_bytes({10, 30, 50, 90}, 4));
  EXPECT_EQ(work_files().size(), 5u);
}

// A failed second rename puts the first output back (rename_fault.c makes it fail, as EPERM in a
// sticky directory would for a user other than root).
TEST_F(CliRefusal, FailedValuesRenamePutsTheKeysBack) {
  const RunOptions failing{
      .environment = {"LD_PRELOAD=" GPUSORT_RENAME_FAULT_PATH, "GPUSORT_TEST_RENAME_FAIL=vout"}};
  const std::vector<std::string> args{"sort", "keys.bin",     "out",        "--type",
                                      "u32",  "--values",     "values.bin", "--values-out",
                                      "vout", "--value-type", "u32"};
  write_bytes(at("out"), sentinel + "old keys\n");
  expect_refused(args,
                 "values output file 'vout': cannot rename the temporary file into place: "
                 "Operation not permitted; no output was changed",
                 {"out", "vout"}, failing);
  EXPECT_TRUE(read_bytes(at("out")) == sentinel + "old keys\n");
  // A new OUT (none before) is removed again.
  fs::remove(at("out"));
  expect_refused(args, "no output was changed", {"vout"}, failing);
  EXPECT_FALSE(fs::exists(at("out")));
}

// The free space is checked before any work, for every output together on one file system (a
// nearly full disk: rename_fault.c's statvfs reports GPUSORT_TEST_FREE_BYTES), each file named with
// its size.
TEST_F(CliRefusal, NotEnoughDiskSpaceNamesEachOutput) {
  write_bytes(at("values64.bin"), element_bytes({50, 30, 90, 10}, 8));
  const std::vector<std::string> args{"sort", "keys.bin",     "out",          "--type",
                                      "u32",  "--values",     "values64.bin", "--values-out",
                                      "vout", "--value-type", "u64"};
  auto free_bytes = [](const char* bytes) {
    return RunOptions{.environment = {"LD_PRELOAD=" GPUSORT_RENAME_FAULT_PATH,
                                      std::string("GPUSORT_TEST_FREE_BYTES=") + bytes}};
  };
  expect_refused(args,
                 "not enough disk space for the output file 'out' (16 bytes) and the values output "
                 "file 'vout' (32 bytes): they need 48 bytes together, 47 are free",
                 {"out", "vout"}, free_bytes("47"));
  expect_refused({"sort", "keys.npy", "out.npy", "--indices-out", "idx.npy"},
                 "not enough disk space for the output file 'out.npy' (144 bytes) and the indices "
                 "output file 'idx.npy' (144 bytes): they need 288 bytes together, 200 are free",
                 {"out.npy", "idx.npy"}, free_bytes("200"));
  expect_refused({"sort", "keys.bin", "out", "--type", "u32"},
                 "not enough disk space for the output file 'out': it needs 16 bytes, 15 are free",
                 {"out"}, free_bytes("15"));
  for (const std::string& name : work_files()) fs::remove(at(name));
  write_bytes(at("keys.bin"), element_bytes({5, 3, 9, 1}, 4));
  write_bytes(at("values64.bin"), element_bytes({50, 30, 90, 10}, 8));
  CliRun r = run(args, free_bytes("48"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out")) == element_bytes({1, 3, 5, 9}, 4));
  EXPECT_TRUE(read_bytes(at("vout")) == element_bytes({10, 30, 50, 90}, 8));
}

// A write that fails during the sort names the file it was for and the cause: a full disk, or a
// file larger than the file system or the file-size limit takes (rename_fault.c makes writes to
// gpusort's temporary files past byte 20 fail: OUT's 16 bytes fit, VOUT's 32 do not).
TEST_F(CliRefusal, FailedWritesNameTheFileAndTheCause) {
  write_bytes(at("values64.bin"), element_bytes({50, 30, 90, 10}, 8));
  const std::vector<std::string> args{"sort", "keys.bin",     "out",          "--type",
                                      "u32",  "--values",     "values64.bin", "--values-out",
                                      "vout", "--value-type", "u64"};
  auto failing = [](const char* error) {
    return RunOptions{.environment = {"LD_PRELOAD=" GPUSORT_RENAME_FAULT_PATH,
                                      std::string("GPUSORT_TEST_WRITE_FAIL=") + error,
                                      "GPUSORT_TEST_WRITE_FAIL_BEYOND=20"}};
  };
  expect_refused(args,
                 "values output file 'vout': cannot write: No space left on device (the disk is "
                 "full; no output was changed)",
                 {"out", "vout"}, failing("ENOSPC"));
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  if (saved.rlim_cur == RLIM_INFINITY)
    expect_refused(args,
                   "values output file 'vout': cannot write: File too large (larger than the file "
                   "system's largest file; no output was changed)",
                   {"out", "vout"}, failing("EFBIG"));
  rlimit lowered = saved;
  lowered.rlim_cur = 1 << 20;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
  expect_refused(args,
                 "values output file 'vout': cannot write: File too large (more than the file-size "
                 "limit of 1048576 bytes, set by ulimit -f; no output was changed)",
                 {"out", "vout"}, failing("EFBIG"));
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
}

// A signal that arrives between the two renames takes effect after both (rename_fault.c sends
// SIGTERM just before the second): the outputs are both new, never new keys beside old values.
TEST_F(CliRefusal, SignalDuringTheCommitWaitsForItsEnd) {
  write_bytes(at("out"), sentinel);
  write_bytes(at("vout"), sentinel);
  CliRun r = run({"sort", "keys.bin", "out", "--type", "u32", "--values", "values.bin",
                  "--values-out", "vout", "--value-type", "u32"},
                 {.environment = {"LD_PRELOAD=" GPUSORT_RENAME_FAULT_PATH,
                                  "GPUSORT_TEST_RENAME_SIGNAL=vout"}});
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_TRUE(read_bytes(at("out")) == element_bytes({1, 3, 5, 9}, 4));
  EXPECT_TRUE(read_bytes(at("vout")) == element_bytes({10, 30, 50, 90}, 4));
  EXPECT_EQ(work_files(),
            (std::set<std::string>{"keys.bin", "keys.npy", "out", "values.bin", "vout"}));
}

// Temporary files of runs that were killed are removed by a later run into the same directory
// once their process is gone; those of live processes and other names stay.
TEST_F(CliRefusal, StaleTemporaryFilesAreRemoved) {
  pid_t gone = 0;
  char* true_argv[] = {const_cast<char*>("true"), nullptr};
  ASSERT_EQ(posix_spawnp(&gone, "true", nullptr, nullptr, true_argv, environ), 0);
  int status = 0;
  ASSERT_EQ(waitpid(gone, &status, 0), gone);
  const std::string dead = ".gpusort-" + std::to_string(gone) + "-a1B2c3.tmp";
  const std::string alive = ".gpusort-" + std::to_string(::getpid()) + "-a1B2c3.tmp";
  const std::vector<std::string> kept{alive, ".gpusort-" + std::to_string(gone) + "-a1B2c.tmp",
                                      ".gpusort-" + std::to_string(gone) + "-a1B2c3.tmp~",
                                      "x.gpusort-" + std::to_string(gone) + "-a1B2c3.tmp"};
  for (auto& name : kept) write_bytes(at(name), "someone's\n");
  write_bytes(at(dead), "left by a killed run\n");
  CliRun r = run({"sort", "keys.bin", "out", "--type", "u32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(at(dead)));
  for (auto& name : kept) EXPECT_TRUE(read_bytes(at(name)) == "someone's\n") << name;
  EXPECT_TRUE(read_bytes(at("out")) == element_bytes({1, 3, 5, 9}, 4));
}

TEST_F(CliRefusal, EmptyPaths) {
  expect_refused({"sort", "", "out", "--type", "u32"}, "IN: an empty path names no file");
  expect_refused({"sort", "keys.bin", "", "--type", "u32"}, "OUT: an empty path names no file", {});
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "", "--values-out",
                  "vout", "--value-type", "u32"},
                 "--values: an empty path names no file", {"out", "vout"});
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--values", "values.bin",
                  "--values-out", "", "--value-type", "u32"},
                 "--values-out: an empty path names no file", {"out"});
}

TEST_F(CliRefusal, DeviceOption) {
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--device", "4294967296"},
                 "no Vulkan device has index '4294967296'; devices: 0: ");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--device", "18446744073709551616"},
                 "device index '18446744073709551616' is out of range; devices: 0: ");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--device", "no-such-gpu"},
                 "no Vulkan device matches 'no-such-gpu'; devices: 0: ");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32"},
                 "no Vulkan device matches 'no-such-gpu' (from GPUSORT_DEVICE)", {"out"},
                 {.environment = {"GPUSORT_DEVICE=no-such-gpu"}});
}

TEST_F(CliRefusal, ValidationEnvironmentVariable) {
  for (const char* on : {"TRUE", "yes", "On", "sync", "0", "off"}) {
    CliRun r = run({"sort", "keys.bin", "out", "--type", "u32"},
                   {.environment = {std::string("GPUSORT_VALIDATION=") + on}});
    EXPECT_EQ(r.exit_code, 0) << on << ": " << r.err;
    EXPECT_TRUE(read_bytes(at("out")) == element_bytes({1, 3, 5, 9}, 4)) << on;
    fs::remove(at("out"));
  }
  expect_refused({"sort", "keys.bin", "out", "--type", "u32"},
                 "GPUSORT_VALIDATION='maybe' is not one of 1, true, yes, on", {"out"},
                 {.environment = {"GPUSORT_VALIDATION=maybe"}});
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

// ---- segmented sort and the permutation (--segments, --indices-out) ----

// The stable order of each segment of `keys` (positions in the whole array).
std::vector<uint64_t> segmented_order(KeyType key, const std::vector<uint64_t>& keys,
                                      const std::vector<uint64_t>& offsets, bool descending) {
  std::vector<uint64_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  for (size_t s = 0; s + 1 < offsets.size(); ++s)
    std::stable_sort(
        order.begin() + offsets[s], order.begin() + offsets[s + 1], [&](uint64_t a, uint64_t b) {
          return radix_order(key, keys[a], descending) < radix_order(key, keys[b], descending);
        });
  return order;
}

std::vector<uint64_t> gathered(const std::vector<uint64_t>& from,
                               const std::vector<uint64_t>& order) {
  std::vector<uint64_t> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = from[order[i]];
  return out;
}

// The README's command, exactly as written there.
TEST_F(CliTest, ReadmeSegmentsAndIndices) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto keys = make_key_bits(KeyType::f32, 5000, Distribution::few_unique, rng);
  std::vector<uint64_t> offsets{0, 0, 7, 7, 1000, 1001, 4999, 5000, 5000};
  write_bytes(at("keys.npy"), npy_array(KeyType::f32, keys));
  write_bytes(at("offsets.npy"), npy_array(KeyType::u64, offsets));
  CliRun r =
      run({"sort", "keys.npy", "out.npy", "--segments", "offsets.npy", "--indices-out", "idx.npy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto order = segmented_order(KeyType::f32, keys, offsets, false);
  EXPECT_TRUE(read_bytes(at("out.npy")) == npy_array(KeyType::f32, gathered(keys, order)));
  EXPECT_TRUE(read_bytes(at("idx.npy")) == npy_array(KeyType::u32, order));
  EXPECT_EQ(work_files(), (std::set<std::string>{"keys.npy", "offsets.npy", "out.npy", "idx.npy"}));
}

TEST_F(CliTest, RawSegmentsWithValuesAndIndices) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const uint64_t n = 3000;
  const auto keys = make_key_bits(KeyType::i64, n, Distribution::few_unique, rng);
  std::vector<uint64_t> values(n), offsets{0};
  for (uint64_t i = 0; i < n; ++i) values[i] = rng();
  while (offsets.back() < n) offsets.push_back(std::min(n, offsets.back() + rng() % 40));
  write_bytes(at("keys.bin"), element_bytes(keys, 8));
  write_bytes(at("values.bin"), element_bytes(values, 8));
  write_bytes(at("offsets.bin"), element_bytes(offsets, 4));
  CliRun r = run({"sort", "keys.bin", "out.bin", "--type", "i64", "--values", "values.bin",
                  "--values-out", "vout.bin", "--value-type", "u64", "--descending", "--segments",
                  "offsets.bin", "--segment-type", "u32", "--indices-out", "idx.bin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto order = segmented_order(KeyType::i64, keys, offsets, true);
  EXPECT_TRUE(read_bytes(at("out.bin")) == element_bytes(gathered(keys, order), 8));
  EXPECT_TRUE(read_bytes(at("vout.bin")) == element_bytes(gathered(values, order), 8));
  EXPECT_TRUE(read_bytes(at("idx.bin")) == element_bytes(order, 4));
}

TEST_F(CliTest, IndicesWithoutSegments) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto keys = make_key_bits(KeyType::u32, 4000, Distribution::few_unique, rng);
  std::vector<uint64_t> values(keys.size());
  for (auto& v : values) v = rng() & 0xffffffff;
  write_bytes(at("keys.npy"), npy_array(KeyType::u32, keys));
  write_bytes(at("values.npy"), npy_array(KeyType::f32, values));
  const std::vector<uint64_t> offsets{0, keys.size()};
  const auto order = segmented_order(KeyType::u32, keys, offsets, false);
  CliRun r = run({"sort", "keys.npy", "out.npy", "--indices-out", "idx.npy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out.npy")) == npy_array(KeyType::u32, gathered(keys, order)));
  EXPECT_TRUE(read_bytes(at("idx.npy")) == npy_array(KeyType::u32, order));
  r = run({"sort", "keys.npy", "out2.npy", "--values", "values.npy", "--values-out", "vout.npy",
           "--indices-out", "idx2.npy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_bytes(at("out2.npy")) == npy_array(KeyType::u32, gathered(keys, order)));
  EXPECT_TRUE(read_bytes(at("vout.npy")) == npy_array(KeyType::f32, gathered(values, order)));
  EXPECT_TRUE(read_bytes(at("idx2.npy")) == npy_array(KeyType::u32, order));
}

TEST_F(CliRefusal, BadSegments) {
  const std::vector<std::string> outputs{"out", "idx"};
  auto refused = [&](const std::string& offsets_file, const std::string& offsets,
                     const std::vector<std::string>& extra, const std::string& problem) {
    write_bytes(at(offsets_file), offsets);
    std::vector<std::string> args{"sort",       "keys.npy",      "out", "--segments",
                                  offsets_file, "--indices-out", "idx"};
    args.insert(args.end(), extra.begin(), extra.end());
    expect_refused(args, problem, outputs);
  };
  refused("empty.bin", "", {"--segment-type", "u32"},
          "segments file 'empty.bin': segment offsets: none given (S segments need S + 1 "
          "offsets, from 0 to n = 4)");
  refused("decreasing.npy", npy_array(KeyType::u32, {0, 3, 2, 4}), {},
          "segments file 'decreasing.npy': segment offsets decrease at index 2: offsets[1] = 3 > "
          "offsets[2] = 2");
  refused("first.npy", npy_array(KeyType::u64, {1, 4}), {},
          "segments file 'first.npy': segment offsets: the first is 1, not 0");
  refused(
      "last.bin", element_bytes({0, 2, 3}, 8), {"--segment-type", "u64"},
      "segments file 'last.bin': segment offsets: the last is 3, not n = 4 (the number of keys)");
  refused("signed.npy", npy_array(KeyType::i32, {0, 4}), {},
          "segments file 'signed.npy' holds i32 elements: segment offsets are u32 or u64");
  refused("wide.npy", npy_array(KeyType::u64, {0, 4}), {"--segment-type", "u32"},
          "holds dtype '<u8' (u64) but --segment-type says u32");
  refused("raw.bin", element_bytes({0, 4}, 4), {},
          "raw array (no .npy header), so --segment-type must give its element type");
  refused("float.bin", element_bytes({0, 4}, 4), {"--segment-type", "f32"},
          "--segment-type: segment offsets are u32 or u64, not f32");
  refused("odd.bin", std::string(6, '\0'), {"--segment-type", "u32"},
          "size 6 bytes is not a multiple of the 4-byte u32");
  expect_refused({"sort", "keys.npy", "out", "--segment-type", "u32"},
                 "--segment-type needs --segments OFFSETS");
  expect_refused({"sort", "keys.npy", "out", "--indices-out", "keys.npy"},
                 "IDX 'keys.npy' is the same file as IN 'keys.npy'", outputs);
  expect_refused({"sort", "keys.npy", "out", "--indices-out", "out"},
                 "OUT and IDX are the same file 'out'", outputs);
  expect_refused({"sort", "keys.npy", "out", "--segments", "missing.npy"},
                 "segments file 'missing.npy': cannot open", outputs);
}

// ---- gpusort topk ----

// The first k of each segment's order, one segment after another.
std::vector<uint64_t> first_k(const std::vector<uint64_t>& order,
                              const std::vector<uint64_t>& offsets, uint64_t k) {
  std::vector<uint64_t> kept;
  for (size_t s = 0; s + 1 < offsets.size(); ++s)
    for (uint64_t i = offsets[s]; i < std::min(offsets[s + 1], offsets[s] + k); ++i)
      kept.push_back(order[i]);
  return kept;
}

TEST_F(CliTest, TopKWithValuesAndIndices) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto keys = make_key_bits(KeyType::f32, 5000, Distribution::special_floats, rng);
  std::vector<uint64_t> values(keys.size());
  for (auto& v : values) v = rng();
  write_bytes(at("keys.npy"), npy_array(KeyType::f32, keys));
  write_bytes(at("values.bin"), element_bytes(values, 8));
  const std::vector<uint64_t> whole{0, keys.size()};
  for (bool largest : {false, true})
    for (uint64_t k : {uint64_t(0), uint64_t(1), uint64_t(333), uint64_t(5000)}) {
      std::vector<std::string> args{"topk", "keys.npy", "out.npy", "-k", std::to_string(k),
                                    "--values", "values.bin", "--value-type", "u64",
                                    "--values-out", "vout.bin", "--indices-out", "idx.npy"};
      if (largest) args.push_back("--largest");
      CliRun r = run(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto order = first_k(segmented_order(KeyType::f32, keys, whole, largest), whole, k);
      EXPECT_TRUE(read_bytes(at("out.npy")) == npy_array(KeyType::f32, gathered(keys, order)));
      EXPECT_TRUE(read_bytes(at("vout.bin")) == element_bytes(gathered(values, order), 8));
      EXPECT_TRUE(read_bytes(at("idx.npy")) == npy_array(KeyType::u32, order));
    }
}

TEST_F(CliTest, TopKPerSegment) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const uint64_t n = 3000;
  const auto keys = make_key_bits(KeyType::i64, n, Distribution::few_unique, rng);
  std::vector<uint64_t> offsets{0, 0};
  while (offsets.back() < n) offsets.push_back(std::min(n, offsets.back() + rng() % 40));
  write_bytes(at("keys.bin"), element_bytes(keys, 8));
  write_bytes(at("offsets.npy"), npy_array(KeyType::u64, offsets));
  CliRun r = run({"topk", "keys.bin", "out.bin", "-t", "i64", "-k", "5", "--largest",
                  "--segments", "offsets.npy", "--indices-out", "idx.bin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto order = first_k(segmented_order(KeyType::i64, keys, offsets, true), offsets, 5);
  EXPECT_TRUE(read_bytes(at("out.bin")) == element_bytes(gathered(keys, order), 8));
  EXPECT_TRUE(read_bytes(at("idx.bin")) == element_bytes(order, 4));
}

TEST_F(CliRefusal, TopK) {
  write_bytes(at("keys.npy"), npy_array(KeyType::u32, {4, 3, 2, 1}));
  write_bytes(at("values.npy"), npy_array(KeyType::u32, {1, 2, 3}));
  const std::vector<std::string> outputs{"out", "vout", "idx"};
  expect_refused({"topk", "keys.npy", "out", "-k", "5"},
                 "-k 5 is more than the 4 keys in keys file 'keys.npy'", outputs);
  expect_refused({"topk", "keys.npy", "out"}, "-k is required", outputs);
  expect_refused({"topk", "keys.npy", "out", "-k", "2", "--values", "values.npy", "--values-out",
                  "vout"},
                 "key/value count mismatch: keys file 'keys.npy' holds 4 elements but values file "
                 "'values.npy' holds 3",
                 outputs);
  expect_refused({"topk", "keys.npy", "keys.npy", "-k", "2"},
                 "OUT 'keys.npy' is the same file as IN 'keys.npy'", outputs);
  write_bytes(at("offsets.npy"), npy_array(KeyType::u32, {0, 3, 2, 4}));
  expect_refused({"topk", "keys.npy", "out", "-k", "2", "--segments", "offsets.npy"},
                 "segments file 'offsets.npy': segment offsets decrease at index 2: offsets[1] = "
                 "3 > offsets[2] = 2",
                 outputs);
}

// ---- out of core (--device-memory-limit, --host-memory-limit) ----

// The device_memory_limit under which the CLI (same device as this process) sorts `key` with
// values in runs of at least `run` elements.
uint64_t device_limit_for_run(KeyType key, uint32_t value_bytes, uint64_t run) {
  return context().impl().host_path().device_bytes(make_sort_spec(key, value_bytes, false, 0, 0),
                                                   Algorithm::automatic, run);
}

// Keys (and u32 values) in `work`, the reference output, and the sort's arguments.
struct OutOfCoreCase {
  std::vector<uint64_t> keys, values, sorted_keys, sorted_values;
  KeyType key;
  std::vector<std::string> args;
};
OutOfCoreCase out_of_core_case(CliTest& t, KeyType key, uint64_t n, bool with_values,
                               bool descending) {
  OutOfCoreCase c{.key = key};
  for (auto& name : t.work_files()) fs::remove(t.at(name));
  std::mt19937_64 rng(fresh_seed());
  c.keys = make_key_bits(key, n, Distribution::few_unique, rng);
  c.values.resize(n);
  std::iota(c.values.begin(), c.values.end(), 0);
  std::vector<uint64_t> order(c.values);
  std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
    return radix_order(key, c.keys[a], descending) < radix_order(key, c.keys[b], descending);
  });
  for (uint64_t i : order) c.sorted_keys.push_back(c.keys[i]), c.sorted_values.push_back(i);
  write_bytes(t.at("in.npy"), npy_array(key, c.keys));
  c.args = {"sort", "in.npy", "out.npy"};
  if (with_values) {
    write_bytes(t.at("values.bin"), element_bytes(c.values, 4));
    c.args.insert(c.args.end(),
                  {"--values", "values.bin", "--values-out", "vout.bin", "--value-type", "u32"});
  }
  if (descending) c.args.push_back("--descending");
  return c;
}

void expect_sorted_outputs(CliTest& t, const OutOfCoreCase& c, bool with_values) {
  EXPECT_TRUE(read_bytes(t.at("out.npy")) == npy_array(c.key, c.sorted_keys)) << "keys differ";
  if (with_values) {
    EXPECT_TRUE(read_bytes(t.at("vout.bin")) == element_bytes(c.sorted_values, 4))
        << "values differ";
  }
  EXPECT_TRUE(read_bytes(t.at("in.npy")) == npy_array(c.key, c.keys)) << "input changed";
  std::set<std::string> expected{"in.npy", "out.npy"};
  if (with_values) expected.insert({"values.bin", "vout.bin"});
  EXPECT_EQ(t.work_files(), expected) << "temporary files left behind?";
}

TEST_F(CliTest, OutOfCoreInHostMemory) {
  OutOfCoreCase c = out_of_core_case(*this, KeyType::f64, 200001, true, true);
  c.args.insert(c.args.end(), {"--timings", "--device-memory-limit",
                               std::to_string(device_limit_for_run(KeyType::f64, 4, 30000))});
  CliRun r = run(c.args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("sorted runs merged on the CPU\n"), std::string::npos) << r.err;
  expect_sorted_outputs(*this, c, true);
  // Suffixes: 1M of device memory holds runs of a few hundred thousand u32 keys at most.
  c = out_of_core_case(*this, KeyType::u32, 700000, false, false);
  c.args.insert(c.args.end(), {"--timings", "--device-memory-limit", "1M"});
  r = run(c.args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("sorted runs merged on the CPU\n"), std::string::npos) << r.err;
  expect_sorted_outputs(*this, c, false);
}

TEST_F(CliTest, OutOfCoreThroughTemporaryFiles) {
  for (bool with_values : {false, true}) {
    OutOfCoreCase c = out_of_core_case(*this, KeyType::i64, 150000, with_values, false);
    c.args.insert(c.args.end(), {"--timings", "--host-memory-limit", "64K", "--device-memory-limit",
                                 std::to_string(device_limit_for_run(KeyType::i64, 4, 20000))});
    CliRun r = run(c.args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("sorted runs merged on the CPU, from temporary files\n"),
              std::string::npos)
        << r.err;
    expect_sorted_outputs(*this, c, with_values);
  }
}

// What the CLI writes to a pseudo-terminal as its standard error (where the progress line shows),
// read until the CLI has ended.
class TerminalCapture {
 public:
  TerminalCapture() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    const char* name = ::ptsname(master_);
    if (name) slave_ = name;
    // Held open meanwhile, so that the terminal never hangs up between the CLI's runs; raw
    // output: no newline translation, what the CLI writes arrives as written.
    slave_fd_ = ::open(slave_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    termios mode{};
    if (slave_fd_ < 0 || ::tcgetattr(slave_fd_, &mode) != 0) {
      slave_.clear();
      return;
    }
    ::cfmakeraw(&mode);
    ::tcsetattr(slave_fd_, TCSANOW, &mode);
    thread_ = std::thread([this] {
      char buffer[4096];
      while (true) {
        pollfd p{master_, POLLIN, 0};
        ::poll(&p, 1, 20);
        const ssize_t got = (p.revents & POLLIN) ? ::read(master_, buffer, sizeof buffer) : 0;
        if (got > 0) {
          std::lock_guard lock(mutex_);
          text_.append(buffer, size_t(got));
        } else if (stop_) {
          break;
        }
      }
    });
  }
  ~TerminalCapture() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (slave_fd_ >= 0) ::close(slave_fd_);
    if (master_ >= 0) ::close(master_);
  }
  bool ok() const { return !slave_.empty(); }
  const std::string& slave() const { return slave_; }
  // Everything written so far; the CLI has ended, so once the terminal holds no more.
  std::string take() {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard lock(mutex_);
    return std::exchange(text_, std::string());
  }

 private:
  int master_ = -1, slave_fd_ = -1;
  std::string slave_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string text_;
  std::thread thread_;
};

// The progress line shows on a terminal (here a pseudo-terminal, and at once through a test hook
// instead of after 2 s). A sort that completes ends it at 100 %, every byte read and written: in
// core, out of core in host memory and through temporary files, with values; one that fails
// clears it for the error line.
TEST_F(CliTest, ProgressLineEndsAtOneHundredPercent) {
  TerminalCapture terminal;
  ASSERT_TRUE(terminal.ok()) << "no pseudo-terminal: " << std::strerror(errno);
  const std::vector<std::string> hook{"GPUSORT_TEST_PROGRESS_AFTER_MS=0"};
  auto sort = [&](const std::vector<std::string>& args, const std::vector<std::string>& env) {
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    const pid_t pid = spawn(args, null_fd, null_fd, terminal.slave(), env);
    ::close(null_fd);
    const int exit_code = pid > 0 ? wait_for(pid, std::chrono::seconds(300)) : -1;
    const std::string text = terminal.take();
    EXPECT_EQ(text.find("validation"), std::string::npos) << text;
    return std::make_pair(exit_code, text);
  };
  const std::string line = "\rgpusort: sorting 1.2 MB: ";
  for (const char* mode : {"in core", "out of core in host memory", "through temporary files"}) {
    SCOPED_TRACE(mode);
    OutOfCoreCase c = out_of_core_case(*this, KeyType::u64, 100000, true, false);
    if (mode != std::string("in core"))
      c.args.insert(c.args.end(), {"--device-memory-limit",
                                   std::to_string(device_limit_for_run(KeyType::u64, 4, 30000))});
    if (mode == std::string("through temporary files"))
      c.args.insert(c.args.end(), {"--host-memory-limit", "64K"});
    const auto [exit_code, text] = sort(c.args, hook);
    ASSERT_EQ(exit_code, 0) << text;
    expect_sorted_outputs(*this, c, true);
    // Updates of one line, the last at 100 % and then a newline; nothing else.
    ASSERT_GE(text.size(), line.size() + 5);
    EXPECT_EQ(text.rfind(line, 0), 0u) << text;
    EXPECT_EQ(text.substr(text.size() - line.size() - 5), line + "100%\n") << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  }
  // A failed sort: the line is cleared, then the error (rename_fault.c fails the outputs' writes).
  OutOfCoreCase c = out_of_core_case(*this, KeyType::u64, 100000, true, false);
  const auto [exit_code, text] =
      sort(c.args, {hook[0], "LD_PRELOAD=" GPUSORT_RENAME_FAULT_PATH,
                    "GPUSORT_TEST_WRITE_FAIL=ENOSPC", "GPUSORT_TEST_WRITE_FAIL_BEYOND=1000"});
  EXPECT_EQ(exit_code, 1);
  const std::string cleared = "\r" + std::string(60, ' ') + "\r";
  const size_t error = text.find("gpusort: error: ");
  ASSERT_NE(error, std::string::npos) << text;
  const std::string full =
      "cannot write: No space left on device (the disk is full; no output "
      "was changed)\n";  // for OUT or VOUT, whichever is written first
  ASSERT_GE(text.size(), full.size());
  EXPECT_EQ(text.substr(text.size() - full.size()), full) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.substr(error - cleared.size(), cleared.size()), cleared) << text;
  EXPECT_EQ(text.find("100%"), std::string::npos) << text;
}

TEST_F(CliRefusal, BadMemoryLimits) {
  for (const char* option : {"--device-memory-limit", "--host-memory-limit"})
    for (const char* value : {"12X", "-1", "1.5G", "99999999999999999999", "20000000T"})
      expect_refused({"sort", "keys.bin", "out", "--type", "u32", option, value},
                     std::string(option) + " '" + value + "': expected a byte count");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--device-memory-limit", "1K"},
                 "a device memory limit of 1024 bytes is too small");
  expect_refused({"sort", "keys.bin", "out", "--type", "u32", "--indices-out", "idx",
                  "--device-memory-limit", "1G"},
                 "--device-memory-limit and --host-memory-limit apply to plain sorts");
}

// The out-of-core sorts that fail leave the input whole, OUT as it was and no temporary file.
class CliOutOfCoreFailure : public CliTest {
 public:
  OutOfCoreCase c;
  void SetUp() override {
    CliTest::SetUp();
    c = out_of_core_case(*this, KeyType::u64, 100000, false, false);
    c.args.insert(c.args.end(), {"--host-memory-limit", "64K", "--device-memory-limit",
                                 std::to_string(device_limit_for_run(KeyType::u64, 0, 30000))});
  }
};

TEST_F(CliOutOfCoreFailure, UnwritableOutputDirectory) {
  // Root writes into any directory, but not into /proc.
  fs::create_directory(at("locked"));
  fs::permissions(at("locked"), fs::perms::owner_read | fs::perms::owner_exec);
  const std::string out = ::geteuid() == 0 ? "/proc/gpusort-test-out.npy" : "locked/out.npy";
  c.args[2] = out;
  expect_refused(c.args, "cannot create a temporary file in", {});
  EXPECT_TRUE(fs::is_empty(at("locked")));
  fs::permissions(at("locked"), fs::perms::owner_all);
}

// The file-size limit (ulimit -f) is checked before any work, and named as such; where a write
// meets it anyway (standard output, a regular file here, is not checked ahead), the write fails
// with EFBIG (SIGXFSZ is ignored) and the error says so.
TEST_F(CliOutOfCoreFailure, FileSizeLimitIsNamedAsSuch) {
  // Files beyond 256 KiB cannot be written (the runs and OUT are 800 KB): the CLI is started
  // with this process's file-size limit lowered (and the shader cache off: it writes files).
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const RunOptions options{.environment = {"MESA_SHADER_CACHE_DISABLE=true"}};
  rlimit lowered = saved;
  lowered.rlim_cur = 256 * 1024;
  for (const char* host_limit : {"64K", "1G"}) {  // runs in temporary files, then in memory
    c.args[c.args.size() - 3] = host_limit;
    write_bytes(at("out.npy"), sentinel);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
    CliRun r = run(c.args, options);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.err,
              "gpusort: error: the output file 'out.npy' would be 800128 bytes, more than the "
              "file-size limit of 262144 bytes (ulimit -f)\n");
    EXPECT_TRUE(read_bytes(at("out.npy")) == sentinel);
    EXPECT_TRUE(read_bytes(at("in.npy")) == npy_array(c.key, c.keys));
    EXPECT_EQ(work_files(), (std::set<std::string>{"in.npy", "out.npy"}));
  }
  fs::remove(at("out.npy"));
  c.args[2] = "-";
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
  CliRun r = run(c.args, options);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_EQ(r.exit_code, 1) << "not ended by SIGXFSZ (" << 128 + SIGXFSZ << ")";
  EXPECT_EQ(r.err,
            "gpusort: error: output file '-' (standard output): cannot write: File too large "
            "(more than the file-size limit of 262144 bytes, set by ulimit -f; what was written "
            "so far stays)\n");
  EXPECT_EQ(r.out.size(), 256u * 1024);
  EXPECT_EQ(work_files(), (std::set<std::string>{"in.npy"}));
}

// Runs in temporary files beside OUT count against its disk's free space with the outputs.
TEST_F(CliOutOfCoreFailure, NotEnoughDiskSpaceForTheRuns) {
  c = out_of_core_case(*this, KeyType::u64, 100000, true, false);
  c.args.insert(c.args.end(), {"--host-memory-limit", "64K", "--device-memory-limit",
                               std::to_string(device_limit_for_run(KeyType::u64, 4, 30000))});
  expect_refused(
      c.args,
      "not enough disk space for the output file 'out.npy' (800128 bytes), the values "
      "output file 'vout.bin' (400000 bytes), the keys' sorted runs (800000 bytes) and "
      "the values' sorted runs (400000 bytes): they need 2400128 bytes together, 2400127 "
      "are free",
      {},
      {.environment = {"LD_PRELOAD=" GPUSORT_RENAME_FAULT_PATH,
                       "GPUSORT_TEST_FREE_BYTES=2400127"}});
}

TEST_F(CliOutOfCoreFailure, InterruptDuringTheMergeRemovesTemporaryFiles) {
  // The CLI pauses between its sorted runs and the merge (a test hook); SIGINT arrives then.
  const fs::path err = root / "stderr";
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const pid_t pid = spawn(c.args, null_fd, null_fd, err, {"GPUSORT_TEST_MERGE_DELAY_MS=60000"});
  ::close(null_fd);
  ASSERT_GT(pid, 0);
  // The runs are complete when gpusort's temporary files hold every key.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    uintmax_t held = 0;
    for (auto& name : work_files())
      if (name.rfind(".gpusort-", 0) == 0) held += fs::file_size(at(name));
    if (held >= c.keys.size() * 8) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << read_bytes(err);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(pid, SIGINT);
  EXPECT_EQ(wait_for(pid, std::chrono::seconds(60)), 128 + SIGINT) << read_bytes(err);
  EXPECT_EQ(work_files(), (std::set<std::string>{"in.npy"}));
}

}  // namespace
}  // namespace gpusort::test
