// livenote's MCP server in VS Code's own MCP list (VS Code 1.101+: the MCP server definition
// provider API), so Copilot's agent mode has the live-note tools and prompt without a
// `.vscode/mcp.json`, run from the same binary as the language server. Older VS Code has no
// such API: nothing is registered and the rest of the extension works as before.

import * as vscode from 'vscode';
import type { LivenoteClient } from './client';
import { mcpLaunches } from './serverPath';

/** The id under `contributes.mcpServerDefinitionProviders` in package.json. */
export const MCP_PROVIDER_ID = 'livenote.mcp';

/** What this module uses of the API (newer than the @types/vscode the extension builds with). */
interface McpStdioServerDefinition {
  cwd?: vscode.Uri;
}
type McpStdioServerDefinitionClass = new (
  label: string,
  command: string,
  args?: string[],
  env?: Record<string, string | number | null>,
  version?: string,
) => McpStdioServerDefinition;
interface McpServerDefinitionProvider {
  onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): McpStdioServerDefinition[];
}
interface McpApi {
  lm?: { registerMcpServerDefinitionProvider?: (id: string, provider: McpServerDefinitionProvider) => vscode.Disposable };
  McpStdioServerDefinition?: McpStdioServerDefinitionClass;
}

/** Register the provider where the API exists; returns what to dispose (nothing elsewhere). */
export function registerMcp(ln: LivenoteClient): vscode.Disposable[] {
  const api = vscode as unknown as McpApi;
  const lm = api.lm;
  const Definition = api.McpStdioServerDefinition;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') {
    ln.log("this VS Code has no MCP server definition API (1.101 and later): livenote's MCP server is not in its MCP list");
    return [];
  }
  const changed = new vscode.EventEmitter<void>();
  const provider: McpServerDefinitionProvider = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: () => {
      // A workspace VS Code does not trust gets no server that an assistant could drive.
      if (!vscode.workspace.isTrusted) {
        return [];
      }
      const binary = ln.serverBinary();
      if (binary === undefined) {
        return [];
      }
      const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, fsPath: f.uri.fsPath }));
      return mcpLaunches(binary, folders).map((l) => {
        const definition = new Definition(l.label, l.command, l.args);
        definition.cwd = vscode.Uri.file(l.cwd);
        return definition;
      });
    },
  };
  const fire = () => changed.fire();
  return [
    changed,
    lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider),
    vscode.workspace.onDidChangeWorkspaceFolders(fire),
    vscode.workspace.onDidGrantWorkspaceTrust(fire),
    // A restart may have found another binary (livenote.path changed).
    ln.onServerReady(fire),
  ];
}
