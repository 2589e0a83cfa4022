// The engine face: the caller's device, buffers and encoder; counts read from a GPU buffer
// (indirect dispatch), clamped to the workspace's maxCount; the look-back's fallback forced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sorter, assertSame, device, makeBits, nodeGpu, referenceOrder, requestDevice } from './helpers.js';

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
  assert.throws(() => new Sorter(dev, { beginBit: 9, endBit: 8 }), { name: 'RangeError', message: 'beginBit must be an integer from 0 to 7, got 9 (the bit range [9, 8) is empty)' });
  assert.throws(() => new Sorter(dev, { beginBit: 8, endBit: 8 }), { name: 'RangeError', message: 'beginBit must be an integer from 0 to 7, got 8 (the bit range [8, 8) is empty)' });
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

test('subgroup ranking at the adapter\'s subgroup size (4 on SwiftShader): small path and Onesweep, both orders, look-back windows of 5 and 16, a table of 8 slots, the plain exchange', async () => {
  const dev = await device();
  assert.ok(dev.features.has('subgroups'), 'the test device has the subgroups feature');
  assert.equal(dev.adapterInfo.subgroupMinSize, 4);
  for (const [options, cases] of [
    [{ workgroupSize: 64, keysPerThread: 8, lookbackWindow: 5 }, [[2, 'uniform'], [100, 'few'], [512, 'uniform'], [513, 'few'], [30001, 'uniform'], [30001, 'small']]],
    [{ workgroupSize: 128, keysPerThread: 5, descending: true, lookbackWindow: 16, lookbackSlots: 8, plainExchange: true }, [[640, 'few'], [641, 'uniform'], [20000, 'few']]],
  ]) {
    const sorter = new Sorter(dev, { keyType: 'u32', valueType: 'u32', subgroups: true, ...options });
    assert.equal(sorter.subgroups, true);
    for (const [n, distribution] of cases) {
      const ws = await engineSort(sorter, makeBits(distribution, n, n), { hostCount: n, sorted: n });
      if (!ws.small) assert.equal(ws.slots, Math.min(options.lookbackSlots ?? 256, 2 ** Math.ceil(Math.log2(Math.ceil(n / sorter.tile)))));
      ws.destroy();
    }
  }
});

test('look-back windows of 16 and 5: the fallback forced (tiles that never publish, spin limit 0), both ranking paths, the plain exchange', async () => {
  const dev = await device();
  for (const [options, n, refusePeriod] of [
    [{ lookbackWindow: 16, plainExchange: true }, 60000, 3],
    [{ subgroups: true, workgroupSize: 64, keysPerThread: 8, lookbackWindow: 5 }, 30000, 2],
  ]) {
    const sorter = new Sorter(dev, { keyType: 'u32', valueType: 'u32', spinLimit: 0, ...options, debug: { refusePeriod } });
    const ws = await engineSort(sorter, makeBits('uniform', n, n), { hostCount: n, sorted: n });
    const tiles = Math.ceil(n / sorter.tile);
    const fallbacks = await ws.fallbackCount();
    const atLeast = 4 * Math.floor((tiles - 1) / refusePeriod);
    assert.ok(fallbacks >= atLeast, `${JSON.stringify(options)}: ${fallbacks} fallbacks, expected at least ${atLeast}`);
    ws.destroy();
  }
});

