// Relative and clock times for the status bar and the live-notes picker. `now` is always passed
// in so the wording can be tested without a real clock.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Parse an ISO 8601 / RFC 3339 timestamp; undefined for null, empty or unparsable input. */
export function parseTime(iso: string | null | undefined): Date | undefined {
  if (!iso) {
    return undefined;
  }
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/**
 * "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago". Days are 24-hour spans, not
 * calendar days, so the wording never depends on the machine's time zone.
 * A time slightly in the future (clock skew between the server and this machine) reads as
 * "just now" rather than as a future time.
 */
export function formatAgo(iso: string | null | undefined, now: Date): string | undefined {
  const t = parseTime(iso);
  if (!t) {
    return undefined;
  }
  const elapsed = now.getTime() - t.getTime();
  if (elapsed < MINUTE) {
    return 'just now';
  }
  if (elapsed < HOUR) {
    return `${Math.floor(elapsed / MINUTE)} min ago`;
  }
  if (elapsed < DAY) {
    return `${Math.floor(elapsed / HOUR)} h ago`;
  }
  if (elapsed < 2 * DAY) {
    return 'yesterday';
  }
  return `${Math.floor(elapsed / DAY)} days ago`;
}

/** "in 4 min", "in 2 h", "tomorrow", "in 3 days"; "now" once the time has come. */
export function formatIn(iso: string | null | undefined, now: Date): string | undefined {
  const t = parseTime(iso);
  if (!t) {
    return undefined;
  }
  const ahead = t.getTime() - now.getTime();
  if (ahead <= 0) {
    return 'now';
  }
  if (ahead < MINUTE) {
    return 'in less than a minute';
  }
  if (ahead < HOUR) {
    // Round up: "in 0 min" would read as "now" while it is still a little way off.
    return `in ${Math.ceil(ahead / MINUTE)} min`;
  }
  if (ahead < DAY) {
    return `in ${Math.floor(ahead / HOUR)} h`;
  }
  if (ahead < 2 * DAY) {
    return 'tomorrow';
  }
  return `in ${Math.floor(ahead / DAY)} days`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * The local wall-clock time of `iso` as "15:00", prefixed with the date ("2026-05-09 15:00") when
 * it is not on the same local day as `now`. 24-hour, to match how triggers are written.
 */
export function formatClock(iso: string | null | undefined, now: Date): string | undefined {
  const t = parseTime(iso);
  if (!t) {
    return undefined;
  }
  const hm = `${pad2(t.getHours())}:${pad2(t.getMinutes())}`;
  const sameDay =
    t.getFullYear() === now.getFullYear() && t.getMonth() === now.getMonth() && t.getDate() === now.getDate();
  if (sameDay) {
    return hm;
  }
  return `${t.getFullYear()}-${pad2(t.getMonth() + 1)}-${pad2(t.getDate())} ${hm}`;
}

/** "15:00 (in 12 min)" or "09:00 (2 h ago)": both forms, for tooltips. */
export function formatWhen(iso: string | null | undefined, now: Date): string | undefined {
  const t = parseTime(iso);
  if (!t) {
    return undefined;
  }
  const rel = t.getTime() > now.getTime() ? formatIn(iso, now) : formatAgo(iso, now);
  return `${formatClock(iso, now) ?? ''} (${rel ?? ''})`;
}
