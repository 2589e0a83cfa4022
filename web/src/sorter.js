// The engine face: a Sorter compiles the kernels of one configuration on the caller's GPUDevice;
// a Workspace holds the scratch of sorts up to a maximum count; encode() records a sort of the
// caller's GPUBuffers into the caller's GPUCommandEncoder, its count given by the host or read
// from a GPU buffer (indirect dispatch).
import { VARIANTS_OFF, tuningFor } from './tuning.js';
import {
  AUX_WORKGROUP,
  bindingOf,
  COPY_KEYS_PER_THREAD,
  COPY_MAX_GROUPS,
  CONTROL,
  DISPATCH,
  HISTOGRAM_KEYS_PER_THREAD,
  HISTOGRAM_MAX_GROUPS,
  PARAMS,
  PARAMS_STRIDE,
  RADIX,
  WORKGROUP_SIZES,
  copyShader,
  histogramShader,
  offsetsShader,
  passShader,
  prepareShader,
  smallShader,
  wideHistogramShader,
  workgroupWords,
} from './wgsl.js';

const SHADERS = {
  prepare: prepareShader,
  histogram: histogramShader,
  histogramWide: wideHistogramShader,
  offsets: offsetsShader,
  pass: passShader,
  copy: copyShader,
  small: smallShader,
};

export const KEY_TYPES = Object.freeze(['u32', 'i32', 'f32']);
export const VALUE_TYPES = Object.freeze(['u32', 'i32', 'f32']);
// Counts are packed with look-back tags into 32-bit words: at most 2^30 - 1 keys.
export const MAX_COUNT_BITS = 30;

// GPUBufferUsage / GPUMapMode numbers (the globals are absent in Node until installed).
const USAGE = { MAP_READ: 1, COPY_SRC: 4, COPY_DST: 8, INDEX: 16, UNIFORM: 64, STORAGE: 128, INDIRECT: 256 };

function bitLength(x) {
  let bits = 0;
  while (x > 0) {
    bits += 1;
    x = Math.floor(x / 2);
  }
  return bits;
}

function nextPow2(x) {
  let p = 1;
  while (p < x) p *= 2;
  return p;
}

function checkInteger(name, value, low, high, note = '') {
  if (!Number.isInteger(value) || value < low || value > high)
    throw new RangeError(`${name} must be an integer from ${low} to ${high}, got ${value}${note}`);
}

/**
 * Refuses the options no Sorter takes whatever the device: the key and value types, and a bit
 * range outside the key or empty (beginBit >= endBit). Returns the end bit (endBit 0: 32).
 */
export function checkSortOptions({ keyType = 'u32', valueType = null, beginBit = 0, endBit = 0 } = {}) {
  if (!KEY_TYPES.includes(keyType)) throw new TypeError(`keyType must be one of ${KEY_TYPES.join(', ')}, got ${keyType}`);
  if (valueType !== null && !VALUE_TYPES.includes(valueType))
    throw new TypeError(`valueType must be null or one of ${VALUE_TYPES.join(', ')}, got ${valueType}`);
  const end = endBit === 0 ? 32 : endBit;
  checkInteger('endBit', end, 1, 32);
  const empty = Number.isInteger(beginBit) && beginBit >= end;
  checkInteger('beginBit', beginBit, 0, end - 1, empty ? ` (the bit range [${beginBit}, ${end}) is empty)` : '');
  return end;
}


// The device's adapter info (GPUDevice.adapterInfo; older implementations have none).
function adapterInfoOf(device) {
  return device.adapterInfo ?? {};
}

