// The Node command on raw little-endian files: sorts (every key type, values, both orders, bit
// ranges, standard input and output, --in-place), outputs that are not regular files (FIFOs,
// devices, symbolic links), and its error paths: one line "gpusort-webgpu: error: ..." and exit
// status 1, no output file and no temporary file left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertSame, makeBits, referenceOrder } from './helpers.js';

const BIN = fileURLToPath(new URL('../bin/gpusort-webgpu.js', import.meta.url));

function run(args, input) {
  const r = spawnSync(process.execPath, [BIN, ...args], { input, env: process.env, maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'gpusort-webgpu-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const bytesOf = (u32) => Buffer.from(u32.buffer, u32.byteOffset, u32.byteLength);
const u32Of = (buffer) => new Uint32Array(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length));

test('sorts u32 pairs, f32 descending from standard input to standard output, i32 in place with a bit range, an empty file', async (t) => {
  const dir = tempDir(t);
  const f = (name) => join(dir, name);
  // u32 pairs (Onesweep: more than one tile)
  const keys = makeBits('uniform', 9001, 21);
  const values = new Uint32Array(keys.length).map((_, i) => i * 3 + 1);
  writeFileSync(f('k'), bytesOf(keys));
  writeFileSync(f('v'), bytesOf(values));
  let r = run(['sort', f('k'), f('o'), '--type', 'u32', '--values', f('v'), '--values-out', f('vo'), '--value-type', 'u32']);
  assert.equal(r.status, 0, r.stderr);
  const order = referenceOrder('u32', keys);
  assertSame(u32Of(readFileSync(f('o'))), Uint32Array.from(order, (i) => keys[i]), 'u32 keys');
  assertSame(u32Of(readFileSync(f('vo'))), Uint32Array.from(order, (i) => values[i]), 'u32 values');
  // f32 descending, '-' in and out
  const floats = makeBits('special', 3001, 22);
  r = run(['sort', '-', '-', '-t', 'f32', '-d'], bytesOf(floats));
  assert.equal(r.status, 0, r.stderr);
  const forder = referenceOrder('f32', floats, { descending: true });
  assertSame(u32Of(r.stdout), Uint32Array.from(forder, (i) => floats[i]), 'f32 descending keys');
  // i32 in place, bits 8..24
  const ints = makeBits('uniform', 5000, 23);
  writeFileSync(f('i'), bytesOf(ints));
  r = run(['sort', f('i'), f('i'), '--type', 'i32', '--in-place', '--begin-bit', '8', '--end-bit', '24']);
  assert.equal(r.status, 0, r.stderr);
  const iorder = referenceOrder('i32', ints, { beginBit: 8, endBit: 24 });
  assertSame(u32Of(readFileSync(f('i'))), Uint32Array.from(iorder, (i) => ints[i]), 'i32 bits 8..24 in place');
  // empty
  writeFileSync(f('e'), Buffer.alloc(0));
  r = run(['sort', f('e'), f('eo'), '--type', 'u32']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readFileSync(f('eo')).length, 0);
  assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('.')), [], 'no temporary file left');
});

