#!/usr/bin/env node
// Correctness on this machine's adapter (a GPU; the tests run on SwiftShader): sorts through
// the convenient face and through the command (bin/gpusort-webgpu.js on raw files), every key
// type, with and without values, both orders, bit ranges, sizes 0 .. a few million around the tile
// boundaries of the adapter's default shape, with the subgroup path and the portable one; compares
// each whole output with a stable radix sort in JavaScript. Prints one line per case and a summary;
// exit status 1 on any mismatch.
//
//   node bench/check.js [--max N (default 3000000)] [--quick] [--subgroups on|off|on,off]
//                       [--no-cli] [--options JSON]
//   --options: Sorter options for every library case, e.g. '{"fullTile":true,"claimById":true}'
//              (the variants of src/tuning.js; the command keeps the adapter's defaults)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Sorter, deviceDescriptor, nodeGpu, sort } from '../src/node.js';

const { values: o } = parseArgs({
  options: {
    max: { type: 'string', default: '3000000' },
    quick: { type: 'boolean' },
    subgroups: { type: 'string', default: 'on,off' },
    'no-cli': { type: 'boolean' },
    options: { type: 'string', default: '{}' },
  },
});
const MAX = Number(o.max);
const EXTRA = JSON.parse(o.options);

const gpu = nodeGpu();
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
if (!adapter) throw new Error('no WebGPU adapter (VK_ICD_FILENAMES?)');
const device = await adapter.requestDevice(deviceDescriptor(adapter));
let deviceError = null;
device.addEventListener?.('uncapturederror', (e) => (deviceError = e.error.message));
const info = adapter.info ?? {};
console.log(`adapter: ${info.vendor ?? ''} ${info.architecture ?? ''} ${info.description ?? ''}; subgroups ${device.features.has('subgroups') ? 'on' : 'off'} the device; ${new Date().toISOString()}`);

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const SPECIAL = [0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7f800000, 0xff800000, 0, 0x80000000, 1, 0x80000001, 0x3f800000, 0xbf800000];
function makeBits(distribution, n, seed) {
  const next = rng(seed);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; ++i) {
    if (distribution === 'uniform') out[i] = next();
    else if (distribution === 'few') out[i] = [7, 0x80000000, 0xdeadbeef, 3][next() % 4];
    else if (distribution === 'one99') out[i] = next() % 100 === 0 ? next() : 0x40490fdb;
    else if (distribution === 'special') out[i] = next() % 2 === 0 ? SPECIAL[next() % SPECIAL.length] : next();
    else if (distribution === 'sorted') out[i] = Math.floor((i * 4294967295) / Math.max(1, n - 1)) >>> 0;
    else throw new Error(distribution);
  }
  return out;
}

function orderOf(type, bits) {
  if (type === 'u32') return bits >>> 0;
  if (type === 'i32') return (bits ^ 0x80000000) >>> 0;
  return bits >= 0x80000000 ? ~bits >>> 0 : (bits + 0x80000000) >>> 0;
}

