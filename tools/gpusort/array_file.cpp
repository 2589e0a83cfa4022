// Raw and .npy arrays on disk, and outputs replaced atomically and together (see array_file.hpp).
// The npy format: magic "\x93NUMPY", version (major, minor), header length (u16 for 1.0, u32 for
// 2.0/3.0), then a Python dict literal {'descr': '<u4', 'fortran_order': False, 'shape': (n,), }
// (NumPy writes it so, padded with spaces and ending in '\n'; it reads any Python literal spelling
// of it, and so does gpusort: PyLiteralParser), then the elements.
#include "array_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string_view>
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

// Waits until `fd`, set non-blocking by someone else, is ready for `events`.
void wait_ready(int fd, short events) {
  pollfd p{fd, events, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
}

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

// Why a write failed. A full disk, a used-up quota and a file-size limit (ulimit -f: EFBIG, with
// SIGXFSZ ignored) are each named as such; `changed` says what the failure leaves behind.
std::string write_failure(const std::string& who, const char* changed) {
  const int error = errno;
  std::string message = system_error(who + ": cannot write");
  if (error == ENOSPC) {
    message += std::string(" (the disk is full; ") + changed + ")";
  } else if (error == EDQUOT) {
    message += std::string(" (the disk quota is used up; ") + changed + ")";
  } else if (error == EFBIG) {
    const uint64_t limit = file_size_limit();
    message +=
        (limit != ~uint64_t(0) ? " (more than the file-size limit of " + std::to_string(limit) +
                                     " bytes, set by ulimit -f; "
                               : std::string(" (larger than the file system's largest file; ")) +
        changed + ")";
  }
  return message;
}

// What a failed write to a temporary file leaves: nothing (the outputs are replaced only at the
// commit); to a stream: whatever of it was written.
constexpr const char* temporary_file_failure = "no output was changed";
constexpr const char* stream_failure = "what was written so far stays";

void write_all(int fd, const void* data, uint64_t bytes, const std::string& who,
               const char* changed) {
  const auto* in = static_cast<const char*>(data);
  while (bytes > 0) {
    size_t chunk = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    ssize_t put = ::write(fd, in, chunk);
    if (put < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        wait_ready(fd, POLLOUT);
        continue;
      }
      throw Error(write_failure(who, changed));
    }
    in += put;
    bytes -= uint64_t(put);
  }
}

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// What to give instead of a special file as an input, for its readers ("" for none).
std::string special_input_hint(mode_t mode, InputReaders readers) {
  if (readers == InputReaders::every_rank)
    return " (under mpirun, inputs must be regular files: each rank reads its own slice)";
  return S_ISFIFO(mode) || S_ISCHR(mode) ? " (give '-' to read standard input)" : "";
}

// Opens a regular file for reading. Opened without blocking (a FIFO with no writer would block
// the open itself), then refused unless regular.
int open_regular_file(const fs::path& path, const std::string& who, InputReaders readers,
                      uint64_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(system_error(who + ": cannot open"));
  FileDescriptor owned{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) throw Error(system_error(who + ": cannot stat"));
  if (!S_ISREG(st.st_mode))
    throw Error(who + ": is " + file_kind(st.st_mode) + ", not a regular file" +
                special_input_hint(st.st_mode, readers));
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    throw Error(system_error(who + ": cannot open"));
  size = uint64_t(st.st_size);
  owned.fd = -1;
  return fd;
}

// Standard input, read to its end. Bounded by the largest .npy file gpusort accepts.
std::shared_ptr<const std::string> read_standard_input(const std::string& who) {
  const uint64_t limit = 10 + 4 + npy_max_header_bytes + uint64_t(max_elements) * 8;
  auto bytes = std::make_shared<std::string>();
  size_t used = 0;
  while (true) {
    if (bytes->size() - used < (size_t(1) << 16))
      bytes->resize(std::max<size_t>(bytes->size() * 2, size_t(1) << 20));
    ssize_t got = ::read(STDIN_FILENO, bytes->data() + used, bytes->size() - used);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        wait_ready(STDIN_FILENO, POLLIN);
        continue;
      }
      throw Error(system_error(who + ": cannot read"));
    }
    if (got == 0) break;
    used += size_t(got);
    if (used > limit)
      throw Error(who + ": more than " + std::to_string(limit) +
                  " bytes, larger than any array gpusort sorts");
  }
  bytes->resize(used);
  bytes->shrink_to_fit();
  return bytes;
}

// The bytes of an input: a regular file (read with pread) or standard input held in memory.
struct InputBytes {
  int fd = -1;
  const std::string* memory = nullptr;
  uint64_t size = 0;

  // Reads exactly `bytes` at `offset`; false if the input ends first.
  bool read(void* destination, uint64_t bytes, uint64_t offset, const std::string& who) const {
    if (!memory) return read_at(fd, destination, bytes, offset, who);
    if (offset > size || bytes > size - offset) return false;
    if (bytes) std::memcpy(destination, memory->data() + offset, bytes);
    return true;
  }
};

std::string input_name(const fs::path& path, const std::string& role) {
  return role + " " + quoted(path) + (path == standard_stream ? " (standard input)" : "");
}

// ---- npy header dict ----

// Header text as an error message shows it: on one line (control characters and bytes beyond
// ASCII escaped as Python would), and cut short after 60 characters.
std::string printable(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  constexpr size_t shown = 60;
  std::string out;
  for (size_t i = 0; i < text.size() && i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c >= 0x7f)
      out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    else
      out += char(c);
  }
  return text.size() > shown ? out + "..." : out;
}

// What the header says, checked as NumPy's read_array_header checks it.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
};

// A Python literal as ast.literal_eval reads it: the forms an npy header may use.
struct PyLiteral {
  enum class Kind { integer, boolean, none, string, bytes, number, tuple, list, dict, set };
  Kind kind = Kind::none;
  bool negative = false;         // integer
  uint64_t magnitude = 0;        // integer; boolean: 0 or 1
  bool too_large = false;        // integer beyond 2^64 - 1
  bool signed_operand = false;   // a unary + or - was applied (literal_eval takes one only)
  std::string text;              // string, bytes: the value
  std::vector<PyLiteral> items;  // tuple, list, set; dict: key, value, key, value, ...
  std::string_view source;       // as written (for messages)
};

