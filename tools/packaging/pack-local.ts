/**
 * Packs packages for an install from local tarballs: each named package and every `@poise/*`
 * package it depends on (dependencies and peer dependencies, transitively), with `pnpm pack`,
 * which applies `publishConfig` and writes `workspace:` ranges as versions. Installing all the
 * printed tarballs in one `npm install` needs no registry for the `@poise/*` packages (npm takes
 * each dependency from the tarball given beside it). Build first (`pnpm build`).
 *
 *   pnpm pack:local <out-dir> @poise/usage @poise/rules
 *
 * Prints one tarball path per line.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { listPackages, type WorkspacePackage } from './workspace';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The named packages and their `@poise/*` dependencies, each once, dependencies first. */
export function withPoiseDependencies(
  names: string[],
  packages: WorkspacePackage[] = listPackages(),
): WorkspacePackage[] {
  const byName = new Map(packages.map((p) => [p.name, p]));
  const ordered: WorkspacePackage[] = [];
  const seen = new Set<string>();
  const visit = (name: string, from: string) => {
    if (seen.has(name)) return;
    const pkg = byName.get(name);
    if (!pkg) {
      const known = [...byName.keys()].sort().join(', ');
      throw new Error(`${from}: '${name}' is not a package of this workspace (known: ${known})`);
    }
    if (pkg.manifest.private === true) throw new Error(`${from}: '${name}' is private and is never packed`);
    seen.add(name);
    for (const field of ['dependencies', 'peerDependencies'] as const) {
      const deps = pkg.manifest[field];
      if (!isRecord(deps)) continue;
      for (const dep of Object.keys(deps).sort()) {
        if (dep.startsWith('@poise/')) visit(dep, `${pkg.relDir}/package.json ${field}`);
      }
    }
    ordered.push(pkg);
  };
  for (const name of names) visit(name, 'the command line');
  return ordered;
}

/** Packs each package into `outDir` with `pnpm pack`; returns the tarball paths. */
export function packAll(packages: WorkspacePackage[], outDir: string): string[] {
  mkdirSync(outDir, { recursive: true });
  return packages.map((pkg) => {
    const missing = ['dist', 'README.md', 'LICENSE'].filter((f) => !existsSync(join(pkg.dir, f)));
    if (missing.length > 0) {
      throw new Error(`${pkg.relDir}: ${missing.join(', ')} missing (run 'pnpm build' first)`);
    }
    const out = execFileSync('pnpm', ['pack', '--pack-destination', outDir, '--json'], {
      cwd: pkg.dir,
      encoding: 'utf8',
    });
    return (JSON.parse(out) as { filename: string }).filename;
  });
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [outDir, ...names] = process.argv.slice(2);
  if (!outDir || names.length === 0 || outDir.startsWith('@')) {
    process.stderr.write('usage: pnpm pack:local <out-dir> <@poise/name>...\n');
    process.exit(2);
  }
  try {
    // pnpm runs scripts in the workspace root; a relative directory is the caller's
    const base = process.env.INIT_CWD ?? process.cwd();
    for (const tarball of packAll(withPoiseDependencies(names), resolve(base, outDir))) {
      process.stdout.write(`${tarball}\n`);
    }
  } catch (err) {
    process.stderr.write(`pack:local: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
