// Palette commands. Each note command sends workspace/executeCommand with the active
// document's URI first, as the server's code actions do.

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { ask } from './ask';
import type { LivenoteClient } from './client';
import { errorMessage } from './errors';
import { noteCandidates, notePickItems, type NotePickItem } from './notes';
import { ServerCommand, ServerRequest, UiCommand, isRecord, parseListNotes } from './protocol';
import { isNoteDocument } from './statusBar';

interface NoteCommand {
  id: string;
  /** Used in error messages: "livenote: Run now failed: ...". */
  title: string;
  server: string;
  /** Extra arguments after the URI; undefined = the user cancelled. */
  args?: () => Promise<unknown[] | undefined>;
  /** The server reads the note's path on disk, so an untitled buffer cannot be used. */
  needsFile?: boolean;
  after?: (result: unknown) => void;
}

function activeNote(): vscode.TextDocument | undefined {
  const document = vscode.window.activeTextEditor?.document;
  if (!isNoteDocument(document)) {
    void vscode.window.showWarningMessage('livenote: open a markdown note first.');
    return undefined;
  }
  return document;
}

export function registerCommands(ln: LivenoteClient): vscode.Disposable[] {
  const noteCommands: NoteCommand[] = [
    { id: UiCommand.makeLive, title: 'Make live', server: ServerCommand.makeLive },
    {
      id: UiCommand.makeLiveDescribe,
      title: 'Make live from a description',
      server: ServerCommand.makeLive,
      // The server drafts the block with the configured model from a spawned task and writes
      // it as one edit (the template, with a warning, without a model); an empty answer is the
      // plain template.
      args: async () => {
        const describe = await vscode.window.showInputBox({
          title: 'livenote: Make live…',
          prompt: 'What should this note keep current, and when? (empty: a template to fill in)',
          placeHolder: 'keep the latest Rust release notes, every Monday morning',
          ignoreFocusOut: true,
        });
        return describe === undefined ? undefined : [{ describe: describe.trim(), run: false }];
      },
    },
    { id: UiCommand.run, title: 'Run now', server: ServerCommand.run, needsFile: true },
    {
      id: UiCommand.runWithContext,
      title: 'Run now with context',
      server: ServerCommand.run,
      needsFile: true,
      args: async () => {
        const context = await vscode.window.showInputBox({
          title: 'livenote: Run now with context',
          prompt: 'Extra context for this run (for example what changed or what to focus on)',
          ignoreFocusOut: true,
        });
        return context === undefined || context.trim() === '' ? undefined : [context];
      },
    },
    {
      id: UiCommand.stop,
      title: 'Stop',
      server: ServerCommand.stop,
      needsFile: true,
      after: (result) => {
        if (typeof result === 'object' && result !== null && 'stopped' in result && result.stopped === false) {
          void vscode.window.showInformationMessage('livenote: this note is not updating.');
        }
      },
    },
    { id: UiCommand.pause, title: 'Pause', server: ServerCommand.setActive, args: () => Promise.resolve([false]) },
    { id: UiCommand.resume, title: 'Resume', server: ServerCommand.setActive, args: () => Promise.resolve([true]) },
    { id: UiCommand.makePassive, title: 'Make passive', server: ServerCommand.makePassive },
    { id: UiCommand.undoLastRun, title: 'Undo last run', server: ServerCommand.undoLastRun, needsFile: true },
    {
      id: UiCommand.clearMemory,
      title: 'Clear agent memory',
      server: ServerCommand.clearMemory,
      needsFile: true,
      // The server answers `{cleared: false}` when the note had no memory: say which it was.
      after: (result) => {
        const cleared = isRecord(result) && result.cleared === true;
        void vscode.window.showInformationMessage(
          cleared ? "livenote: cleared this note's agent memory." : 'livenote: this note has no agent memory.',
        );
      },
    },
  ];

  const runNoteCommand = async (c: NoteCommand): Promise<void> => {
    const document = activeNote();
    if (!document || !ln.ensureRunning()) {
      return;
    }
    if (c.needsFile && document.uri.scheme !== 'file') {
      void vscode.window.showWarningMessage(`livenote: save the note in a workspace folder first (${c.title} works on files).`);
      return;
    }
    const extra = c.args ? await c.args() : [];
    if (extra === undefined) {
      return;
    }
    try {
      const result = await ln.sendCommand(c.server, [ln.uriArg(document.uri), ...extra]);
      c.after?.(result);
    } catch (e) {
      const message = errorMessage(e);
      ln.log(`${c.server} failed: ${message}`);
      void vscode.window.showErrorMessage(`livenote: ${c.title} failed: ${message}`);
    } finally {
      ln.statusBar.refreshSoon();
    }
  };

  const disposables = noteCommands.map((c) => vscode.commands.registerCommand(c.id, () => runNoteCommand(c)));

  disposables.push(
    vscode.commands.registerCommand(UiCommand.ask, async () => {
      const document = activeNote();
      if (!document || !ln.ensureRunning()) {
        return;
      }
      await ask((args) => ln.sendCommand(ServerCommand.ask, args), ln.uriArg(document.uri), undefined, (m) => ln.log(m));
      ln.statusBar.refreshSoon();
    }),
    vscode.commands.registerCommand(UiCommand.showLiveNotes, () => showLiveNotes(ln)),
    vscode.commands.registerCommand(UiCommand.trustWorkspace, () => trustWorkspace(ln)),
    vscode.commands.registerCommand(UiCommand.restartServer, () => ln.restart()),
    vscode.commands.registerCommand(UiCommand.showOutput, () => ln.output.show(true)),
    vscode.commands.registerCommand(UiCommand.showProblems, () =>
      vscode.commands.executeCommand('workbench.actions.view.problems'),
    ),
    vscode.commands.registerCommand(UiCommand.showServerMissing, () => ln.showServerMissing()),
  );
  return disposables;
}

