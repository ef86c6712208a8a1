// What the status-bar item shows for a note, computed from a `livenote.noteStatus` result.
// Pure (no `vscode` import) so every status can be unit-tested.

import { UiCommand, type UiCommandId, type LiveNoteStatus, type NoteStatus } from './protocol';
import { formatAgo, formatClock, formatIn, formatWhen } from './time';

export interface StatusView {
  /** Status-bar text, with a leading `$(codicon)`. */
  text: string;
  /** Plain-text tooltip, one fact per line. */
  tooltip: string;
  /** What a click does; undefined = nothing. */
  command: UiCommandId | undefined;
  /** Status-bar background to draw attention; undefined = default. */
  background?: 'error' | 'warning';
}

export interface StatusContext {
  now: Date;
  /** VS Code's workspace trust (`vscode.workspace.isTrusted`). */
  workspaceTrusted: boolean;
}

export const UNTRUSTED_LINE =
  'Scheduled and event runs are off: VS Code does not trust this workspace. "Run now" still works.';
const SCHEDULER_OFF_LINE = 'Scheduled and event runs are off: scheduler.enabled is false in the livenote settings.';

function schedulerLine(status: NoteStatus, ctx: StatusContext): string | undefined {
  if (!ctx.workspaceTrusted) {
    return UNTRUSTED_LINE;
  }
  if (status.live && !status.schedulerEnabled) {
    return SCHEDULER_OFF_LINE;
  }
  return undefined;
}

function lastRunLine(s: LiveNoteStatus, now: Date): string {
  const when = formatWhen(s.lastRunAt, now);
  return `Last run: ${when ?? 'never'}`;
}

function nextDueLine(s: LiveNoteStatus, now: Date): string | undefined {
  if (s.status === 'invalid' || s.status === 'running') {
    return undefined;
  }
  if (s.status === 'expired') {
    return `Next due: none (ended ${formatClock(s.until, now) ?? 'at its until'})`;
  }
  if (s.due) {
    return `Due now (${s.due})`;
  }
  if (!s.active) {
    return 'Next due: none while paused';
  }
  const next = formatWhen(s.nextDue, now);
  return `Next due: ${next ?? 'manual only (no cron or window trigger)'}`;
}

/** "1st", "2nd", "3rd", "11th", "22nd". */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/**
 * When a failing note is tried again, as the server computed it (its backoff doubles with each
 * failure, up to `[scheduler] max_backoff`): "scheduled runs retry it at 14:20 (in 5 min, 3rd
 * failure)", or why nothing will.
 */
export function retryWords(s: LiveNoteStatus, now: Date): string {
  if (s.scheduledOn) {
    return `scheduled runs retry it on ${s.scheduledOn}`;
  }
  if (!s.schedulerEnabled) {
    return 'scheduled runs are off, so nothing retries it on its own';
  }
  const at = formatClock(s.retryAt, now);
  if (at) {
    const details = [formatIn(s.retryAt, now), s.failures ? `${ordinal(s.failures)} failure` : undefined].filter(
      (d): d is string => d !== undefined,
    );
    return `scheduled runs retry it at ${at}${details.length ? ` (${details.join(', ')})` : ''}`;
  }
  const next = formatClock(s.nextDue, now);
  if (next) {
    return `its next scheduled run is at ${next} (${formatIn(s.nextDue, now) ?? ''})`;
  }
  return 'nothing retries it on its own (no scheduled run ahead)';
}

function join(lines: (string | undefined)[]): string {
  return lines.filter((l): l is string => l !== undefined && l !== '').join('\n');
}

