// The server's side of the contract: command IDs and the shapes of their JSON results.
// Kept free of `vscode` imports so unit tests and the protocol smoke test can use it.

/** Commands the server implements (workspace/executeCommand). */
export const ServerCommand = {
  makeLive: 'livenote.makeLive',
  run: 'livenote.run',
  stop: 'livenote.stop',
  setActive: 'livenote.setActive',
  makePassive: 'livenote.makePassive',
  undoLastRun: 'livenote.undoLastRun',
  listNotes: 'livenote.listNotes',
  trustWorkspace: 'livenote.trustWorkspace',
  noteStatus: 'livenote.noteStatus',
  /** Deletes the note's agent memory; the code action *Clear agent memory* sends it. */
  clearMemory: 'livenote.clearMemory',
  /**
   * `[noteUri, sentence]`: the configured model acts on the note and answers (issue 33). The
   * server's "Ask livenote…" code action sends `[noteUri]` only, for the client to prompt.
   */
  ask: 'livenote.ask',
} as const;

/** The server's typed requests (custom methods); the commands above answer the same. */
export const ServerRequest = {
  /** No parameters; the live notes, as `livenote.listNotes` answers. */
  listNotes: 'livenote/listNotes',
  /** `{ textDocument: { uri } }`; as `livenote.noteStatus` answers. */
  noteStatus: 'livenote/noteStatus',
  /** `{ uri }`: the note's runs, newest first (no command form). */
  noteHistory: 'livenote/noteHistory',
  /** `{ uri, run }`: `{ run, before, after }`, the body before and after the run. */
  runDiff: 'livenote/runDiff',
  /** `{ uri, run }`: put back the body from before the run (answers null once started). */
  restoreRun: 'livenote/restoreRun',
} as const;

/** Server → client, once asked for with `experimental.livenote.notesChanged`: `{ uris }`. */
export const NOTES_CHANGED = 'livenote/notesChanged';

/**
 * Server → client, once asked for with `experimental.livenote.notify`: a run changed a note,
 * or failed (`{ message, digest, notes: [...] }`; see parseNotify).
 */
export const NOTIFY = 'livenote/notify';

/** JSON-RPC "method not found": a server older than the typed requests. */
export const METHOD_NOT_FOUND = -32601;

/**
 * The extension's own command IDs. vscode-languageclient registers every command the server
 * advertises under the server's ID, so ours live in `livenote.ui.*` to avoid a
 * "command already exists" failure at client start.
 */
export const UiCommand = {
  makeLive: 'livenote.ui.makeLive',
  /** Asks for one sentence; the server's model drafts the block from it (issue 25). */
  makeLiveDescribe: 'livenote.ui.makeLiveDescribe',
  run: 'livenote.ui.run',
  runWithContext: 'livenote.ui.runWithContext',
  stop: 'livenote.ui.stop',
  pause: 'livenote.ui.pause',
  resume: 'livenote.ui.resume',
  makePassive: 'livenote.ui.makePassive',
  undoLastRun: 'livenote.ui.undoLastRun',
  clearMemory: 'livenote.ui.clearMemory',
  showLiveNotes: 'livenote.ui.showLiveNotes',
  trustWorkspace: 'livenote.ui.trustWorkspace',
  restartServer: 'livenote.ui.restartServer',
  showOutput: 'livenote.ui.showOutput',
  showProblems: 'livenote.ui.showProblems',
  showServerMissing: 'livenote.ui.showServerMissing',
  /** Asks for a sentence about the active note and sends it to `livenote.ask`. */
  ask: 'livenote.ui.ask',
  /** The Live notes and Runs views' own actions (their argument is the view's item). */
  viewRun: 'livenote.ui.view.run',
  viewStop: 'livenote.ui.view.stop',
  viewPause: 'livenote.ui.view.pause',
  viewResume: 'livenote.ui.view.resume',
  viewOpen: 'livenote.ui.view.open',
  refreshViews: 'livenote.ui.view.refresh',
  openRunDiff: 'livenote.ui.view.openRunDiff',
  restoreRun: 'livenote.ui.view.restoreRun',
  undoFromRuns: 'livenote.ui.view.undoLastRun',
  viewAsk: 'livenote.ui.view.ask',
} as const;

export type UiCommandId = (typeof UiCommand)[keyof typeof UiCommand];

export type LiveStatus = 'live' | 'running' | 'paused' | 'stopped' | 'failed' | 'untrusted' | 'invalid' | 'expired';

const LIVE_STATUSES: readonly string[] = ['live', 'running', 'paused', 'stopped', 'failed', 'untrusted', 'invalid', 'expired'];

export interface PassiveNoteStatus {
  live: false;
}

