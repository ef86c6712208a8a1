// The extension in a real VS Code (code-server, driven headless through Debian's Chromium with
// puppeteer-core): a clean note + "livenote: Run now" ends with the run on disk and the buffer
// clean (not dirty), the rule docs/editors.md states for every editor.
//
//   node tests/e2e/vscode/run-now.mjs
//
// LIVENOTE_VSCODE_E2E: the folder install.sh filled (default <repo>/target/vscode-e2e).
// LIVENOTE_VSIX: the package to install (default: editors/vscode/livenote-linux-x64.vsix, the
//   platform package with its server inside, which editors/vscode/ci.sh builds).
// LIVENOTE_BIN: a livenote binary; it is both the one that trusts the test folder and, set as
//   livenote.path, the extension's server (for a package without a server inside).
// Exits 0 when every check passed, 1 otherwise, with the reason, code-server's log and a
// screenshot (in the scratch folder) on failure. No network: the marketplace points at a closed
// local port, telemetry and update checks are off.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..', '..');
const e2e = process.env.LIVENOTE_VSCODE_E2E || join(repo, 'target/vscode-e2e');
const vsix = process.env.LIVENOTE_VSIX || join(repo, 'editors/vscode/livenote-linux-x64.vsix');
const bin = process.env.LIVENOTE_BIN || join(repo, 'target/debug/livenote');
const codeServer = join(e2e, 'node_modules/.bin/code-server');
const chromium = process.env.LIVENOTE_CHROMIUM || '/usr/bin/chromium';
const puppeteer = createRequire(join(e2e, 'package.json'))('puppeteer-core');

const OVERALL_MS = 240_000;
const scratch = mkdtempSync(join(tmpdir(), 'livenote-vscode-'));
const ws = join(scratch, 'notes');
const userData = join(scratch, 'user-data');
const extDir = join(scratch, 'extensions');
const dataDir = join(scratch, 'livenote-data');
let server;
let browser;
let serverLog = '';

function fail(why) {
  throw new Error(why);
}

for (const [what, path] of [
  ['code-server (bash tests/e2e/vscode/install.sh)', codeServer],
  ['the .vsix (bash editors/vscode/ci.sh builds it)', vsix],
  ['the livenote binary (LIVENOTE_BIN)', bin],
  ['Chromium (LIVENOTE_CHROMIUM)', chromium],
]) {
  if (!existsSync(path)) {
    console.error(`run-now: no ${what} at ${path}`);
    process.exit(1);
  }
}

// A trusted folder whose note runs a command that prints a known sentence; the note is not due
// (its one yearly occurrence is done), so only Run now writes it.
const NOTE = `---
live:
  objective: Say that the run happened.
  triggers:
    cronExpr: "0 0 1 1 *"
  lastRunAt: "${new Date().toISOString().replace(/\.\d+Z$/, '.000Z')}"
---
# Run now

Not run yet.
`;
mkdirSync(ws, { recursive: true });
writeFileSync(
  join(ws, '.livenote.toml'),
  `[agent]\nprovider = "say"\n\n[providers.say]\nkind = "command"\ncommand = ["printf", "%s\\\\n", "The run happened."]\n`,
);
writeFileSync(join(ws, 'note.md'), NOTE);
const env = {
  ...process.env,
  LIVENOTE_DATA_DIR: dataDir,
  LIVENOTE_CONFIG_DIR: join(scratch, 'livenote-config'),
  // No marketplace: a closed local port answers at once instead of the internet.
  EXTENSIONS_GALLERY: JSON.stringify({
    serviceUrl: 'http://127.0.0.1:9/gallery',
    itemUrl: 'http://127.0.0.1:9/item',
  }),
};
const trust = spawnSync(bin, ['trust', ws], { env, encoding: 'utf8' });
if (trust.status !== 0) {
  console.error(`run-now: livenote trust failed: ${trust.stderr}`);
  process.exit(1);
}

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

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// Poll `probe` until it returns a truthy value or `ms` pass; fail with `what` and `detail()`.
async function waitFor(what, probe, ms = 30_000, detail = async () => '') {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) fail(`timed out after ${ms / 1000} s waiting for ${what}${await detail()}`);
    await sleep(250);
  }
}

/// Wait for a quick-input row containing `text`, then choose the first row with Enter.
async function pickRow(page, text) {
  const rows = () =>
    page.$$eval('.quick-input-list .monaco-list-row', (els) => els.map((e) => e.textContent || ''));
  await waitFor(`a "${text}" row in the quick input`, async () => (await rows()).some((r) => r.includes(text)), 20_000, async () => `; rows: ${await rows()}`);
  await sleep(300);
  await page.keyboard.press('Enter');
}