// Reads the header dict as NumPy does: ast.literal_eval of the text (after, for format versions
// 1.0 and 2.0, dropping the Python 2 'L' after integers), so every spelling NumPy loads is read:
// quotes ' or " (also triple, with escapes, prefixes r/u, adjacent strings joined), integers with
// underscores, 0x/0o/0b prefixes and one sign, parentheses, trailing commas, comments, line
// continuations, any whitespace and no final newline. A key given twice takes its last value, as
// in Python.
class PyLiteralParser {
 public:
  PyLiteralParser(std::string_view text, std::string who, bool python2_longs)
      : text_(text), who_(std::move(who)), python2_longs_(python2_longs) {}

  PyLiteral parse() {
    skip_space();
    PyLiteral value = parse_value(0);
    skip_space();
    if (pos_ != text_.size())
      malformed("unexpected " + describe_here() + " after the " +
                (value.kind == PyLiteral::Kind::dict ? std::string("closing '}'") : "value"));
    return value;
  }

  [[noreturn]] void malformed(const std::string& why) const {
    throw Error(who_ + ": malformed .npy header (" + why + ")");
  }

 private:
  static constexpr int max_depth = 200;  // Python's parser nests no deeper either

  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool at_end() const { return pos_ >= text_.size(); }
  static bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
  }
  std::string describe_here() const {
    if (at_end()) return "end of the header";
    const unsigned char c = static_cast<unsigned char>(peek());
    if (c < 0x20 || c >= 0x7f) {
      static constexpr char hex[] = "0123456789abcdef";
      return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
    }
    return "'" + std::string(1, char(c)) + "'";
  }

  // Whitespace, newlines, comments and backslash line continuations (the header is one
  // bracketed expression, inside which Python ignores line breaks).
  void skip_space() {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && peek() != '\n' && peek() != '\r') ++pos_;
      } else if (c == '\\' && (peek(1) == '\n' || peek(1) == '\r')) {
        pos_ += peek(1) == '\r' && peek(2) == '\n' ? 3 : 2;
        if (at_end()) malformed("a line continuation at the end of the header");
      } else {
        return;
      }
    }
  }

  void expect(char c, const char* where) {
    skip_space();
    if (peek() != c)
      malformed(std::string("expected '") + c + "' " + where + ", found " + describe_here());
    ++pos_;
  }

  PyLiteral parse_value(int depth) {
    if (depth > max_depth) malformed("nested too deeply");
    skip_space();
    const size_t start = pos_;
    PyLiteral value;
    const char c = peek();
    if (c == '(' || c == '[' || c == '{') {
      value = parse_container(depth);
    } else if (c == '+' || c == '-') {
      ++pos_;
      value = parse_value(depth + 1);
      const bool numeric =
          value.kind == PyLiteral::Kind::integer || value.kind == PyLiteral::Kind::number;
      if (!numeric || value.signed_operand) malformed("a sign applies only to a number, once");
      if (c == '-') value.negative = !value.negative && value.magnitude != 0;
      value.signed_operand = true;
    } else if (c == '\'' || c == '"' || starts_string()) {
      value = parse_strings();
    } else if ((c >= '0' && c <= '9') || (c == '.' && peek(1) >= '0' && peek(1) <= '9')) {
      value = parse_number();
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t begin = pos_;
      while (is_identifier_char(peek())) ++pos_;
      const std::string_view name = text_.substr(begin, pos_ - begin);
      if (name == "True" || name == "False") {
        value.kind = PyLiteral::Kind::boolean;
        value.magnitude = name == "True";
      } else if (name == "None") {
        value.kind = PyLiteral::Kind::none;
      } else {
        malformed("'" + printable(name) + "' is not a literal");
      }
    } else {
      malformed("expected a value, found " + describe_here());
    }
    value.source = text_.substr(start, pos_ - start);
    return value;
  }

  PyLiteral parse_container(int depth) {
    const char open = peek();
    const char close = open == '(' ? ')' : open == '[' ? ']' : '}';
    ++pos_;
    PyLiteral value;
    value.kind = open == '('   ? PyLiteral::Kind::tuple
                 : open == '[' ? PyLiteral::Kind::list
                               : PyLiteral::Kind::dict;
    skip_space();
    if (peek() == close) {
      ++pos_;
      return value;  // (), [], {}
    }
    bool first = true, comma = false;
    while (true) {
      skip_space();
      if (peek() == close && !first) break;
      value.items.push_back(parse_value(depth + 1));
      skip_space();
      if (open == '{') {
        if (first && peek() != ':') value.kind = PyLiteral::Kind::set;
        if (value.kind == PyLiteral::Kind::dict) {
          expect(':', "after a key of the dict");
          value.items.push_back(parse_value(depth + 1));
          skip_space();
        }
      }
      first = false;
      if (peek() == ',') {
        ++pos_;
        comma = true;
        continue;
      }
      if (peek() != close)
        malformed(std::string("expected ',' or '") + close + "', found " + describe_here());
      break;
    }
    ++pos_;
    // (x) is x itself: only a comma makes a tuple.
    if (open == '(' && value.items.size() == 1 && !comma) {
      PyLiteral inner = std::move(value.items.front());
      return inner;
    }
    return value;
  }

  // A string prefix (r, u, b, br, rb in any case) followed by a quote.
  bool starts_string() const {
    size_t i = 0;
    while (i < 2 && std::string_view("rRuUbBfF").find(peek(i)) != std::string_view::npos) ++i;
    return i > 0 && (peek(i) == '\'' || peek(i) == '"');
  }

  // One or more adjacent string literals, joined.
  PyLiteral parse_strings() {
    PyLiteral value;
    bool first = true;
    while (true) {
      bool bytes = false;
      const std::string piece = parse_string(bytes);
      const PyLiteral::Kind kind = bytes ? PyLiteral::Kind::bytes : PyLiteral::Kind::string;
      if (!first && kind != value.kind) malformed("bytes and str literals are joined");
      value.kind = kind;
      value.text += piece;
      first = false;
      const size_t before = pos_;
      skip_space();
      if (!(peek() == '\'' || peek() == '"' || starts_string())) {
        pos_ = before;
        return value;
      }
    }
  }

  std::string parse_string(bool& bytes) {
    std::string prefix;
    while (peek() != '\'' && peek() != '"')
      prefix += char(std::tolower(static_cast<unsigned char>(text_[pos_++])));
    if (prefix.find('f') != std::string::npos) malformed("f-strings are not literals");
    if (!prefix.empty() && prefix != "r" && prefix != "u" && prefix != "b" && prefix != "br" &&
        prefix != "rb")
      malformed("'" + prefix + "' is not a string prefix");
    const bool raw = prefix.find('r') != std::string::npos;
    bytes = prefix.find('b') != std::string::npos;
    const char quote = peek();
    const bool triple = peek(1) == quote && peek(2) == quote;
    pos_ += triple ? 3 : 1;
    std::string s;
    while (true) {
      if (at_end()) malformed("unterminated string");
      const char c = peek();
      if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
        pos_ += triple ? 3 : 1;
        return s;
      }
      if ((c == '\n' || c == '\r') && !triple) malformed("unterminated string");
      if (bytes && static_cast<unsigned char>(c) >= 0x80)
        malformed("a bytes literal holds a non-ASCII character");
      if (c != '\\') {
        s += c;
        ++pos_;
        continue;
      }
      if (raw) {  // the backslash stays, and keeps the next character from ending the string
        s += c;
        ++pos_;
        if (!at_end()) s += text_[pos_++];
        continue;
      }
      ++pos_;
      parse_escape(s, bytes);
    }
  }

  void parse_escape(std::string& s, bool bytes) {
    if (at_end()) malformed("unterminated string");
    const char c = text_[pos_++];
    auto hex_digits = [&](int count) {
      uint32_t v = 0;
      for (int i = 0; i < count; ++i) {
        const char h = peek();
        const int digit = h >= '0' && h <= '9'   ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                 : -1;
        if (digit < 0) malformed("a truncated \\x, \\u or \\U escape");
        v = v * 16 + uint32_t(digit);
        ++pos_;
      }
      return v;
    };
    switch (c) {
      case '\n':
        return;
      case '\r':
        if (peek() == '\n') ++pos_;
        return;
      case '\\':
      case '\'':
      case '"':
        s += c;
        return;
      case 'a':
        s += '\a';
        return;
      case 'b':
        s += '\b';
        return;
      case 'f':
        s += '\f';
        return;
      case 'n':
        s += '\n';
        return;
      case 'r':
        s += '\r';
        return;
      case 't':
        s += '\t';
        return;
      case 'v':
        s += '\v';
        return;
      case 'x':
        append_code_point(s, hex_digits(2), bytes);
        return;
      default:
        break;
    }
    if (c >= '0' && c <= '7') {
      uint32_t v = uint32_t(c - '0');
      for (int i = 0; i < 2 && peek() >= '0' && peek() <= '7'; ++i)
        v = v * 8 + uint32_t(text_[pos_++] - '0');
      append_code_point(s, v, bytes);
      return;
    }
    if (!bytes && (c == 'u' || c == 'U')) {
      const uint32_t v = hex_digits(c == 'u' ? 4 : 8);
      if (v > 0x10ffff) malformed("a \\U escape beyond Unicode");
      append_code_point(s, v, false);
      return;
    }
    if (!bytes && c == 'N') malformed("\\N{...} escapes are not supported");
    s += '\\';  // an unknown escape keeps its backslash
    s += c;
  }

  // str: as UTF-8 (the header's text is decoded so); bytes: the byte itself.
  static void append_code_point(std::string& s, uint32_t v, bool bytes) {
    if (bytes || v < 0x80) {
      s += char(v);
    } else if (v < 0x800) {
      s += char(0xc0 | (v >> 6));
      s += char(0x80 | (v & 0x3f));
    } else if (v < 0x10000) {
      s += char(0xe0 | (v >> 12));
      s += char(0x80 | ((v >> 6) & 0x3f));
      s += char(0x80 | (v & 0x3f));
    } else {
      s += char(0xf0 | (v >> 18));
      s += char(0x80 | ((v >> 12) & 0x3f));
      s += char(0x80 | ((v >> 6) & 0x3f));
      s += char(0x80 | (v & 0x3f));
    }
  }

  // Digits of `base` with single underscores between them (Python's digitpart); at least one.
  std::string digit_part(int base, bool underscore_first = false) {
    auto is_digit = [base](char d) {
      if (base == 16) return std::isxdigit(static_cast<unsigned char>(d)) != 0;
      return d >= '0' && d < char('0' + base);
    };
    std::string digits;
    bool want_digit = true;
    while (true) {
      if (peek() == '_' && (underscore_first || !digits.empty()) && is_digit(peek(1))) {
        ++pos_;
        underscore_first = false;
      } else if (!is_digit(peek())) {
        break;
      }
      digits += peek();
      ++pos_;
      want_digit = false;
      underscore_first = false;
    }
    if (want_digit) malformed("a number without digits");
    if (peek() == '_' || (base != 16 && std::isdigit(static_cast<unsigned char>(peek()))))
      malformed("an invalid number near " + describe_here());
    return digits;
  }

  PyLiteral parse_number() {
    const size_t start = pos_;
    PyLiteral value;
    value.kind = PyLiteral::Kind::integer;
    std::string digits;
    int base = 10;
    const char prefix = char(std::tolower(static_cast<unsigned char>(peek(1))));
    if (peek() == '0' && (prefix == 'x' || prefix == 'o' || prefix == 'b')) {
      base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : 2;
      pos_ += 2;
      digits = digit_part(base, true);
    } else {
      bool fractional = false;
      if (peek() != '.') digits = digit_part(10);
      if (peek() == '.') {
        fractional = true;
        ++pos_;
        if (std::isdigit(static_cast<unsigned char>(peek()))) digit_part(10);
      }
      if (peek() == 'e' || peek() == 'E') {
        const size_t sign = peek(1) == '+' || peek(1) == '-' ? 1 : 0;
        if (std::isdigit(static_cast<unsigned char>(peek(1 + sign)))) {
          fractional = true;
          pos_ += 1 + sign;
          digit_part(10);
        }
      }
      if (peek() == 'j' || peek() == 'J') {
        fractional = true;
        ++pos_;
      }
      if (fractional) {
        value.kind = PyLiteral::Kind::number;  // a float or complex number
        if (is_identifier_char(peek())) malformed("an invalid number near " + describe_here());
        return value;
      }
      if (digits.size() > 1 && digits[0] == '0' &&
          digits.find_first_not_of('0') != std::string::npos)
        malformed("the integer " + printable(text_.substr(start, pos_ - start)) +
                  " has a leading zero, which Python refuses");
    }
    for (char d : digits) {
      const uint64_t digit = uint64_t(std::isdigit(static_cast<unsigned char>(d))
                                          ? d - '0'
                                          : std::tolower(static_cast<unsigned char>(d)) - 'a' + 10);
      if (value.magnitude > (std::numeric_limits<uint64_t>::max() - digit) / uint64_t(base))
        value.too_large = true;
      else
        value.magnitude = value.magnitude * uint64_t(base) + digit;
    }
    // Python 2's long suffix, dropped by NumPy for format versions 1.0 and 2.0 (_filter_header).
    if (python2_longs_) {
      size_t after = pos_;
      while (after < text_.size() &&
             (text_[after] == ' ' || text_[after] == '\t' || text_[after] == '\f'))
        ++after;
      if (after < text_.size() && text_[after] == 'L' &&
          (after + 1 == text_.size() || !is_identifier_char(text_[after + 1])))
        pos_ = after + 1;
    }
    if (is_identifier_char(peek())) malformed("an invalid number near " + describe_here());
    return value;
  }

  std::string_view text_;
  std::string who_;
  bool python2_longs_;
  size_t pos_ = 0;
};

