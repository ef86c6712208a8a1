import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  bundledServerPath,
  INSTALL_COMMAND,
  isExecutableFile,
  resolveServerPath,
  serverLaunch,
  vsceTarget,
  type ResolveInput,
  type ServerLaunchInput,
} from '../src/serverPath';

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
    assert.equal(r.installCommand, 'cargo install --locked --path server');
  });

  it('says this package has no bundled server and names the platform package for this machine', () => {
    const r = resolveServerPath(input([], { arch: 'arm64', platform: 'darwin' }));
    assert.ok(!r.ok);
    assert.match(r.message, /This livenote package has no bundled server; the platform packages livenote-<platform>\.vsix \(for this machine: livenote-darwin-arm64\.vsix\) carry one\./);
    const unknown = resolveServerPath(input([], { arch: 's390x' }));
    assert.ok(!unknown.ok);
    assert.match(unknown.message, /the platform packages livenote-<platform>\.vsix carry one\./);
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

describe('resolveServerPath with a bundled server', () => {
  const ext = '/home/ann/.vscode/extensions/livenote.livenote-0.1.0-linux-x64';
  const bundled = `${ext}/server/livenote`;

  it('finds the bundled server first, before livenote on PATH', () => {
    const r = resolveServerPath(input([bundled, '/usr/bin/livenote'], { extensionPath: ext }));
    assert.deepEqual(r, { ok: true, path: bundled, source: 'bundled' });
  });

  it('prefers the bundled server to livenote.path, and says which setting it overrode', () => {
    const r = resolveServerPath(input([bundled, '/opt/livenote'], { extensionPath: ext, setting: ' /opt/livenote ' }));
    assert.deepEqual(r, { ok: true, path: bundled, source: 'bundled', overriddenSetting: '/opt/livenote' });
  });

  it('without a bundled server: livenote.path, then PATH', () => {
    const setting = resolveServerPath(input(['/opt/livenote', '/usr/bin/livenote'], { extensionPath: ext, setting: '/opt/livenote' }));
    assert.deepEqual(setting, { ok: true, path: '/opt/livenote', source: 'setting' });
    const onPath = resolveServerPath(input(['/usr/bin/livenote'], { extensionPath: ext }));
    assert.deepEqual(onPath, { ok: true, path: '/usr/bin/livenote', source: 'PATH' });
  });

  it('a bundled file that is not executable falls through', () => {
    // isExecutable answers for the bundled path only when the file exists and may run.
    const seen: string[] = [];
    const r = resolveServerPath(
      input([], {
        extensionPath: ext,
        isExecutable: (f) => {
          seen.push(f);
          return f === '/usr/bin/livenote';
        },
      }),
    );
    assert.deepEqual(r, { ok: true, path: '/usr/bin/livenote', source: 'PATH' });
    assert.equal(seen[0], bundled);
  });

  it('on Windows, the bundled server is server\\livenote.exe', () => {
    const winExt = 'C:\\Users\\ann\\.vscode\\extensions\\livenote.livenote-0.1.0-win32-x64';
    assert.equal(bundledServerPath(winExt, 'win32'), `${winExt}\\server\\livenote.exe`);
    const win = { platform: 'win32' as const, homedir: 'C:\\Users\\ann', pathEnv: 'C:\\tools', extensionPath: winExt };
    const r = resolveServerPath(input([`${winExt}\\server\\livenote.exe`, 'C:\\tools\\livenote.EXE'], win));
    assert.deepEqual(r, { ok: true, path: `${winExt}\\server\\livenote.exe`, source: 'bundled' });
    // A server/livenote without .exe is not what a Windows package carries.
    const noExe = resolveServerPath(input([`${winExt}\\server\\livenote`, 'C:\\tools\\livenote.EXE'], win));
    assert.deepEqual(noExe, { ok: true, path: 'C:\\tools\\livenote.EXE', source: 'PATH' });
  });
});

describe('vsceTarget', () => {
  it('names the vsce target of each platform livenote is built for', () => {
    assert.equal(vsceTarget('linux', 'x64'), 'linux-x64');
    assert.equal(vsceTarget('linux', 'arm64'), 'linux-arm64');
    assert.equal(vsceTarget('linux', 'arm'), 'linux-armhf');
    assert.equal(vsceTarget('darwin', 'arm64'), 'darwin-arm64');
    assert.equal(vsceTarget('darwin', 'x64'), 'darwin-x64');
    assert.equal(vsceTarget('win32', 'x64'), 'win32-x64');
    assert.equal(vsceTarget('win32', 'ia32'), undefined);
    assert.equal(vsceTarget('freebsd', 'x64'), undefined);
  });
});

describe('serverLaunch', () => {
  const base: ServerLaunchInput = {
    command: '/usr/bin/livenote',
    logFile: undefined,
    workspaceFolder: '/work/notes',
    homedir: '/home/ann',
    platform: 'linux',
  };

  it('starts `livenote lsp` in the first workspace folder, without a log file by default', () => {
    assert.deepEqual(serverLaunch(base), { command: '/usr/bin/livenote', args: ['lsp'], options: { cwd: '/work/notes' } });
    assert.deepEqual(serverLaunch({ ...base, logFile: '  ' }).args, ['lsp']);
    assert.deepEqual(serverLaunch({ ...base, workspaceFolder: undefined }).options, {});
  });

  it('passes livenote.logFile as --log-file, ~ expanded', () => {
    assert.deepEqual(serverLaunch({ ...base, logFile: '~/logs/livenote.log' }).args, [
      'lsp',
      '--log-file',
      '/home/ann/logs/livenote.log',
    ]);
    assert.deepEqual(serverLaunch({ ...base, logFile: '/tmp/livenote.log' }).args, ['lsp', '--log-file', '/tmp/livenote.log']);
    assert.deepEqual(serverLaunch({ ...base, logFile: 'livenote.log' }).args, ['lsp', '--log-file', '/work/notes/livenote.log']);
    assert.deepEqual(
      serverLaunch({ ...base, platform: 'win32', homedir: 'C:\\Users\\ann', workspaceFolder: undefined, logFile: '~\\livenote.log' }).args,
      ['lsp', '--log-file', 'C:\\Users\\ann\\livenote.log'],
    );
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
