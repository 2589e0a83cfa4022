// The convenient face on every key type, with and without values, both orders, bit ranges,
// distributions and sizes around the small-array path's limit and tile boundaries (tile 2048).
import { test } from 'node:test';
import { checkSort, makeBits } from './helpers.js';

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
    ['u32', 7, 7, false],
  ]) {
    for (const n of [1000, 50001]) await checkSort(type, makeBits('uniform', n, beginBit * 33 + endBit), { beginBit, endBit, descending });
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
