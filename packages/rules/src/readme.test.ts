/**
 * The README's example is the real `examples/basic.ts`, and it prints what the README says.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { expect, test, vi } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

test('the README example is examples/basic.ts and prints the lines shown below it', async () => {
  const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
  const example = readFileSync(join(packageDir, 'examples', 'basic.ts'), 'utf8');
  const blocks = [...readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)];
  const code = blocks.find(([, lang]) => lang === 'ts');
  const output = blocks.find(([, lang]) => lang === 'text');
  expect(code?.[2]).toBe(example);

  const printed: string[] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    printed.push(args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg))).join(' '));
  });
  try {
    await import('../examples/basic');
  } finally {
    spy.mockRestore();
  }
  expect(`${printed.join('\n')}\n`).toBe(output?.[2]);
});