// The dict's three entries, checked as NumPy's read_array_header checks them.
NpyHeader read_npy_header(std::string_view text, const std::string& who, bool python2_longs) {
  PyLiteralParser parser(text, who, python2_longs);
  const PyLiteral dict = parser.parse();
  if (dict.kind != PyLiteral::Kind::dict) parser.malformed("it is not a dict");
  const PyLiteral *descr = nullptr, *fortran_order = nullptr, *shape = nullptr;
  for (size_t i = 0; i < dict.items.size(); i += 2) {
    const PyLiteral& key = dict.items[i];
    const PyLiteral* value = &dict.items[i + 1];
    if (key.kind == PyLiteral::Kind::string && key.text == "descr")
      descr = value;
    else if (key.kind == PyLiteral::Kind::string && key.text == "fortran_order")
      fortran_order = value;
    else if (key.kind == PyLiteral::Kind::string && key.text == "shape")
      shape = value;
    else
      parser.malformed("unexpected key " + printable(key.source));
  }
  if (!descr || !fortran_order || !shape)
    parser.malformed("the header lacks one of 'descr', 'fortran_order', 'shape'");

  NpyHeader header;
  if (descr->kind == PyLiteral::Kind::list)
    throw Error(who +
                ": structured (record) dtypes are not supported; gpusort sorts plain arrays of "
                "u32, i32, f32, u64, i64 or f64");
  if (descr->kind == PyLiteral::Kind::tuple)
    throw Error(who + ": subarray dtype " + printable(descr->source) +
                " is not supported; gpusort sorts plain arrays of u32, i32, f32, u64, i64 or f64");
  if (descr->kind != PyLiteral::Kind::string)
    parser.malformed("'descr' is " + printable(descr->source) + ", not a dtype string");
  header.descr = descr->text;

  if (fortran_order->kind != PyLiteral::Kind::boolean)
    parser.malformed("'fortran_order' is " + printable(fortran_order->source) +
                     ", neither True nor False");
  header.fortran_order = fortran_order->magnitude != 0;

  if (shape->kind == PyLiteral::Kind::integer && shape->source.substr(0, 1) == "(")
    parser.malformed("'shape' is " + printable(shape->source) +
                     ", an integer in parentheses rather than a tuple such as (" +
                     std::to_string(shape->magnitude) + ",)");
  if (shape->kind != PyLiteral::Kind::tuple)
    parser.malformed("'shape' is " + printable(shape->source) + ", not a tuple of integers");
  for (const PyLiteral& entry : shape->items) {
    // (NumPy's header check lets True and False pass as integers, but np.load then fails.)
    if (entry.kind != PyLiteral::Kind::integer)
      parser.malformed("the shape entry " + printable(entry.source) + " is not an integer");
    if (entry.negative)
      parser.malformed("the shape entry " + printable(entry.source) + " is negative");
    if (entry.too_large)
      parser.malformed("the shape entry " + printable(entry.source) + " overflows");
    header.shape.push_back(entry.magnitude);
  }
  return header;
}

