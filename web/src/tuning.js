// Per-adapter defaults of the Sorter's shape: one table, chosen from the device's adapter info
// (vendor, architecture, description, subgroup sizes). Options the caller passes win; a default
// the device cannot run (no `subgroups` feature, a smaller workgroup or less workgroup memory)
// is stepped down, an explicit option it cannot run is refused.
//
//   workgroupSize   invocations per workgroup of the pass and small-array kernels
//   keysPerThread   keys per invocation (tile = workgroupSize x keysPerThread)
//   rankLanes       invocations per rank group of the portable ranking (no subgroups)
//   subgroups       rank with subgroup ballots (needs the device's 'subgroups' feature)
//   spinLimit       look-back rounds on an unpublished predecessor before recounting it
//   lookbackWindow  predecessors read at once per look-back round
//   plainExchange   keys and values pass through workgroup memory of their own (plain words) rather
//                   than through the ranking's counters' memory (atomic words): more memory, plain
//                   loads and stores
//   fullTile        full tiles run a copy of the pass's loads, ranking and stores without bounds
//                   checks (and, with subgroups, without a validity ballot per key)
//   claimById       each workgroup sorts the tile its id names (no atomic claim; a tile whose
//                   workgroup starts late is recounted by its successors' fallback)
//   batchScan       the scan of the ranking's counters reads every group's word at once
//   wideHistogram   the histogram reads keys four at a time (vec4<u32>) with constant digit shifts
//   subgroupScan    with subgroups: the tile's digit counts scanned by subgroup scans (2 barriers
//                   fewer per tile)
//   uniformCount    the passes read the count from a uniform buffer (no device-memory round trip
//                   before a tile's loads; a GPU count is copied there after prepare)
//   unrollLoops     the pass kernel's loops of known trip count (digits per invocation, the
//                   counters' scan) unrolled in the WGSL: no loop guard, arrays indexed by constants
//   lookbackSlots   the circular look-back table's largest length in tiles: it should exceed the
//                   tiles in flight at once (resident workgroups), or successors find their
//                   predecessors' slots reused and recount them

// CPU adapters keep the shape the package was tuned on under SwiftShader; a GPU's look-back
// reads a window and waits longer (rounds of device-memory latency), like gpusort's Vulkan path.
// The kernel variants off unless a row turns them on.
/** Every kernel variant off (also the small-array kernel's generation: src/sorter.js). */
export const VARIANTS_OFF = Object.freeze({ fullTile: false, claimById: false, batchScan: false, wideHistogram: false, subgroupScan: false, uniformCount: false, unrollLoops: false });
const CPU = {
  keys: { workgroupSize: 256, keysPerThread: 8, rankLanes: 16, subgroups: false, spinLimit: 256, lookbackWindow: 1, lookbackSlots: 256, plainExchange: false, ...VARIANTS_OFF },
};
const GPU = {
  keys: { workgroupSize: 256, keysPerThread: 16, rankLanes: 32, subgroups: true, spinLimit: 64, lookbackWindow: 16, lookbackSlots: 4096, plainExchange: false, ...VARIANTS_OFF },
};
// NVIDIA (subgroups of 32). `bench/bench.js` at 2^24 on an NVIDIA H100 80GB HBM3 (Dawn over the
// Vulkan driver 580.159.04, GPU timestamps), 2026-11-26, at 23d8d59, ms for u32 / u32 pairs:
//   512 x 16, every variant off                                         1.131 / 1.368
//   512 x 16, every variant on                                          0.887 / 1.047
//   512 x 16, every variant but claimById                               0.880 / 0.983
//   512 x 20, every variant on                                          0.830 / 1.020
//   256 x 12 / 16 / 20 and 512 x 12, every variant on: 0.97-1.17 / 1.14-1.45
// and at c8c1ea1 (same GPU and command, every variant but claimById): 512 x 20 0.789 / 0.898, 512 x 16
// 0.880 / 0.982, 512 x 10 1.095 / 1.207, 1024 x 10 0.824 / 0.961 (1024 x 16 does not fit 48 KiB).
// Each variant left out of "every variant on" alone costs 1-14 % (fullTile most: pairs 1.191
// against 1.048 ms; wideHistogram: the histogram 0.105 against 0.046 ms). claimById is slower with
// values and stays off. The small-array kernel keeps the plain generation (src/sorter.js).
const NVIDIA = {
  keys: {
    workgroupSize: 512, keysPerThread: 20, rankLanes: 32, subgroups: true, spinLimit: 64, lookbackWindow: 16, lookbackSlots: 4096, plainExchange: false,
    ...VARIANTS_OFF, fullTile: true, batchScan: true, wideHistogram: true, subgroupScan: true, uniformCount: true, unrollLoops: true,
  },
  pairs: {},
};

export const ADAPTER_TUNING = Object.freeze([
  { name: 'cpu', match: (info) => isCpuAdapter(info), ...CPU },
  { name: 'nvidia', match: (info) => /nvidia/i.test(info.vendor ?? '') || /nvidia/i.test(info.description ?? ''), ...NVIDIA },
  { name: 'gpu', match: () => true, ...GPU },
]);

/** Whether the adapter runs on the CPU (SwiftShader, llvmpipe/lavapipe, WARP, a fallback adapter). */
export function isCpuAdapter(info = {}) {
  if (info.isFallbackAdapter) return true;
  const text = `${info.vendor ?? ''} ${info.architecture ?? ''} ${info.device ?? ''} ${info.description ?? ''}`;
  return /swiftshader|llvmpipe|lavapipe|softpipe|\bwarp\b|microsoft basic render/i.test(text);
}

/** The table's row for an adapter info, and its defaults for keys alone or pairs. */
export function tuningFor(info = {}, hasValues = false) {
  const row = ADAPTER_TUNING.find((r) => r.match(info));
  return { name: row.name, defaults: { ...row.keys, ...(hasValues ? row.pairs : {}) } };
}
