/**
 * What the packages' README tests share: running a README's example and keeping a generated
 * table in a README up to date. Part of the private `@poise/test-support` package (a root
 * devDependency, never published): tests import `@poise/test-support/readme`, no package
 * depends on it, so it adds no edge between packages.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it, vi } from 'vitest';

/** The ```ts block under `## Example` and the ```text block that follows it (what it prints). */
const EXAMPLE = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```\n+```text\n([\s\S]*?)```/;

/**
 * Runs the README's example (the ```ts block under `## Example`) as a module written into
 * `dir` (the test's own directory, so the package's imports resolve as in the package) and
 * returns what it printed with `console.log`, one line each, and what the ```text block after
 * it says it prints; `undefined` when the README has no such pair of blocks.
 */
export async function runReadmeExample(
  readme: URL,
  dir: URL,
): Promise<{ printed: string; expected: string } | undefined> {
  const match = EXAMPLE.exec(readFileSync(readme, 'utf8'));
  if (!match) return undefined;
  const file = fileURLToPath(new URL('./readme-example.tmp.ts', dir));
  writeFileSync(file, match[1]!);
  const lines: string[] = [];
  const log = vi
    .spyOn(console, 'log')
    .mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  try {
    await import(/* @vite-ignore */ file);
  } finally {
    log.mockRestore();
    rmSync(file, { force: true });
  }
  return { printed: `${lines.join('\n')}\n`, expected: match[2]! };
}

/**
 * Registers the test that the README's example (see {@link runReadmeExample}) runs and prints
 * what the README shows.
 */
export function testReadmeExample(readme: URL, dir: URL): void {
  it('the README example runs and prints what the README shows', async () => {
    const example = await runReadmeExample(readme, dir);
    expect(example, 'README has an example (```ts under "## Example") and its output (```text)').toBeDefined();
    expect(example!.printed).toBe(example!.expected);
  });
}

/**
 * The text between `<!-- <marker> -->` and `<!-- /<marker> -->` in the README (without the
 * last newline), `undefined` when the markers are missing. With `POISE_UPDATE_README=1` it
 * first writes `table` there, so the test that compares the two passes and the README is new.
 */
export function readmeBlock(readme: URL, marker: string, table: string): string | undefined {
  const block = new RegExp(`(<!-- ${marker} -->\\n)([\\s\\S]*?)\\n?(<!-- \\/${marker} -->)`);
  let text = readFileSync(readme, 'utf8');
  if (!block.test(text)) return undefined;
  if (process.env.POISE_UPDATE_README === '1') {
    text = text.replace(block, (_m, open: string, _old: string, close: string) => `${open}${table}\n${close}`);
    writeFileSync(readme, text);
  }
  return block.exec(text)![2];
}
