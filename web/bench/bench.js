#!/usr/bin/env node
// Times gpusort-webgpu's sort on the adapter Dawn finds (VK_ICD_FILENAMES picks the Vulkan driver),
// with GPU timestamps where the adapter has 'timestamp-query' (two empty compute passes bracket
// the sort's commands), wall time (submit to onSubmittedWorkDone) always; checks every row's result
// and prints a table.
//
//   node bench/bench.js                      2^24 u32 keys and 2^24 u32 pairs, the adapter's defaults
//   node bench/bench.js --sweep              n = 2^10 ... 2^24, step 2, u32 and u32+u32
//   options: --keys u32,u32+u32,i32,f32,f32+u32  --min-log2 A --max-log2 B --step S
//            --warmups W (default 5) --runs R (default 11; the median is reported) --json FILE
//   Sorter options (default: the adapter's row of src/tuning.js); each takes a comma-separated
//   list, and every combination of the lists is timed (a shape the device cannot run is reported
//   and skipped):
//            --subgroups on|off --workgroup-size S --keys-per-thread K --rank-lanes L
//            --spin-limit N --lookback-window W --lookback-slots T --plain-exchange on|off
//            --full-tile on|off --claim-by-id on|off --batch-scan on|off --wide-histogram on|off
//            --subgroup-scan on|off --uniform-count on|off --unroll-loops on|off
//   --omit LIST    profiling only (wrong results, not checked): steps the pass kernel leaves out, a
//                  comma-separated list of 'none' or steps joined by '+' (ranking, lookback, stores)
//   --phases       after the timed runs, as many runs with a GPU timestamp pair around each step
//                  (prepare, histogram, offsets, each pass, copy) in a compute pass of its own;
//                  prints each step's median
//   --spin-up-ms T  before each row's runs, sorts back to back until the time per sort holds (3 %)
//                  over at least T ms (default 300; 0: none): an idle GPU clocks down between rows
//   --repeat N     the whole list of rows N times over, in order (the same shape timed again later in
//                  one process: a shape whose time changes between its rows met something else on the GPU)
//   --dawn 'F1;F2'  flags for Dawn's instance, ';'-separated (e.g. 'enable-dawn-features=disable_robustness,disable_workgroup_init')
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Sorter, deviceDescriptor, nodeGpu } from '../src/node.js';

const { values: o } = parseArgs({
  options: {
    keys: { type: 'string', default: 'u32,u32+u32' },
    sweep: { type: 'boolean' },
    'min-log2': { type: 'string' },
    'max-log2': { type: 'string' },
    step: { type: 'string', default: '2' },
    warmups: { type: 'string', default: '5' },
    runs: { type: 'string', default: '11' },
    json: { type: 'string' },
    subgroups: { type: 'string' },
    'workgroup-size': { type: 'string' },
    'spin-limit': { type: 'string' },
    'keys-per-thread': { type: 'string' },
    'rank-lanes': { type: 'string' },
    'lookback-window': { type: 'string' },
    'lookback-slots': { type: 'string' },
    'plain-exchange': { type: 'string' },
    'full-tile': { type: 'string' },
    'claim-by-id': { type: 'string' },
    'batch-scan': { type: 'string' },
    'wide-histogram': { type: 'string' },
    'subgroup-scan': { type: 'string' },
    'uniform-count': { type: 'string' },
    'unroll-loops': { type: 'string' },
    omit: { type: 'string' },
    phases: { type: 'boolean' },
    dawn: { type: 'string' },
    repeat: { type: 'string', default: '1' },
    'spin-up-ms': { type: 'string', default: '300' },
  },
});
const maxLog2 = Number(o['max-log2'] ?? 24);
const minLog2 = Number(o['min-log2'] ?? (o.sweep ? 10 : maxLog2));
const step = Number(o.step);
const warmups = Number(o.warmups);
const runs = Number(o.runs);
const spinUpMs = Number(o['spin-up-ms']);
const configs = o.keys.split(',').map((k) => {
  const [keyType, valueType] = k.split('+');
  if (!['u32', 'i32', 'f32'].includes(keyType) || (valueType && valueType !== 'u32')) throw new Error(`--keys: unknown '${k}'`);
  return { name: k, keyType, valueType: valueType ?? null };
});

