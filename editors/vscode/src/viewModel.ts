// What the "Live notes" and "Runs" views show, from the server's answers: pure (no `vscode`
// import), so grouping and wording are unit-tested; liveViews.ts turns these into tree items.

import type { ListNotesItem, LiveStatus, RunItem } from './protocol';
import { formatAgo, formatClock, formatIn } from './time';

/** The codicon of each status, as the status bar and the picker show it. */
export const STATUS_ICON: Record<LiveStatus, string> = {
  live: 'pulse',
  running: 'sync~spin',
  paused: 'debug-pause',
  stopped: 'debug-stop',
  failed: 'error',
  untrusted: 'shield',
  invalid: 'warning',
  expired: 'history',
};

export interface NoteRow {
  kind: 'note';
  item: ListNotesItem;
  label: string;
  description: string;
  tooltip: string;
  icon: string;
  /**
   * Words the view's menus match (`viewItem =~ /\brunnable\b/`): `runnable` (Run now),
   * `stoppable` (updating: Stop), `pausable` (active: Pause), `resumable` (paused: Resume).
   */
  contextValue: string;
}

export interface FolderRow {
  kind: 'folder';
  /** Workspace-relative, `/`-separated. */
  folder: string;
  notes: NoteRow[];
}

/** The folder part of a server path ("" at the root); the server writes `/` on every system. */
export function folderOf(notePath: string): string {
  const p = notePath.replace(/\\/g, '/');
  const at = p.lastIndexOf('/');
  return at < 0 ? '' : p.slice(0, at);
}

function baseName(notePath: string): string {
  const p = notePath.replace(/\\/g, '/');
  return p.slice(p.lastIndexOf('/') + 1).replace(/\.(md|markdown)$/i, '');
}

function oneLine(text: string, max = 80): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * "last run 5 min ago · next 10:00", "updating… · last run 2 h ago", "paused · never run": what
 * changes most comes first, so that a narrow view still shows it.
 */
export function noteRow(item: ListNotesItem, now: Date): NoteRow {
  const parts: string[] = [];
  const state: Partial<Record<ListNotesItem['status'], string>> = {
    running: 'updating…',
    paused: 'paused',
    invalid: 'invalid',
    expired: 'expired',
    untrusted: 'waiting for trust',
    stopped: 'stopped',
    failed: 'failed',
  };
  const word = state[item.status];
  if (word) {
    parts.push(word);
  }
  const ago = formatAgo(item.lastRunAt, now);
  parts.push(ago ? `last run ${ago}` : 'never run');
  if (item.status === 'live' || item.status === 'failed' || item.status === 'stopped' || item.status === 'untrusted') {
    if (item.due) {
      parts.push('due now');
    } else if (item.nextDue) {
      parts.push(`next ${formatClock(item.nextDue, now) ?? item.nextDue}`);
    } else {
      parts.push('manual only');
    }
  }
  const tooltip: string[] = [item.path];
  if (item.nextDue && item.status !== 'invalid') {
    tooltip.push(`Next: ${formatClock(item.nextDue, now) ?? item.nextDue} (${formatIn(item.nextDue, now) ?? ''})`);
  }
  if (item.lastRunSummary) {
    tooltip.push(`Last run: ${oneLine(item.lastRunSummary, 200)}`);
  }
  if (item.lastRunError && item.status !== 'stopped') {
    tooltip.push(`Error: ${oneLine(item.lastRunError, 200)}`);
  }
  const words = ['note'];
  if (item.status === 'running') {
    words.push('stoppable');
  } else {
    words.push('runnable');
  }
  if (item.status !== 'invalid') {
    words.push(item.active ? 'pausable' : 'resumable');
  }
  return {
    kind: 'note',
    item,
    label: item.title ?? baseName(item.path),
    description: parts.join(' · '),
    tooltip: tooltip.join('\n'),
    icon: STATUS_ICON[item.status],
    contextValue: words.join(' '),
  };
}

