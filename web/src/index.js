// gpusort-webgpu: GPU radix sort (Onesweep) on WebGPU.
// Engine face: Sorter / Workspace (the caller's GPUDevice, buffers and command encoder).
// Convenient face: sort() (typed arrays in, sorted typed arrays out).
import { KEY_TYPES, Sorter, VALUE_TYPES, Workspace, checkSortOptions } from './sorter.js';
import { isCpuAdapter, tuningFor } from './tuning.js';

export { KEY_TYPES, Sorter, VALUE_TYPES, Workspace, isCpuAdapter, tuningFor };

const ARRAY_TYPES = { u32: Uint32Array, i32: Int32Array, f32: Float32Array };

/** The key type of a typed array (Uint32Array: u32, Int32Array: i32, Float32Array: f32). */
export function keyTypeOf(array) {
  for (const [type, ctor] of Object.entries(ARRAY_TYPES)) if (array instanceof ctor) return type;
  return null;
}

let defaultDeviceFactory = null;
/** Sets how sort() gets a device when none is passed (the Node entry point sets Dawn's). */
export function setDefaultDeviceFactory(factory) {
  defaultDeviceFactory = factory;
  defaultDevicePromise = null;
}

let defaultDevicePromise = null;
/** What the sort can use of an adapter: its largest storage binding, buffer, workgroup memory and workgroup sizes, and the 'subgroups' feature where it has it. */
export function deviceDescriptor(adapter, { subgroups = true, features = [] } = {}) {
  const wanted = [...features];
  if (subgroups && adapter.features.has('subgroups') && !wanted.includes('subgroups')) wanted.push('subgroups');
  const l = adapter.limits;
  return {
    requiredFeatures: wanted,
    requiredLimits: {
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
      maxBufferSize: l.maxBufferSize,
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: l.maxComputeWorkgroupSizeX,
    },
  };
}

/** A device with deviceDescriptor(adapter)'s limits and features (WebGPU's navigator.gpu). */
export async function requestDevice(gpu = globalThis.navigator?.gpu, options = {}) {
  if (!gpu) throw new Error('WebGPU is not available (no navigator.gpu)');
  const adapter = await gpu.requestAdapter(options.adapterOptions);
  if (!adapter) throw new Error('WebGPU: no adapter');
  return adapter.requestDevice(deviceDescriptor(adapter, options));
}

export function defaultDevice() {
  if (!defaultDevicePromise) defaultDevicePromise = defaultDeviceFactory ? defaultDeviceFactory() : requestDevice();
  return defaultDevicePromise;
}

const sorterCache = new WeakMap();
function cachedSorter(device, options) {
  let perDevice = sorterCache.get(device);
  if (!perDevice) sorterCache.set(device, (perDevice = new Map()));
  const key = JSON.stringify(options);
  let sorter = perDevice.get(key);
  if (!sorter) perDevice.set(key, (sorter = new Sorter(device, options)));
  return sorter;
}

const USAGE = { MAP_READ: 1, COPY_SRC: 4, COPY_DST: 8, STORAGE: 128 };

const isShared = (array) => typeof SharedArrayBuffer !== 'undefined' && array.buffer instanceof SharedArrayBuffer;

// A new array of `array`'s type and length, over shared memory where `array`'s is.
function newArrayLike(array) {
  if (isShared(array)) return new array.constructor(new SharedArrayBuffer(array.byteLength));
  return new array.constructor(array.length);
}

// Writes `array` to the start of `buffer`; WebGPU refuses shared memory, so a view of a
// SharedArrayBuffer goes through a copy in an ArrayBuffer of its own.
function upload(device, buffer, array) {
  const source = isShared(array) ? array.slice() : array;
  device.queue.writeBuffer(buffer, 0, source.buffer, source.byteOffset, source.byteLength);
}

// What device.lost said of each device sort() used that has been lost since (null until then):
// WebGPU fails a lost device's work with errors that do not say why (an AbortError, no message).
const lostDevices = new WeakMap();
function watchLoss(device) {
  if (lostDevices.has(device)) return;
  lostDevices.set(device, null);
  device.lost?.then((info) => lostDevices.set(device, info));
}

