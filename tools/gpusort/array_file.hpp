// Arrays on disk for the CLI: raw little-endian element arrays and NumPy .npy files (format
// versions 1.0, 2.0 and 3.0, told apart by the npy magic), read from regular files or standard
// input ("-"); and outputs that appear atomically and together: each written to a temporary file
// beside its destination, fsync'd, and renamed over it only when every output is ready.
#pragma once

#include <cstdint>
#include <filesystem>
#include <gpusort/gpusort.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpusort::cli {

enum class FileFormat { raw, npy };

// The path that names standard input (as IN or VIN) or standard output (as OUT or VOUT).
inline constexpr const char* standard_stream = "-";

// Who reads an input: this process alone, which takes standard input ("-") where a FIFO or
// device holds the data; or every rank of a sort under mpirun, each its own slice of a regular
// file (standard input reaches none of them).
enum class InputReaders { this_process, every_rank };

// What an input file holds, learned from its size and (npy) header without reading the data.
// Every problem is reported as gpusort::Error whose text starts with the file's role and path.
struct ArrayFile {
  std::filesystem::path path;
  std::string role;  // "keys file", "values file": how messages name it
  InputReaders readers = InputReaders::this_process;  // what a refusal of a FIFO suggests
  FileFormat format = FileFormat::raw;
  KeyType element = KeyType::u32;
  uint64_t count = 0;
  uint64_t data_offset = 0;  // where the elements start (npy: after the header)
  // Standard input ("-") is read whole when opened (a pipe cannot be read twice); its bytes.
  std::shared_ptr<const std::string> standard_input;
};

// Opens and checks `path`: a regular file, or "-" for standard input. Anything else (a FIFO, a
// device, a socket, a directory) is refused without blocking, the message naming what to give
// instead for `readers`. For raw files the element type is
// `declared` (required, else an error naming `type_option`); for npy files it comes from the
// header and `declared`, when given, must agree. An empty input (no byte at all: an empty file or
// standard input) is an empty raw array of the `declared` type; without one, the error says that
// the input is empty. Checks that the data size matches the element
// count exactly and that the count is at most gpusort::max_elements, or with `any_count` (plain
// sorts: beyond max_elements they go out of core) at most any_count_limit.
ArrayFile open_array_file(const std::filesystem::path& path, const std::string& role,
                          std::optional<KeyType> declared, const std::string& type_option,
                          bool any_count = false,
                          InputReaders readers = InputReaders::this_process);
// The most elements of a file a plain sort takes (2^56: its bytes fit 64 bits, whatever the
// element).
inline constexpr uint64_t any_count_limit = uint64_t(1) << 56;

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
  int fd_ = -1;  // -1 for standard input (read from file_.standard_input)
};

// The npy dtype text of an element type, e.g. "<u4".
std::string npy_descr(KeyType element);

// True when a and b name the same file: the same inode when both exist, else the same
// normalized absolute path after following symbolic links (dangling ones too). Never throws.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// One output of the sort command; made by OutputSet::add. Where it goes is decided when it is
// made, before any work:
//  - "-" is standard output, and an existing FIFO, character or block device is written into
//    directly (a stream): not atomically, and only when the outputs are committed;
//  - a symbolic link, dangling or not, is followed to its target, which is the file replaced or
//    created (the link stays);
//  - anything else is a regular file replaced atomically: the data goes to a temporary file
//    ".gpusort-<pid>-<random>.tmp" in the destination's directory, which is renamed over the
//    destination at the commit. Such files left by a run that was killed (SIGKILL, power loss)
//    are removed by a later run writing to the same directory, once their process is gone;
//  - a directory or socket is refused.
class PendingOutput {
 public:
  ~PendingOutput();
  PendingOutput(const PendingOutput&) = delete;
  PendingOutput& operator=(const PendingOutput&) = delete;

  // Writes the whole array in `format` (npy: a version 1.0 header for a 1-D C-order array).
  void write_array(FileFormat format, KeyType element, const void* data, uint64_t count);
  // The same in pieces: the header (nothing for raw), then element bytes by byte range from any
  // number of threads at once. A file output writes each range at once and starts its writeback
  // to disk (so that the commit's fsync waits for little); a stream output keeps the bytes in
  // memory until the commit.
  void write_header(FileFormat format, KeyType element, uint64_t count);
  void write_at(uint64_t offset, const void* data, uint64_t bytes);
  // Flushes a file output's data to disk (the commit does it too).
  void finish();

  bool is_stream() const { return stream_; }
  const std::filesystem::path& temporary_path() const { return temporary_; }

 private:
  friend class OutputSet;
  PendingOutput(std::filesystem::path destination, std::string role);
  std::string who() const;
  void write_bytes(const void* data, uint64_t bytes);
  void write_stream();