test('kernel variants (fullTile, claimById, batchScan, wideHistogram, subgroupScan, uniformCount, unrollLoops), both ranking paths: GPU and host counts, full and partial tiles, n % 4 != 0, the fallback forced', async () => {
  const dev = await device();
  const all = { fullTile: true, claimById: true, batchScan: true, wideHistogram: true, subgroupScan: true, uniformCount: true, unrollLoops: true };
  for (const options of [
    all,
    { ...all, subgroups: true, workgroupSize: 64, keysPerThread: 8 },
    { subgroups: true, workgroupSize: 128, keysPerThread: 5, plainExchange: true, descending: true, uniformCount: true, subgroupScan: true, unrollLoops: true },
  ]) {
    const sorter = new Sorter(dev, { keyType: 'u32', valueType: 'u32', ...options });
    for (const key of Object.keys(all)) if (options[key]) assert.equal(sorter[key], true, key);
    const tile = sorter.tile;
    for (const [n, maxCount, gpuCount, sorted] of [
      [3 * tile, 3 * tile, 3 * tile, 3 * tile],
      [20003, 20000, 4000000000, 20000],
      [20003, 20003, 15001, 15001],
      [tile - 3, tile - 3, tile - 3, tile - 3],  // the small-array path
      [2, 2, 2, 2],
    ])
      (await engineSort(sorter, makeBits('uniform', n, n + gpuCount), { maxCount, gpuCount, sorted })).destroy();
    (await engineSort(sorter, makeBits('few', 9001, 3), { maxCount: 9001, hostCount: 8999, sorted: 8999 })).destroy();
    const forced = new Sorter(dev, { keyType: 'u32', valueType: 'u32', ...options, spinLimit: 0, debug: { refusePeriod: 3 } });
    const n = 10 * tile + 3;
    const ws = await engineSort(forced, makeBits('uniform', n, 5), { hostCount: n, sorted: n });
    assert.ok((await ws.fallbackCount()) >= 4 * 3, `${JSON.stringify(options)}: the fallback ran`);
    ws.destroy();
  }
});

test('a device without the subgroups feature: the portable ranking by default, subgroups: true refused', async () => {
  const dev = await requestDevice(nodeGpu(), { subgroups: false });
  assert.equal(dev.features.has('subgroups'), false);
  const sorter = new Sorter(dev, { keyType: 'u32', valueType: 'u32', workgroupSize: 128 });
  assert.equal(sorter.subgroups, false);
  (await engineSort(sorter, makeBits('few', 9001, 4), { hostCount: 9001, sorted: 9001 })).destroy();
  assert.throws(() => new Sorter(dev, { subgroups: true }), /subgroups: the device lacks the 'subgroups' feature/);
  dev.destroy();
});

// A device object with what the Sorter reads of one (adapter info, features, limits; buffers that
// hold nothing): the defaults of adapters this machine does not have.
function fakeDevice(info, { features = [], ...limits } = {}) {
  return {
    adapterInfo: info,
    features: new Set(features),
    limits: {
      maxStorageBufferBindingSize: 2 ** 31 - 4,
      maxComputeWorkgroupStorageSize: 49152,
      maxComputeInvocationsPerWorkgroup: 1024,
      maxComputeWorkgroupSizeX: 1024,
      ...limits,
    },
    createBuffer: ({ size }) => ({ size, destroy() {} }),
    queue: { writeBuffer() {} },
  };
}

const shapeOf = (s) => ({ tuning: s.tuning, workgroupSize: s.workgroupSize, keysPerThread: s.keysPerThread, rankLanes: s.rankLanes,
  subgroups: s.subgroups, spinLimit: s.spinLimit, lookbackWindow: s.lookbackWindow, lookbackSlots: s.lookbackSlots });