// Indices of a stable sort (LSD radix sort over 8-bit digits of the sort field).
function referenceOrder(type, bits, { descending = false, beginBit = 0, endBit = 32 }) {
  const n = bits.length;
  const field = new Uint32Array(n);
  const width = endBit - beginBit;
  for (let i = 0; i < n; ++i) {
    let v = orderOf(type, bits[i]);
    if (descending) v = ~v >>> 0;
    field[i] = width === 32 ? v : Math.floor(v / 2 ** beginBit) % 2 ** width;
  }
  let index = new Uint32Array(n).map((_, i) => i);
  let other = new Uint32Array(n);
  for (let shift = 0; shift < width; shift += 8) {
    const count = new Uint32Array(257);
    for (let i = 0; i < n; ++i) count[((field[index[i]] >>> shift) & 255) + 1] += 1;
    for (let d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (let i = 0; i < n; ++i) other[count[(field[index[i]] >>> shift) & 255]++] = index[i];
    [index, other] = [other, index];
  }
  return index;
}

function firstMismatch(actual, expected) {
  if (actual.length !== expected.length) return `length ${actual.length}, expected ${expected.length}`;
  for (let i = 0; i < expected.length; ++i)
    if (actual[i] !== expected[i]) return `element ${i} is ${actual[i]}, expected ${expected[i]}`;
  return null;
}

const ARRAY = { u32: Uint32Array, i32: Int32Array, f32: Float32Array };
let cases = 0;
let failures = 0;
function report(what, problem, ms) {
  cases += 1;
  if (problem) failures += 1;
  console.log(`${problem ? 'FAIL' : 'ok  '} ${what}${ms !== undefined ? ` (${ms.toFixed(0)} ms)` : ''}${problem ? `: ${problem}` : ''}`);
}

async function checkOne(type, bits, { values, descending = false, beginBit = 0, endBit = 32, sorterOptions }, what) {
  const n = bits.length;
  const keys = new ARRAY[type](bits.buffer.slice(0));
  const vals = values ? new Uint32Array(n).map((_, i) => (i * 2654435761) >>> 0) : undefined;
  const started = performance.now();
  let problem = null;
  try {
    const out = await sort(keys, { values: vals, descending, beginBit, endBit: endBit === 32 ? 0 : endBit, device, sorterOptions });
    const order = referenceOrder(type, bits, { descending, beginBit, endBit });
    problem = firstMismatch(new Uint32Array(out.keys.buffer), Uint32Array.from(order, (i) => bits[i]));
    if (!problem && values) problem = firstMismatch(out.values, Uint32Array.from(order, (i) => vals[i]));
  } catch (e) {
    problem = String(e?.message ?? e);
  }
  if (deviceError) {
    problem = `device error: ${deviceError}`;
    deviceError = null;
  }
  report(what, problem, performance.now() - started);
}

const modes = o.subgroups.split(',').map((m) => {
  if (m !== 'on' && m !== 'off') throw new Error(`--subgroups: '${m}' is not on or off`);
  return m === 'on';
});
for (const subgroups of modes) {
  if (subgroups && !device.features.has('subgroups')) {
    console.log('(no subgroups feature: subgroup path skipped)');
    continue;
  }
  const probe = new Sorter(device, { ...EXTRA, keyType: 'u32', subgroups });
  const probePairs = new Sorter(device, { ...EXTRA, keyType: 'u32', valueType: 'u32', subgroups });
  const shape = (s) => `${s.tuning} wg${s.workgroupSize} k${s.keysPerThread} ${s.subgroups ? 'subgroups' : `lanes${s.rankLanes}`} spin${s.spinLimit} win${s.lookbackWindow} slots${s.lookbackSlots}` +
    `${s.plainExchange ? ' plainx' : ''}${s.fullTile ? ' full' : ''}${s.claimById ? ' byid' : ''}${s.batchScan ? ' bscan' : ''}${s.wideHistogram ? ' whist' : ''}${s.subgroupScan ? ' sgscan' : ''}${s.uniformCount ? ' ucount' : ''}${s.unrollLoops ? ' unroll' : ''}`;
  console.log(`== subgroups ${subgroups ? 'on' : 'off'}: keys ${shape(probe)}; pairs ${shape(probePairs)}`);
  const tile = probe.tile;
  const sizes = new Set([0, 1, 2, 3, 255, 256, 1000, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile + 1, 3 * tile + 7, 65537, 200003, 1 << 20, MAX]);
  if (probePairs.tile !== tile) for (const s of [probePairs.tile - 1, probePairs.tile, probePairs.tile + 1]) sizes.add(s);
  const sorted = [...sizes].filter((s) => s <= MAX).sort((a, b) => a - b);
  const sorterOptions = { ...EXTRA, subgroups };
  for (const [type, values, descending] of [
    ['u32', true, false],
    ['u32', false, true],
    ['i32', true, true],
    ['i32', false, false],
    ['f32', true, false],
    ['f32', false, true],
  ]) {
    const list = o.quick ? sorted.filter((s) => s <= tile + 1 || s === MAX) : sorted;
    for (const n of list) {
      const bits = makeBits(type === 'f32' ? 'special' : 'uniform', n, n + 1);
      await checkOne(type, bits, { values, descending, sorterOptions }, `${type} ${values ? 'pairs' : 'keys'} ${descending ? 'desc' : 'asc'} n=${n}`);
    }
  }
  for (const d of ['few', 'one99', 'sorted'])
    for (const n of [tile, 1000003]) await checkOne('u32', makeBits(d, n, 7), { values: true, sorterOptions }, `u32 pairs ${d} n=${n}`);
  for (const [type, beginBit, endBit, descending] of [['u32', 4, 20, false], ['i32', 16, 32, true], ['f32', 8, 32, false], ['u32', 0, 8, true]])
    for (const n of [tile - 3, 1000003])
      await checkOne(type, makeBits('uniform', n, beginBit * 33 + endBit), { values: true, descending, beginBit, endBit, sorterOptions }, `${type} pairs bits ${beginBit}..${endBit} ${descending ? 'desc' : 'asc'} n=${n}`);
  // The look-back's fallback on this adapter: a spin limit of 0 and tiles that never publish.
  for (const [spinLimit, debug] of [[0, {}], [0, { refusePeriod: 3 }], [0, { tableSlots: 2 }]])
    await checkOne('u32', makeBits('uniform', 1000003, 5), { values: true, sorterOptions: { ...EXTRA, subgroups, spinLimit, debug } },
      `u32 pairs n=1000003 spin 0 ${JSON.stringify(debug)}`);
}

// The command on raw files (the adapter's defaults).
if (!o['no-cli']) {
  const BIN = fileURLToPath(new URL('../bin/gpusort-webgpu.js', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'gpusort-webgpu-check-'));
  try {
    for (const [type, values, descending, n] of [
      ['u32', true, false, MAX],
      ['i32', true, true, MAX - 1],
      ['f32', false, false, MAX + 1],
      ['f32', true, true, 777777],
      ['u32', false, true, 0],
    ]) {
      const bits = makeBits(type === 'f32' ? 'special' : 'uniform', n, n + 3);
      const vals = new Uint32Array(n).map((_, i) => i ^ 0x5a5a5a5a);
      writeFileSync(join(dir, 'k'), bits);
      writeFileSync(join(dir, 'v'), vals);
      const args = [BIN, 'sort', join(dir, 'k'), join(dir, 'o'), '--type', type];
      if (values) args.push('--values', join(dir, 'v'), '--values-out', join(dir, 'vo'), '--value-type', 'u32');
      if (descending) args.push('--descending');
      const started = performance.now();
      const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
      const what = `command: ${type} ${values ? 'pairs' : 'keys'} ${descending ? 'desc' : 'asc'} n=${n}`;
      if (r.status !== 0) {
        report(what, `status ${r.status}: ${r.stderr.trim().split('\n').pop()}`);
        continue;
      }
      const order = referenceOrder(type, bits, { descending });
      const read = (name) => new Uint32Array(new Uint8Array(readFileSync(join(dir, name))).buffer);
      let problem = firstMismatch(read('o'), Uint32Array.from(order, (i) => bits[i]));
      if (!problem && values) problem = firstMismatch(read('vo'), Uint32Array.from(order, (i) => vals[i]));
      report(what, problem, performance.now() - started);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`${cases - failures} of ${cases} cases correct${failures ? `, ${failures} FAILED` : ''}`);
process.exit(failures ? 1 : 0);