/** The status-bar view of one note. */
export function noteStatusView(status: NoteStatus, ctx: StatusContext): StatusView {
  const schedLine = schedulerLine(status, ctx);
  if (!status.live) {
    return {
      text: '$(circle-outline) Passive',
      tooltip: join([
        'livenote: this note is passive (its frontmatter has no live: block).',
        schedLine,
        'Click to make it live.',
      ]),
      command: UiCommand.makeLive,
    };
  }
  const { now } = ctx;
  const error = status.lastRunError ? `Last error: ${status.lastRunError}` : undefined;
  const common = [lastRunLine(status, now), nextDueLine(status, now), error, schedLine];
  switch (status.status) {
    case 'running':
      return {
        text: '$(sync~spin) Updating…',
        tooltip: join([
          'livenote: the agent is updating this note.',
          status.lastAttemptAt ? `Started ${formatAgo(status.lastAttemptAt, now) ?? ''}` : undefined,
          ...common,
          'Click to stop.',
        ]),
        command: UiCommand.stop,
      };
    case 'paused':
      return {
        text: '$(debug-pause) Paused',
        tooltip: join([
          'livenote: this note is paused (active: false): it runs only by hand.',
          ...common,
          'Click to run it now anyway; "livenote: Resume" resumes its triggers.',
        ]),
        command: UiCommand.run,
      };
    case 'failed': {
      const ago = formatAgo(status.lastAttemptAt ?? status.lastRunAt, now);
      return {
        text: `$(error) Failed${ago ? ` ${ago}` : ''}`,
        tooltip: join([`livenote: the latest run of this note failed; ${retryWords(status, now)}.`, ...common, 'Click to retry now.']),
        command: UiCommand.run,
        background: 'error',
      };
    }
    case 'stopped': {
      const ago = formatAgo(status.lastAttemptAt ?? status.lastRunAt, now);
      return {
        text: `$(debug-stop) Stopped${ago ? ` ${ago}` : ''}`,
        tooltip: join([
          'livenote: the latest run of this note was stopped. That is not a failure: its next occurrence runs as usual.',
          lastRunLine(status, now),
          nextDueLine(status, now),
          schedLine,
          'Click to run it now.',
        ]),
        command: UiCommand.run,
      };
    }
    case 'untrusted':
      return {
        text: '$(shield) Waiting for trust',
        tooltip: join([
          'livenote: this note has triggers, but livenote runs notes on their own only in a workspace you trust.',
          ...common,
          'Click to trust this workspace for livenote.',
        ]),
        command: UiCommand.trustWorkspace,
        background: 'warning',
      };
    case 'invalid':
      return {
        text: '$(warning) Invalid',
        tooltip: join([
          'livenote: the live: block has errors, so the note does not run. See the Problems panel.',
          ...common,
          'Click to show the problems.',
        ]),
        command: UiCommand.showProblems,
        background: 'warning',
      };
    case 'expired':
      return {
        text: `$(history) Expired${status.until ? ` ${formatClock(status.until, now) ?? ''}` : ''}`,
        tooltip: join([
          'livenote: this note\'s until has passed, so it no longer runs on its triggers or on events.',
          ...common,
          'Click to run it once by hand; extend or remove until in the live: block to bring it back.',
        ]),
        command: UiCommand.run,
      };
    case 'live': {
      const ago = formatAgo(status.lastRunAt, now);
      return {
        text: `$(pulse) Live · ${ago ?? 'never run'}`,
        tooltip: join(['livenote: this note is live.', ...common, 'Click to run it now.']),
        command: UiCommand.run,
      };
    }
  }
}

export type ServerState =
  | { kind: 'starting' }
  | { kind: 'missing'; message: string }
  | { kind: 'stopped'; message?: string }
  | { kind: 'statusError'; message: string };

/** The status-bar view when there is no note status to show because of the server. */
export function serverStateView(state: ServerState): StatusView {
  switch (state.kind) {
    case 'starting':
      return {
        text: '$(loading~spin) livenote',
        tooltip: 'Starting the livenote language server…',
        command: UiCommand.showOutput,
      };
    case 'missing':
      return {
        text: '$(error) livenote not found',
        tooltip: `${state.message}\nClick for the install steps.`,
        command: UiCommand.showServerMissing,
        background: 'error',
      };
    case 'stopped':
      return {
        text: '$(error) livenote stopped',
        tooltip: join([
          'The livenote language server is not running.',
          state.message,
          'Click to restart it.',
        ]),
        command: UiCommand.restartServer,
        background: 'error',
      };
    case 'statusError':
      return {
        text: '$(warning) livenote',
        tooltip: `Could not read this note's status: ${state.message}\nClick to show the livenote output.`,
        command: UiCommand.showOutput,
      };
  }
}
