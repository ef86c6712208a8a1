// Entry point: starts `livenote lsp`, keeps its configuration in step with VS Code's settings
// and workspace trust, and wires the status bar and the palette commands.

import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  State,
  type Executable,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { askFromCommand } from './ask';
import { registerChat } from './chat';
import { withMakeLiveDescribe } from './codeActions';
import { registerCommands } from './commands';
import { registerMcp } from './mcp';
import { showNotify } from './notify';
import { handleRunEdits } from './runEdits';
import { errorMessage } from './errors';
import { resolveServerPath, isExecutableFile, serverLaunch, INSTALL_COMMAND, type Resolution } from './serverPath';
import { buildServerSettings, didChangeConfigurationParams, explicitValue, type SettingsResult } from './settings';
import { METHOD_NOT_FOUND, NOTES_CHANGED, NOTIFY, ServerCommand, ServerRequest, isRecord, parseNotesChanged } from './protocol';
import { registerViews } from './liveViews';
import type { LivenoteClient } from './client';
import type { ServerState } from './status';
import { StatusBar } from './statusBar';

const SECTION = 'livenote';

export class Livenote implements vscode.Disposable, LivenoteClient {
  readonly output: vscode.OutputChannel;
  readonly statusBar: StatusBar;
  private client: LanguageClient | undefined;
  private problem: ServerState | undefined = { kind: 'starting' };
  /** The binary the running client was started with, to tell whether trust changes it. */
  private serverPath: string | undefined;
  /** Serialises start/stop/restart: a settings change during a start must not race it. */
  private lifecycle: Promise<void> = Promise.resolve();
  private readonly disposables: vscode.Disposable[] = [];
  private lastProblems = '';
  private readonly notesChanged = new vscode.EventEmitter<string[]>();
  private readonly serverReady = new vscode.EventEmitter<void>();
  /** `livenote/notesChanged`: the URIs of the notes whose list item changed. */
  readonly onNotesChanged = this.notesChanged.event;
  /** The server (re)started and takes requests. */
  readonly onServerReady = this.serverReady.event;

