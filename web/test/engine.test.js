// The engine face: the caller's device, buffers and encoder; counts read from a GPU buffer
// (indirect dispatch), clamped to the workspace's maxCount; the look-back's fallback forced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sorter, assertSame, device, makeBits, referenceOrder } from './helpers.js';

const STORAGE = 128, COPY_SRC = 4, COPY_DST = 8, MAP_READ = 1;

async function upload(dev, array, usage = STORAGE | COPY_SRC | COPY_DST) {
  const b = dev.createBuffer({ size: Math.max(16, array.byteLength), usage });
  dev.queue.writeBuffer(b, 0, array);
  return b;
}

async function download(dev, buffer, n) {
  const read = dev.createBuffer({ size: Math.max(16, n * 4), usage: MAP_READ | COPY_DST });
  const e = dev.createCommandEncoder();
  e.copyBufferToBuffer(buffer, 0, read, 0, Math.max(16, n * 4));
  dev.queue.submit([e.finish()]);
  await read.mapAsync(MAP_READ);
  const out = new Uint32Array(read.getMappedRange().slice(0, n * 4));
  read.destroy();
  return out;
}

// Sorts `bits` as u32 pairs (values = indices) through encode(); the count from a GPU buffer
// (word 1 of a small buffer) when gpuCount is given, else from the host. Checks the whole
// buffers: the first `sorted` elements sorted, the rest untouched. Returns the workspace.
async function engineSort(sorter, bits, { maxCount = bits.length, gpuCount, hostCount, sorted }) {
  const dev = sorter.device;
  const n = bits.length;
  const values = new Uint32Array(n).map((_, i) => i);
  const keyBuffer = await upload(dev, bits);
  const valueBuffer = await upload(dev, values);
  const workspace = sorter.createWorkspace(maxCount);
  dev.pushErrorScope('validation');
  const encoder = dev.createCommandEncoder();
  if (gpuCount !== undefined) {
    const countBuffer = await upload(dev, new Uint32Array([0xdead, gpuCount, 0xbeef, 0]), STORAGE | COPY_DST);
    sorter.encode(encoder, { keys: keyBuffer, values: valueBuffer, count: countBuffer, countOffset: 4, workspace });
  } else {
    sorter.encode(encoder, { keys: keyBuffer, values: valueBuffer, count: hostCount, workspace });
  }
  dev.queue.submit([encoder.finish()]);
  const error = await dev.popErrorScope();
  assert.equal(error, null, error?.message);
  const gotKeys = await download(dev, keyBuffer, n);
  const gotValues = await download(dev, valueBuffer, n);
  const head = bits.subarray(0, sorted);
  const order = referenceOrder('u32', head, { descending: sorter.descending });
  const expectedValues = Uint32Array.from({ length: n }, (_, i) => (i < sorted ? order[i] : i));
  assertSame(gotValues, expectedValues, `values (n ${n}, sorted ${sorted})`);
  assertSame(gotKeys, Uint32Array.from(expectedValues, (i) => bits[i]), `keys (n ${n}, sorted ${sorted})`);
  keyBuffer.destroy();
  valueBuffer.destroy();
  return workspace;
}

test('count from a GPU buffer: below, at and above maxCount, zero; small path and Onesweep', async () => {
  const sorter = new Sorter(await device(), { keyType: 'u32', valueType: 'u32' });
  for (const [n, maxCount, gpuCount, sorted] of [
    [30000, 30000, 17001, 17001],
    [30000, 30000, 30000, 30000],
    [30000, 20000, 4000000000, 20000],
    [30000, 30000, 0, 0],
    [30000, 30000, 1, 1],
    [2000, 2000, 1234, 1234],
    [2000, 1500, 1999, 1500],
  ])
    (await engineSort(sorter, makeBits('uniform', n, n + gpuCount), { maxCount, gpuCount, sorted })).destroy();
});

test('host count below maxCount; one workspace reused', async () => {
  const sorter = new Sorter(await device(), { keyType: 'u32', valueType: 'u32', descending: true });
  (await engineSort(sorter, makeBits('few', 9000, 1), { maxCount: 9000, hostCount: 8000, sorted: 8000 })).destroy();
});

