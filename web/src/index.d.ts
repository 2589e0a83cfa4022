// Types of gpusort-webgpu (ES modules). WebGPU's types come from @webgpu/types.
/// <reference types="@webgpu/types" />

export type KeyType = 'u32' | 'i32' | 'f32';
export type ValueType = 'u32' | 'i32' | 'f32';
export type KeyArray = Uint32Array | Int32Array | Float32Array;
export type ValueArray = Uint32Array | Int32Array | Float32Array;

export const KEY_TYPES: readonly KeyType[];
export const VALUE_TYPES: readonly ValueType[];

export interface SorterOptions {
  /** Key type (default 'u32'); floats sort by IEEE-754 totalOrder: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. */
  keyType?: KeyType;
  /** 4-byte values carried along (stably); null or absent: keys alone. */
  valueType?: ValueType | null;
  /** Descending order (still stable: equal keys keep their input order). */
  descending?: boolean;
  /** Only bits [beginBit, endBit) of the key's radix order take part (endBit 0: 32; an empty range is refused). */
  beginBit?: number;
  endBit?: number;
  /**
   * The tile shape and look-back settings below default to the adapter's row of the tuning table
   * (src/tuning.js, chosen from device.adapterInfo): a default the device cannot run is stepped
   * down, an explicit option it cannot run is refused.
   */
  /** Invocations per workgroup of the sorting kernels: 64, 128, 256, 512 or 1024. */
  workgroupSize?: number;
  /** Keys per invocation, 1 to 32 (tile = workgroupSize x keysPerThread). */
  keysPerThread?: number;
  /** Rank with subgroup ballots (needs the device's 'subgroups' feature; any subgroup size). */
  subgroups?: boolean;
  /** Invocations per rank group of the portable ranking (a power of two, 4 to 256). */
  rankLanes?: number;
  /** Look-back rounds on an unpublished predecessor before the workgroup recounts it. */
  spinLimit?: number;
  /** Predecessors read at once per look-back round (1 to 32). */
  lookbackWindow?: number;
  /** The circular look-back table's largest length in tiles (a power of two). */
  lookbackSlots?: number;
  /** Keys and values pass through workgroup memory of their own (plain words), not the ranking counters' (atomic words). */
  plainExchange?: boolean;
  /** Full tiles run a copy of the pass's loads, ranking and stores without bounds checks (and, with subgroups, without a validity ballot per key). */
  fullTile?: boolean;
  /** Each workgroup sorts the tile its id names (no atomic claim; a tile whose workgroup starts late is recounted by its successors' fallback). */
  claimById?: boolean;
  /** The scan of the ranking's counters reads every group's word at once. */
  batchScan?: boolean;
  /** The histogram reads the keys four at a time (vec4<u32>) with constant digit shifts. */
  wideHistogram?: boolean;
  /** With subgroups: the tile's digit counts scanned by subgroup scans. */
  subgroupScan?: boolean;
  /** The passes read the count from a uniform buffer (a GPU count is copied there after the prepare step). */
  uniformCount?: boolean;
  /** The pass kernel's loops of known trip count unrolled in the WGSL. */
  unrollLoops?: boolean;
  /** Sort up to one tile in one workgroup and one dispatch (default true). */
  smallPath?: boolean;
  /** Testing only: tiles p with p % refusePeriod == refusePeriod - 1 never publish; tableSlots: the circular table's length in tiles. */
  debug?: { refusePeriod?: number; tableSlots?: number; omit?: Array<'ranking' | 'lookback' | 'stores'>; smallVariants?: boolean };
}

export interface EncodeArguments {
  /** The keys (STORAGE usage), sorted in place. */
  keys: GPUBuffer;
  /** The values (STORAGE usage), when the sorter has a valueType. */
  values?: GPUBuffer | null;
  /**
   * The count: a number (written with queue.writeBuffer: it holds for the next submit), or a
   * GPUBuffer (STORAGE usage) holding a u32 count at byte offset countOffset, read on the GPU and
   * clamped to the workspace's maxCount (the buffers must then hold maxCount elements).
   */
  count: number | GPUBuffer;
  countOffset?: number;
  workspace: Workspace;
  /** Profiling: each step in a compute pass of its own, its start and end at queries 2i, 2i + 1 of this set (steps() names them). */
  timestamps?: GPUQuerySet | null;
}