export interface LiveNoteStatus {
  live: true;
  status: LiveStatus;
  active: boolean;
  lastRunAt: string | null;
  lastAttemptAt: string | null;
  lastRunError: string | null;
  nextDue: string | null;
  due: string | null;
  schedulerEnabled: boolean;
  /** `live.until` resolved: the first instant the note no longer fires at (absent: no end). */
  until?: string | null;
  /** When scheduled runs retry a failing note (the server's next fire after the backoff). */
  retryAt?: string | null;
  /** Consecutive failed runs (absent: none). */
  failures?: number;
  /** The machine `[scheduler] host` names when it is not this one: it retries there. */
  scheduledOn?: string | null;
}

export type NoteStatus = PassiveNoteStatus | LiveNoteStatus;

export interface TriggersItem {
  cronExpr?: string;
  windows?: { startTime?: string; endTime?: string }[];
  eventMatchCriteria?: string;
}

export interface ListNotesItem {
  path: string;
  /** `title:`, else the first heading, else the file name (older servers: absent). */
  title?: string;
  lastRunSummary?: string | null;
  active: boolean;
  status: LiveStatus;
  triggers: TriggersItem;
  due: string | null;
  nextDue: string | null;
  lastRunAt: string | null;
  lastAttemptAt: string | null;
  lastRunError: string | null;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optString(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function liveStatus(v: unknown): LiveStatus {
  // A status this extension does not know yet (a newer server) is shown as plain live rather
  // than breaking the status bar.
  return typeof v === 'string' && LIVE_STATUSES.includes(v) ? (v as LiveStatus) : 'live';
}

/** Read a `livenote.noteStatus` result defensively: the server may be older or newer. */
export function parseNoteStatus(raw: unknown): NoteStatus | undefined {
  if (!isRecord(raw) || typeof raw.live !== 'boolean') {
    return undefined;
  }
  if (!raw.live) {
    return { live: false };
  }
  return {
    live: true,
    status: liveStatus(raw.status),
    active: raw.active !== false,
    lastRunAt: optString(raw.lastRunAt),
    lastAttemptAt: optString(raw.lastAttemptAt),
    lastRunError: optString(raw.lastRunError),
    nextDue: optString(raw.nextDue),
    due: optString(raw.due),
    schedulerEnabled: raw.schedulerEnabled !== false,
    ...optional(raw),
  };
}

/** The fields a server sends only when they apply; left out here too when it does not. */
function optional(raw: Record<string, unknown>): Partial<LiveNoteStatus> {
  const out: Partial<LiveNoteStatus> = {};
  if (typeof raw.until === 'string') {
    out.until = raw.until;
  }
  if (typeof raw.retryAt === 'string') {
    out.retryAt = raw.retryAt;
  }
  if (typeof raw.failures === 'number' && Number.isFinite(raw.failures) && raw.failures > 0) {
    out.failures = raw.failures;
  }
  if (typeof raw.scheduledOn === 'string' && raw.scheduledOn !== '') {
    out.scheduledOn = raw.scheduledOn;
  }
  return out;
}

function parseTriggers(raw: unknown): TriggersItem {
  if (!isRecord(raw)) {
    return {};
  }
  const out: TriggersItem = {};
  if (typeof raw.cronExpr === 'string') {
    out.cronExpr = raw.cronExpr;
  }
  if (Array.isArray(raw.windows)) {
    out.windows = raw.windows.filter(isRecord).map((w) => ({
      startTime: typeof w.startTime === 'string' ? w.startTime : undefined,
      endTime: typeof w.endTime === 'string' ? w.endTime : undefined,
    }));
  }
  if (typeof raw.eventMatchCriteria === 'string') {
    out.eventMatchCriteria = raw.eventMatchCriteria;
  }
  return out;
}

/** Read a `livenote.listNotes` result; items without a path are dropped. */
export function parseListNotes(raw: unknown): ListNotesItem[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw.filter(isRecord).flatMap((item): ListNotesItem[] => {
    if (typeof item.path !== 'string' || item.path === '') {
      return [];
    }
    return [
      {
        path: item.path,
        title: typeof item.title === 'string' && item.title !== '' ? item.title : undefined,
        lastRunSummary: optString(item.lastRunSummary),
        active: item.active !== false,
        status: liveStatus(item.status),
        triggers: parseTriggers(item.triggers),
        due: optString(item.due),
        nextDue: optString(item.nextDue),
        lastRunAt: optString(item.lastRunAt),
        lastAttemptAt: optString(item.lastAttemptAt),
        lastRunError: optString(item.lastRunError),
      },
    ];
  });
}

/** One run of a note, as `livenote/noteHistory` (and `livenote history --format json`) lists it. */
export interface RunItem {
  id: string;
  time: string | null;
  trigger: string | null;
  /** done, failed, stopped, skipped, running, unfinished or unknown. */
  outcome: string;
  summary: string | null;
  linesAdded: number | null;
  linesRemoved: number | null;
  /** The body from before the run is kept: it can be restored. */
  snapshot: boolean;
  /** Input plus output tokens, when the run recorded them. */
  tokens: number | null;
  durationMs: number | null;
}

function optNumber(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** Read a `livenote/noteHistory` result; runs without an id are dropped. */
export function parseHistory(raw: unknown): RunItem[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw.filter(isRecord).flatMap((r): RunItem[] => {
    if (typeof r.id !== 'string' || r.id === '') {
      return [];
    }
    const tokens = isRecord(r.tokens) ? (optNumber(r.tokens.input) ?? 0) + (optNumber(r.tokens.output) ?? 0) : null;
    return [
      {
        id: r.id,
        time: optString(r.time),
        trigger: optString(r.trigger),
        outcome: typeof r.outcome === 'string' ? r.outcome : 'unknown',
        summary: optString(r.summary),
        linesAdded: optNumber(r.linesAdded),
        linesRemoved: optNumber(r.linesRemoved),
        snapshot: r.snapshot === true,
        tokens,
        durationMs: optNumber(r.durationMs),
      },
    ];
  });
}

export interface RunDiff {
  run: string;
  before: string;
  after: string;
}

/** Read a `livenote/runDiff` result. */
export function parseRunDiff(raw: unknown): RunDiff | undefined {
  if (!isRecord(raw) || typeof raw.run !== 'string' || typeof raw.before !== 'string' || typeof raw.after !== 'string') {
    return undefined;
  }
  return { run: raw.run, before: raw.before, after: raw.after };
}

/** The note URIs of a `livenote/notesChanged` notification. */
export function parseNotesChanged(raw: unknown): string[] {
  if (!isRecord(raw) || !Array.isArray(raw.uris)) {
    return [];
  }
  return raw.uris.filter((u): u is string => typeof u === 'string');
}

/** What `livenote.ask` answers. */
export interface AskResult {
  /** One or two sentences saying what the model did or found. */
  reply: string;
  /** The note's text changes (they come as one workspace/applyEdit of their own). */
  changed: boolean;
  /** The tools that acted, e.g. `["extend_objective", "run_now"]`. */
  actions: string[];
  /** No model is configured: `reply` says how to configure one and what to run instead. */
  noModel: boolean;
}

/** Read a `livenote.ask` result; undefined when it has no reply. */
export function parseAskResult(raw: unknown): AskResult | undefined {
  if (!isRecord(raw) || typeof raw.reply !== 'string') {
    return undefined;
  }
  return {
    reply: raw.reply,
    changed: raw.changed === true,
    actions: Array.isArray(raw.actions) ? raw.actions.filter((a): a is string => typeof a === 'string') : [],
    noModel: raw.noModel === true,
  };
}

/**
 * The sentence of a `livenote.ask` call, or undefined when the call is the code action's
 * one-argument form (or an empty sentence), which the client answers by prompting.
 */
export function askSentence(args: readonly unknown[]): string | undefined {
  const sentence = args[1];
  return typeof sentence === 'string' && sentence.trim() !== '' ? sentence : undefined;
}

export type NotifyOutcome = 'changed' | 'unchanged' | 'failed';

/** One note of a `livenote/notify`. */
export interface NotifyNote {
  uri: string;
  path: string;
  title: string;
  trigger: string;
  outcome: NotifyOutcome;
  summary: string | null;
  added: number;
  removed: number;
  runId: string | null;
}

export interface NotifyParams {
  /** One line, ready to show. */
  message: string;
  /** Several notes within a minute, told as one. */
  digest: boolean;
  notes: NotifyNote[];
}

function outcome(v: unknown): NotifyOutcome {
  return v === 'changed' || v === 'failed' ? v : 'unchanged';
}

/** Read a `livenote/notify`; undefined without a message (nothing to show). */
export function parseNotify(raw: unknown): NotifyParams | undefined {
  if (!isRecord(raw) || typeof raw.message !== 'string' || raw.message.trim() === '') {
    return undefined;
  }
  const notes = Array.isArray(raw.notes)
    ? raw.notes.filter(isRecord).flatMap((n): NotifyNote[] =>
        typeof n.uri === 'string' && n.uri !== ''
          ? [
              {
                uri: n.uri,
                path: typeof n.path === 'string' ? n.path : '',
                title: typeof n.title === 'string' ? n.title : '',
                trigger: typeof n.trigger === 'string' ? n.trigger : '',
                outcome: outcome(n.outcome),
                summary: optString(n.summary),
                added: optNumber(n.added) ?? 0,
                removed: optNumber(n.removed) ?? 0,
                runId: typeof n.runId === 'string' && n.runId !== '' ? n.runId : null,
              },
            ]
          : [],
      )
    : [];
  return { message: raw.message, digest: raw.digest === true, notes };
}
