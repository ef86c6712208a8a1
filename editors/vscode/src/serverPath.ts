// Find the `livenote` binary: the `livenote.path` setting, else PATH. Searching PATH here (rather
// than letting spawn fail) is what lets the extension say "not installed" with install steps
// instead of a bare ENOENT from the language client.

import * as fs from 'node:fs';
import * as path from 'node:path';

export const INSTALL_COMMAND = 'cargo install --path server';

export interface ResolveInput {
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
  /** Whether an executable file exists at this absolute path. */
  isExecutable: (file: string) => boolean;
}

export type Resolution =
  | { ok: true; path: string; source: 'setting' | 'PATH' }
  | { ok: false; message: string; installCommand: string };

function installSteps(): string {
  return (
    `Install it with "${INSTALL_COMMAND}" from a livenote checkout (it puts livenote in ~/.cargo/bin, ` +
    'which must be on PATH), or set "livenote.path" to the binary.'
  );
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
  if (setting === '') {
    const found = searchPath('livenote', input);
    if (found) {
      return { ok: true, path: found, source: 'PATH' };
    }
    return {
      ok: false,
      message: `The livenote language server was not found on PATH. ${installSteps()}`,
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
      message: `"livenote.path" is "${setting}", which was not found on PATH. ${installSteps()}`,
      installCommand: INSTALL_COMMAND,
    };
  }

  let full: string;
  if (setting === '~' || setting.startsWith('~/') || (input.platform === 'win32' && setting.startsWith('~\\'))) {
    full = p.join(input.homedir, setting.slice(1));
  } else if (p.isAbsolute(setting)) {
    full = p.normalize(setting);
  } else if (input.workspaceFolder) {
    full = p.join(input.workspaceFolder, setting);
  } else {
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
    message: `"livenote.path" is "${setting}", but there is no executable file at ${full}. ${installSteps()}`,
    installCommand: INSTALL_COMMAND,
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
