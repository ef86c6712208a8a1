import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

// Clock times are local: pin the zone so "15:00" means the same on every machine.
process.env.TZ = 'UTC';

import { formatAgo, formatClock, formatIn, formatWhen, parseTime } from '../src/time';

const now = new Date('2026-05-08T15:00:00.000Z');
const before = (ms: number): string => new Date(now.getTime() - ms).toISOString();
const after = (ms: number): string => new Date(now.getTime() + ms).toISOString();
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('formatAgo', () => {
  const cases: [string, string][] = [
    [before(0), 'just now'],
    [before(59 * S), 'just now'],
    [before(60 * S), '1 min ago'],
    [before(5 * M + 30 * S), '5 min ago'],
    [before(59 * M + 59 * S), '59 min ago'],
    [before(H), '1 h ago'],
    [before(23 * H + 59 * M), '23 h ago'],
    [before(D), 'yesterday'],
    [before(2 * D - S), 'yesterday'],
    [before(2 * D), '2 days ago'],
    [before(40 * D), '40 days ago'],
    // The server's clock a little ahead of ours is not "in the future".
    [after(20 * S), 'just now'],
  ];
  for (const [iso, expected] of cases) {
    it(`${iso} -> ${expected}`, () => assert.equal(formatAgo(iso, now), expected));
  }

  it('reads the server forms: millisecond UTC and offsets', () => {
    assert.equal(formatAgo('2026-05-08T14:55:00.123Z', now), '4 min ago');
    assert.equal(formatAgo('2026-05-08T09:50:00-05:00', now), '10 min ago');
  });

  it('gives undefined for missing or broken timestamps', () => {
    assert.equal(formatAgo(null, now), undefined);
    assert.equal(formatAgo(undefined, now), undefined);
    assert.equal(formatAgo('', now), undefined);
    assert.equal(formatAgo('not a time', now), undefined);
  });
});

describe('formatIn', () => {
  it('words future times', () => {
    assert.equal(formatIn(after(30 * S), now), 'in less than a minute');
    assert.equal(formatIn(after(4 * M + 10 * S), now), 'in 5 min');
    assert.equal(formatIn(after(2 * H + 5 * M), now), 'in 2 h');
    assert.equal(formatIn(after(D + H), now), 'tomorrow');
    assert.equal(formatIn(after(3 * D), now), 'in 3 days');
  });
  it('says now once the time has come', () => {
    assert.equal(formatIn(now.toISOString(), now), 'now');
    assert.equal(formatIn(before(M), now), 'now');
  });
});

describe('formatClock and formatWhen', () => {
  it('shows HH:MM on the same day and the date otherwise', () => {
    assert.equal(formatClock('2026-05-08T16:05:00Z', now), '16:05');
    assert.equal(formatClock('2026-05-09T09:00:00Z', now), '2026-05-09 09:00');
    assert.equal(formatClock('2026-05-08T10:00:00-05:00', now), '15:00');
  });
  it('combines clock and relative time', () => {
    assert.equal(formatWhen('2026-05-08T15:12:00Z', now), '15:12 (in 12 min)');
    assert.equal(formatWhen('2026-05-08T14:55:00Z', now), '14:55 (5 min ago)');
    assert.equal(formatWhen(null, now), undefined);
  });
  it('parseTime rejects garbage', () => {
    assert.equal(parseTime('2026-13-45T99:00:00Z'), undefined);
    assert.equal(parseTime('2026-05-08T15:00:00Z')?.getTime(), now.getTime());
  });
});