// The element type of a dtype string, as numpy.dtype reads it: an optional byte order ('<'
// little, '>' big, '=' native, '|' not applicable, which for these multi-byte types means native
// too) and a type code ("u4", or a character code: "I", "q", ...), or a sized name ("uint32").
KeyType element_of_descr(const std::string& descr, const std::string& who) {
  static const std::map<std::string_view, KeyType> codes{
      {"u4", KeyType::u32},
      {"i4", KeyType::i32},
      {"f4", KeyType::f32},
      {"u8", KeyType::u64},
      {"i8", KeyType::i64},
      {"f8", KeyType::f64},
      {"I", KeyType::u32},
      {"i", KeyType::i32},
      {"f", KeyType::f32},
      {"Q", KeyType::u64},
      {"q", KeyType::i64},
      {"d", KeyType::f64},
      // C's long, as numpy on this machine reads 'l' and 'L'
      {"l", sizeof(long) == 8 ? KeyType::i64 : KeyType::i32},
      {"L", sizeof(long) == 8 ? KeyType::u64 : KeyType::u32}};
  static const std::map<std::string_view, KeyType> names{
      {"uint32", KeyType::u32}, {"int32", KeyType::i32}, {"float32", KeyType::f32},
      {"uint64", KeyType::u64}, {"int64", KeyType::i64}, {"float64", KeyType::f64}};
  const std::string supported = "<u4 <i4 <f4 <u8 <i8 <f8, also with '|', '=' or no byte order";
  if (auto named = names.find(descr); named != names.end()) return named->second;
  const char order = descr.empty() ? '\0' : descr[0];
  const bool has_order = order == '<' || order == '>' || order == '=' || order == '|';
  auto code = codes.find(std::string_view(descr).substr(has_order ? 1 : 0));
  if (code != codes.end()) {
    const bool big = order == '>' || (order != '<' && std::endian::native == std::endian::big);
    if (!big) return code->second;
  }
  if (order == '>')
    throw Error(who + ": big-endian dtype '" + printable(descr) +
                "' is not supported (convert it with "
                "arr.astype(arr.dtype.newbyteorder('<')); supported: " +
                supported + ")");
  if (descr.find('O') != std::string::npos)
    throw Error(who + ": object arrays (dtype '" + printable(descr) +
                "') are not supported (supported: " + supported + ")");
  throw Error(who + ": unsupported dtype '" + printable(descr) + "' (supported: " + supported +
              ")");
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

void check_count(uint64_t count, const std::string& who, bool any_count) {
  if (any_count && count > any_count_limit)
    throw Error(who + ": holds " + std::to_string(count) + " elements, more than the " +
                std::to_string(any_count_limit) + " (2^56) gpusort can address");
  if (!any_count && count > max_elements)
    throw Error(who + ": holds " + std::to_string(count) +
                " elements, more than gpusort's maximum of " + std::to_string(max_elements) +
                " (2^31 - 1) for segmented sorts and --indices-out (plain sorts take any count)");
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

// ---- outputs: interruption, temporary names, stale temporaries ----

// Temporary files to remove when the process is interrupted. Kept in fixed buffers so that the
// handler calls only async-signal-safe functions.
constexpr int max_interruptible_outputs = 8;
char interrupted_paths[max_interruptible_outputs][PATH_MAX];
volatile sig_atomic_t interrupted_path_used[max_interruptible_outputs];

// 0: no commit is running; 1: a commit is running; s + 2: signal s arrived during the commit and
// waits for its end. Signals may reach any thread (the Vulkan driver has its own), so blocking
// them in the committing thread alone is not enough: the handler itself defers them.
std::atomic<int> commit_state{0};
static_assert(std::atomic<int>::is_always_lock_free, "used in a signal handler");

// The launcher's SIGCONT once it has interrupted the process (interrupt_on_launcher_continue).
std::atomic<int> launcher_interruption{0};

// Signals whose default action ends the process and which can be caught.
// (SIGXFSZ is ignored instead, from the start of main: a write beyond the file-size limit then
// fails with EFBIG and is reported as such.)
constexpr std::array<int, 8> terminating_signals{SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                                                 SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU};

// Removes the temporary files; then a terminating signal ends the process by its default action,
// and the launcher's SIGCONT is recorded for interruption().
void interrupt(int signal_number) {
  for (int i = 0; i < max_interruptible_outputs; ++i)
    if (interrupted_path_used[i]) ::unlink(interrupted_paths[i]);
  if (signal_number == SIGCONT) {
    launcher_interruption.store(SIGCONT);
    return;
  }
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

// Interrupts at once, or after the running commit.
void interrupt_unless_committing(int signal_number) {
  int expected = 1;
  if (commit_state.compare_exchange_strong(expected, signal_number + 2)) return;
  if (expected >= 2) return;  // one signal already waits for the commit to end
  interrupt(signal_number);
}

void on_terminating_signal(int signal_number) {
  interrupt_unless_committing(signal_number);
}

// A SIGCONT sent (kill) by the parent process, the launcher's daemon, interrupts; one from
// anywhere else (the shell's job control, the kernel) only continues the process, as always.
void on_continue(int, siginfo_t* info, void*) {
  if (info->si_code == SI_USER && info->si_pid == ::getppid()) interrupt_unless_committing(SIGCONT);
}

void install_signal_handlers() {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = on_terminating_signal;
    sigfillset(&action.sa_mask);
    for (int s : terminating_signals) {
      struct sigaction previous {};
      // An ignored signal stays ignored (nohup's SIGHUP, a background job's SIGINT).
      if (::sigaction(s, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
      ::sigaction(s, &action, nullptr);
    }
    // A pipe whose reader went away is reported as a write error instead of ending the process
    // silently with its temporary files left behind.
    ::signal(SIGPIPE, SIG_IGN);
    ::signal(SIGXFSZ, SIG_IGN);  // main ignores it already; kept for other callers
    return true;
  }();
  (void)installed;
}

// Returns the slot holding `path`, or -1 when there is none free (then an interruption may
// leave the temporary file behind, never a half-written destination).
int remember_temporary(const std::string& path) {
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

// Holds every catchable signal while alive: those sent to this thread are blocked, those that
// reach another thread wait in commit_state. At the end the first one takes effect.
class SignalHold {
 public:
  SignalHold() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous_);
    commit_state.store(1);
  }
  ~SignalHold() {
    const int state = commit_state.exchange(0);
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    if (state >= 2) interrupt(state - 2);
  }
  SignalHold(const SignalHold&) = delete;
  SignalHold& operator=(const SignalHold&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace

void interrupt_on_launcher_continue() {
  install_signal_handlers();
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_sigaction = on_continue;
    action.sa_flags = SA_SIGINFO | SA_RESTART;  // the process goes on: no call fails with EINTR
    sigfillset(&action.sa_mask);
    ::sigaction(SIGCONT, &action, nullptr);
    return true;
  }();
  (void)installed;
}

int interruption() {
  return launcher_interruption.load();
}

RemovedOnInterruption::RemovedOnInterruption(const fs::path& path) {
  install_signal_handlers();
  slot_ = remember_temporary(path.string());
}

RemovedOnInterruption::~RemovedOnInterruption() {
  forget_temporary(slot_);
}

namespace {

// Temporary files (and the backups of a commit) are named ".gpusort-<pid>-<6 letters or
// digits>.tmp": short enough for any directory's NAME_MAX, and naming the process that owns it.
constexpr std::string_view temporary_prefix = ".gpusort-", temporary_suffix = ".tmp";
constexpr size_t temporary_random_chars = 6;

std::string temporary_name(std::mt19937_64& rng) {
  static constexpr std::string_view alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string name = std::string(temporary_prefix) + std::to_string(::getpid()) + "-";
  for (size_t i = 0; i < temporary_random_chars; ++i) name += alphabet[rng() % alphabet.size()];
  return name + std::string(temporary_suffix);
}

std::mt19937_64& name_generator() {
  static std::mt19937_64 rng = [] {
    std::random_device device;
    const uint64_t time = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    return std::mt19937_64((uint64_t(device()) << 32) ^ device() ^ time ^ uint64_t(::getpid()));
  }();
  return rng;
}

// The process id in a name of exactly the temporary form, else 0.
pid_t temporary_owner(std::string_view name) {
  if (name.size() < temporary_prefix.size() + temporary_suffix.size() ||
      name.substr(0, temporary_prefix.size()) != temporary_prefix ||
      name.substr(name.size() - temporary_suffix.size()) != temporary_suffix)
    return 0;
  std::string_view middle = name.substr(
      temporary_prefix.size(), name.size() - temporary_prefix.size() - temporary_suffix.size());
  const size_t dash = middle.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash > 9 || middle[0] == '0' ||
      middle.size() - dash - 1 != temporary_random_chars)
    return 0;
  pid_t pid = 0;
  for (char c : middle.substr(0, dash)) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + (c - '0');
  }
  for (char c : middle.substr(dash + 1))
    if (!std::isalnum(static_cast<unsigned char>(c))) return 0;
  return pid;
}

// Removes the temporary files in `directory` that runs killed before they could clean up left
// behind: those whose owner is no longer alive. The owner keeps its temporary file locked
// (flock) while it runs, so a live owner that this process cannot see (another PID namespace)
// keeps its file too. Best effort: whatever fails is left alone.
void remove_stale_temporaries(const fs::path& directory) {
  const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  DIR* listing = ::fdopendir(dir);
  if (!listing) {
    ::close(dir);
    return;
  }
  const pid_t self = ::getpid();
  while (const dirent* entry = ::readdir(listing)) {
    const pid_t owner = temporary_owner(entry->d_name);
    if (owner == 0 || owner == self || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
    FileDescriptor file{
        ::openat(dir, entry->d_name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)};
    struct stat opened, named;
    if (file.fd < 0 || ::fstat(file.fd, &opened) != 0 || !S_ISREG(opened.st_mode) ||
        ::flock(file.fd, LOCK_EX | LOCK_NB) != 0)
      continue;
    if (::fstatat(dir, entry->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        named.st_dev == opened.st_dev && named.st_ino == opened.st_ino)
      ::unlinkat(dir, entry->d_name, 0);
  }
  ::closedir(listing);
}

// Creates and locks a new temporary file in `directory`; -1 with errno set on failure.
int create_temporary(const fs::path& directory, fs::path& path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    path = directory / temporary_name(name_generator());
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      return -1;
    }
    // A cleaner in another PID namespace may lock and remove the file between the open and the
    // flock; then its name is gone and another one is tried.
    struct stat st;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      ::close(fd);
      continue;
    }
    if (::fstat(fd, &st) == 0 && st.st_nlink == 0) {
      ::close(fd);
      continue;
    }
    return fd;
  }
  errno = EEXIST;
  return -1;
}

// Hard-links `target` under a new temporary name in its directory; empty with errno on failure.
fs::path link_backup(const fs::path& target, const fs::path& directory) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path path = directory / temporary_name(name_generator());
    if (::link(target.c_str(), path.c_str()) == 0) return path;
    if (errno != EEXIST) return {};
  }
  errno = EEXIST;
  return {};
}

