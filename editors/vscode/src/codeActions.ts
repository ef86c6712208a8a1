// The light bulb's "Make live…": the server offers "Make live" (the template) but cannot ask
// for a sentence, so the extension adds its own action that asks (an input box) and sends the
// sentence to the server's model (livenote.makeLive with {describe}). Kept free of `vscode`
// imports so unit tests can use it.

import { UiCommand } from './protocol';

export const MAKE_LIVE_DESCRIBE_TITLE = 'Make live…';

/** A command as VS Code's code-action providers may return one. */
export interface ActionCommand {
  title: string;
  command: string;
}

/** `actions` with "Make live…" right after the server's "Make live" (none on a live note). */
export function withMakeLiveDescribe<T extends { title: string }>(
  actions: T[] | null | undefined,
): (T | ActionCommand)[] | null | undefined {
  const at = actions?.findIndex((a) => a.title === 'Make live') ?? -1;
  if (!actions || at < 0) {
    return actions;
  }
  const out: (T | ActionCommand)[] = [...actions];
  out.splice(at + 1, 0, { title: MAKE_LIVE_DESCRIBE_TITLE, command: UiCommand.makeLiveDescribe });
  return out;
}
