// Raw and .npy arrays on disk, and atomically replaced outputs (see array_file.hpp).
// The npy format: magic "\x93NUMPY", version (major, minor), header length (u16 for 1.x, u32 for
// 2.x/3.x), then a Python dict literal {'descr': '<u4', 'fortran_order': False, 'shape': (n,), }
// padded with spaces and ending in '\n', then the elements.
#include "array_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

namespace gpusort::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 6> npy_magic{'\x93', 'N', 'U', 'M', 'P', 'Y'};
// Header lengths are padded so that the data starts at a multiple of this (npy format spec).
constexpr uint64_t npy_alignment = 64;
// A sanity bound on the header dict: numpy writes well under a kilobyte for 1-D arrays.
constexpr uint32_t npy_max_header_bytes = 1u << 20;

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// Closes a file descriptor on scope exit.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads exactly `bytes` at `offset`; false if the file ends first.
bool read_at(int fd, void* destination, uint64_t bytes, uint64_t offset, const std::string& who) {
  auto* out = static_cast<char*>(destination);
  while (bytes > 0) {
    // Linux reads at most about 2 GiB per call.
    size_t chunk = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    ssize_t got = ::pread(fd, out, chunk, off_t(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(system_error(who + ": cannot read"));
    }
    if (got == 0) return false;
    out += got;
    bytes -= uint64_t(got);
    offset += uint64_t(got);
  }
  return true;
}

int open_regular_file(const fs::path& path, const std::string& who, uint64_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(system_error(who + ": cannot open"));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(system_error(who + ": cannot stat"));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(who + ": not a regular file");
  }
  size = uint64_t(st.st_size);
  return fd;
}

// ---- npy header dict ----

struct NpyHeader {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<uint64_t>> shape;
};

// Parses the restricted Python literal numpy writes: a dict of string keys whose values are a
// string, True/False, or a tuple of non-negative integers.
class NpyHeaderParser {
 public:
  NpyHeaderParser(std::string_view text, std::string who) : text_(text), who_(std::move(who)) {}

