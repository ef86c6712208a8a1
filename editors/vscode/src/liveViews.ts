// The Explorer's "Live notes" view (every live note by folder, with Run now / Stop / Pause /
// Resume inline) and "Runs" view (the active note's runs; selecting one opens VS Code's diff
// editor on the body before and after it, from `livenote-run:` documents; Restore and Undo).
// Both refresh on the server's `livenote/notesChanged`, never on a timer.

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { ask } from './ask';
import type { LivenoteClient } from './client';
import { errorMessage } from './errors';
import { noteCandidates } from './notes';
import { ServerCommand, ServerRequest, UiCommand, parseHistory, parseListNotes, parseRunDiff, type RunDiff } from './protocol';
import { isNoteDocument } from './statusBar';
import { RUN_SCHEME, noteTree, parseRunSide, runRow, runSideQuery, type FolderRow, type NoteRow, type RunRow } from './viewModel';

export const NOTES_VIEW = 'livenote.notes';
export const RUNS_VIEW = 'livenote.runs';

type NotesNode = NoteRow | FolderRow;

/** The file of a listed note: the server's path is relative to the root that holds it. */
function noteFile(notePath: string): vscode.Uri | undefined {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const file = noteCandidates(notePath, folders).find((candidate) => fs.existsSync(candidate));
  return file === undefined ? undefined : vscode.Uri.file(file);
}

export class LiveNotesProvider implements vscode.TreeDataProvider<NotesNode> {
  private readonly changed = new vscode.EventEmitter<NotesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private rows: NotesNode[] = [];
  /** Set while no answer came yet, or the last request failed: shown as the view's message. */
  message: string | undefined;

  constructor(private readonly ln: LivenoteClient) {}

  /** Ask the server for the list again and redraw. */
  async refresh(): Promise<void> {
    try {
      const raw = await this.ln.sendTyped(ServerRequest.listNotes, undefined, ServerCommand.listNotes, []);
      this.rows = noteTree(parseListNotes(raw), new Date());
      this.message = this.rows.length === 0 ? 'No live notes in this workspace yet.' : undefined;
    } catch (e) {
      this.message = `Cannot list the live notes: ${errorMessage(e)}`;
    }
    this.changed.fire(undefined);
  }

  /** The rows shown now (tests, the real-VS Code check). */
  shown(): NotesNode[] {
    return this.rows;
  }

  getChildren(node?: NotesNode): NotesNode[] {
    if (node === undefined) {
      return this.rows;
    }
    return node.kind === 'folder' ? node.notes : [];
  }

  getTreeItem(node: NotesNode): vscode.TreeItem {
    if (node.kind === 'folder') {
      const item = new vscode.TreeItem(node.folder, vscode.TreeItemCollapsibleState.Expanded);
      item.iconPath = vscode.ThemeIcon.Folder;
      item.contextValue = 'folder';
      item.id = `folder:${node.folder}`;
      return item;
    }
    const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
    item.id = `note:${node.item.path}`;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.iconPath = new vscode.ThemeIcon(node.icon);
    item.contextValue = node.contextValue;
    const file = noteFile(node.item.path);
    if (file) {
      item.resourceUri = file;
      item.command = { command: UiCommand.viewOpen, title: 'Open', arguments: [node] };
    }
    return item;
  }
}

export class RunsProvider implements vscode.TreeDataProvider<RunRow> {
  private readonly changed = new vscode.EventEmitter<RunRow | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private rows: RunRow[] = [];
  /** The note whose runs are shown (a file URI), kept while a non-note editor is active. */
  note: vscode.Uri | undefined;
  message: string | undefined = 'Open a live note to see its runs.';

  constructor(private readonly ln: LivenoteClient) {}

  /** Follow the active editor: a markdown file becomes the note shown. */
  follow(document: vscode.TextDocument | undefined): boolean {
    if (!isNoteDocument(document) || document.uri.scheme !== 'file') {
      return false;
    }
    if (this.note?.toString() === document.uri.toString()) {
      return false;
    }
    this.note = document.uri;
    return true;
  }

  async refresh(): Promise<void> {
    const note = this.note;
    if (!note) {
      this.rows = [];
      this.changed.fire(undefined);
      return;
    }
    try {
      const raw = await this.ln.request(ServerRequest.noteHistory, { uri: this.ln.uriArg(note) });
      const now = new Date();
      this.rows = parseHistory(raw).map((r) => runRow(r, now));
      this.message = this.rows.length === 0 ? 'This note has no runs yet.' : undefined;
    } catch (e) {
      this.rows = [];
      this.message = `Cannot list the runs: ${errorMessage(e)}`;
    }
    this.changed.fire(undefined);
  }

