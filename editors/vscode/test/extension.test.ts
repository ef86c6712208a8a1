// Extension-host test without VS Code: the extension's real activate(), status bar and
// commands, with vscode-languageclient and the real `livenote lsp`, over the fake `vscode`
// module in fakeVscode.ts. Needs LIVENOTE_BIN (set by `npm run test:server`); skipped otherwise.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseNoteStatus, ServerCommand, UiCommand } from '../src/protocol';
import { startFakeModel } from './fakeModel';
import { UNTRUSTED_LINE } from '../src/status';
import type { NoteRow, RunRow } from '../src/viewModel';
import {
  createFakeVscode,
  FakeDocument,
  installFakeVscode,
  sleep,
  Uri,
  waitFor as waitUntil,
  type FakeStatusBarItem,
  type FakeVscode,
} from './fakeVscode';

const bin = process.env.LIVENOTE_BIN;
// `lsp --log-file` is newer than this test; an older binary cannot take part in that check.
const logFileSupport =
  bin && spawnSync(bin, ['lsp', '--help'], { encoding: 'utf8' }).stdout?.includes('--log-file')
    ? true
    : `${bin ?? 'livenote'} lsp has no --log-file`;

describe('the extension in a fake VS Code', { skip: bin ? false : 'LIVENOTE_BIN is not set (npm run test:server sets it)' }, () => {
  let tmp: string;
  let workspace: string;
  let fake: FakeVscode;
  let ext: { activate(c: unknown): Promise<void>; deactivate(): Promise<void> };
  let note: FakeDocument;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);

  const item = (): FakeStatusBarItem => {
    const found = fake.statusItems.find((i) => i.id === 'livenote.status');
    assert.ok(found, 'no livenote status-bar item');
    return found;
  };

  const waitFor = (what: string, pred: () => boolean): Promise<void> =>
    waitUntil(
      what,
      pred,
      () => `status bar: ${JSON.stringify(item())}\nmessages: ${JSON.stringify(fake.messages)}\noutput:\n${fake.output.join('\n')}`,
    );

  const waitForStatus = (text: string | RegExp) =>
    waitFor(`status bar ${String(text)}`, () =>
      typeof text === 'string' ? item().text === text && item().visible : text.test(item().text),
    );

  const run = (command: string, ...args: unknown[]) => fake.vscode.commands.executeCommand(command, ...args);

  /** Run a command that edits the note, wait for the edit, then save as the user would. */
  const runAndSave = async (command: string): Promise<void> => {
    const version = note.version;
    await run(command);
    await waitFor(`an edit from ${command}`, () => note.version > version);
    fake.save(note, fs);
  };

  before(async () => {
    assert.ok(bin && fs.existsSync(bin), `LIVENOTE_BIN=${bin ?? ''} does not exist`);
    process.on('unhandledRejection', onUnhandled);
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'livenote-vscode-host-')));
    workspace = path.join(tmp, 'notes');
    fs.mkdirSync(workspace);
    // livenote is found on PATH, as for most users.
    const binDir = path.join(tmp, 'bin');
    fs.mkdirSync(binDir);
    fs.symlinkSync(path.resolve(bin), path.join(binDir, 'livenote'));
    process.env.PATH = `${binDir}${path.delimiter}${process.env.PATH ?? ''}`;
    process.env.LIVENOTE_CONFIG_DIR = path.join(tmp, 'config');
    process.env.LIVENOTE_DATA_DIR = path.join(tmp, 'data');
    process.env.LIVENOTE_LOG = 'info';

    fake = createFakeVscode(workspace);
    fake.settings.set('livenote.agent.provider', { globalValue: 'smoke' });
    fake.settings.set('livenote.providers', {
      globalValue: {
        // Its JSON answer also saves an entry in the note's agent memory (for Clear agent memory).
        smoke: {
          kind: 'command',
          command: [
            'sh',
            '-c',
            'printf \'{"body": "Updated by the host test (%s).", "memory": {"last-trigger": "%s"}}\' "$LIVENOTE_TRIGGER" "$LIVENOTE_TRIGGER"',
          ],
        },
      },
    });
    installFakeVscode(fake);

    const file = path.join(workspace, 'groceries.md');
    fs.writeFileSync(file, '# Groceries\n\nmilk\n');
    note = new FakeDocument(Uri.file(file), 'markdown', '# Groceries\n\nmilk\n');
    // Activation on onLanguage:markdown: the document is already open.
    fake.open(note);
    ext = await import('../src/extension');
    await ext.activate({ subscriptions: [] });
  });

  after(async () => {
    await ext?.deactivate();
    process.off('unhandledRejection', onUnhandled);
    if (tmp) {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('activates: the server starts, its commands and ours are registered without collisions', async () => {
    await waitForStatus('$(circle-outline) Passive');
    for (const id of Object.values(UiCommand)) {
      assert.ok(fake.commands.has(id), `${id} is not registered`);
    }
    // vscode-languageclient registered the server's own command IDs.
    assert.ok(fake.commands.has('livenote.makeLive'));
    assert.ok(fake.commands.has('livenote.noteStatus'));
    assert.equal(item().command, UiCommand.makeLive);
    assert.deepEqual(
      fake.messages.filter((m) => m.severity === 'error'),
      [],
    );
  });

  it('clicking Passive makes the note live; it then waits for livenote trust', async () => {
    await runAndSave(String(item().command));
    assert.match(note.text, /^---\nlive:\n {2}objective: /);
    await waitForStatus('$(shield) Waiting for trust');
    assert.equal(item().command, UiCommand.trustWorkspace);
  });

  it('clicking Waiting for trust trusts the folder; the note is live, never run', async () => {
    await run(String(item().command));
    await waitForStatus('$(pulse) Live · never run');
    assert.ok(fake.messages.some((m) => m.severity === 'info' && m.text.includes(`trusted ${workspace}`)), JSON.stringify(fake.messages));
  });

  it('clicking Live runs the note: the agent edits the buffer, the status shows the run', async () => {
    assert.equal(item().command, UiCommand.run);
    await run(UiCommand.run);
    await waitForStatus('$(pulse) Live · just now');
    await waitFor('the agent output', () => note.text.includes('Updated by the host test (manual).'));
    assert.match(String(item().tooltip), /^Last run: \d\d:\d\d \(just now\)$/m);
    fake.save(note, fs);
  });

  it('Pause and Resume', async () => {
    await runAndSave(UiCommand.pause);
    await waitForStatus('$(debug-pause) Paused');
    await runAndSave(UiCommand.resume);
    await waitForStatus(/^\$\(pulse\) Live · /);
  });

  it('Run now with context passes the input box text', async () => {
    fake.state.inputBoxAnswer = 'focus on dairy';
    const version = note.version;
    await run(UiCommand.runWithContext);
    await waitFor('the run with context', () => note.version > version && !/Updating/.test(item().text));
    // The buffer edit lands before the run has written its runtime fields and released the
    // note: wait until the server no longer reports it running, so the next test sees it idle.
    for (let i = 0; i < 400; i++) {
      const s = parseNoteStatus(await run('livenote.noteStatus', note.uri.toString()));
      if (s?.live && s.status !== 'running') {
        break;
      }
      await sleep(50);
    }
    fake.save(note, fs);
  });

  it("Clear agent memory deletes the memory the runs saved, and says when there was none", async () => {
    const memoryDir = path.join(workspace, '.livenote', 'memory');
    const files = () => (fs.existsSync(memoryDir) ? fs.readdirSync(memoryDir).filter((f) => f.endsWith('.json')) : []);
    assert.equal(files().length, 1, `the runs saved no memory in ${memoryDir}`);
    assert.match(fs.readFileSync(path.join(memoryDir, files()[0] ?? ''), 'utf8'), /last-trigger/);
    const info = () => fake.messages.filter((m) => m.severity === 'info').map((m) => m.text);
    await run(UiCommand.clearMemory);
    await waitFor('the cleared message', () => info().includes("livenote: cleared this note's agent memory."));
    assert.deepEqual(files(), []);
    await run(UiCommand.clearMemory);
    await waitFor('the no-memory message', () => info().includes('livenote: this note has no agent memory.'));
  });

  it('Show live notes lists the note and opens the picked one', async () => {
    let offered: unknown[] = [];
    fake.state.quickPickAnswer = (items) => {
      offered = items;
      return items[0];
    };
    await run(UiCommand.showLiveNotes);
    assert.equal(offered.length, 1);
    const first = offered[0] as { label: string; description: string; detail: string };
    assert.equal(first.label, 'groceries.md');
    assert.match(first.description, /^\$\(pulse\) Live · last run just now$/);
    assert.equal(first.detail, 'manual only');
    assert.ok(fake.executed.some((e) => e.command === 'window.showTextDocument' && e.args[0] === note.uri.fsPath));
  });

  it('the Live notes view lists the note by the server\'s notification, runs it inline; the Runs view diffs and restores a run', async () => {
    const notesView = fake.trees.get('livenote.notes');
    const runsView = fake.trees.get('livenote.runs');
    assert.ok(notesView && runsView, `views: ${[...fake.trees.keys()].join(', ')}`);
    const notes = () => notesView.treeDataProvider.getChildren() as NoteRow[];
    const runs = () => runsView.treeDataProvider.getChildren() as RunRow[];
    const detail = () => `notes: ${JSON.stringify(notes().map((n) => [n.label, n.description]))}\nruns: ${JSON.stringify(runs().map((r) => r.label))}\nmessages: ${JSON.stringify(fake.messages)}`;
    const waitView = (what: string, pred: () => boolean) => waitUntil(what, pred, detail);
    await waitView('the note in the Live notes view', () => notes()[0]?.label === 'Groceries');
    const row = notes()[0];
    assert.ok(row);
    assert.match(row.contextValue, /\brunnable\b/);
    const treeItem = (await notesView.treeDataProvider.getTreeItem(row)) as { command?: { command: string }; resourceUri?: Uri };
    assert.equal(treeItem.resourceUri?.fsPath, note.uri.fsPath);
    assert.equal(treeItem.command?.command, UiCommand.viewOpen);
    await waitView('the runs of the active note', () => runs().length > 0);

    // A body of the user's own, saved, then Run now from the view's inline action.
    const edit = new fake.vscode.WorkspaceEdit();
    edit.replace(note.uri, new fake.vscode.Range(note.positionAt(0), note.positionAt(note.text.length)), note.text.replace(/\n\n[^]*$/, '\n\nbread\n'));
    await fake.vscode.workspace.applyEdit(edit);
    fake.save(note, fs);
    const before = runs().length;
    const changes = notesView.changes;
    await run(UiCommand.viewRun, row);
    await waitView('the agent output', () => note.text.endsWith('Updated by the host test (manual).\n'));
    fake.save(note, fs);
    // Refreshed on the server's notification: the run added a row, with no polling.
    await waitView('the new run in the Runs view', () => runs().length === before + 1 && runs()[0]?.run.outcome === 'done');
    assert.ok(notesView.changes > changes, 'the Live notes view was not refreshed');
    const newest = runs()[0];
    assert.ok(newest);
    assert.equal(newest.run.trigger, 'manual');
    assert.match(newest.contextValue, /\bdiffable\b/);

    // Selecting the run opens VS Code's diff editor on two livenote-run: documents.
    const runTreeItem = (await runsView.treeDataProvider.getTreeItem(newest)) as { command?: { command: string; arguments?: unknown[] } };
    assert.equal(runTreeItem.command?.command, UiCommand.openRunDiff);
    await run(UiCommand.openRunDiff, ...(runTreeItem.command?.arguments ?? []));
    const diff = fake.executed.find((e) => e.command === 'vscode.diff');
    assert.ok(diff, JSON.stringify(fake.executed.map((e) => e.command)));
    const [left, right, title] = diff.args as [Uri, Uri, string];
    assert.match(title, /^groceries\.md: run \S+ · manual \(before ↔ after\)$/);
    const provider = fake.contentProviders.get('livenote-run');
    assert.ok(provider);
    assert.equal(await provider.provideTextDocumentContent(left), '\nbread\n');
    assert.equal(await provider.provideTextDocumentContent(right), '\nUpdated by the host test (manual).\n');

    // Restore from the diff editor's title (its argument is the diff's document), confirmed.
    fake.state.messageAnswer = (_text, items) => (items.includes('Restore') ? 'Restore' : undefined);
    await run(UiCommand.restoreRun, left);
    await waitView('the body restored in the buffer', () => note.text.endsWith('\n\nbread\n'));
    fake.state.messageAnswer = undefined;
    fake.save(note, fs);
    await waitView('the restore in the Runs view', () => runs()[0]?.run.trigger === 'restore');
  });

  it('an untrusted VS Code workspace turns the scheduler off and says so; granting trust turns it back on', async () => {
    const serverStatus = async () => {
      const parsed = parseNoteStatus(await run('livenote.noteStatus', note.uri.toString()));
      return { schedulerEnabled: parsed?.live ? parsed.schedulerEnabled : undefined };
    };
    fake.state.trusted = false;
    fake.changeSettings({ 'livenote.history.keep': { globalValue: 5 } });
    let s = await serverStatus();
    for (let i = 0; i < 100 && s.schedulerEnabled !== false; i++) {
      await sleep(50);
      s = await serverStatus();
    }
    assert.equal(s.schedulerEnabled, false);
    await waitFor('the untrusted tooltip', () => String(item().tooltip).includes(UNTRUSTED_LINE));
    fake.grantTrust();
    for (let i = 0; i < 100 && s.schedulerEnabled !== true; i++) {
      await sleep(50);
      s = await serverStatus();
    }
    assert.equal(s.schedulerEnabled, true);
    await waitFor('the tooltip without the untrusted line', () => !String(item().tooltip).includes(UNTRUSTED_LINE));
  });

  it('a livenote.path that points nowhere restarts into "not found" with install steps; fixing it recovers', async () => {
    fake.changeSettings({ 'livenote.path': { globalValue: path.join(tmp, 'nope', 'livenote') } });
    await waitForStatus('$(error) livenote not found');
    const error = fake.messages.find((m) => m.severity === 'error' && m.text.includes('cargo install --locked --path server'));
    assert.ok(error, JSON.stringify(fake.messages));
    assert.deepEqual(error.items, ['Open Settings', 'Copy install command', 'Retry']);
    assert.equal(item().command, UiCommand.showServerMissing);
    fake.changeSettings({ 'livenote.path': { globalValue: path.resolve(bin ?? '') } });
    await waitForStatus(/^\$\(pulse\) Live · /);
  });

  it('livenote.logFile restarts the server with --log-file; the server appends its log there', { skip: logFileSupport === true ? false : logFileSupport }, async () => {
    const logFile = path.join(tmp, 'logs', 'livenote.log');
    fs.mkdirSync(path.dirname(logFile));
    const from = fake.output.length;
    fake.changeSettings({ 'livenote.logFile': { globalValue: logFile } });
    await waitFor('a restart with --log-file', () => fake.output.slice(from).some((l) => l.includes(`lsp --log-file ${logFile} (from `)));
    await waitForStatus(/^\$\(pulse\) Live · /);
    await waitFor('the server log in the file', () => fs.existsSync(logFile) && /indexed \d+ notes?/.test(fs.readFileSync(logFile, 'utf8')));
    fake.changeSettings({ 'livenote.logFile': { globalValue: '' } });
    await waitFor('a restart without --log-file', () => fake.output.slice(from).some((l) => /starting \S+ lsp \(from /.test(l)));
    await waitForStatus(/^\$\(pulse\) Live · /);
  });

  it('Make live from a description asks for a sentence; without a model provider the sentence becomes the objective', async () => {
    await runAndSave(UiCommand.makePassive);
    await waitForStatus('$(circle-outline) Passive');
    fake.state.inputBoxAnswer = '  what to buy this week ';
    await runAndSave(UiCommand.makeLiveDescribe);
    assert.match(note.text, /^---\nlive:\n {2}objective: "what to buy this week"\n---\n/);
    // The default provider runs a command, not a model: the server says why it wrote the template.
    await waitFor('the template warning', () =>
      fake.messages.some((m) => m.severity === 'warning' && m.text.includes('made live from the template')),
    );
    await waitForStatus(/^\$\(pulse\) Live · /);
  });

  // Needs the server's livenote.ask (issue 33): the configured model answers a sentence.
  it('Ask livenote… (the palette, and the light bulb\'s one-argument livenote.ask) sends the sentence to the model and shows its reply', async () => {
    const reply = 'This note keeps what to buy this week; it has not run since you made it live.';
    const model = await startFakeModel([reply]);
    const providers = fake.settings.get('livenote.providers');
    try {
      fake.changeSettings({
        'livenote.providers': { globalValue: { scripted: { kind: 'openai', base_url: model.baseUrl, model: 'fake' } } },
        'livenote.agent.provider': { globalValue: 'scripted' },
      });
      const replies = (from: number) => fake.messages.slice(from).filter((m) => m.text === `livenote: ${reply}`);
      let from = fake.messages.length;
      fake.state.inputBoxAnswer = 'what does this note keep?';
      await run(UiCommand.ask);
      await waitFor('the reply to the palette\'s question', () => replies(from).length === 1);
      assert.equal(replies(from)[0]?.severity, 'info');
      assert.ok(JSON.stringify(model.requests).includes('what does this note keep?'), JSON.stringify(model.requests).slice(0, 2000));
      // The code action's command: the server's own ID with the note only; the client prompts.
      from = fake.messages.length;
      fake.state.inputBoxAnswer = 'why did it not run this morning?';
      await run(ServerCommand.ask, note.uri.toString());
      await waitFor('the reply to the light bulb\'s question', () => replies(from).length === 1);
      assert.ok(JSON.stringify(model.requests).includes('why did it not run this morning?'));
    } finally {
      fake.state.inputBoxAnswer = undefined;
      fake.changeSettings({ 'livenote.providers': providers ?? {}, 'livenote.agent.provider': { globalValue: 'smoke' } });
      await model.close();
    }
  });

  // Needs the server's livenote/notify (issue 33): a run of a note with `notify: all` is told.
  it('livenote/notify: a run of a note not in the active editor is told with Open and Show diff; Show diff opens the run', async () => {
    const edit = new fake.vscode.WorkspaceEdit();
    // A body line of its own, so that the run surely changes the body (outcome "changed").
    const withNotify = `${note.text.replace(/^live:\n/m, 'live:\n  notify: all\n')}\nbefore the told run\n`;
    assert.notEqual(withNotify, note.text, note.text);
    edit.replace(note.uri, new fake.vscode.Range(0, 0, note.lineCount, 0), withNotify);
    await fake.vscode.workspace.applyEdit(edit);
    fake.save(note, fs);
    const from = fake.messages.length;
    const told = () => fake.messages.slice(from).find((m) => /groceries/i.test(m.text) && m.text.startsWith('livenote: '));
    fake.state.activeEditor = undefined;
    fake.state.messageAnswer = (text, items) => (/groceries/i.test(text) && items.includes('Show diff') ? 'Show diff' : undefined);
    try {
      await run(ServerCommand.run, note.uri.toString());
      // A digest may wait for more notes within the minute: allow for it.
      await waitUntil('the notification', () => told() !== undefined, () => JSON.stringify(fake.messages.slice(from)), 90_000);
      assert.equal(told()?.severity, 'info');
      assert.deepEqual(told()?.items, ['Open', 'Show diff']);
      await waitFor('the run\'s diff', () => fake.executed.some((e) => e.command === 'vscode.diff'));
    } finally {
      fake.state.messageAnswer = undefined;
      fake.state.activeEditor = { document: note };
      fake.save(note, fs);
    }
  });

  it('no unhandled promise rejections', () => {
    assert.deepEqual(unhandled, []);
  });
});
