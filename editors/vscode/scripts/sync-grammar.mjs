// Copy the TextMate injection grammar from the repository's grammars/ folder into syntaxes/,
// where package.json points. grammars/ is the single source of truth; syntaxes/ is a build
// output (gitignored), so a missing or broken source must fail the build, never ship stale.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const name = 'livenote-frontmatter.tmLanguage.json';
const source = join(root, '..', '..', 'grammars', name);
const target = join(root, 'syntaxes', name);
const expectedScope = 'livenote.frontmatter.injection';

let text;
try {
  text = readFileSync(source, 'utf8');
} catch (e) {
  console.error(`sync-grammar: cannot read ${relative(process.cwd(), source)}: ${e.message}`);
  console.error('sync-grammar: the grammar is written in grammars/ at the repository root; the extension cannot be built without it.');
  process.exit(1);
}

let grammar;
try {
  grammar = JSON.parse(text);
} catch (e) {
  console.error(`sync-grammar: ${relative(process.cwd(), source)} is not valid JSON: ${e.message}`);
  process.exit(1);
}
// package.json's contributes.grammars names this scope; a mismatch would load nothing, silently.
if (grammar.scopeName !== expectedScope) {
  console.error(`sync-grammar: ${name} has scopeName ${JSON.stringify(grammar.scopeName)}, expected "${expectedScope}"`);
  process.exit(1);
}

mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, text);
console.log(`sync-grammar: ${relative(process.cwd(), source)} -> ${relative(process.cwd(), target)}`);
