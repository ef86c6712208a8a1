// VS Code settings → the server's client configuration layer (initializationOptions and
// workspace/didChangeConfiguration). The server layers this JSON over the user's and the
// workspace's TOML files, so only values the user explicitly set may appear: a VS Code default
// would silently override a value from config.toml or .livenote.toml.

/** The part of `WorkspaceConfiguration.inspect()` this mapping reads. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** `key` is relative to the `livenote` section, e.g. "agent.maxSteps". */
export type Inspector = (key: string) => Inspected | undefined;

export interface ServerSettings {
  agent?: { provider?: string; max_steps?: number; timeout?: string; web?: boolean };
  scheduler?: { enabled?: boolean; exclude?: string[] };
  history?: { keep?: number };
  providers?: Record<string, Record<string, unknown>>;
}

export interface SettingsResult {
  settings: ServerSettings;
  /** Explicit values that were ignored because of their type, one message each. */
  problems: string[];
}

/**
 * Settings VS Code ignores from an untrusted workspace's own settings.json: a cloned folder must
 * not pick the binary livenote starts, nor define `command` providers that run programs.
 * Listed in package.json `restrictedConfigurations` too; enforced here as well so the rule holds
 * whatever `inspect()` reports.
 */
export const RESTRICTED_KEYS: readonly string[] = ['path', 'providers'];

/** The explicit value of a setting: the most specific scope wins. */
export function explicitValue(inspected: Inspected | undefined, useWorkspaceScopes = true): unknown {
  if (!inspected) {
    return undefined;
  }
  if (useWorkspaceScopes) {
    return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue;
  }
  return inspected.globalValue;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function removeEmpty<T extends object>(table: T): T | undefined {
  return Object.keys(table).length === 0 ? undefined : table;
}

export interface BuildOptions {
  /** VS Code's workspace trust. */
  trusted: boolean;
}

export function buildServerSettings(inspect: Inspector, { trusted }: BuildOptions): SettingsResult {
  const problems: string[] = [];
  const read = (key: string): unknown => explicitValue(inspect(key), trusted || !RESTRICTED_KEYS.includes(key));
  const bad = (key: string, expected: string, value: unknown): undefined => {
    problems.push(`livenote.${key}: expected ${expected}, got ${JSON.stringify(value)}; ignored`);
    return undefined;
  };
  // Settings-UI text boxes store "" when cleared, which means "not set" here.
  const str = (key: string): string | undefined => {
    const v = read(key);
    if (v === undefined || v === null) {
      return undefined;
    }
    if (typeof v !== 'string') {
      return bad(key, 'a string', v);
    }
    return v.trim() === '' ? undefined : v.trim();
  };
  const int = (key: string, min: number): number | undefined => {
    const v = read(key);
    if (v === undefined || v === null) {
      return undefined;
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
      return bad(key, `an integer >= ${min}`, v);
    }
    return v;
  };
  const bool = (key: string): boolean | undefined => {
    const v = read(key);
    if (v === undefined || v === null) {
      return undefined;
    }
    return typeof v === 'boolean' ? v : bad(key, 'true or false', v);
  };

  const settings: ServerSettings = {};

  const agent: NonNullable<ServerSettings['agent']> = {};
  const provider = str('agent.provider');
  if (provider !== undefined) agent.provider = provider;
  const maxSteps = int('agent.maxSteps', 1);
  if (maxSteps !== undefined) agent.max_steps = maxSteps;
  const timeout = str('agent.timeout');
  if (timeout !== undefined) agent.timeout = timeout;
  const web = bool('agent.web');
  if (web !== undefined) agent.web = web;
  const agentTable = removeEmpty(agent);
  if (agentTable) settings.agent = agentTable;

  const scheduler: NonNullable<ServerSettings['scheduler']> = {};
  const enabled = bool('scheduler.enabled');
  // An untrusted workspace never runs notes by itself, whatever the user's setting says.
  if (!trusted) scheduler.enabled = false;
  else if (enabled !== undefined) scheduler.enabled = enabled;
  const exclude = read('scheduler.exclude');
  if (exclude !== undefined && exclude !== null) {
    if (Array.isArray(exclude) && exclude.every((g) => typeof g === 'string')) {
      scheduler.exclude = exclude;
    } else {
      bad('scheduler.exclude', 'a list of glob strings', exclude);
    }
  }
  const schedulerTable = removeEmpty(scheduler);
  if (schedulerTable) settings.scheduler = schedulerTable;

  const keep = int('history.keep', 0);
  if (keep !== undefined) settings.history = { keep };

  const providers = read('providers');
  if (providers !== undefined && providers !== null) {
    if (isRecord(providers)) {
      const table: Record<string, Record<string, unknown>> = {};
      for (const [name, def] of Object.entries(providers)) {
        if (isRecord(def)) {
          table[name] = def;
        } else {
          bad(`providers.${name}`, 'an object like {"kind": "openai", "model": "..."}', def);
        }
      }
      const providersTable = removeEmpty(table);
      if (providersTable) settings.providers = providersTable;
    } else {
      bad('providers', 'an object of provider tables', providers);
    }
  }

  return { settings, problems };
}

/** The `workspace/didChangeConfiguration` params the server expects. */
export function didChangeConfigurationParams(settings: ServerSettings): { settings: { livenote: ServerSettings } } {
  return { settings: { livenote: settings } };
}