function onOff(flag) {
  return (v) => {
    if (v !== 'on' && v !== 'off') throw new Error(`--${flag}: '${v}' is not on or off`);
    return v === 'on';
  };
}

// Every combination of the Sorter options given (lists), as option objects.
const OPTION_NAMES = [
  ['subgroups', 'subgroups', (v) => {
    if (v !== 'on' && v !== 'off') throw new Error(`--subgroups: '${v}' is not on or off`);
    return v === 'on';
  }],
  ['workgroup-size', 'workgroupSize', Number],
  ['keys-per-thread', 'keysPerThread', Number],
  ['rank-lanes', 'rankLanes', Number],
  ['spin-limit', 'spinLimit', Number],
  ['lookback-window', 'lookbackWindow', Number],
  ['lookback-slots', 'lookbackSlots', Number],
  ['plain-exchange', 'plainExchange', onOff('plain-exchange')],
  ['full-tile', 'fullTile', onOff('full-tile')],
  ['claim-by-id', 'claimById', onOff('claim-by-id')],
  ['batch-scan', 'batchScan', onOff('batch-scan')],
  ['wide-histogram', 'wideHistogram', onOff('wide-histogram')],
  ['subgroup-scan', 'subgroupScan', onOff('subgroup-scan')],
  ['uniform-count', 'uniformCount', onOff('uniform-count')],
  ['unroll-loops', 'unrollLoops', onOff('unroll-loops')],
  ['omit', 'debug', (v) => ({ omit: v === 'none' ? [] : v.split('+') })],
];
let shapes = [{}];
for (const [flag, name, parse] of OPTION_NAMES) {
  if (o[flag] === undefined) continue;
  const list = o[flag].split(',').map(parse);
  for (const v of list) if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`--${flag}: '${o[flag]}' is not a list of numbers`);
  shapes = shapes.flatMap((s) => list.map((v) => ({ ...s, [name]: v })));
}

const gpu = nodeGpu(['disable-dawn-features=timestamp_quantization', ...(o.dawn ? o.dawn.split(';') : [])]);
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
if (!adapter) throw new Error('no WebGPU adapter (VK_ICD_FILENAMES?)');
const timestamps = adapter.features.has('timestamp-query');
const descriptor = deviceDescriptor(adapter, { features: timestamps ? ['timestamp-query'] : [] });
const device = await adapter.requestDevice(descriptor);
device.addEventListener?.('uncapturederror', (e) => {
  console.error('WebGPU error:', e.error.message);
  process.exit(1);
});
const info = adapter.info ?? {};
if (o.dawn) console.log(`dawn flags: ${o.dawn}`);
console.log(`adapter: ${info.vendor ?? ''} ${info.architecture ?? ''} ${info.device ?? ''} ${info.description ?? ''}`.trim());
const L = device.limits;
console.log(`subgroup sizes ${info.subgroupMinSize ?? '?'}..${info.subgroupMaxSize ?? '?'} (subgroups ${device.features.has('subgroups') ? 'on' : 'off'} the device); ` +
  `timing: ${timestamps ? 'GPU timestamps' : 'wall time only'}; maxStorageBufferBindingSize ${L.maxStorageBufferBindingSize}; ` +
  `maxComputeWorkgroupStorageSize ${L.maxComputeWorkgroupStorageSize}; maxComputeInvocationsPerWorkgroup ${L.maxComputeInvocationsPerWorkgroup}; ` +
  `node ${process.version}; ${new Date().toISOString()}`);

