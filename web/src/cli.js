// gpusort-webgpu sort IN OUT --type u32|i32|f32 [--values VIN --values-out VOUT --value-type T]
//                            [--descending] [--begin-bit B] [--end-bit E] [--in-place]
// Raw little-endian arrays, the same meaning as `gpusort sort` on raw files: a stable sort of the
// keys (floats by IEEE-754 totalOrder), values carried along. Outputs appear only when complete
// (a temporary file beside each, renamed into place, keys and values together); an existing FIFO
// or device is written into instead, never replaced. Every failure is one line
// "gpusort-webgpu: error: ..." on standard error and exit status 1.
import { closeSync, constants, fsyncSync, openSync, readFileSync, readlinkSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

const PROGRAM = 'gpusort-webgpu';
const TYPES = ['u32', 'i32', 'f32'];
const ARRAY = { u32: Uint32Array, i32: Int32Array, f32: Float32Array };
const NPY_MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]);
const BIT_OPTIONS = ['--begin-bit', '--end-bit'];
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// Symbolic links followed at most (as the kernel).
const MAX_LINKS = 40;

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
Outputs appear only when complete, keys and values together; an existing FIFO or device
as OUT or VOUT is written into directly, a symbolic link is followed.
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

// parseArgs takes a value starting with '-' for a missing one ("argument is ambiguous"): a bit
// option's negative number is joined to it ("--begin-bit=-1"), so that parseBit names the value.
function joinNegativeBits(args) {
  const joined = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--') return [...joined, ...args.slice(i)];
    if (BIT_OPTIONS.includes(args[i]) && /^-\d/.test(args[i + 1] ?? '')) joined.push(`${args[i]}=${args[++i]}`);
    else joined.push(args[i]);
  }
  return joined;
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

// The path that symbolic links, dangling ones too, finally name.
function followLinks(path) {
  for (let depth = 0; depth < MAX_LINKS; ++depth) {
    let target;
    try {
      target = readlinkSync(path);
    } catch {
      return path; // not a link, or nothing there
    }
    path = isAbsolute(target) ? target : join(dirname(path), target);
  }
  return path;
}

// Where an output goes. '-' and an existing FIFO or device are streams, written into directly;
// otherwise a regular file (a symbolic link followed, dangling or not), replaced through a
// temporary file in its directory. A directory or socket is refused.
function outputTarget(path, who) {
  if (path === '-') return { path, who, stream: true };
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    if (e.code !== 'ENOENT') throw new UsageError(`${who}: cannot examine: ${e.code ?? e.message}`);
    return { path, who, stream: false, destination: followLinks(path) };
  }
  if (st.isDirectory()) throw new UsageError(`${who}: is a directory`);
  if (st.isSocket()) throw new UsageError(`${who}: is a socket (${PROGRAM} writes regular files, FIFOs, devices and standard output, '-')`);
  if (!st.isFile()) return { path, who, stream: true };
  return { path, who, stream: false, destination: realpathSync(path) };
}

// A temporary file's name, as the C++ command's: ".gpusort-<pid>-<6 letters or digits>.tmp".
function temporaryName() {
  const random = Array.from(randomBytes(6), (byte) => ALPHANUMERIC[byte % ALPHANUMERIC.length]).join('');
  return `.gpusort-${process.pid}-${random}.tmp`;
}

// Creates a new temporary file in `directory`; returns its path and descriptor.
function createTemporary(directory, who) {
  for (let attempt = 0; ; ++attempt) {
    const path = join(directory, temporaryName());
    try {
      return { path, fd: openSync(path, 'wx', 0o666) };
    } catch (e) {
      if (e.code !== 'EEXIST' || attempt === 99) throw new UsageError(`${who}: cannot create a temporary file in '${directory}': ${e.code ?? e.message}`);
    }
  }
}

function bytesOf(array) {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

// Writes all of `data` (and with `sync`, flushes it to disk).
function writeAll(fd, data, who, { sync = false } = {}) {
  try {
    for (let done = 0; done < data.length; ) done += writeSync(fd, data, done, data.length - done);
    if (sync) fsyncSync(fd);
  } catch (e) {
    throw new UsageError(`${who}: cannot write: ${e.code ?? e.message}`);
  }
}

// Writes a stream output: standard output, or a FIFO (opening it waits for its reader) or device.
function writeStream({ path, who }, data) {
  if (path === '-') return writeAll(1, data, who);
  let fd;
  try {
    fd = openSync(path, constants.O_WRONLY);
  } catch (e) {
    throw new UsageError(`${who}: cannot open: ${e.code ?? e.message}`);
  }
  try {
    writeAll(fd, data, who);
  } finally {
    closeSync(fd);
  }
}

// Writes the outputs ({ target: outputTarget(...), array }): each regular file complete in its
// temporary file, then the streams (a pipe whose reader went away fails before any file is
// replaced), then the temporary files renamed into place.
function writeOutputs(outputs) {
  const files = outputs.filter(({ target }) => !target.stream);
  const temps = [];
  try {
    for (const { target, array } of files) {
      const temp = createTemporary(dirname(target.destination), target.who);
      temps.push(temp.path);
      try {
        writeAll(temp.fd, bytesOf(array), target.who, { sync: true });
      } finally {
        closeSync(temp.fd);
      }
    }
    for (const { target, array } of outputs) if (target.stream) writeStream(target, bytesOf(array));
    files.forEach(({ target }, i) => {
      try {
        renameSync(temps[i], target.destination);
      } catch (e) {
        throw new UsageError(`${target.who}: cannot rename the temporary file into place: ${e.code ?? e.message}`);
      }
      temps[i] = null;
    });
  } finally {
    for (const temp of temps) {
      if (temp === null) continue;
      try {
        unlinkSync(temp);
      } catch {}
    }
  }
}

async function runSort(args) {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeBits(args),
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
  const end = endBit || 32;
  if (beginBit >= end) throw new UsageError(`--begin-bit ${beginBit} is not below --end-bit ${end} (the bit range [${beginBit}, ${end}) is empty)`);
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
  const keysTarget = outputTarget(output, `OUT '${output}'`);
  const valuesTarget = withValues ? outputTarget(o['values-out'], `VOUT '${o['values-out']}'`) : null;
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
  const outputs = [{ target: keysTarget, array: sorted.keys }];
  if (withValues) outputs.push({ target: valuesTarget, array: sorted.values });
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
