import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

process.env.TZ = 'UTC';

import { parseHistory, parseListNotes, parseNotesChanged, parseRunDiff } from '../src/protocol';
import { folderOf, formatDuration, noteTree, parseRunSide, runRow, runSideQuery, type FolderRow, type NoteRow } from '../src/viewModel';

const now = new Date('2026-05-08T15:00:00.000Z');

// The shape `livenote/listNotes` answers.
const list = parseListNotes([
  {
    path: 'work/q3.md',
    title: 'Q3 planning',
    active: true,
    status: 'failed',
    triggers: { eventMatchCriteria: 'Emails about Q3' },
    due: null,
    nextDue: null,
    lastRunAt: '2026-05-06T15:00:00.000Z',
    lastAttemptAt: '2026-05-08T14:50:00.000Z',
    lastRunError: 'provider "claude": ANTHROPIC_API_KEY is not set',
    lastRunSummary: null,
  },
  {
    path: 'clock.md',
    title: 'Clock',
    active: true,
    status: 'live',
    triggers: { cronExpr: '0 * * * *' },
    due: null,
    nextDue: '2026-05-08T16:00:00+00:00',
    lastRunAt: '2026-05-08T14:55:00.123Z',
    lastAttemptAt: '2026-05-08T14:55:00.000Z',
    lastRunError: null,
    lastRunSummary: 'Updated the time',
  },
  { path: 'work/deep/paused.md', active: false, status: 'paused', triggers: {}, due: null, nextDue: null, lastRunAt: null, lastAttemptAt: null, lastRunError: null },
  { path: 'work/busy.md', title: 'Busy', active: true, status: 'running', triggers: {}, due: null, nextDue: null, lastRunAt: null, lastAttemptAt: null, lastRunError: null },
]);

function render(rows: (NoteRow | FolderRow)[]): string[] {
  return rows.flatMap((r) =>
    r.kind === 'folder'
      ? [`[${r.folder}]`, ...r.notes.map((n) => `  ${n.label} | ${n.description} | ${n.icon} | ${n.contextValue}`)]
      : [`${r.label} | ${r.description} | ${r.icon} | ${r.contextValue}`],
  );
}

describe('the Live notes view', () => {
  it('groups notes by folder, root notes first, each with its status, next fire and last run', () => {
    assert.deepEqual(render(noteTree(list, now)), [
      'Clock | last run 4 min ago · next 16:00 | pulse | note runnable pausable',
      '[work]',
      '  Busy | updating… · never run | sync~spin | note stoppable pausable',
      '  Q3 planning | failed · last run 2 days ago · manual only | error | note runnable pausable',
      '[work/deep]',
      '  paused | paused · never run | debug-pause | note runnable resumable',
    ]);
  });

  it('shows a stopped run as stopped, not failed, with its next fire and no error', () => {
    const rows = noteTree(
      parseListNotes([
        {
          path: 'slow.md',
          title: 'Slow',
          active: true,
          status: 'stopped',
          triggers: { cronExpr: '0 * * * *' },
          due: null,
          nextDue: '2026-05-08T16:00:00+00:00',
          lastRunAt: '2026-05-08T14:00:00.000Z',
          lastAttemptAt: '2026-05-08T14:55:00.000Z',
          lastRunError: 'stopped',
          lastRunSummary: 'Updated the list',
        },
      ]),
      now,
    );
    assert.deepEqual(render(rows), ['Slow | stopped · last run 1 h ago · next 16:00 | debug-stop | note runnable pausable']);
    assert.doesNotMatch((rows[0] as NoteRow).tooltip, /Error/);
  });

  it('keeps its order whatever order the server lists in', () => {
    assert.deepEqual(render(noteTree([...list].reverse(), now)), render(noteTree(list, now)));
  });

  it('says in the tooltip what the last run did', () => {
    const clock = noteTree(list, now)[0] as NoteRow;
    assert.equal(clock.tooltip, 'clock.md\nNext: 16:00 (in 1 h)\nLast run: Updated the time');
  });

  it('takes the folder from the server path on any system', () => {
    assert.equal(folderOf('a/b/c.md'), 'a/b');
    assert.equal(folderOf('a\\b.md'), 'a');
    assert.equal(folderOf('c.md'), '');
  });
});

describe('the Runs view', () => {
  // The shape `livenote/noteHistory` answers (`livenote history --format json`).
  const runs = parseHistory([
    {
      id: '01JTZ6Y0000000000000000000',
      time: '2026-05-08T14:55:00.000Z',
      trigger: 'cron',
      outcome: 'done',
      summary: 'Updated the time',
      linesAdded: 3,
      linesRemoved: 1,
      snapshot: true,
      tokens: { input: 12000, output: 345, cached: 10000 },
      modelCalls: 2,
      toolCalls: {},
      durationMs: 4210,
    },
    { id: '01JTZ5Y0000000000000000000', time: '2026-05-07T09:00:00.000Z', trigger: null, outcome: 'unknown', summary: null, linesAdded: null, linesRemoved: null, snapshot: false },
    { time: 'no id: dropped' },
  ]);

  it('shows each run with its trigger, outcome, lines, tokens and duration', () => {
    const rows = runs.map((r) => runRow(r, now));
    assert.deepEqual(
      rows.map((r) => `${r.label} | ${r.description} | ${r.icon} | ${r.contextValue}`),
      ['14:55 · cron | done · +3 −1 · 12,345 tokens · 4.2 s | pass | run diffable restorable', '2026-05-07 09:00 · ? | unknown | question | run'],
    );
    assert.match(rows[1]?.tooltip ?? "", /cannot be restored/);
  });

  it('formats long durations in minutes', () => {
    assert.equal(formatDuration(185_000), '3 min 5 s');
  });

  it("names each side of a run's diff in a URI query and reads it back", () => {
    const side = { note: 'file:///home/me/notes/a b.md', run: '01JTZ6Y0000000000000000000', side: 'before' as const };
    assert.deepEqual(parseRunSide(runSideQuery(side)), side);
    assert.equal(parseRunSide('note=x&run=y&side=sideways'), undefined);
  });

  it('reads the diff and the change notification defensively', () => {
    assert.deepEqual(parseRunDiff({ run: 'r', before: 'a', after: 'b' }), { run: 'r', before: 'a', after: 'b' });
    assert.equal(parseRunDiff({ run: 'r', before: 'a' }), undefined);
    assert.deepEqual(parseNotesChanged({ uris: ['file:///a.md', 3] }), ['file:///a.md']);
    assert.deepEqual(parseNotesChanged(null), []);
  });
});