fs::path directory_of(const fs::path& file) {
  fs::path directory = file.parent_path();
  return directory.empty() ? fs::path(".") : directory;
}

// Follows symbolic links, also dangling ones, to the path they finally name (at most 40 links,
// as the kernel). Where a link cannot be read, the path reached so far.
fs::path follow_links(fs::path path) {
  for (int depth = 0; depth < 40; ++depth) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::error_code ec;
    fs::path target = fs::read_symlink(path, ec);
    if (ec) return path;
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  return path;
}

// A path to compare: absolute, links followed, normalized; never throws.
fs::path comparable_path(const fs::path& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(follow_links(path), ec);
  if (ec) return path.lexically_normal();
  fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : canonical;
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
                          std::optional<KeyType> declared, const std::string& type_option,
                          bool any_count, InputReaders readers) {
  ArrayFile file;
  file.path = path;
  file.role = role;
  file.readers = readers;
  const std::string who = input_name(path, role);
  FileDescriptor fd{-1};
  InputBytes input;
  if (path == standard_stream) {
    file.standard_input = read_standard_input(who);
    input.memory = file.standard_input.get();
    input.size = input.memory->size();
  } else {
    fd.fd = open_regular_file(path, who, readers, input.size);
    input.fd = fd.fd;
  }
  const uint64_t size = input.size;

  std::array<char, npy_magic.size()> magic{};
  bool is_npy =
      size >= magic.size() && input.read(magic.data(), magic.size(), 0, who) && magic == npy_magic;
  if (!is_npy) {
    // No bytes at all: an empty raw array when the type is given (a regular file and standard
    // input alike), else nothing says what it holds.
    if (!declared && size == 0)
      throw Error(who + ": " +
                  (path == standard_stream ? "standard input is empty" : "the file is empty") +
                  " (no .npy header gives an element type: pass " + type_option +
                  " to sort an empty array)");
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
    check_count(file.count, who, any_count);
    return file;
  }

  file.format = FileFormat::npy;
  uint8_t version[2];
  if (!input.read(version, 2, magic.size(), who))
    throw Error(who + ": malformed .npy file (ends inside the header)");
  // The versions that exist: 1.0 (u16 header length), 2.0 (u32), 3.0 (u32, UTF-8 header).
  uint64_t length_offset = magic.size() + 2, header_length = 0, length_bytes = 0;
  if (version[1] == 0 && version[0] == 1)
    length_bytes = 2;
  else if (version[1] == 0 && (version[0] == 2 || version[0] == 3))
    length_bytes = 4;
  else
    throw Error(who + ": unsupported .npy format version " + std::to_string(version[0]) + "." +
                std::to_string(version[1]) + " (NumPy writes 1.0, 2.0 and 3.0)");
  uint8_t length[4] = {};
  if (!input.read(length, length_bytes, length_offset, who))
    throw Error(who + ": malformed .npy file (ends inside the header)");
  for (uint64_t i = 0; i < length_bytes; ++i) header_length |= uint64_t(length[i]) << (8 * i);
  if (header_length > npy_max_header_bytes)
    throw Error(who + ": malformed .npy file (header length " + std::to_string(header_length) +
                " bytes)");
  std::string text(header_length, '\0');
  file.data_offset = length_offset + length_bytes + header_length;
  if (!input.read(text.data(), header_length, length_offset + length_bytes, who))
    throw Error(who + ": malformed .npy file (ends inside the header)");
  // NumPy writes the dict padded with spaces and ends it with a newline, but reads it without.
  const NpyHeader header = read_npy_header(text, who, version[0] < 3);

  file.element = element_of_descr(header.descr, who);
  if (header.shape.size() != 1)
    throw Error(who + ": has shape " + shape_text(header.shape) +
                "; only 1-D arrays are supported" +
                (header.fortran_order ? " (and it is in Fortran order)" : ""));
  // A 1-D array is laid out the same in Fortran and C order: NumPy loads either.
  if (declared && *declared != file.element)
    throw Error(who + ": holds dtype '" + header.descr + "' (" + to_string(file.element) +
                ") but " + type_option + " says " + to_string(*declared));
  file.count = header.shape.front();
  check_count(file.count, who, any_count);
  const uint64_t data_bytes = file.count * key_bytes(file.element);
  const uint64_t present = size - std::min(size, file.data_offset);
  if (present < data_bytes)
    throw Error(who + ": truncated: the header declares " + std::to_string(file.count) +
                " elements (" + std::to_string(data_bytes) + " bytes) but only " +
                std::to_string(present) + " bytes follow it");
  if (present > data_bytes)
    throw Error(who + ": malformed .npy file (" + std::to_string(present - data_bytes) +
                " bytes after the " + std::to_string(file.count) +
                " elements the header declares; np.load would ignore them, gpusort refuses "
                "rather than drop data)");
  return file;
}

