// The server's `livenote/notify` (a run changed a note, or failed; several within a minute as
// one digest) as a VS Code notification: "Open" and "Show diff" for a note not in the active
// editor, "Show" (the Live notes view) for a digest. What to show is decided in askModel.ts.

import * as vscode from 'vscode';
import { notifyView } from './askModel';
import type { LivenoteClient } from './client';
import { NOTES_VIEW, runDiffUris } from './liveViews';
import { UiCommand, parseNotify } from './protocol';

/** Show one `livenote/notify`; resolves once the user chose a button or closed it. */
export async function showNotify(ln: LivenoteClient, raw: unknown): Promise<void> {
  const params = parseNotify(raw);
  if (!params) {
    ln.log(`livenote/notify without a message: ${JSON.stringify(raw)}`);
    return;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  const view = notifyView(params, active ? ln.uriArg(active) : undefined);
  const choice =
    view.severity === 'warning'
      ? await vscode.window.showWarningMessage(view.text, ...view.buttons)
      : await vscode.window.showInformationMessage(view.text, ...view.buttons);
  const note = params.notes[0];
  if (choice === 'Show') {
    // Every view gets a `<id>.focus` command: it opens the Explorer on the Live notes view.
    await vscode.commands.executeCommand(`${NOTES_VIEW}.focus`);
  } else if (choice === 'Open' && note) {
    await vscode.window.showTextDocument(vscode.Uri.parse(note.uri));
  } else if (choice === 'Show diff' && note && note.runId !== null) {
    // The Runs view's own command, given a side of the run's diff: it names the note and run.
    const { after } = runDiffUris(vscode.Uri.parse(note.uri), note.uri, note.runId);
    await vscode.commands.executeCommand(UiCommand.openRunDiff, after);
  }
}
