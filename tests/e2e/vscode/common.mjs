// What the real-VS Code tests share: where code-server, the package, the binary and Chromium
// are, a scratch folder with a fresh profile, code-server started on a free port, the page,
// polling, and the end (code-server's process group killed, the scratch folder kept on
// failure). Each test (run-now.mjs, views.mjs) writes its own notes and checks.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..', '..');
export const e2e = process.env.LIVENOTE_VSCODE_E2E || join(repo, 'target/vscode-e2e');
export const vsix = process.env.LIVENOTE_VSIX || join(repo, 'editors/vscode/livenote-linux-x64.vsix');
export const bin = process.env.LIVENOTE_BIN || join(repo, 'target/debug/livenote');
const codeServer = join(e2e, 'node_modules/.bin/code-server');
const chromium = process.env.LIVENOTE_CHROMIUM || '/usr/bin/chromium';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function fail(why) {
  throw new Error(why);
}

/// Poll `probe` until it returns a truthy value or `ms` pass; fail with `what` and `detail()`.
export async function waitFor(what, probe, ms = 30_000, detail = async () => '') {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) fail(`timed out after ${ms / 1000} s waiting for ${what}${await detail()}`);
    await sleep(250);
  }
}

/// Wait for a quick-input row containing `text`, then choose the first row with Enter.
export async function pickRow(page, text) {
  const rows = () => page.$$eval('.quick-input-list .monaco-list-row', (els) => els.map((e) => e.textContent || ''));
  await waitFor(`a "${text}" row in the quick input`, async () => (await rows()).some((r) => r.includes(text)), 20_000, async () => `; rows: ${await rows()}`);
  await sleep(300);
  await page.keyboard.press('Enter');
}

/// Open a file of the workspace with Ctrl+P and wait for its tab.
export async function quickOpen(page, name) {
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyP');
  await page.keyboard.up('Control');
  await waitFor('quick open', () => page.$('.quick-input-widget:not([style*="display: none"]) input'));
  await page.keyboard.type(name);
  await pickRow(page, name);
  await waitFor(`${name} in a tab`, () => page.$(`.tab[aria-label*="${name}"], .tab[title*="${name}"]`));
}

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/**
 * A scratch folder for test `name`: `ws` (the workspace), a fresh VS Code profile whose
 * `livenote.path` is the binary, and the environment code-server and `livenote` run with.
 * Exits with a message when something the test needs is missing.
 */
export function scratchFor(name) {
  for (const [what, path] of [
    ['code-server (bash tests/e2e/vscode/install.sh)', codeServer],
    ["code-server's Node (bash tests/e2e/vscode/install.sh)", join(e2e, 'bin/node')],
    ['the .vsix (bash editors/vscode/ci.sh builds it)', vsix],
    ['the livenote binary (LIVENOTE_BIN)', bin],
    ['Chromium (LIVENOTE_CHROMIUM)', chromium],
  ]) {
    if (!existsSync(path)) {
      console.error(`${name}: no ${what} at ${path}`);
      process.exit(1);
    }
  }
  const scratch = mkdtempSync(join(tmpdir(), `livenote-vscode-${name}-`));
  const ws = join(scratch, 'notes');
  mkdirSync(ws, { recursive: true });
  const env = {
    ...process.env,
    // code-server 4.100 and later run on Node 22: install.sh puts that Node in <e2e>/bin.
    PATH: `${join(e2e, 'bin')}:${process.env.PATH ?? ''}`,
    LIVENOTE_DATA_DIR: join(scratch, 'livenote-data'),
    LIVENOTE_CONFIG_DIR: join(scratch, 'livenote-config'),
    // No marketplace: a closed local port answers at once instead of the internet.
    EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: 'http://127.0.0.1:9/gallery', itemUrl: 'http://127.0.0.1:9/item' }),
  };
  const userData = join(scratch, 'user-data');
  // A fresh profile: hot exit would restore another test's unsaved buffers.
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(
    join(userData, 'User/settings.json'),
    JSON.stringify(
      {
        'security.workspace.trust.enabled': false,
        'workbench.startupEditor': 'none',
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'workbench.enableExperiments': false,
        'files.autoSave': 'off',
        'livenote.path': bin,
      },
      null,
      2,
    ),
  );
  return { name, scratch, ws, env, userData, extDir: join(scratch, 'extensions'), server: undefined, browser: undefined, log: '' };
}

