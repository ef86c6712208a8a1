// A small stand-in for the `vscode` module, enough for the extension and vscode-languageclient
// to activate, sync documents, apply the server's edits and run commands under plain Node.
// VS Code itself cannot run here; this lets the extension-host test drive the real extension
// code against the real server. Anything not modelled is a harmless stub (see `stub`).

import Module from 'node:module';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Listener<T> = (e: T) => unknown;
/** VS Code's Event: listeners are often methods, passed with their `this`. */
export type Event<T> = (
  listener: Listener<T>,
  thisArgs?: unknown,
  disposables?: { dispose(): void }[],
) => { dispose(): void };

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  readonly event: Event<T> = (listener, thisArgs, disposables) => {
    const bound: Listener<T> = (e) => listener.call(thisArgs, e);
    this.listeners.add(bound);
    const disposable = { dispose: () => void this.listeners.delete(bound) };
    disposables?.push(disposable);
    return disposable;
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) {
      l(e);
    }
  }
  dispose(): void {
    this.listeners.clear();
  }
}

const noopEvent: Event<unknown> = () => ({ dispose: () => undefined });

/**
 * Any value: callable, constructible, every property another stub, events that never fire,
 * and not a thenable (so `await` on it does not hang).
 */
export function stub(name = 'stub'): unknown {
  const target = function () {
    /* stub */
  };
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === 'then' || prop === Symbol.toPrimitive || prop === Symbol.iterator) {
        return undefined;
      }
      if (prop === 'dispose') {
        return () => undefined;
      }
      if (prop === 'toString') {
        return () => name;
      }
      if (typeof prop === 'string' && /^on[A-Z]/.test(prop)) {
        return noopEvent;
      }
      return stub(`${name}.${String(prop)}`);
    },
    apply() {
      return stub(`${name}()`);
    },
    construct() {
      return stub(`new ${name}`) as object;
    },
  });
}