test('per-adapter defaults: the tuning table, stepped down to what the device allows; explicit options win or are refused', async () => {
  const nvidia = { vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H100', subgroupMinSize: 32, subgroupMaxSize: 32 };
  const h100 = fakeDevice(nvidia, { features: ['subgroups'] });
  const gpuRow = { workgroupSize: 256, keysPerThread: 16, rankLanes: 32, subgroups: true, spinLimit: 64, lookbackWindow: 16, lookbackSlots: 4096 };
  assert.deepEqual(shapeOf(new Sorter(h100, { keyType: 'u32' })),
    { tuning: 'nvidia', workgroupSize: 512, keysPerThread: 20, rankLanes: 32, subgroups: true, spinLimit: 64, lookbackWindow: 16, lookbackSlots: 4096 });
  assert.deepEqual(shapeOf(new Sorter(h100, { keyType: 'f32', valueType: 'u32' })),
    { tuning: 'nvidia', workgroupSize: 512, keysPerThread: 20, rankLanes: 32, subgroups: true, spinLimit: 64, lookbackWindow: 16, lookbackSlots: 4096 });
  // The look-back table holds every tile of 2^24 keys (1639 tiles of 10240): no slot is reused.
  assert.equal(new Sorter(h100, { keyType: 'u32' }).createWorkspace(2 ** 24).slots, 2048);
  assert.equal(new Sorter(h100, { keyType: 'u32', keysPerThread: 4 }).createWorkspace(2 ** 24).slots, 4096);
  // Without the feature, 256 invocations and 16 KiB of workgroup memory: portable, smaller tiles
  // (256 x 9 keys: 2304 exchange words + 512 for the portable ranking + 1048 for the rest fit 4096).
  assert.deepEqual(shapeOf(new Sorter(fakeDevice(nvidia, { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupSizeX: 256, maxComputeWorkgroupStorageSize: 16384 }))),
    { tuning: 'nvidia', workgroupSize: 256, keysPerThread: 9, rankLanes: 32, subgroups: false, spinLimit: 64, lookbackWindow: 16, lookbackSlots: 4096 });
  // CPU adapters keep SwiftShader's shape; the test device is one.
  const cpuRow = { tuning: 'cpu', workgroupSize: 256, keysPerThread: 8, rankLanes: 16, subgroups: false, spinLimit: 256, lookbackWindow: 1, lookbackSlots: 256 };
  assert.deepEqual(shapeOf(new Sorter(await device())), cpuRow);
  assert.deepEqual(shapeOf(new Sorter(fakeDevice({ vendor: 'mesa', description: 'llvmpipe (LLVM 15.0.6, 256 bits)' }, { features: ['subgroups'] }))), cpuRow);
  // Other GPUs: 256 invocations; subgroups where the counters of the narrowest subgroups fit.
  assert.deepEqual(shapeOf(new Sorter(fakeDevice({ vendor: 'amd', architecture: 'rdna-3', subgroupMinSize: 32, subgroupMaxSize: 64 }, { features: ['subgroups'] }))), { tuning: 'gpu', ...gpuRow });
  assert.deepEqual(shapeOf(new Sorter(fakeDevice({ vendor: 'arm', architecture: 'valhall', subgroupMinSize: 4, subgroupMaxSize: 16 }, { features: ['subgroups'], maxComputeWorkgroupStorageSize: 32768 }))),
    { tuning: 'gpu', ...gpuRow, subgroups: false });
  assert.deepEqual(shapeOf(new Sorter(fakeDevice({}))), { tuning: 'gpu', ...gpuRow, subgroups: false });
  // Explicit options.
  assert.deepEqual(shapeOf(new Sorter(h100, { workgroupSize: 1024, keysPerThread: 7, subgroups: false, rankLanes: 64, spinLimit: 0, lookbackWindow: 3, lookbackSlots: 64 })),
    { tuning: 'nvidia', workgroupSize: 1024, keysPerThread: 7, rankLanes: 64, subgroups: false, spinLimit: 0, lookbackWindow: 3, lookbackSlots: 64 });
  const small = fakeDevice(nvidia, { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 16384 });
  assert.throws(() => new Sorter(small, { workgroupSize: 512 }), /workgroupSize 512: the device allows at most 256 invocations per workgroup/);
  assert.throws(() => new Sorter(small, { subgroups: true }), /subgroups: the device lacks the 'subgroups' feature/);
  assert.throws(() => new Sorter(small, { keysPerThread: 16 }), /workgroupSize 256 x keysPerThread 16 needs \d+ bytes of workgroup memory, the device allows 16384/);
  assert.throws(() => new Sorter(h100, { workgroupSize: 96 }), /workgroupSize must be one of 64, 128, 256, 512, 1024, got 96/);
  assert.throws(() => new Sorter(h100, { lookbackSlots: 100 }), /lookbackSlots must be a power of two/);
  assert.throws(() => new Sorter(h100, { lookbackWindow: 0 }), /lookbackWindow must be an integer from 1 to 32/);
});
