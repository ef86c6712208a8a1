// Protocol smoke test: the real `livenote lsp` over stdio, driven through
// vscode-languageserver-protocol (the library vscode-languageclient is built on) the way the
// extension drives it: initializationOptions from the settings mapping, executeCommand with the
// document URI first, workspace/applyEdit applied to the buffer, didChangeConfiguration.
// Needs the binary: LIVENOTE_BIN, set by `npm run test:server`; skipped otherwise.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  ApplyWorkspaceEditRequest,
  CodeActionRequest,
  createMessageConnection,
  DidChangeConfigurationNotification,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DidSaveTextDocumentNotification,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  TextDocumentEdit,
  type ApplyWorkspaceEditParams,
  type CodeAction,
  type Command,
  type ApplyWorkspaceEditResult,
  type InitializeResult,
  type MessageConnection,
  type TextEdit,
} from 'vscode-languageserver-protocol/node';
import { notePickItems } from '../src/notes';
import { askSentence, isRecord, parseListNotes, parseNoteStatus, ServerCommand, ServerRequest, type NoteStatus } from '../src/protocol';
import { buildServerSettings, didChangeConfigurationParams, type Inspected } from '../src/settings';
import { noteStatusView } from '../src/status';

const bin = process.env.LIVENOTE_BIN;

/** An open document as the client keeps it. */
interface Doc {
  uri: string;
  file: string;
  text: string;
  version: number;
}

function offsetAt(text: string, line: number, character: number): number {
  let offset = 0;
  for (let l = 0; l < line; l++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) {
      return text.length;
    }
    offset = nl + 1;
  }
  // UTF-16 code units: the encoding the server falls back to when the client offers no other,
  // and JavaScript's own string indexing.
  return Math.min(offset + character, text.length);
}

