import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { INSTALL_COMMAND, isExecutableFile, resolveServerPath, type ResolveInput } from '../src/serverPath';

function input(files: string[], overrides: Partial<ResolveInput>): ResolveInput {
  const set = new Set(files);
  return {
    setting: undefined,
    workspaceFolder: '/work/notes',
    homedir: '/home/ann',
    pathEnv: '/usr/local/bin:/usr/bin',
    platform: 'linux',
    isExecutable: (f) => set.has(f),
    ...overrides,
  };
}

describe('resolveServerPath', () => {
  it('finds livenote on PATH, first directory first', () => {
    const r = resolveServerPath(input(['/usr/bin/livenote', '/usr/local/bin/livenote'], {}));
    assert.deepEqual(r, { ok: true, path: '/usr/local/bin/livenote', source: 'PATH' });
  });

  it('skips empty and relative PATH entries', () => {
    const r = resolveServerPath(input(['livenote', '/opt/ln/livenote'], { pathEnv: ':.:bin:/opt/ln' }));
    assert.deepEqual(r, { ok: true, path: '/opt/ln/livenote', source: 'PATH' });
  });

  it('explains how to install when livenote is not on PATH', () => {
    const r = resolveServerPath(input([], {}));
    assert.equal(r.ok, false);
    assert.ok(!r.ok);
    assert.match(r.message, /not found on PATH/);
    assert.ok(r.message.includes(INSTALL_COMMAND));
    assert.match(r.message, /livenote\.path/);
    assert.equal(r.installCommand, 'cargo install --path server');
  });

  it('uses an absolute setting', () => {
    const r = resolveServerPath(input(['/opt/livenote/bin/livenote'], { setting: '/opt/livenote/bin/livenote' }));
    assert.deepEqual(r, { ok: true, path: '/opt/livenote/bin/livenote', source: 'setting' });
  });

  it('expands ~', () => {
    const r = resolveServerPath(input(['/home/ann/.cargo/bin/livenote'], { setting: '~/.cargo/bin/livenote' }));
    assert.deepEqual(r, { ok: true, path: '/home/ann/.cargo/bin/livenote', source: 'setting' });
  });

  it('resolves a relative setting against the first workspace folder', () => {
    const r = resolveServerPath(
      input(['/work/notes/target/debug/livenote'], { setting: './target/debug/livenote' }),
    );
    assert.deepEqual(r, { ok: true, path: '/work/notes/target/debug/livenote', source: 'setting' });
    const up = resolveServerPath(input(['/work/livenote/target/debug/livenote'], { setting: '../livenote/target/debug/livenote' }));
    assert.deepEqual(up, { ok: true, path: '/work/livenote/target/debug/livenote', source: 'setting' });
  });

  it('fails clearly for a relative setting without a folder', () => {
    const r = resolveServerPath(input([], { setting: 'bin/livenote', workspaceFolder: undefined }));
    assert.ok(!r.ok);
    assert.match(r.message, /no workspace folder/);
  });

  it('looks a bare name up on PATH', () => {
    const r = resolveServerPath(input(['/usr/bin/livenote-dev'], { setting: 'livenote-dev' }));
    assert.deepEqual(r, { ok: true, path: '/usr/bin/livenote-dev', source: 'setting' });
  });

  it('does not fall back to PATH when the setting points nowhere', () => {
    const r = resolveServerPath(input(['/usr/bin/livenote'], { setting: '/nope/livenote' }));
    assert.ok(!r.ok);
    assert.match(r.message, /no executable file at \/nope\/livenote/);
    assert.ok(r.message.includes(INSTALL_COMMAND));
  });

  it('treats a blank setting as unset', () => {
    const r = resolveServerPath(input(['/usr/bin/livenote'], { setting: '   ' }));
    assert.deepEqual(r, { ok: true, path: '/usr/bin/livenote', source: 'PATH' });
  });

  it('on Windows, searches PATH with PATHEXT', () => {
    const r = resolveServerPath(
      input(['C:\\tools\\livenote.EXE'], {
        platform: 'win32',
        pathEnv: 'C:\\Windows;C:\\tools',
        pathExt: '.COM;.EXE',
        homedir: 'C:\\Users\\ann',
      }),
    );
    assert.deepEqual(r, { ok: true, path: 'C:\\tools\\livenote.EXE', source: 'PATH' });
    const home = resolveServerPath(
      input(['C:\\Users\\ann\\.cargo\\bin\\livenote.exe'], {
        platform: 'win32',
        setting: '~\\.cargo\\bin\\livenote.exe',
        homedir: 'C:\\Users\\ann',
      }),
    );
    assert.deepEqual(home, { ok: true, path: 'C:\\Users\\ann\\.cargo\\bin\\livenote.exe', source: 'setting' });
  });
});

describe('isExecutableFile', () => {
  it('accepts an executable file and rejects the rest', { skip: process.platform === 'win32' }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'livenote-path-'));
    try {
      const exe = path.join(dir, 'livenote');
      fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
      const plain = path.join(dir, 'plain');
      fs.writeFileSync(plain, '', { mode: 0o644 });
      assert.equal(isExecutableFile(exe), true);
      assert.equal(isExecutableFile(plain), false);
      assert.equal(isExecutableFile(dir), false);
      assert.equal(isExecutableFile(path.join(dir, 'missing')), false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
