// Ask livenote…, livenote/notify, the MCP list and @livenote: the pure wording and buttons, and
// the glue in the fake VS Code (fakeVscode.ts) with a client that records what it sends.
// The same surfaces against the real server: extension.test.ts and tests/e2e/vscode/ask.mjs.

import assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, it } from 'node:test';
import { askMarkdown, askMessage, chatSentence, notifyView, referencedNote } from '../src/askModel';
import type { LivenoteClient } from '../src/client';
import { askSentence, parseAskResult, parseNotify, ServerCommand, UiCommand, type NotifyNote } from '../src/protocol';
import { mcpLaunches } from '../src/serverPath';
import { createFakeVscode, EventEmitter, FakeDocument, installFakeVscode, Uri, type FakeVscode } from './fakeVscode';
// Types only: the modules themselves are loaded once the fake `vscode` is installed.
import type * as vscodeTypes from 'vscode';
import type * as AskModule from '../src/ask';
import type * as ChatModule from '../src/chat';
import type * as CommandsModule from '../src/commands';
import type * as McpModule from '../src/mcp';
import type * as NotifyModule from '../src/notify';

const root = path.join(os.tmpdir(), 'livenote-ask-test');
const noteFile = path.join(root, 'weather.md');
const noteUri = pathToFileURL(noteFile).href;

const note = (over: Partial<NotifyNote> = {}): NotifyNote => ({
  uri: noteUri,
  path: 'weather.md',
  title: 'Weather',
  trigger: 'schedule',
  outcome: 'changed',
  summary: 'Added the pollen count.',
  added: 3,
  removed: 1,
  runId: '20261207T050000Z-1',
  ...over,
});

describe('livenote.ask results and arguments', () => {
  it('reads the contract shape, and nothing without a reply', () => {
    assert.deepEqual(parseAskResult({ reply: 'Extended the objective.', changed: true, actions: ['extend_objective', 3], noModel: false }), {
      reply: 'Extended the objective.',
      changed: true,
      actions: ['extend_objective'],
      noModel: false,
    });
    assert.deepEqual(parseAskResult({ reply: 'No model.', noModel: true }), { reply: 'No model.', changed: false, actions: [], noModel: true });
    assert.equal(parseAskResult({ changed: true }), undefined);
    assert.equal(parseAskResult(null), undefined);
  });

  it("the code action's one-argument form, and an empty sentence, have no sentence", () => {
    assert.equal(askSentence([noteUri]), undefined);
    assert.equal(askSentence([noteUri, '   ']), undefined);
    assert.equal(askSentence([noteUri, 7]), undefined);
    assert.equal(askSentence([noteUri, 'every weekday at nine']), 'every weekday at nine');
  });

  it('a reply is information, a no-model reply a warning; the chat adds what acted', () => {
    const r = { reply: 'Done.', changed: true, actions: ['set_triggers', 'run_now'], noModel: false };
    assert.deepEqual(askMessage(r), { severity: 'info', text: 'livenote: Done.' });
    assert.deepEqual(askMessage({ ...r, noModel: true }), { severity: 'warning', text: 'livenote: Done.' });
    assert.equal(askMarkdown(r), 'Done.\n\n*livenote: set_triggers, run_now*');
    assert.equal(askMarkdown({ ...r, actions: [] }), 'Done.');
  });
});

describe('livenote/notify', () => {
  it('reads the contract shape; drops notes without a URI and messages without text', () => {
    const p = parseNotify({ message: 'Weather changed: 3 lines added', digest: false, notes: [note(), { path: 'x.md' }] });
    assert.deepEqual(p, { message: 'Weather changed: 3 lines added', digest: false, notes: [note()] });
    assert.equal(parseNotify({ message: ' ', notes: [] }), undefined);
    assert.equal(parseNotify('Weather changed'), undefined);
    assert.equal(parseNotify({ message: 'x', notes: [{ uri: noteUri, outcome: 'exploded', runId: '' }] })?.notes[0]?.outcome, 'unchanged');
  });

  it('one changed note elsewhere: Open and Show diff', () => {
    const v = notifyView({ message: 'Weather changed: 3 lines added', digest: false, notes: [note()] }, 'file:///other.md');
    assert.deepEqual(v, { severity: 'info', text: 'livenote: Weather changed: 3 lines added', buttons: ['Open', 'Show diff'] });
  });

  it('the note in the active editor gets no buttons', () => {
    const v = notifyView({ message: 'Weather changed', digest: false, notes: [note()] }, noteUri);
    assert.deepEqual(v.buttons, []);
  });

  it('a failure is a warning with Open only (no diff of a failed run)', () => {
    const v = notifyView({ message: 'Weather failed: no key', digest: false, notes: [note({ outcome: 'failed', runId: 'r1' })] }, undefined);
    assert.deepEqual(v, { severity: 'warning', text: 'livenote: Weather failed: no key', buttons: ['Open'] });
  });

  it('a digest offers Show; a failure among its notes makes it a warning', () => {
    const notes = [note(), note({ uri: 'file:///b.md', outcome: 'failed' })];
    assert.deepEqual(notifyView({ message: '2 notes changed', digest: true, notes }, undefined), {
      severity: 'warning',
      text: 'livenote: 2 notes changed',
      buttons: ['Show'],
    });
    assert.deepEqual(notifyView({ message: '1 note changed', digest: true, notes: [note()] }, noteUri).buttons, ['Show']);
  });
});