  /** @param extensionPath the installed extension's folder; a platform package carries the server there. */
  constructor(private readonly extensionPath: string | undefined) {
    this.output = vscode.window.createOutputChannel('livenote');
    this.statusBar = new StatusBar({
      serverProblem: () => this.problem,
      noteStatus: (document) =>
        this.sendTyped(
          ServerRequest.noteStatus,
          { textDocument: { uri: this.uriArg(document.uri) } },
          ServerCommand.noteStatus,
          [this.uriArg(document.uri)],
        ),
      log: (message) => this.log(message),
    });
    this.disposables.push(
      this.output,
      this.statusBar,
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.onTrustGranted()),
    );
  }

  log(message: string): void {
    this.output.appendLine(`[${new Date().toISOString()}] ${message}`);
  }

  /** The first workspace folder: relative `livenote.path` values and the server's cwd use it. */
  private firstFolder(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
  }

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(SECTION, this.firstFolder()?.uri);
  }

  /** The server JSON for the current settings and trust; problems are logged and shown once. */
  settings(): SettingsResult {
    const config = this.config();
    const result = buildServerSettings((key) => config.inspect(key), { trusted: vscode.workspace.isTrusted });
    const problems = result.problems.join('\n');
    if (problems !== '' && problems !== this.lastProblems) {
      this.log(problems);
      void vscode.window.showWarningMessage(`livenote settings: ${result.problems.join('; ')}`);
    }
    this.lastProblems = problems;
    return result;
  }

  private resolveServer(): Resolution {
    const setting = explicitValue(this.config().inspect('path'), vscode.workspace.isTrusted);
    return resolveServerPath({
      extensionPath: this.extensionPath,
      setting: typeof setting === 'string' ? setting : undefined,
      workspaceFolder: this.firstFolder()?.uri.fsPath,
      homedir: os.homedir(),
      pathEnv: process.env.PATH,
      pathExt: process.env.PATHEXT,
      platform: process.platform,
      arch: process.arch,
      isExecutable: isExecutableFile,
    });
  }

  /** Queue a lifecycle step after the previous one, whatever its outcome. */
  private enqueue(step: () => Promise<void>): Promise<void> {
    this.lifecycle = this.lifecycle.then(step, step).catch((e: unknown) => {
      this.log(`livenote: ${errorMessage(e)}`);
    });
    return this.lifecycle;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  private async doStart(): Promise<void> {
    this.problem = { kind: 'starting' };
    void this.statusBar.refresh();
    const resolution = this.resolveServer();
    if (!resolution.ok) {
      this.problem = { kind: 'missing', message: resolution.message };
      this.log(resolution.message);
      void this.statusBar.refresh();
      void this.showServerMissing();
      return;
    }
    this.serverPath = resolution.path;
    if (resolution.overriddenSetting !== undefined) {
      this.log(
        `livenote.path is "${resolution.overriddenSetting}", but this package bundles its own server, which is used instead; ` +
          'the universal livenote package (without a bundled server) uses the setting.',
      );
    }
    // Only the user's own value: a workspace must not choose a file the server appends to.
    const logFile = explicitValue(this.config().inspect('logFile'), false);
    // No `transport`: TransportKind.stdio would append `--stdio`, which `livenote lsp`
    // rejects; without it the client still talks over the process's stdin/stdout.
    const executable: Executable = serverLaunch({
      command: resolution.path,
      logFile: typeof logFile === 'string' ? logFile : undefined,
      workspaceFolder: this.firstFolder()?.uri.fsPath,
      homedir: os.homedir(),
      platform: process.platform,
    });
    const from = { bundled: 'bundled with the extension', setting: 'livenote.path', PATH: 'PATH' }[resolution.source];
    this.log(`starting ${executable.command} ${executable.args?.join(' ') ?? ''} (from ${from})`);
    const serverOptions: ServerOptions = { run: executable, debug: executable };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'markdown' },
        { scheme: 'untitled', language: 'markdown' },
      ],
      outputChannel: this.output,
      // A function, so a restart picks up the settings and trust of that moment.
      initializationOptions: () => this.settings().settings,
      middleware: {
        // The server's "Make live" cannot ask for a sentence; "Make live…" beside it does.
        provideCodeActions: async (document, range, context, token, next) =>
          withMakeLiveDescribe(await next(document, range, context, token)),
        // Code lenses call the server's commands directly; the status bar follows them. The
        // light bulb's "Ask livenote…" sends the note only: the sentence is asked for here.
        executeCommand: async (command, args, next) => {
          try {
            if (command === ServerCommand.ask) {
              return await askFromCommand(args, async (full) => (await next(command, full)) as unknown, (m) => this.log(m));
            }
            return (await next(command, args)) as unknown;
          } finally {
            this.statusBar.refreshSoon();
          }
        },
      },
    };
    const client = new LanguageClient('livenote', 'livenote', serverOptions, clientOptions);
    // The views refresh when the server says notes changed, rather than by polling; this client
    // can prompt for "Ask livenote…" and shows `livenote/notify` with its own buttons.
    client.registerFeature({
      fillClientCapabilities: (capabilities) => {
        const experimental = isRecord(capabilities.experimental) ? capabilities.experimental : {};
        capabilities.experimental = { ...experimental, livenote: { notesChanged: true, ask: true, notify: true } };
      },
      initialize: () => undefined,
      getState: () => ({ kind: 'static' }),
      clear: () => undefined,
    });
    this.client = client;
    client.onDidChangeState((e) => {
      if (this.client !== client) {
        return;
      }
      if (e.newState === State.Running) {
        this.problem = undefined;
      } else if (e.newState === State.Stopped) {
        this.problem = { kind: 'stopped' };
      } else {
        this.problem = { kind: 'starting' };
      }
      void this.statusBar.refresh();
    });
    try {
      await client.start();
      // After start: it replaces the client's own workspace/applyEdit handler.
      handleRunEdits(client, (msg) => this.log(msg));
      client.onNotification(NOTES_CHANGED, (params: unknown) => this.notesChanged.fire(parseNotesChanged(params)));
      client.onNotification(NOTIFY, (params: unknown) => void showNotify(this, params));
      this.problem = undefined;
      this.serverReady.fire();
    } catch (e) {
      const message = errorMessage(e);
      this.problem = { kind: 'stopped', message };
      this.log(`the language server failed to start: ${message}`);
      void vscode.window
        .showErrorMessage(`livenote: the language server failed to start: ${message}`, 'Show Output', 'Restart')
        .then((choice) => {
          if (choice === 'Show Output') this.output.show(true);
          else if (choice === 'Restart') void this.restart();
        });
    }
    void this.statusBar.refresh();
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.problem = { kind: 'stopped' };
    if (client && client.state !== State.Stopped) {
      try {
        await client.stop(5000);
      } catch (e) {
        this.log(`stopping the language server: ${errorMessage(e)}`);
      }
    }
    if (client) {
      try {
        await client.dispose(1000);
      } catch {
        // Already stopped: dispose only releases what is left.
      }
    }
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  async showServerMissing(): Promise<void> {
    let message: string | undefined;
    if (this.problem?.kind === 'missing') {
      message = this.problem.message;
    } else {
      const resolution = this.resolveServer();
      message = resolution.ok ? undefined : resolution.message;
    }
    if (!message) {
      return;
    }
    const choice = await vscode.window.showErrorMessage(
      `livenote: ${message}`,
      'Open Settings',
      'Copy install command',
      'Retry',
    );
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'livenote.path');
    } else if (choice === 'Copy install command') {
      await vscode.env.clipboard.writeText(INSTALL_COMMAND);
      void vscode.window.showInformationMessage(
        `Copied "${INSTALL_COMMAND}": run it in a livenote checkout, then use "livenote: Restart server".`,
      );
    } else if (choice === 'Retry') {
      await this.restart();
    }
  }

  /** The binary `livenote lsp` runs from (or would), for `livenote mcp`; undefined when none is found. */
  serverBinary(): string | undefined {
    const resolution = this.resolveServer();
    return resolution.ok ? resolution.path : undefined;
  }

  /** The URI as the client sent it in didOpen, so the server finds the open buffer. */
  uriArg(uri: vscode.Uri): string {
    return this.client ? this.client.code2ProtocolConverter.asUri(uri) : uri.toString();
  }

  /** True when the server can take requests; otherwise says why to the user. */
  ensureRunning(): boolean {
    if (this.client && this.client.state === State.Running && !this.problem) {
      return true;
    }
    if (this.problem?.kind === 'missing') {
      void this.showServerMissing();
    } else if (this.problem?.kind === 'starting') {
      void vscode.window.showInformationMessage('livenote: the language server is still starting; try again in a moment.');
    } else {
      void vscode.window
        .showErrorMessage('livenote: the language server is not running.', 'Restart', 'Show Output')
        .then((choice) => {
          if (choice === 'Restart') void this.restart();
          else if (choice === 'Show Output') this.output.show(true);
        });
    }
    return false;
  }

  /**
   * A typed request; a server older than it ("method not found") is asked with the command
   * that answers the same.
   */
  async sendTyped(method: string, params: unknown, command: string, args: unknown[]): Promise<unknown> {
    const client = this.client;
    if (!client || client.state !== State.Running) {
      throw new Error('the language server is not running');
    }
    try {
      return params === undefined ? await client.sendRequest(method) : await client.sendRequest(method, params);
    } catch (e) {
      if (isRecord(e) && e.code === METHOD_NOT_FOUND) {
        return this.sendCommand(command, args);
      }
      throw e;
    }
  }

  /** A typed request that has no command form. */
  async request(method: string, params: unknown): Promise<unknown> {
    const client = this.client;
    if (!client || client.state !== State.Running) {
      throw new Error('the language server is not running');
    }
    return client.sendRequest(method, params);
  }

  async sendCommand(command: string, args: unknown[]): Promise<unknown> {
    const client = this.client;
    if (!client || client.state !== State.Running) {
      throw new Error('the language server is not running');
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration(SECTION)) {
      return;
    }
    const restartKeys = ['path', 'logFile', 'trace.server'].map((k) => `${SECTION}.${k}`);
    const changed = restartKeys.find((k) => e.affectsConfiguration(k));
    if (changed !== undefined) {
      this.log(`${changed} changed: restarting the language server`);
      void this.restart();
      return;
    }
    this.pushSettings();
  }

  /** Send the current settings as workspace/didChangeConfiguration. */
  pushSettings(): void {
    const client = this.client;
    if (!client || client.state !== State.Running) {
      return; // A later start sends them as initializationOptions.
    }
    const { settings } = this.settings();
    client
      .sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(settings))
      .then(
        () => this.statusBar.refreshSoon(),
        (e: unknown) => this.log(`sending the settings failed: ${errorMessage(e)}`),
      );
  }

  private onTrustGranted(): void {
    // Trust also unlocks the workspace's own livenote.path: a different binary needs a restart.
    const resolution = this.resolveServer();
    if (this.problem?.kind === 'missing' || (resolution.ok && resolution.path !== this.serverPath)) {
      this.log('workspace trusted: restarting the language server with the workspace settings');
      void this.restart();
      return;
    }
    this.log('workspace trusted: scheduled and event runs follow livenote.scheduler.enabled again');
    this.pushSettings();
  }

  async dispose(): Promise<void> {
    await this.stop();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

let livenote: Livenote | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  try {
    livenote = new Livenote(context.extensionPath);
    context.subscriptions.push(...registerCommands(livenote));
    context.subscriptions.push(...registerViews(livenote).disposables);
    // Newer VS Code only (each is feature-detected): the MCP list and the chat participant.
    context.subscriptions.push(...registerMcp(livenote), ...registerChat(livenote));
    await livenote.start();
  } catch (e) {
    // Activation must not throw: VS Code would show a bare stack and the commands would vanish.
    const message = errorMessage(e);
    livenote?.log(`activation failed: ${message}`);
    void vscode.window.showErrorMessage(`livenote failed to start: ${message}`);
  }
}

export async function deactivate(): Promise<void> {
  const current = livenote;
  livenote = undefined;
  await current?.dispose();
}