async function showLiveNotes(ln: LivenoteClient): Promise<void> {
  if (!ln.ensureRunning()) {
    return;
  }
  let items: NotePickItem[];
  try {
    const raw = await ln.sendTyped(ServerRequest.listNotes, undefined, ServerCommand.listNotes, []);
    items = notePickItems(parseListNotes(raw), new Date());
  } catch (e) {
    void vscode.window.showErrorMessage(`livenote: listing the live notes failed: ${errorMessage(e)}`);
    return;
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      'livenote: no live notes in this workspace yet. Open a note and run "livenote: Make live".',
    );
    return;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: 'livenote: live notes',
    placeHolder: 'Open a live note',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) {
    return;
  }
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const file = noteCandidates(picked.notePath, folders).find((candidate) => fs.existsSync(candidate));
  if (!file) {
    void vscode.window.showErrorMessage(`livenote: ${picked.notePath} was not found in the workspace folders.`);
    return;
  }
  try {
    await vscode.window.showTextDocument(vscode.Uri.file(file));
  } catch (e) {
    void vscode.window.showErrorMessage(`livenote: could not open ${picked.notePath}: ${errorMessage(e)}`);
  }
}

async function trustWorkspace(ln: LivenoteClient): Promise<void> {
  if (!ln.ensureRunning()) {
    return;
  }
  // With a note open, trust its workspace root; otherwise every root the server knows.
  const document = vscode.window.activeTextEditor?.document;
  const args = document?.uri.scheme === 'file' ? [ln.uriArg(document.uri)] : [];
  let trusted: string[];
  try {
    const result = await ln.sendCommand(ServerCommand.trustWorkspace, args);
    trusted = Array.isArray(result) ? result.filter((p): p is string => typeof p === 'string') : [];
  } catch (e) {
    void vscode.window.showErrorMessage(`livenote: Trust workspace failed: ${errorMessage(e)}`);
    return;
  } finally {
    ln.statusBar.refreshSoon();
  }
  const what = trusted.length > 0 ? trusted.join(', ') : 'this workspace';
  if (vscode.workspace.isTrusted) {
    void vscode.window.showInformationMessage(`livenote: trusted ${what}; its notes now run on their triggers.`);
    return;
  }
  // livenote's own trust list is not VS Code's: here the scheduler stays off until both agree.
  const choice = await vscode.window.showWarningMessage(
    `livenote: trusted ${what}, but VS Code does not trust this workspace, so notes still run only by hand here.`,
    'Manage Workspace Trust',
  );
  if (choice === 'Manage Workspace Trust') {
    await vscode.commands.executeCommand('workbench.trust.manage');
  }
}
