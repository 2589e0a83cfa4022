// gpusort_p2p_probe: checks, on the GPUs of one node, the mechanism of the distributed sort's
// device-resident path, step by step, printing each step's success or exact error:
//   - the CUDA driver loaded at run time, the CUDA device matched to the rank's Vulkan device by
//     UUID, cuDeviceCanAccessPeer between the ranks' devices;
//   - buffers A and B allocated with cuMemCreate (exportable as POSIX descriptors), mapped in
//     CUDA, imported into the rank's gpusort Context (VK_KHR_external_memory_fd; several pieces
//     bound to one sparse buffer beyond the largest Vulkan allocation);
//   - the descriptors passed to the other ranks over a Unix socket (SCM_RIGHTS) and mapped there;
//   - keys uploaded into A and sorted there by gpusort's engine Sorter (B as its scratch), checked;
//   - peer copies (cuMemcpyDtoDAsync) of each size from rank 0's A into rank 1's B, back, the
//     other way, and both at once, each checked element by element through Vulkan, with the
//     bandwidths.
// Run: mpirun --bind-to none -np 2 gpusort_p2p_probe [--sizes 1G,8G] [--piece BYTES]
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <gpusort/distributed.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "device_exchange.hpp"
#include "host/byte_count.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/recorder.hpp"

using namespace gpusort;
namespace p2p = gpusort::distributed::p2p;

