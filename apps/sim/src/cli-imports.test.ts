import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `poise-sim run` of a large case must not carry the lab (Vega, mathjs, the generator) or the
// server: loaded at start they made the heap of a 20,000-service run, and so V8's growth of it,
// about 250 MB larger (725 MB against 446 MB resident). They are imported by their commands
// only (`await import(...)` in main.ts). This walks the static imports from the CLI's entry.
const SRC = dirname(fileURLToPath(import.meta.url));
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) todo.push(resolve(dirname(file), spec.endsWith('.ts') ? spec : `${spec}.ts`));
      else packages.add(spec);
    }
  }
  return { files, packages };
}

describe("the CLI's start-up imports", () => {
  const { files, packages } = staticGraph(join(SRC, 'cli.ts'));
  const relative = [...files].map((f) => f.slice(SRC.length + 1));

  it('reach the simulator and the rules, not the lab or the server', () => {
    expect(relative).toContain('main.ts');
    expect(packages).toContain('@poise/sim');
    expect(relative.filter((f) => f.startsWith('serve/') && f !== 'serve/usage.ts')).toEqual([]);
    expect(relative.filter((f) => f.startsWith('lab/') && !['lab/usage.ts', 'lab/errors.ts'].includes(f))).toEqual([]);
    expect([...packages].filter((p) => /^(vega|vega-lite|mathjs|yaml|undici)(\/|$)/.test(p))).toEqual([]);
  });

  it('the walk sees what the lab itself imports (the check above can fail)', () => {
    const lab = staticGraph(join(SRC, 'lab', 'cli-lab.ts'));
    expect([...lab.files].some((f) => f.endsWith(join('lab', 'charts.ts')))).toBe(true);
    expect([...lab.packages].some((p) => p.startsWith('vega'))).toBe(true);
  });
});
