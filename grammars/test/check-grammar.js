#!/usr/bin/env node
// Static checks of livenote-frontmatter.tmLanguage.json that the syntax tests cannot see:
// vscode-oniguruma does not report a malformed regex (an unbalanced group silently turns the
// whole rule into one that matches nothing, or the empty string everywhere), so every regex is
// checked for balanced groups and character classes here; every `#include` must name a
// repository entry; the names VS Code's extension relies on must be exact.
'use strict';
const fs = require('fs');
const path = require('path');

const file = path.join(__dirname, '..', 'livenote-frontmatter.tmLanguage.json');
const grammar = JSON.parse(fs.readFileSync(file, 'utf8'));
const problems = [];
const fail = (msg) => problems.push(msg);

if (grammar.scopeName !== 'livenote.frontmatter.injection') fail(`scopeName is ${grammar.scopeName}`);
if (!/^L:meta\.embedded\.block\.frontmatter\b/.test(grammar.injectionSelector || '')) {
  fail(`injectionSelector must start with L:meta.embedded.block.frontmatter: ${grammar.injectionSelector}`);
}

// Balanced (), and [] classes (nested classes allowed), honouring backslash escapes.
function checkRegex(where, re) {
  let depth = 0;
  let classDepth = 0;
  for (let i = 0; i < re.length; i++) {
    const c = re[i];
    if (c === '\\') { i++; continue; }
    if (classDepth > 0) {
      if (c === '[') classDepth++;
      else if (c === ']') classDepth--;
      continue;
    }
    if (c === '[') {
      classDepth = 1;
      if (re[i + 1] === '^') i++;
      if (re[i + 1] === ']') i++; // a literal ] first in a class
    } else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return fail(`${where}: unbalanced ')' at ${i}: ${re}`);
  }
  if (depth !== 0) fail(`${where}: ${depth} unclosed '(': ${re}`);
  if (classDepth !== 0) fail(`${where}: unclosed '[': ${re}`);
}

let regexes = 0;
function walk(node, where) {
  if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}[${i}]`));
  if (!node || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (['match', 'begin', 'end', 'while'].includes(key) && typeof value === 'string') {
      regexes++;
      checkRegex(`${where}.${key}`, value);
    }
    if (key === 'include' && value.startsWith('#') && !(value.slice(1) in grammar.repository)) {
      fail(`${where}: include ${value} names no repository entry`);
    }
    walk(value, `${where}.${key}`);
  }
}
walk(grammar.patterns, 'patterns');
walk(grammar.repository, 'repository');

if (problems.length) {
  for (const p of problems) console.error(`FAIL ${p}`);
  process.exit(1);
}
console.log(`ok grammar lint: ${regexes} regexes balanced, includes resolve, scopeName and injectionSelector as VS Code expects`);