// The error a failed sort reports: that the device was lost, where it was, else the failure itself.
function sortFailure(device, failure) {
  const info = lostDevices.get(device);
  if (!info) return failure;
  const message = String(info.message ?? '').replace(/\s*\n\s*/g, ' ');
  return new Error(`WebGPU: the GPU device was lost (${info.reason ?? 'unknown'})${message ? `: ${message}` : ''}`, { cause: failure });
}

/**
 * Sorts a Uint32Array, Int32Array or Float32Array (floats by IEEE-754 totalOrder) on the GPU,
 * stably, with optional 4-byte values carried along; returns new arrays of the input's types (over
 * shared memory where the input's is). Bad options are refused at every size, the tiniest too.
 */
export async function sort(keys, options = {}) {
  const keyType = options.keyType ?? keyTypeOf(keys);
  if (!KEY_TYPES.includes(keyType)) throw new TypeError('keys must be a Uint32Array, Int32Array or Float32Array');
  if (ArrayBuffer.isView(keys) && keys.BYTES_PER_ELEMENT !== 4) throw new TypeError('keys must have 4-byte elements');
  const values = options.values ?? null;
  if (values !== null) {
    if (!ArrayBuffer.isView(values) || values.BYTES_PER_ELEMENT !== 4) throw new TypeError('values must be a typed array of 4-byte elements');
    if (values.length !== keys.length) throw new RangeError(`values has ${values.length} elements, keys ${keys.length}`);
  }
  const config = {
    keyType,
    valueType: values ? 'u32' : null,
    descending: !!options.descending,
    beginBit: options.beginBit ?? 0,
    endBit: options.endBit ?? 0,
    ...(options.sorterOptions ?? {}),
  };
  // Refused alike at every size, before the early return of the smallest.
  checkSortOptions(config);
  const n = keys.length;
  const outKeys = newArrayLike(keys);
  const outValues = values ? newArrayLike(values) : null;
  if (n <= 1) {
    outKeys.set(keys);
    if (values) outValues.set(values);
    return { keys: outKeys, values: outValues };
  }
  const device = options.device ?? (await defaultDevice());
  watchLoss(device);
  const sorter = cachedSorter(device, config);
  if (n > sorter.maxCount) throw new RangeError(`${n} keys: this device sorts at most ${sorter.maxCount} at once`);
  const bytes = n * 4;
  const made = [];
  const buffer = (label, usage) => {
    const b = device.createBuffer({ label, size: bytes, usage });
    made.push(b);
    return b;
  };
  let workspace = null;
  try {
    // Validation and allocation failures of this sort become exceptions.
    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    let failure = null;
    let readKeys, readValues;
    try {
      const usage = USAGE.STORAGE | USAGE.COPY_DST | USAGE.COPY_SRC;
      const keyBuffer = buffer('gpusort keys', usage);
      const valueBuffer = values ? buffer('gpusort values', usage) : null;
      readKeys = buffer('gpusort keys read', USAGE.MAP_READ | USAGE.COPY_DST);
      readValues = values ? buffer('gpusort values read', USAGE.MAP_READ | USAGE.COPY_DST) : null;
      upload(device, keyBuffer, keys);
      if (values) upload(device, valueBuffer, values);
      workspace = sorter.createWorkspace(n);
      const encoder = device.createCommandEncoder();
      sorter.encode(encoder, { keys: keyBuffer, values: valueBuffer, count: n, workspace });
      encoder.copyBufferToBuffer(keyBuffer, 0, readKeys, 0, bytes);
      if (values) encoder.copyBufferToBuffer(valueBuffer, 0, readValues, 0, bytes);
      device.queue.submit([encoder.finish()]);
    } catch (e) {
      failure = e;
    }
    const invalid = await device.popErrorScope();
    const oom = await device.popErrorScope();
    if (failure) throw failure;
    if (invalid || oom) throw new Error(`WebGPU: ${(invalid || oom).message}`);
    await readKeys.mapAsync(USAGE.MAP_READ);
    new Uint8Array(outKeys.buffer).set(new Uint8Array(readKeys.getMappedRange()));
    if (values) {
      await readValues.mapAsync(USAGE.MAP_READ);
      new Uint8Array(outValues.buffer).set(new Uint8Array(readValues.getMappedRange()));
    }
    if (options.onWorkspace) await options.onWorkspace(workspace);
  } catch (e) {
    throw sortFailure(device, e);
  } finally {
    workspace?.destroy();
    for (const b of made) b.destroy();
  }
  return { keys: outKeys, values: outValues };
}
