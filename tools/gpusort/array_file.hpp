// Arrays on disk for the CLI: raw little-endian element arrays and NumPy .npy files (format
// versions 1.0-3.0, told apart by the npy magic), plus outputs that appear atomically: written
// to a temporary file beside the destination, fsync'd, and renamed over it only on success.
#pragma once

#include <cstdint>
#include <filesystem>
#include <gpusort/gpusort.hpp>
#include <optional>
#include <string>

namespace gpusort::cli {

enum class FileFormat { raw, npy };

// What an input file holds, learned from its size and (npy) header without reading the data.
// Every problem is reported as gpusort::Error whose text starts with the file's role and path.
struct ArrayFile {
  std::filesystem::path path;
  std::string role;  // "keys file", "values file": how messages name it
  FileFormat format = FileFormat::raw;
  KeyType element = KeyType::u32;
  uint64_t count = 0;
  uint64_t data_offset = 0;  // where the elements start (npy: after the header)
};

// Opens and checks `path`. For raw files the element type is `declared` (required, else an
// error naming `type_option`); for npy files it comes from the header and `declared`, when
// given, must agree. Checks that the data size matches the element count exactly and that the
// count is at most gpusort::max_elements.
ArrayFile open_array_file(const std::filesystem::path& path, const std::string& role,
                          std::optional<KeyType> declared, const std::string& type_option);

// Reads the elements of `file` into `destination` (count * element size bytes).
void read_array_data(const ArrayFile& file, void* destination);

// The elements of an opened ArrayFile, read by byte range from any number of threads at once
// (the CLI streams them straight into gpusort's staging memory).
class ArrayReader {
 public:
  explicit ArrayReader(const ArrayFile& file);
  ~ArrayReader();
  ArrayReader(const ArrayReader&) = delete;
  ArrayReader& operator=(const ArrayReader&) = delete;
  // Reads `bytes` of element data from byte `offset` (0: the first element).
  void read(uint64_t offset, void* destination, uint64_t bytes) const;

 private:
  const ArrayFile& file_;
  std::string who_;
  int fd_ = -1;
};

// The npy dtype text of an element type, e.g. "<u4".
std::string npy_descr(KeyType element);

// True when a and b name the same file: the same inode when both exist, else the same
// normalized absolute path.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// An output file that only appears under its name once complete. The constructor creates the
// temporary file (so an unwritable directory is reported before any work is done); the
// destructor removes it unless commit() ran, and so does SIGINT/SIGTERM/SIGHUP meanwhile.
class PendingOutput {
 public:
  PendingOutput(std::filesystem::path destination, std::string role);
  ~PendingOutput();
  PendingOutput(const PendingOutput&) = delete;
  PendingOutput& operator=(const PendingOutput&) = delete;

  // Writes the whole array in `format` (npy: a version 1.0 header for a 1-D C-order array).
  void write_array(FileFormat format, KeyType element, const void* data, uint64_t count);
  // The same in pieces: the header (nothing for raw), then element bytes by byte range from any
  // number of threads at once (each range's writeback to disk starts at once, so that
  // finish() waits for little).
  void write_header(FileFormat format, KeyType element, uint64_t count);
  void write_at(uint64_t offset, const void* data, uint64_t bytes);
  // Flushes the data to disk and closes the temporary file.
  void finish();
  // Renames the finished temporary file over the destination (atomic on POSIX file systems)
  // and flushes the directory entry.
  void commit();

  const std::filesystem::path& temporary_path() const { return temporary_; }

 private:
  void write_bytes(const void* data, uint64_t bytes);
  std::filesystem::path destination_, temporary_;
  std::string role_;
  int fd_ = -1;
  uint64_t data_offset_ = 0;  // where write_at's offset 0 is (after the npy header)
  bool committed_ = false;
  int interrupt_slot_ = -1;  // where the interruption handler finds temporary_
};

}  // namespace gpusort::cli
