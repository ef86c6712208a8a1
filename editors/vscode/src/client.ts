// What the commands and views need of the running extension: its server connection, output and
// status bar. Its own module so that extension.ts (which implements it) and commands.ts /
// liveViews.ts (which use it) import it without importing each other: no import cycle.
import type * as vscode from 'vscode';
import type { StatusBar } from './statusBar';

export interface LivenoteClient {
  readonly output: vscode.OutputChannel;
  readonly statusBar: StatusBar;
  /** `livenote/notesChanged`: the URIs of the notes whose list item changed. */
  readonly onNotesChanged: vscode.Event<string[]>;
  /** The server (re)started and takes requests. */
  readonly onServerReady: vscode.Event<void>;
  log(message: string): void;
  restart(): Promise<void>;
  showServerMissing(): Promise<void>;
  /** The binary `livenote lsp` runs from (or would), for `livenote mcp`; undefined when none is found. */
  serverBinary(): string | undefined;
  /** The URI as the client sent it in didOpen, so the server finds the open buffer. */
  uriArg(uri: vscode.Uri): string;
  /** True when the server can take requests; otherwise says why to the user. */
  ensureRunning(): boolean;
  /** A typed request; a server older than it ("method not found") is asked with the command. */
  sendTyped(method: string, params: unknown, command: string, args: unknown[]): Promise<unknown>;
  /** A typed request that has no command form. */
  request(method: string, params: unknown): Promise<unknown>;
  sendCommand(command: string, args: unknown[]): Promise<unknown>;
}
