// Shared by the tests: the device (Dawn over SwiftShader's Vulkan ICD where it is installed and no
// other ICD is chosen) and a check of a whole sort against the reference (reference.js).
import { existsSync } from 'node:fs';
import { assertSame, referenceOrder } from './reference.js';

export { assertSame, makeBits, referenceOrder, rng } from './reference.js';

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;

const gpusort = await import('../src/node.js');
export const { sort, Sorter, requestDevice, nodeGpu } = gpusort;

let devicePromise = null;
export function device() {
  if (!devicePromise)
    devicePromise = requestDevice(nodeGpu()).catch((e) => {
      throw new Error(`${e.message} (VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? ''}: Dawn needs a Vulkan driver it accepts; ` +
        `Debian's chromium package brings SwiftShader's ICD, ${SWIFTSHADER_ICD})`);
    });
  return devicePromise;
}

export const ARRAY = { u32: Uint32Array, i32: Int32Array, f32: Float32Array };

// Sorts with the GPU and checks keys and values (values = input indices: stability shows).
export async function checkSort(type, bits, options = {}, sortOptions = {}) {
  const n = bits.length;
  const keys = new ARRAY[type](bits.buffer.slice(0));
  const withValues = options.values ?? true;
  const values = withValues ? new Uint32Array(n).map((_, i) => i) : undefined;
  const range = { descending: !!options.descending, beginBit: options.beginBit ?? 0, endBit: options.endBit ?? 32 };
  const out = await sort(keys, { values, descending: range.descending, beginBit: range.beginBit, endBit: options.endBit ?? 0, device: await device(), ...sortOptions });
  const order = referenceOrder(type, bits, range);
  const gotBits = new Uint32Array(out.keys.buffer);
  const label = `${type} ${JSON.stringify(options)} n=${n}`;
  assertSame(gotBits, Uint32Array.from(order, (i) => bits[i]), `${label} keys`);
  if (withValues) assertSame(out.values, Uint32Array.from(order), `${label} values`);
  return out;
}