test('error paths: one line, status 1, outputs untouched', async (t) => {
  const dir = tempDir(t);
  const f = (name) => join(dir, name);
  writeFileSync(f('k'), bytesOf(makeBits('uniform', 100, 1)));
  writeFileSync(f('v'), bytesOf(makeBits('uniform', 99, 2)));
  writeFileSync(f('k100'), bytesOf(makeBits('uniform', 100, 3)));
  writeFileSync(f('odd'), Buffer.alloc(10));
  writeFileSync(f('npy'), Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]));
  writeFileSync(f('old'), 'previous contents');
  const cases = [
    [['sort', f('k'), f('old')], /keys file '.*k': is a raw array, so --type must give its element type/],
    [['sort', f('odd'), f('old'), '-t', 'u32'], /size 10 bytes is not a multiple of the 4-byte u32 element/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--values', f('v'), '--values-out', f('vo'), '--value-type', 'u32'], /key\/value count mismatch: keys file '.*' holds 100 elements but values file '.*' holds 99/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--values', f('v')], /--values needs --values-out VOUT/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--values-out', f('vo')], /--values-out needs --values VIN/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--value-type', 'u32'], /--value-type needs --values VIN/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--values', f('k'), '--values-out', f('vo')], /values file '.*': is a raw array, so --value-type must give/],
    [['sort', f('k'), f('k'), '-t', 'u32'], /OUT '.*k' is the same file as IN '.*k' \(pass --in-place to replace it\)/],
    [['sort', f('k'), f('old'), '-t', 'u64'], /--type: u64 is not supported/],
    [['sort', f('k'), f('old'), '-t', 'x32'], /--type: unknown type 'x32' \(expected one of u32, i32, f32\)/],
    [['sort', f('npy'), f('old'), '-t', 'u32'], /is a \.npy file; gpusort-webgpu reads raw little-endian arrays only/],
    [['sort', f('missing'), f('old'), '-t', 'u32'], /keys file '.*missing': cannot read: no such file/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--end-bit', '33'], /--end-bit: '33' is not a bit index from 0 to 32/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--begin-bit', '9', '--end-bit', '8'], /: --begin-bit 9 is not below --end-bit 8 \(the bit range \[9, 8\) is empty\)$/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--begin-bit', '8', '--end-bit', '8'], /: --begin-bit 8 is not below --end-bit 8 \(the bit range \[8, 8\) is empty\)$/],
    [['sort', f('k'), f('old'), '-t', 'u32', '--bogus'], /Unknown option '--bogus'/],
    [['sort', f('k')], /sort needs IN and OUT/],
    [['shuffle', f('k'), f('old')], /unknown command 'shuffle' \(expected: sort\)/],
    [['sort', f('k'), join(dir, 'no-such-dir', 'out'), '-t', 'u32'], /OUT '.*out': cannot create a temporary file in/],
    // Keys and values appear together: VOUT cannot be written, so OUT ('old') stays as it was.
    [['sort', f('k'), f('old'), '-t', 'u32', '--values', f('k100'), '--values-out', join(dir, 'no-such-dir', 'vo'), '--value-type', 'u32'], /VOUT '.*vo': cannot create a temporary file in/],
  ];
  for (const [args, pattern] of cases) {
    const r = run(args);
    const lines = r.stderr.split('\n').filter((l) => l && !l.includes('XDG_RUNTIME_DIR'));
    assert.equal(r.status, 1, `${args.join(' ')}: status ${r.status}, stderr ${r.stderr}`);
    assert.equal(lines.length, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(lines[0], /^gpusort-webgpu: error: /);
    assert.match(lines[0], pattern);
  }
  assert.equal(readFileSync(f('old'), 'utf8'), 'previous contents');
  assert.deepEqual(readdirSync(dir).sort(), ['k', 'k100', 'npy', 'odd', 'old', 'v']);
});

test('negative bit options: one line naming the option and the value, as other bad values', async (t) => {
  const dir = tempDir(t);
  const f = (name) => join(dir, name);
  writeFileSync(f('k'), bytesOf(makeBits('uniform', 100, 1)));
  for (const [args, line] of [
    [['--begin-bit', '-1'], "gpusort-webgpu: error: --begin-bit: '-1' is not a bit index from 0 to 32"],
    [['--end-bit', '-8'], "gpusort-webgpu: error: --end-bit: '-8' is not a bit index from 0 to 32"],
    [['--begin-bit=-1'], "gpusort-webgpu: error: --begin-bit: '-1' is not a bit index from 0 to 32"],
    [['--begin-bit', '-1', '--end-bit', '8'], "gpusort-webgpu: error: --begin-bit: '-1' is not a bit index from 0 to 32"],
  ]) {
    const r = run(['sort', f('k'), f('o'), '-t', 'u32', ...args]);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.deepEqual(r.stderr.split('\n').filter((l) => l && !l.includes('XDG_RUNTIME_DIR')), [line]);
  }
  assert.deepEqual(readdirSync(dir), ['k']);
});

