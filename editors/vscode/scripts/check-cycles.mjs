// No import cycle among the extension's modules (type-only imports included: a cycle through a
// type still ties two modules' changes together). Prints each cycle and exits 1 when there is one.
//   node scripts/check-cycles.mjs [dir]   (default: src)
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = path.resolve(process.argv[2] ?? 'src');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
const importRe = /^\s*(?:import|export)\b[^;]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gms;

/** module name → the local modules it imports */
const graph = new Map();
for (const file of files) {
  const text = fs.readFileSync(path.join(dir, file), 'utf8');
  const deps = new Set();
  for (const m of text.matchAll(importRe)) {
    const target = path.normalize(path.join(path.dirname(file), m[1])).replace(/\.(ts|js)$/, '');
    if (!target.startsWith('..')) deps.add(target);
  }
  graph.set(file.replace(/\.ts$/, ''), deps);
}

const cycles = [];
const state = new Map(); // undefined: unseen, 1: on the stack, 2: done
const stack = [];
function visit(node) {
  state.set(node, 1);
  stack.push(node);
  for (const next of graph.get(node) ?? []) {
    if (!graph.has(next)) continue;
    if (state.get(next) === 1) cycles.push([...stack.slice(stack.indexOf(next)), next]);
    else if (state.get(next) === undefined) visit(next);
  }
  stack.pop();
  state.set(node, 2);
}
for (const node of [...graph.keys()].sort()) if (state.get(node) === undefined) visit(node);

if (cycles.length) {
  for (const c of cycles) console.error(`import cycle: ${c.join(' -> ')}`);
  process.exit(1);
}
console.log(`no import cycle among ${graph.size} modules of ${path.relative(process.cwd(), dir) || '.'}`);
