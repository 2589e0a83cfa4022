// gpusort-webgpu sort IN OUT --type u32|i32|f32 [--values VIN --values-out VOUT --value-type T]
//                            [--descending] [--begin-bit B] [--end-bit E] [--in-place]
// Raw little-endian arrays, the same meaning as `gpusort sort` on raw files: a stable sort of the
// keys (floats by IEEE-754 totalOrder), values carried along. Outputs appear only when complete
// (a temporary file beside each, renamed into place, keys and values together). Every failure is
// one line "gpusort-webgpu: error: ..." on standard error and exit status 1.
import { closeSync, fstatSync, fsyncSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

const PROGRAM = 'gpusort-webgpu';
const TYPES = ['u32', 'i32', 'f32'];
const ARRAY = { u32: Uint32Array, i32: Int32Array, f32: Float32Array };
const NPY_MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]);

const USAGE = `Usage: ${PROGRAM} sort IN OUT --type u32|i32|f32 [options]
Sort a raw little-endian array file on the GPU (WebGPU), stably; floats in IEEE-754 totalOrder.
'-' as IN reads standard input, as OUT writes standard output.
Options:
  -t, --type T          key type: u32, i32 or f32 (required)
  --values VIN          values to carry along with the keys (4-byte elements)
  --values-out VOUT     where to write the values in sorted order
  --value-type T        value element type: u32, i32 or f32 (required with --values)
  -d, --descending      sort in descending order (still stable)
  --begin-bit B         first key bit (of the radix order) to sort by (default 0)
  --end-bit E           one past the last key bit to sort by (0: all; default 0)
  --in-place            allow OUT to be IN (and VOUT to be VIN)
  -h, --help            show this help
Outputs appear only when complete, keys and values together.
`;

class UsageError extends Error {}

function parseType(text, option) {
  if (TYPES.includes(text)) return text;
  if (['u64', 'i64', 'f64'].includes(text)) throw new UsageError(`${option}: ${text} is not supported by ${PROGRAM} (u32, i32 or f32)`);
  throw new UsageError(`${option}: unknown type '${text}' (expected one of u32, i32, f32)`);
}

function parseBit(text, option) {
  if (!/^\d+$/.test(text) || Number(text) > 32) throw new UsageError(`${option}: '${text}' is not a bit index from 0 to 32`);
  return Number(text);
}

