// One page test in headless Chromium: the package is served from a local HTTP server, the page
// sorts through navigator.gpu (SwiftShader's Vulkan) and posts its results back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json' };

function findChromium() {
  for (const name of [process.env.CHROMIUM, 'chromium', 'chromium-browser', 'google-chrome'])
    if (name && spawnSync('sh', ['-c', `command -v "${name}"`]).status === 0) return name;
  return null;
}

test('headless Chromium page sorts through navigator.gpu', async (t) => {
  const chromium = findChromium();
  assert.ok(chromium, 'no chromium found: install Debian\'s chromium package (tools/setup-debian.sh does) or set CHROMIUM');
  let resolveResult;
  const result = new Promise((resolve) => (resolveResult = resolve));
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/result') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        res.end();
        resolveResult(JSON.parse(body));
      });
      return;
    }
    // Static files under the package root only.
    const path = normalize(join(ROOT, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    try {
      if (!path.startsWith(ROOT) || path.split(sep).includes('node_modules') || !statSync(path).isFile()) throw new Error();
      res.setHeader('content-type', TYPES[extname(path)] ?? 'application/octet-stream');
      res.end(readFileSync(path));
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const profile = mkdtempSync(join(tmpdir(), 'gpusort-webgpu-chromium-'));
  t.after(() => rmSync(profile, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${server.address().port}/test/page/index.html`;
  const args = ['--headless=new', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader',
    '--use-angle=swiftshader', '--disable-vulkan-surface', '--no-first-run', `--user-data-dir=${profile}`, url];
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  const browser = spawn(chromium, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let log = '';
  browser.stderr.on('data', (d) => (log = (log + d).slice(-4000)));
  const exited = new Promise((resolve) => browser.on('exit', resolve));
  t.after(async () => {
    try {
      process.kill(-browser.pid, 'SIGTERM');
    } catch {}
    await exited;
  });
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`no result from the page in 120 s; chromium's log ends: ${log}`)), 120000).unref());
  const early = exited.then((code) => { throw new Error(`chromium exited (${code}) before the page reported; log: ${log}`); });
  const report = await Promise.race([result, timeout, early]);
  assert.ok(report.adapter, `no WebGPU adapter in the page: ${JSON.stringify(report)}`);
  for (const r of report.results) assert.ok(r.ok, `${r.what}: ${r.error}`);
  assert.ok(report.ok && report.results.length === 3, JSON.stringify(report));
});
