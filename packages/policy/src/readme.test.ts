import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it, vi } from 'vitest';

// The README's example is real code: this runs the ```ts block under "## Example" and compares
// what it prints with the ```text block that follows it.
it('the README example runs and prints what the README shows', async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const match = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```\n+```text\n([\s\S]*?)```/.exec(readme);
  expect(match, 'README has an example and its output').not.toBeNull();
  const file = fileURLToPath(new URL('./readme-example.tmp.ts', import.meta.url));
  writeFileSync(file, match![1]!);
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  try {
    await import(/* @vite-ignore */ file);
  } finally {
    log.mockRestore();
    rmSync(file, { force: true });
  }
  expect(`${lines.join('\n')}\n`).toBe(match![2]);
});
