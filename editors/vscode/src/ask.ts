// "Ask livenote…": one sentence about a note, answered by the server's model (`livenote.ask`).
// The palette, the Live notes view and the light bulb all come here; the light bulb's command
// arrives with the note only (the server cannot prompt), so the sentence is asked for first.
// The note's changes reach the editor as the server's own edit; this only shows the reply.

import * as vscode from 'vscode';
import { ASK_TITLE, askMessage } from './askModel';
import { errorMessage } from './errors';
import { askSentence, parseAskResult, type AskResult } from './protocol';

/** Sends `[noteUri, sentence]` as `livenote.ask` (directly, or through the client's middleware). */
export type AskSend = (args: unknown[]) => Promise<unknown>;

/** The sentence from an input box; undefined when the user cancels or leaves it empty. */
export async function promptSentence(noteName: string): Promise<string | undefined> {
  const sentence = await vscode.window.showInputBox({
    title: `livenote: ${ASK_TITLE}`,
    prompt: `What should livenote do with ${noteName}, or what do you want to know about it?`,
    placeHolder: 'keep an eye on the pollen count too · every weekday at nine instead · why did it not run this morning?',
    ignoreFocusOut: true,
  });
  const trimmed = sentence?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/**
 * Ask about `noteUri` (as the server knows it), prompting when `sentence` is missing, and show
 * the reply. Returns the server's answer (undefined when cancelled or failed: said to the user).
 */
export async function ask(
  send: AskSend,
  noteUri: string,
  sentence: string | undefined,
  log: (message: string) => void,
): Promise<AskResult | undefined> {
  const text = sentence ?? (await promptSentence(noteName(noteUri)));
  if (text === undefined) {
    return undefined;
  }
  let result: AskResult | undefined;
  try {
    const raw = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'livenote: asking…' },
      () => send([noteUri, text]),
    );
    result = parseAskResult(raw);
    if (!result) {
      throw new Error('the server gave no reply');
    }
  } catch (e) {
    const message = errorMessage(e);
    log(`livenote.ask failed: ${message}`);
    void vscode.window.showErrorMessage(`livenote: Ask failed: ${message}`);
    return undefined;
  }
  const shown = askMessage(result);
  if (shown.severity === 'warning') {
    void vscode.window.showWarningMessage(shown.text);
  } else {
    void vscode.window.showInformationMessage(shown.text);
  }
  return result;
}

/**
 * The client middleware's part: `livenote.ask` with a sentence goes through as it is; the code
 * action's `[noteUri]` first asks for the sentence. Either way the reply is shown.
 */
export async function askFromCommand(
  args: readonly unknown[],
  next: AskSend,
  log: (message: string) => void,
): Promise<AskResult | undefined> {
  const noteUri = args[0];
  if (typeof noteUri !== 'string' || noteUri === '') {
    // Not the shape the server offers: let the server answer it (with its own error).
    return parseAskResult(await next([...args]));
  }
  return ask(next, noteUri, askSentence(args), log);
}

function noteName(uri: string): string {
  try {
    return vscode.workspace.asRelativePath(vscode.Uri.parse(uri));
  } catch {
    return 'this note';
  }
}
