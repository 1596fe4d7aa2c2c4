import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { errorMessage } from '../errors';
import type { HttpReply, HttpRoute } from './listener';

/** The files of the built page and what they are served as: `/` and `/ui/<file>`. */
const PAGE_FILES: readonly { readonly file: string; readonly path: string; readonly type: string }[] = [
  { file: 'index.html', path: '/', type: 'text/html; charset=utf-8' },
  { file: 'app.js', path: '/ui/app.js', type: 'text/javascript; charset=utf-8' },
  { file: 'app.css', path: '/ui/app.css', type: 'text/css; charset=utf-8' },
  { file: 'third-party-licenses.txt', path: '/ui/third-party-licenses.txt', type: 'text/plain; charset=utf-8' },
];

/**
 * What the page may load: its own script, style and data only (nothing from another origin).
 * Vega compiles its expressions with `new Function` ('unsafe-eval'); its SVG sets inline
 * styles ('unsafe-inline' for styles).
 */
const PAGE_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Where the built page lies: `ui/` beside the bundle (`dist/ui/` of the npm package,
 * `/usr/share/poise-manager/dist/ui/` of the Debian package), or `undefined` when running from
 * source (then `web/build.ts` builds it).
 */
function builtPageDir(moduleDir: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  const dir = join(moduleDir, 'ui');
  return existsSync(join(dir, 'index.html')) ? dir : undefined;
}

/** The page's source directory when running from source (`src/runtime/` → `web/`), if there. */
function sourceBuilder(moduleDir: string): string | undefined {
  if (basename(moduleDir) !== 'runtime') return undefined;
  const file = resolve(moduleDir, '..', '..', 'web', 'build.ts');
  return existsSync(file) ? file : undefined;
}

/** The page's files by path, read from a built directory. */
function readPage(dir: string): Map<string, HttpReply> {
  const replies = new Map<string, HttpReply>();
  for (const f of PAGE_FILES) {
    const body = readFileSync(join(dir, f.file));
    replies.set(f.path, {
      status: 200,
      type: f.type,
      body,
      gzip: gzipSync(body, { level: 9 }),
      headers: {
        'cache-control': 'no-cache',
        ...(f.path === '/' ? { 'content-security-policy': PAGE_CSP, 'referrer-policy': 'no-referrer' } : {}),
      },
    });
  }
  return replies;
}

/**
 * The status page's routes (`/`, `/ui/app.js`, `/ui/app.css`, `/ui/third-party-licenses.txt`).
 * The files are read (or, from source, built) when the page is first asked for, once. A build
 * without them (a bundle copied without its `ui/`) answers 503 saying so; the JSON endpoints
 * work without the page.
 */
export class StatusPage {
  private loading: Promise<Map<string, HttpReply>> | undefined;

  constructor(private readonly moduleDir: string = dirname(fileURLToPath(import.meta.url))) {}

  private async load(): Promise<Map<string, HttpReply>> {
    const built = builtPageDir(this.moduleDir);
    if (built !== undefined) return readPage(built);
    const builder = sourceBuilder(this.moduleDir);
    if (builder === undefined) {
      throw new Error(
        `the status page's files are not in this build ('${join(this.moduleDir, 'ui')}' has no index.html); the JSON endpoints (/status, /api/…) and /metrics work without them`,
      );
    }
    // from source: build with esbuild (a development dependency) into a directory of this run
    const out = mkdtempSync(join(tmpdir(), 'poise-manager-page-'));
    try {
      const { buildStatusPage } = (await import(pathToFileURL(builder).href)) as {
        buildStatusPage: (dir: string) => Promise<unknown>;
      };
      await buildStatusPage(out);
      return readPage(out);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }

  /** The routes, one per file. */
  routes(): Map<string, HttpRoute> {
    const serve =
      (path: string): HttpRoute =>
      async () => {
        this.loading ??= this.load();
        try {
          return (await this.loading).get(path)!;
        } catch (err) {
          return { status: 503, type: 'text/plain; charset=utf-8', body: `${errorMessage(err)}\n` };
        }
      };
    return new Map(PAGE_FILES.map((f) => [f.path, serve(f.path)]));
  }
}
