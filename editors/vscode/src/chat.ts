// `@livenote` in VS Code's chat, where the chat API is present: the sentence goes to the same
// `livenote.ask` as "Ask livenote…", for the note the prompt references (`#file:note.md`) or
// else the note in the active editor, and the reply is written into the chat. The answer comes
// from livenote's own configured model, not from the chat's; the note's changes arrive as the
// server's edit, as for every other surface.

import * as vscode from 'vscode';
import { askMarkdown, chatSentence, referencedNote } from './askModel';
import type { LivenoteClient } from './client';
import { errorMessage } from './errors';
import { ServerCommand, parseAskResult } from './protocol';
import { isNoteDocument } from './statusBar';

/** The id under `contributes.chatParticipants` in package.json (its name is `livenote`). */
export const CHAT_PARTICIPANT_ID = 'livenote.chat';

/** The note a chat request is about: the one it references, else the active markdown editor. */
function noteFor(request: vscode.ChatRequest): vscode.Uri | undefined {
  const referenced = referencedNote<vscode.Uri>(request.references);
  if (referenced) {
    return referenced;
  }
  const document = vscode.window.activeTextEditor?.document;
  return isNoteDocument(document) ? document.uri : undefined;
}

export function chatHandler(ln: LivenoteClient): vscode.ChatRequestHandler {
  return async (request, _context, stream) => {
    const note = noteFor(request);
    if (!note) {
      stream.markdown('Open a markdown note, or name one with `#file:`, and ask again: `@livenote` acts on one note at a time.');
      return {};
    }
    const sentence = chatSentence(request.prompt, request.references);
    if (sentence === '') {
      stream.markdown('Say what livenote should do with the note, or what you want to know about it.');
      return {};
    }
    if (!ln.ensureRunning()) {
      stream.markdown('The livenote language server is not running (see the livenote output).');
      return {};
    }
    stream.progress(`Asking livenote about ${vscode.workspace.asRelativePath(note)}…`);
    try {
      const result = parseAskResult(await ln.sendCommand(ServerCommand.ask, [ln.uriArg(note), sentence]));
      if (!result) {
        throw new Error('the server gave no reply');
      }
      stream.markdown(askMarkdown(result));
      return { metadata: { note: note.toString(), changed: result.changed, noModel: result.noModel } };
    } catch (e) {
      const message = errorMessage(e);
      ln.log(`livenote.ask from the chat failed: ${message}`);
      return { errorDetails: { message: `livenote: ${message}` } };
    } finally {
      ln.statusBar.refreshSoon();
    }
  };
}

/** The participant, where this VS Code has the chat API (1.90 and later); nothing elsewhere. */
export function registerChat(ln: LivenoteClient): vscode.Disposable[] {
  const chat = (vscode as { chat?: Partial<typeof vscode.chat> }).chat;
  if (typeof chat?.createChatParticipant !== 'function') {
    ln.log('this VS Code has no chat API: no @livenote participant');
    return [];
  }
  return [chat.createChatParticipant(CHAT_PARTICIPANT_ID, chatHandler(ln))];
}