/** A namespace whose listed members are real and the rest stubs. */
function namespace<T extends object>(name: string, members: T): T {
  return new Proxy(members, {
    get(t, prop) {
      if (prop in t) {
        return (t as Record<string | symbol, unknown>)[prop];
      }
      if (prop === 'then') {
        return undefined;
      }
      if (typeof prop === 'string' && /^on[A-Z]/.test(prop)) {
        return noopEvent;
      }
      return stub(`${name}.${String(prop)}`);
    },
  });
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    if (value.startsWith('file:')) {
      return Uri.file(fileURLToPath(value));
    }
    const colon = value.indexOf(':');
    return new Uri(value.slice(0, colon), '', decodeURIComponent(value.slice(colon + 1)), '', '');
  }
  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? '', c.path ?? '', c.query ?? '', c.fragment ?? '');
  }
  static file(fsPath: string): Uri {
    return new Uri('file', '', path.resolve(fsPath), '', '');
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, base.authority, path.posix.join(base.path, ...segments), '', '');
  }
  get fsPath(): string {
    return this.path;
  }
  with(change: { scheme?: string; path?: string }): Uri {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path, this.query, this.fragment);
  }
  toString(): string {
    if (this.scheme === 'file') {
      return pathToFileURL(this.path).href;
    }
    return `${this.scheme}:${this.path}${this.query ? `?${this.query}` : ''}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === 'number' && typeof b === 'number') {
      this.start = new Position(a, b);
      this.end = new Position(c ?? a, d ?? b);
    } else {
      this.start = a as Position;
      this.end = b as Position;
    }
  }
}

export class TextEdit {
  constructor(
    readonly range: Range,
    readonly newText: string,
  ) {}
}

export class WorkspaceEdit {
  private readonly map = new Map<string, { uri: Uri; edits: TextEdit[] }>();
  private entry(uri: Uri): TextEdit[] {
    const key = uri.toString();
    let e = this.map.get(key);
    if (!e) {
      e = { uri, edits: [] };
      this.map.set(key, e);
    }
    return e.edits;
  }
  replace(uri: Uri, range: Range, newText: string): void {
    this.entry(uri).push(new TextEdit(range, newText));
  }
  insert(uri: Uri, position: Position, newText: string): void {
    this.replace(uri, new Range(position, position), newText);
  }
  delete(uri: Uri, range: Range): void {
    this.replace(uri, range, '');
  }
  set(uri: Uri, edits: TextEdit[]): void {
    this.entry(uri).push(...edits);
  }
  entries(): [Uri, TextEdit[]][] {
    return [...this.map.values()].map((e) => [e.uri, e.edits]);
  }
  get size(): number {
    return this.map.size;
  }
}

export class FakeDocument {
  version = 1;
  isClosed = false;
  isDirty = false;
  constructor(
    readonly uri: Uri,
    readonly languageId: string,
    public text: string,
  ) {}
  get fileName(): string {
    return this.uri.fsPath;
  }
  get isUntitled(): boolean {
    return this.uri.scheme === 'untitled';
  }
  get lineCount(): number {
    return this.text.split('\n').length;
  }
  getText(): string {
    return this.text;
  }
  offsetAt(p: Position): number {
    const lines = this.text.split('\n');
    let offset = 0;
    for (let i = 0; i < p.line && i < lines.length; i++) {
      offset += (lines[i]?.length ?? 0) + 1;
    }
    return Math.min(offset + p.character, this.text.length);
  }
  positionAt(offset: number): Position {
    const before = this.text.slice(0, offset).split('\n');
    return new Position(before.length - 1, before[before.length - 1]?.length ?? 0);
  }
  save(): Promise<boolean> {
    return Promise.resolve(true);
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class ThemeIcon {
  static readonly Folder = new ThemeIcon('folder');
  constructor(readonly id: string) {}
}

export const TreeItemCollapsibleState = { None: 0, Collapsed: 1, Expanded: 2 } as const;

export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: unknown;
  iconPath?: unknown;
  contextValue?: string;
  resourceUri?: Uri;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(
    readonly label: string,
    readonly collapsibleState: number = TreeItemCollapsibleState.None,
  ) {}
}

/** What `window.createTreeView` made: the provider the test reads, and what the view shows. */
export interface FakeTreeView {
  id: string;
  treeDataProvider: {
    getChildren(node?: unknown): unknown[] | Promise<unknown[]>;
    getTreeItem(node: unknown): TreeItem | Promise<TreeItem>;
    onDidChangeTreeData?: Event<unknown>;
  };
  message: string | undefined;
  description: string | undefined;
  /** How many times the provider said its data changed. */
  changes: number;
}

export class MarkdownString {
  constructor(public value = '') {}
  appendText(t: string): this {
    this.value += t;
    return this;
  }
  appendMarkdown(t: string): this {
    this.value += t;
    return this;
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export interface FakeStatusBarItem {
  id: string;
  text: string;
  tooltip: unknown;
  command: unknown;
  backgroundColor: ThemeColor | undefined;
  name: string;
  visible: boolean;
}

export interface Message {
  severity: 'error' | 'warning' | 'info';
  text: string;
  items: string[];
}

interface Inspect {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The fake and the handles a test uses to drive it. */
export function createFakeVscode(workspaceRoot: string) {
  const documents: FakeDocument[] = [];
  const commands = new Map<string, (...args: unknown[]) => unknown>();
  const executed: { command: string; args: unknown[] }[] = [];
  const messages: Message[] = [];
  const statusItems: FakeStatusBarItem[] = [];
  const output: string[] = [];
  const settings = new Map<string, Inspect>();
  const onDidOpen = new EventEmitter<FakeDocument>();
  const onDidChange = new EventEmitter<unknown>();
  const onDidSave = new EventEmitter<FakeDocument>();
  const onDidClose = new EventEmitter<FakeDocument>();
  const onDidChangeConfiguration = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();
  const onDidGrantWorkspaceTrust = new EventEmitter<void>();
  const onDidChangeActiveTextEditor = new EventEmitter<unknown>();
  const trees = new Map<string, FakeTreeView>();
  const contentProviders = new Map<string, { provideTextDocumentContent(uri: Uri): unknown }>();
  const folder = { uri: Uri.file(workspaceRoot), name: path.basename(workspaceRoot), index: 0 };
  const state = {
    trusted: true,
    activeEditor: undefined as { document: FakeDocument } | undefined,
    quickPickAnswer: undefined as ((items: unknown[]) => unknown) | undefined,
    inputBoxAnswer: undefined as string | undefined,
    /** The button a message with buttons (a modal question) is answered with. */
    messageAnswer: undefined as ((text: string, items: string[]) => string | undefined) | undefined,
  };

  const showMessage =
    (severity: Message['severity']) =>
    (text: string, ...items: unknown[]): Promise<string | undefined> => {
      const buttons = items.filter((i): i is string => typeof i === 'string');
      messages.push({ severity, text, items: buttons });
      return Promise.resolve(buttons.length > 0 ? state.messageAnswer?.(text, buttons) : undefined);
    };

  const configuration = (section?: string) => {
    const full = (key: string) => (section ? `${section}.${key}` : key);
    const value = (key: string): unknown => {
      const i = settings.get(full(key));
      return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
    };
    return {
      get: (key: string, fallback?: unknown) => value(key) ?? fallback,
      has: (key: string) => value(key) !== undefined,
      inspect: (key: string) => ({ key: full(key), ...settings.get(full(key)) }),
      update: () => Promise.resolve(),
    };
  };

  const matches = (selector: unknown, doc: FakeDocument): number => {
    const filters = Array.isArray(selector) ? (selector as unknown[]) : [selector];
    for (const f of filters) {
      if (typeof f === 'string' && f === doc.languageId) {
        return 10;
      }
      if (typeof f === 'object' && f !== null) {
        const filter = f as { language?: string; scheme?: string };
        if ((!filter.language || filter.language === doc.languageId) && (!filter.scheme || filter.scheme === doc.uri.scheme)) {
          return 10;
        }
      }
    }
    return 0;
  };

  const applyEdit = (edit: WorkspaceEdit): Promise<boolean> => {
    for (const [uri, edits] of edit.entries()) {
      const doc = documents.find((d) => d.uri.toString() === uri.toString());
      if (!doc) {
        return Promise.resolve(false);
      }
      const old = doc.text;
      const resolved = edits
        .map((e) => ({ start: doc.offsetAt(e.range.start), end: doc.offsetAt(e.range.end), text: e.newText }))
        .sort((a, b) => b.start - a.start);
      let text = old;
      for (const e of resolved) {
        text = text.slice(0, e.start) + e.text + text.slice(e.end);
      }
      const fullRange = new Range(new Position(0, 0), doc.positionAt(old.length));
      doc.text = text;
      doc.version++;
      doc.isDirty = true;
      onDidChange.fire({
        document: doc,
        contentChanges: [{ range: fullRange, rangeOffset: 0, rangeLength: old.length, text }],
        reason: undefined,
      });
    }
    return Promise.resolve(true);
  };

  const vscode = {
    version: '1.90.0',
    Disposable,
    EventEmitter,
    Uri,
    Position,
    Range,
    TextEdit,
    WorkspaceEdit,
    ThemeColor,
    ThemeIcon,
    TreeItem,
    TreeItemCollapsibleState,
    MarkdownString,
    CancellationTokenSource,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
    UIKind: { Desktop: 1, Web: 2 },
    env: namespace('env', {
      appName: 'Fake Code',
      appRoot: workspaceRoot,
      language: 'en',
      machineId: 'fake',
      sessionId: 'fake',
      uriScheme: 'vscode',
      uiKind: 1,
      clipboard: { writeText: () => Promise.resolve(), readText: () => Promise.resolve('') },
      openExternal: () => Promise.resolve(true),
    }),
    extensions: namespace('extensions', { all: [], getExtension: () => undefined }),
    commands: namespace('commands', {
      registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
        // VS Code refuses a second registration; the extension must not collide with the
        // commands vscode-languageclient registers for the server.
        if (commands.has(id)) {
          throw new Error(`command '${id}' already exists`);
        }
        commands.set(id, fn);
        return new Disposable(() => commands.delete(id));
      },
      executeCommand(id: string, ...args: unknown[]) {
        executed.push({ command: id, args });
        const fn = commands.get(id);
        return Promise.resolve(fn ? fn(...args) : undefined);
      },
      getCommands: () => Promise.resolve([...commands.keys()]),
    }),
    window: namespace('window', {
      get activeTextEditor() {
        return state.activeEditor;
      },
      get visibleTextEditors() {
        return state.activeEditor ? [state.activeEditor] : [];
      },
      state: { focused: true },
      tabGroups: { all: [], onDidChangeTabs: noopEvent, onDidChangeTabGroups: noopEvent },
      onDidChangeActiveTextEditor: onDidChangeActiveTextEditor.event,
      createOutputChannel: (name: string) => ({
        name,
        append: (s: string) => output.push(s),
        appendLine: (s: string) => output.push(s),
        replace: () => undefined,
        clear: () => undefined,
        show: () => undefined,
        hide: () => undefined,
        dispose: () => undefined,
      }),
      createTreeView(id: string, options: { treeDataProvider: FakeTreeView['treeDataProvider'] }) {
        const view: FakeTreeView = { id, treeDataProvider: options.treeDataProvider, message: undefined, description: undefined, changes: 0 };
        const listening = options.treeDataProvider.onDidChangeTreeData?.(() => {
          view.changes++;
        });
        trees.set(id, view);
        return Object.assign(view, {
          dispose: () => listening?.dispose(),
          reveal: () => Promise.resolve(),
          onDidChangeVisibility: noopEvent,
          onDidChangeSelection: noopEvent,
          onDidExpandElement: noopEvent,
          onDidCollapseElement: noopEvent,
        });
      },
      registerTreeDataProvider: () => new Disposable(),
      createStatusBarItem(id: string) {
        const item: FakeStatusBarItem & { show(): void; hide(): void; dispose(): void } = {
          id,
          text: '',
          tooltip: undefined,
          command: undefined,
          backgroundColor: undefined,
          name: '',
          visible: false,
          show() {
            item.visible = true;
          },
          hide() {
            item.visible = false;
          },
          dispose() {
            item.visible = false;
          },
        };
        statusItems.push(item);
        return item;
      },
      showErrorMessage: showMessage('error'),
      showWarningMessage: showMessage('warning'),
      showInformationMessage: showMessage('info'),
      showQuickPick: (items: unknown[] | Promise<unknown[]>) =>
        Promise.resolve(items).then((list) => state.quickPickAnswer?.(list)),
      showInputBox: () => Promise.resolve(state.inputBoxAnswer),
      showTextDocument: (uri: Uri) => {
        executed.push({ command: 'window.showTextDocument', args: [uri.fsPath] });
        return Promise.resolve(undefined);
      },
      withProgress: (_options: unknown, task: (progress: unknown, token: unknown) => unknown) =>
        Promise.resolve(task({ report: () => undefined }, new CancellationTokenSource().token)),
    }),
    workspace: namespace('workspace', {
      get isTrusted() {
        return state.trusted;
      },
      workspaceFolders: [folder],
      get textDocuments() {
        return documents.filter((d) => !d.isClosed);
      },
      notebookDocuments: [],
      getWorkspaceFolder: () => folder,
      getConfiguration: configuration,
      onDidOpenTextDocument: onDidOpen.event,
      onDidChangeTextDocument: onDidChange.event,
      onDidSaveTextDocument: onDidSave.event,
      onDidCloseTextDocument: onDidClose.event,
      onDidChangeConfiguration: onDidChangeConfiguration.event,
      onDidGrantWorkspaceTrust: onDidGrantWorkspaceTrust.event,
      applyEdit,
      createFileSystemWatcher: () => stub('FileSystemWatcher'),
      asRelativePath: (p: Uri | string) => path.relative(workspaceRoot, typeof p === 'string' ? p : p.fsPath),
      registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(uri: Uri): unknown }) {
        contentProviders.set(scheme, provider);
        return new Disposable(() => contentProviders.delete(scheme));
      },
    }),
    languages: namespace('languages', {
      match: matches,
      createDiagnosticCollection: () => {
        const map = new Map<string, unknown>();
        return {
          name: 'livenote',
          set: (uri: Uri, d: unknown) => map.set(uri.toString(), d),
          delete: (uri: Uri) => map.delete(uri.toString()),
          clear: () => map.clear(),
          get: (uri: Uri) => map.get(uri.toString()),
          has: (uri: Uri) => map.has(uri.toString()),
          forEach: () => undefined,
          dispose: () => map.clear(),
        };
      },
    }),
  };

  const fake = new Proxy(vscode, {
    get(t, prop) {
      if (prop in t) {
        return (t as Record<string | symbol, unknown>)[prop];
      }
      if (prop === 'then' || prop === '__esModule' || prop === 'default') {
        return undefined;
      }
      return stub(`vscode.${String(prop)}`);
    },
  });

  return {
    vscode: fake,
    documents,
    commands,
    executed,
    messages,
    statusItems,
    trees,
    contentProviders,
    output,
    settings,
    state,
    /** Open a document and make it the active editor, firing what VS Code fires. */
    open(doc: FakeDocument): void {
      documents.push(doc);
      onDidOpen.fire(doc);
      state.activeEditor = { document: doc };
      onDidChangeActiveTextEditor.fire(state.activeEditor);
    },
    save(doc: FakeDocument, fs: { writeFileSync(p: string, t: string): void }): void {
      fs.writeFileSync(doc.uri.fsPath, doc.text);
      doc.isDirty = false;
      onDidSave.fire(doc);
    },
    changeSettings(entries: Record<string, Inspect>): void {
      for (const [k, v] of Object.entries(entries)) {
        settings.set(k, v);
      }
      const keys = Object.keys(entries);
      onDidChangeConfiguration.fire({
        affectsConfiguration: (section: string) => keys.some((k) => k === section || k.startsWith(`${section}.`)),
      });
    },
    grantTrust(): void {
      state.trusted = true;
      onDidGrantWorkspaceTrust.fire();
    },
  };
}

export type FakeVscode = ReturnType<typeof createFakeVscode>;

/** From now on, `require('vscode')` anywhere in this process (the extension, bundled or not) gets the fake. */
export function installFakeVscode(fake: FakeVscode): void {
  const loader = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };
  const load = loader._load;
  loader._load = function (request, parent, isMain) {
    return request === 'vscode' ? fake.vscode : load.call(this, request, parent, isMain);
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Poll `pred` until it holds; on timeout fail with `what` and `detail()`. */
export async function waitFor(what: string, pred: () => boolean, detail: () => string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}\n${detail()}`);
    }
    await sleep(50);
  }
}
