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
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fail, openWorkbench, pickRow, quickOpen, runTest, scratchFor, sleep, trustWorkspace, waitFor } from './common.mjs';

const s = scratchFor('run-now');
const ws = s.ws;

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
writeFileSync(
  join(ws, '.livenote.toml'),
  `[agent]\nprovider = "say"\n\n[providers.say]\nkind = "command"\ncommand = ["printf", "%s\\\\n", "The run happened."]\n`,
);
writeFileSync(join(ws, 'note.md'), NOTE);
trustWorkspace(s);

async function main() {
  const page = await openWorkbench(s);
  await quickOpen(page, 'note.md');
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

runTest(s, main);
