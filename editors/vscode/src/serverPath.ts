// Find the `livenote` binary: the one a platform package carries in its `server/` folder, else
// the `livenote.path` setting, else PATH. The bundled binary comes first so that installing the
// platform package is all a user needs, whatever a PATH launched from a desktop icon holds.
// Searching PATH here (rather than letting spawn fail) is what lets the extension say "not
// installed" with install steps instead of a bare ENOENT from the language client.

import * as fs from 'node:fs';
import * as path from 'node:path';

// Without --locked, cargo re-resolves every dependency to versions CI never tested.
export const INSTALL_COMMAND = 'cargo install --locked --path server';

/** VS Code's platform targets (`vsce package --target`) a livenote binary is built for. */
const VSCE_TARGETS: readonly string[] = [
  'linux-x64',
  'linux-arm64',
  'linux-armhf',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64',
  'win32-arm64',
];

/** The `vsce package --target` name of a Node platform and arch, e.g. "linux-x64". */
export function vsceTarget(platform: NodeJS.Platform, arch: string): string | undefined {
  const target = `${platform}-${arch === 'arm' ? 'armhf' : arch}`;
  return VSCE_TARGETS.includes(target) ? target : undefined;
}

/** Where a platform package carries the server, inside the extension's install folder. */
export function bundledServerPath(extensionPath: string, platform: NodeJS.Platform): string {
  const p = platform === 'win32' ? path.win32 : path.posix;
  return p.join(extensionPath, 'server', platform === 'win32' ? 'livenote.exe' : 'livenote');
}

export interface ResolveInput {
  /** The extension's install folder; undefined when not running as an installed extension. */
  extensionPath?: string;
  /** The `livenote.path` setting; empty or undefined = search PATH. */
  setting: string | undefined;
  /** File-system path of the first workspace folder, for a relative setting. */
  workspaceFolder: string | undefined;
  homedir: string;
  /** The PATH environment variable. */
  pathEnv: string | undefined;
  /** Windows PATHEXT; ignored elsewhere. */
  pathExt?: string;
  platform: NodeJS.Platform;
  /** process.arch, to name the platform package for this machine. */
  arch?: string;
  /** Whether an executable file exists at this absolute path. */
  isExecutable: (file: string) => boolean;
}

export type Resolution =
  | {
      ok: true;
      path: string;
      source: 'bundled' | 'setting' | 'PATH';
      /** The `livenote.path` value the bundled server took precedence over, if one was set. */
      overriddenSetting?: string;
    }
  | { ok: false; message: string; installCommand: string };

function installSteps(input: ResolveInput): string {
  const target = input.arch === undefined ? undefined : vsceTarget(input.platform, input.arch);
  const forThisMachine = target ? ` (for this machine: livenote-${target}.vsix)` : '';
  return (
    `This livenote package has no bundled server; the platform packages livenote-<platform>.vsix${forThisMachine} carry one. ` +
    `Or install the server with "${INSTALL_COMMAND}" from a livenote checkout (it puts livenote in ~/.cargo/bin, ` +
    'which must be on the PATH VS Code sees), or set "livenote.path" to the binary.'
  );
}

/**
 * A path from a setting as a file-system path: `~` is the home directory, a relative path is
 * relative to the first workspace folder; undefined for a relative path without a folder.
 */
function absolutePath(
  value: string,
  { homedir, workspaceFolder, platform }: Pick<ResolveInput, 'homedir' | 'workspaceFolder' | 'platform'>,
): string | undefined {
  const p = platform === 'win32' ? path.win32 : path.posix;
  if (value === '~' || value.startsWith('~/') || (platform === 'win32' && value.startsWith('~\\'))) {
    return p.join(homedir, value.slice(1));
  }
  if (p.isAbsolute(value)) {
    return p.normalize(value);
  }
  return workspaceFolder === undefined ? undefined : p.join(workspaceFolder, value);
}

function executableNames(name: string, input: ResolveInput): string[] {
  if (input.platform !== 'win32') {
    return [name];
  }
  const exts = (input.pathExt ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e !== '');
  // A name that already carries an executable extension is tried as is first.
  const hasExt = exts.some((e) => name.toLowerCase().endsWith(e.toLowerCase()));
  return hasExt ? [name, ...exts.map((e) => name + e)] : exts.map((e) => name + e);
}