// The tile shape and look-back settings: the caller's options, else the adapter's row of the
// tuning table (stepped down where the device cannot run it; an explicit option it cannot run is
// refused).
function resolveShape(device, options, hasValues) {
  const info = adapterInfoOf(device);
  const tuning = tuningFor(info, hasValues);
  const d = tuning.defaults;
  const given = (name) => options[name] !== undefined;
  const pick = (name) => (given(name) ? options[name] : d[name]);
  const limits = device.limits;
  const hasSubgroups = !!device.features?.has?.('subgroups');
  const shape = {
    tuning: tuning.name,
    workgroupSize: pick('workgroupSize'),
    keysPerThread: pick('keysPerThread'),
    rankLanes: pick('rankLanes'),
    subgroups: !!pick('subgroups'),
    spinLimit: pick('spinLimit'),
    lookbackWindow: pick('lookbackWindow'),
    lookbackSlots: pick('lookbackSlots'),
    plainExchange: !!pick('plainExchange'),
    fullTile: !!pick('fullTile'),
    claimById: !!pick('claimById'),
    batchScan: !!pick('batchScan'),
    wideHistogram: !!pick('wideHistogram'),
    subgroupScan: !!pick('subgroupScan'),
    uniformCount: !!pick('uniformCount'),
    unrollLoops: !!pick('unrollLoops'),
    subgroupMinSize: info.subgroupMinSize || 4,
    subgroupMaxSize: info.subgroupMaxSize || 128,
  };
  if (!WORKGROUP_SIZES.includes(shape.workgroupSize)) throw new RangeError(`workgroupSize must be one of ${WORKGROUP_SIZES.join(', ')}, got ${shape.workgroupSize}`);
  checkInteger('keysPerThread', shape.keysPerThread, 1, 32);
  if (![4, 8, 16, 32, 64, 128, 256].includes(shape.rankLanes)) throw new RangeError('rankLanes must be a power of two from 4 to 256');
  checkInteger('spinLimit', shape.spinLimit, 0, 1 << 30);
  checkInteger('lookbackWindow', shape.lookbackWindow, 1, 32);
  if (!Number.isInteger(shape.lookbackSlots) || shape.lookbackSlots < 1 || shape.lookbackSlots > 1 << 20 || (shape.lookbackSlots & (shape.lookbackSlots - 1)) !== 0)
    throw new RangeError(`lookbackSlots must be a power of two from 1 to 2^20, got ${shape.lookbackSlots}`);
  if (shape.subgroups && !hasSubgroups) {
    if (given('subgroups')) throw new RangeError("subgroups: the device lacks the 'subgroups' feature (request it when creating the device)");
    shape.subgroups = false;
  }
  const maxInvocations = Math.min(limits.maxComputeInvocationsPerWorkgroup ?? 256, limits.maxComputeWorkgroupSizeX ?? 256);
  if (shape.workgroupSize > maxInvocations) {
    if (given('workgroupSize')) throw new RangeError(`workgroupSize ${shape.workgroupSize}: the device allows at most ${maxInvocations} invocations per workgroup`);
    shape.workgroupSize = Math.max(64, 2 ** Math.floor(Math.log2(maxInvocations)));
  }
  if (!shape.subgroups && shape.rankLanes > shape.workgroupSize) {
    if (given('rankLanes')) throw new RangeError(`rankLanes ${shape.rankLanes} exceeds workgroupSize ${shape.workgroupSize}`);
    shape.rankLanes = shape.workgroupSize;
  }
  const bytes = () => 4 * workgroupWords({ ...shape });
  const limit = limits.maxComputeWorkgroupStorageSize;
  // A default shape that does not fit: first the portable ranking (its counters are smaller where
  // subgroups are narrow), then fewer keys per invocation.
  if (bytes() > limit && shape.subgroups && !given('subgroups')) {
    const portable = { ...shape, subgroups: false };
    if (4 * workgroupWords(portable) <= limit) shape.subgroups = false;
  }
  if (bytes() > limit && shape.plainExchange && !given('plainExchange')) shape.plainExchange = false;
  while (bytes() > limit && shape.keysPerThread > 1 && !given('keysPerThread')) shape.keysPerThread -= 1;
  if (bytes() > limit)
    throw new RangeError(`workgroupSize ${shape.workgroupSize} x keysPerThread ${shape.keysPerThread}${shape.subgroups ? ' with subgroups' : ''} needs ${bytes()} bytes of workgroup memory, the device allows ${limit}`);
  return shape;
}

// The workgroup grids (x, y, 1) of the histogram, pass and copy steps for n keys, as the prepare
// kernel writes them for the indirect dispatches.
function dispatchGrids(n, tile) {
  const grid = (groups) => {
    const x = Math.min(groups, 65535);
    return [x, x === 0 ? 0 : Math.ceil(groups / x), 1];
  };
  const histRound = AUX_WORKGROUP * HISTOGRAM_KEYS_PER_THREAD;
  const copyRound = AUX_WORKGROUP * COPY_KEYS_PER_THREAD;
  return {
    [DISPATCH.HISTOGRAM]: grid(Math.min(Math.ceil(n / histRound), HISTOGRAM_MAX_GROUPS)),
    [DISPATCH.PASS]: grid(Math.ceil(n / tile)),
    [DISPATCH.COPY]: grid(Math.min(Math.ceil(n / copyRound), COPY_MAX_GROUPS)),
  };
}

