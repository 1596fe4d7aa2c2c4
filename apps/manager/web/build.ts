/**
 * Builds the status page that the daemon serves at `/` into a directory: `index.html`,
 * `app.js` (the page's script with Vega and Vega-Lite, bundled by esbuild for the browser:
 * no CDN, nothing fetched from elsewhere), `app.css` and `third-party-licenses.txt` (the
 * license of every npm package bundled into `app.js`). The package build writes it to
 * `dist/ui/` (`tsup.config.ts`); run from source, the daemon builds it into a temporary
 * directory when the page is first asked for (`src/runtime/page.ts`).
 *
 *   pnpm tsx apps/manager/web/build.ts <out-dir>
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const HERE = dirname(fileURLToPath(import.meta.url));
const PAGE = join(HERE, 'page');

/** The files of a built page. */
export const PAGE_FILES = ['index.html', 'app.js', 'app.css', 'third-party-licenses.txt'] as const;

/** What a build wrote and read. */
export interface PageBuild {
  readonly dir: string;
  /** The npm packages bundled into `app.js`, by name (for a copyright file). */
  readonly packages: readonly { readonly name: string; readonly version: string; readonly dir: string }[];
}

const LICENSE_FILE = /^(licen[cs]e|copying)(\.(md|txt))?$/i;

/** The package directory of a bundled file (`…/node_modules/x/lib/y.js` → `…/node_modules/x/`). */
function packageDirOf(file: string): string | undefined {
  const matches = [...file.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)];
  const last = matches.at(-1);
  return last === undefined ? undefined : file.slice(0, last.index + last[0].length);
}

/** Builds the page into `outDir` (created if needed); any esbuild warning fails the build. */
export async function buildStatusPage(outDir: string): Promise<PageBuild> {
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(PAGE, 'main.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    outfile: join(outDir, 'app.js'),
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    absWorkingDir: HERE,
  });
  if (result.warnings.length > 0)
    throw new Error(`building the status page: ${result.warnings.map((w) => w.text).join('; ')}`);
  copyFileSync(join(PAGE, 'index.html'), join(outDir, 'index.html'));
  copyFileSync(join(PAGE, 'style.css'), join(outDir, 'app.css'));
  const dirs = new Set<string>();
  for (const input of Object.keys(result.metafile.inputs)) {
    const dir = packageDirOf(resolve(HERE, input));
    if (dir !== undefined) dirs.add(dir);
  }
  const packages = [...dirs]
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string };
      return { name: manifest.name, version: manifest.version, dir };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const notices = packages.map((p) => {
    const manifest = JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')) as { license?: unknown };
    const file = readdirSync(p.dir).find((f) => LICENSE_FILE.test(f));
    if (file === undefined) throw new Error(`${p.dir}: no LICENSE file; the page's license notices need its text`);
    return `${p.name} ${p.version} (${String(manifest.license)})\n\n${readFileSync(join(p.dir, file), 'utf8').trim()}\n`;
  });
  writeFileSync(
    join(outDir, 'third-party-licenses.txt'),
    `The status page's script (app.js) bundles these npm packages:\n\n${notices.join(`\n${'-'.repeat(72)}\n\n`)}`,
  );
  return { dir: outDir, packages };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (out === undefined) {
    console.error('usage: build.ts <out-dir>');
    process.exitCode = 2;
  } else {
    buildStatusPage(resolve(out)).then(
      (b) =>
        console.log(
          `wrote ${relative(process.cwd(), b.dir) || '.'}: ${PAGE_FILES.join(', ')} (${b.packages.length} bundled packages)`,
        ),
      (err: unknown) => {
        console.error(`build.ts: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 1;
      },
    );
  }
}
