// The Explorer's "Live notes" and "Runs" views in a real VS Code (code-server, headless
// Chromium, puppeteer-core; see common.mjs): the view lists the workspace's live notes by
// folder; its inline Run now runs a note, and the row then reads "last run just now" (refreshed
// by the server's livenote/notesChanged); the Runs view of that note lists the run, and
// selecting it opens VS Code's diff editor on the body before and after the run. Then a run of
// a note that says `notify: changes` while another note is the active editor (issue 33 §2) is
// told as VS Code's notification: the server's one line ("Top changed: …") with "Open" and
// "Show diff", and "Show diff" opens that run's diff; the other note's run by hand (no `notify`
// key) was told of nothing.
//
//   node tests/e2e/vscode/views.mjs
//
// Environment as for run-now.mjs (LIVENOTE_VSCODE_E2E, LIVENOTE_VSIX, LIVENOTE_BIN), plus
// LIVENOTE_E2E_OUT: where the screenshots go (default <repo>/target/vscode-e2e/out/views):
// 1-live-notes.png (the view), 2-after-run.png (the row after Run now from it),
// 3-run-diff.png (the run's diff), 4-notification.png (the notification of Top's run),
// 5-notify-diff.png (its Show diff). Their paths are printed as `screenshot: PATH` lines.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { e2e, fail, openWorkbench, runTest, scratchFor, sleep, trustWorkspace, waitFor } from './common.mjs';

const s = scratchFor('views');
const out = process.env.LIVENOTE_E2E_OUT || join(e2e, 'out', 'views');
mkdirSync(out, { recursive: true });

// Two live notes, one in a folder; neither is due (a yearly cron that has fired), so only Run
// now writes them. Top asks to be told of the runs that change it, by hand too; its body differs
// from Clock's, so that its run's diff is told from Clock's.
const lastRun = new Date(Date.now() - 3 * 3600_000).toISOString().replace(/\.\d+Z$/, '.000Z');
const note = (title, extra = '', body = 'Not run yet.') => `---
live:
  objective: Say that the run happened.
  triggers:
    cronExpr: "0 0 1 1 *"
  lastRunAt: "${lastRun}"${extra}
---
# ${title}

${body}
`;
writeFileSync(
  join(s.ws, '.livenote.toml'),
  `[agent]\nprovider = "say"\n\n[providers.say]\nkind = "command"\ncommand = ["printf", "%s\\\\n", "The run happened."]\n`,
);
mkdirSync(join(s.ws, 'daily'));
writeFileSync(join(s.ws, 'daily', 'clock.md'), note('Clock'));
writeFileSync(join(s.ws, 'top.md'), note('Top', '\n  notify: changes', 'Top has not run yet.'));
trustWorkspace(s);

async function screenshot(page, name) {
  const path = join(out, name);
  await page.screenshot({ path });
  console.log(`screenshot: ${path}`);
}

/// The Explorer pane titled `title`, expanded; its element handle.
async function pane(page, title) {
  const find = () =>
    page.evaluateHandle((t) => {
      const header = [...document.querySelectorAll('.pane-header')].find((h) => (h.querySelector('.title')?.textContent || '').trim().toLowerCase() === t.toLowerCase());
      return header ? header.closest('.pane') : null;
    }, title);
  const headers = () => page.$$eval('.pane-header .title', (els) => els.map((e) => e.textContent));
  await waitFor(`the "${title}" view in the Explorer`, async () => (await find()).asElement(), 60_000, async () => `; panes: ${await headers()}`);
  const handle = (await find()).asElement();
  const expanded = await handle.$eval('.pane-header', (h) => h.classList.contains('expanded'));
  if (!expanded) {
    await (await handle.$('.pane-header')).click();
    await sleep(500);
  }
  return handle;
}

/// The rows of a view pane, as their text.
const rowsOf = (p) => p.$$eval('.monaco-list-row', (els) => els.map((e) => (e.textContent || '').replace(/\u00a0/g, ' ')));

