/**
 * `pnpm packaging:sync`: writes the fields every package shares (license, repository with the
 * package directory, engines, publishConfig with public access and `exports` without the
 * `poise-source` condition) into each package.json under packages/ and apps/, and copies the
 * root LICENSE beside it. Other fields and the order of existing keys are kept.
 *
 * `pnpm packaging:check` (`--check`): writes nothing; lists every package that breaks the
 * conventions (see CONTRIBUTING.md) and exits 1 if there is one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  commonFields,
  listPackages,
  manifestProblems,
  readRootManifest,
  rootLicenseText,
  type Manifest,
} from './workspace';

/** Where a missing key goes: right after the first of these keys the manifest has. */
const ANCHORS: Record<string, string[]> = {
  license: ['keywords', 'description', 'version'],
  repository: ['license', 'keywords', 'description'],
  engines: ['files', 'types', 'exports', 'bin'],
  publishConfig: ['engines', 'files'],
};

/** `manifest` with `fields` set: existing keys updated in place, missing ones after their anchor. */
function mergeFields(manifest: Manifest, fields: Manifest): Manifest {
  const pending = Object.keys(fields).filter((k) => !(k in manifest));
  const present = new Set([...Object.keys(manifest), ...pending]);
  const after = new Map<string, string[]>();
  const atEnd: string[] = [];
  for (const key of pending) {
    const anchor = (ANCHORS[key] ?? []).find((a) => present.has(a) && a !== key);
    if (anchor === undefined) atEnd.push(key);
    else after.set(anchor, [...(after.get(anchor) ?? []), key]);
  }
  const out: Manifest = {};
  const emit = (key: string, value: unknown) => {
    out[key] = value;
    for (const next of after.get(key) ?? []) emit(next, fields[next]);
  };
  for (const [key, value] of Object.entries(manifest)) emit(key, key in fields ? fields[key] : value);
  for (const key of atEnd) emit(key, fields[key]);
  return out;
}

function main(argv: string[]): number {
  const check = argv.includes('--check');
  const rootManifest = readRootManifest();
  const license = rootLicenseText();
  let problems = 0;
  for (const pkg of listPackages()) {
    if (!check) {
      const file = join(pkg.dir, 'package.json');
      const next = mergeFields(pkg.manifest, commonFields(pkg, rootManifest));
      const text = `${JSON.stringify(next, null, 2)}\n`;
      if (text !== readFileSync(file, 'utf8')) {
        writeFileSync(file, text);
        console.log(`${pkg.relDir}/package.json: updated`);
      }
      pkg.manifest = next;
      const licenseFile = join(pkg.dir, 'LICENSE');
      let current = '';
      try {
        current = readFileSync(licenseFile, 'utf8');
      } catch {
        // absent: written below
      }
      if (current !== license) {
        writeFileSync(licenseFile, license);
        console.log(`${pkg.relDir}/LICENSE: written`);
      }
    }
    const found = manifestProblems(pkg, rootManifest, license);
    for (const p of found) console.error(`${pkg.name}: ${p}`);
    problems += found.length;
  }
  if (problems > 0) {
    console.error(`${problems} packaging problem(s); the conventions are in CONTRIBUTING.md`);
    return 1;
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
