// The platform package (scripts/package-platform.sh) as VS Code installs it: its `extension/`
// folder unpacked into an extensions folder, file modes from the zip as VS Code's installer
// keeps them. The installed extension's own bundle (dist/extension.js), over the fake `vscode`
// module, must start the server it carries, even with `livenote.path` pointing at another
// binary and nothing on PATH. ci.sh sets LIVENOTE_PLATFORM_VSIX (and LIVENOTE_VSIX, the
// universal package); skipped otherwise.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as yauzl from 'yauzl';
import { bundledServerPath, isExecutableFile, resolveServerPath, vsceTarget } from '../src/serverPath';
import { createFakeVscode, FakeDocument, installFakeVscode, Uri, waitFor, type FakeVscode } from './fakeVscode';

const platformVsix = process.env.LIVENOTE_PLATFORM_VSIX;
const universalVsix = process.env.LIVENOTE_VSIX;
const target = vsceTarget(process.platform, process.arch);
const exe = process.platform === 'win32' ? 'livenote.exe' : 'livenote';

interface Unpacked {
  /** Every entry name in the zip. */
  entries: string[];
  /** extension.vsixmanifest, the package's metadata. */
  manifest: string;
}

/** Read a .vsix; with `dest`, write its `extension/` folder there as VS Code installs it. */
function unpack(vsix: string, dest?: string): Promise<Unpacked> {
  return new Promise((resolve, reject) => {
    yauzl.open(vsix, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const entries: string[] = [];
      let manifest = '';
      zip.on('error', reject);
      zip.on('end', () => resolve({ entries, manifest }));
      zip.on('entry', (entry: yauzl.Entry) => {
        entries.push(entry.fileName);
        const inExtension = entry.fileName.startsWith('extension/') && !entry.fileName.endsWith('/');
        if (entry.fileName !== 'extension.vsixmanifest' && !(dest && inExtension)) {
          zip.readEntry();
          return;
        }
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            const data = Buffer.concat(chunks);
            if (entry.fileName === 'extension.vsixmanifest') {
              manifest = data.toString('utf8');
            } else if (dest) {
              const file = path.join(dest, entry.fileName.slice('extension/'.length));
              fs.mkdirSync(path.dirname(file), { recursive: true });
              // As VS Code's installer: the permission bits stored with the entry (or rw-r--r--).
              const mode = (entry.externalFileAttributes >>> 16) & 0o777 || 0o644;
              fs.writeFileSync(file, data, { mode });
            }
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/** What both packages carry, beside the server (vsce renames the README, CHANGELOG and LICENSE). */
const EXTENSION_FILES = [
  'extension/LICENSE.txt',
  'extension/changelog.md',
  'extension/dist/extension.js',
  'extension/package.json',
  'extension/readme.md',
  'extension/syntaxes/livenote-frontmatter.tmLanguage.json',
];

const extensionEntries = (u: Unpacked): string[] => u.entries.filter((e) => e.startsWith('extension/')).sort();

describe('the platform package, installed', { skip: platformVsix ? false : 'LIVENOTE_PLATFORM_VSIX is not set (ci.sh sets it)' }, () => {
  let tmp: string;
  let installed: string;
  let unpacked: Unpacked;
  let fake: FakeVscode;
  let ext: { activate(c: unknown): Promise<void>; deactivate(): Promise<void> } | undefined;
  let otherBinary: string;

  before(async () => {
    assert.ok(platformVsix && fs.existsSync(platformVsix), `LIVENOTE_PLATFORM_VSIX=${platformVsix ?? ''} does not exist`);
    assert.ok(target, `no VS Code platform target for ${process.platform}-${process.arch}`);
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'livenote-vsix-')));
    // The folder name VS Code gives an installed platform package.
    installed = path.join(tmp, 'extensions', `livenote.livenote-0.1.0-${target}`);
    unpacked = await unpack(platformVsix, installed);
  });

  after(async () => {
    await ext?.deactivate();
    if (tmp) {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it(`is the ${target ?? '?'} package and carries the extension files and the server, nothing else`, () => {
    assert.match(unpacked.manifest, new RegExp(`TargetPlatform="${target ?? '?'}"`));
    assert.deepEqual(extensionEntries(unpacked), [...EXTENSION_FILES, `extension/server/${exe}`].sort());
  });

  it('installed, its server is executable and runs', () => {
    const server = bundledServerPath(installed, process.platform);
    assert.ok(isExecutableFile(server), `${server} is not an executable file`);
    const version = spawnSync(server, ['--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.match(version.stdout, /^livenote \d+\.\d+\.\d+/);
  });

  it('the resolver picks the bundled server over livenote.path, with an empty PATH', () => {
    // Another binary that does run: the setting is honoured only by the universal package.
    otherBinary = path.join(tmp, 'elsewhere', exe);
    fs.mkdirSync(path.dirname(otherBinary));
    fs.copyFileSync(bundledServerPath(installed, process.platform), otherBinary);
    const r = resolveServerPath({
      extensionPath: installed,
      setting: otherBinary,
      workspaceFolder: undefined,
      homedir: os.homedir(),
      pathEnv: '',
      platform: process.platform,
      arch: process.arch,
      isExecutable: isExecutableFile,
    });
    assert.deepEqual(r, {
      ok: true,
      path: bundledServerPath(installed, process.platform),
      source: 'bundled',
      overriddenSetting: otherBinary,
    });
  });

  it("the installed extension's bundle starts its own server and says livenote.path is overridden", async () => {
    const workspace = path.join(tmp, 'notes');
    fs.mkdirSync(workspace);
    process.env.PATH = '';
    process.env.LIVENOTE_CONFIG_DIR = path.join(tmp, 'config');
    process.env.LIVENOTE_DATA_DIR = path.join(tmp, 'data');
    fake = createFakeVscode(workspace);
    fake.settings.set('livenote.path', { globalValue: otherBinary });
    installFakeVscode(fake);
    const file = path.join(workspace, 'todo.md');
    fs.writeFileSync(file, '# Todo\n');
    fake.open(new FakeDocument(Uri.file(file), 'markdown', '# Todo\n'));

    const bundle = path.join(installed, 'dist', 'extension.js');
    ext = (await import(bundle)) as { activate(c: unknown): Promise<void>; deactivate(): Promise<void> };
    await ext.activate({ subscriptions: [], extensionPath: installed });

    const status = () => fake.statusItems.find((i) => i.id === 'livenote.status');
    await waitFor(
      'the status of the open note from the bundled server',
      () => status()?.text === '$(circle-outline) Passive',
      () => `status: ${JSON.stringify(status())}\nmessages: ${JSON.stringify(fake.messages)}\noutput:\n${fake.output.join('\n')}`,
    );
    const server = bundledServerPath(installed, process.platform);
    assert.ok(
      fake.output.some((l) => l.endsWith(`starting ${server} lsp (from bundled with the extension)`)),
      fake.output.join('\n'),
    );
    const overridden = fake.output.filter((l) => l.includes('livenote.path is'));
    assert.equal(overridden.length, 1, fake.output.join('\n'));
    assert.match(overridden[0] ?? '', /but this package bundles its own server, which is used instead; the universal livenote package \(without a bundled server\) uses the setting\.$/);
    assert.deepEqual(
      fake.messages.filter((m) => m.severity === 'error'),
      [],
    );
  });
});

describe('the universal package', { skip: universalVsix ? false : 'LIVENOTE_VSIX is not set (ci.sh sets it)' }, () => {
  it('carries the extension files and no server', async () => {
    assert.ok(universalVsix && fs.existsSync(universalVsix), `LIVENOTE_VSIX=${universalVsix ?? ''} does not exist`);
    const u = await unpack(universalVsix);
    assert.doesNotMatch(u.manifest, /TargetPlatform=/);
    assert.deepEqual(extensionEntries(u), EXTENSION_FILES);
  });
});