test('Onesweep at sizes of the small-array path (smallPath: false)', async () => {
  const sorter = new Sorter(await device(), { keyType: 'u32', valueType: 'u32', smallPath: false });
  for (const n of [2, 3, 100, 2047, 2048]) (await engineSort(sorter, makeBits('uniform', n, n), { hostCount: n, sorted: n })).destroy();
});

test('other tile shapes: 3 keys per invocation in rank groups of 8, 16 in groups of 32, 12 in one group of 256', async () => {
  for (const [keysPerThread, rankLanes, n] of [[3, 8, 20000], [16, 32, 70001], [12, 256, 9000]]) {
    const sorter = new Sorter(await device(), { keyType: 'u32', valueType: 'u32', keysPerThread, rankLanes });
    for (const size of [sorter.tile, n]) (await engineSort(sorter, makeBits('few', size, size), { hostCount: size, sorted: size })).destroy();
  }
});

test('look-back fallback forced: every third tile never publishes; then no tile publishes', async () => {
  const dev = await device();
  for (const [refusePeriod, spinLimit, n] of [[3, 4, 100000], [1, 0, 30000]]) {
    const sorter = new Sorter(dev, { keyType: 'u32', valueType: 'u32', spinLimit, debug: { refusePeriod } });
    const ws = await engineSort(sorter, makeBits('uniform', n, refusePeriod), { hostCount: n, sorted: n });
    const tiles = Math.ceil(n / sorter.tile);
    const fallbacks = await ws.fallbackCount();
    // Each of the 4 passes: every successor of a refusing tile recounts at least one tile.
    const atLeast = 4 * Math.floor((tiles - 1) / refusePeriod);
    assert.ok(fallbacks >= atLeast, `${fallbacks} fallbacks, expected at least ${atLeast}`);
    ws.destroy();
  }
});

test('circular table of 2 slots (tiles reuse slots at once), spin limit 0', async () => {
  const sorter = new Sorter(await device(), { keyType: 'u32', valueType: 'u32', spinLimit: 0, debug: { tableSlots: 2 } });
  const ws = await engineSort(sorter, makeBits('uniform', 120001, 9), { hostCount: 120001, sorted: 120001 });
  assert.equal(ws.slots, 2);
  ws.destroy();
});

test('bad options and arguments are refused with a message', async () => {
  const dev = await device();
  assert.throws(() => new Sorter(dev, { keyType: 'u64' }), /keyType must be one of u32, i32, f32/);
  assert.throws(() => new Sorter(dev, { beginBit: 9, endBit: 8 }), /beginBit must be an integer from 0 to 8/);
  assert.throws(() => new Sorter(dev, { endBit: 33 }), /endBit must be an integer from 1 to 32/);
  const sorter = new Sorter(dev, { keyType: 'u32' });
  const ws = sorter.createWorkspace(100);
  const keys = dev.createBuffer({ size: 400, usage: STORAGE });
  assert.throws(() => sorter.encode(dev.createCommandEncoder(), { keys, count: 101, workspace: ws }), /count must be an integer from 0 to 100/);
  assert.throws(() => sorter.encode(dev.createCommandEncoder(), { keys, values: keys, count: 10, workspace: ws }), /no values/);
  assert.throws(() => sorter.createWorkspace(-1), /maxCount/);
  const small = dev.createBuffer({ size: 200, usage: STORAGE });
  const countBuffer = dev.createBuffer({ size: 8, usage: STORAGE });
  assert.throws(() => sorter.encode(dev.createCommandEncoder(), { keys: small, count: countBuffer, workspace: ws }), /keys buffer holds 200 bytes, the workspace's maxCount needs 400/);
  assert.throws(() => sorter.encode(dev.createCommandEncoder(), { keys, count: countBuffer, countOffset: 8, workspace: ws }), /countOffset 8 needs 12/);
  assert.throws(() => sorter.encode(dev.createCommandEncoder(), { keys, count: countBuffer, countOffset: 2, workspace: ws }), /multiple of 4/);
});