// Collects a stream's bytes; resolves once the stream has ended.
async function bytesFrom(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

// Runs the command with a FIFO as OUT and a reader that opens it (waiting for the command), lists
// `dir` (so the regular outputs' temporary files show), then reads the FIFO to its end. A reader
// whose FIFO no one opens is stopped after 10 s.
async function sortIntoFifo(args, fifo, dir) {
  const reader = spawn('sh', ['-c', 'exec 3<"$1" && ls -A "$2" >&2 && exec cat <&3', 'sh', fifo, dir]);
  const read = Promise.all([bytesFrom(reader.stdout), bytesFrom(reader.stderr), once(reader, 'close')]);
  const command = spawn(process.execPath, [BIN, ...args], { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
  const [stderr, [status]] = await Promise.all([bytesFrom(command.stderr), once(command, 'close')]);
  const stop = setTimeout(() => reader.kill(), 10000);
  const [bytes, listing] = await read;
  clearTimeout(stop);
  return { status, stderr: stderr.toString(), bytes, atOpen: listing.toString().split('\n').filter(Boolean), pid: command.pid };
}

// Keys and values (50000 pairs: more than a pipe holds) in a new directory, and what the command
// should write for them.
function pairsFiles(t) {
  const dir = tempDir(t);
  const f = (name) => join(dir, name);
  const keys = makeBits('uniform', 50000, 31);
  const values = Uint32Array.from(keys, (_, i) => i * 7);
  writeFileSync(f('k'), bytesOf(keys));
  writeFileSync(f('v'), bytesOf(values));
  const order = referenceOrder('u32', keys);
  return {
    dir,
    f,
    args: (out, vout) => ['sort', f('k'), out, '-t', 'u32', '--values', f('v'), '--values-out', vout, '--value-type', 'u32'],
    sortedKeys: Uint32Array.from(order, (i) => keys[i]),
    sortedValues: Uint32Array.from(order, (i) => values[i]),
    temporaries: () => readdirSync(dir).filter((n) => n.startsWith('.')),
  };
}

test('a FIFO as OUT is written into once VOUT is ready in its temporary file: the reader gets every sorted key, the FIFO stays', async (t) => {
  const { dir, f, args, sortedKeys, sortedValues, temporaries } = pairsFiles(t);
  spawnSync('mkfifo', [f('fifo')]);
  writeFileSync(f('vo'), 'previous values');
  const r = await sortIntoFifo(args(f('fifo'), f('vo')), f('fifo'), dir);
  assert.equal(r.status, 0, r.stderr);
  assertSame(u32Of(r.bytes), sortedKeys, 'keys read from the FIFO');
  assert.ok(lstatSync(f('fifo')).isFIFO(), 'OUT is still a FIFO');
  // When the FIFO opened, VOUT was complete in ".gpusort-<pid>-<random>.tmp", not yet renamed.
  const pending = r.atOpen.filter((n) => n.startsWith('.'));
  assert.equal(pending.length, 1, `temporary files when the FIFO opened: ${pending}`);
  assert.match(pending[0], new RegExp(`^\\.gpusort-${r.pid}-[A-Za-z0-9]{6}\\.tmp$`));
  assertSame(u32Of(readFileSync(f('vo'))), sortedValues, 'values');
  assert.deepEqual(temporaries(), []);
});

test('/dev/null as OUT is written into and stays the character device', async (t) => {
  const { f, args, sortedValues, temporaries } = pairsFiles(t);
  const before = lstatSync('/dev/null');
  const r = run(args('/dev/null', f('vo')));
  assert.equal(r.status, 0, r.stderr);
  const after = lstatSync('/dev/null');
  assert.ok(after.isCharacterDevice(), '/dev/null is still a character device');
  assert.deepEqual([after.ino, after.rdev], [before.ino, before.rdev]);
  assertSame(u32Of(readFileSync(f('vo'))), sortedValues, 'values beside /dev/null');
  assert.deepEqual(temporaries(), []);
});

test('symbolic links as OUT and VOUT are followed: an existing target replaced, a dangling one created; the links stay', async (t) => {
  const { f, args, sortedKeys, sortedValues, temporaries } = pairsFiles(t);
  writeFileSync(f('target'), 'previous keys');
  symlinkSync('target', f('link'));
  mkdirSync(f('sub'));
  symlinkSync(join('sub', 'new-values'), f('dangling'));
  const r = run(args(f('link'), f('dangling')));
  assert.equal(r.status, 0, r.stderr);
  assert.ok(lstatSync(f('link')).isSymbolicLink() && readlinkSync(f('link')) === 'target', 'OUT is still the link');
  assert.ok(lstatSync(f('dangling')).isSymbolicLink() && readlinkSync(f('dangling')) === join('sub', 'new-values'), 'VOUT is still the link');
  assertSame(u32Of(readFileSync(f('target'))), sortedKeys, "keys in the link's target");
  assertSame(u32Of(readFileSync(f('sub/new-values'))), sortedValues, "values in the dangling link's new target");
  assert.deepEqual(readdirSync(f('sub')), ['new-values']);
  assert.deepEqual(temporaries(), []);
});

test('a directory or a socket as OUT or VOUT is refused with one line; nothing is written', async (t) => {
  const { f, args, temporaries } = pairsFiles(t);
  mkdirSync(f('sub'));
  const server = createServer();
  server.listen(f('socket'));
  await once(server, 'listening');
  t.after(() => server.close());
  writeFileSync(f('vo'), 'previous values');
  for (const [argv, line] of [
    [args(f('sub'), f('vo')), `gpusort-webgpu: error: OUT '${f('sub')}': is a directory`],
    [args(f('o'), f('sub')), `gpusort-webgpu: error: VOUT '${f('sub')}': is a directory`],
    [args(f('socket'), f('vo')), `gpusort-webgpu: error: OUT '${f('socket')}': is a socket (gpusort-webgpu writes regular files, FIFOs, devices and standard output, '-')`],
  ]) {
    const r = run(argv);
    assert.equal(r.status, 1, `${argv.join(' ')}: ${r.stderr}`);
    assert.deepEqual(r.stderr.split('\n').filter((l) => l && !l.includes('XDG_RUNTIME_DIR')), [line]);
  }
  assert.ok(lstatSync(f('socket')).isSocket(), 'the socket stays');
  assert.deepEqual(readdirSync(f('sub')), []);
  assert.equal(readFileSync(f('vo'), 'utf8'), 'previous values');
  assert.deepEqual(readdirSync(f('.')).sort(), ['k', 'socket', 'sub', 'v', 'vo']);
  assert.deepEqual(temporaries(), []);
});
