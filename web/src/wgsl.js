// WGSL source of the sort's kernels, generated per configuration (key kind, order, values, tile
// shape, ranking path). Portable: 32-bit atomics only (WebGPU's atomics are relaxed and 32-bit);
// subgroup operations only where the device has the `subgroups` feature and the sorter asks for
// them (any subgroup size from 4 to 128).
//
// Onesweep (LSD radix sort, 8-bit digits):
//   prepare    one workgroup: the count (the host's or a GPU buffer's, clamped to max_n), zeroes
//              the control words, writes the indirect dispatches of the other steps;
//   histogram  one read of the keys counts every pass's digits at once;
//   offsets    one workgroup: each pass's exclusive digit offsets;
//   pass       one per digit; each workgroup claims the next tile (atomic counter), ranks its keys
//              by digit (stable), publishes the tile's digit counts, places the keys in workgroup
//              memory in tile order (stable by digit), requests the tile's values, looks back over
//              earlier tiles for each digit's prefix (decoupled look-back), publishes the
//              inclusive prefix, then writes keys and values from workgroup memory to their
//              places: runs of one digit are contiguous, so the writes coalesce;
//   copy       where the pass count is odd: the scratch copy back into the caller's buffers.
// The small-array path sorts up to one tile in one workgroup and one dispatch (every pass in
// workgroup memory). prepare, histogram, offsets and copy run 256 invocations per workgroup; the
// pass and small-array kernels the sorter's workgroup size (64 to 1024, a power of two).
//
// Look-back table: a FIXED circular table of `slots` tile slots per pass (a power of two), one
// 32-bit word per slot and digit: bits 31..count_bits+1 the tag (the generation of the tile in
// its slot + 1: tile p has tag (p >> log2(slots)) + 1; 0 = never written), bit count_bits the
// "inclusive" flag, bits count_bits-1..0 the count. Writers only use atomicMax: a newer tag wins,
// an inclusive prefix replaces the partial count of the same tile, and a slot's later tile is
// never overwritten by an earlier one. The host picks count_bits from the largest count and
// slots so that the tags of one pass never wrap. A reader reads a window of LBW predecessors at
// once per round; waiting for tile q it finds:
//   q's tag        -> uses the count (partial: keeps walking back; inclusive: done);
//   an older tag   -> q has not published yet: reads again, and after spin_limit rounds the
//                     workgroup counts q's keys itself (the fallback) and publishes that partial
//                     count;
//   a newer tag    -> the slot was reused by a later tile: the workgroup recounts q at once.
// So no forward progress of other workgroups is assumed: a tile whose workgroup never runs on
// (or, in the tests, refuses to publish) is recounted by its successors.
//
// Ranking, two paths (the same tile order: stable by digit):
//  - portable: the workgroup is cut into rank groups of W invocations ("virtual subgroups") each
//    owning a contiguous chunk of W * K keys; per key each invocation finds the lanes of its group
//    with the same digit through workgroup memory (W reads), and the lowest of them adds the
//    count to the group's per-digit counter (16-bit halves of a word);
//  - subgroups: each subgroup owns a contiguous chunk (its slot and start taken from one
//    workgroup atomic, so any arrangement of invocations into subgroups, and any size, works);
//    per key, 9 ballots (valid, then the 8 digit bits) give the lanes with the same digit, the
//    lowest of them adds their count to the subgroup's counter and shuffles the old value to them.
// Loops over a thread's K keys (and the look-back's window) are unrolled when the source is
// generated, so that per-key arrays are only ever indexed by constants and stay in registers.

export const AUX_WORKGROUP = 256;
export const RADIX = 256;
export const WORKGROUP_SIZES = Object.freeze([64, 128, 256, 512, 1024]);

// Control words (u32) of the scratch control buffer.
export const CONTROL = Object.freeze({
  N: 0,
  CLAIM: 1, // + pass, 4 passes
  FALLBACKS: 8, // how often a look-back recounted a tile (tests, tuning)
  HIST: 16, // pass * 256 + digit
  OFFSETS: 16 + 4 * 256,
  WORDS: 16 + 8 * 256,
});

// Indirect dispatch commands (3 u32 each) in the scratch indirect buffer.
export const DISPATCH = Object.freeze({ HISTOGRAM: 0, PASS: 1, COPY: 2, WORDS: 9 });

export const HISTOGRAM_KEYS_PER_THREAD = 8;
export const HISTOGRAM_MAX_GROUPS = 1024;
export const COPY_KEYS_PER_THREAD = 8;
export const COPY_MAX_GROUPS = 4096;

// The uniform parameters (u32 words, one 256-byte block per pass).
export const PARAMS = Object.freeze({
  N_HOST: 0,
  COUNT_FROM_BUFFER: 1,
  COUNT_OFFSET: 2, // in words
  MAX_N: 3,
  PASS: 4,
  SHIFT: 5,
  DIGIT_BITS: 6,
  FLAGS: 7, // 1: first pass (maps keys to radix order on read), 2: last (maps back on write)
  COUNT_BITS: 8,
  LOG_SLOTS: 9,
  SPIN_LIMIT: 10,
  REFUSE_PERIOD: 11,
  BEGIN_BIT: 12,
  END_BIT: 13,
  PASS_COUNT: 14,
  TILE: 15,
  WORDS: 16,
});
export const PARAMS_STRIDE = 256;

