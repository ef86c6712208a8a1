// The status-bar item for the active editor's note. The server is the source of truth
// (`livenote.noteStatus`); this class only decides when to ask and draws the answer.

import * as vscode from 'vscode';
import { parseNoteStatus, type NoteStatus } from './protocol';
import { noteStatusView, serverStateView, type ServerState, type StatusView } from './status';

/** How the status bar reaches the server; implemented by the controller. */
export interface StatusSource {
  /** The server's state when it cannot answer (not started, missing, stopped); undefined = running. */
  serverProblem(): ServerState | undefined;
  /** `livenote.noteStatus` for a document. */
  noteStatus(document: vscode.TextDocument): Promise<unknown>;
  log(message: string): void;
}

const DEBOUNCE_MS = 300;
/** While a live note is shown: catches scheduler-started runs and ages "5 min ago". */
const POLL_MS = 2000;

export function isNoteDocument(document: vscode.TextDocument | undefined): document is vscode.TextDocument {
  return document !== undefined && document.languageId === 'markdown' && (document.uri.scheme === 'file' || document.uri.scheme === 'untitled');
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private debounce: ReturnType<typeof setTimeout> | undefined;
  private poll: ReturnType<typeof setTimeout> | undefined;
  /** Bumped per request so a slow answer for a previous editor never overwrites a newer one. */
  private generation = 0;
  private lastError: string | undefined;
  private current: NoteStatus | undefined;

  constructor(private readonly source: StatusSource) {
    this.item = vscode.window.createStatusBarItem('livenote.status', vscode.StatusBarAlignment.Left, 100);
    this.item.name = 'livenote';
    this.disposables.push(
      this.item,
      vscode.window.onDidChangeActiveTextEditor(() => void this.refresh()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document === vscode.window.activeTextEditor?.document && e.contentChanges.length > 0) {
          this.refreshSoon();
        }
      }),
      vscode.workspace.onDidSaveTextDocument((d) => {
        if (d === vscode.window.activeTextEditor?.document) {
          this.refreshSoon();
        }
      }),
      vscode.window.onDidChangeWindowState((s) => {
        if (s.focused) {
          void this.refresh();
        }
      }),
    );
  }

  /** The status last shown for the active note, for commands that depend on it. */
  get status(): NoteStatus | undefined {
    return this.current;
  }

  /** Refresh after typing settles. */
  refreshSoon(): void {
    if (this.debounce) {
      clearTimeout(this.debounce);
    }
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      void this.refresh();
    }, DEBOUNCE_MS);
  }

  async refresh(): Promise<void> {
    const generation = ++this.generation;
    this.stopPolling();
    const document = vscode.window.activeTextEditor?.document;
    if (!isNoteDocument(document)) {
      this.current = undefined;
      this.item.hide();
      return;
    }
    const problem = this.source.serverProblem();
    if (problem) {
      this.current = undefined;
      this.show(serverStateView(problem));
      return;
    }
    let status: NoteStatus | undefined;
    try {
      const raw = await this.source.noteStatus(document);
      status = parseNoteStatus(raw);
      if (!status) {
        throw new Error(`unexpected answer ${JSON.stringify(raw)}`);
      }
      this.lastError = undefined;
    } catch (e) {
      if (generation !== this.generation) {
        return;
      }
      const message = e instanceof Error ? e.message : String(e);
      // Polling would repeat the same failure every 2 s; log each distinct one once.
      if (message !== this.lastError) {
        this.source.log(`livenote.noteStatus failed: ${message}`);
        this.lastError = message;
      }
      this.current = undefined;
      const later = this.source.serverProblem();
      this.show(serverStateView(later ?? { kind: 'statusError', message }));
      return;
    }
    if (generation !== this.generation) {
      return;
    }
    this.current = status;
    this.show(noteStatusView(status, { now: new Date(), workspaceTrusted: vscode.workspace.isTrusted }));
    if (status.live) {
      this.poll = setTimeout(() => {
        this.poll = undefined;
        // An unfocused window is refreshed when focus comes back instead.
        if (vscode.window.state.focused) {
          void this.refresh();
        }
      }, POLL_MS);
    }
  }

  private show(view: StatusView): void {
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = view.command;
    this.item.backgroundColor =
      view.background === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : view.background === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.show();
  }

  private stopPolling(): void {
    if (this.poll) {
      clearTimeout(this.poll);
      this.poll = undefined;
    }
  }

  dispose(): void {
    this.generation++;
    this.stopPolling();
    if (this.debounce) {
      clearTimeout(this.debounce);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