namespace {

int g_rank = 0, g_size = 1;
MPI_Comm g_comm = MPI_COMM_WORLD;

void say(const std::string& s) {
  std::printf("rank %d: %s\n", g_rank, s.c_str());
  std::fflush(stdout);
}

// Runs step on every rank; prints "STEP name: ok" or "STEP name: FAILED: rank R: ..." (rank 0);
// returns whether it succeeded everywhere.
bool step(const std::string& name, const std::function<void()>& f) {
  try {
    distributed::agree(g_comm, f);
    if (g_rank == 0) say("STEP " + name + ": ok");
    return true;
  } catch (const std::exception& e) {
    if (g_rank == 0) say("STEP " + name + ": FAILED: " + e.what());
    return false;
  }
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string hex(const uint8_t* b, int n) {
  std::string s;
  char t[4];
  for (int i = 0; i < n; ++i) {
    std::snprintf(t, sizeof(t), "%02x", b[i]);
    s += t;
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

uint32_t key_of(uint64_t i) {
  uint64_t z = i + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return uint32_t(z ^ (z >> 31));
}

constexpr uint64_t kChunk = uint64_t(256) << 20;

// Reads [offset, offset + bytes) of a Vulkan buffer chunk by chunk through `staging`.
void read_chunks(Context& ctx, DeviceBuffer& staging, VkBuffer src, uint64_t bytes,
                 const std::function<void(uint64_t offset, const uint8_t*, uint64_t)>& f) {
  for (uint64_t off = 0; off < bytes; off += kChunk) {
    const uint64_t n = std::min(kChunk, bytes - off);
    ctx.impl().submit([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);
      VkBufferCopy region{off, 0, n};
      vkCmdCopyBuffer(cmd, src, staging.buffer(), 1, &region);
      Recorder::full_barrier(cmd);
    });
    f(off, static_cast<const uint8_t*>(staging.mapped()), n);
  }
}

// Whether the first `bytes` of x and y (Vulkan buffers) are equal; throws naming the first
// difference.
void compare(Context& ctx, DeviceBuffer& s1, DeviceBuffer& s2, VkBuffer x, VkBuffer y,
             uint64_t bytes, const std::string& what) {
  for (uint64_t off = 0; off < bytes; off += kChunk) {
    const uint64_t n = std::min(kChunk, bytes - off);
    ctx.impl().submit([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);
      VkBufferCopy r1{off, 0, n};
      vkCmdCopyBuffer(cmd, x, s1.buffer(), 1, &r1);
      vkCmdCopyBuffer(cmd, y, s2.buffer(), 1, &r1);
      Recorder::full_barrier(cmd);
    });
    auto a = static_cast<const uint32_t*>(s1.mapped());
    auto b = static_cast<const uint32_t*>(s2.mapped());
    if (std::memcmp(a, b, n) != 0) {
      uint64_t i = 0;
      while (i < n / 4 && a[i] == b[i]) ++i;
      throw Error(what + ": element " + std::to_string(off / 4 + i) + " differs (" +
                  std::to_string(b[i]) + " where " + std::to_string(a[i]) + " was expected)");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  std::vector<uint64_t> sizes = {uint64_t(1) << 30, uint64_t(8) << 30};
  uint64_t piece = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::string list = argv[++i];
      size_t p = 0;
      while (p <= list.size()) {
        size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        auto b = parse_byte_count(list.substr(p, q - p));
        if (!b || *b < 16) {
          if (g_rank == 0) std::fprintf(stderr, "gpusort_p2p_probe: error: bad size in --sizes\n");
          MPI_Finalize();
          return 2;
        }
        sizes.push_back(*b / 16 * 16);
        p = q + 1;
      }
    } else if (a == "--piece" && i + 1 < argc) {
      piece = parse_byte_count(argv[++i]).value_or(0);
    } else {
      if (g_rank == 0)
        std::fprintf(stderr, "usage: gpusort_p2p_probe [--sizes 1G,8G] [--piece BYTES]\n");
      MPI_Finalize();
      return 2;
    }
  }
  uint64_t max_bytes = 0;
  for (uint64_t s : sizes) max_bytes = std::max(max_bytes, s);
  const uint64_t n_max = max_bytes / 4;
  if (g_size < 2 && g_rank == 0) say("note: one rank: only the local steps run");

  // Node.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  if (g_rank == 0)
    say("ranks " + std::to_string(g_size) + ", on this rank's node " + std::to_string(node_size) +
        (node_size == g_size ? " (all on one node)" : " (NOT all on one node)"));

  // Vulkan.
  std::optional<Context> ctx;
  if (!step("Vulkan context on the node-local rank's device", [&] {
        ContextOptions o;
        o.device = distributed::default_device_for(distributed::node_local_rank(MPI_COMM_WORLD));
        ctx.emplace(Context::create(o));
      })) {
    MPI_Finalize();
    return 1;
  }
  uint8_t vk_uuid[16];
  {
    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
    vkGetPhysicalDeviceProperties2(ctx->physical_device(), &props);
    std::memcpy(vk_uuid, id.deviceUUID, 16);
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(ctx->physical_device(), nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> ext(count);
    vkEnumerateDeviceExtensionProperties(ctx->physical_device(), nullptr, &count, ext.data());
    bool fd = false;
    for (auto& e : ext)
      fd |= std::strcmp(e.extensionName, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) == 0;
    const DeviceInfo& info = ctx->device_info();
    say("Vulkan device '" + info.name + "' driver '" + info.driver + "' uuid " + hex(vk_uuid, 16) +
        ", VK_KHR_external_memory_fd " + (fd ? "present" : "ABSENT") +
        ", maxMemoryAllocationSize " + std::to_string(info.max_allocation_bytes) +
        ", sparse binding " + (info.sparse_binding ? "yes" : "no") + ", device-local bytes " +
        std::to_string(info.device_local_bytes));
    for (int sparse = 0; sparse < 2; ++sparse) {
      VkPhysicalDeviceExternalBufferInfo q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
      q.flags = sparse ? VK_BUFFER_CREATE_SPARSE_BINDING_BIT : 0;
      q.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
                VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
      q.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
      VkExternalBufferProperties r{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
      vkGetPhysicalDeviceExternalBufferProperties(ctx->physical_device(), &q, &r);
      auto f = r.externalMemoryProperties.externalMemoryFeatures;
      say(std::string("external buffer (opaque fd") + (sparse ? ", sparse" : "") +
          "): importable " + ((f & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) ? "yes" : "NO") +
          ", dedicated only " +
          ((f & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) ? "YES" : "no"));
    }
  }

  // CUDA.
  p2p::CudaDevice cuda;
  if (!step("CUDA driver loaded (dlopen libcuda.so.1, cuInit)", [&] { p2p::driver(); }) ||
      !step("CUDA device matched to the Vulkan device by UUID", [&] {
        cuda = p2p::cuda_device_of(*ctx);
        say("CUDA device " + std::to_string(cuda.ordinal) + " '" + cuda.name + "' uuid " +
            hex(cuda.uuid, 16));
      })) {
    MPI_Finalize();
    return 1;
  }
  std::vector<uint8_t> uuids(size_t(16) * g_size);
  MPI_Allgather(vk_uuid, 16, MPI_BYTE, uuids.data(), 16, MPI_BYTE, MPI_COMM_WORLD);
  bool peers_ok = step("cuDeviceCanAccessPeer to every other rank's device", [&] {
    for (int r = 0; r < g_size; ++r) {
      if (r == g_rank) continue;
      int o = p2p::ordinal_of_uuid(&uuids[size_t(16) * r]);
      if (o < 0) throw Error("rank " + std::to_string(r) + "'s device is not visible to CUDA here");
      bool can = p2p::can_access_peer(cuda.ordinal, o);
      say("peer access from CUDA device " + std::to_string(cuda.ordinal) + " to rank " +
          std::to_string(r) + "'s device " + std::to_string(o) + ": " + (can ? "yes" : "NO") +
          (o == cuda.ordinal ? " (the same device)" : ""));
      if (!can) throw Error("no peer access to rank " + std::to_string(r) + "'s device");
    }
  });

  // Buffers.
  std::unique_ptr<Sorter> sorter;
  p2p::SharedBuffer A, B;
  uint64_t b_bytes = max_bytes;
  if (!step("engine Sorter (u32 keys)",
            [&] {
              SorterConfig c;
              c.key = KeyType::u32;
              sorter = std::make_unique<Sorter>(*ctx, c);
              b_bytes = std::max(max_bytes, sorter->scratch_bytes(n_max));
              say("engine sorter: max elements " + std::to_string(sorter->max_elements()) +
                  ", scratch for " + std::to_string(n_max) +
                  " keys: " + std::to_string(sorter->scratch_bytes(n_max)) + " bytes, kernels " +
                  sorter->kernel_path(n_max));
            }) ||
      !step("cuMemCreate + map + export + Vulkan import of A and B", [&] {
        double t0 = now_s();
        A = p2p::SharedBuffer(*ctx, cuda, max_bytes, piece);
        B = p2p::SharedBuffer(*ctx, cuda, b_bytes, piece);
        say("A: " + std::to_string(A.bytes()) + " bytes in " +
            std::to_string(A.piece_sizes().size()) + " piece(s) of " +
            std::to_string(A.piece_sizes()[0]) + "; B: " + std::to_string(B.bytes()) + " in " +
            std::to_string(B.piece_sizes().size()) + "; " + std::to_string(now_s() - t0) + " s");
      })) {
    MPI_Finalize();
    return 1;
  }
  // A single piece beyond maxMemoryAllocationSize (informative: the path uses pieces).
  if (max_bytes > ctx->device_info().max_allocation_bytes)
    step("one piece of " + std::to_string(max_bytes) +
             " bytes (beyond maxMemoryAllocationSize) imported into Vulkan",
         [&] { p2p::SharedBuffer one(*ctx, cuda, max_bytes, max_bytes + (64 << 20)); });

  // Peers' buffers.
  std::vector<p2p::PeerMapping> peer_a(static_cast<size_t>(g_size)),
      peer_b(static_cast<size_t>(g_size));
  if (g_size > 1 && peers_ok) {
    std::vector<std::vector<int>> fds;
    peers_ok = step("descriptors passed over the node's Unix socket (SCM_RIGHTS)", [&] {
      std::vector<int> mine = A.fds();
      mine.insert(mine.end(), B.fds().begin(), B.fds().end());
      fds = p2p::share_fds(MPI_COMM_WORLD, mine);
    });
    // Piece sizes of every rank's A and B.
    auto gather_sizes = [&](const std::vector<uint64_t>& mine) {
      int count = int(mine.size());
      std::vector<int> counts(static_cast<size_t>(g_size)), displs(static_cast<size_t>(g_size));
      MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
      int total = 0;
      for (int r = 0; r < g_size; ++r) displs[size_t(r)] = total, total += counts[size_t(r)];
      std::vector<uint64_t> all(static_cast<size_t>(total));
      MPI_Allgatherv(mine.data(), count, MPI_UINT64_T, all.data(), counts.data(), displs.data(),
                     MPI_UINT64_T, MPI_COMM_WORLD);
      std::vector<std::vector<uint64_t>> per(static_cast<size_t>(g_size));
      for (int r = 0; r < g_size; ++r)
        per[size_t(r)].assign(all.begin() + displs[size_t(r)],
                              all.begin() + displs[size_t(r)] + counts[size_t(r)]);
      return per;
    };
    auto a_sizes = gather_sizes(A.piece_sizes());
    auto b_sizes = gather_sizes(B.piece_sizes());
    if (peers_ok)
      peers_ok =
          step("peers' A and B imported (cuMemImportFromShareableHandle), mapped, access set", [&] {
            for (int r = 0; r < g_size; ++r) {
              if (r == g_rank) continue;
              auto& f = fds[size_t(r)];
              size_t na = a_sizes[size_t(r)].size();
              if (f.size() != na + b_sizes[size_t(r)].size())
                throw Error("wrong descriptor count from rank " + std::to_string(r));
              peer_a[size_t(r)] = p2p::PeerMapping(
                  cuda, std::vector<int>(f.begin(), f.begin() + long(na)), a_sizes[size_t(r)]);
              peer_b[size_t(r)] = p2p::PeerMapping(
                  cuda, std::vector<int>(f.begin() + long(na), f.end()), b_sizes[size_t(r)]);
            }
          });
  }

  // Keys into A (the same keys on every rank), sorted there with B as scratch.
  DeviceBuffer up(ctx->impl(), kChunk, MemoryKind::upload);
  DeviceBuffer s1(ctx->impl(), kChunk, MemoryKind::readback),
      s2(ctx->impl(), kChunk, MemoryKind::readback);
  uint64_t sum = 0, sum2 = 0;
  bool sorted_ok =
      step("upload of " + std::to_string(n_max) + " u32 keys into A (Vulkan copies)", [&] {
        double t0 = now_s();
        for (uint64_t off = 0; off < max_bytes; off += kChunk) {
          const uint64_t n = std::min(kChunk, max_bytes - off);
          auto p = static_cast<uint32_t*>(up.mapped());
          // The keys on 16 threads, each summing its part.
          constexpr unsigned kThreads = 16;
          uint64_t sums[kThreads][2] = {};
          std::vector<std::thread> threads;
          for (unsigned t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
              const uint64_t words = n / 4, b = words * t / kThreads,
                             e = words * (t + 1) / kThreads;
              for (uint64_t i = b; i < e; ++i) {
                const uint32_t k = key_of(off / 4 + i);
                p[i] = k;
                sums[t][0] += k;
                sums[t][1] += uint64_t(k) * k;
              }
            });
          for (auto& t : threads) t.join();
          for (auto& s : sums) sum += s[0], sum2 += s[1];
          ctx->impl().submit([&](VkCommandBuffer cmd) {
            Recorder::full_barrier(cmd);
            VkBufferCopy region{0, off, n};
            vkCmdCopyBuffer(cmd, up.buffer(), A.buffer(), 1, &region);
            Recorder::full_barrier(cmd);
          });
        }
        say("upload (generating keys on 16 threads) " + std::to_string(now_s() - t0) + " s");
      });
  sorted_ok =
      sorted_ok && step("gpusort engine sort of A in place (scratch: B), checked", [&] {
        double ms = ctx->impl().submit_timed([&](VkCommandBuffer cmd) {
          Recorder::full_barrier(cmd);
          sorter->record(cmd, {A.buffer(), 0}, {}, {B.buffer(), 0}, n_max);
          Recorder::full_barrier(cmd);
        });
        say("sort of " + std::to_string(n_max) + " keys: " + std::to_string(ms) + " ms GPU, " +
            std::to_string(double(n_max) / ms / 1e6) + " G keys/s");
        uint64_t s = 0, s2sum = 0;
        uint32_t last = 0;
        read_chunks(*ctx, s1, A.buffer(), max_bytes,
                    [&](uint64_t off, const uint8_t* d, uint64_t n) {
                      auto k = reinterpret_cast<const uint32_t*>(d);
                      for (uint64_t i = 0; i < n / 4; ++i) {
                        if (k[i] < last)
                          throw Error("A not sorted at element " + std::to_string(off / 4 + i));
                        last = k[i];
                        s += k[i];
                        s2sum += uint64_t(k[i]) * k[i];
                      }
                    });
        if (s != sum || s2sum != sum2) throw Error("A's keys are not a permutation of the input");
      });

  // Copies.
  if (g_size > 1 && peers_ok && sorted_ok) {
    p2p::Stream stream;
    const uint32_t sentinel = 0xDEADBEEF;
    auto clear_b = [&] {
      p2p::make_current(cuda);
      stream.fill32(B.cuda_address(), sentinel, max_bytes / 4);
      stream.synchronize();
    };
    for (uint64_t S : sizes) {
      const std::string gib = std::to_string(double(S) / double(1 << 30)) + " GiB";
      // A -> B on the rank's own device (reference).
      step("local copy A -> B, " + gib + ", checked", [&] {
        clear_b();
        stream.record_start();
        stream.copy(B.cuda_address(), A.cuda_address(), S);
        double ms = stream.record_stop_and_elapsed_ms();
        say("local device copy " + gib + ": " + std::to_string(ms) + " ms, " +
            std::to_string(double(S) / ms / 1e6) + " GB/s");
        compare(*ctx, s1, s2, A.buffer(), B.buffer(), S, "local copy");
      });
      // from -> to: `from` writes its A into `to`'s B (push), or `to` reads from's A (pull).
      // Each copy in three steps (no MPI call inside a step that may throw: the steps' own
      // agreement is the barrier): B cleared to a sentinel, the copy timed on the GPU, the
      // receiver's B compared with its own A (every rank sorted the same keys).
      auto one_way = [&](int from, int to, bool pull) {
        const std::string name = std::string(pull ? "pull" : "push") + " rank " +
                                 std::to_string(from) + " A -> rank " + std::to_string(to) +
                                 " B, " + gib;
        if (!step(name + ": B cleared", clear_b)) return;
        step(name + ": copy", [&] {
          const int doer = pull ? to : from;
          if (g_rank != doer) return;
          uint64_t dst = pull ? B.cuda_address() : peer_b[size_t(to)].cuda_address();
          uint64_t src = pull ? peer_a[size_t(from)].cuda_address() : A.cuda_address();
          stream.record_start();
          stream.copy(dst, src, S);
          double ms = stream.record_stop_and_elapsed_ms();
          say(name + ": " + std::to_string(ms) + " ms GPU, " +
              std::to_string(double(S) / ms / 1e6) + " GB/s");
        });
        step(name + ": checked element by element", [&] {
          if (g_rank == to) compare(*ctx, s1, s2, A.buffer(), B.buffer(), S, name);
        });
      };
      one_way(0, 1, false);
      one_way(1, 0, true);  // "and back": rank 0 reads rank 1's A
      one_way(1, 0, false);
      one_way(0, 1, true);
      // Every rank writes its A into the next rank's B at once (the exchange's pattern).
      const std::string all = "all ranks push A -> next rank's B at once, " + gib;
      if (step(all + ": B cleared", clear_b)) {
        step(all + ": copy", [&] {
          const int to = (g_rank + 1) % g_size;
          double t0 = now_s();
          stream.record_start();
          stream.copy(peer_b[size_t(to)].cuda_address(), A.cuda_address(), S);
          double ms = stream.record_stop_and_elapsed_ms();
          say("concurrent push " + gib + ": " + std::to_string(ms) + " ms GPU (" +
              std::to_string(double(S) / ms / 1e6) + " GB/s out of this GPU), host wall " +
              std::to_string((now_s() - t0) * 1e3) + " ms");
        });
        step(all + ": checked element by element",
             [&] { compare(*ctx, s1, s2, A.buffer(), B.buffer(), S, "concurrent push"); });
      }
    }
    step("Vulkan sort of the received B (A as scratch), checked sorted", [&] {
      const uint64_t n = sizes.back() / 4;
      if (sorter->scratch_bytes(n) > A.bytes()) return;
      ctx->impl().submit([&](VkCommandBuffer cmd) {
        Recorder::full_barrier(cmd);
        sorter->record(cmd, {B.buffer(), 0}, {}, {A.buffer(), 0}, n);
        Recorder::full_barrier(cmd);
      });
      uint32_t last = 0;
      read_chunks(*ctx, s1, B.buffer(), n * 4, [&](uint64_t off, const uint8_t* d, uint64_t bytes) {
        auto k = reinterpret_cast<const uint32_t*>(d);
        for (uint64_t i = 0; i < bytes / 4; ++i) {
          if (k[i] < last) throw Error("B not sorted at element " + std::to_string(off / 4 + i));
          last = k[i];
        }
      });
    });
  }
  peer_a.clear();
  peer_b.clear();
  MPI_Barrier(MPI_COMM_WORLD);  // no rank frees memory a peer still maps
  A = {};
  B = {};
  sorter.reset();
  if (g_rank == 0) say("done");
  MPI_Finalize();
  return 0;
}
