// The convenient face on every key type, with and without values, both orders, bit ranges,
// distributions and sizes around the small-array path's limit and tile boundaries (tile 2048);
// bad bit options refused at every size, arrays over shared memory, a device that is lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ARRAY, assertSame, checkSort, device, makeBits, nodeGpu, referenceOrder, requestDevice, sort } from './helpers.js';

const TILE = 2048;
const SIZES = [0, 1, 2, 3, 255, 256, 1000, TILE - 1, TILE, TILE + 1, 2 * TILE - 1, 2 * TILE + 1, 3 * TILE + 7, 65537, 200003];

for (const [type, values, descending] of [
  ['u32', true, false],
  ['u32', false, true],
  ['i32', true, true],
  ['i32', false, false],
  ['f32', true, false],
  ['f32', false, true],
]) {
  test(`${type} ${values ? 'pairs' : 'keys'} ${descending ? 'descending' : 'ascending'}: sizes`, async () => {
    for (const n of SIZES) await checkSort(type, makeBits(type === 'f32' ? 'special' : 'uniform', n, n + 1), { values, descending });
  });
}

test('u32 pairs: distributions', async () => {
  for (const d of ['equal', 'sorted', 'reversed', 'few', 'one99', 'small']) {
    for (const n of [TILE, 100000]) await checkSort('u32', makeBits(d, n, 7), {});
  }
});

test('f32 pairs descending: NaN, +-0, +-inf and other specials among uniform bits', async () => {
  for (const n of [500, 70001]) await checkSort('f32', makeBits('special', n, 3), { descending: true });
});

test('i32 pairs: distributions', async () => {
  for (const d of ['few', 'one99', 'reversed']) await checkSort('i32', makeBits(d, 30011, 5), {});
});

test('bit ranges', async () => {
  for (const [type, beginBit, endBit, descending] of [
    ['u32', 4, 20, false],
    ['u32', 0, 8, true],
    ['u32', 3, 4, false],
    ['i32', 16, 32, false],
    ['f32', 8, 32, true],
  ]) {
    for (const n of [1000, 50001]) await checkSort(type, makeBits('uniform', n, beginBit * 33 + endBit), { beginBit, endBit, descending });
  }
});

test('bad bit options: the same refusal at every size (the tiny arrays too), an empty bit range among them', async () => {
  const dev = await device();
  for (const [options, message] of [
    [{ beginBit: -1 }, 'beginBit must be an integer from 0 to 31, got -1'],
    [{ beginBit: 1.5 }, 'beginBit must be an integer from 0 to 31, got 1.5'],
    [{ endBit: 33 }, 'endBit must be an integer from 1 to 32, got 33'],
    [{ beginBit: 8, endBit: 8 }, 'beginBit must be an integer from 0 to 7, got 8 (the bit range [8, 8) is empty)'],
    [{ beginBit: 32 }, 'beginBit must be an integer from 0 to 31, got 32 (the bit range [32, 32) is empty)'],
    [{ beginBit: 9, endBit: 8 }, 'beginBit must be an integer from 0 to 7, got 9 (the bit range [9, 8) is empty)'],
  ]) {
    for (const n of [0, 1, 3, 5000])
      await assert.rejects(sort(new Uint32Array(n), { ...options, device: dev }), { name: 'RangeError', message }, `${JSON.stringify(options)} n=${n}`);
  }
});

// A typed array of `type` over a new SharedArrayBuffer, `offset` bytes in, holding `bits`.
function sharedArray(type, bits, offset = 0) {
  const array = new ARRAY[type](new SharedArrayBuffer(offset + bits.byteLength), offset, bits.length);
  new Uint32Array(array.buffer, offset, bits.length).set(bits);
  return array;
}

test('keys and values over a SharedArrayBuffer (at a byte offset): sorted into new arrays over shared memory, the inputs untouched', async () => {
  const dev = await device();
  for (const [type, n] of [['i32', 300], ['f32', 5001], ['u32', 1]]) {
    const bits = makeBits(type === 'f32' ? 'special' : 'uniform', n, n + 5);
    const ids = Uint32Array.from({ length: n }, (_, i) => i);
    const keys = sharedArray(type, bits, 8);
    const values = sharedArray('u32', ids);
    const out = await sort(keys, { values, device: dev });
    const order = referenceOrder(type, bits);
    const label = `${type} n=${n}`;
    assert.ok(out.keys instanceof ARRAY[type] && out.keys.buffer instanceof SharedArrayBuffer, `${label}: keys over shared memory`);
    assert.ok(out.values instanceof Uint32Array && out.values.buffer instanceof SharedArrayBuffer, `${label}: values over shared memory`);
    assertSame(new Uint32Array(out.keys.buffer, out.keys.byteOffset, n), Uint32Array.from(order, (i) => bits[i]), `${label} keys`);
    assertSame(out.values, Uint32Array.from(order), `${label} values`);
    assertSame(new Uint32Array(keys.buffer, keys.byteOffset, n), bits, `${label} input keys`);
    assertSame(values, ids, `${label} input values`);
  }
});

test('a lost device: one line saying so, with WebGPU\'s reason and message (destroyed before the sort, and during it)', async () => {
  const message = 'WebGPU: the GPU device was lost (destroyed): device was destroyed';
  for (const when of ['before', 'during']) {
    const dev = await requestDevice(nodeGpu());
    if (when === 'before') dev.destroy();
    const sorting = sort(new Uint32Array([3, 1, 2]), { values: new Uint32Array([0, 1, 2]), device: dev });
    if (when === 'during') dev.destroy();
    await assert.rejects(sorting, { name: 'Error', message }, when);
  }
});

test('u32 pairs: 1.5 million keys', async () => {
  await checkSort('u32', makeBits('uniform', 1500000, 11), {});
});

test('subgroup ranking (subgroup size 4 on SwiftShader): every key type, with and without values, both orders, a bit range', async () => {
  const sorterOptions = { subgroups: true, workgroupSize: 64, keysPerThread: 8 }; // tiles of 512
  for (const [type, values, descending, beginBit, endBit] of [
    ['u32', true, false, 4, 20],
    ['i32', false, true, 0, 32],
    ['f32', true, true, 0, 32],
  ]) {
    for (const n of [300, 513, 20001])
      await checkSort(type, makeBits(type === 'f32' ? 'special' : 'uniform', n, n + beginBit), { values, descending, beginBit, endBit }, { sorterOptions });
  }
});