// Every binding of group 0, by name: the one table that the kernels' declarations (bindings()
// below) and the sorter's bind groups (src/sorter.js names its entries by these keys) are both
// made from, so a binding number cannot disagree between a shader and the host. The name is the
// WGSL variable's; each kernel declares the ones it uses.
const slot = (binding, space, type) => Object.freeze({ binding, space, type });
export const BINDINGS = Object.freeze({
  params: slot(0, 'uniform', 'Params'), // this pass's PARAMS, at p * PARAMS_STRIDE
  control: slot(1, 'storage, read_write', 'array<atomic<u32>>'), // CONTROL's words
  table: slot(2, 'storage, read_write', 'array<atomic<u32>>'), // the look-back table
  keys_in: slot(3, 'storage, read', 'array<u32>'),
  keys_out: slot(4, 'storage, read_write', 'array<u32>'), // the small kernel's keys, sorted in place
  values_in: slot(5, 'storage, read', 'array<u32>'),
  values_out: slot(6, 'storage, read_write', 'array<u32>'), // the small kernel's values, in place
  indirect: slot(7, 'storage, read_write', 'array<u32>'), // DISPATCH's commands
  count_src: slot(8, 'storage, read', 'array<u32>'), // the host's count or the caller's GPU buffer
  count_params: slot(9, 'uniform', 'vec4<u32>'), // x: the count's word in count_src
  keys4: slot(10, 'storage, read', 'array<vec4<u32>>'), // keys_in's buffer, four keys a word
  count_u: slot(11, 'uniform', 'vec4<u32>'), // uniformCount: x, the count (prepare's, copied)
});
{
  const numbers = Object.values(BINDINGS).map((b) => b.binding);
  if (new Set(numbers).size !== numbers.length) throw new Error('BINDINGS: a binding number used twice');
}

/** The binding number of a name of BINDINGS (an unknown name throws). */
export function bindingOf(name) {
  const b = BINDINGS[name];
  if (!b) throw new Error(`no binding named '${name}'`);
  return b.binding;
}

// The WGSL declarations of the named bindings (falsy names skipped), one a line.
function bindings(...names) {
  return names
    .filter(Boolean)
    .map((name) => `@group(0) @binding(${bindingOf(name)}) var<${BINDINGS[name].space}> ${name}: ${BINDINGS[name].type};`)
    .join('\n');
}

const KEY_KINDS = { u32: 0, i32: 1, f32: 2 };

// Rank groups of a workgroup at most: subgroups (of at least the smallest size) or groups of W.
function rankGroups(cfg) {
  return cfg.subgroups ? Math.max(1, Math.ceil(cfg.workgroupSize / cfg.subgroupMinSize)) : cfg.workgroupSize / cfg.rankLanes;
}

// Words of workgroup memory the pass and small-array kernels declare (the sorter checks them
// against the device's limit): the shared counters / exchange array, then the rest.
export function workgroupWords(cfg) {
  const wg = cfg.workgroupSize;
  const groups = rankGroups(cfg);
  const shm = cfg.plainExchange ? groups * 128 + wg * cfg.keysPerThread : Math.max(groups * 128, wg * cfg.keysPerThread);
  const ranking = cfg.subgroups ? 1 : 2 * wg;
  // tile_total, tile_start, scan_part (16 or a word per group), digit_shift, fallback_counts, small scalars
  return shm + ranking + 2 * RADIX + Math.max(16, groups) + 2 * RADIX + 8;
}

// Code repeated for k = 0 .. count - 1 (k a literal in the text).
function unroll(count, body) {
  let out = '';
  for (let k = 0; k < count; ++k) out += body(k);
  return out;
}

// A loop over ${name} = 0 .. count - 1: with unrollLoops one copy per index (a const in each),
// else a WGSL loop (which Dawn may give an iteration guard, and whose arrays indexed by the loop
// variable a driver may keep in memory).
function forIndex(cfg, count, name, body) {
  if (cfg.unrollLoops) return unroll(count, (k) => `  {\n    const ${name} = ${k}u;\n${body}\n  }\n`);
  return `  for (var ${name} = 0u; ${name} < ${count}u; ${name}++) {\n${body}\n  }\n`;
}