async function main() {
  const install = spawnSync(
    codeServer,
    ['--user-data-dir', userData, '--extensions-dir', extDir, '--install-extension', vsix],
    { env, encoding: 'utf8', timeout: 120_000 },
  );
  if (install.status !== 0) fail(`installing ${vsix} failed:\n${install.stdout}\n${install.stderr}`);
  console.log(`ok - installed ${vsix.split('/').pop()}`);

  const port = await freePort();
  server = spawn(
    codeServer,
    [
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--user-data-dir', userData,
      '--extensions-dir', extDir,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      ws,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  server.stdout.on('data', (d) => (serverLog += d));
  server.stderr.on('data', (d) => (serverLog += d));
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

  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--window-size=1400,900'],
    defaultViewport: { width: 1400, height: 900 },
  });
  const page = await browser.newPage();
  await page.goto(`${base}/?folder=${encodeURIComponent(ws)}`, { waitUntil: 'domcontentloaded' });
  await waitFor('the workbench', () => page.$('.monaco-workbench .part.editor'), 60_000);
  // Let the workbench settle (extensions activate on their own schedule).
  await sleep(3000);

  await page.keyboard.down('Control');
  await page.keyboard.press('KeyP');
  await page.keyboard.up('Control');
  await waitFor('quick open', () => page.$('.quick-input-widget:not([style*="display: none"]) input'));
  await page.keyboard.type('note.md');
  await pickRow(page, 'note.md');
  await waitFor('note.md in a tab', () => page.$('.tab[aria-label*="note.md"], .tab[title*="note.md"]'));
  const lensText = () => page.$$eval('.codelens-decoration', (els) => els.map((e) => e.textContent).join(' | '));
  const lens = await waitFor(
    'the status lens (the server attached)',
    async () => {
      const t = await lensText();
      return /Live/.test(t) && t;
    },
    60_000,
    async () => `; lenses: ${await lensText()}`,
  );
  console.log(`ok - the note is open, lens: ${lens}`);
  const dirtyTabs = () => page.$$eval('.tab.dirty', (els) => els.map((e) => e.getAttribute('aria-label') || e.textContent));
  if ((await dirtyTabs()).length) fail(`a tab is dirty before the run: ${await dirtyTabs()}`);

  await page.keyboard.press('F1');
  await waitFor('the command palette', () => page.$('.quick-input-widget:not([style*="display: none"]) input'));
  await page.keyboard.type('livenote: Run now');
  await pickRow(page, 'Run now');

  const disk = () => readFileSync(join(ws, 'note.md'), 'utf8');
  await waitFor(
    'the run on disk',
    () => disk().includes('lastRunSummary: "Updated: The run happened."') && disk().includes('\nThe run happened.\n'),
    60_000,
    async () => `; note.md on disk:\n${disk()}\nlenses: ${await lensText()}`,
  );
  const onDisk = disk();
  for (const field of ['lastAttemptAt:', 'lastRunId:', 'lastRunAt:', 'lastRunError: null']) {
    if (!onDisk.includes(field)) fail(`no ${field} on disk:\n${onDisk}`);
  }
  console.log('ok - the run is on disk with all its fields');
  // The buffer shows the run and is not dirty, and stays so (nothing left unsaved).
  await waitFor(
    'the editor to show the run',
    async () => (await page.$$eval('.view-line', (els) => els.map((e) => e.textContent).join('\n'))).replace(/\u00a0/g, ' ').includes('The run happened.'),
    30_000,
  );
  await waitFor('no dirty tab', async () => (await dirtyTabs()).length === 0, 10_000, async () => `; dirty: ${await dirtyTabs()}`);
  await sleep(2000);
  const dirty = await dirtyTabs();
  if (dirty.length) fail(`the buffer is dirty after the run: ${dirty}`);
  const notes = await page.$$eval('.notification-list-item-message', (els) => els.map((e) => e.textContent));
  const newer = notes.filter((n) => /newer/i.test(n));
  if (newer.length) fail(`VS Code complains: ${newer}`);
  console.log('ok - the buffer shows the run and is clean');
  return page;
}

const watchdog = setTimeout(() => {
  console.error(`run-now: no result after ${OVERALL_MS / 1000} s`);
  cleanup(2);
}, OVERALL_MS);

function cleanup(code) {
  clearTimeout(watchdog);
  const done = () => {
    if (server && server.exitCode === null) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        /* gone already */
      }
    }
    if (code === 0) rmSync(scratch, { recursive: true, force: true });
    process.exit(code);
  };
  if (browser) browser.close().then(done, done);
  else done();
}

main().then(
  () => {
    console.log('run-now: all checks passed');
    cleanup(0);
  },
  async (e) => {
    console.error(`not ok - ${e.message}`);
    try {
      const pages = browser ? await browser.pages() : [];
      const page = pages[pages.length - 1];
      if (page) {
        await page.screenshot({ path: join(scratch, 'failure.png') });
        console.error(`screenshot: ${join(scratch, 'failure.png')}`);
      }
    } catch {
      /* no screenshot */
    }
    console.error(`code-server's log:\n${serverLog.slice(-4000)}`);
    cleanup(1);
  },
);
