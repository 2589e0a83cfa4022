#!/usr/bin/env node
// Shows that the tests catch broken kernels and a broken command: each mutant below is one edit of
// src/ (a copy of the package in a temporary folder, node_modules linked), and the named tests must
// then fail. Not part of CI (minutes per mutant on SwiftShader):
//   node tools/mutants.js                 every mutant
//   node tools/mutants.js stability cli   the mutants named
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// name, file, text, replacement, then the test runs that must fail: [file, name pattern or null].
const MUTANTS = [
  ['stability: rank among later lanes', 'src/wgsl.js', 'if (j < rank_lane) { below += 1u; }', 'if (j > rank_lane) { below += 1u; }',
    [['sort', 'u32 pairs ascending: sizes'], ['engine', 'count from a GPU buffer'], ['cli', 'sorts u32 pairs'], ['browser', null]]],
  ['look-back ignores the inclusive flag', 'src/wgsl.js', 'next[j] = select(q, 0u, (entry & inclusive_bit) != 0u);', 'next[j] = q;',
    [['sort', 'u32 pairs: distributions'], ['engine', 'host count']]],
  ['fallback adds a wrong count', 'src/wgsl.js', '      exclusive[j] += c;\n      next[j] = q;', '      exclusive[j] += c + 1u;\n      next[j] = q;',
    [['engine', 'look-back fallback forced']]],
  ['fallback publishes a wrong count', 'src/wgsl.js', 'publish(q, d, false, c);', 'publish(q, d, false, c + 1u);',
    [['engine', 'look-back fallback forced']]],
  ['reused slot taken for its predecessor (tags compared by parity)', 'src/wgsl.js', 'if (tag == want) {', 'if ((tag & 1u) == (want & 1u) && tag != 0u) {',
    [['engine', 'circular table of 2 slots']]],
  ['floats: positive values not lifted above negative ones', 'src/wgsl.js',
    'o = o ^ (bitcast<u32>(bitcast<i32>(raw) >> 31u) | 0x80000000u);', 'o = o ^ bitcast<u32>(bitcast<i32>(raw) >> 31u);',
    [['sort', 'f32 pairs ascending: sizes'], ['sort', 'NaN'], ['cli', 'sorts u32 pairs']]],
  ['descending not applied on the way in', 'src/wgsl.js', '  if (DESCENDING) { o = ~o; }\n  return o;', '  return o;',
    [['sort', 'u32 keys descending: sizes'], ['engine', 'host count']]],
  ['bit range: histogram digits from bit 0', 'src/wgsl.js', 'let shift = params.begin_bit + 8u * p;\n        let bits', 'let shift = 8u * p;\n        let bits',
    [['sort', 'bit ranges']]],
  ['small path: keys read back in the wrong arrangement', 'src/wgsl.js', 'keys[${k}] = xload(rank_first + ${k}u * rank_stride);', 'keys[${k}] = xload(t + ${k}u * WG);',
    [['sort', 'u32 pairs ascending: sizes'], ['engine', 'count from a GPU buffer']]],
  ['GPU count clamped to maxCount + 1', 'src/wgsl.js',
    '  let n = min(count_src[count_params.x], params.max_n);\n  for (var i = t + 1u', '  let n = min(count_src[count_params.x], params.max_n + 1u);\n  for (var i = t + 1u',
    [['engine', 'count from a GPU buffer']]],
  ['values stored from the wrong lane', 'src/wgsl.js', 'values_out[targets[${k}]] = xload(t + ${k}u * WG);', 'values_out[targets[${k}]] = values[${k}];',
    [['sort', 'u32 pairs: distributions'], ['engine', 'host count']]],
  ['subgroups: peers compared on 7 digit bits', 'src/wgsl.js', '${unroll(8, (b) =>', '${unroll(7, (b) =>',
    [['sort', 'subgroup ranking'], ['engine', 'subgroup ranking']]],
  ['subgroups: chunk positions in reversed lane order (unstable)', 'src/wgsl.js', '* K + mask_count(lanes_on & below_mask)', '* K + (rank_stride - 1u - mask_count(lanes_on & below_mask))',
    [['sort', 'subgroup ranking'], ['engine', 'subgroup ranking']]],
  ['look-back window: entries after a waiting one still taken', 'src/wgsl.js', 'if (!waiting && next[j] != 0u && ${w}u <= newest) {', 'if (next[j] != 0u && ${w}u <= newest) {',
    [['engine', 'look-back windows'], ['engine', 'subgroup ranking']]],
  ['look-back table capped at 256 slots on every adapter', 'src/sorter.js', 'Math.min(nextPow2(tiles), sorter.lookbackSlots)', 'Math.min(nextPow2(tiles), 256)',
    [['engine', 'per-adapter defaults']]],
  ['command: each output renamed as soon as written (keys without values)', 'src/cli.js', '      temps.push(temp.path);', '      temps.push(temp.path);\n      temps.length = 0;\n      renameSync(temp.path, target.destination);',
    [['cli', 'error paths']]],
  ['command: a FIFO written into after the renames (at exit)', 'src/cli.js', 'if (target.stream) writeStream(target, bytesOf(array));',
    "if (target.stream) process.once('exit', () => writeStream(target, bytesOf(array)));",
    [['cli', 'a FIFO as OUT']]],
];

const wanted = process.argv.slice(2);
const results = [];
for (const [name, file, from, to, runs] of MUTANTS) {
  if (wanted.length && !wanted.some((w) => name.includes(w))) continue;
  const dir = mkdtempSync(join(tmpdir(), 'gpusort-webgpu-mutant-'));
  try {
    for (const part of ['src', 'test', 'bin', 'package.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    if (text.split(from).length !== 2) throw new Error(`mutant '${name}': the text to replace is not found exactly once in ${file}`);
    writeFileSync(path, text.replace(from, to));
    for (const [test, pattern] of runs) {
      const args = ['--test', ...(pattern ? [`--test-name-pattern=${pattern}`] : []), `test/${test}.test.js`];
      const started = Date.now();
      const r = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: 600000 });
      const failed = Number(/# fail (\d+)/.exec(r.stdout)?.[1] ?? -1);
      const passed = Number(/# pass (\d+)/.exec(r.stdout)?.[1] ?? -1);
      const caught = failed > 0;
      results.push({ name, test: `${test}${pattern ? ` /${pattern}/` : ''}`, caught, passed, failed, seconds: (Date.now() - started) / 1000 });
      // The first failure's message: a wrong element, not a kernel that fails to compile.
      const why = /^\s*(?:error: '|Error: )?(.*(?:element \d+|expected|status|WebGPU).*)$/m.exec(r.stdout)?.[1]?.replace(/'$/, '').slice(0, 160) ?? '';
      console.log(`${caught ? 'caught' : 'MISSED'}  ${name}  <-  ${test}${pattern ? ` /${pattern}/` : ''}  (pass ${passed}, fail ${failed}, ${((Date.now() - started) / 1000).toFixed(0)} s)${caught ? `: ${why}` : ''}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const missed = results.filter((r) => !r.caught).length;
console.log(`${results.length - missed} caught, ${missed} missed`);
process.exit(missed ? 1 : 0);
