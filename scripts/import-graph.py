#!/usr/bin/env python3
"""Import graph of server/src: which file uses which (through `use crate::…`, `crate::…`
paths and `super::…`), resolved to files; then cycles (strongly connected components) among
files and among top-level modules."""
import os, re, sys
from collections import defaultdict

ROOT = sys.argv[1] if len(sys.argv) > 1 else 'server/src'
TESTS = '--tests' in sys.argv  # include cfg(test) files (*_tests.rs) too

files = {}
for d, _, fs in os.walk(ROOT):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f)
            files[os.path.relpath(p, ROOT)] = open(p).read()

def modpath(rel):
    parts = rel[:-3].split('/')
    if parts[-1] in ('mod', 'lib', 'main'):
        parts = parts[:-1]
    return parts

def resolve(parts):
    """Longest prefix of `parts` that names a file."""
    for n in range(len(parts), 0, -1):
        base = '/'.join(parts[:n])
        for cand in (base + '.rs', base + '/mod.rs'):
            if cand in files:
                return cand
    return None

# Comments, string literals (raw ones too) and char literals, matched left to right so that
# `'"'` or `"//"` cannot start a string or a comment: a string left open would swallow the code
# after it (up to the next quote), `#[cfg(test)]` markers included.
TOKENS = re.compile(
    r'//[^\n]*'
    r'|/\*[\s\S]*?\*/'
    r'|(?<!\w)b?r(#*)"[\s\S]*?"\1'
    r'|"(?:\\[\s\S]|[^"\\])*"'
    r"|'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'"
)

def strip_comments(text):
    def blank(m):
        s = m.group(0)
        if s.startswith('/'):
            return ''
        return "' '" if s.startswith("'") else '""'
    return TOKENS.sub(blank, text)

def expand_use(body):
    """`a::{b, c::{d}}` -> [a::b, a::c::d] (good enough for our style)."""
    body = re.sub(r'\s+', '', body)
    m = re.match(r'^(.*?)::\{(.*)\}$', body)
    if not m:
        return [body]
    prefix, inner = m.groups()
    items, depth, cur = [], 0, ''
    for ch in inner:
        if ch == ',' and depth == 0:
            items.append(cur); cur = ''; continue
        depth += ch == '{'; depth -= ch == '}'
        cur += ch
    items.append(cur)
    out = []
    for it in items:
        if it:
            out += [prefix + '::' + e for e in expand_use(it)]
    return out

edges = defaultdict(set)
for rel, text in files.items():
    is_test = rel.endswith('_tests.rs')
    if is_test and not TESTS:
        continue
    t = strip_comments(text)
    if not TESTS:
        # drop inline `#[cfg(test)] mod tests { … }` blocks (they run to the end of the file here)
        i = t.find('#[cfg(test)]\nmod tests {')
        if i >= 0:
            t = t[:i]
    # The module path of this file's code: a `x_tests.rs` file is the module `x::tests`.
    me = modpath(rel)
    if is_test:
        me = me[:-1] + [me[-1][:-len('_tests')], 'tests']
    paths = []
    for m in re.finditer(r'\buse\s+([^;]+);', t):
        paths += expand_use(m.group(1))
    paths += re.findall(r'(?<![:\w])((?:crate|super)(?:::\w+)+)', t)
    for p in paths:
        segs = p.split('::')
        if segs[0] == 'crate':
            target = segs[1:]
        elif segs[0] == 'super':
            n = 0
            while n < len(segs) and segs[n] == 'super':
                n += 1
            target = me[:len(me) - n] + segs[n:]
        else:
            continue
        f = resolve([x for x in target if x not in ('self', '*')])
        if f and f != rel and not (is_test and f == rel.replace('_tests.rs', '.rs')):
            edges[rel].add(f)

def sccs(nodes, adj):
    idx, low, on, st, out, c = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)
    def go(v):
        idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
        for w in adj.get(v, ()):
            if w not in idx:
                go(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            out.append(comp)
    for v in nodes:
        if v not in idx: go(v)
    return [sorted(x) for x in out if len(x) > 1]

top = lambda f: modpath(f)[0] if modpath(f) else 'lib'
medges = defaultdict(set)
for a, bs in edges.items():
    for b in bs:
        if top(a) != top(b):
            medges[top(a)].add(top(b))

focus = [m for m in sys.argv[2:] if not m.startswith('--')]
print('module graph' + (' (' + ', '.join(focus) + ')' if focus else '') + ':')
for m in sorted(medges):
    if focus and m not in focus: continue
    deps = sorted(d for d in medges[m] if not focus or d in focus)
    print(f'  {m} -> {", ".join(deps) if deps else "(none)"}')
fc = sccs(sorted(files), edges)
mc = sccs(sorted(medges), medges)
print('file cycles:', fc or 'none')
print('module cycles:', mc or 'none')
