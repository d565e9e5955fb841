// Fails when the import graph of src/ has a cycle between files, or when two folders of src/ import
// each other (a folder counts with its subfolders; a folder and its own subfolder are one room).
// Type-only imports count: they tie the files together just as much.
import { cruise } from 'dependency-cruiser';
import path from 'node:path';

const result = await cruise(['src'], {
  tsPreCompilationDeps: true,
  doNotFollow: { path: 'node_modules' },
  exclude: { path: '\\.spec\\.ts$' },
  tsConfig: { fileName: 'tsconfig.json' },
});
const modules = result.output.modules.filter((m) => m.source.startsWith('src/'));

const edges = new Map();
for (const m of modules) {
  const targets = m.dependencies.map((d) => d.resolved).filter((r) => r.startsWith('src/') && r !== m.source);
  edges.set(m.source, [...new Set(targets)]);
}

const problems = [];

// File-level cycles (Tarjan's strongly connected components).
let index = 0;
const stack = [];
const state = new Map();
const strongConnect = (v) => {
  const s = { index, low: index, onStack: true };
  index++;
  state.set(v, s);
  stack.push(v);
  for (const w of edges.get(v) ?? []) {
    const t = state.get(w);
    if (!t) {
      strongConnect(w);
      s.low = Math.min(s.low, state.get(w).low);
    } else if (t.onStack) s.low = Math.min(s.low, t.index);
  }
  if (s.low === s.index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      state.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1) problems.push(`import cycle between files:\n    ${component.sort().join('\n    ')}`);
  }
};
for (const v of edges.keys()) if (!state.has(v)) strongConnect(v);

// Folder-level cycles: folder A (with its subfolders) imports B and B imports A.
const ancestors = (file) => {
  const dirs = [];
  for (let dir = path.posix.dirname(file); dir !== 'src' && dir !== '.'; dir = path.posix.dirname(dir)) dirs.push(dir);
  return dirs;
};
const within = (a, b) => a === b || a.startsWith(`${b}/`);
const folderEdges = new Map();
for (const [from, targets] of edges) {
  for (const to of targets) {
    for (const a of ancestors(from)) {
      for (const b of ancestors(to)) {
        if (within(a, b) || within(b, a)) continue;
        const key = `${a} -> ${b}`;
        if (!folderEdges.has(key)) folderEdges.set(key, `${from} -> ${to}`);
      }
    }
  }
}
for (const [key, example] of folderEdges) {
  const [a, b] = key.split(' -> ');
  const back = folderEdges.get(`${b} -> ${a}`);
  if (back && a < b) problems.push(`folders import each other: ${a} <-> ${b}\n    ${example}\n    ${back}`);
}

if (problems.length) {
  console.error(`Import structure check failed (${problems.length}):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`Import structure: ${edges.size} files of src/, no cycle between files or folders.`);
