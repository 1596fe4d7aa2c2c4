// pack:local picks the packages a local install needs: the named ones and their @poise
// dependencies, dependencies first; a name outside the workspace or a private package is refused.
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { withPoiseDependencies } from './pack-local';
import { REPO_ROOT, type WorkspacePackage } from './workspace';

const pkg = (name: string, manifest: Record<string, unknown> = {}): WorkspacePackage => ({
  name,
  dir: `/nonexistent/${name}`,
  relDir: `packages/${name.replace('@poise/', '')}`,
  manifest: { name, ...manifest },
});

const workspace = [
  pkg('@poise/imbalance'),
  pkg('@poise/topsis', { dependencies: { '@poise/imbalance': 'workspace:*' } }),
  pkg('@poise/usage', { dependencies: { '@poise/imbalance': 'workspace:*', '@poise/topsis': 'workspace:*' } }),
  pkg('@poise/policy', { dependencies: { '@poise/usage': 'workspace:*' } }),
  pkg('@poise/policy-stable', { peerDependencies: { '@poise/policy': 'workspace:^' }, dependencies: { zod: '^4' } }),
  pkg('@poise/test-support', { private: true }),
  pkg('@poise/leaky', { dependencies: { '@poise/test-support': 'workspace:*' } }),
];

describe('withPoiseDependencies', () => {
  it.each([
    ['a package without dependencies', ['@poise/imbalance'], ['@poise/imbalance']],
    [
      'dependencies first, each once',
      ['@poise/usage', '@poise/topsis'],
      ['@poise/imbalance', '@poise/topsis', '@poise/usage'],
    ],
    [
      'peer dependencies too, third-party ones left to npm',
      ['@poise/policy-stable'],
      ['@poise/imbalance', '@poise/topsis', '@poise/usage', '@poise/policy', '@poise/policy-stable'],
    ],
  ])('%s', (_label, names, expected) => {
    expect(withPoiseDependencies(names, workspace).map((p) => p.name)).toEqual(expected);
  });

  it.each([
    [
      'a name outside the workspace',
      ['@poise/nope'],
      "the command line: '@poise/nope' is not a package of this workspace",
    ],
    ['a private package', ['@poise/test-support'], "'@poise/test-support' is private and is never packed"],
    [
      'a private dependency, named by the manifest that declares it',
      ['@poise/leaky'],
      "packages/leaky/package.json dependencies: '@poise/test-support' is private",
    ],
  ])('refuses %s', (_label, names, message) => {
    expect(() => withPoiseDependencies(names, workspace)).toThrow(message);
  });

  it('no published package depends on a private one (the real workspace)', () => {
    const names = ['@poise/usage', '@poise/rules', '@poise/policy-stable', '@poise/sim'];
    expect(withPoiseDependencies(names).every((p) => p.manifest.private !== true)).toBe(true);
  });
});

describe('the command lines', () => {
  const run = (script: string, args: string[]) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        'node',
        ['--import', 'tsx', script, ...args],
        { cwd: REPO_ROOT, timeout: 120_000 },
        (err, _stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }),
      );
    });

  it.each([
    ['tools/packaging/pack-local.ts', [], 2, 'usage: pnpm pack:local <out-dir> <@poise/name>...'],
    ['tools/packaging/pack-local.ts', ['@poise/usage'], 2, 'usage: pnpm pack:local'],
    ['tools/packaging/pack-local.ts', ['/tmp/x', '@poise/nope'], 1, "'@poise/nope' is not a package of this workspace"],
    ['tools/packaging/api-report.ts', ['--chek'], 2, 'usage: tsx tools/packaging/api-report.ts --check | --update'],
    ['tools/architecture/exports.ts', ['--lst'], 2, "unknown argument '--lst' (expected --list or --json)"],
  ])(
    '%s %j exits %i saying %s',
    async (script, args, code, message) => {
      const r = await run(script, args);
      expect(r.code).toBe(code);
      expect(r.stderr).toContain(message);
    },
    130_000,
  );
});