/// `livenote trust` the workspace, as a user would once.
export function trustWorkspace(s) {
  const trust = spawnSync(bin, ['trust', s.ws], { env: s.env, encoding: 'utf8' });
  if (trust.status !== 0) fail(`livenote trust failed: ${trust.stderr}`);
}

/// Install the package, start code-server on the workspace and open it in headless Chromium.
/// `extensions`: more packages to install beside livenote's; `enableProposedApi`: extension ids
/// that may use proposed API (code-server's --enable-proposed-api).
export async function openWorkbench(s, { width = 1400, height = 900, extensions = [], enableProposedApi = [] } = {}) {
  for (const pkg of [vsix, ...extensions]) {
    const install = spawnSync(codeServer, ['--user-data-dir', s.userData, '--extensions-dir', s.extDir, '--install-extension', pkg], {
      env: s.env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (install.status !== 0) fail(`installing ${pkg} failed:\n${install.stdout}\n${install.stderr}`);
    console.log(`ok - installed ${pkg.split('/').pop()}`);
  }
  const port = await freePort();
  // prettier-ignore
  s.server = spawn(
    codeServer,
    [
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--user-data-dir', s.userData,
      '--extensions-dir', s.extDir,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      ...enableProposedApi.flatMap((id) => ['--enable-proposed-api', id]),
      s.ws,
    ],
    { env: s.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  s.server.stdout.on('data', (d) => (s.log += d));
  s.server.stderr.on('data', (d) => (s.log += d));
  const base = `http://127.0.0.1:${port}`;
  await waitFor('code-server to answer', async () => {
    try {
      const r = await fetch(`${base}/`, { redirect: 'manual' });
      return r.status === 302 || r.status === 200;
    } catch {
      return false;
    }
  });
  console.log(`ok - code-server up on ${base}`);
  const puppeteer = createRequire(join(e2e, 'package.json'))('puppeteer-core');
  s.browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', `--window-size=${width},${height}`],
    defaultViewport: { width, height },
  });
  const page = await s.browser.newPage();
  await page.goto(`${base}/?folder=${encodeURIComponent(s.ws)}`, { waitUntil: 'domcontentloaded' });
  await waitFor('the workbench', () => page.$('.monaco-workbench .part.editor'), 60_000);
  // Let the workbench settle (extensions activate on their own schedule).
  await sleep(3000);
  return page;
}

/**
 * Run `main(page)` within `overallMs`; exit 0 when it passes (the scratch folder removed unless
 * `keep`), else 1 with the reason, a screenshot and code-server's log.
 */
export function runTest(s, main, { overallMs = 240_000, keep = false } = {}) {
  const cleanup = (code) => {
    clearTimeout(watchdog);
    const done = () => {
      if (s.server && s.server.exitCode === null) {
        try {
          process.kill(-s.server.pid, 'SIGTERM');
        } catch {
          /* gone already */
        }
      }
      if (code === 0 && !keep) rmSync(s.scratch, { recursive: true, force: true });
      process.exit(code);
    };
    if (s.browser) s.browser.close().then(done, done);
    else done();
  };
  const watchdog = setTimeout(() => {
    console.error(`${s.name}: no result after ${overallMs / 1000} s`);
    cleanup(2);
  }, overallMs);
  main().then(
    () => {
      console.log(`${s.name}: all checks passed`);
      cleanup(0);
    },
    async (e) => {
      console.error(`not ok - ${e.message}`);
      try {
        const pages = s.browser ? await s.browser.pages() : [];
        const page = pages[pages.length - 1];
        if (page) {
          await page.screenshot({ path: join(s.scratch, 'failure.png') });
          console.error(`screenshot: ${join(s.scratch, 'failure.png')}`);
        }
      } catch {
        /* no screenshot */
      }
      console.error(`code-server's log:\n${s.log.slice(-4000)}`);
      cleanup(1);
    },
  );
}