function sameFile(a, b) {
  if (a === '-' || b === '-') return false;
  try {
    const sa = statSync(a), sb = statSync(b);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

function refuseSame(output, outputName, input, inputName, inPlace) {
  if (!sameFile(output, input)) return;
  if (inPlace === true) return;
  throw new UsageError(`${outputName} '${output}' is the same file as ${inputName} '${input}'${inPlace === false ? ' (pass --in-place to replace it)' : ''}`);
}

function readArray(path, who, type, typeOption) {
  let bytes;
  try {
    bytes = path === '-' ? readFileSync(0) : readFileSync(path);
  } catch (e) {
    throw new UsageError(`${who}: cannot read: ${e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a directory' : e.message}`);
  }
  if (bytes.length >= NPY_MAGIC.length && bytes.subarray(0, NPY_MAGIC.length).equals(NPY_MAGIC))
    throw new UsageError(`${who}: is a .npy file; ${PROGRAM} reads raw little-endian arrays only`);
  if (type === null)
    throw new UsageError(`${who}: is a raw array, so ${typeOption} must give its element type (u32, i32 or f32)`);
  if (bytes.length % 4 !== 0)
    throw new UsageError(`${who}: size ${bytes.length} bytes is not a multiple of the 4-byte ${type} element`);
  // A copy at offset 0 (Buffer's pool may start at any offset).
  const array = new ARRAY[type](bytes.length / 4);
  new Uint8Array(array.buffer).set(bytes);
  return array;
}

// Writes every output to a temporary file beside it, then renames them all into place.
function writeOutputs(outputs) {
  const temps = [];
  try {
    for (const { path, who, array } of outputs) {
      const data = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      if (path === '-') continue;
      const temp = join(dirname(path), `.${basename(path)}.${PROGRAM}-${randomBytes(6).toString('hex')}`);
      let fd;
      try {
        fd = openSync(temp, 'wx', 0o666);
      } catch (e) {
        throw new UsageError(`${who}: cannot create a temporary file in '${dirname(path)}': ${e.code ?? e.message}`);
      }
      temps.push(temp);
      try {
        for (let done = 0; done < data.length; ) done += writeSync(fd, data, done, data.length - done);
        fsyncSync(fd);
      } catch (e) {
        throw new UsageError(`${who}: cannot write: ${e.code ?? e.message}`);
      } finally {
        closeSync(fd);
      }
    }
    let t = 0;
    for (const { path, who } of outputs) {
      if (path === '-') continue;
      try {
        renameSync(temps[t], path);
      } catch (e) {
        throw new UsageError(`${who}: cannot rename the temporary file into place: ${e.code ?? e.message}`);
      }
      temps[t++] = null;
    }
  } finally {
    for (const temp of temps) {
      if (temp === null) continue;
      try {
        unlinkSync(temp);
      } catch {}
    }
  }
  for (const { path, array } of outputs) {
    if (path !== '-') continue;
    const data = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let done = 0; done < data.length; ) done += writeSync(1, data, done, data.length - done);
  }
}

async function runSort(args) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        type: { type: 'string', short: 't' },
        values: { type: 'string' },
        'values-out': { type: 'string' },
        'value-type': { type: 'string' },
        descending: { type: 'boolean', short: 'd' },
        'begin-bit': { type: 'string' },
        'end-bit': { type: 'string' },
        'in-place': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    throw new UsageError(e.message.split('\n')[0].replace(/\. To specify.*$/, ''));
  }
  const o = parsed.values;
  if (o.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [input, output, ...extra] = parsed.positionals;
  if (input === undefined || output === undefined) throw new UsageError('sort needs IN and OUT (see --help)');
  if (extra.length) throw new UsageError(`unexpected argument '${extra[0]}'`);
  for (const [name, value] of [['IN', input], ['OUT', output], ['--values', o.values], ['--values-out', o['values-out']]])
    if (value === '') throw new UsageError(`${name}: empty path`);
  const keyType = o.type === undefined ? null : parseType(o.type, '--type');
  const valueType = o['value-type'] === undefined ? null : parseType(o['value-type'], '--value-type');
  const beginBit = o['begin-bit'] === undefined ? 0 : parseBit(o['begin-bit'], '--begin-bit');
  const endBit = o['end-bit'] === undefined ? 0 : parseBit(o['end-bit'], '--end-bit');
  if (beginBit > (endBit || 32)) throw new UsageError(`--begin-bit ${beginBit} is beyond --end-bit ${endBit || 32}`);
  const withValues = o.values !== undefined;
  if (withValues && o['values-out'] === undefined)
    throw new UsageError('--values needs --values-out VOUT: where to write the values in their sorted order');
  if (!withValues && o['values-out'] !== undefined) throw new UsageError('--values-out needs --values VIN: the values to carry along with the keys');
  if (!withValues && valueType !== null) throw new UsageError('--value-type needs --values VIN');
  const inPlace = !!o['in-place'];
  refuseSame(output, 'OUT', input, 'IN', inPlace);
  if (withValues) {
    const vin = o.values, vout = o['values-out'];
    refuseSame(vout, 'VOUT', vin, 'VIN', inPlace);
    refuseSame(output, 'OUT', vin, 'VIN', undefined);
    refuseSame(vout, 'VOUT', input, 'IN', undefined);
    if (input === '-' && vin === '-') throw new UsageError("IN and VIN are both '-': only one of them can be standard input");
    if (output === '-' && vout === '-') throw new UsageError("OUT and VOUT are both '-': only one of them can be standard output");
    if (output === vout || sameFile(output, vout)) throw new UsageError(`OUT and VOUT are the same file '${output}'`);
  }
  const keys = readArray(input, `keys file '${input}'`, keyType, '--type');
  let values = null;
  if (withValues) {
    values = readArray(o.values, `values file '${o.values}'`, valueType, '--value-type');
    if (values.length !== keys.length)
      throw new UsageError(`key/value count mismatch: keys file '${input}' holds ${keys.length} elements but values file '${o.values}' holds ${values.length}`);
  }
  let sorted = { keys, values };
  if (keys.length > 1) {
    const { sort } = await import('./node.js');
    sorted = await sort(keys, { values: values ?? undefined, keyType, descending: !!o.descending, beginBit, endBit });
  }
  const outputs = [{ path: output, who: `OUT '${output}'`, array: sorted.keys }];
  if (withValues) outputs.push({ path: o['values-out'], who: `VOUT '${o['values-out']}'`, array: sorted.values });
  writeOutputs(outputs);
  return 0;
}

/** Runs the command line (without the program name); returns the exit status. */
export async function main(argv) {
  try {
    const [command, ...rest] = argv;
    if (command === undefined || command === '-h' || command === '--help') {
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    }
    if (command !== 'sort') throw new UsageError(`unknown command '${command}' (expected: sort)`);
    return await runSort(rest);
  } catch (e) {
    const message = String(e?.message ?? e).replace(/\s*\n\s*/g, ' ');
    process.stderr.write(`${PROGRAM}: error: ${message}\n`);
    return 1;
  }
}