function searchPath(name: string, input: ResolveInput): string | undefined {
  const p = input.platform === 'win32' ? path.win32 : path.posix;
  const sep = input.platform === 'win32' ? ';' : ':';
  for (const dir of (input.pathEnv ?? '').split(sep)) {
    // An empty PATH entry means the current directory, which for an editor is arbitrary:
    // skipping it keeps a cloned folder from supplying its own "livenote".
    if (dir === '' || !p.isAbsolute(dir)) {
      continue;
    }
    for (const candidate of executableNames(name, input)) {
      const full = p.join(dir, candidate);
      if (input.isExecutable(full)) {
        return full;
      }
    }
  }
  return undefined;
}

export function resolveServerPath(input: ResolveInput): Resolution {
  const p = input.platform === 'win32' ? path.win32 : path.posix;
  const setting = input.setting?.trim() ?? '';
  if (input.extensionPath !== undefined) {
    const bundled = bundledServerPath(input.extensionPath, input.platform);
    if (input.isExecutable(bundled)) {
      return setting === ''
        ? { ok: true, path: bundled, source: 'bundled' }
        : { ok: true, path: bundled, source: 'bundled', overriddenSetting: setting };
    }
  }
  if (setting === '') {
    const found = searchPath('livenote', input);
    if (found) {
      return { ok: true, path: found, source: 'PATH' };
    }
    return {
      ok: false,
      message: `The livenote language server was not found on PATH. ${installSteps(input)}`,
      installCommand: INSTALL_COMMAND,
    };
  }

  const hasSeparator = setting.includes('/') || (input.platform === 'win32' && setting.includes('\\'));
  if (!hasSeparator && setting !== '~') {
    // A bare name ("livenote-dev") is looked up on PATH, as a shell would.
    const found = searchPath(setting, input);
    if (found) {
      return { ok: true, path: found, source: 'setting' };
    }
    return {
      ok: false,
      message: `"livenote.path" is "${setting}", which was not found on PATH. ${installSteps(input)}`,
      installCommand: INSTALL_COMMAND,
    };
  }

  const full = absolutePath(setting, input);
  if (full === undefined) {
    return {
      ok: false,
      message: `"livenote.path" is the relative path "${setting}", but no workspace folder is open to resolve it against. Use an absolute path.`,
      installCommand: INSTALL_COMMAND,
    };
  }
  // On Windows, "C:\\tools\\livenote" should find livenote.exe as the shell would.
  const candidates = input.platform === 'win32' && p.extname(full) === '' ? executableNames(full, input) : [full];
  for (const c of candidates) {
    if (input.isExecutable(c)) {
      return { ok: true, path: c, source: 'setting' };
    }
  }
  return {
    ok: false,
    message: `"livenote.path" is "${setting}", but there is no executable file at ${full}. ${installSteps(input)}`,
    installCommand: INSTALL_COMMAND,
  };
}

export interface ServerLaunchInput {
  /** The resolved binary. */
  command: string;
  /** The `livenote.logFile` setting; empty or undefined = no log file. */
  logFile: string | undefined;
  /** File-system path of the first workspace folder: the server's working directory. */
  workspaceFolder: string | undefined;
  homedir: string;
  platform: NodeJS.Platform;
}

/** How the server is started (the shape of vscode-languageclient's `Executable`). */
export interface ServerLaunch {
  command: string;
  args: string[];
  options: { cwd?: string };
}

/**
 * `livenote lsp`, with `--log-file` when `livenote.logFile` is set. The server's stderr (shown in
 * the output channel) carries only warnings; the file gets the full log.
 */
export function serverLaunch(input: ServerLaunchInput): ServerLaunch {
  const args = ['lsp'];
  const logFile = input.logFile?.trim() ?? '';
  if (logFile !== '') {
    // Without a folder a relative path stays relative to the server's working directory.
    args.push('--log-file', absolutePath(logFile, input) ?? logFile);
  }
  return {
    command: input.command,
    args,
    options: input.workspaceFolder === undefined ? {} : { cwd: input.workspaceFolder },
  };
}

/** The real file-system check used outside tests. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (process.platform !== 'win32') {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

/** One entry of VS Code's MCP list: `livenote mcp FOLDER` over stdio. */
export interface McpLaunch {
  label: string;
  command: string;
  args: string[];
  cwd: string;
}

/**
 * `livenote mcp` for each workspace folder (the server serves one folder). One folder is
 * "livenote"; in a multi-root workspace each is named after its folder.
 */
export function mcpLaunches(command: string, folders: readonly { name: string; fsPath: string }[]): McpLaunch[] {
  return folders.map((f) => ({
    label: folders.length === 1 ? 'livenote' : `livenote: ${f.name}`,
    command,
    args: ['mcp', f.fsPath],
    cwd: f.fsPath,
  }));
}