// A loop over ${name} = first, first + WG, ... below limit (a number): with unrollLoops one copy
// per step (bounds checked only where the last step may pass the limit).
function forStride(cfg, name, first, limit, body) {
  const wg = cfg.workgroupSize;
  const steps = Math.ceil(limit / wg);
  if (cfg.unrollLoops)
    return unroll(steps, (k) => {
      const checked = (k + 1) * wg > limit;
      return `  {\n    let ${name} = ${first} + ${k * wg}u;\n${checked ? `    if (${name} < ${limit}u) {\n` : ''}${body}\n${checked ? '    }\n' : ''}  }\n`;
    });
  return `  for (var ${name} = ${first}; ${name} < ${limit}u; ${name} += WG) {\n${body}\n  }\n`;
}

function header(cfg, wg = cfg.workgroupSize) {
  const kind = KEY_KINDS[cfg.keyType];
  if (kind === undefined) throw new Error(`unknown key type ${cfg.keyType}`);
  return /* wgsl */ `
const WG: u32 = ${wg}u;
const RADIX: u32 = 256u;
const DPI: u32 = ${Math.ceil(RADIX / wg)}u;  // digits per invocation
const K: u32 = ${cfg.keysPerThread}u;
const TILE: u32 = WG * K;
const KEY_KIND: u32 = ${kind}u;
const DESCENDING: bool = ${cfg.descending ? 'true' : 'false'};
const HAS_VALUES: bool = ${cfg.hasValues ? 'true' : 'false'};
const INVALID: u32 = 0xffffffffu;
const C_N: u32 = ${CONTROL.N}u;
const C_CLAIM: u32 = ${CONTROL.CLAIM}u;
const C_FALLBACKS: u32 = ${CONTROL.FALLBACKS}u;
const C_HIST: u32 = ${CONTROL.HIST}u;
const C_OFFSETS: u32 = ${CONTROL.OFFSETS}u;
const C_WORDS: u32 = ${CONTROL.WORDS}u;

struct Params {
  n_host: u32, count_from_buffer: u32, count_offset: u32, max_n: u32,
  pass_index: u32, shift: u32, digit_bits: u32, flags: u32,
  count_bits: u32, log_slots: u32, spin_limit: u32, refuse_period: u32,
  begin_bit: u32, end_bit: u32, pass_count: u32, tile: u32,
}

// Radix order: floats by IEEE-754 totalOrder (negative values, NaNs included, have every bit
// flipped, the rest only the sign bit), signed integers with the sign bit flipped; descending
// inverts.
fn to_order(raw: u32) -> u32 {
  var o = raw;
  if (KEY_KIND == 2u) {
    o = o ^ (bitcast<u32>(bitcast<i32>(raw) >> 31u) | 0x80000000u);
  } else if (KEY_KIND == 1u) {
    o = o ^ 0x80000000u;
  }
  if (DESCENDING) { o = ~o; }
  return o;
}

fn from_order(ordered: u32) -> u32 {
  var o = ordered;
  if (DESCENDING) { o = ~o; }
  if (KEY_KIND == 2u) {
    o = o ^ (bitcast<u32>(~(bitcast<i32>(o) >> 31u)) | 0x80000000u);
  } else if (KEY_KIND == 1u) {
    o = o ^ 0x80000000u;
  }
  return o;
}

fn digit_mask(bits: u32) -> u32 { return (1u << bits) - 1u; }
`;
}

// The subgroup path's module header (before any declaration).
function enableSubgroups(cfg) {
  return cfg.subgroups ? 'enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n' : '';
}

// Declarations and functions of the ranking shared by the pass and small-array kernels. Ranking
// (rankSetup, then rankTile per pass) gives each valid key of the tile (digits[k] != INVALID; key
// index rank_first + k * rank_stride in the tile) its place in the tile stably ordered by digit
// (places[k]), and leaves the tile's digit counts in tile_total and their starts in tile_start.
function rankDecls(cfg) {
  const wg = cfg.workgroupSize;
  const groups = rankGroups(cfg);
  // The counters' scan reads every group's word at once where the groups are few.
  const batchScan = cfg.batchScan && groups <= 32;
  const subgroupScan = cfg.subgroups && cfg.subgroupScan;
  const common = /* wgsl */ `
// The rank groups' per-digit counters (two 16-bit halves per word), then the exchange of keys
// and values in tile order: the counters are read for the last time before the first key goes in
// (or, with plainExchange, the exchange is an array of its own, of plain words).
const GROUPS_MAX: u32 = ${groups}u;
const SHM_WORDS: u32 = ${cfg.plainExchange ? groups * 128 : Math.max(groups * 128, wg * cfg.keysPerThread)}u;
var<workgroup> shm: array<atomic<u32>, SHM_WORDS>;
${
  cfg.plainExchange
    ? `// The exchange apart from the counters, plain words.
var<workgroup> exchange: array<u32, ${wg * cfg.keysPerThread}>;
fn xstore(i: u32, v: u32) { exchange[i] = v; }
fn xload(i: u32) -> u32 { return exchange[i]; }`
    : `fn xstore(i: u32, v: u32) { atomicStore(&shm[i], v); }
fn xload(i: u32) -> u32 { return atomicLoad(&shm[i]); }`
}
var<workgroup> tile_total: array<u32, RADIX>;
var<workgroup> tile_start: array<u32, RADIX>;
var<workgroup> scan_part: array<u32, ${Math.max(16, groups)}>;

// Group s's counter word w (digits 2w, 2w + 1) becomes the group's start within those digits;
// the words' sum over the groups (the tile's counts of both digits, packed) into \`running\`.
fn counter_run(w: u32, groups: u32) -> u32 {
${
  batchScan
    ? `  // Every group's word read at once (groups beyond \`groups\` hold zeros), then the starts.
${unroll(groups, (s) => `  let c${s} = atomicLoad(&shm[${s * 128}u + w]);\n`)}  var running = 0u;
${unroll(groups, (s) => `  atomicStore(&shm[${s * 128}u + w], running);\n  running += c${s};\n`)}`
    : `  var running = 0u;
  for (var s = 0u; s < groups; s++) {
    let c = atomicLoad(&shm[s * 128u + w]);
    atomicStore(&shm[s * 128u + w], running);
    running += c;
  }
`
}  return running;
}
${
  subgroupScan
    ? /* wgsl */ `
// After the counts of every group: per digit pair (one counter word) each group's start within
// the digit, and the tile's totals and their exclusive scan, by subgroup scans: invocation v of
// the subgroup order (subgroups in slot order, lanes in order; \`group\` its subgroup's slot)
// takes words v * WPT ... (v + 1) * WPT - 1.
const WPT: u32 = ${Math.max(1, 128 / wg)}u;
fn scan_counters_sg(v: u32, group: u32, groups: u32) {
  var pairs: array<u32, WPT>;
  var sum = 0u;
${unroll(Math.max(1, 128 / wg), (i) => `  {
    let w = v * WPT + ${i}u;
    pairs[${i}] = 0u;
    if (w < 128u) { pairs[${i}] = counter_run(w, groups); }
    sum += (pairs[${i}] & 0xffffu) + (pairs[${i}] >> 16u);
  }
`)}  let before = subgroupExclusiveAdd(sum);
  let total = subgroupAdd(sum);
  if (subgroupElect()) { scan_part[group] = total; }
  workgroupBarrier();
  var run = before;
${cfg.unrollLoops && groups <= 32 ? unroll(groups, (g) => `  if (${g}u < group) { run += scan_part[${g}]; }\n`) : '  for (var g = 0u; g < group; g++) { run += scan_part[g]; }'}
${unroll(Math.max(1, 128 / wg), (i) => `  {
    let w = v * WPT + ${i}u;
    if (w < 128u) {
      let low = pairs[${i}] & 0xffffu;
      tile_total[2u * w] = low;
      tile_total[2u * w + 1u] = pairs[${i}] >> 16u;
      tile_start[2u * w] = run;
      tile_start[2u * w + 1u] = run + low;
      run += low + (pairs[${i}] >> 16u);
    }
  }
`)}  workgroupBarrier();
}
`
    : ''
}
// After the counts of every group: per digit pair (one counter word) each group's start within
// the digit, and the tile's totals and their exclusive scan.
fn scan_counters(t: u32, groups: u32) {
${forStride(cfg, 'w', 't', 128, `    let running = counter_run(w, groups);
    tile_total[2u * w] = running & 0xffffu;
    tile_total[2u * w + 1u] = running >> 16u;`)}
  workgroupBarrier();
  // Exclusive scan of the 256 digit totals: 16 runs of 16.
  if (t < 16u) {
    var s = 0u;
${forIndex(cfg, 16, 'i', '    s += tile_total[t * 16u + i];')}
    scan_part[t] = s;
  }
  workgroupBarrier();
  if (t == 0u) {
    var run = 0u;
${forIndex(cfg, 16, 'i', `    let v = scan_part[i];
    scan_part[i] = run;
    run += v;`)}
  }
  workgroupBarrier();
  if (t < 16u) {
    var run = scan_part[t];
${forIndex(cfg, 16, 'i', `    tile_start[t * 16u + i] = run;
    run += tile_total[t * 16u + i];`)}
  }
  workgroupBarrier();
}

fn group_start(group: u32, d: u32) -> u32 {
  return (atomicLoad(&shm[group * 128u + (d >> 1u)]) >> ((d & 1u) * 16u)) & 0xffffu;
}
// Adds count to a group's counter of digit d (its 16-bit half of the word); the old count.
fn counter_add(group: u32, d: u32, count: u32) -> u32 {
  let sh = (d & 1u) * 16u;
  return (atomicAdd(&shm[group * 128u + (d >> 1u)], count << sh) >> sh) & 0xffffu;
}
`;
  if (!cfg.subgroups)
    return (
      common +
      /* wgsl */ `
const W: u32 = ${cfg.rankLanes}u;
var<workgroup> match_digit: array<u32, WG>;
var<workgroup> match_rank: array<u32, WG>;
`
    );
  // Ballot masks: one u32 where no subgroup is wider than 32 lanes, else vec4<u32>.
  const narrow = cfg.subgroupMaxSize <= 32;
  return (
    common +
    (narrow
      ? /* wgsl */ `
alias Mask = u32;
fn ballot(b: bool) -> Mask { return subgroupBallot(b).x; }
fn mask_count(m: Mask) -> u32 { return countOneBits(m); }
// The lanes below \`lane\`.
fn lanes_below(lane: u32) -> Mask { return (1u << lane) - 1u; }
// The lowest lane of a mask (0 for an empty one).
fn mask_lowest(m: Mask) -> u32 { return select(0u, firstTrailingBit(m), m != 0u); }
`
      : /* wgsl */ `
alias Mask = vec4<u32>;
fn ballot(b: bool) -> Mask { return subgroupBallot(b); }
fn mask_count(m: Mask) -> u32 {
  let c = countOneBits(m);
  return c.x + c.y + c.z + c.w;
}
// The lanes below \`lane\`.
fn lanes_below(lane: u32) -> Mask {
  let w = lane / 32u;
  let partial = (1u << (lane % 32u)) - 1u;
  return vec4<u32>(select(select(0u, partial, w == 0u), 0xffffffffu, w > 0u),
                   select(select(0u, partial, w == 1u), 0xffffffffu, w > 1u),
                   select(select(0u, partial, w == 2u), 0xffffffffu, w > 2u),
                   select(0u, partial, w == 3u));
}
// The lowest lane of a mask (0 for an empty one).
fn mask_lowest(m: Mask) -> u32 {
  if (m.x != 0u) { return firstTrailingBit(m.x); }
  if (m.y != 0u) { return 32u + firstTrailingBit(m.y); }
  if (m.z != 0u) { return 64u + firstTrailingBit(m.z); }
  return select(0u, 96u + firstTrailingBit(m.w), m.w != 0u);
}
`) +
    /* wgsl */ `
var<workgroup> subgroup_slots: atomic<u32>;  // bits 31..16: subgroups, 15..0: their lanes
`
  );
}

// The variables rank_first, rank_stride, rank_group (and, portable, rank_lane, group_base; with subgroups, below_mask, rank_index)
// of this invocation; after a barrier that follows the zeroing of subgroup_slots.
function rankSetup(cfg) {
  if (!cfg.subgroups)
    return /* wgsl */ `
  let rank_group = t / W;
  let rank_lane = t % W;
  let group_base = rank_group * W;
  let rank_first = group_base * K + rank_lane;
  let rank_stride = W;
`;
  return /* wgsl */ `
  let lanes_on = ballot(true);
  let below_mask = lanes_below(lane);
  let rank_stride = mask_count(lanes_on);
  var slot = 0u;
  if (subgroupElect()) { slot = atomicAdd(&subgroup_slots, 0x10000u | rank_stride); }
  slot = subgroupBroadcastFirst(slot);
  let rank_group = slot >> 16u;
  let rank_index = (slot & 0xffffu) + mask_count(lanes_on & below_mask);  // in subgroup order
  let rank_first = (slot & 0xffffu) * K + mask_count(lanes_on & below_mask);
`;
}

// Ranks digits[] into places[] (see rankDecls); every invocation runs it together.
function rankTile(cfg) {
  const K = cfg.keysPerThread;
  // Per key: the lanes of the rank group with the same digit, the count of those below this one
  // (below), and the lowest of them adds their count to the group's counter of the digit; places[k]
  // = the counter's old value + below.
  const rankKey = cfg.subgroups
    ? (k) => /* wgsl */ `
  {
    let d = digits[${k}];
    // The valid lanes: in a full tile every lane's key is (the chunks cover the tile).
${cfg.fullTile ? '    var peers = lanes_on;\n    if (!full) { peers = ballot(d != INVALID); }' : '    var peers = ballot(d != INVALID);'}
${unroll(8, (b) => /* wgsl */ `    {
      let bit_set = (d & ${1 << b}u) != 0u;
      let ones = ballot(bit_set);
      peers = peers & select(~ones, ones, bit_set);
    }
`)}
    let below = mask_count(peers & below_mask);
    var old = 0u;
    if (d != INVALID && below == 0u) { old = counter_add(rank_group, d, mask_count(peers)); }
    places[${k}] = subgroupShuffle(old, mask_lowest(peers)) + below;
  }`
    : (k) => /* wgsl */ `
  {
    let d = digits[${k}];
    match_digit[t] = d;
    workgroupBarrier();
    var below = 0u;
    var total = 0u;
    var first = W;
    for (var j = 0u; j < W; j++) {
      if (match_digit[group_base + j] == d) {
        if (j < rank_lane) { below += 1u; }
        if (first == W) { first = j; }
        total += 1u;
      }
    }
    if (d != INVALID && first == rank_lane) { match_rank[t] = counter_add(rank_group, d, total); }
    workgroupBarrier();
    places[${k}] = match_rank[group_base + first] + below;
  }`;
  // Groups that may hold counts: the subgroups that took a slot, or every group.
  const groups = cfg.subgroups && !cfg.batchScan ? 'atomicLoad(&subgroup_slots) >> 16u' : 'GROUPS_MAX';
  const scan = cfg.subgroups && cfg.subgroupScan ? `scan_counters_sg(rank_index, rank_group, ${groups})` : `scan_counters(t, ${groups})`;
  return /* wgsl */ `
${forStride(cfg, 'i', 't', rankGroups(cfg) * 128, '    atomicStore(&shm[i], 0u);')}
  workgroupBarrier();
${unroll(K, rankKey)}
  workgroupBarrier();
  ${scan};
${unroll(K, (k) => `  if (digits[${k}] != INVALID) { places[${k}] += tile_start[digits[${k}]] + group_start(rank_group, digits[${k}]); }\n`)}
  // The counters are read: the caller may now write the exchange.
  workgroupBarrier();
`;
}

export function prepareShader(cfg) {
  return (
    header(cfg, AUX_WORKGROUP) +
    /* wgsl */ `
${bindings('params', 'control', 'indirect', 'count_src', 'count_params')}

fn grid(groups: u32, command: u32) {
  // At most 65,535 workgroups per dimension: x * y covers the groups (the kernels stop extra ones).
  let x = min(groups, 65535u);
  var y = 0u;
  if (x != 0u) { y = (groups + x - 1u) / x; }
  indirect[command * 3u] = x;
  indirect[command * 3u + 1u] = select(0u, y, x != 0u);
  indirect[command * 3u + 2u] = 1u;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32) {
  let n = min(count_src[count_params.x], params.max_n);
  for (var i = t + 1u; i < C_WORDS; i += WG) { atomicStore(&control[i], 0u); }
  if (t == 0u) {
    atomicStore(&control[C_N], n);
    let tiles = (n + params.tile - 1u) / params.tile;
    let hist_round = WG * ${HISTOGRAM_KEYS_PER_THREAD}u;
    grid(min((n + hist_round - 1u) / hist_round, ${HISTOGRAM_MAX_GROUPS}u), ${DISPATCH.HISTOGRAM}u);
    grid(tiles, ${DISPATCH.PASS}u);
    let copy_round = WG * ${COPY_KEYS_PER_THREAD}u;
    grid(min((n + copy_round - 1u) / copy_round, ${COPY_MAX_GROUPS}u), ${DISPATCH.COPY}u);
  }
}
`
  );
}

export function histogramShader(cfg) {
  return (
    header(cfg, AUX_WORKGROUP) +
    /* wgsl */ `
${bindings('params', 'control', 'keys_in')}

const HK: u32 = ${HISTOGRAM_KEYS_PER_THREAD}u;
var<workgroup> hist: array<atomic<u32>, 1024>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let passes = params.pass_count;
  for (var i = t; i < passes * RADIX; i += WG) { atomicStore(&hist[i], 0u); }
  workgroupBarrier();
  let n = atomicLoad(&control[C_N]);
  let group = wid.x + wid.y * nwg.x;
  let groups = nwg.x * nwg.y;
  let round = WG * HK;
  for (var base = group * round + t; base < n; base += groups * round) {
    var ordered: array<u32, HK>;
    for (var k = 0u; k < HK; k++) {
      let i = base + k * WG;
      if (i < n) { ordered[k] = to_order(keys_in[i]); }
    }
    for (var k = 0u; k < HK; k++) {
      if (base + k * WG >= n) { break; }
      for (var p = 0u; p < passes; p++) {
        let shift = params.begin_bit + 8u * p;
        let bits = min(8u, params.end_bit - shift);
        atomicAdd(&hist[p * RADIX + ((ordered[k] >> shift) & digit_mask(bits))], 1u);
      }
    }
  }
  workgroupBarrier();
  for (var i = t; i < passes * RADIX; i += WG) {
    let v = atomicLoad(&hist[i]);
    if (v != 0u) { atomicAdd(&control[C_HIST + i], v); }
  }
}
`
  );
}

// The histogram with the keys read four at a time (vec4<u32>; the last n % 4 keys one at a time)
// and every pass's digit by constant shifts (the sorter's bit range is fixed when it compiles).
export function wideHistogramShader(cfg) {
  const passes = [];
  for (let shift = cfg.beginBit; shift < cfg.endBit; shift += 8) passes.push([shift, (1 << Math.min(8, cfg.endBit - shift)) - 1]);
  const count = (v) => passes.map(([shift, mask], p) => `atomicAdd(&hist[${p * RADIX}u + ((${v} >> ${shift}u) & ${mask}u)], 1u);`).join(' ');
  return (
    header(cfg, AUX_WORKGROUP) +
    /* wgsl */ `
${bindings('control', 'keys_in', 'keys4')}

const HQ: u32 = ${HISTOGRAM_KEYS_PER_THREAD / 4}u;  // vec4 loads per invocation and round
var<workgroup> hist: array<atomic<u32>, ${passes.length * RADIX}>;

fn count4(raw: vec4<u32>) {
  let o = vec4<u32>(to_order(raw.x), to_order(raw.y), to_order(raw.z), to_order(raw.w));
  ${count('o.x')}
  ${count('o.y')}
  ${count('o.z')}
  ${count('o.w')}
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = t; i < ${passes.length * RADIX}u; i += WG) { atomicStore(&hist[i], 0u); }
  workgroupBarrier();
  let n = atomicLoad(&control[C_N]);
  let n4 = n / 4u;
  let group = wid.x + wid.y * nwg.x;
  let groups = nwg.x * nwg.y;
  let round = WG * HQ;
  for (var base = group * round + t; base < n4; base += groups * round) {
    var quads: array<vec4<u32>, HQ>;
${unroll(HISTOGRAM_KEYS_PER_THREAD / 4, (q) => `    if (base + ${q}u * WG < n4) { quads[${q}] = keys4[base + ${q}u * WG]; }\n`)}
${unroll(HISTOGRAM_KEYS_PER_THREAD / 4, (q) => `    if (base + ${q}u * WG < n4) { count4(quads[${q}]); }\n`)}
  }
  // The last n % 4 keys.
  if (group == 0u && t < n % 4u) {
    let o = to_order(keys_in[n4 * 4u + t]);
    ${count('o')}
  }
  workgroupBarrier();
  for (var i = t; i < ${passes.length * RADIX}u; i += WG) {
    let v = atomicLoad(&hist[i]);
    if (v != 0u) { atomicAdd(&control[C_HIST + i], v); }
  }
}
`
  );
}

export function offsetsShader(cfg) {
  return (
    header(cfg, AUX_WORKGROUP) +
    /* wgsl */ `
${bindings('params', 'control')}

var<workgroup> sums: array<u32, 1024>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32) {
  // Each of 4 * 64 invocations scans 4 digits of one pass, then adds its run's prefix.
  let p = t / 64u;
  let r = t % 64u;
  var local: array<u32, 4>;
  var s = 0u;
  for (var i = 0u; i < 4u; i++) {
    local[i] = s;
    s += atomicLoad(&control[C_HIST + p * RADIX + r * 4u + i]);
  }
  sums[t] = s;
  workgroupBarrier();
  var prefix = 0u;
  for (var j = 0u; j < r; j++) { prefix += sums[p * 64u + j]; }
  for (var i = 0u; i < 4u; i++) {
    atomicStore(&control[C_OFFSETS + p * RADIX + r * 4u + i], prefix + local[i]);
  }
}
`
  );
}

// Profiling only (wrong results): whether the kernel leaves out a step ('ranking', 'lookback',
// 'stores': the global stores are kept only where a target would be INVALID, i.e. never).
function omits(cfg, step) {
  return (cfg.omit ?? []).includes(step);
}

// Code for a condition that is uniform over the workgroup: where the key type maps keys to radix
// order (not u32 ascending), a branch over two copies of the code, else the unmapped copy alone.
function mappedBranches(cfg, condition, body) {
  if (cfg.keyType === 'u32' && !cfg.descending) return body(false);
  return `  if (${condition}) {${body(true)}\n  } else {${body(false)}\n  }`;
}

// With fullTile, a copy of the code without bounds checks for full tiles (full: uniform).
function tileBranches(cfg, full, body) {
  if (!cfg.fullTile) return body(false);
  return `  if (${full}) {${body(true)}\n  } else {${body(false)}\n  }`;
}

export function passShader(cfg) {
  const K = cfg.keysPerThread;
  const dpi = Math.ceil(RADIX / cfg.workgroupSize);
  const LBW = cfg.lookbackWindow;
  const sg = cfg.subgroups;
  return (
    enableSubgroups(cfg) +
    header(cfg) +
    rankDecls(cfg) +
    /* wgsl */ `
${bindings('params', 'control', 'table', 'keys_in', 'keys_out', cfg.hasValues && 'values_in', cfg.hasValues && 'values_out', cfg.uniformCount && 'count_u')}

var<workgroup> start_shared: vec2<u32>;  // the claimed tile, the count
var<workgroup> digit_shift: array<u32, RADIX>;  // global index - tile position, per digit
var<workgroup> fallback_counts: array<atomic<u32>, RADIX>;
var<workgroup> stalled: array<atomic<u32>, 2>;

fn key_digit(ordered: u32) -> u32 { return (ordered >> params.shift) & digit_mask(params.digit_bits); }

fn first_pass() -> bool { return (params.flags & 1u) != 0u; }

fn table_index(tile: u32, digit: u32) -> u32 {
  let slot = tile & ((1u << params.log_slots) - 1u);
  return ((params.pass_index << params.log_slots) + slot) * RADIX + digit;
}
fn tile_tag(tile: u32) -> u32 { return (tile >> params.log_slots) + 1u; }
fn publish(tile: u32, digit: u32, inclusive: bool, count: u32) {
  let entry = (tile_tag(tile) << (params.count_bits + 1u)) | select(0u, 1u << params.count_bits, inclusive) | count;
  atomicMax(&table[table_index(tile, digit)], entry);
}
fn publishes(tile: u32) -> bool {
  // Testing the fallback: tiles p with p % period == period - 1 never publish.
  return params.refuse_period == 0u || tile % params.refuse_period != params.refuse_period - 1u;
}

// The fallback's count of one tile's digits into fallback_counts (all invocations call it).
fn count_tile_digits(t: u32, tile: u32, n: u32) {
  for (var d = t; d < RADIX; d += WG) { atomicStore(&fallback_counts[d], 0u); }
  workgroupBarrier();
  let begin = tile * TILE;
  let size = min(TILE, n - begin);
  let mapped = first_pass();
  for (var i = t; i < size; i += WG) {
    var key = keys_in[begin + i];
    if (mapped) { key = to_order(key); }
    atomicAdd(&fallback_counts[key_digit(key)], 1u);
  }
  workgroupBarrier();
}

// Each digit d = t + j * WG: its count in all tiles before \`tile\` (returned, [j]). Each
// digit walks back on its own, LBW predecessors read at once per round, until it meets an
// inclusive prefix or the first tile; one whose predecessor stays unpublished for spin_limit
// rounds (or whose slot was reused) stops; then the workgroup recounts the latest such
// predecessor (the fallback) and the walks resume.
fn look_back(t: u32, tile: u32, n: u32) -> array<u32, DPI> {
  let count_mask = (1u << params.count_bits) - 1u;
  let inclusive_bit = 1u << params.count_bits;
  var exclusive: array<u32, DPI>;
  var next: array<u32, DPI>;  // 1 + the tile read next; 0 once the prefix is complete
${forIndex(cfg, dpi, 'j', `    exclusive[j] = 0u;
    next[j] = select(0u, tile, t + j * WG < RADIX);`)}
  var round = 0u;
  loop {
    var stalled_on = 0u;
${forIndex(cfg, dpi, 'j', `    let d = t + j * WG;
      var spins = 0u;
      loop {
        if (next[j] == 0u) { break; }
        let newest = next[j] - 1u;
        var seen: array<u32, ${LBW}>;
${unroll(LBW, (w) => `        if (${w}u <= newest) { seen[${w}] = atomicLoad(&table[table_index(newest - ${w}u, d)]); }\n`)}
        var waiting = false;
        var reused = false;
${unroll(LBW, (w) => /* wgsl */ `        if (!waiting && next[j] != 0u && ${w}u <= newest) {
          let q = newest - ${w}u;
          let entry = seen[${w}];
          let tag = entry >> (params.count_bits + 1u);
          let want = tile_tag(q);
          if (tag == want) {
            exclusive[j] += entry & count_mask;
            next[j] = select(q, 0u, (entry & inclusive_bit) != 0u);
          } else {
            waiting = true;
            reused = tag > want;
          }
        }
`)}
        if (!waiting) {
          spins = 0u;
        } else if (reused || spins >= params.spin_limit) {
          stalled_on = max(stalled_on, next[j]);  // reused slot, or waited too long
          break;
        } else {
          spins += 1u;
        }
      }`)}
    if (t == 0u) { atomicStore(&stalled[(round + 1u) & 1u], 0u); }
    if (stalled_on != 0u) { atomicMax(&stalled[round & 1u], stalled_on); }
    // (A barrier, the load, a barrier: every maximum is in, and the word is read before a later
    // round clears it.)
    let recount = workgroupUniformLoad(&stalled[round & 1u]);
    if (recount == 0u) { break; }
    // The fallback: count the latest stalled predecessor's keys here, offer the counts to others.
    let q = recount - 1u;
    if (t == 0u) { atomicAdd(&control[C_FALLBACKS], 1u); }
    count_tile_digits(t, q, n);
${forIndex(cfg, dpi, 'j', `    if (next[j] == recount) {
      let d = t + j * WG;
      let c = atomicLoad(&fallback_counts[d]);
      publish(q, d, false, c);
      exclusive[j] += c;
      next[j] = q;
    }`)}
    round += 1u;
  }
  return exclusive;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32${sg ? ', @builtin(subgroup_invocation_id) lane: u32' : ''},
        @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
${
  cfg.claimById && cfg.uniformCount
    ? `  // Nothing to wait for but the zeroing of the workgroup's words.
  if (t == 0u) {
    atomicStore(&stalled[0], 0u);
${sg ? '    atomicStore(&subgroup_slots, 0u);' : ''}
  }
  workgroupBarrier();`
    : `  if (t == 0u) {
    start_shared = vec2<u32>(${cfg.claimById ? '0u' : 'atomicAdd(&control[C_CLAIM + params.pass_index], 1u)'}, ${cfg.uniformCount ? '0u' : 'atomicLoad(&control[C_N])'});
    atomicStore(&stalled[0], 0u);
${sg ? '    atomicStore(&subgroup_slots, 0u);' : ''}
  }
  let start = workgroupUniformLoad(&start_shared);`
}
  // The tile: ${cfg.claimById ? "the workgroup's id (workgroups that start late leave their tiles to their successors' fallback)" : 'the next one claimed'}.
  let tile = ${cfg.claimById ? 'wid.x + wid.y * nwg.x' : 'start.x'};
  let n = ${cfg.uniformCount ? 'count_u.x' : 'start.y'};
  let tiles = (n + TILE - 1u) / TILE;
  if (tile >= tiles) { return; }
  let begin = tile * TILE;
  let size = min(TILE, n - begin);
  let full = size == TILE;
${rankSetup(cfg)}
  var keys: array<u32, K>;
  var digits: array<u32, K>;
  var places: array<u32, K>;
  // Mapping to radix order (first pass) is decided once per pass, not per key.
${mappedBranches(cfg, 'first_pass()', (map) =>
  tileBranches(cfg, 'full', (fullTile) =>
    unroll(K, (k) => /* wgsl */ `
  {
    let i = rank_first + ${k}u * rank_stride;
${fullTile ? '' : `    digits[${k}] = INVALID;
    if (i < size) {`}
      let key = ${map ? 'to_order(keys_in[begin + i])' : 'keys_in[begin + i]'};
      keys[${k}] = key;
      digits[${k}] = key_digit(key);
${fullTile ? '' : '    }'}
  }`)))}
  var digit_offset: array<u32, DPI>;
${forIndex(cfg, dpi, 'j', `    let d = t + j * WG;
    if (d < RADIX) { digit_offset[j] = atomicLoad(&control[C_OFFSETS + params.pass_index * RADIX + d]); }`)}
${omits(cfg, 'ranking') ? `${unroll(K, (k) => `  places[${k}] = rank_first + ${k}u * rank_stride;\n`)}
  for (var d = t; d < RADIX; d += WG) { tile_total[d] = 0u; tile_start[d] = 0u; }
  workgroupBarrier();` : rankTile(cfg)}
  let publishing = publishes(tile);
  if (publishing) {
${forStride(cfg, 'd', 't', 256, '    publish(tile, d, tile == 0u, tile_total[d]);')}
  }
${unroll(K, (k) => `  if (digits[${k}] != INVALID) { xstore(places[${k}], keys[${k}]); }\n`)}
${
  cfg.hasValues
    ? `  // The values are requested now: their latency hides behind the look-back.
  var values: array<u32, K>;
${unroll(K, (k) => `  if (digits[${k}] != INVALID) { values[${k}] = values_in[begin + rank_first + ${k}u * rank_stride]; }\n`)}`
    : ''
}
${omits(cfg, 'lookback') ? '  var earlier: array<u32, DPI>;' : '  let earlier = look_back(t, tile, n);'}
${forIndex(cfg, dpi, 'j', `    let d = t + j * WG;
    if (d < RADIX) {
      let exclusive = earlier[j];
      if (publishing && tile != 0u) { publish(tile, d, true, exclusive + tile_total[d]); }
      digit_shift[d] = digit_offset[j] + exclusive - tile_start[d];
    }`)}
  workgroupBarrier();
${cfg.hasValues ? '  var targets: array<u32, K>;' : ''}
${mappedBranches(cfg, '(params.flags & 2u) != 0u', (map) =>
  tileBranches(cfg, 'full', (fullTile) =>
    unroll(K, (k) => /* wgsl */ `
  {
    let j = t + ${k}u * WG;
${fullTile ? '' : '    if (j < size) {'}
      let key = xload(j);
      let dest = digit_shift[key_digit(key)] + j;
${omits(cfg, 'stores') ? `      if (dest == INVALID) {` : ''}
      keys_out[dest] = ${map ? 'from_order(key)' : 'key'};
${omits(cfg, 'stores') ? '      }' : ''}
${cfg.hasValues ? `      targets[${k}] = dest;` : ''}
${fullTile ? '' : '    }'}
  }`)))}
${
  cfg.hasValues
    ? `  workgroupBarrier();
${unroll(K, (k) => `  if (digits[${k}] != INVALID) { xstore(places[${k}], values[${k}]); }\n`)}
  workgroupBarrier();
${unroll(K, (k) => `  if (t + ${k}u * WG < size${omits(cfg, 'stores') ? ` && targets[${k}] == INVALID` : ''}) { values_out[targets[${k}]] = xload(t + ${k}u * WG); }\n`)}`
    : ''
}
}
`
  );
}

export function copyShader(cfg) {
  return (
    header(cfg, AUX_WORKGROUP) +
    /* wgsl */ `
${bindings('control', 'keys_in', 'keys_out', cfg.hasValues && 'values_in', cfg.hasValues && 'values_out')}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = atomicLoad(&control[C_N]);
  let stride = nwg.x * nwg.y * WG;
  for (var i = gid.x + gid.y * nwg.x * WG; i < n; i += stride) {
    keys_out[i] = keys_in[i];
${cfg.hasValues ? '    values_out[i] = values_in[i];' : ''}
  }
}
`
  );
}

// Up to one tile in one workgroup: every pass ranks in workgroup memory; the keys (and values)
// are read once and written once, in place.
export function smallShader(cfg) {
  const K = cfg.keysPerThread;
  const sg = cfg.subgroups;
  return (
    enableSubgroups(cfg) +
    header(cfg) +
    rankDecls(cfg) +
    /* wgsl */ `
${bindings('params', 'keys_out', cfg.hasValues && 'values_out', 'count_src', 'count_params')}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32${sg ? ', @builtin(subgroup_invocation_id) lane: u32' : ''}) {
  let n = min(count_src[count_params.x], params.max_n);
  let size = min(n, TILE);
  let full = size == TILE;
${sg ? '  if (t == 0u) { atomicStore(&subgroup_slots, 0u); }\n  workgroupBarrier();' : ''}
${rankSetup(cfg)}
  var keys: array<u32, K>;
  var values: array<u32, K>;
${unroll(K, (k) => /* wgsl */ `
  if (rank_first + ${k}u * rank_stride < size) {
    keys[${k}] = to_order(keys_out[rank_first + ${k}u * rank_stride]);
${cfg.hasValues ? `    values[${k}] = values_out[rank_first + ${k}u * rank_stride];` : ''}
  }`)}
  for (var p = 0u; p < params.pass_count; p++) {
    let shift = params.begin_bit + 8u * p;
    let mask = digit_mask(min(8u, params.end_bit - shift));
    var digits: array<u32, K>;
    var places: array<u32, K>;
${unroll(K, (k) => `    digits[${k}] = select(INVALID, (keys[${k}] >> shift) & mask, rank_first + ${k}u * rank_stride < size);\n`)}
${rankTile(cfg)}
${unroll(K, (k) => `    if (digits[${k}] != INVALID) { xstore(places[${k}], keys[${k}]); }\n`)}
    workgroupBarrier();
${unroll(K, (k) => `    if (digits[${k}] != INVALID) { keys[${k}] = xload(rank_first + ${k}u * rank_stride); }\n`)}
${
  cfg.hasValues
    ? `    workgroupBarrier();
${unroll(K, (k) => `    if (digits[${k}] != INVALID) { xstore(places[${k}], values[${k}]); }\n`)}
    workgroupBarrier();
${unroll(K, (k) => `    if (digits[${k}] != INVALID) { values[${k}] = xload(rank_first + ${k}u * rank_stride); }\n`)}`
    : ''
}
    workgroupBarrier();
  }
${unroll(K, (k) => /* wgsl */ `
  if (rank_first + ${k}u * rank_stride < size) {
    keys_out[rank_first + ${k}u * rank_stride] = from_order(keys[${k}]);
${cfg.hasValues ? `    values_out[rank_first + ${k}u * rank_stride] = values[${k}];` : ''}
  }`)}
}
`
  );
}