export class Sorter {
  /**
   * @param {GPUDevice} device
   * @param {object} [options] see index.d.ts (SorterOptions)
   */
  constructor(device, options = {}) {
    const {
      keyType = 'u32',
      valueType = null,
      descending = false,
      beginBit = 0,
      endBit = 0,
      smallPath = true,
      debug = {},
    } = options;
    const end = checkSortOptions({ keyType, valueType, beginBit, endBit });
    this.device = device;
    this.keyType = keyType;
    this.valueType = valueType;
    this.descending = !!descending;
    this.beginBit = beginBit;
    this.endBit = end;
    this.passCount = Math.ceil((end - beginBit) / 8);
    const shape = resolveShape(device, options, valueType !== null);
    Object.assign(this, shape);
    this.tile = this.workgroupSize * this.keysPerThread;
    this.smallPath = smallPath;
    this.debug = { refusePeriod: debug.refusePeriod ?? 0, tableSlots: debug.tableSlots ?? 0, omit: [...(debug.omit ?? [])], smallVariants: !!debug.smallVariants };
    for (const step of this.debug.omit)
      if (!['ranking', 'lookback', 'stores'].includes(step)) throw new RangeError(`debug.omit: unknown step '${step}' (ranking, lookback, stores)`);
    // Counts beyond one binding are not split over several bindings yet.
    this.maxCount = Math.min(2 ** MAX_COUNT_BITS - 1, Math.floor(device.limits.maxStorageBufferBindingSize / 4));
    this.cfg = {
      keyType,
      descending: this.descending,
      hasValues: valueType !== null,
      workgroupSize: this.workgroupSize,
      keysPerThread: this.keysPerThread,
      rankLanes: this.rankLanes,
      subgroups: this.subgroups,
      subgroupMinSize: this.subgroupMinSize,
      subgroupMaxSize: this.subgroupMaxSize,
      lookbackWindow: this.lookbackWindow,
      plainExchange: this.plainExchange,
      fullTile: this.fullTile,
      claimById: this.claimById,
      batchScan: this.batchScan,
      wideHistogram: this.wideHistogram,
      subgroupScan: this.subgroupScan,
      uniformCount: this.uniformCount,
      unrollLoops: this.unrollLoops,
      beginBit: this.beginBit,
      endBit: this.endBit,
      omit: this.debug.omit,
    };
    this.compiled = {};
  }

  // Pipelines are compiled on first use (the small-array path's or Onesweep's).
  pipeline(name) {
    let p = this.compiled[name];
    if (!p) {
      // The small-array kernel keeps the plain generation: with the variants (every one on) it
      // sorted wrongly below a tile on an NVIDIA H100 with subgroups (pairs at 512 x 16, keys too
      // at 512 x 20; every pass kernel's case right), which SwiftShader's subgroups of 4 do not show.
      const plain = name === 'small' && !this.debug.smallVariants;  // debug.smallVariants: to find the fault
      const code = SHADERS[name](plain ? { ...this.cfg, ...VARIANTS_OFF } : this.cfg);
      const label = `gpusort ${name}`;
      p = this.device.createComputePipeline({
        label,
        layout: 'auto',
        compute: { module: this.device.createShaderModule({ label, code }), entryPoint: 'main' },
      });
      this.compiled[name] = p;
    }
    return p;
  }

  /** Compiles the kernels now (else on first use): those of Onesweep and of the small-array path. */
  compile() {
    for (const name of Object.keys(SHADERS)) if (name !== 'histogramWide' || this.wideHistogram) this.pipeline(name);
  }

  /** The steps encode() records, in order, for a workspace (each its own compute pass with `timestamps`). */
  steps(workspace) {
    if (workspace.small) return ['small'];
    const passes = Array.from({ length: this.passCount }, (_, p) => `pass ${p}`);
    return ['prepare', 'histogram', 'offsets', ...passes, ...(this.passCount % 2 === 1 ? ['copy'] : [])];
  }