  std::filesystem::path requested_;    // as the user named it (for messages)
  std::filesystem::path destination_;  // the file written or replaced (links followed)
  std::filesystem::path temporary_;
  std::string role_;
  bool stream_ = false;
  int fd_ = -1;                  // the temporary file, locked (see array_file.cpp) until the end
  bool temporary_gone_ = false;  // renamed away: never unlink its name again
  int interrupt_slot_ = -1;      // where the interruption handler finds temporary_
  uint64_t data_offset_ = 0;     // where write_at's offset 0 is (after the npy header)
  std::string stream_data_;      // a stream output's bytes (header included) until the commit
};

// The outputs of one command, committed together. A SIGINT, SIGTERM, SIGHUP, SIGQUIT (and the
// other catchable terminating signals) before the commit removes the temporary files and ends
// the process; during the commit it is held until the commit is over.
class OutputSet {
 public:
  // Creates the output (and its temporary file, so that an unwritable directory is reported
  // before any work is done).
  PendingOutput& add(const std::filesystem::path& destination, const std::string& role);

  // Every output must have been written. Flushes the temporary files, writes the streams, then
  // renames the temporary files over their destinations with every catchable signal held. If a
  // rename fails, the destinations already replaced are put back as they were (the previous file
  // is kept as a hard link until all renames succeeded) and the error is thrown: no failure
  // leaves new keys beside old values. Only SIGKILL (or a crash) between two of the renames can.
  void commit();

 private:
  std::vector<std::unique_ptr<PendingOutput>> outputs_;
};

// Interruption of a process that an MPI launcher started (the collective sort under mpirun).
// Open MPI's mpirun ends a job (Ctrl-C on mpirun, a rank that failed) by sending every rank
// SIGCONT, then SIGTERM a second later, then SIGKILL a second after that -- or at once, as soon as
// a rank has exited -- and reports failure whatever the ranks do after the SIGCONT. So from this
// call on, a SIGCONT that the parent process (the launcher's daemon) sends interrupts: the
// temporary files are removed at once and interruption() says so, for the caller to fail at its
// next step (the process goes on, so that its ranks agree on the failure). A SIGCONT held during
// a commit takes effect after it. Open MPI also forwards a SIGCONT given to mpirun to resume a
// stopped job: that too interrupts. Installs the terminating signals' handlers as well.
void interrupt_on_launcher_continue();
// The signal that interrupted this process (SIGCONT from the launcher), or 0.
int interruption();

// Another process's temporary file, removed on this process's interruption and terminating
// signals like its own (never otherwise) while this object lives: the ranks of the collective
// sort write into rank 0's output files, and whichever rank is interrupted first removes them,
// since the launcher may SIGKILL rank 0 as soon as another rank has exited.
class RemovedOnInterruption {
 public:
  explicit RemovedOnInterruption(const std::filesystem::path& path);
  ~RemovedOnInterruption();
  RemovedOnInterruption(const RemovedOnInterruption&) = delete;
  RemovedOnInterruption& operator=(const RemovedOnInterruption&) = delete;

 private:
  int slot_ = -1;
};

// A temporary file of the out-of-core sort (its sorted runs) in `directory`, named and cleaned up
// like the outputs' temporary files: ".gpusort-<pid>-<random>.tmp", removed when destroyed and
// on the terminating signals, and by a later run if this one is killed.
class ScratchFile {
 public:
  ScratchFile(const std::filesystem::path& directory, std::string role);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  // From several threads at once; a full disk (or file-size limit) is named in the Error.
  void write_at(uint64_t offset, const void* data, uint64_t bytes);
  // The first `bytes` of the file, mapped read-only until destruction (after the writes).
  const char* map(uint64_t bytes);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::string role_;
  std::filesystem::path path_;
  int fd_ = -1;
  int interrupt_slot_ = -1;
  void* mapped_ = nullptr;
  uint64_t mapped_bytes_ = 0;
};

// Free bytes for an unprivileged user on the file system that holds `file`'s directory (all
// ones when it cannot be asked).
uint64_t free_disk_bytes(const std::filesystem::path& file);
// The file system that holds `file`'s directory (its device number; 0 when it cannot be asked).
uint64_t file_system_of(const std::filesystem::path& file);
// The largest file this process may write (RLIMIT_FSIZE, `ulimit -f`; all ones when unlimited).
// Writing past it fails with EFBIG (SIGXFSZ is ignored: see main.cpp).
uint64_t file_size_limit();
// The size of an array file as PendingOutput writes it (npy: header included).
uint64_t array_file_bytes(FileFormat format, KeyType element, uint64_t count);

}  // namespace gpusort::cli