function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const resolved = edits
    .map((e) => ({
      start: offsetAt(text, e.range.start.line, e.range.start.character),
      end: offsetAt(text, e.range.end.line, e.range.end.character),
      newText: e.newText,
    }))
    .sort((a, b) => b.start - a.start);
  let out = text;
  for (const e of resolved) {
    out = out.slice(0, e.start) + e.newText + out.slice(e.end);
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A deadline for Promise.race that does not keep the test process alive once the race is won. */
function deadline(ms: number): Promise<'timeout'> {
  return new Promise((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
}

describe('livenote lsp over stdio', { skip: bin ? false : 'LIVENOTE_BIN is not set (npm run test:server sets it)' }, () => {
  let tmp: string;
  let workspace: string;
  let child: ChildProcess;
  let conn: MessageConnection;
  let init: InitializeResult;
  let stderr = '';
  const protocolErrors: string[] = [];
  const docs = new Map<string, Doc>();
  const messages: string[] = [];
  /** The text of every window/showMessage notification. */
  const shown: string[] = [];

  const command = (name: string, args: unknown[]): Promise<unknown> =>
    conn.sendRequest(ExecuteCommandRequest.type, { command: name, arguments: args });

  const status = async (doc: Doc): Promise<NoteStatus> => {
    const raw = await command(ServerCommand.noteStatus, [doc.uri]);
    const parsed = parseNoteStatus(raw);
    assert.ok(parsed, `noteStatus answered ${JSON.stringify(raw)}`);
    return parsed;
  };

  const waitForStatus = async (
    doc: Doc,
    what: string,
    pred: (s: NoteStatus) => boolean,
    timeoutMs = 20_000,
  ): Promise<NoteStatus> => {
    const deadline = Date.now() + timeoutMs;
    let last: NoteStatus | undefined;
    while (Date.now() < deadline) {
      last = await status(doc);
      if (pred(last)) {
        return last;
      }
      await sleep(100);
    }
    assert.fail(`timed out waiting for ${what}; last status ${JSON.stringify(last)}\nstderr:\n${stderr}`);
  };

  const waitForText = async (doc: Doc, what: string, pred: (text: string) => boolean): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if (pred(doc.text)) {
        return;
      }
      await sleep(50);
    }
    assert.fail(`timed out waiting for ${what}; text:\n${doc.text}\nstderr:\n${stderr}`);
  };

  const open = async (rel: string, text: string): Promise<Doc> => {
    const file = path.join(workspace, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    const doc: Doc = { uri: pathToFileURL(file).href, file, text, version: 1 };
    docs.set(doc.uri, doc);
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: doc.uri, languageId: 'markdown', version: doc.version, text },
    });
    return doc;
  };

  const save = async (doc: Doc): Promise<void> => {
    fs.writeFileSync(doc.file, doc.text);
    await conn.sendNotification(DidSaveTextDocumentNotification.type, { textDocument: { uri: doc.uri } });
  };

  /**
   * Run a command that edits the note and wait for its workspace/applyEdit, then save as a user
   * would. The version is taken before sending: the edit may arrive before the command's answer.
   */
  const commandWithEdit = async (doc: Doc, name: string, args: unknown[]): Promise<void> => {
    const before = doc.version;
    await command(name, args);
    const deadline = Date.now() + 10_000;
    while (doc.version === before) {
      if (Date.now() > deadline) {
        assert.fail(`no workspace/applyEdit for ${name}\nstderr:\n${stderr}`);
      }
      await sleep(20);
    }
    await save(doc);
  };

  // What VS Code does with workspace/applyEdit: apply to the buffer when the version matches,
  // send didChange, then answer.
  const onApplyEdit = async (params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> => {
    const edits: { uri: string; version: number | null; edits: TextEdit[] }[] = [];
    for (const change of params.edit.documentChanges ?? []) {
      if (!TextDocumentEdit.is(change)) {
        return { applied: false, failureReason: 'only text edits are expected' };
      }
      edits.push({
        uri: change.textDocument.uri,
        version: change.textDocument.version,
        edits: change.edits.filter((e): e is TextEdit => 'range' in e),
      });
    }
    for (const [uri, list] of Object.entries(params.edit.changes ?? {})) {
      edits.push({ uri, version: null, edits: list });
    }
    for (const e of edits) {
      const doc = docs.get(e.uri);
      if (!doc) {
        return { applied: false, failureReason: `${e.uri} is not open` };
      }
      if (e.version !== null && e.version !== doc.version) {
        return { applied: false, failureReason: `stale version ${e.version}, buffer is at ${doc.version}` };
      }
    }
    for (const e of edits) {
      const doc = docs.get(e.uri);
      if (!doc) continue;
      doc.text = applyEdits(doc.text, e.edits);
      doc.version++;
      await conn.sendNotification(DidChangeTextDocumentNotification.type, {
        textDocument: { uri: doc.uri, version: doc.version },
        contentChanges: [{ text: doc.text }],
      });
    }
    return { applied: true };
  };

  /** The settings JSON exactly as the extension would build it from these VS Code settings. */
  const settingsFrom = (table: Record<string, Inspected>, trusted: boolean) =>
    buildServerSettings((key) => table[key], { trusted }).settings;

  // A `command` provider: offline and deterministic. A run with context "slow" hangs so Stop
  // can be exercised.
  const userSettings: Record<string, Inspected> = {
    'agent.provider': { globalValue: 'smoke' },
    'agent.maxSteps': { globalValue: 5 },
    'agent.timeout': { globalValue: '1m' },
    'history.keep': { globalValue: 3 },
    providers: {
      globalValue: {
        smoke: {
          kind: 'command',
          command: [
            'sh',
            '-c',
            'if [ "$LIVENOTE_CONTEXT" = slow ]; then sleep 30; fi; printf "Updated by the smoke test (%s).\\n" "$LIVENOTE_TRIGGER"',
          ],
          timeout: '45s',
        },
      },
    },
  };

  before(async () => {
    assert.ok(bin && fs.existsSync(bin), `LIVENOTE_BIN=${bin ?? ''} does not exist`);
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'livenote-vscode-smoke-')));
    workspace = path.join(tmp, 'notes');
    fs.mkdirSync(workspace);
    fs.mkdirSync(path.join(tmp, 'config'));
    child = spawn(bin, ['lsp'], {
      cwd: workspace,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // Keep the user's real config and trust list out of the test.
        LIVENOTE_CONFIG_DIR: path.join(tmp, 'config'),
        LIVENOTE_DATA_DIR: path.join(tmp, 'data'),
        XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
        XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
        LIVENOTE_LOG: 'info',
      },
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    assert.ok(child.stdout && child.stdin);
    conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    conn.onError(([error]) => protocolErrors.push(error.message));
    conn.onRequest(ApplyWorkspaceEditRequest.type, onApplyEdit);
    // Everything else the server may ask: the trust prompt ("Not now"), refreshes, progress
    // tokens, capability registration, configuration.
    conn.onRequest((method, params) => {
      messages.push(method);
      if (method === 'window/showMessageRequest') {
        return null;
      }
      if (method === 'workspace/configuration') {
        const items = (params as { items?: unknown[] } | undefined)?.items ?? [];
        return items.map(() => null);
      }
      return null;
    });
    conn.onNotification((method, params) => {
      messages.push(method);
      if (method === 'window/showMessage' && isRecord(params)) {
        shown.push(String(params.message));
      }
    });
    conn.listen();

    const initializationOptions = settingsFrom(userSettings, true);
    assert.deepEqual(initializationOptions.agent, { provider: 'smoke', max_steps: 5, timeout: '1m' });
    init = await conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      clientInfo: { name: 'livenote-vscode-smoke' },
      rootUri: pathToFileURL(workspace).href,
      workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'notes' }],
      initializationOptions,
      capabilities: {
        workspace: {
          applyEdit: true,
          workspaceEdit: { documentChanges: true },
          configuration: true,
          didChangeConfiguration: { dynamicRegistration: false },
          executeCommand: { dynamicRegistration: false },
        },
        textDocument: {
          synchronization: { didSave: true, dynamicRegistration: false },
        },
        window: { workDoneProgress: true, showMessage: {} },
        // As the extension declares them (extension.ts).
        experimental: { livenote: { notesChanged: true, ask: true, notify: true } },
      },
    });
    await conn.sendNotification(InitializedNotification.type, {});
  });

  after(async () => {
    try {
      if (conn && child.exitCode === null) {
        await Promise.race([conn.sendRequest(ShutdownRequest.type), deadline(5000)]);
        await conn.sendNotification(ExitNotification.type);
        const exited = await Promise.race([
          new Promise<boolean>((resolve) => child.once('exit', () => resolve(true))),
          deadline(5000).then(() => false),
        ]);
        if (!exited) {
          child.kill('SIGKILL');
        }
      }
    } finally {
      conn?.dispose();
      if (tmp) {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    }
  });

  it('advertises every command the extension sends', () => {
    const advertised = init.capabilities.executeCommandProvider?.commands ?? [];
    for (const c of Object.values(ServerCommand)) {
      assert.ok(advertised.includes(c), `${c} is not in executeCommandProvider.commands: ${advertised.join(', ')}`);
    }
  });

  let note: Doc;

  it('a passive note: {live: false}, shown as Passive', async () => {
    note = await open('journal/groceries.md', '# Groceries\n\nmilk\n');
    const s = await status(note);
    assert.deepEqual(s, { live: false });
    assert.equal(noteStatusView(s, { now: new Date(), workspaceTrusted: true }).text, '$(circle-outline) Passive');
  });


  // Needs the server's livenote.ask (issue 33).
  it('the light bulb offers "Ask livenote…" with the note only, which the extension prompts for; the server refuses it without a sentence', async () => {
    const actions: (Command | CodeAction)[] | null = await conn.sendRequest(CodeActionRequest.type, {
      textDocument: { uri: note.uri },
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      context: { diagnostics: [] },
    });
    const ask = (actions ?? []).find((a) => a.title === 'Ask livenote…');
    assert.ok(ask, `no "Ask livenote…" among ${JSON.stringify((actions ?? []).map((a) => a.title))}`);
    const command = 'command' in ask && typeof ask.command === 'object' ? ask.command : (ask as Command);
    assert.deepEqual({ command: command?.command, arguments: command?.arguments }, { command: ServerCommand.ask, arguments: [note.uri] });
    // The extension's middleware sees exactly this shape as "ask for the sentence".
    assert.equal(askSentence(command?.arguments ?? []), undefined);
    await assert.rejects(
      conn.sendRequest(ExecuteCommandRequest.type, { command: ServerCommand.ask, arguments: [note.uri] }),
      (e: unknown) => isRecord(e) && e.code === -32602 && String(e.message).includes('livenote.ask needs a sentence'),
    );
  });
  it('Make live edits the buffer through applyEdit; the note then waits for livenote trust', async () => {
    await commandWithEdit(note, ServerCommand.makeLive, [note.uri]);
    assert.match(note.text, /^---\nlive:\n {2}objective: /);
    assert.ok(note.text.endsWith('# Groceries\n\nmilk\n'), note.text);
    const s = await waitForStatus(note, 'a live status', (x) => x.live);
    assert.ok(s.live);
    // A fresh temp folder is not on livenote's trust list (LIVENOTE_DATA_DIR is empty).
    assert.equal(s.status, 'untrusted');
    assert.equal(s.active, true);
    assert.equal(s.lastRunAt, null);
    assert.equal(s.nextDue, null, 'no triggers: manual only');
    assert.equal(s.schedulerEnabled, true);
    assert.equal(noteStatusView(s, { now: new Date(), workspaceTrusted: true }).text, '$(shield) Waiting for trust');
  });

  it('noteStatus of a live note has exactly the contract\'s keys', async () => {
    const raw = (await command(ServerCommand.noteStatus, [note.uri])) as Record<string, unknown>;
    for (const key of [
      'live',
      'status',
      'active',
      'lastRunAt',
      'lastAttemptAt',
      'lastRunError',
      'nextDue',
      'due',
      'schedulerEnabled',
    ]) {
      assert.ok(key in raw, `noteStatus has no "${key}": ${JSON.stringify(raw)}`);
    }
    assert.equal(typeof raw.schedulerEnabled, 'boolean');
  });

  it('trustWorkspace with the note URI trusts its root; the note is then live and never run', async () => {
    const trusted = await command(ServerCommand.trustWorkspace, [note.uri]);
    assert.deepEqual(trusted, [workspace]);
    const s = await waitForStatus(note, 'live after trust', (x) => x.live && x.status === 'live');
    assert.equal(noteStatusView(s, { now: new Date(), workspaceTrusted: true }).text, '$(pulse) Live · never run');
  });

  it('Run now with the settings-defined command provider updates the body and lastRunAt', async () => {
    await command(ServerCommand.run, [note.uri]);
    const s = await waitForStatus(note, 'a successful run', (x) => x.live && x.lastRunAt !== null && x.status !== 'running');
    assert.ok(s.live);
    assert.equal(s.status, 'live', JSON.stringify(s));
    assert.equal(s.lastRunError, null);
    await waitForText(note, 'the agent output in the buffer', (t) => t.includes('Updated by the smoke test (manual).'));
    assert.match(noteStatusView(s, { now: new Date(), workspaceTrusted: true }).text, /^\$\(pulse\) Live · just now$/);
    await save(note);
  });

  it('Run with context, then Stop: running, then stopped (not failed) with the stop recorded', async () => {
    await command(ServerCommand.run, [note.uri, 'slow']);
    const running = await waitForStatus(note, 'running', (x) => x.live && x.status === 'running');
    assert.equal(noteStatusView(running, { now: new Date(), workspaceTrusted: true }).text, '$(sync~spin) Updating…');
    const stopped = await command(ServerCommand.stop, [note.uri]);
    assert.deepEqual(stopped, { stopped: true });
    const s = await waitForStatus(note, 'the stopped run to settle', (x) => x.live && x.status !== 'running');
    assert.ok(s.live);
    assert.equal(s.status, 'stopped', JSON.stringify(s));
    assert.match(noteStatusView(s, { now: new Date(), workspaceTrusted: true }).text, /^\$\(debug-stop\) Stopped/);
    assert.ok(s.lastRunError, 'a stopped run records why');
    assert.notEqual(s.lastRunAt, null, 'the earlier successful run stays');
    await save(note);
    assert.deepEqual(await command(ServerCommand.stop, [note.uri]), { stopped: false });
  });

  it('Pause and Resume via setActive', async () => {
    await commandWithEdit(note, ServerCommand.setActive, [note.uri, false]);
    assert.match(note.text, /\n {2}active: false\n/);
    const paused = await waitForStatus(note, 'paused', (x) => x.live && x.status === 'paused');
    assert.ok(paused.live && paused.active === false);
    await commandWithEdit(note, ServerCommand.setActive, [note.uri, true]);
    assert.match(note.text, /\n {2}active: true\n/);
    await waitForStatus(note, 'not paused', (x) => x.live && x.status !== 'paused');
  });

  it('the typed requests answer what their commands answer', async () => {
    const typed = await conn.sendRequest(ServerRequest.listNotes);
    assert.deepEqual(typed, await command(ServerCommand.listNotes, []));
    const status = await conn.sendRequest(ServerRequest.noteStatus, { textDocument: { uri: note.uri } });
    assert.deepEqual(status, await command(ServerCommand.noteStatus, [note.uri]));
  });

  it('listNotes lists the note with its workspace-relative path', async () => {
    const items = parseListNotes(await conn.sendRequest(ServerRequest.listNotes));
    const item = items.find((i) => i.path === path.join('journal', 'groceries.md'));
    assert.ok(item, JSON.stringify(items));
    assert.equal(item.active, true);
    assert.notEqual(item.lastRunAt, null);
    const [pick] = notePickItems([item], new Date());
    assert.equal(pick?.label, path.join('journal', 'groceries.md'));
    assert.equal(pick?.detail.startsWith('manual only'), true, pick?.detail);
  });

  it('didChangeConfiguration: an untrusted VS Code workspace turns the scheduler off, trust turns it back on', async () => {
    const untrusted = settingsFrom(userSettings, false);
    assert.deepEqual(untrusted.scheduler, { enabled: false });
    await conn.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(untrusted));
    await waitForStatus(note, 'schedulerEnabled false', (x) => x.live && !x.schedulerEnabled);
    // Trust granted and the user never set scheduler.enabled: the server falls back to TOML.
    const trusted = settingsFrom(userSettings, true);
    assert.equal(trusted.scheduler, undefined);
    await conn.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(trusted));
    await waitForStatus(note, 'schedulerEnabled true again', (x) => x.live && x.schedulerEnabled);
  });

  it('didChangeConfiguration: the server accepts every setting the mapping builds', async () => {
    const all = settingsFrom(
      {
        ...userSettings,
        'agent.maxTokens': { globalValue: 200_000 },
        'agent.instructions': { globalValue: ['notes/STYLE.md'] },
        'agent.instructionsMaxChars': { globalValue: 2000 },
        'memory.maxKeys': { globalValue: 10 },
        'memory.maxBytes': { globalValue: 512 },
        'skills.dirs': { globalValue: ['skills', 'team/skills'] },
        'mcp.servers': {
          globalValue: {
            time: { command: ['uvx', 'mcp-server-time'], env: { TZ: 'UTC' }, events: false, timeout: '20s' },
            docs: { url: 'https://example.com/mcp' },
          },
        },
      },
      true,
    );
    assert.deepEqual(Object.keys(all).sort(), ['agent', 'history', 'mcp', 'memory', 'providers', 'skills']);
    // One key the server does not know, sent alongside: its warning is the proof the settings
    // were read, and that it is the only one shows every other key was accepted.
    const from = shown.length;
    await conn.sendNotification(
      DidChangeConfigurationNotification.type,
      didChangeConfigurationParams({ ...all, memory: { ...all.memory, max_key: 3 } } as typeof all),
    );
    for (let i = 0; i < 200 && shown.length === from; i++) {
      await sleep(20);
    }
    assert.equal(shown.length - from, 1, shown.slice(from).join('\n'));
    assert.match(shown[from] ?? '', /^livenote settings: [^;]*memory\.max_key[^;]*$/);
    await conn.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(settingsFrom(userSettings, true)));
  });

  it('didChangeConfiguration: clearing every setting drops the client layer', async () => {
    await conn.sendNotification(
      DidChangeConfigurationNotification.type,
      didChangeConfigurationParams(settingsFrom({ 'scheduler.enabled': { globalValue: false } }, true)),
    );
    await waitForStatus(note, 'schedulerEnabled false', (x) => x.live && !x.schedulerEnabled);
    await conn.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(settingsFrom({}, true)));
    await waitForStatus(note, 'schedulerEnabled true after clearing', (x) => x.live && x.schedulerEnabled);
  });

  it('Make passive removes the block and keeps the body', async () => {
    await commandWithEdit(note, ServerCommand.makePassive, [note.uri]);
    assert.ok(!note.text.includes('live:'), note.text);
    assert.ok(note.text.includes('Updated by the smoke test (manual).'), note.text);
    await waitForStatus(note, 'passive', (x) => !x.live);
  });

  it('an untitled markdown buffer gets a status too', async () => {
    const uri = 'untitled:Untitled-1';
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: 'markdown', version: 1, text: '---\nlive:\n  objective: x\n---\n# T\n' },
    });
    const raw = await command(ServerCommand.noteStatus, [uri]);
    const s = parseNoteStatus(raw);
    assert.ok(s?.live, JSON.stringify(raw));
  });

  it('nothing but JSON-RPC on stdout', () => {
    assert.deepEqual(protocolErrors, []);
  });

  it('shutdown and exit: the server exits with status 0', async () => {
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await conn.sendRequest(ShutdownRequest.type);
    await conn.sendNotification(ExitNotification.type);
    const started = Date.now();
    const code = await Promise.race([exit, deadline(10_000)]);
    assert.equal(code, 0, `exit status ${String(code)} after ${Date.now() - started} ms\nstderr:\n${stderr}`);
  });
});
