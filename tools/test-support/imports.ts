/**
 * Finds import cycles among the modules of one source directory (relative imports only; test
 * files left out). Part of the private `@poise/test-support` package: a package's test
 * (`@poise/test-support/imports`) states that its modules import each other in one direction only.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** `from './x'` and `import './x'`, type-only imports included (a cycle of types is still a cycle of modules). */
const RELATIVE_IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'\.\/([^']+)'|(?:^|\n)\s*import\s+'\.\/([^']+)'/g;

/** The relative imports of each module of `dir` (file names without `.ts`), in byte order. */
export function moduleImports(dir: string): Map<string, string[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .sort();
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    const deps = new Set<string>();
    for (const m of text.matchAll(RELATIVE_IMPORT)) deps.add((m[1] ?? m[2]!).replace(/\.(?:js|ts)$/, ''));
    graph.set(file.slice(0, -3), [...deps].sort());
  }
  return graph;
}

/**
 * Every cycle of the import graph of `dir`, each as the modules along it starting from its
 * byte-order smallest member (`['balance', 'manager']` for balance → manager → balance); empty
 * when the modules import each other in one direction only.
 */
export function importCycles(dir: string): string[][] {
  const graph = moduleImports(dir);
  const cycles = new Map<string, string[]>();
  const visit = (node: string, path: string[]) => {
    const at = path.indexOf(node);
    if (at >= 0) {
      const cycle = path.slice(at);
      const start = cycle.indexOf([...cycle].sort()[0]!);
      const canonical = [...cycle.slice(start), ...cycle.slice(0, start)];
      cycles.set(canonical.join(' → '), canonical);
      return;
    }
    for (const dep of graph.get(node) ?? []) visit(dep, [...path, node]);
  };
  for (const node of graph.keys()) visit(node, []);
  return [...cycles.values()];
}

/** `from '../x'`, `from './x'`, `import('../x')`: every relative specifier of a module. */
const ANY_RELATIVE =
  /\bfrom\s+'(\.{1,2}\/[^']+)'|\bimport\s*\(\s*'(\.{1,2}\/[^']+)'\s*\)|(?:^|\n)\s*import\s+'(\.{1,2}\/[^']+)'/g;

/**
 * Which top-level folders of `dir` the modules of each top-level folder import (test files
 * left out; a module directly in `dir` counts as the folder `.`; imports inside a folder are
 * not listed). Keys and values in byte order.
 */
export function folderImports(dir: string): Map<string, string[]> {
  const root = resolve(dir);
  const top = (path: string) => {
    const rel = relative(root, path).split(sep);
    return rel.length === 1 && !(existsSync(path) && statSync(path).isDirectory()) ? '.' : rel[0]!;
  };
  const edges = new Map<string, Set<string>>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
        const from = top(path);
        const deps = edges.get(from) ?? new Set<string>();
        edges.set(from, deps);
        for (const m of readFileSync(path, 'utf8').matchAll(ANY_RELATIVE)) {
          const target = resolve(dirname(path), (m[1] ?? m[2] ?? m[3])!);
          if (relative(root, target).startsWith('..')) continue;
          const to = top(target);
          if (to !== from) deps.add(to);
        }
      }
    }
  };
  walk(root);
  return new Map([...edges.keys()].sort().map((k) => [k, [...edges.get(k)!].sort()]));
}
