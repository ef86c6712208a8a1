// A run's edits reach the disk: the one rule every editor follows (docs/editors.md). The server
// labels the `workspace/applyEdit` of a run `livenote run`; when the note's buffer had no
// unsaved changes before such an edit, the edit is saved with it, so that the file on disk,
// other tools and other devices see the run and the buffer stays clean. A buffer with the
// user's unsaved changes keeps the run's edit unsaved with them.

import * as vscode from 'vscode';
import { ApplyWorkspaceEditRequest, type LanguageClient } from 'vscode-languageclient/node';
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, WorkspaceEdit } from 'vscode-languageclient/node';

/** The `label` of the server's `workspace/applyEdit` requests that carry a run's edit. */
export const RUN_EDIT_LABEL = 'livenote run';

/** The documents (as URI strings) a workspace edit changes. */
export function editedUris(edit: WorkspaceEdit): string[] {
  const uris = new Set<string>(Object.keys(edit.changes ?? {}));
  for (const change of edit.documentChanges ?? []) {
    if ('textDocument' in change) uris.add(change.textDocument.uri);
  }
  return [...uris];
}

/** Which of `docs` a run's edit should save afterwards: those it edits that are clean now. */
export function cleanTargets<D extends { uri: string; isDirty: boolean }>(params: ApplyWorkspaceEditParams, docs: D[]): D[] {
  if (params.label !== RUN_EDIT_LABEL) return [];
  const edited = new Set(editedUris(params.edit));
  return docs.filter((d) => edited.has(d.uri) && !d.isDirty);
}

/**
 * Answer `workspace/applyEdit` as vscode-languageclient does (a stale document version is not
 * applied), then save the documents a run's edit found clean.
 */
export function handleRunEdits(client: LanguageClient, log: (msg: string) => void): vscode.Disposable {
  return client.onRequest(ApplyWorkspaceEditRequest.type, async (params): Promise<ApplyWorkspaceEditResult> => {
    const c2p = client.protocol2CodeConverter;
    const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d]));
    for (const change of params.edit.documentChanges ?? []) {
      if (!('textDocument' in change) || change.textDocument.version === null || change.textDocument.version < 0) continue;
      const doc = open.get(c2p.asUri(change.textDocument.uri).toString());
      if (doc && doc.version !== change.textDocument.version) return { applied: false, failureReason: 'document version changed' };
    }
    const docs = [...open.values()].map((d) => ({ uri: d.uri.toString(), isDirty: d.isDirty, doc: d }));
    const normalized: ApplyWorkspaceEditParams = {
      ...params,
      edit: {
        ...params.edit,
        documentChanges: params.edit.documentChanges?.map((ch) =>
          'textDocument' in ch ? { ...ch, textDocument: { ...ch.textDocument, uri: c2p.asUri(ch.textDocument.uri).toString() } } : ch,
        ),
      },
    };
    const toSave = cleanTargets(normalized, docs);
    const applied = await vscode.workspace.applyEdit(await c2p.asWorkspaceEdit(params.edit));
    if (applied) {
      for (const { doc } of toSave) {
        try {
          if (doc.isDirty && !(await doc.save())) log(`save ${doc.uri.fsPath}: not saved`);
        } catch (e) {
          log(`save ${doc.uri.fsPath}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
    }
    return { applied };
  });
}