  shown(): RunRow[] {
    return this.rows;
  }

  getChildren(node?: RunRow): RunRow[] {
    return node === undefined ? this.rows : [];
  }

  getTreeItem(row: RunRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = `run:${row.run.id}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = new vscode.ThemeIcon(row.icon);
    item.contextValue = row.contextValue;
    if (row.contextValue.includes('diffable')) {
      item.command = { command: UiCommand.openRunDiff, title: 'Show changes', arguments: [row] };
    }
    return item;
  }
}

/**
 * `livenote-run:/<note path>?note=…&run=…&side=before|after`: one side of a run's diff, asked
 * of the server once per run and kept (a run's kept bodies do not change).
 */
export class RunContentProvider implements vscode.TextDocumentContentProvider {
  private readonly cache = new Map<string, Promise<RunDiff>>();

  constructor(private readonly ln: LivenoteClient) {}

  diff(note: string, run: string): Promise<RunDiff> {
    const key = `${note}\n${run}`;
    let found = this.cache.get(key);
    if (!found) {
      found = this.ln.request(ServerRequest.runDiff, { uri: note, run }).then((raw) => {
        const diff = parseRunDiff(raw);
        if (!diff) {
          throw new Error('the server gave no bodies for this run');
        }
        return diff;
      });
      // A failure is not kept: the next look asks again.
      found.catch(() => this.cache.delete(key));
      this.cache.set(key, found);
    }
    return found;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const side = parseRunSide(uri.query);
    if (!side) {
      return '';
    }
    const diff = await this.diff(side.note, side.run);
    return side.side === 'before' ? diff.before : diff.after;
  }
}

/** The two documents of a run's diff, and the editor's title. */
export function runDiffUris(note: vscode.Uri, noteArg: string, run: string): { before: vscode.Uri; after: vscode.Uri } {
  const side = (s: 'before' | 'after') =>
    vscode.Uri.from({ scheme: RUN_SCHEME, path: note.path, query: runSideQuery({ note: noteArg, run, side: s }) });
  return { before: side('before'), after: side('after') };
}

/** The views, their providers and commands, wired to the server's notifications. */
export function registerViews(ln: LivenoteClient): { disposables: vscode.Disposable[]; notes: LiveNotesProvider; runs: RunsProvider } {
  const notes = new LiveNotesProvider(ln);
  const runs = new RunsProvider(ln);
  const content = new RunContentProvider(ln);
  const notesView = vscode.window.createTreeView(NOTES_VIEW, { treeDataProvider: notes, showCollapseAll: true });
  const runsView = vscode.window.createTreeView(RUNS_VIEW, { treeDataProvider: runs });
  const showMessages = () => {
    notesView.message = notes.message;
    runsView.message = runs.message;
    runsView.description = runs.note ? vscode.workspace.asRelativePath(runs.note) : undefined;
  };
  const refreshNotes = () => notes.refresh().then(showMessages);
  const refreshRuns = () => runs.refresh().then(showMessages);
  runs.follow(vscode.window.activeTextEditor?.document);

  /** The note a command's argument names: a view row, a diff document, else the active note. */
  const noteOf = (arg: unknown): vscode.Uri | undefined => {
    if (isRow(arg) && arg.kind === 'note') {
      return noteFile(arg.item.path);
    }
    if (arg instanceof vscode.Uri && arg.scheme === RUN_SCHEME) {
      const side = parseRunSide(arg.query);
      return side ? vscode.Uri.parse(side.note) : undefined;
    }
    return runs.note;
  };
  const runOf = (arg: unknown): string | undefined => {
    if (isRow(arg) && arg.kind === 'run') {
      return arg.run.id;
    }
    if (arg instanceof vscode.Uri && arg.scheme === RUN_SCHEME) {
      return parseRunSide(arg.query)?.run;
    }
    return undefined;
  };

  const noteCommand = (title: string, command: string, extra: unknown[]) => async (arg: unknown) => {
    const note = noteOf(arg);
    if (!note || !ln.ensureRunning()) {
      return;
    }
    try {
      const result = await ln.sendCommand(command, [ln.uriArg(note), ...extra]);
      if (command === ServerCommand.stop && isStopped(result) === false) {
        void vscode.window.showInformationMessage('livenote: this note is not updating.');
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`livenote: ${title} failed: ${errorMessage(e)}`);
    } finally {
      ln.statusBar.refreshSoon();
    }
  };

  const openRunDiff = async (arg: unknown) => {
    const note = noteOf(arg);
    const run = runOf(arg);
    if (!note || !run || !ln.ensureRunning()) {
      return;
    }
    const noteArg = ln.uriArg(note);
    try {
      // Asked first, so that a run without a recorded result says why instead of an empty diff.
      await content.diff(noteArg, run);
    } catch (e) {
      void vscode.window.showErrorMessage(`livenote: cannot show run ${run}: ${errorMessage(e)}`);
      return;
    }
    const { before, after } = runDiffUris(note, noteArg, run);
    const row = isRow(arg) && arg.kind === 'run' ? arg : undefined;
    const name = vscode.workspace.asRelativePath(note);
    const title = `${name}: run ${row ? row.label : run} (before ↔ after)`;
    await vscode.commands.executeCommand('vscode.diff', before, after, title, { preview: true });
  };

  const restoreRun = async (arg: unknown) => {
    const note = noteOf(arg);
    const run = runOf(arg);
    if (!note || !run || !ln.ensureRunning()) {
      return;
    }
    const choice = await vscode.window.showWarningMessage(
      `livenote: put back the body from before run ${run}? The current body is kept in the note's history.`,
      { modal: true },
      'Restore',
    );
    if (choice !== 'Restore') {
      return;
    }
    try {
      await ln.request(ServerRequest.restoreRun, { uri: ln.uriArg(note), run });
    } catch (e) {
      void vscode.window.showErrorMessage(`livenote: Restore failed: ${errorMessage(e)}`);
    }
  };

  const disposables: vscode.Disposable[] = [
    notesView,
    runsView,
    vscode.workspace.registerTextDocumentContentProvider(RUN_SCHEME, content),
    vscode.commands.registerCommand(UiCommand.viewRun, noteCommand('Run now', ServerCommand.run, [])),
    vscode.commands.registerCommand(UiCommand.viewStop, noteCommand('Stop', ServerCommand.stop, [])),
    vscode.commands.registerCommand(UiCommand.viewPause, noteCommand('Pause', ServerCommand.setActive, [false])),
    vscode.commands.registerCommand(UiCommand.viewResume, noteCommand('Resume', ServerCommand.setActive, [true])),
    vscode.commands.registerCommand(UiCommand.undoFromRuns, noteCommand('Undo last run', ServerCommand.undoLastRun, [])),
    vscode.commands.registerCommand(UiCommand.viewAsk, async (arg: unknown) => {
      const note = noteOf(arg);
      if (!note || !ln.ensureRunning()) {
        return;
      }
      await ask((args) => ln.sendCommand(ServerCommand.ask, args), ln.uriArg(note), undefined, (m) => ln.log(m));
    }),
    vscode.commands.registerCommand(UiCommand.viewOpen, async (arg: unknown) => {
      const note = noteOf(arg);
      if (note) {
        await vscode.window.showTextDocument(note);
      }
    }),
    vscode.commands.registerCommand(UiCommand.refreshViews, () => Promise.all([refreshNotes(), refreshRuns()])),
    vscode.commands.registerCommand(UiCommand.openRunDiff, openRunDiff),
    vscode.commands.registerCommand(UiCommand.restoreRun, restoreRun),
    vscode.window.onDidChangeActiveTextEditor((editor) => {
      if (runs.follow(editor?.document)) {
        void refreshRuns();
      }
    }),
    ln.onNotesChanged((uris) => {
      void refreshNotes();
      const shown = runs.note ? ln.uriArg(runs.note) : undefined;
      if (shown !== undefined && (uris.length === 0 || uris.includes(shown))) {
        void refreshRuns();
      }
    }),
    // Shown again: what changed with time alone (a next fire gone by) is asked for once.
    notesView.onDidChangeVisibility((e) => {
      if (e.visible) {
        void refreshNotes();
      }
    }),
    // A (re)started server: both views ask again.
    ln.onServerReady(() => {
      void refreshNotes();
      void refreshRuns();
    }),
  ];
  return { disposables, notes, runs };
}

function isRow(v: unknown): v is NoteRow | RunRow {
  return typeof v === 'object' && v !== null && 'kind' in v && (v.kind === 'note' || v.kind === 'run');
}

function isStopped(result: unknown): boolean | undefined {
  return typeof result === 'object' && result !== null && 'stopped' in result ? result.stopped === true : undefined;
}
