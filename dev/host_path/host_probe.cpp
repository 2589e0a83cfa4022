// Development probe for the host path (end to end at the speed of the bus), not the
// project benchmark. Measures, on one device, the numbers the convenient face's design rests on:
//  - memory types, and the cost of allocating a large device buffer (first and repeated);
//  - host memcpy into the upload (staging) memory and out of the readback memory, 1..T threads;
//  - DMA (vkCmdCopyBuffer) host -> device and back, whole and in chunks, GPU and wall time;
//  - importing malloc'd host memory (the library's HostImports): import cost, DMA from it;
//  - reading a page-cached file into fresh / pinned memory, 1 and several threads;
//  - the sort's GPU time warm (back to back) and after the GPU idled for a while.
//   host_probe [log2 bytes, default 30] [file for the read test, default none]
#include "vulkan/buffer.hpp"
#include "vulkan/host_import.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using namespace gpusort;
using clock_type = std::chrono::steady_clock;

namespace {

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void parallel(unsigned threads, uint64_t bytes, const std::function<void(uint64_t, uint64_t)>& f) {
  std::vector<std::thread> pool;
  const uint64_t step = bytes < 4096 * threads ? (bytes + threads - 1) / threads
                                               : (bytes / threads + 4095) & ~uint64_t(4095);
  for (unsigned t = 0; t < threads; ++t) {
    uint64_t begin = std::min(bytes, t * step), end = std::min(bytes, begin + step);
    if (begin < end) pool.emplace_back([=] { f(begin, end); });
  }
  for (auto& th : pool) th.join();
}

double gbps(uint64_t bytes, double ms) { return double(bytes) / (ms * 1e6); }

double copy_ms(Context::Impl& ctx, VkBuffer src, VkBuffer dst, uint64_t bytes, uint64_t chunk) {
  return ctx.submit_timed([&](VkCommandBuffer cmd) {
    for (uint64_t o = 0; o < bytes; o += chunk) {
      VkBufferCopy region{o, o, std::min(chunk, bytes - o)};
      vkCmdCopyBuffer(cmd, src, dst, 1, &region);
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t bytes = uint64_t(1) << (argc > 1 ? atoi(argv[1]) : 30);
  const char* file = argc > 2 ? argv[2] : nullptr;
  Context ctx = Context::create();
  auto& impl = ctx.impl();
  std::printf("device %s, %u hardware threads, %llu MiB\n", ctx.device_info().name.c_str(),
              std::thread::hardware_concurrency(), (unsigned long long)(bytes >> 20));
  for (uint32_t i = 0; i < impl.memory.memoryTypeCount; ++i)
    std::printf("memory type %u: flags 0x%x heap %u (%llu MiB)\n", i,
                impl.memory.memoryTypes[i].propertyFlags, impl.memory.memoryTypes[i].heapIndex,
                (unsigned long long)(impl.memory.memoryHeaps[impl.memory.memoryTypes[i].heapIndex]
                                         .size >>
                                     20));
  std::printf("host import alignment %llu\n", (unsigned long long)impl.host_import_alignment);

  auto t = clock_type::now();
  DeviceBuffer device(impl, bytes, MemoryKind::device_local);
  std::printf("alloc device 1st: %.2f ms\n", ms_since(t));
  t = clock_type::now();
  { DeviceBuffer again(impl, bytes, MemoryKind::device_local); }
  std::printf("alloc+free device 2nd: %.2f ms\n", ms_since(t));
  t = clock_type::now();
  DeviceBuffer upload_memory(impl, bytes, MemoryKind::upload);
  std::printf("alloc upload: %.2f ms\n", ms_since(t));
  t = clock_type::now();
  DeviceBuffer readback_memory(impl, bytes, MemoryKind::readback);
  std::printf("alloc readback: %.2f ms\n", ms_since(t));

  t = clock_type::now();
  std::vector<uint32_t> host(bytes / 4);
  std::printf("std::vector zero-init (page faults): %.2f ms\n", ms_since(t));
  std::mt19937 rng(1);
  for (auto& h : host) h = rng();
  std::vector<uint32_t> host_out(bytes / 4, 1);

  for (unsigned threads : {1u, 2u, 4u, 8u, 16u}) {
    std::vector<double> in_ms, out_ms, plain_ms;
    for (int r = 0; r < 3; ++r) {
      t = clock_type::now();
      parallel(threads, bytes, [&](uint64_t b, uint64_t e) {
        std::memcpy(static_cast<char*>(upload_memory.mapped()) + b,
                    reinterpret_cast<char*>(host.data()) + b, e - b);
      });
      in_ms.push_back(ms_since(t));
      t = clock_type::now();
      parallel(threads, bytes, [&](uint64_t b, uint64_t e) {
        std::memcpy(reinterpret_cast<char*>(host_out.data()) + b,
                    static_cast<char*>(readback_memory.mapped()) + b, e - b);
      });
      out_ms.push_back(ms_since(t));
      t = clock_type::now();
      parallel(threads, bytes, [&](uint64_t b, uint64_t e) {
        std::memcpy(reinterpret_cast<char*>(host_out.data()) + b,
                    reinterpret_cast<char*>(host.data()) + b, e - b);
      });
      plain_ms.push_back(ms_since(t));
    }
    std::printf("memcpy %2u threads: host->upload %.1f GB/s, readback->host %.1f GB/s, "
                "host->host %.1f GB/s\n",
                threads, gbps(bytes, median(in_ms)), gbps(bytes, median(out_ms)),
                gbps(bytes, median(plain_ms)));
  }

  for (uint64_t chunk : {bytes, uint64_t(64) << 20, uint64_t(16) << 20}) {
    std::vector<double> up, down, up_wall;
    for (int r = 0; r < 3; ++r) {
      t = clock_type::now();
      up.push_back(copy_ms(impl, upload_memory.buffer(), device.buffer(), bytes, chunk));
      up_wall.push_back(ms_since(t));
      down.push_back(copy_ms(impl, device.buffer(), readback_memory.buffer(), bytes, chunk));
    }
    std::printf("DMA chunk %4llu MiB: upload %.1f GB/s (%.2f ms GPU, %.2f ms wall), download "
                "%.1f GB/s (%.2f ms)\n",
                (unsigned long long)(chunk >> 20), gbps(bytes, median(up)), median(up),
                median(up_wall), gbps(bytes, median(down)), median(down));
  }

  if (impl.host_import_alignment) {
    const uint64_t a = impl.host_import_alignment;
    for (int r = 0; r < 2; ++r) {
      // A malloc'd vector: the page-aligned range that covers it.
      auto begin = reinterpret_cast<uintptr_t>(host.data()) & ~uintptr_t(a - 1);
      auto end = (reinterpret_cast<uintptr_t>(host.data()) + bytes + a - 1) & ~uintptr_t(a - 1);
      // The library's import (src/vulkan/host_import.hpp), in one piece.
      HostImports imports(impl);
      t = clock_type::now();
      imports.add(reinterpret_cast<void*>(begin), end - begin);
      double import_ms = ms_since(t);
      const auto spans = imports.split(reinterpret_cast<void*>(begin), end - begin);
      if (spans.size() != 1 || !spans[0].buffer) {
        std::printf("import whole: more than one piece (largest allocation), not timed\n");
        break;
      }
      const VkBuffer imported = spans[0].buffer;
      double dma = copy_ms(impl, imported, device.buffer(), bytes, bytes);
      double dma_back = copy_ms(impl, device.buffer(), imported, bytes, bytes);
      t = clock_type::now();
      imports.clear();
      std::printf("import whole %llu MiB: %.2f ms, DMA from it %.1f GB/s, to it %.1f GB/s, "
                  "release %.2f ms\n",
                  (unsigned long long)((end - begin) >> 20), import_ms, gbps(bytes, dma),
                  gbps(bytes, dma_back), ms_since(t));
    }
    for (unsigned threads : {1u, 4u, 8u}) {
      const uint64_t piece = std::min(uint64_t(64) << 20, bytes / 4);
      auto base = (reinterpret_cast<uintptr_t>(host.data()) + a - 1) & ~uintptr_t(a - 1);
      const uint64_t pieces = (bytes - a) / piece;
      // One registry per piece: a registry is not shared between threads.
      std::vector<std::unique_ptr<HostImports>> imports(pieces);
      t = clock_type::now();
      parallel(threads, pieces, [&](uint64_t b, uint64_t e) {
        for (uint64_t i = b; i < e; ++i) {
          imports[i] = std::make_unique<HostImports>(impl);
          imports[i]->add(reinterpret_cast<void*>(base + i * piece), piece);
        }
      });
      double import_ms = ms_since(t);
      imports.clear();
      std::printf("import %llu pieces of %llu MiB with %u threads: %.2f ms (%.1f GB/s)\n",
                  (unsigned long long)pieces, (unsigned long long)(piece >> 20), threads, import_ms,
                  gbps(pieces * piece, import_ms));
    }
  }

  if (file) {
    int fd = ::open(file, O_RDONLY);
    std::vector<char> warm(bytes);
    ssize_t got = ::pread(fd, warm.data(), bytes, 0);  // page cache warm
    if (got != ssize_t(bytes)) std::printf("short file\n");
    for (unsigned threads : {1u, 4u, 8u, 16u}) {
      for (int target = 0; target < 2; ++target) {
        char* dst = target ? static_cast<char*>(upload_memory.mapped())
                           : reinterpret_cast<char*>(host_out.data());
        t = clock_type::now();
        parallel(threads, bytes, [&](uint64_t b, uint64_t e) {
          while (b < e) {
            ssize_t r = ::pread(fd, dst + b, e - b, off_t(b));
            if (r <= 0) break;
            b += uint64_t(r);
          }
        });
        std::printf("pread page cache, %2u threads, into %s: %.1f GB/s\n", threads,
                    target ? "upload (pinned)" : "host vector", gbps(bytes, ms_since(t)));
      }
    }
    ::close(fd);
  }

  // The sort's GPU time, warm and after idling: 2^28 u32 keys when bytes is 1 GiB.
  const uint64_t n = bytes / 4;
  Sorter sorter(ctx, {.key = KeyType::u32});
  DeviceBuffer scratch(impl, sorter.scratch_bytes(n), MemoryKind::device_local);
  DeviceBuffer source(impl, bytes, MemoryKind::device_local);
  std::memcpy(upload_memory.mapped(), host.data(), bytes);
  copy_ms(impl, upload_memory.buffer(), source.buffer(), bytes, bytes);
  auto sort_once = [&](int idle_ms, bool dma_first) {
    if (dma_first)
      copy_ms(impl, upload_memory.buffer(), device.buffer(), bytes, bytes);
    else
      copy_ms(impl, source.buffer(), device.buffer(), bytes, bytes);
    if (idle_ms) std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
    return impl.submit_timed(
        [&](VkCommandBuffer cmd) { sorter.record(cmd, device.ref(), {}, scratch.ref(), n); });
  };
  for (int r = 0; r < 3; ++r) sort_once(0, false);
  std::vector<double> warm_ms;
  for (int r = 0; r < 7; ++r) warm_ms.push_back(sort_once(0, false));
  std::printf("sort warm, back to back: %.3f ms\n", median(warm_ms));
  for (int idle : {5, 20, 50, 100, 300, 1000}) {
    std::vector<double> v;
    for (int r = 0; r < 3; ++r) v.push_back(sort_once(idle, false));
    std::printf("sort after %4d ms idle: %.3f ms (runs %.3f %.3f %.3f)\n", idle, median(v), v[0],
                v[1], v[2]);
  }
  std::vector<double> after_dma;
  for (int r = 0; r < 3; ++r) after_dma.push_back(sort_once(0, true));
  std::printf("sort right after a host->device DMA of the keys: %.3f ms\n", median(after_dma));
  return 0;
}
