import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import tsupConfig from '../../tsup.config';
import { CLI_SPEC, type CliSpec, renderHelp, renderManPage, roffEscape, wrap } from './spec';
import { parseArgs } from './main';
import { packageVersion, VERSION } from './version';

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;

/** Every option name a text shows (`-c`, `--config`, …). */
function optionNames(text: string): string[] {
  return [...new Set([...text.matchAll(/(?<![\w-])(--?[a-z][a-z-]*)/g)].map((m) => m[1]!))].sort();
}

/** The roff of an option name as the man page writes it (`\-\-config`). */
const inRoff = (name: string) => name.replace(/-/g, '\\-');

describe('the command line has one definition', () => {
  it('--help lists every option of the spec, with its value', () => {
    const help = renderHelp();
    for (const o of CLI_SPEC.options) {
      for (const n of o.names) expect(help).toContain(n);
      if (o.value) expect(help).toContain(o.value);
    }
  });

  it('the man page covers every option --help shows (and its description)', () => {
    const help = renderHelp();
    const man = renderManPage('1.2.3');
    const shown = optionNames(help.split('\nsignals:')[0]!);
    expect(shown).toEqual(
      expect.arrayContaining(['--config', '--sim', '--once', '--check-config', '-h', '--help', '--version']),
    );
    for (const name of shown) expect(man, name).toContain(`\\fB${inRoff(name)}\\fR`);
    for (const o of CLI_SPEC.options) expect(man).toContain(roffEscape(o.description));
  });

  it('every option of the spec is parsed, and nothing else', () => {
    for (const o of CLI_SPEC.options) {
      for (const name of o.names) {
        const argv =
          o.value === undefined || o.valueOptional
            ? [name]
            : [name, o.key === 'mode' ? 'act' : o.key === 'speed' ? '1' : o.key === 'listen' ? '127.0.0.1:0' : 'x'];
        // --speed goes with --sim
        expect(() => parseArgs(o.key === 'speed' ? ['--sim', ...argv] : argv), name).not.toThrow();
      }
    }
    expect(() => parseArgs(['--bogus'])).toThrow("unknown option '--bogus'");
    expect(() => parseArgs(['plan'])).toThrow("unexpected argument 'plan'");
  });

  it('the man page has the sections of a section-1 page, its version, and no date', () => {
    const man = renderManPage('1.2.3');
    expect(man.split('\n')[1]).toBe('.TH POISE\\-MANAGER 1 "" "poise\\-manager 1.2.3" "poise"');
    for (const section of [
      'NAME',
      'SYNOPSIS',
      'DESCRIPTION',
      'OPTIONS',
      'SIGNALS',
      '"EXIT STATUS"',
      'FILES',
      '"SEE ALSO"',
    ])
      expect(man).toContain(`\n.SH ${section}\n`);
    expect(man).toContain('\n.SH COMMANDS\n.TP\n\\fBplan\\fR\n');
    for (const sub of CLI_SPEC.subcommands) expect(man).toContain(`\\fBpoise\\-manager ${sub.name}\\fR`);
    for (const e of CLI_SPEC.exitCodes) expect(man).toContain(`.TP\n\\fB${e.code}\\fR\n`);
    expect(renderManPage('1.2.3')).toBe(man);
  });

  it('only macro lines start with a dot; text that would is escaped', () => {
    expect(roffEscape('.hidden')).toBe('\\&.hidden');
    expect(roffEscape("'quoted")).toBe("\\&'quoted");
    expect(roffEscape('a\\b-c')).toBe('a\\eb\\-c');
    const macros = /^\.(\\"|TH|SH|TP|PP|br|RS|RE)( |$)/;
    for (const line of renderManPage('1.2.3').split('\n')) if (line.startsWith('.')) expect(line).toMatch(macros);
  });

  it('subcommands, when there are some, are in the usage, the help and the man page', () => {
    const spec: CliSpec = {
      ...CLI_SPEC,
      subcommands: [
        {
          name: 'plan',
          synopsis: ['[--config <file>] [--target <node>]'],
          summary: 'print a plan of motions',
          description: 'Prints the motions that would balance the cluster.',
          options: [{ key: 'config', names: ['--target'], value: '<node>', description: 'Only motions to this node.' }],
        },
      ],
    };
    const help = renderHelp(spec);
    expect(help).toContain('       poise-manager plan [--config <file>] [--target <node>]');
    expect(help).toMatch(/\ncommands:\n {2}plan +print a plan of motions\n/);
    expect(help).toMatch(/\nplan options:\n {2}--target <node> +Only motions to this node\.\n/);
    const man = renderManPage('1.2.3', spec);
    expect(man).toContain(
      '.SH COMMANDS\n.TP\n\\fBplan\\fR\nPrints the motions that would balance the cluster.\n.RS\n.TP\n\\fB\\-\\-target\\fR \\fInode\\fR\n',
    );
    expect(man).toContain(
      '\\fBpoise\\-manager plan\\fR [\\fB\\-\\-config\\fR \\fIfile\\fR] [\\fB\\-\\-target\\fR \\fInode\\fR]',
    );
  });

  it('wraps words at the width without breaking them', () => {
    expect(wrap('aaa bbb ccc dddd', 7)).toEqual(['aaa bbb', 'ccc', 'dddd']);
    expect(wrap('averyverylongword x', 4)).toEqual(['averyverylongword', 'x']);
  });
});

describe('the version', () => {
  it('is the package version, read from package.json when run from source', () => {
    expect(VERSION).toBe(PACKAGE_VERSION);
    expect(packageVersion(undefined)).toBe(PACKAGE_VERSION);
  });

  it('is the one the build defined when there is one (a bundle of one file, installed anywhere)', () => {
    expect(packageVersion('7.8.9', pathToFileURL('/nowhere/cli.js').href)).toBe('7.8.9');
    expect((tsupConfig as { define?: Record<string, string> }).define).toEqual({
      __POISE_MANAGER_VERSION__: JSON.stringify(PACKAGE_VERSION),
    });
  });

  it('is an error, not a made-up number, when it cannot be told', () => {
    expect(() => packageVersion(undefined, pathToFileURL('/nowhere/at/all/cli.js').href)).toThrow(
      /cannot find the package\.json of '@poise\/manager'/,
    );
  });
});