/** The engine face: the kernels of one configuration, compiled on the caller's device. */
export class Sorter {
  constructor(device: GPUDevice, options?: SorterOptions);
  readonly device: GPUDevice;
  readonly keyType: KeyType;
  readonly valueType: ValueType | null;
  readonly descending: boolean;
  readonly beginBit: number;
  readonly endBit: number;
  /** Radix passes: ceil((endBit - beginBit) / 8). */
  readonly passCount: number;
  /** Keys per Onesweep tile. */
  readonly tile: number;
  /** The tuning table's row ('cpu', 'nvidia', 'gpu') and the resolved shape. */
  readonly tuning: string;
  readonly workgroupSize: number;
  readonly keysPerThread: number;
  readonly subgroups: boolean;
  readonly rankLanes: number;
  readonly spinLimit: number;
  readonly lookbackWindow: number;
  readonly lookbackSlots: number;
  readonly plainExchange: boolean;
  readonly fullTile: boolean;
  readonly claimById: boolean;
  readonly batchScan: boolean;
  readonly wideHistogram: boolean;
  readonly subgroupScan: boolean;
  readonly uniformCount: boolean;
  readonly unrollLoops: boolean;
  /** The largest count one sort takes on this device (one storage binding, at most 2^30 - 1). */
  readonly maxCount: number;
  readonly hasValues: boolean;
  /** Compiles every kernel now (else on first use). */
  compile(): void;
  /** Scratch for sorts of up to maxCount keys (about maxCount x 4 bytes per array, plus the look-back table). */
  createWorkspace(maxCount: number): Workspace;
  /** Records the sort into the caller's encoder. */
  encode(encoder: GPUCommandEncoder, args: EncodeArguments): void;
  /** The steps encode() records for a workspace, in order. */
  steps(workspace: Workspace): string[];
}

export class Workspace {
  readonly sorter: Sorter;
  readonly maxCount: number;
  /** Whether sorts use the small-array path (maxCount at most one tile). */
  readonly small: boolean;
  /** The circular look-back table's length in tiles. */
  readonly slots: number;
  /** How often a look-back recounted a tile in the last sort (reads the GPU). */
  fallbackCount(): Promise<number>;
  destroy(): void;
}

export interface SortOptions {
  /** Values carried along (same length, 4-byte elements); returned in the same type. */
  values?: ValueArray;
  /** Defaults to the array's type. */
  keyType?: KeyType;
  descending?: boolean;
  beginBit?: number;
  endBit?: number;
  /** Default: navigator.gpu's (in Node, from the ./node entry point: Dawn's). */
  device?: GPUDevice;
  /** Further Sorter options (workgroupSize, keysPerThread, subgroups, rankLanes, spinLimit, lookbackWindow, lookbackSlots, smallPath, debug). */
  sorterOptions?: SorterOptions;
}

export interface Sorted<K extends KeyArray, V extends ValueArray | undefined> {
  keys: K;
  values: V extends ValueArray ? V : null;
}

/**
 * The convenient face: sorts a copy of `keys` (and `values`) on the GPU, stably, into new arrays
 * of their types (over a new SharedArrayBuffer where the input's is shared). A lost device is an
 * Error saying so, with WebGPU's reason and message.
 */
export function sort<K extends KeyArray, V extends ValueArray | undefined = undefined>(
  keys: K,
  options?: SortOptions & { values?: V },
): Promise<Sorted<K, V>>;

/** The key type of a typed array, or null. */
export function keyTypeOf(array: ArrayBufferView): KeyType | null;
/** The descriptor of a device the sort can use fully: the adapter's largest storage binding, buffer, workgroup memory and workgroup sizes, and its 'subgroups' feature (unless subgroups is false). */
export function deviceDescriptor(adapter: GPUAdapter, options?: { subgroups?: boolean; features?: GPUFeatureName[] }): GPUDeviceDescriptor;
/** A device with deviceDescriptor(adapter)'s limits and features. */
export function requestDevice(gpu?: GPU, options?: { subgroups?: boolean; features?: GPUFeatureName[]; adapterOptions?: GPURequestAdapterOptions }): Promise<GPUDevice>;
/** The tuning table's row name and defaults for an adapter info (keys alone or with values). */
export function tuningFor(info: Partial<GPUAdapterInfo> & { subgroupMinSize?: number; subgroupMaxSize?: number }, hasValues?: boolean): { name: string; defaults: Required<Pick<SorterOptions, 'workgroupSize' | 'keysPerThread' | 'rankLanes' | 'subgroups' | 'spinLimit' | 'lookbackWindow' | 'lookbackSlots' | 'plainExchange' | 'fullTile' | 'claimById' | 'batchScan' | 'wideHistogram' | 'subgroupScan' | 'uniformCount' | 'unrollLoops'>> };
/** Whether an adapter info names a CPU implementation (SwiftShader, llvmpipe, WARP, a fallback adapter). */
export function isCpuAdapter(info: Partial<GPUAdapterInfo>): boolean;
/** The device sort() uses when none is given. */
export function defaultDevice(): Promise<GPUDevice>;
export function setDefaultDeviceFactory(factory: () => Promise<GPUDevice>): void;
