// Development probe: how fast can one new file of `bytes` be written from memory, by several
// threads? pwrite (ext4/xfs take the inode's lock for buffered writes: one writer at a time) vs
// a shared mapping of the file filled with memcpy (page faults in parallel), each followed by
// fsync. Fresh file per variant, page cache dropped of nothing (the machine's normal state).
//   write_probe DIRECTORY [log2 bytes, default 30]
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using clock_type = std::chrono::steady_clock;
static double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string dir = argv[1];
  const uint64_t bytes = uint64_t(1) << (argc > 2 ? atoi(argv[2]) : 30);
  std::vector<char> data(bytes);
  for (uint64_t i = 0; i < bytes; i += 4096) data[i] = char(i >> 12);
  for (unsigned threads : {1u, 4u, 16u}) {
    for (int variant = 0; variant < 2; ++variant) {
      const std::string path = dir + "/write_probe.tmp";
      ::unlink(path.c_str());
      auto t = clock_type::now();
      int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
      char* map = nullptr;
      if (variant == 1) {
        if (::fallocate(fd, 0, 0, off_t(bytes)) != 0) std::perror("fallocate");
        map = static_cast<char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
        if (map == MAP_FAILED) { std::perror("mmap"); return 1; }
      }
      std::vector<std::thread> pool;
      const uint64_t step = bytes / threads;
      for (unsigned i = 0; i < threads; ++i)
        pool.emplace_back([&, i] {
          const uint64_t begin = i * step, end = i + 1 == threads ? bytes : begin + step;
          if (variant == 0) {
            for (uint64_t at = begin; at < end;) {
              ssize_t put = ::pwrite(fd, data.data() + at, std::min<uint64_t>(end - at, 32 << 20), off_t(at));
              if (put <= 0) { std::perror("pwrite"); return; }
              ::sync_file_range(fd, off_t(at), put, SYNC_FILE_RANGE_WRITE);
              at += uint64_t(put);
            }
          } else {
            for (uint64_t at = begin; at < end; at += 32 << 20) {
              const uint64_t n = std::min<uint64_t>(end - at, 32 << 20);
              std::memcpy(map + at, data.data() + at, n);
              ::sync_file_range(fd, off_t(at), off_t(n), SYNC_FILE_RANGE_WRITE);
            }
          }
        });
      for (auto& p : pool) p.join();
      const double write_ms = ms_since(t);
      if (map) ::munmap(map, bytes);
      auto f = clock_type::now();
      ::fsync(fd);
      const double fsync_ms = ms_since(f);
      ::close(fd);
      auto u = clock_type::now();
      ::unlink(path.c_str());
      std::printf("%-6s %2u threads: write %8.1f ms (%5.1f GB/s), fsync %7.1f ms, unlink %7.1f ms\n",
                  variant ? "mmap" : "pwrite", threads, write_ms, bytes / (write_ms * 1e6), fsync_ms,
                  ms_since(u));
    }
  }
  return 0;
}
