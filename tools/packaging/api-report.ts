/**
 * The API report of every package entry, by API Extractor: `packages/<name>/api/<name>.api.md`
 * for the main entry and `<name>-<subpath>.api.md` for a subpath (`usage-testing.api.md`), read
 * from the built declaration files (`pnpm build` first). A change of a package's public surface
 * shows in review as a change of its report.
 *
 *   pnpm api:update   # writes the reports
 *   pnpm api:check    # fails, naming the reports, when one is out of date (CI)
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from '@microsoft/api-extractor';
import { exportTargets, isLibrary, listPackages, REPO_ROOT, type WorkspacePackage } from './workspace';

export interface ReportEntry {
  pkg: WorkspacePackage;
  /** `.` or `./testing`. */
  subpath: string;
  /** Absolute path of the entry's built declaration file. */
  types: string;
  /** The report's base file name, without `.api.md` (`usage`, `usage-testing`). */
  reportName: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every exported entry of every library, with its declaration file and report name. */
export function reportEntries(packages: WorkspacePackage[] = listPackages()): ReportEntry[] {
  const entries: ReportEntry[] = [];
  for (const pkg of packages.filter((p) => isLibrary(p.manifest))) {
    const exportsField = pkg.manifest.exports;
    if (!isRecord(exportsField)) continue;
    const base = pkg.name.replace(/^@poise\//, '');
    for (const [subpath, target] of Object.entries(exportsField)) {
      const types = isRecord(target) && typeof target.types === 'string' ? target.types : undefined;
      if (!types) {
        const found = exportTargets(target).join(', ');
        throw new Error(
          `${pkg.relDir}/package.json: exports['${subpath}'] has no 'types' condition (targets: ${found})`,
        );
      }
      const suffix = subpath === '.' ? '' : `-${subpath.replace(/^\.\//, '').replace(/[^\w.-]+/g, '-')}`;
      entries.push({ pkg, subpath, types: join(pkg.dir, types), reportName: `${base}${suffix}` });
    }
  }
  return entries;
}

/** The API Extractor configuration of one entry (no .api.json, no rolled-up .d.ts). */
function configOf(entry: ReportEntry, tempFolder: string): IConfigFile {
  return {
    projectFolder: entry.pkg.dir,
    mainEntryPointFilePath: entry.types,
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
        },
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: entry.reportName,
      reportFolder: join(entry.pkg.dir, 'api'),
      reportTempFolder: tempFolder,
      // a type the surface refers to but does not export is written into the report too
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: 'lf',
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning },
        // the packages do not use release tags (@public/@beta): every export is public
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
        // typedoc reports these (notExported); the report marks them for review
        'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
        // a package's own error codes and names may repeat between entries
        'ae-unresolved-link': { logLevel: ExtractorLogLevel.None },
        // TypeDoc builds the documentation (with its own validation); the report is the surface
        'ae-undocumented': { logLevel: ExtractorLogLevel.None },
      },
      // the doc comments are TypeDoc's, not TSDoc's
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
}

export interface ReportResult {
  entry: ReportEntry;
  /** Whether the checked-in report matches (check) or was written (update). */
  ok: boolean;
  changed: boolean;
  errors: string[];
}

/** Runs API Extractor on each entry: writes the reports (`update`) or compares them. */
export function runReports(update: boolean, entries: ReportEntry[] = reportEntries()): ReportResult[] {
  const temp = mkdtempSync(join(tmpdir(), 'poise-api-'));
  try {
    return entries.map((entry) => {
      const errors: string[] = [];
      if (!existsSync(entry.types)) {
        return {
          entry,
          ok: false,
          changed: false,
          errors: [`${relative(REPO_ROOT, entry.types)} is missing: run 'pnpm build' first`],
        };
      }
      if (update) mkdirSync(join(entry.pkg.dir, 'api'), { recursive: true });
      const config = ExtractorConfig.prepare({
        configObject: configOf(entry, temp),
        configObjectFullPath: join(entry.pkg.dir, 'api-extractor.json'),
        packageJsonFullPath: join(entry.pkg.dir, 'package.json'),
      });
      const result = Extractor.invoke(config, {
        localBuild: update,
        showVerboseMessages: false,
        messageCallback: (message) => {
          // console-* messages say what happened to the report files, reported below
          const isConsole = String(message.messageId).startsWith('console-');
          if (
            !isConsole &&
            (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning)
          ) {
            errors.push(message.formatMessageWithLocation(REPO_ROOT));
          }
          // printed by this script, once, with the entry it belongs to
          message.handled = true;
        },
      });
      const reportChanged = result.apiReportChanged && !update;
      if (reportChanged) {
        errors.push(
          `packages/${relative(join(REPO_ROOT, 'packages'), entry.pkg.dir)}/api/${entry.reportName}.api.md is out of date: run 'pnpm build && pnpm api:update' and commit it`,
        );
      }
      return { entry, ok: result.succeeded && errors.length === 0, changed: result.apiReportChanged, errors };
    });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const args = process.argv.slice(2);
  if (args.length !== 1 || (args[0] !== '--check' && args[0] !== '--update')) {
    process.stderr.write('usage: tsx tools/packaging/api-report.ts --check | --update\n');
    process.exit(2);
  }
  const update = args[0] === '--update';
  const results = runReports(update);
  for (const r of results) {
    const name = `${r.entry.pkg.name}${r.entry.subpath === '.' ? '' : r.entry.subpath.slice(1)}`;
    const state = r.ok ? (update && r.changed ? 'written' : 'up to date') : 'FAILED';
    process.stdout.write(`${name.padEnd(28)} ${state}\n`);
    for (const e of r.errors) process.stderr.write(`  ${e}\n`);
  }
  const failed = results.filter((r) => !r.ok).length;
  process.stdout.write(
    failed === 0
      ? `api: ${results.length} reports ${update ? 'written' : 'up to date'}\n`
      : `api: ${failed} of ${results.length} reports ${update ? 'failed' : 'out of date or failed'}\n`,
  );
  process.exit(failed === 0 ? 0 : 1);
}