  get hasValues() {
    return this.valueType !== null;
  }

  /** Scratch for sorts of up to maxCount keys with this sorter. */
  createWorkspace(maxCount) {
    checkInteger('maxCount', maxCount, 0, this.maxCount);
    return new Workspace(this, maxCount);
  }

  /**
   * Records a sort of `keys` (and `values`) in place into `encoder`.
   * count: a number (written to the workspace with queue.writeBuffer, so it holds for the next
   * submit), or a GPUBuffer holding a u32 count at byte offset countOffset (clamped to the
   * workspace's maxCount).
   */
  encode(encoder, { keys, values = null, count, countOffset = 0, workspace, timestamps = null }) {
    if (!(workspace instanceof Workspace) || workspace.sorter !== this) throw new TypeError('workspace must come from this sorter');
    if (this.hasValues !== (values !== null && values !== undefined))
      throw new TypeError(this.hasValues ? 'this sorter carries values: pass values' : 'this sorter has no values: pass none');
    const ws = workspace;
    let countBuffer = count;
    if (typeof count === 'number') {
      checkInteger('count', count, 0, ws.maxCount);
      if (keys.size < count * 4) throw new RangeError(`keys buffer holds ${keys.size} bytes, the count needs ${count * 4}`);
      if (values && values.size < count * 4) throw new RangeError(`values buffer holds ${values.size} bytes, the count needs ${count * 4}`);
      if (count <= 1) return;
      this.device.queue.writeBuffer(ws.hostCount, 0, new Uint32Array([count]));
      if (ws.countUniform) this.device.queue.writeBuffer(ws.countUniform, 0, new Uint32Array([count]));
      countBuffer = ws.hostCount;
      countOffset = 0;
    } else {
      if (!Number.isInteger(countOffset) || countOffset < 0 || countOffset % 4 !== 0) throw new RangeError('countOffset must be a multiple of 4');
      if (count.size < countOffset + 4) throw new RangeError(`count buffer holds ${count.size} bytes, countOffset ${countOffset} needs ${countOffset + 4}`);
      // The GPU's count may be anything up to maxCount.
      if (keys.size < ws.maxCount * 4) throw new RangeError(`keys buffer holds ${keys.size} bytes, the workspace's maxCount needs ${ws.maxCount * 4}`);
      if (values && values.size < ws.maxCount * 4) throw new RangeError(`values buffer holds ${values.size} bytes, the workspace's maxCount needs ${ws.maxCount * 4}`);
    }
    if (ws.maxCount <= 1) return;
    const countParams = ws.countParams(countOffset / 4);
    // Entries by the names of src/wgsl.js's BINDINGS, which also declare them in the kernels.
    const bind = (pipeline, entries) =>
      this.device.createBindGroup({
        layout: this.pipeline(pipeline).getBindGroupLayout(0),
        entries: Object.entries(entries).map(([name, resource]) => ({ binding: bindingOf(name), resource })),
      });
    const whole = (buffer) => ({ buffer, size: Math.min(Math.floor(buffer.size / 4) * 4, ws.bindBytes) });
    const passParams = (p) => ({ buffer: ws.params, offset: p * PARAMS_STRIDE, size: PARAMS.WORDS * 4 });
    if (ws.small) {
      const entries = { params: passParams(0), keys_out: whole(keys), count_src: { buffer: countBuffer }, count_params: countParams };
      if (this.hasValues) entries.values_out = whole(values);
      const timestampWrites = timestamps ? { querySet: timestamps, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } : undefined;
      const cp = encoder.beginComputePass({ label: 'gpusort small', timestampWrites });
      cp.setPipeline(this.pipeline('small'));
      cp.setBindGroup(0, bind('small', entries));
      cp.dispatchWorkgroups(1);
      cp.end();
      return;
    }
    // The look-back table starts empty (tag 0) in every sort.
    encoder.clearBuffer(ws.table);
    // Profiling (timestamps: a GPUQuerySet): each step in a compute pass of its own, its start and
    // end at queries 2i and 2i + 1 (steps(workspace) names them).
    let step = 0;
    let computePass = null;
    const c = {
      begin() {
        if (computePass && !timestamps) return;
        computePass?.end();
        const timestampWrites = timestamps ? { querySet: timestamps, beginningOfPassWriteIndex: 2 * step, endOfPassWriteIndex: 2 * step + 1 } : undefined;
        step += 1;
        computePass = encoder.beginComputePass({ label: 'gpusort', timestampWrites });
      },
      setPipeline(p) {
        this.begin();
        computePass.setPipeline(p);
      },
      setBindGroup: (...a) => computePass.setBindGroup(...a),
      dispatchWorkgroups: (...a) => computePass.dispatchWorkgroups(...a),
      dispatchWorkgroupsIndirect: (...a) => computePass.dispatchWorkgroupsIndirect(...a),
      end: () => computePass.end(),
    };
    // A count from the host sizes the steps here (the same grids prepare writes); a GPU count
    // through the indirect commands prepare writes.
    const hostGrids = typeof count === 'number' ? dispatchGrids(count, this.tile) : null;
    const dispatch = (command) => {
      if (hostGrids) c.dispatchWorkgroups(...hostGrids[command]);
      else c.dispatchWorkgroupsIndirect(ws.indirect, command * 12);
    };
    c.setPipeline(this.pipeline('prepare'));
    c.setBindGroup(0, bind('prepare', { params: passParams(0), control: { buffer: ws.control }, indirect: { buffer: ws.indirect }, count_src: { buffer: countBuffer }, count_params: countParams }));
    c.dispatchWorkgroups(1);
    // uniformCount: the passes read the count from a uniform, a GPU count's copied there from prepare's.
    if (ws.countUniform && !hostGrids) {
      c.end();
      computePass = null;
      encoder.copyBufferToBuffer(ws.control, CONTROL.N * 4, ws.countUniform, 0, 4);
    }
    // The wide histogram reads the keys as vec4<u32> where the binding holds one at least.
    const quadBytes = Math.floor(Math.min(keys.size, ws.bindBytes) / 16) * 16;
    if (this.wideHistogram && quadBytes > 0) {
      c.setPipeline(this.pipeline('histogramWide'));
      c.setBindGroup(0, bind('histogramWide', { control: { buffer: ws.control }, keys_in: whole(keys), keys4: { buffer: keys, size: quadBytes } }));
    } else {
      c.setPipeline(this.pipeline('histogram'));
      c.setBindGroup(0, bind('histogram', { params: passParams(0), control: { buffer: ws.control }, keys_in: whole(keys) }));
    }
    dispatch(DISPATCH.HISTOGRAM);
    c.setPipeline(this.pipeline('offsets'));
    c.setBindGroup(0, bind('offsets', { control: { buffer: ws.control } }));
    c.dispatchWorkgroups(1);
    const a = { keys, values };
    const b = { keys: ws.keysB, values: ws.valuesB };
    for (let pass = 0; pass < this.passCount; ++pass) {
      const [from, to] = pass % 2 === 0 ? [a, b] : [b, a];
      const entries = { params: passParams(pass), control: { buffer: ws.control }, table: { buffer: ws.table }, keys_in: whole(from.keys), keys_out: whole(to.keys) };
      if (ws.countUniform) entries.count_u = { buffer: ws.countUniform };
      if (this.hasValues) Object.assign(entries, { values_in: whole(from.values), values_out: whole(to.values) });
      c.setPipeline(this.pipeline('pass'));
      c.setBindGroup(0, bind('pass', entries));
      dispatch(DISPATCH.PASS);
    }
    if (this.passCount % 2 === 1) {
      const entries = { control: { buffer: ws.control }, keys_in: whole(b.keys), keys_out: whole(a.keys) };
      if (this.hasValues) Object.assign(entries, { values_in: whole(b.values), values_out: whole(a.values) });
      c.setPipeline(this.pipeline('copy'));
      c.setBindGroup(0, bind('copy', entries));
      dispatch(DISPATCH.COPY);
    }
    c.end();
  }
}