const U = { MAP_READ: 1, COPY_SRC: 4, COPY_DST: 8, STORAGE: 128, QUERY_RESOLVE: 512 };
const querySet = timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 }) : null;
const resolve = timestamps ? device.createBuffer({ size: 16, usage: U.QUERY_RESOLVE | U.COPY_SRC }) : null;
const resolveRead = timestamps ? device.createBuffer({ size: 16, usage: U.MAP_READ | U.COPY_DST }) : null;

function randomWords(n, seed) {
  const out = new Uint32Array(n);
  let a = seed >>> 0;
  for (let i = 0; i < n; ++i) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (t ^ (t >>> 14)) >>> 0;
  }
  return out;
}

function orderOf(type, bits) {
  if (type === 'u32') return bits >>> 0;
  if (type === 'i32') return (bits ^ 0x80000000) >>> 0;
  return bits >= 0x80000000 ? (~bits) >>> 0 : (bits + 0x80000000) >>> 0;
}

async function readBack(buffer, n) {
  const read = device.createBuffer({ size: n * 4, usage: U.MAP_READ | U.COPY_DST });
  const e = device.createCommandEncoder();
  e.copyBufferToBuffer(buffer, 0, read, 0, n * 4);
  device.queue.submit([e.finish()]);
  await read.mapAsync(U.MAP_READ);
  const out = new Uint32Array(read.getMappedRange().slice(0));
  read.destroy();
  return out;
}

function multisetHash(words) {
  let a = 0, b = 0;
  for (let i = 0; i < words.length; ++i) {
    let x = Math.imul(words[i] ^ (words[i] >>> 16), 0x45d9f3b);
    x = Math.imul(x ^ (x >>> 16), 0x45d9f3b);
    a = (a + (x ^ (x >>> 16))) >>> 0;
    b = (b + Math.imul(words[i] | 1, 0x9e3779b1 ^ words[i])) >>> 0;
  }
  return `${a}:${b}`;
}

// The whole result: keys in order, each value (the input index) names its key, equal keys in input order.
function check(cfg, input, keys, values) {
  const n = input.length;
  for (let i = 0; i < n; ++i) {
    if (values && input[values[i]] !== keys[i]) return `element ${i}: value ${values[i]} does not name key ${keys[i]}`;
    if (i === 0) continue;
    const a = orderOf(cfg.keyType, keys[i - 1]), b = orderOf(cfg.keyType, keys[i]);
    if (a > b) return `keys ${i - 1}, ${i} out of order`;
    if (values && a === b && values[i - 1] > values[i]) return `equal keys at ${i - 1}, ${i} not stable`;
  }
  // Keys alone: the same multiset as the input (two sums of mixed keys; linear, unlike a sort of both).
  if (!values && multisetHash(input) !== multisetHash(keys)) return 'the keys are not a permutation of the input';
  return null;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];

// The shape a Sorter resolved (options and the adapter's defaults).
const shapeOf = (s) => `${s.tuning} wg${s.workgroupSize} k${s.keysPerThread} ${s.subgroups ? 'subgroups' : `lanes${s.rankLanes}`} spin${s.spinLimit} win${s.lookbackWindow} slots${s.lookbackSlots}` +
  `${s.plainExchange ? ' plainx' : ''}${s.fullTile ? ' full' : ''}${s.claimById ? ' byid' : ''}${s.batchScan ? ' bscan' : ''}${s.wideHistogram ? ' whist' : ''}${s.subgroupScan ? ' sgscan' : ''}${s.uniformCount ? ' ucount' : ''}${s.unrollLoops ? ' unroll' : ''}` +
  `${s.debug.omit.length ? ` OMIT:${s.debug.omit.join('+')}` : ''}`;
const phaseSet = o.phases && timestamps ? device.createQuerySet({ type: 'timestamp', count: 32 }) : null;
const phaseResolve = phaseSet ? device.createBuffer({ size: 256, usage: U.QUERY_RESOLVE | U.COPY_SRC }) : null;
const phaseRead = phaseSet ? device.createBuffer({ size: 256, usage: U.MAP_READ | U.COPY_DST }) : null;

