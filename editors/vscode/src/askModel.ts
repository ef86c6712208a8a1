// What the extension shows for "Ask livenote…", the `@livenote` chat participant and the
// server's `livenote/notify`, decided here without `vscode` so unit tests cover the wording and
// the buttons; ask.ts, chat.ts and notify.ts only show it.

import type { AskResult, NotifyParams } from './protocol';

export const ASK_TITLE = 'Ask livenote…';

/** The reply as a message: a warning when no model answered, so the user sees what to set up. */
export function askMessage(result: AskResult): { severity: 'info' | 'warning'; text: string } {
  return { severity: result.noModel ? 'warning' : 'info', text: `livenote: ${result.reply}` };
}

/** The reply as the chat participant writes it: the reply, then what acted, in small print. */
export function askMarkdown(result: AskResult): string {
  const acted = result.actions.length > 0 ? `\n\n*livenote: ${result.actions.join(', ')}*` : '';
  return `${result.reply}${acted}`;
}

export type NotifyButton = 'Open' | 'Show diff' | 'Show';

export interface NotifyView {
  /** Failures are warnings; everything else information. */
  severity: 'info' | 'warning';
  text: string;
  buttons: NotifyButton[];
}

/**
 * How a `livenote/notify` is shown. A digest offers "Show" (the Live notes view). One note
 * offers "Open" and, for a run that changed it, "Show diff" — unless it is the note in the
 * active editor, which the user is looking at already. `activeUri` is the active editor's URI
 * as the client sends it to the server (so the two compare as strings).
 */
export function notifyView(params: NotifyParams, activeUri: string | undefined): NotifyView {
  const severity = params.notes.some((n) => n.outcome === 'failed') ? 'warning' : 'info';
  const text = `livenote: ${params.message}`;
  if (params.digest || params.notes.length > 1) {
    return { severity, text, buttons: ['Show'] };
  }
  const note = params.notes[0];
  if (!note || note.uri === activeUri) {
    return { severity, text, buttons: [] };
  }
  const buttons: NotifyButton[] = ['Open'];
  if (note.outcome === 'changed' && note.runId !== null) {
    buttons.push('Show diff');
  }
  return { severity, text, buttons };
}

/** A chat reference (`#file:note.md`, a selection) as far as the participant reads it. */
export interface PromptReference {
  /** Where the reference is written in the prompt (start and end offsets), when it is. */
  range?: readonly [number, number];
  /** A URI-like value (`{ scheme, path, fsPath }`), a location (`{ uri, range }`), or other. */
  value: unknown;
}

interface UriLike {
  scheme: string;
  path: string;
}

function isUriLike(v: unknown): v is UriLike {
  return typeof v === 'object' && v !== null && typeof (v as UriLike).scheme === 'string' && typeof (v as UriLike).path === 'string';
}

/** The first markdown file the prompt references (a file, or a location in one). */
export function referencedNote<U extends UriLike>(references: readonly PromptReference[]): U | undefined {
  for (const r of references) {
    const v = r.value;
    const uri = isUriLike(v) ? v : typeof v === 'object' && v !== null && isUriLike((v as { uri?: unknown }).uri) ? (v as { uri: UriLike }).uri : undefined;
    if (uri && (uri.scheme === 'file' || uri.scheme === 'untitled') && /\.(md|markdown)$/i.test(uri.path)) {
      return uri as U;
    }
  }
  return undefined;
}

/**
 * The sentence for `livenote.ask`: the prompt without the references written in it (the note
 * they name is the command's first argument), spaces collapsed.
 */
export function chatSentence(prompt: string, references: readonly PromptReference[]): string {
  const ranges = references
    .map((r) => r.range)
    .filter((r): r is readonly [number, number] => Array.isArray(r) && r.length === 2 && r[0] <= r[1])
    .sort((a, b) => b[0] - a[0]);
  let text = prompt;
  for (const [start, end] of ranges) {
    text = text.slice(0, start) + text.slice(end);
  }
  return text.replace(/\s+/g, ' ').trim();
}
