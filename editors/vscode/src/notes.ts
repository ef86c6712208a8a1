// The "Show live notes" quick pick, built from a `livenote.listNotes` result. Pure so the item
// wording is unit-tested.

import * as path from 'node:path';
import type { ListNotesItem, LiveStatus, TriggersItem } from './protocol';
import { formatAgo, formatWhen } from './time';

export interface NotePickItem {
  label: string;
  description: string;
  detail: string;
  /** The server's workspace-relative path, to open on selection. */
  notePath: string;
}

const STATUS_LABEL: Record<LiveStatus, string> = {
  live: '$(pulse) Live',
  running: '$(sync~spin) Updating…',
  paused: '$(debug-pause) Paused',
  stopped: '$(debug-stop) Stopped',
  failed: '$(error) Failed',
  untrusted: '$(shield) Waiting for trust',
  invalid: '$(warning) Invalid',
  expired: '$(history) Expired',
};

const MAX_TEXT = 60;

function shorten(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_TEXT ? `${oneLine.slice(0, MAX_TEXT - 1)}…` : oneLine;
}

/** "cron 0 * * * * · window 09:00–12:00 · event “Emails about Q3”", or "manual only". */
export function describeTriggers(t: TriggersItem): string {
  const parts: string[] = [];
  if (t.cronExpr) {
    parts.push(`cron ${t.cronExpr}`);
  }
  for (const w of t.windows ?? []) {
    parts.push(`window ${w.startTime ?? '?'}–${w.endTime ?? '?'}`);
  }
  if (t.eventMatchCriteria) {
    parts.push(`event “${shorten(t.eventMatchCriteria)}”`);
  }
  return parts.length === 0 ? 'manual only' : parts.join(' · ');
}

export function notePickItem(item: ListNotesItem, now: Date): NotePickItem {
  const ago = formatAgo(item.lastRunAt, now);
  const description = `${STATUS_LABEL[item.status]} · ${ago ? `last run ${ago}` : 'never run'}`;
  const detail: string[] = [describeTriggers(item.triggers)];
  if (item.status !== 'invalid') {
    if (item.due) {
      detail.push(`due now (${item.due})`);
    } else if (item.nextDue) {
      detail.push(`next ${formatWhen(item.nextDue, now) ?? item.nextDue}`);
    }
  }
  // A stopped run's "stopped" is its status already.
  if (item.lastRunError && item.status !== 'stopped') {
    detail.push(`error: ${shorten(item.lastRunError)}`);
  }
  return { label: item.path, description, detail: detail.join(' · '), notePath: item.path };
}

/** One item per note, sorted by path so the list is stable between refreshes. */
export function notePickItems(items: readonly ListNotesItem[], now: Date): NotePickItem[] {
  return [...items]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((item) => notePickItem(item, now));
}

/**
 * Where a listed note may be: the server reports paths relative to the workspace root it
 * belongs to, without saying which root, so each folder is a candidate (the caller opens the
 * first that exists).
 */
export function noteCandidates(notePath: string, folders: readonly string[]): string[] {
  if (path.isAbsolute(notePath)) {
    return [notePath];
  }
  return folders.map((f) => path.join(f, notePath));
}