describe('@livenote prompts', () => {
  it('takes the first referenced markdown file (or location in one)', () => {
    const md = Uri.file('/w/a.md');
    assert.equal(referencedNote([{ value: 'text' }, { value: Uri.file('/w/code.rs') }, { value: md }]), md);
    assert.equal(referencedNote([{ value: { uri: md, range: {} } }]), md);
    assert.equal(referencedNote([{ value: Uri.parse('https://example.com/a.md') }]), undefined);
    assert.equal(referencedNote([]), undefined);
  });

  it('the sentence leaves out the references written in the prompt', () => {
    const prompt = 'keep #file:a.md an eye on the pollen count too';
    assert.equal(chatSentence(prompt, [{ range: [5, 15], value: null }]), 'keep an eye on the pollen count too');
    assert.equal(chatSentence('  why did it not run?  ', []), 'why did it not run?');
  });
});

describe('the MCP list entry', () => {
  it('one folder: "livenote", `livenote mcp FOLDER` in the folder; several: named by folder', () => {
    assert.deepEqual(mcpLaunches('/ext/server/livenote', [{ name: 'notes', fsPath: '/home/u/notes' }]), [
      { label: 'livenote', command: '/ext/server/livenote', args: ['mcp', '/home/u/notes'], cwd: '/home/u/notes' },
    ]);
    assert.deepEqual(
      mcpLaunches('livenote', [
        { name: 'a', fsPath: '/a' },
        { name: 'b', fsPath: '/b' },
      ]).map((l) => l.label),
      ['livenote: a', 'livenote: b'],
    );
  });
});

/** A client that answers `livenote.ask` from `reply` and records every command sent. */
function recordingClient(reply: (args: unknown[]) => unknown): LivenoteClient & { sent: { command: string; args: unknown[] }[]; binary: string | undefined; ready: EventEmitter<void> } {
  const sent: { command: string; args: unknown[] }[] = [];
  const ready = new EventEmitter<void>();
  const client = {
    sent,
    binary: '/opt/livenote/server/livenote' as string | undefined,
    ready,
    output: { appendLine: () => undefined } as unknown as LivenoteClient['output'],
    statusBar: { refreshSoon: () => undefined } as unknown as LivenoteClient['statusBar'],
    onNotesChanged: new EventEmitter<string[]>().event as unknown as LivenoteClient['onNotesChanged'],
    onServerReady: ready.event as unknown as LivenoteClient['onServerReady'],
    log: () => undefined,
    restart: () => Promise.resolve(),
    showServerMissing: () => Promise.resolve(),
    serverBinary: () => client.binary,
    uriArg: (uri: { toString(): string }) => uri.toString(),
    ensureRunning: () => true,
    sendTyped: () => Promise.reject(new Error('not in this test')),
    request: () => Promise.reject(new Error('not in this test')),
    sendCommand: (command: string, args: unknown[]) => {
      sent.push({ command, args });
      return Promise.resolve().then(() => reply(args));
    },
  };
  return client;
}