ArrayReader::ArrayReader(const ArrayFile& file)
    : file_(file), who_(input_name(file.path, file.role)) {
  const uint64_t bytes = file.data_offset + file.count * key_bytes(file.element);
  if (file.standard_input) {
    if (file.standard_input->size() != bytes) throw Error(who_ + ": changed size while being read");
    return;
  }
  uint64_t size = 0;
  fd_ = open_regular_file(file.path, who_, file.readers, size);
  if (size != bytes) {
    ::close(fd_);
    throw Error(who_ + ": changed size while being read");
  }
}

ArrayReader::~ArrayReader() {
  if (fd_ >= 0) ::close(fd_);
}

void ArrayReader::read(uint64_t offset, void* destination, uint64_t bytes) const {
  if (file_.standard_input) {
    if (bytes)
      std::memcpy(destination, file_.standard_input->data() + file_.data_offset + offset, bytes);
    return;
  }
  if (!read_at(fd_, destination, bytes, file_.data_offset + offset, who_))
    throw Error(who_ + ": changed size while being read");
}

void read_array_data(const ArrayFile& file, void* destination) {
  ArrayReader(file).read(0, destination, file.count * key_bytes(file.element));
}

bool same_file(const fs::path& a, const fs::path& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return comparable_path(a) == comparable_path(b);
}