export class Workspace {
  constructor(sorter, maxCount) {
    const device = sorter.device;
    this.sorter = sorter;
    this.maxCount = maxCount;
    this.bindBytes = Math.max(4, maxCount * 4);
    this.small = sorter.smallPath && maxCount <= sorter.tile;
    const tiles = Math.max(1, Math.ceil(maxCount / sorter.tile));
    // Tags: 31 - countBits bits, never wrapping within a pass (tiles <= generations * slots).
    const countBits = Math.max(1, bitLength(maxCount));
    const generations = 2 ** (31 - countBits) - 1;
    const needed = Math.ceil(tiles / generations);
    const wanted = sorter.debug.tableSlots || Math.min(nextPow2(tiles), sorter.lookbackSlots);
    this.slots = nextPow2(Math.max(needed, wanted));
    this.logSlots = Math.log2(this.slots);
    this.countBits = countBits;
    const buffer = (label, size, usage) => device.createBuffer({ label: `gpusort ${label}`, size: Math.max(16, size), usage });
    const S = USAGE.STORAGE;
    this.params = buffer('params', PARAMS_STRIDE * 4, USAGE.UNIFORM | USAGE.COPY_DST);
    this.hostCount = buffer('count', 16, S | USAGE.COPY_DST);
    this.countParamBuffers = new Map();
    this.buffers = [this.params, this.hostCount];
    if (!this.small) {
      this.keysB = buffer('keys scratch', this.bindBytes, S);
      this.valuesB = sorter.hasValues ? buffer('values scratch', this.bindBytes, S) : null;
      this.control = buffer('control', CONTROL.WORDS * 4, S | USAGE.COPY_SRC);
      this.table = buffer('look-back table', sorter.passCount * this.slots * RADIX * 4, S | USAGE.COPY_DST);
      this.indirect = buffer('indirect', DISPATCH.WORDS * 4, S | USAGE.INDIRECT);
      this.countUniform = sorter.uniformCount ? buffer('count uniform', 16, USAGE.UNIFORM | USAGE.COPY_DST) : null;
      if (this.countUniform) this.buffers.push(this.countUniform);
      this.buffers.push(this.keysB, this.control, this.table, this.indirect);
      if (this.valuesB) this.buffers.push(this.valuesB);
    }
    const words = new Uint32Array((PARAMS_STRIDE / 4) * 4);
    for (let pass = 0; pass < 4; ++pass) {
      const w = words.subarray((pass * PARAMS_STRIDE) / 4);
      const shift = sorter.beginBit + 8 * pass;
      w[PARAMS.MAX_N] = maxCount;
      w[PARAMS.PASS] = pass;
      w[PARAMS.SHIFT] = Math.min(shift, 31);
      w[PARAMS.DIGIT_BITS] = Math.max(0, Math.min(8, sorter.endBit - shift));
      w[PARAMS.FLAGS] = (pass === 0 ? 1 : 0) | (pass === sorter.passCount - 1 ? 2 : 0);
      w[PARAMS.COUNT_BITS] = countBits;
      w[PARAMS.LOG_SLOTS] = this.logSlots;
      w[PARAMS.SPIN_LIMIT] = sorter.spinLimit;
      w[PARAMS.REFUSE_PERIOD] = sorter.debug.refusePeriod;
      w[PARAMS.BEGIN_BIT] = sorter.beginBit;
      w[PARAMS.END_BIT] = sorter.endBit;
      w[PARAMS.PASS_COUNT] = sorter.passCount;
      w[PARAMS.TILE] = sorter.tile;
    }
    device.queue.writeBuffer(this.params, 0, words);
  }

  // A small uniform buffer naming the count's word, one per offset used.
  countParams(offsetWords) {
    let b = this.countParamBuffers.get(offsetWords);
    if (!b) {
      b = this.sorter.device.createBuffer({ label: 'gpusort count offset', size: 16, usage: USAGE.UNIFORM | USAGE.COPY_DST });
      this.sorter.device.queue.writeBuffer(b, 0, new Uint32Array([offsetWords, 0, 0, 0]));
      this.countParamBuffers.set(offsetWords, b);
      this.buffers.push(b);
    }
    return { buffer: b };
  }

  /** How often the look-back fell back to recounting a tile (read back; for tests and tuning). */
  async fallbackCount() {
    if (this.small) return 0;
    const device = this.sorter.device;
    const read = device.createBuffer({ size: 4, usage: USAGE.MAP_READ | USAGE.COPY_DST });
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(this.control, CONTROL.FALLBACKS * 4, read, 0, 4);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(1);
    const value = new Uint32Array(read.getMappedRange().slice(0))[0];
    read.destroy();
    return value;
  }

  destroy() {
    for (const b of this.buffers) b.destroy();
    this.buffers = [];
  }
}