describe('the glue in a fake VS Code', () => {
  let fake: FakeVscode;
  let ask: typeof AskModule;
  let notify: typeof NotifyModule;
  let chat: typeof ChatModule;
  let mcp: typeof McpModule;
  let commands: typeof CommandsModule;

  before(async () => {
    fake = createFakeVscode(root);
    // The compiled imports copy the module's keys once (TypeScript's __importStar): the keys
    // of the newer APIs exist from the start, each test sets what they hold.
    const v = fake.vscode as unknown as Record<string, unknown>;
    v.lm = {};
    v.chat = {};
    v.McpStdioServerDefinition = undefined;
    installFakeVscode(fake);
    ask = await import('../src/ask');
    notify = await import('../src/notify');
    chat = await import('../src/chat');
    mcp = await import('../src/mcp');
    commands = await import('../src/commands');
  });

  const reset = () => {
    fake.messages.length = 0;
    fake.executed.length = 0;
    fake.state.inputBoxAnswer = undefined;
    fake.state.messageAnswer = undefined;
  };

  it("the light bulb's one-argument livenote.ask asks for the sentence, then sends [uri, sentence] and shows the reply", async () => {
    reset();
    fake.state.inputBoxAnswer = '  keep an eye on the pollen count too ';
    const sent: unknown[][] = [];
    const result = await ask.askFromCommand([noteUri], (args) => {
      sent.push(args);
      return Promise.resolve({ reply: 'Extended the objective with the pollen count.', changed: true, actions: ['extend_objective'], noModel: false });
    }, () => undefined);
    assert.deepEqual(sent, [[noteUri, 'keep an eye on the pollen count too']]);
    assert.equal(result?.changed, true);
    assert.deepEqual(fake.messages, [{ severity: 'info', text: 'livenote: Extended the objective with the pollen count.', items: [] }]);
  });

  it('with a sentence it does not prompt; a cancelled prompt sends nothing', async () => {
    reset();
    const sent: unknown[][] = [];
    const send = (args: unknown[]) => {
      sent.push(args);
      return Promise.resolve({ reply: 'It ran at 07:00 and failed: no key.', changed: false, actions: [], noModel: false });
    };
    fake.state.inputBoxAnswer = 'must not be used';
    await ask.askFromCommand([noteUri, 'why did it not run this morning?'], send, () => undefined);
    fake.state.inputBoxAnswer = undefined;
    assert.equal(await ask.askFromCommand([noteUri], send, () => undefined), undefined);
    fake.state.inputBoxAnswer = '   ';
    assert.equal(await ask.askFromCommand([noteUri], send, () => undefined), undefined);
    assert.deepEqual(sent, [[noteUri, 'why did it not run this morning?']]);
  });

  it('no model: the reply is a warning; a failure is an error message', async () => {
    reset();
    await ask.ask(() => Promise.resolve({ reply: 'No model is configured: set [agent] provider.', changed: false, actions: [], noModel: true }), noteUri, 'pause it', () => undefined);
    await ask.ask(() => Promise.reject(new Error('the model failed: 500')), noteUri, 'pause it', () => undefined);
    assert.deepEqual(
      fake.messages.map((m) => [m.severity, m.text]),
      [
        ['warning', 'livenote: No model is configured: set [agent] provider.'],
        ['error', 'livenote: Ask failed: the model failed: 500'],
      ],
    );
  });

  it('"Ask livenote…" from the palette asks about the active note', async () => {
    reset();
    const client = recordingClient(() => ({ reply: 'Paused.', changed: true, actions: ['set_active'], noModel: false }));
    const disposables = commands.registerCommands(client);
    try {
      const doc = new FakeDocument(Uri.file(noteFile), 'markdown', '# Weather\n');
      fake.open(doc);
      fake.state.inputBoxAnswer = 'pause it until Monday';
      await fake.vscode.commands.executeCommand(UiCommand.ask);
      assert.deepEqual(client.sent, [{ command: ServerCommand.ask, args: [doc.uri.toString(), 'pause it until Monday'] }]);
      assert.deepEqual(fake.messages, [{ severity: 'info', text: 'livenote: Paused.', items: [] }]);
    } finally {
      disposables.forEach((d) => void d.dispose());
    }
  });

  it('a notification for another note: Show diff opens the run\'s diff through the Runs view\'s command', async () => {
    reset();
    const client = recordingClient(() => undefined);
    fake.state.activeEditor = undefined;
    fake.state.messageAnswer = () => 'Show diff';
    await notify.showNotify(client, { message: 'Weather changed: 3 lines added', digest: false, notes: [note()] });
    assert.deepEqual(fake.messages, [{ severity: 'info', text: 'livenote: Weather changed: 3 lines added', items: ['Open', 'Show diff'] }]);
    const diff = fake.executed.find((e) => e.command === UiCommand.openRunDiff);
    assert.ok(diff, JSON.stringify(fake.executed));
    const uri = diff.args[0] as Uri;
    assert.equal(uri.scheme, 'livenote-run');
    assert.match(uri.query, /run=20261207T050000Z-1/);
  });

  it('Open opens the note; a digest\'s Show focuses the Live notes view; a failure is a warning', async () => {
    reset();
    const client = recordingClient(() => undefined);
    fake.state.messageAnswer = () => 'Open';
    await notify.showNotify(client, { message: 'Weather failed: no key', digest: false, notes: [note({ outcome: 'failed' })] });
    assert.deepEqual(fake.messages.at(-1), { severity: 'warning', text: 'livenote: Weather failed: no key', items: ['Open'] });
    assert.ok(fake.executed.some((e) => e.command === 'window.showTextDocument' && e.args[0] === noteFile), JSON.stringify(fake.executed));
    fake.state.messageAnswer = () => 'Show';
    await notify.showNotify(client, { message: '5 notes changed', digest: true, notes: [note(), note({ uri: 'file:///b.md' })] });
    assert.deepEqual(fake.messages.at(-1)?.items, ['Show']);
    assert.ok(fake.executed.some((e) => e.command === 'livenote.notes.focus'));
  });

  it('registers the MCP server definition where the API exists, none in an untrusted workspace', () => {
    const registered: { id: string; provider: { provideMcpServerDefinitions(t: unknown): unknown[]; onDidChangeMcpServerDefinitions?: unknown } }[] = [];
    class McpStdioServerDefinition {
      cwd: Uri | undefined;
      constructor(
        readonly label: string,
        readonly command: string,
        readonly args?: string[],
      ) {}
    }
    const v = fake.vscode as unknown as Record<string, unknown>;
    v.lm = {
      registerMcpServerDefinitionProvider: (id: string, provider: (typeof registered)[number]['provider']) => {
        registered.push({ id, provider });
        return { dispose: () => undefined };
      },
    };
    v.McpStdioServerDefinition = McpStdioServerDefinition;
    const client = recordingClient(() => undefined);
    try {
      const disposables = mcp.registerMcp(client);
      assert.equal(registered.length, 1);
      // The id package.json contributes (manifest.test.ts).
      assert.equal(registered[0]?.id, 'livenote.mcp');
      const defs = registered[0]?.provider.provideMcpServerDefinitions({}) as McpStdioServerDefinition[];
      assert.equal(defs.length, 1);
      assert.deepEqual({ ...defs[0], cwd: defs[0]?.cwd?.fsPath }, { label: 'livenote', command: '/opt/livenote/server/livenote', args: ['mcp', path.resolve(root)], cwd: path.resolve(root) });
      fake.state.trusted = false;
      assert.deepEqual(registered[0]?.provider.provideMcpServerDefinitions({}), []);
      fake.state.trusted = true;
      client.binary = undefined;
      assert.deepEqual(registered[0]?.provider.provideMcpServerDefinitions({}), []);
      disposables.forEach((d) => void d.dispose());
    } finally {
      v.lm = {};
      v.McpStdioServerDefinition = undefined;
    }
  });

  it('an older VS Code (no MCP API, no chat API) registers neither, and says so in the log', () => {
    const v = fake.vscode as unknown as Record<string, unknown>;
    v.lm = {};
    v.chat = {};
    const logged: string[] = [];
    const client = recordingClient(() => undefined);
    client.log = (m: string) => void logged.push(m);
    try {
      assert.deepEqual(mcp.registerMcp(client), []);
      assert.deepEqual(chat.registerChat(client), []);
      assert.equal(logged.length, 2, logged.join('\n'));
    } finally {
      v.lm = {};
      v.chat = {};
    }
  });

  it('@livenote sends the sentence for the referenced note (else the active one) and writes the reply', async () => {
    const participants: { id: string; handler: vscodeTypes.ChatRequestHandler }[] = [];
    const v = fake.vscode as unknown as Record<string, unknown>;
    v.chat = {
      createChatParticipant: (id: string, handler: vscodeTypes.ChatRequestHandler) => {
        participants.push({ id, handler });
        return { id, dispose: () => undefined };
      },
    };
    const client = recordingClient(() => ({ reply: 'Now every weekday at nine.', changed: true, actions: ['set_triggers'], noModel: false }));
    const written: string[] = [];
    const stream = { markdown: (s: string) => void written.push(s), progress: () => undefined };
    const call = (prompt: string, references: unknown[]) =>
      participants[0]?.handler({ prompt, references, command: undefined } as unknown as vscodeTypes.ChatRequest, { history: [] }, stream as unknown as vscodeTypes.ChatResponseStream, {} as vscodeTypes.CancellationToken);
    try {
      chat.registerChat(client);
      assert.deepEqual(participants.map((p) => p.id), ['livenote.chat']);
      const other = Uri.file(path.join(root, 'other.md'));
      await call('#file:other.md every weekday at nine', [{ id: 'file', range: [0, 14], value: other }]);
      assert.deepEqual(client.sent, [{ command: ServerCommand.ask, args: [other.toString(), 'every weekday at nine'] }]);
      assert.deepEqual(written, ['Now every weekday at nine.\n\n*livenote: set_triggers*']);
      fake.open(new FakeDocument(Uri.file(noteFile), 'markdown', '# Weather\n'));
      await call('why did it not run?', []);
      assert.deepEqual(client.sent[1], { command: ServerCommand.ask, args: [Uri.file(noteFile).toString(), 'why did it not run?'] });
      fake.state.activeEditor = undefined;
      written.length = 0;
      await call('pause it', []);
      assert.equal(client.sent.length, 2);
      assert.match(written[0] ?? '', /Open a markdown note/);
    } finally {
      v.chat = {};
    }
  });
});