console.log('| keys     | n    | shape | GPU ms med | GPU ms min | GPU ms max | wall ms med | G keys/s | fallbacks | check |');
console.log('|----------|------|-------|-----------:|-----------:|-----------:|-----------:|---------:|----------:|-------|');
const repeat = Number(o.repeat);
for (let round = 0; round < repeat; ++round) for (const cfg of configs) for (const shape of shapes) {
  let sorter;
  try {
    sorter = new Sorter(device, { keyType: cfg.keyType, valueType: cfg.valueType, ...shape });
    device.pushErrorScope('validation');
    sorter.compile();
    const error = await device.popErrorScope();
    if (error) throw new Error(error.message.split('\n')[0]);
  } catch (e) {
    console.log(`| ${cfg.name.padEnd(8)} | -    | ${JSON.stringify(shape)} | skipped: ${e.message} |`);
    rows.push({ keys: cfg.name, options: shape, skipped: e.message });
    continue;
  }
  for (let log2 = minLog2; log2 <= maxLog2; log2 += step) {
    const n = 2 ** log2;
    const input = randomWords(n, log2 * 7919 + 1);
    const bytes = n * 4;
    const buffer = (usage) => device.createBuffer({ size: bytes, usage });
    const pristineKeys = buffer(U.STORAGE | U.COPY_SRC | U.COPY_DST);
    const keys = buffer(U.STORAGE | U.COPY_SRC | U.COPY_DST);
    device.queue.writeBuffer(pristineKeys, 0, input);
    let pristineValues = null, values = null;
    if (cfg.valueType) {
      pristineValues = buffer(U.STORAGE | U.COPY_SRC | U.COPY_DST);
      values = buffer(U.STORAGE | U.COPY_SRC | U.COPY_DST);
      device.queue.writeBuffer(pristineValues, 0, new Uint32Array(n).map((_, i) => i));
    }
    const workspace = sorter.createWorkspace(n);
    // Spin-up: sorts back to back (batches of one submit each) until the time per sort holds within
    // 3 % from one batch to the next over at least spinUpMs (at most 10 x that): a GPU that idled
    // while the previous row was checked clocks down, and a few short sorts do not bring it back.
    const spinUp = { ms: 0, perSort: null };
    if (spinUpMs > 0) {
      const batch = 8;
      let previous = Infinity;
      for (;;) {
        const e = device.createCommandEncoder();
        for (let b = 0; b < batch; ++b) {
          e.copyBufferToBuffer(pristineKeys, 0, keys, 0, bytes);
          if (values) e.copyBufferToBuffer(pristineValues, 0, values, 0, bytes);
          sorter.encode(e, { keys, values, count: n, workspace });
        }
        const started = performance.now();
        device.queue.submit([e.finish()]);
        await device.queue.onSubmittedWorkDone();
        const elapsed = performance.now() - started;
        spinUp.ms += elapsed;
        const perSort = elapsed / batch;
        const steady = Math.abs(perSort - previous) <= 0.03 * previous;
        previous = perSort;
        spinUp.perSort = perSort;
        if ((steady && spinUp.ms >= spinUpMs) || spinUp.ms >= 10 * spinUpMs) break;
      }
    }
    const gpuMs = [], wallMs = [];
    for (let r = 0; r < warmups + runs; ++r) {
      const e = device.createCommandEncoder();
      e.copyBufferToBuffer(pristineKeys, 0, keys, 0, bytes);
      if (values) e.copyBufferToBuffer(pristineValues, 0, values, 0, bytes);
      if (timestamps) e.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: 0 } }).end();
      sorter.encode(e, { keys, values, count: n, workspace });
      if (timestamps) {
        e.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 1 } }).end();
        e.resolveQuerySet(querySet, 0, 2, resolve, 0);
        e.copyBufferToBuffer(resolve, 0, resolveRead, 0, 16);
      }
      const started = performance.now();
      device.queue.submit([e.finish()]);
      await device.queue.onSubmittedWorkDone();
      const wall = performance.now() - started;
      if (r < warmups) continue;
      wallMs.push(wall);
      if (timestamps) {
        await resolveRead.mapAsync(U.MAP_READ);
        const t = new BigUint64Array(resolveRead.getMappedRange());
        gpuMs.push(Number(t[1] - t[0]) / 1e6);
        resolveRead.unmap();
      }
    }
    // Per-step timestamps (a compute pass per step), in runs of their own.
    let phases = null;
    if (phaseSet) {
      const steps = sorter.steps(workspace);
      const times = steps.map(() => []);
      for (let r = 0; r < runs; ++r) {
        const e = device.createCommandEncoder();
        e.copyBufferToBuffer(pristineKeys, 0, keys, 0, bytes);
        if (values) e.copyBufferToBuffer(pristineValues, 0, values, 0, bytes);
        sorter.encode(e, { keys, values, count: n, workspace, timestamps: phaseSet });
        e.resolveQuerySet(phaseSet, 0, 2 * steps.length, phaseResolve, 0);
        e.copyBufferToBuffer(phaseResolve, 0, phaseRead, 0, 256);
        device.queue.submit([e.finish()]);
        await phaseRead.mapAsync(U.MAP_READ);
        const t = new BigUint64Array(phaseRead.getMappedRange());
        steps.forEach((_, i) => times[i].push(Number(t[2 * i + 1] - t[2 * i]) / 1e6));
        phaseRead.unmap();
      }
      phases = Object.fromEntries(steps.map((name, i) => [name, median(times[i])]));
    }
    const outKeys = await readBack(keys, n);
    const outValues = values ? await readBack(values, n) : null;
    const omitted = sorter.debug.omit.length > 0;
    const problem = omitted ? null : check(cfg, input, outKeys, outValues);
    const fallbacks = await workspace.fallbackCount();
    const gpu = timestamps ? median(gpuMs) : null;
    const wall = median(wallMs);
    const ms = gpu ?? wall;
    rows.push({ keys: cfg.name, n, options: shape, shape: shapeOf(sorter), gpu_ms: gpu, gpu_min_ms: timestamps ? Math.min(...gpuMs) : null, gpu_max_ms: timestamps ? Math.max(...gpuMs) : null, spin_up_ms: spinUp.ms, wall_ms: wall,
      gkeys_per_s: n / ms / 1e6, fallbacks_last_run: fallbacks, check: omitted ? 'not checked (omit)' : problem ?? 'ok', phases_ms: phases });
    const row = rows[rows.length - 1];
    console.log(`| ${cfg.name.padEnd(8)} | 2^${String(log2).padEnd(2)} | ${shapeOf(sorter)} | ${gpu === null ? '     -    ' : gpu.toFixed(3).padStart(10)} | ` +
      `${row.gpu_min_ms === null ? '     -    ' : row.gpu_min_ms.toFixed(3).padStart(10)} | ` +
      `${timestamps ? Math.max(...gpuMs).toFixed(3).padStart(10) : '     -    '} | ${wall.toFixed(3).padStart(10)} | ` +
      `${row.gkeys_per_s.toPrecision(4).padStart(8)} | ${String(fallbacks).padStart(9)} | ${row.check} |`);
    if (phases) console.log(`|          |      | phases ms: ${Object.entries(phases).map(([k, v]) => `${k} ${v.toFixed(4)}`).join(', ')} (sum ${Object.values(phases).reduce((a, b) => a + b, 0).toFixed(3)}) |`);
    for (const b of [pristineKeys, keys, pristineValues, values]) b?.destroy();
    workspace.destroy();
    if (problem) process.exitCode = 1;
  }
}
if (o.json) writeFileSync(o.json, JSON.stringify({ adapter: info, timestamps, rows }, null, 1));
process.exit(process.exitCode ?? 0);
