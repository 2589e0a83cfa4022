// Deterministic data and a stable reference sort in plain JavaScript (no Node modules: the page
// test loads it in the browser too).

// mulberry32: a small deterministic generator of u32s.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

// Raw 32-bit patterns of a distribution; the caller views them as its key type.
export function makeBits(distribution, n, seed = 1) {
  const next = rng(seed);
  const out = new Uint32Array(n);
  const special = [0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7f800000, 0xff800000, 0x00000000, 0x80000000,
    0x00000001, 0x80000001, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff, 0x7fffffff, 0xffffffff];
  for (let i = 0; i < n; ++i) {
    switch (distribution) {
      case 'uniform': out[i] = next(); break;
      case 'equal': out[i] = 0x12345678; break;
      case 'sorted': out[i] = Math.floor((i * 4294967295) / Math.max(1, n - 1)) >>> 0; break;
      case 'reversed': out[i] = Math.floor(((n - 1 - i) * 4294967295) / Math.max(1, n - 1)) >>> 0; break;
      case 'few': out[i] = [7, 0x80000000, 0xdeadbeef, 3][next() % 4]; break;
      case 'one99': out[i] = next() % 100 === 0 ? next() : 0x40490fdb; break;
      case 'special': out[i] = next() % 2 === 0 ? special[next() % special.length] : next(); break;
      case 'small': out[i] = next() & 0xfff; break;
      default: throw new Error(distribution);
    }
  }
  return out;
}

// IEEE-754 totalOrder of float bit patterns as an unsigned number: -NaN < -inf < ... < -0 < +0 <
// ... < +inf < +NaN (a negative pattern sorts by its complement, a positive one above all of them).
function orderOf(type, bits) {
  bits >>>= 0;
  if (type === 'u32') return bits;
  if (type === 'i32') return (bits ^ 0x80000000) >>> 0;
  return bits >= 0x80000000 ? (~bits) >>> 0 : (bits + 0x80000000) >>> 0;
}

// Indices of a stable sort of `bits` (raw patterns) by key type, order and bit range.
export function referenceOrder(type, bits, { descending = false, beginBit = 0, endBit = 32 } = {}) {
  const n = bits.length;
  const field = new Float64Array(n);
  const width = endBit - beginBit;
  for (let i = 0; i < n; ++i) {
    let o = orderOf(type, bits[i]);
    if (descending) o = (~o) >>> 0;
    field[i] = Math.floor(o / 2 ** beginBit) % 2 ** width;
  }
  const index = new Uint32Array(n).map((_, i) => i);
  // Array.prototype.sort is stable; equal fields keep their input order (in both directions).
  return Array.from(index).sort((a, b) => field[a] - field[b]);
}

// Whole-array comparison, naming the first mismatch.
export function assertSame(actual, expected, what) {
  if (actual.length !== expected.length) throw new Error(`${what}: length ${actual.length}, expected ${expected.length}`);
  for (let i = 0; i < expected.length; ++i)
    if (actual[i] !== expected[i]) throw new Error(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]} (n = ${expected.length})`);
}