/**
 * The view's top level: notes at the workspace root first, then one row per folder holding
 * notes (sorted), each with its notes sorted by path, so the tree keeps its order between
 * refreshes.
 */
export function noteTree(items: readonly ListNotesItem[], now: Date): (NoteRow | FolderRow)[] {
  const sorted = [...items].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const top: NoteRow[] = [];
  const folders = new Map<string, NoteRow[]>();
  for (const item of sorted) {
    const folder = folderOf(item.path);
    const row = noteRow(item, now);
    if (folder === '') {
      top.push(row);
    } else {
      const list = folders.get(folder) ?? [];
      list.push(row);
      folders.set(folder, list);
    }
  }
  const folderRows: FolderRow[] = [...folders.keys()].sort().map((folder) => ({ kind: 'folder', folder, notes: folders.get(folder) ?? [] }));
  return [...top, ...folderRows];
}

export interface RunRow {
  kind: 'run';
  run: RunItem;
  label: string;
  description: string;
  tooltip: string;
  icon: string;
  /** `run`, plus `diffable` (a kept body before and after) and `restorable` (a kept body before). */
  contextValue: string;
}

const OUTCOME_ICON: Record<string, string> = {
  done: 'pass',
  failed: 'error',
  stopped: 'debug-stop',
  skipped: 'circle-slash',
  running: 'sync~spin',
  unfinished: 'warning',
  unknown: 'question',
};

/** "1.2 s", "3 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 60_000) {
    return `${(ms / 1000).toFixed(1)} s`;
  }
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** "12,345 tokens". */
export function formatTokens(n: number): string {
  return `${n.toLocaleString('en-US')} tokens`;
}

/** A run: "10:00 · cron" with "done · +3 −1 · 12,345 tokens · 4.2 s". */
export function runRow(run: RunItem, now: Date): RunRow {
  const when = formatClock(run.time, now) ?? run.id;
  const parts: string[] = [run.outcome];
  if (run.linesAdded !== null && run.linesRemoved !== null) {
    parts.push(`+${run.linesAdded} −${run.linesRemoved}`);
  }
  if (run.tokens !== null) {
    parts.push(formatTokens(run.tokens));
  }
  if (run.durationMs !== null) {
    parts.push(formatDuration(run.durationMs));
  }
  const tooltip = [`Run ${run.id}`, `${run.trigger ?? 'unknown trigger'} · ${parts.join(' · ')}`];
  if (run.summary) {
    tooltip.push(oneLine(run.summary, 300));
  }
  if (!run.snapshot) {
    tooltip.push('No body kept from before this run: it cannot be restored.');
  }
  const words = ['run'];
  // A run with a kept body and a recorded result can be compared; the server says when the
  // result is missing (an interrupted run).
  if (run.snapshot) {
    words.push('diffable', 'restorable');
  }
  return {
    kind: 'run',
    run,
    label: `${when} · ${run.trigger ?? '?'}`,
    description: parts.join(' · '),
    tooltip: tooltip.join('\n'),
    icon: OUTCOME_ICON[run.outcome] ?? 'question',
    contextValue: words.join(' '),
  };
}

/** The `livenote-run:` document of one side of a run's diff, and back. */
export interface RunSide {
  note: string;
  run: string;
  side: 'before' | 'after';
}

export const RUN_SCHEME = 'livenote-run';

/**
 * The path part names the note (so the diff editor's tab shows its name and markdown
 * highlighting); the query carries what the content provider asks the server for.
 */
export function runSideQuery(s: RunSide): string {
  return new URLSearchParams({ note: s.note, run: s.run, side: s.side }).toString();
}

export function parseRunSide(query: string): RunSide | undefined {
  const q = new URLSearchParams(query);
  const note = q.get('note');
  const run = q.get('run');
  const side = q.get('side');
  if (!note || !run || (side !== 'before' && side !== 'after')) {
    return undefined;
  }
  return { note, run, side };
}
