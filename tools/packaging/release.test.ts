// Where a release would go, checked without publishing: `pnpm publish --dry-run` of every
// package names its target registry, which must be the root package.json's
// `publishConfig.registry` even with the environment variables a release recipe might set
// (pnpm 12 ignores `npm_config_registry`; `changeset publish` sets it for pnpm and asks
// `npm info` with the package's `publishConfig.registry`). RELEASING.md has the procedure.
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { listPackages, publishRegistry, readRootManifest } from './workspace';

const registry = publishRegistry(readRootManifest());
/** A registry nothing listens on: a release that used it would fail, not go astray. */
const DECOY = 'http://127.0.0.1:9/';

function dryRun(dir: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'pnpm',
      ['publish', '--dry-run', '--no-git-checks'],
      { cwd: dir, env: { ...process.env, ...env, NO_COLOR: '1' }, timeout: 120_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

describe('release dry run', () => {
  it.each(listPackages().map((p) => [p.name, p.dir, p.manifest.version] as const))(
    '%s would be published to the root publishConfig.registry, whatever the environment says',
    async (name, dir, version) => {
      for (const env of [
        {},
        { npm_config_registry: DECOY },
        { pnpm_config_registry: DECOY, npm_config_registry: DECOY },
      ]) {
        const r = await dryRun(dir, env);
        expect(r.code, r.output).toBe(0);
        const target = new RegExp(
          `${name.replace('/', '\\/')}@${String(version).replaceAll('.', '\\.')} → (\\S+)`,
        ).exec(r.output)?.[1];
        expect(target, `${JSON.stringify(env)}: ${r.output}`).toBe(registry);
      }
    },
    300_000,
  );
});