// ---- PendingOutput ----

PendingOutput::PendingOutput(fs::path destination, std::string role)
    : requested_(destination), destination_(std::move(destination)), role_(std::move(role)) {
  install_signal_handlers();
  if (requested_ == standard_stream) {
    stream_ = true;
    return;
  }
  struct stat st;
  if (::stat(destination_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(who() + ": is a directory");
    if (S_ISSOCK(st.st_mode))
      throw Error(who() +
                  ": is a socket (gpusort writes regular files, FIFOs, devices and standard "
                  "output, '-')");
    if (!S_ISREG(st.st_mode)) {
      stream_ = true;  // a FIFO or device: written into, never replaced
      return;
    }
    // An existing regular file, perhaps named through links: the file is replaced, not a link.
    std::error_code ec;
    fs::path resolved = fs::canonical(destination_, ec);
    if (ec) throw Error(who() + ": cannot resolve its path: " + ec.message());
    destination_ = resolved;
  } else if (errno == ENOENT) {
    destination_ = follow_links(destination_);  // a dangling link: its target is created
  } else {
    throw Error(system_error(who() + ": cannot examine"));
  }

  const fs::path directory = directory_of(destination_);
  remove_stale_temporaries(directory);
  fd_ = create_temporary(directory, temporary_);
  if (fd_ < 0)
    throw Error(system_error(who() + ": cannot create a temporary file in " + quoted(directory)));
  interrupt_slot_ = remember_temporary(temporary_.string());
  if (::fchmod(fd_, new_file_mode(destination_)) != 0) {
    const std::string failure =
        system_error(who() + ": cannot set the temporary file's permissions");
    ::unlink(temporary_.c_str());  // the destructor does not run for a throwing constructor
    ::close(fd_);
    forget_temporary(interrupt_slot_);
    throw Error(failure);
  }
}

PendingOutput::~PendingOutput() {
  if (!temporary_gone_ && !temporary_.empty()) ::unlink(temporary_.c_str());
  if (fd_ >= 0) ::close(fd_);  // after the unlink: the lock keeps cleaners away until then
  forget_temporary(interrupt_slot_);
}

std::string PendingOutput::who() const {
  return role_ + " " + quoted(requested_) +
         (requested_ == standard_stream ? " (standard output)" : "");
}

void PendingOutput::write_bytes(const void* data, uint64_t bytes) {
  write_all(fd_, data, bytes, who(), temporary_file_failure);
}

void PendingOutput::write_array(FileFormat format, KeyType element, const void* data,
                                uint64_t count) {
  write_header(format, element, count);
  write_at(0, data, count * key_bytes(element));
}

void PendingOutput::write_header(FileFormat format, KeyType element, uint64_t count) {
  const std::string header = format == FileFormat::npy ? npy_header(element, count) : "";
  data_offset_ = header.size();
  if (stream_) {
    stream_data_.reserve(header.size() + count * key_bytes(element));
    stream_data_ = header;
    stream_data_.resize(header.size() + count * key_bytes(element));
  } else {
    write_bytes(header.data(), header.size());
  }
}

void PendingOutput::write_at(uint64_t offset, const void* data, uint64_t bytes) {
  if (stream_) {
    std::memcpy(stream_data_.data() + data_offset_ + offset, data, bytes);
    return;
  }
  const auto* in = static_cast<const char*>(data);
  uint64_t at = data_offset_ + offset;
  const uint64_t begin = at;
  while (bytes > 0) {
    size_t chunk = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    ssize_t put = ::pwrite(fd_, in, chunk, off_t(at));
    if (put < 0) {
      if (errno == EINTR) continue;
      throw Error(write_failure(who(), temporary_file_failure));
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
  if (stream_ || fd_ < 0) return;
  if (::fsync(fd_) != 0) throw Error(system_error(who() + ": cannot flush to disk"));
}

void PendingOutput::write_stream() {
  FileDescriptor opened{-1};
  int fd = STDOUT_FILENO;
  if (requested_ != standard_stream) {
    opened.fd = ::open(destination_.c_str(), O_WRONLY | O_CLOEXEC);  // a FIFO waits for a reader
    if (opened.fd < 0) throw Error(system_error(who() + ": cannot open"));
    fd = opened.fd;
  }
  write_all(fd, stream_data_.data(), stream_data_.size(), who(), stream_failure);
  if (opened.fd >= 0) {
    const int to_close = opened.fd;
    opened.fd = -1;
    if (::close(to_close) != 0) throw Error(system_error(who() + ": cannot close"));
  }
}

// ---- OutputSet ----

PendingOutput& OutputSet::add(const fs::path& destination, const std::string& role) {
  outputs_.push_back(std::unique_ptr<PendingOutput>(new PendingOutput(destination, role)));
  return *outputs_.back();
}

void OutputSet::commit() {
  std::vector<PendingOutput*> files;
  for (auto& output : outputs_)
    if (!output->is_stream()) {
      output->finish();
      files.push_back(output.get());
    }
  // Streams first: a pipe whose reader went away fails here, before any file is replaced.
  for (auto& output : outputs_)
    if (output->is_stream()) output->write_stream();
  if (files.empty()) return;

  SignalHold hold;
  // Every destination but the last that exists is kept under a second name (a hard link, so the
  // destination itself never goes missing) until all renames succeeded: a failed rename puts it
  // back. The backups' names are temporary names, so a SIGKILL leaves nothing a later run keeps.
  struct Backup {
    fs::path path;
    FileDescriptor lock{-1};  // as a temporary file's: keeps cleaners in other PID namespaces off
  };
  std::vector<Backup> backups(files.size());
  auto remove_backups = [&] {
    for (auto& backup : backups)
      if (!backup.path.empty()) ::unlink(backup.path.c_str());
  };
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    struct stat st;
    if (::lstat(files[i]->destination_.c_str(), &st) != 0) continue;  // new: nothing to put back
    backups[i].path = link_backup(files[i]->destination_, directory_of(files[i]->destination_));
    if (backups[i].path.empty()) {
      const int error = errno;
      remove_backups();
      errno = error;
      throw Error(system_error(files[i]->who() +
                               ": cannot keep the previous file under a second name (a hard link) "
                               "while the outputs are committed together"));
    }
    backups[i].lock.fd = ::open(backups[i].path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (backups[i].lock.fd >= 0) ::flock(backups[i].lock.fd, LOCK_EX | LOCK_NB);
  }

  for (size_t i = 0; i < files.size(); ++i) {
    PendingOutput& output = *files[i];
    if (::rename(output.temporary_.c_str(), output.destination_.c_str()) == 0) {
      output.temporary_gone_ = true;
      forget_temporary(output.interrupt_slot_);
      output.interrupt_slot_ = -1;
      continue;
    }
    const std::string failure =
        system_error(output.who() + ": cannot rename the temporary file into place");
    // Put back what was replaced, last first.
    std::string outcome = "no output was changed";
    for (size_t j = i; j-- > 0;) {
      PendingOutput& done = *files[j];
      Backup& backup = backups[j];
      const bool restored = backup.path.empty()
                                ? ::unlink(done.destination_.c_str()) == 0
                                : ::rename(backup.path.c_str(), done.destination_.c_str()) == 0;
      if (restored) {
        backup.path.clear();
      } else {
        outcome =
            system_error(done.who() + " could not be put back") +
            (backup.path.empty() ? "" : " (the previous file is " + quoted(backup.path) + ")");
        backup.path.clear();  // kept for the user
      }
    }
    remove_backups();
    throw Error(failure + "; " + outcome);
  }
  remove_backups();

  // Make the renames durable.
  std::set<fs::path> directories;
  for (PendingOutput* output : files) directories.insert(directory_of(output->destination_));
  for (const fs::path& directory : directories) {
    FileDescriptor dir{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd >= 0) ::fsync(dir.fd);
  }
}

}  // namespace gpusort::cli

namespace gpusort::cli {

// ---- ScratchFile ----

ScratchFile::ScratchFile(const fs::path& directory, std::string role) : role_(std::move(role)) {
  install_signal_handlers();
  remove_stale_temporaries(directory);
  fd_ = create_temporary(directory, path_);
  if (fd_ < 0)
    throw Error(system_error(role_ + ": cannot create a temporary file in " + quoted(directory)));
  interrupt_slot_ = remember_temporary(path_.string());
}

ScratchFile::~ScratchFile() {
  if (mapped_) ::munmap(mapped_, mapped_bytes_);
  ::unlink(path_.c_str());
  ::close(fd_);
  forget_temporary(interrupt_slot_);
}

void ScratchFile::write_at(uint64_t offset, const void* data, uint64_t bytes) {
  const auto* in = static_cast<const char*>(data);
  while (bytes > 0) {
    const size_t chunk = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    const ssize_t put = ::pwrite(fd_, in, chunk, off_t(offset));
    if (put < 0) {
      if (errno == EINTR) continue;
      throw Error(write_failure(role_ + " " + quoted(path_), temporary_file_failure));
    }
    in += put;
    offset += uint64_t(put);
    bytes -= uint64_t(put);
  }
}

const char* ScratchFile::map(uint64_t bytes) {
  if (bytes == 0) return nullptr;
  void* at = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd_, 0);
  if (at == MAP_FAILED) throw Error(system_error(role_ + " " + quoted(path_) + ": cannot map"));
  ::madvise(at, bytes, MADV_SEQUENTIAL);
  mapped_ = at;
  mapped_bytes_ = bytes;
  return static_cast<const char*>(at);
}

uint64_t free_disk_bytes(const fs::path& file) {
  struct statvfs st;
  if (::statvfs(directory_of(file).c_str(), &st) != 0) return ~uint64_t(0);
  return uint64_t(st.f_bavail) * uint64_t(st.f_frsize);
}

uint64_t file_system_of(const fs::path& file) {
  struct stat st;
  if (::stat(directory_of(file).c_str(), &st) != 0) return 0;
  return uint64_t(st.st_dev);
}

uint64_t file_size_limit() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return ~uint64_t(0);
  return uint64_t(limit.rlim_cur);
}

uint64_t array_file_bytes(FileFormat format, KeyType element, uint64_t count) {
  return (format == FileFormat::npy ? npy_header(element, count).size() : 0) +
         count * key_bytes(element);
}

}  // namespace gpusort::cli
