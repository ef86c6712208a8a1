#!/usr/bin/env node
// `npm test`: lints the injection grammar, then runs the syntax tests (test/*.test.md) with
// vscode-tmgrammar-test twice, against two sets of host grammars that the injection must work in:
//
//   tm-grammars  shiki's collection (npm tm-grammars, pinned in package-lock.json): VS Code's
//                markdown grammar and the classic TextMate YAML grammar (package.json
//                `contributes.grammars`);
//   vscode       the markdown and YAML grammars VS Code itself ships today (RedCMD's YAML 1.2
//                grammar, built from `while` rules), from the MIT packages of VS Code's default
//                extensions below, fetched with `npm pack` at the pinned version and checked
//                against the pinned integrity (not dependencies: they would pull in 130 MB of
//                monaco-vscode-api).
//
// vscode-tmgrammar-test warns once per language the markdown grammar embeds and we do not load
// ("grammar not found for source.js" ...); those lines are dropped. Exit code: non-zero if any
// suite fails.
'use strict';
const { execFileSync, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const VSCODE_PACKAGES = [
  {
    name: '@codingame/monaco-vscode-markdown-basics-default-extension',
    version: '37.6.1',
    integrity: 'sha512-6fBU+bvWG7dV9RdESfKDV0BptIkoIXUj0oxOY0jkKsJgMbmmZRnW9t+4cF39aREOKx6PWZa/Yqi14bfrgNTJUA==',
  },
  {
    name: '@codingame/monaco-vscode-yaml-default-extension',
    version: '36.2.7',
    integrity: 'sha512-MYqRg7E2Q2G2XveUjpROTwwKP0AsA0d7G+UPbso3tpd9wPl/jhA8SdDnd5wYOFKH8xS9nvmk3WF5HJ4BkelgpQ==',
  },
];

function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...opts });
}

// Returns the path of a vscode-tmgrammar-test config (a package.json with contributes.grammars)
// for VS Code's own grammars, fetching them once into node_modules/.cache.
function vscodeGrammarsConfig() {
  const dir = path.join(root, 'node_modules', '.cache', 'livenote-vscode-grammars');
  const config = path.join(dir, 'package.json');
  const stamp = VSCODE_PACKAGES.map((p) => `${p.name}@${p.version}`).join('\n');
  const stampFile = path.join(dir, 'packages.txt');
  if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) return config;

  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const grammars = [];
  for (const pkg of VSCODE_PACKAGES) {
    const out = JSON.parse(sh('npm', ['pack', `${pkg.name}@${pkg.version}`, '--json', '--loglevel=error', '--pack-destination', dir], { cwd: dir }));
    const tarball = path.join(dir, out[0].filename);
    const digest = 'sha512-' + crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64');
    if (digest !== pkg.integrity) throw new Error(`${pkg.name}@${pkg.version}: integrity ${digest} != pinned ${pkg.integrity}`);
    const into = path.join(dir, pkg.name.split('/')[1]);
    fs.mkdirSync(into);
    sh('tar', ['xzf', tarball, '-C', into]);
    fs.rmSync(tarball);
    // The extension's own manifest lists its grammars; the package keeps them in resources/.
    const resources = path.join(into, 'package', 'resources');
    const manifest = JSON.parse(fs.readFileSync(path.join(resources, 'package.json'), 'utf8'));
    for (const g of manifest.contributes.grammars) {
      if (grammars.some((x) => x.scopeName === g.scopeName)) continue;
      grammars.push({ scopeName: g.scopeName, path: path.relative(dir, path.join(resources, path.basename(g.path))) });
    }
  }
  grammars.push({
    scopeName: 'livenote.frontmatter.injection',
    path: path.relative(dir, path.join(root, 'livenote-frontmatter.tmLanguage.json')),
    injectTo: ['text.html.markdown'],
  });
  fs.writeFileSync(config, JSON.stringify({ private: true, contributes: { grammars } }, null, 2));
  fs.writeFileSync(stampFile, stamp);
  return config;
}

function runSuite(label, config) {
  const cli = require.resolve('vscode-tmgrammar-test/dist/unit.js');
  const r = spawnSync(process.execPath, [cli, '--config', config, 'test/*.test.md'], { cwd: root, encoding: 'utf8' });
  const keep = (text) => text.split('\n').filter((l) => !/^grammar not found for /.test(l)).join('\n');
  console.log(`--- syntax tests against ${label} host grammars`);
  process.stdout.write(keep(r.stdout || ''));
  process.stderr.write(keep(r.stderr || ''));
  return r.status === 0;
}

let ok = spawnSync(process.execPath, [path.join(__dirname, 'check-grammar.js')], { stdio: 'inherit' }).status === 0;
ok = runSuite('tm-grammars (VS Code markdown + TextMate YAML)', path.join(root, 'package.json')) && ok;
ok = runSuite("VS Code's own (markdown-basics + yaml extensions)", vscodeGrammarsConfig()) && ok;
console.log(ok ? 'ok TextMate syntax tests' : 'FAIL TextMate syntax tests');
process.exit(ok ? 0 : 1);
