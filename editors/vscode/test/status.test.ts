import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

process.env.TZ = 'UTC';

import { parseNoteStatus, UiCommand, type LiveNoteStatus } from '../src/protocol';
import { noteStatusView, serverStateView, UNTRUSTED_LINE } from '../src/status';

const now = new Date('2026-05-08T15:00:00.000Z');
const ctx = { now, workspaceTrusted: true };

function live(overrides: Partial<LiveNoteStatus>): LiveNoteStatus {
  return {
    live: true,
    status: 'live',
    active: true,
    lastRunAt: '2026-05-08T14:55:00.000Z',
    lastAttemptAt: '2026-05-08T14:54:59.000Z',
    lastRunError: null,
    nextDue: '2026-05-08T16:00:00+00:00',
    due: null,
    schedulerEnabled: true,
    ...overrides,
  };
}

describe('noteStatusView', () => {
  it('passive: offers Make live', () => {
    const v = noteStatusView({ live: false }, ctx);
    assert.equal(v.text, '$(circle-outline) Passive');
    assert.equal(v.command, UiCommand.makeLive);
    assert.match(v.tooltip, /passive/);
    assert.match(v.tooltip, /Click to make it live/);
    assert.equal(v.background, undefined);
  });

  it('live: last run age, next due, click runs', () => {
    const v = noteStatusView(live({}), ctx);
    assert.equal(v.text, '$(pulse) Live · 5 min ago');
    assert.equal(v.command, UiCommand.run);
    assert.equal(
      v.tooltip,
      [
        'livenote: this note is live.',
        'Last run: 14:55 (5 min ago)',
        'Next due: 16:00 (in 1 h)',
        'Click to run it now.',
      ].join('\n'),
    );
  });

  it('live, never run, manual only', () => {
    const v = noteStatusView(live({ lastRunAt: null, lastAttemptAt: null, nextDue: null }), ctx);
    assert.equal(v.text, '$(pulse) Live · never run');
    assert.match(v.tooltip, /^Last run: never$/m);
    assert.match(v.tooltip, /^Next due: manual only/m);
  });

  it('live and due now names the trigger', () => {
    const v = noteStatusView(live({ due: 'cron' }), ctx);
    assert.match(v.tooltip, /^Due now \(cron\)$/m);
  });

  it('running: spinner, click stops', () => {
    const v = noteStatusView(live({ status: 'running', lastAttemptAt: '2026-05-08T14:58:00.000Z' }), ctx);
    assert.equal(v.text, '$(sync~spin) Updating…');
    assert.equal(v.command, UiCommand.stop);
    assert.match(v.tooltip, /^Started 2 min ago$/m);
    assert.doesNotMatch(v.tooltip, /Next due/);
    assert.match(v.tooltip, /Click to stop/);
  });

  it('failed: age of the failed attempt, error in tooltip, click retries', () => {
    const v = noteStatusView(
      live({
        status: 'failed',
        lastRunAt: '2026-05-07T10:00:00.000Z',
        lastAttemptAt: '2026-05-08T14:55:00.000Z',
        lastRunError: 'provider "local": connection refused',
      }),
      ctx,
    );
    assert.equal(v.text, '$(error) Failed 5 min ago');
    assert.equal(v.command, UiCommand.run);
    assert.equal(v.background, 'error');
    assert.match(v.tooltip, /^Last error: provider "local": connection refused$/m);
    assert.match(v.tooltip, /^Last run: 2026-05-07 10:00 \(yesterday\)$/m);
  });

  it('failed: the tooltip names the retry the server computed, not a fixed backoff', () => {
    const v = noteStatusView(
      live({
        status: 'failed',
        lastAttemptAt: '2026-05-08T14:55:00.000Z',
        lastRunError: 'boom',
        nextDue: '2026-05-08T15:15:00+00:00',
        retryAt: '2026-05-08T15:15:00+00:00',
        failures: 3,
      }),
      ctx,
    );
    const first = v.tooltip.split('\n')[0];
    assert.equal(first, 'livenote: the latest run of this note failed; scheduled runs retry it at 15:15 (in 15 min, 3rd failure).');
    assert.doesNotMatch(v.tooltip, /5-minute/);
  });

  it('failed: says why nothing retries it when nothing will', () => {
    const failing = { status: 'failed' as const, lastRunError: 'boom', nextDue: null };
    const none = noteStatusView(live(failing), ctx).tooltip.split('\n')[0];
    assert.equal(none, 'livenote: the latest run of this note failed; nothing retries it on its own (no scheduled run ahead).');
    // No retry time from the server (an older note without `failures`): its next fire.
    const next = noteStatusView(live({ ...failing, nextDue: '2026-05-08T16:00:00+00:00' }), ctx).tooltip.split('\n')[0];
    assert.equal(next, 'livenote: the latest run of this note failed; its next scheduled run is at 16:00 (in 1 h).');
    const off = noteStatusView(live({ ...failing, schedulerEnabled: false }), ctx).tooltip;
    assert.match(off, /^livenote: the latest run of this note failed; scheduled runs are off/);
    const elsewhere = noteStatusView(live({ ...failing, scheduledOn: 'nas' }), ctx).tooltip;
    assert.match(elsewhere, /^livenote: the latest run of this note failed; scheduled runs retry it on nas\.$/m);
  });

  it('stopped: not a failure, no error line, click runs', () => {
    const v = noteStatusView(
      live({ status: 'stopped', lastAttemptAt: '2026-05-08T14:50:00.000Z', lastRunError: 'stopped' }),
      ctx,
    );
    assert.equal(v.text, '$(debug-stop) Stopped 10 min ago');
    assert.equal(v.command, UiCommand.run);
    assert.equal(v.background, undefined);
    assert.match(v.tooltip, /not a failure/);
    assert.doesNotMatch(v.tooltip, /Last error/);
    assert.match(v.tooltip, /^Next due: 16:00 \(in 1 h\)$/m);
  });

  it('paused: click runs by hand, no next due', () => {
    const v = noteStatusView(live({ status: 'paused', active: false, nextDue: null }), ctx);
    assert.equal(v.text, '$(debug-pause) Paused');
    assert.equal(v.command, UiCommand.run);
    assert.match(v.tooltip, /^Next due: none while paused$/m);
  });

  it('expired: says when it ended, no next due, click runs by hand', () => {
    const v = noteStatusView(
      live({ status: 'expired', nextDue: null, until: '2026-05-01T00:00:00.000+00:00' }),
      ctx,
    );
    assert.match(v.text, /^\$\(history\) Expired 2026-05-0[12] \d\d:00$/);
    assert.equal(v.command, UiCommand.run);
    assert.match(v.tooltip, /^Next due: none \(ended /m);
    assert.match(v.tooltip, /extend or remove until/);
  });

  it('untrusted: click trusts the workspace', () => {
    const v = noteStatusView(live({ status: 'untrusted' }), ctx);
    assert.equal(v.text, '$(shield) Waiting for trust');
    assert.equal(v.command, UiCommand.trustWorkspace);
    assert.equal(v.background, 'warning');
  });

  it('invalid: click shows the problems, no next due', () => {
    const v = noteStatusView(live({ status: 'invalid', nextDue: null }), ctx);
    assert.equal(v.text, '$(warning) Invalid');
    assert.equal(v.command, UiCommand.showProblems);
    assert.doesNotMatch(v.tooltip, /Next due/);
  });

  it('says in the tooltip when VS Code does not trust the workspace', () => {
    for (const status of [{ live: false } as const, live({}), live({ status: 'paused' })]) {
      const v = noteStatusView(status, { now, workspaceTrusted: false });
      assert.ok(v.tooltip.includes(UNTRUSTED_LINE), v.tooltip);
    }
    assert.ok(!noteStatusView(live({}), ctx).tooltip.includes(UNTRUSTED_LINE));
  });

  it('says when the scheduler is off by configuration', () => {
    const v = noteStatusView(live({ schedulerEnabled: false }), ctx);
    assert.match(v.tooltip, /scheduler\.enabled is false/);
  });
});

describe('parseNoteStatus', () => {
  it('reads passive and live results', () => {
    assert.deepEqual(parseNoteStatus({ live: false }), { live: false });
    // A complete live result comes back field for field.
    const result = {
      live: true,
      status: 'failed',
      active: true,
      lastRunAt: null,
      lastAttemptAt: '2026-05-08T14:55:00.000Z',
      lastRunError: 'boom',
      nextDue: null,
      due: 'window',
      schedulerEnabled: false,
    };
    assert.deepEqual(parseNoteStatus(result), result);
  });
  it('reads the retry, the failure count, the host and until when the server sends them', () => {
    const s = parseNoteStatus({
      live: true,
      status: 'failed',
      retryAt: '2026-05-08T15:15:00+00:00',
      failures: 3,
      scheduledOn: 'nas',
      until: '2026-06-01T00:00:00+00:00',
    });
    assert.ok(s?.live);
    assert.equal(s.retryAt, '2026-05-08T15:15:00+00:00');
    assert.equal(s.failures, 3);
    assert.equal(s.scheduledOn, 'nas');
    assert.equal(s.until, '2026-06-01T00:00:00+00:00');
    assert.equal(parseNoteStatus({ live: true, status: 'stopped' })?.live && 'stopped', 'stopped');
  });
  it('tolerates missing fields and unknown statuses', () => {
    const s = parseNoteStatus({ live: true, status: 'brand-new' });
    assert.equal(s?.live, true);
    assert.equal(s?.live && s.status, 'live');
    assert.equal(s?.live && s.schedulerEnabled, true);
  });
  it('rejects non-results', () => {
    assert.equal(parseNoteStatus(null), undefined);
    assert.equal(parseNoteStatus([]), undefined);
    assert.equal(parseNoteStatus({ status: 'live' }), undefined);
  });
});

describe('serverStateView', () => {
  it('missing: click shows the install steps', () => {
    const v = serverStateView({ kind: 'missing', message: 'not found on PATH' });
    assert.equal(v.command, UiCommand.showServerMissing);
    assert.match(v.text, /not found/);
    assert.match(v.tooltip, /not found on PATH/);
  });
  it('stopped: click restarts', () => {
    const v = serverStateView({ kind: 'stopped', message: 'exit 101' });
    assert.equal(v.command, UiCommand.restartServer);
    assert.match(v.tooltip, /exit 101/);
  });
  it('status error: click shows output', () => {
    const v = serverStateView({ kind: 'statusError', message: 'Unknown command' });
    assert.equal(v.command, UiCommand.showOutput);
    assert.match(v.tooltip, /Unknown command/);
  });
  it('starting: spinner', () => {
    assert.equal(serverStateView({ kind: 'starting' }).text, '$(loading~spin) livenote');
  });
});
