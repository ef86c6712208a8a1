import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAKE_LIVE_DESCRIBE_TITLE, withMakeLiveDescribe } from '../src/codeActions';
import { UiCommand } from '../src/protocol';

describe('the light bulb', () => {
  it('adds "Make live…" (asks for a sentence) after the server\'s "Make live"', () => {
    const got = withMakeLiveDescribe([{ title: 'Fix cron' }, { title: 'Make live' }, { title: 'Make live: Rust releases' }]);
    assert.deepEqual(got, [
      { title: 'Fix cron' },
      { title: 'Make live' },
      { title: MAKE_LIVE_DESCRIBE_TITLE, command: UiCommand.makeLiveDescribe },
      { title: 'Make live: Rust releases' },
    ]);
  });

  it('leaves a live note\'s actions, and no answer, as they are', () => {
    const live = [{ title: 'Run now' }, { title: 'Pause' }];
    assert.equal(withMakeLiveDescribe(live), live);
    assert.equal(withMakeLiveDescribe(null), null);
    assert.equal(withMakeLiveDescribe(undefined), undefined);
  });
});
