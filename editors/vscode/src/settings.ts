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
  agent?: {
    provider?: string;
    max_steps?: number;
    timeout?: string;
    web?: boolean;
    max_tokens?: number;
    instructions?: string[];
    instructions_max_chars?: number;
  };
  scheduler?: { enabled?: boolean; exclude?: string[]; max_backoff?: string };
  history?: { keep?: number };
  memory?: { max_keys?: number; max_bytes?: number };
  skills?: { dirs?: string[] };
  providers?: Record<string, Record<string, unknown>>;
  mcp?: { servers?: Record<string, Record<string, unknown>> };
}

export interface SettingsResult {
  settings: ServerSettings;
  /** Explicit values that were ignored because of their type, one message each. */
  problems: string[];
}

/**
 * Settings VS Code ignores from an untrusted workspace's own settings.json: a cloned folder must
 * not pick the binary livenote starts, nor define `command` providers or MCP servers, which run
 * programs. Listed in package.json `restrictedConfigurations` too; enforced here as well so the
 * rule holds whatever `inspect()` reports.
 */
export const RESTRICTED_KEYS: readonly string[] = ['path', 'providers', 'mcp.servers'];

/** The server's rule for `[mcp.servers.NAME]`: the name becomes part of tool names. */
const MCP_SERVER_NAME = /^[A-Za-z0-9_-]+$/;

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
  // `max`: the server's upper bound, where it has one the user may plausibly cross.
  const int = (key: string, min: number, max?: number): number | undefined => {
    const v = read(key);
    if (v === undefined || v === null) {
      return undefined;
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || (max !== undefined && v > max)) {
      return bad(key, max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`, v);
    }
    return v;
  };
  const strings = (key: string, expected: string): string[] | undefined => {
    const v = read(key);
    if (v === undefined || v === null) {
      return undefined;
    }
    return Array.isArray(v) && v.every((s) => typeof s === 'string') ? v : bad(key, expected, v);
  };
  // An object of named tables (providers, MCP servers): a name whose value is not a table is
  // dropped with a problem, the rest is passed on for the server to check field by field.
  const tables = (
    key: string,
    what: string,
    example: string,
    isName: (name: string) => boolean = () => true,
  ): Record<string, Record<string, unknown>> | undefined => {
    const v = read(key);
    if (v === undefined || v === null) {
      return undefined;
    }
    if (!isRecord(v)) {
      return bad(key, `an object of ${what} tables`, v);
    }
    const table: Record<string, Record<string, unknown>> = {};
    for (const [name, def] of Object.entries(v)) {
      if (!isName(name)) {
        problems.push(`livenote.${key}: the name ${JSON.stringify(name)} may hold only letters, digits, _ and -; ignored`);
      } else if (isRecord(def)) {
        table[name] = def;
      } else {
        bad(`${key}.${name}`, `an object like ${example}`, def);
      }
    }
    return removeEmpty(table);
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
  // The server's ranges: 1000 tokens (one short reply) to 1 G; 100 characters to 1 M.
  const maxTokens = int('agent.maxTokens', 1000, 1_000_000_000);
  if (maxTokens !== undefined) agent.max_tokens = maxTokens;
  const instructions = strings('agent.instructions', 'a list of workspace-relative paths');
  if (instructions !== undefined) agent.instructions = instructions;
  const instructionsMaxChars = int('agent.instructionsMaxChars', 100, 1_000_000);
  if (instructionsMaxChars !== undefined) agent.instructions_max_chars = instructionsMaxChars;
  const agentTable = removeEmpty(agent);
  if (agentTable) settings.agent = agentTable;

  const scheduler: NonNullable<ServerSettings['scheduler']> = {};
  const enabled = bool('scheduler.enabled');
  // An untrusted workspace never runs notes by itself, whatever the user's setting says.
  if (!trusted) scheduler.enabled = false;
  else if (enabled !== undefined) scheduler.enabled = enabled;
  const exclude = strings('scheduler.exclude', 'a list of glob strings');
  if (exclude !== undefined) scheduler.exclude = exclude;
  // The server checks the duration and its range (5m to 168h) and reports a bad one.
  const maxBackoff = str('scheduler.maxBackoff');
  if (maxBackoff !== undefined) scheduler.max_backoff = maxBackoff;
  const schedulerTable = removeEmpty(scheduler);
  if (schedulerTable) settings.scheduler = schedulerTable;

  const keep = int('history.keep', 0);
  if (keep !== undefined) settings.history = { keep };

  const memory: NonNullable<ServerSettings['memory']> = {};
  // The server's ranges: 0 (no new entries) to 10,000 keys; 16 bytes to 1 MiB per entry.
  const maxKeys = int('memory.maxKeys', 0, 10_000);
  if (maxKeys !== undefined) memory.max_keys = maxKeys;
  const maxBytes = int('memory.maxBytes', 16, 1_048_576);
  if (maxBytes !== undefined) memory.max_bytes = maxBytes;
  const memoryTable = removeEmpty(memory);
  if (memoryTable) settings.memory = memoryTable;

  const skillDirs = strings('skills.dirs', 'a list of workspace-relative folders');
  if (skillDirs !== undefined) settings.skills = { dirs: skillDirs };

  const providers = tables('providers', 'provider', '{"kind": "openai", "model": "..."}');
  if (providers) settings.providers = providers;

  const servers = tables('mcp.servers', 'MCP server', '{"command": ["uvx", "mcp-server-time"]}', (name) => MCP_SERVER_NAME.test(name));
  if (servers) settings.mcp = { servers };

  return { settings, problems };
}

/** The `workspace/didChangeConfiguration` params the server expects. */
export function didChangeConfigurationParams(settings: ServerSettings): { settings: { livenote: ServerSettings } } {
  return { settings: { livenote: settings } };
}