  NpyHeader parse() {
    NpyHeader h;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = parse_string();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[')
          throw Error(who_ +
                      ": structured (record) dtypes are not supported; gpusort sorts "
                      "plain arrays of u32, i32, f32, u64, i64 or f64");
        h.descr = parse_string();
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        h.shape = parse_shape();
      } else {
        malformed("unexpected key '" + key + "'");
      }
      skip_space();
      if (peek() == ',')
        ++pos_;
      else if (peek() != '}')
        malformed("expected ',' or '}' after '" + key + "'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) malformed("text after the closing '}'");
    if (!h.descr || !h.fortran_order || !h.shape)
      malformed("the header lacks one of 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  [[noreturn]] void malformed(const std::string& why) const {
    throw Error(who_ + ": malformed .npy header (" + why + ")");
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n'))
      ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) malformed(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') malformed("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) malformed("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") return pos_ += 4, true;
    if (text_.substr(pos_, 5) == "False") return pos_ += 5, false;
    malformed("'fortran_order' is neither True nor False");
  }
  std::vector<uint64_t> parse_shape() {
    std::vector<uint64_t> shape;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') malformed("a shape entry is not a non-negative integer");
      uint64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        uint64_t digit = uint64_t(peek() - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10)
          malformed("a shape entry overflows");
        v = v * 10 + digit;
        ++pos_;
      }
      shape.push_back(v);
      skip_space();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        malformed("expected ',' or ')' in 'shape'");
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  std::string who_;
  size_t pos_ = 0;
};

KeyType element_of_descr(const std::string& descr, const std::string& who) {
  for (KeyType t :
       {KeyType::u32, KeyType::i32, KeyType::f32, KeyType::u64, KeyType::i64, KeyType::f64})
    if (descr == npy_descr(t)) return t;
  std::string supported = "<u4 <i4 <f4 <u8 <i8 <f8";
  if (descr.size() >= 2 && descr[0] == '>')
    throw Error(who + ": big-endian dtype '" + descr +
                "' is not supported (convert it with "
                "arr.astype(arr.dtype.newbyteorder('<')); supported: " +
                supported + ")");
  if (descr.find('O') != std::string::npos)
    throw Error(who + ": object arrays (dtype '" + descr +
                "') are not supported (supported: " + supported + ")");
  throw Error(who + ": unsupported dtype '" + descr + "' (supported: " + supported + ")");
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

void check_count(uint64_t count, const std::string& who) {
  if (count > max_elements)
    throw Error(who + ": holds " + std::to_string(count) +
                " elements, more than gpusort's maximum of " + std::to_string(max_elements) +
                " (2^31 - 1)");
}

std::string npy_header(KeyType element, uint64_t count) {
  std::string dict = "{'descr': '" + npy_descr(element) + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(count) + ",), }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of the alignment.
  const uint64_t prefix = npy_magic.size() + 2 + 2;
  uint64_t total = prefix + dict.size() + 1;
  total = (total + npy_alignment - 1) / npy_alignment * npy_alignment;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string header(npy_magic.begin(), npy_magic.end());
  header += '\x01';  // format version 1.0: a 16-bit header length is enough for a 1-D array
  header += '\x00';
  header += char(dict.size() & 0xff);
  header += char(dict.size() >> 8);
  return header + dict;
}

// Temporary outputs to remove when the process is interrupted (SIGINT, SIGTERM, SIGHUP). Kept in
// fixed buffers so that the handler calls only async-signal-safe functions.
constexpr int max_interruptible_outputs = 4;
char interrupted_paths[max_interruptible_outputs][PATH_MAX];
volatile sig_atomic_t interrupted_path_used[max_interruptible_outputs];

void remove_temporaries_and_die(int signal_number) {
  for (int i = 0; i < max_interruptible_outputs; ++i)
    if (interrupted_path_used[i]) ::unlink(interrupted_paths[i]);
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

// Returns the slot holding `path`, or -1 when there is none free (then an interruption may
// leave the temporary file behind, never a half-written destination).
int remember_temporary(const std::string& path) {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_die;
    sigemptyset(&action.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &action, nullptr);
    return true;
  }();
  (void)installed;
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < max_interruptible_outputs; ++i)
    if (!interrupted_path_used[i]) {
      std::memcpy(interrupted_paths[i], path.c_str(), path.size() + 1);
      interrupted_path_used[i] = 1;
      return i;
    }
  return -1;
}

void forget_temporary(int slot) {
  if (slot >= 0) interrupted_path_used[slot] = 0;
}

mode_t new_file_mode(const fs::path& destination) {
  struct stat st;
  if (::stat(destination.c_str(), &st) == 0) return st.st_mode & 07777;  // keep an existing file's
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

std::string npy_descr(KeyType element) {
  switch (element) {
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
  throw Error("invalid element type");
}

ArrayFile open_array_file(const fs::path& path, const std::string& role,
                          std::optional<KeyType> declared, const std::string& type_option) {
  ArrayFile file;
  file.path = path;
  file.role = role;
  const std::string who = role + " " + quoted(path);
  uint64_t size = 0;
  FileDescriptor fd{open_regular_file(path, who, size)};

  std::array<char, npy_magic.size()> magic{};
  bool is_npy = size >= magic.size() && read_at(fd.fd, magic.data(), magic.size(), 0, who) &&
                magic == npy_magic;
  if (!is_npy) {
    if (!declared)
      throw Error(who + ": is a raw array (no .npy header), so " + type_option +
                  " must give its element type (u32, i32, f32, u64, i64 or f64)");
    file.format = FileFormat::raw;
    file.element = *declared;
    const uint64_t element_bytes = key_bytes(file.element);
    if (size % element_bytes != 0)
      throw Error(who + ": size " + std::to_string(size) + " bytes is not a multiple of the " +
                  std::to_string(element_bytes) + "-byte " + to_string(file.element) + " element");
    file.count = size / element_bytes;
    check_count(file.count, who);
    return file;
  }

  file.format = FileFormat::npy;
  uint8_t version[2];
  if (!read_at(fd.fd, version, 2, magic.size(), who))
    throw Error(who + ": malformed .npy file (ends inside the header)");
  uint64_t length_offset = magic.size() + 2, header_length = 0, length_bytes = 0;
  if (version[0] == 1)
    length_bytes = 2;
  else if (version[0] == 2 || version[0] == 3)
    length_bytes = 4;
  else
    throw Error(who + ": unsupported .npy format version " + std::to_string(version[0]) + "." +
                std::to_string(version[1]));
  uint8_t length[4] = {};
  if (!read_at(fd.fd, length, length_bytes, length_offset, who))
    throw Error(who + ": malformed .npy file (ends inside the header)");
  for (uint64_t i = 0; i < length_bytes; ++i) header_length |= uint64_t(length[i]) << (8 * i);
  if (header_length > npy_max_header_bytes)
    throw Error(who + ": malformed .npy file (header length " + std::to_string(header_length) +
                " bytes)");
  std::string text(header_length, '\0');
  file.data_offset = length_offset + length_bytes + header_length;
  if (!read_at(fd.fd, text.data(), header_length, length_offset + length_bytes, who))
    throw Error(who + ": malformed .npy file (ends inside the header)");
  if (text.empty() || text.back() != '\n')
    throw Error(who + ": malformed .npy header (does not end with a newline)");
  NpyHeader header = NpyHeaderParser(text, who).parse();

  file.element = element_of_descr(*header.descr, who);
  if (*header.fortran_order)
    throw Error(who +
                ": Fortran-order arrays are not supported (save a C-order array, e.g. "
                "np.ascontiguousarray(arr))");
  if (header.shape->size() != 1)
    throw Error(who + ": has shape " + shape_text(*header.shape) +
                "; only 1-D arrays are supported");
  if (declared && *declared != file.element)
    throw Error(who + ": holds dtype '" + *header.descr + "' (" + to_string(file.element) +
                ") but " + type_option + " says " + to_string(*declared));
  file.count = header.shape->front();
  check_count(file.count, who);
  const uint64_t data_bytes = file.count * key_bytes(file.element);
  const uint64_t present = size - std::min(size, file.data_offset);
  if (present < data_bytes)
    throw Error(who + ": truncated: the header declares " + std::to_string(file.count) +
                " elements (" + std::to_string(data_bytes) + " bytes) but only " +
                std::to_string(present) + " bytes follow it");
  if (present > data_bytes)
    throw Error(who + ": malformed .npy file (" + std::to_string(present - data_bytes) +
                " bytes after the " + std::to_string(file.count) +
                " elements the header declares)");
  return file;
}

ArrayReader::ArrayReader(const ArrayFile& file)
    : file_(file), who_(file.role + " " + quoted(file.path)) {
  uint64_t size = 0;
  fd_ = open_regular_file(file.path, who_, size);
  if (size != file.data_offset + file.count * key_bytes(file.element)) {
    ::close(fd_);
    throw Error(who_ + ": changed size while being read");
  }
}

ArrayReader::~ArrayReader() {
  if (fd_ >= 0) ::close(fd_);
}

void ArrayReader::read(uint64_t offset, void* destination, uint64_t bytes) const {
  if (!read_at(fd_, destination, bytes, file_.data_offset + offset, who_))
    throw Error(who_ + ": changed size while being read");
}

void read_array_data(const ArrayFile& file, void* destination) {
  const std::string who = file.role + " " + quoted(file.path);
  uint64_t size = 0;
  FileDescriptor fd{open_regular_file(file.path, who, size)};
  const uint64_t bytes = file.count * key_bytes(file.element);
  if (size != file.data_offset + bytes ||
      !read_at(fd.fd, destination, bytes, file.data_offset, who))
    throw Error(who + ": changed size while being read");
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(fs::absolute(a)) == fs::weakly_canonical(fs::absolute(b));
}

PendingOutput::PendingOutput(fs::path destination, std::string role)
    : destination_(std::move(destination)), role_(std::move(role)) {
  const std::string who = role_ + " " + quoted(destination_);
  // Replace what a symbolic link points to, not the link itself.
  std::error_code ec;
  if (fs::is_symlink(destination_, ec) && fs::exists(destination_, ec))
    destination_ = fs::canonical(destination_);
  if (fs::is_directory(destination_)) throw Error(who + ": is a directory");
  fs::path directory = destination_.parent_path();
  if (directory.empty()) directory = ".";
  std::string name =
      (directory / ("." + destination_.filename().string() + ".gpusort-XXXXXX")).string();
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0)
    throw Error(system_error(who + ": cannot create a temporary file in " + quoted(directory)));
  temporary_ = name;
  interrupt_slot_ = remember_temporary(name);
  if (::fchmod(fd_, new_file_mode(destination_)) != 0) {
    int saved = errno;
    ::close(fd_);
    ::unlink(temporary_.c_str());
    forget_temporary(interrupt_slot_);
    fd_ = -1;
    errno = saved;
    throw Error(system_error(who + ": cannot set the temporary file's permissions"));
  }
}

PendingOutput::~PendingOutput() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
  forget_temporary(interrupt_slot_);
}

void PendingOutput::write_bytes(const void* data, uint64_t bytes) {
  const auto* in = static_cast<const char*>(data);
  while (bytes > 0) {
    size_t chunk = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    ssize_t put = ::write(fd_, in, chunk);
    if (put < 0) {
      if (errno == EINTR) continue;
      throw Error(system_error(role_ + " " + quoted(destination_) + ": cannot write"));
    }
    in += put;
    bytes -= uint64_t(put);
  }
}

void PendingOutput::write_array(FileFormat format, KeyType element, const void* data,
                                uint64_t count) {
  if (format == FileFormat::npy) {
    std::string header = npy_header(element, count);
    write_bytes(header.data(), header.size());
  }
  write_bytes(data, count * key_bytes(element));
}

void PendingOutput::write_header(FileFormat format, KeyType element, uint64_t count) {
  if (format == FileFormat::npy) {
    std::string header = npy_header(element, count);
    write_bytes(header.data(), header.size());
    data_offset_ = header.size();
  }
}

void PendingOutput::write_at(uint64_t offset, const void* data, uint64_t bytes) {
  const auto* in = static_cast<const char*>(data);
  uint64_t at = data_offset_ + offset;
  const uint64_t begin = at;
  while (bytes > 0) {
    size_t chunk = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    ssize_t put = ::pwrite(fd_, in, chunk, off_t(at));
    if (put < 0) {
      if (errno == EINTR) continue;
      throw Error(system_error(role_ + " " + quoted(destination_) + ": cannot write"));
    }
    in += put;
    at += uint64_t(put);
    bytes -= uint64_t(put);
  }
#ifdef SYNC_FILE_RANGE_WRITE
  // Start writing this range to disk now (asynchronously): finish()'s fsync then waits for the
  // last ranges only, not for the whole file.
  ::sync_file_range(fd_, off_t(begin), off_t(at - begin), SYNC_FILE_RANGE_WRITE);
#else
  (void)begin;
#endif
}

void PendingOutput::finish() {
  const std::string who = role_ + " " + quoted(destination_);
  if (::fsync(fd_) != 0) throw Error(system_error(who + ": cannot flush to disk"));
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw Error(system_error(who + ": cannot close"));
}

void PendingOutput::commit() {
  const std::string who = role_ + " " + quoted(destination_);
  if (fd_ >= 0) finish();
  if (::rename(temporary_.c_str(), destination_.c_str()) != 0)
    throw Error(system_error(who + ": cannot rename the temporary file into place"));
  committed_ = true;
  forget_temporary(interrupt_slot_);
  interrupt_slot_ = -1;
  // Make the rename itself durable.
  fs::path directory = destination_.parent_path();
  if (directory.empty()) directory = ".";
  int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace gpusort::cli