/// The row of a view pane whose text includes `text`.
async function row(p, text) {
  await waitFor(`a "${text}" row`, async () => (await rowsOf(p)).some((r) => r.includes(text)), 60_000, async () => `; rows: ${JSON.stringify(await rowsOf(p))}`);
  for (const r of await p.$$('.monaco-list-row')) {
    if ((await r.evaluate((e) => e.textContent || '')).includes(text)) return r;
  }
  return fail(`the "${text}" row went away`);
}

/// Click the inline Run now (shown on hover) of the row `text`. The view redraws its rows when
/// the server says the notes changed, which can leave a row found a moment ago out of the page:
/// find it again then.
async function runNowOn(p, text) {
  await waitFor(`the inline Run now action on ${text}`, async () => {
    try {
      const r = await row(p, text);
      await r.hover();
      const action = await r.$('.action-label[aria-label^="Run now"]');
      if (!action) return false;
      await action.click();
      return true;
    } catch (e) {
      if (/detached|not attached|not clickable/i.test(e.message)) return false;
      throw e;
    }
  }, 10_000);
}

async function main() {
  const page = await openWorkbench(s, { width: 1400, height: 1000 });
  // Explorer first (Ctrl+Shift+E), with the tree of files collapsed to leave the views room.
  await page.keyboard.down('Control');
  await page.keyboard.down('Shift');
  await page.keyboard.press('KeyE');
  await page.keyboard.up('Shift');
  await page.keyboard.up('Control');
  const notes = await pane(page, 'Live notes');
  await row(notes, 'Clock');
  const rows = await rowsOf(notes);
  // By folder: the note at the root, then the folder with its note.
  const order = ['Top', 'daily', 'Clock'].map((t) => rows.findIndex((r) => r.includes(t)));
  if (order.some((i) => i < 0) || !(order[0] < order[1] && order[1] < order[2])) fail(`not grouped by folder: ${JSON.stringify(rows)}`);
  if (!rows.find((r) => r.includes('Clock'))?.includes('last run 3 h ago')) fail(`no last run on the Clock row: ${JSON.stringify(rows)}`);
  console.log(`ok - the Live notes view lists the notes by folder: ${JSON.stringify(rows)}`);
  await screenshot(page, '1-live-notes.png');

  // Run now, inline on the row (shown on hover).
  await runNowOn(notes, 'Clock');
  const disk = () => readFileSync(join(s.ws, 'daily', 'clock.md'), 'utf8');
  await waitFor('the run on disk', () => disk().includes('\nThe run happened.\n'), 60_000, async () => `; clock.md:\n${disk()}`);
  console.log('ok - Run now from the view ran the note');
  // The row follows without a refresh by hand: the server's notification.
  await waitFor('the row to show the run', async () => (await rowsOf(notes)).some((r) => r.includes('Clock') && r.includes('last run just now')), 30_000, async () => `; rows: ${JSON.stringify(await rowsOf(notes))}`);
  console.log('ok - the row reads "last run just now"');
  await screenshot(page, '2-after-run.png');

  // Open the note from the view: the Runs view shows its runs; the run opens its diff.
  await (await row(notes, 'Clock')).click();
  await waitFor('clock.md in a tab', () => page.$('.tab[aria-label*="clock.md"], .tab[title*="clock.md"]'));
  const runs = await pane(page, 'Runs');
  const run = await row(runs, 'manual');
  const runText = await run.evaluate((e) => e.textContent || '');
  if (!/done/.test(runText)) fail(`the run's row: ${runText}`);
  console.log(`ok - the Runs view lists the run: ${runText}`);
  await run.click();
  await waitFor('the diff editor', () => page.$('.monaco-diff-editor'), 30_000);
  const sideText = (side) => page.$$eval(`.monaco-diff-editor .editor.${side} .view-line`, (els) => els.map((e) => e.textContent).join('\n').replace(/\u00a0/g, ' '));
  await waitFor('the bodies before and after', async () => (await sideText('original')).includes('Not run yet.') && (await sideText('modified')).includes('The run happened.'), 30_000, async () => `; before: ${await sideText('original')}; after: ${await sideText('modified')}`);
  const tab = await page.$$eval('.tab', (els) => els.map((e) => e.getAttribute('aria-label') || e.textContent));
  if (!tab.some((t) => t && t.includes('before ↔ after'))) fail(`no diff tab: ${tab}`);
  console.log('ok - the run opens a diff of the body before and after it');
  await screenshot(page, '3-run-diff.png');

  // Notifications (issue 33 §2): Clock back as the active editor, then Top run from its row.
  await (await row(notes, 'Clock')).click();
  const activeTab = () => page.$eval('.tab.active', (e) => e.getAttribute('aria-label') || e.textContent || '').catch(() => '');
  await waitFor('clock.md as the active editor', async () => /clock\.md/.test(await activeTab()) && !(await activeTab()).includes('↔'), 10_000, async () => `; active tab: ${await activeTab()}`);
  await runNowOn(notes, 'Top');
  const told = await waitFor('the notification of Top\'s run', async () => (await notifications(page)).find((n) => n.message.includes('Top')), 30_000, async () => `; notifications: ${JSON.stringify(await notifications(page))}`);
  if (!/^livenote: Top changed: \d+ lines? (added|removed)/.test(told.message) || told.message.includes('\n')) fail(`the notification says: ${told.message}`);
  if (JSON.stringify(told.buttons) !== JSON.stringify(['Open', 'Show diff'])) fail(`the notification's buttons: ${JSON.stringify(told.buttons)}`);
  // Clock has no `notify` key: its run by hand (above) was not told.
  const others = (await notifications(page)).filter((n) => n.message !== told.message && /livenote|Clock/.test(n.message));
  if (others.length > 0) fail(`more notifications than Top's: ${JSON.stringify(others)}`);
  console.log(`ok - Top's run (notify: changes) is told: "${told.message}" ${JSON.stringify(told.buttons)}; Clock's was not`);
  await screenshot(page, '4-notification.png');

  await (await notificationButton(page, told.message, 'Show diff')).click();
  await waitFor('the diff of Top\'s run as the active editor', async () => /top\.md/.test(await activeTab()) && (await activeTab()).includes('↔'), 30_000, async () => `; active tab: ${await activeTab()}`);
  // The diff editor shown (Clock's may still be in the page, hidden).
  const shownSide = (side) =>
    page.$$eval(`.monaco-diff-editor .editor.${side}`, (eds) =>
      eds
        .filter((e) => e.checkVisibility())
        .map((e) => [...e.querySelectorAll('.view-line')].map((l) => l.textContent).join('\n'))
        .join('\n')
        .replace(/\u00a0/g, ' '),
    );
  await waitFor('Top\'s bodies before and after', async () => (await shownSide('original')).includes('Top has not run yet.') && (await shownSide('modified')).includes('The run happened.'), 30_000, async () => `; before: ${await shownSide('original')}; after: ${await shownSide('modified')}`);
  console.log(`ok - Show diff opens the run's diff: ${await activeTab()}`);
  await screenshot(page, '5-notify-diff.png');
}

/// VS Code's notifications (toasts and the centre): each one's message and button labels.
const notifications = (page) =>
  page.$$eval('.notification-list-item', (els) =>
    els.map((e) => ({
      message: (e.querySelector('.notification-list-item-message')?.textContent || '').replace(/\u00a0/g, ' '),
      buttons: [...e.querySelectorAll('.notification-list-item-buttons-container .monaco-button')].map((b) => (b.textContent || '').trim()),
    })),
  );

/// The button `label` of the notification saying `message`.
async function notificationButton(page, message, label) {
  for (const item of await page.$$('.notification-list-item')) {
    const text = await item.$eval('.notification-list-item-message', (e) => (e.textContent || '').replace(/\u00a0/g, ' ')).catch(() => '');
    if (text !== message) continue;
    for (const b of await item.$$('.notification-list-item-buttons-container .monaco-button')) {
      if ((await b.evaluate((e) => (e.textContent || '').trim())) === label) return b;
    }
  }
  return fail(`no "${label}" on the notification "${message}"`);
}

runTest(s, main);
