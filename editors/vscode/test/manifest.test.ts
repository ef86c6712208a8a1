import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ServerCommand, UiCommand } from '../src/protocol';
import { RESTRICTED_KEYS } from '../src/settings';

// chat.ts and mcp.ts import `vscode`: their ids are repeated here, and checked against them in
// ask.test.ts (which loads them in the fake VS Code).
const MCP_PROVIDER_ID = 'livenote.mcp';
const CHAT_PARTICIPANT_ID = 'livenote.chat';

// out/test/manifest.test.js → the package root.
const root = path.join(__dirname, '..', '..');

interface Manifest {
  activationEvents: string[];
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
  contributes: {
    commands: { command: string; title: string; category: string }[];
    menus: { commandPalette: { command: string; when: string }[] } & Record<string, { command: string; when: string }[]>;
    mcpServerDefinitionProviders: { id: string; label: string }[];
    chatParticipants: { id: string; name: string }[];
    configuration: { properties: Record<string, { default?: unknown; scope?: string }> };
    grammars: { scopeName: string; path: string; injectTo: string[] }[];
  };
  engines: { vscode: string };
  devDependencies: Record<string, string>;
}

const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;

describe('package.json', () => {
  it('contributes exactly the extension commands, none with a server command ID', () => {
    const contributed = manifest.contributes.commands.map((c) => c.command).sort();
    assert.deepEqual(contributed, Object.values(UiCommand).sort());
    const server: string[] = Object.values(ServerCommand);
    for (const c of manifest.contributes.commands) {
      assert.ok(!server.includes(c.command), `${c.command} collides with a server command`);
      assert.equal(c.category, 'livenote');
    }
  });

  it('shows note commands only for markdown editors', () => {
    const when = new Map(manifest.contributes.menus.commandPalette.map((m) => [m.command, m.when]));
    for (const id of [UiCommand.makeLive, UiCommand.run, UiCommand.stop, UiCommand.pause, UiCommand.resume, UiCommand.makePassive, UiCommand.undoLastRun, UiCommand.clearMemory]) {
      assert.equal(when.get(id), 'editorLangId == markdown', id);
    }
    assert.equal(when.get(UiCommand.showServerMissing), 'false');
    assert.equal(when.has(UiCommand.showLiveNotes), false);
  });

  it('offers Ask livenote… in the palette and editor menu for markdown, and in the Live notes view for notes', () => {
    const when = new Map(manifest.contributes.menus.commandPalette.map((m) => [m.command, m.when]));
    assert.equal(when.get(UiCommand.ask), 'editorLangId == markdown');
    assert.equal(when.get(UiCommand.viewAsk), 'false');
    assert.ok(manifest.contributes.menus['editor/context']?.some((m) => m.command === UiCommand.ask && m.when === 'editorLangId == markdown'));
    assert.ok(manifest.contributes.menus['view/item/context']?.some((m) => m.command === UiCommand.viewAsk && m.when.includes('view == livenote.notes')));
  });

  it('contributes the MCP server definition provider and the @livenote participant the code registers', () => {
    assert.deepEqual(manifest.contributes.mcpServerDefinitionProviders, [{ id: MCP_PROVIDER_ID, label: 'livenote' }]);
    assert.deepEqual(
      manifest.contributes.chatParticipants.map((p) => [p.id, p.name]),
      [[CHAT_PARTICIPANT_ID, 'livenote']],
    );
  });

  it('declares every setting the mapping and the client read', () => {
    assert.deepEqual(Object.keys(manifest.contributes.configuration.properties).sort(), [
      'livenote.agent.instructions',
      'livenote.agent.instructionsMaxChars',
      'livenote.agent.maxSteps',
      'livenote.agent.maxTokens',
      'livenote.agent.provider',
      'livenote.agent.timeout',
      'livenote.agent.web',
      'livenote.history.keep',
      'livenote.logFile',
      'livenote.mcp.servers',
      'livenote.memory.maxBytes',
      'livenote.memory.maxKeys',
      'livenote.path',
      'livenote.providers',
      'livenote.scheduler.enabled',
      'livenote.scheduler.exclude',
      'livenote.scheduler.maxBackoff',
      'livenote.skills.dirs',
      'livenote.trace.server',
    ]);
    assert.equal(manifest.contributes.configuration.properties['livenote.scheduler.enabled']?.default, true);
  });

  it('lets only user settings choose the log file (a workspace must not pick a file to append to)', () => {
    const logFile = manifest.contributes.configuration.properties['livenote.logFile'];
    assert.deepEqual(logFile && { default: logFile.default, scope: logFile.scope }, { default: '', scope: 'machine' });
  });

  it('takes providers and MCP servers, which name programs and endpoints, from user settings only', () => {
    for (const key of ['livenote.providers', 'livenote.mcp.servers']) {
      assert.equal(manifest.contributes.configuration.properties[key]?.scope, 'machine', key);
      assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(key), key);
    }
  });

  it("declares the server's ranges for the numeric settings the mapping checks", () => {
    const props = manifest.contributes.configuration.properties as Record<string, { minimum?: number; maximum?: number }>;
    const range = (k: string) => [props[k]?.minimum, props[k]?.maximum];
    assert.deepEqual(range('livenote.agent.maxTokens'), [1000, 1_000_000_000]);
    assert.deepEqual(range('livenote.agent.instructionsMaxChars'), [100, 1_000_000]);
    assert.deepEqual(range('livenote.memory.maxKeys'), [0, 10_000]);
    assert.deepEqual(range('livenote.memory.maxBytes'), [16, 1_048_576]);
  });

  it('supports untrusted workspaces in a limited way, restricting path, providers and MCP servers', () => {
    const trust = manifest.capabilities.untrustedWorkspaces;
    assert.equal(trust.supported, 'limited');
    assert.deepEqual(trust.restrictedConfigurations, RESTRICTED_KEYS.map((k) => `livenote.${k}`));
  });

  it('activates on markdown and injects the frontmatter grammar into markdown', () => {
    assert.deepEqual(manifest.activationEvents, ['onLanguage:markdown']);
    assert.deepEqual(manifest.contributes.grammars, [
      {
        scopeName: 'livenote.frontmatter.injection',
        path: './syntaxes/livenote-frontmatter.tmLanguage.json',
        injectTo: ['text.html.markdown'],
      },
    ]);
  });

  it('builds against the oldest VS Code it claims to support', () => {
    assert.equal(manifest.engines.vscode, `^${manifest.devDependencies['@types/vscode']}`);
  });
});
