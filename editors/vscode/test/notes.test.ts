import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

process.env.TZ = 'UTC';

import { describeTriggers, noteCandidates, notePickItems } from '../src/notes';
import { parseListNotes } from '../src/protocol';

const now = new Date('2026-05-08T15:00:00.000Z');

// The shape `livenote list --format json` / livenote.listNotes produce.
const listNotes = [
  {
    path: 'projects/q3.md',
    active: true,
    status: 'failed',
    triggers: { eventMatchCriteria: 'Emails about Q3 planning' },
    due: null,
    nextDue: null,
    lastRunAt: '2026-05-06T15:00:00.000Z',
    lastAttemptAt: '2026-05-08T14:50:00.000Z',
    lastRunError: 'provider "claude": ANTHROPIC_API_KEY is not set',
  },
  {
    path: 'clock.md',
    active: true,
    status: 'live',
    triggers: { cronExpr: '0 * * * *', windows: [{ startTime: '09:00', endTime: '12:00' }] },
    due: null,
    nextDue: '2026-05-08T16:00:00+00:00',
    lastRunAt: '2026-05-08T14:55:00.123Z',
    lastAttemptAt: '2026-05-08T14:55:00.000Z',
    lastRunError: null,
  },
  {
    path: 'paused.md',
    active: false,
    status: 'paused',
    triggers: {},
    due: null,
    nextDue: null,
    lastRunAt: null,
    lastAttemptAt: null,
    lastRunError: null,
  },
];

describe('notePickItems', () => {
  it('one item per note, sorted by path, with status, last run, triggers and next due', () => {
    const items = notePickItems(parseListNotes(listNotes), now);
    assert.deepEqual(items, [
      {
        label: 'clock.md',
        description: '$(pulse) Live · last run 4 min ago',
        detail: 'cron 0 * * * * · window 09:00–12:00 · next 16:00 (in 1 h)',
        notePath: 'clock.md',
      },
      {
        label: 'paused.md',
        description: '$(debug-pause) Paused · never run',
        detail: 'manual only',
        notePath: 'paused.md',
      },
      {
        label: 'projects/q3.md',
        description: '$(error) Failed · last run 2 days ago',
        detail: 'event “Emails about Q3 planning” · error: provider "claude": ANTHROPIC_API_KEY is not set',
        notePath: 'projects/q3.md',
      },
    ]);
  });

  it('shows a stopped run as stopped, without "error: stopped"', () => {
    const [item] = notePickItems(
      parseListNotes([{ ...listNotes[1], status: 'stopped', lastRunError: 'stopped' }]),
      now,
    );
    assert.equal(item?.description, '$(debug-stop) Stopped · last run 4 min ago');
    assert.equal(item?.detail, 'cron 0 * * * * · window 09:00–12:00 · next 16:00 (in 1 h)');
  });

  it('shows a due trigger instead of the next time', () => {
    const [item] = notePickItems(
      parseListNotes([{ ...listNotes[1], due: 'window', status: 'live' }]),
      now,
    );
    assert.equal(item?.detail, 'cron 0 * * * * · window 09:00–12:00 · due now (window)');
  });

  it('shortens long criteria and errors', () => {
    const long = 'x'.repeat(200);
    assert.equal(describeTriggers({ eventMatchCriteria: long }), `event “${'x'.repeat(59)}…”`);
  });

  it('drops malformed items', () => {
    assert.deepEqual(parseListNotes([{ status: 'live' }, null, 3, { path: '' }]), []);
    assert.deepEqual(parseListNotes({ not: 'a list' }), []);
  });
});

describe('noteCandidates', () => {
  it('tries the path in each workspace folder', () => {
    assert.deepEqual(noteCandidates('sub/a.md', ['/w/one', '/w/two']), ['/w/one/sub/a.md', '/w/two/sub/a.md']);
  });
  it('keeps an absolute path (a note outside every root)', () => {
    assert.deepEqual(noteCandidates('/elsewhere/a.md', ['/w/one']), ['/elsewhere/a.md']);
  });
});
