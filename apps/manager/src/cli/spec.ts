// The one definition of poise-manager's command line: synopsis, options, (room for)
// subcommands, signals, exit codes and files. `--help` (`renderHelp`), the man page
// (`renderManPage`, roff, `poise-manager.1`) and the argument parser (`main.ts`) all read it,
// so they cannot drift apart. A packaging script renders the man page with
// `renderManPage(version)`; its POLICY KEYS section is the policy registry's (the built-in
// plug-ins' keys).

import { BUILTIN_REGISTRY } from '@poise/ha';
import type { CrsKeySpec, PolicyRegistry } from '@poise/policy';

/** Exit codes: 0 done, 1 a runtime failure, 2 a usage error, 78 (EX_CONFIG) a bad config or token. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_CONFIG = 78;

/** What the parser does with an option (one key per option). */
export type OptionKey =
  | 'config'
  | 'mode'
  | 'once'
  | 'sim'
  | 'speed'
  | 'listen'
  | 'checkConfig'
  | 'printSchema'
  | 'help'
  | 'version'
  // the subcommands' (plan, drain, place)
  | 'snapshot'
  | 'json'
  | 'drain'
  | 'whatIf'
  | 'cpuOvercommit'
  | 'memoryHeadroom'
  | 'execute'
  | 'guest'
  | 'count'
  | 'at'
  | 'parallel';

/** One option of the command line. */
export interface CliOption {
  readonly key: OptionKey;
  /** Its names, the short one first: `['-c', '--config']`. */
  readonly names: readonly string[];
  /** The value it takes (`<file>`, `observe|act`); absent for a flag. */
  readonly value?: string;
  /** The value may be left out (`--sim [<case-dir>]`). */
  readonly valueOptional?: boolean;
  /** Plain sentences (wrapped by the renderers). */
  readonly description: string;
}

/**
 * A subcommand (`poise-manager <name> …`): its own synopsis, description and options; both
 * renderers list them under COMMANDS, and `plan/args.ts` parses them.
 */
export interface CliSubcommand {
  readonly name: string;
  /** Synopsis forms after `poise-manager <name>`. */
  readonly synopsis: readonly string[];
  readonly summary: string;
  readonly description: string;
  readonly options: readonly CliOption[];
}

/** The whole command line. */
export interface CliSpec {
  readonly name: string;
  /** One line: what it is (the man page's NAME). */
  readonly summary: string;
  /** Synopsis forms after the command name. */
  readonly synopsis: readonly string[];
  /** Paragraphs of plain sentences. */
  readonly description: readonly string[];
  readonly options: readonly CliOption[];
  readonly subcommands: readonly CliSubcommand[];
  readonly signals: readonly { readonly name: string; readonly description: string }[];
  readonly exitCodes: readonly { readonly code: number; readonly short: string; readonly description: string }[];
  readonly files: readonly { readonly path: string; readonly description: string }[];
  readonly seeAlso: readonly string[];
}

export const CLI_SPEC: CliSpec = {
  name: 'poise-manager',
  summary: 'balance the guests of a Proxmox VE HA cluster',
  synopsis: [
    '[--config <file>] [--mode observe|act] [--listen <host:port>] [--once]',
    '--sim [<case-dir>] [--speed <n>] [--listen <host:port>] [--config <file>] [--mode observe|act]',
    '--check-config --config <file>',
    '--print-schema',
    '--version',
    '--help',
  ],
  description: [
    'Balances the guests of a Proxmox VE cluster (env: pve) or of the embedded simulator (env: sim) with the poise balancer policy. ' +
      'Each round it reads the cluster, runs the policy and either explains what it would do (mode observe, the default) or requests the motion (mode act), at most one at a time, and follows it to its outcome. ' +
      'The Proxmox VE HA stack stays in charge of HA (fencing, recovery); poise only balances.',
    'The policy is the recommended preset unless the config says otherwise (policy.ha-auto-rebalance-preset: reference or none gives exactly the reference balancer of Proxmox VE 9.2). ' +
      'No motion is requested while a node has failed or HA fences, recovers, starts or stops a service, nor for limits.settle-time after. ' +
      'Each round logs one line with what it did or why it did nothing: JSON lines when stdout is not a terminal, text on a terminal.',
  ],
  options: [
    {
      key: 'config',
      names: ['-c', '--config'],
      value: '<file>',
      description: 'YAML config file (see poise-manager.example.yaml; schema: --print-schema).',
    },
    { key: 'mode', names: ['--mode'], value: 'observe|act', description: "Override the config's mode." },
    {
      key: 'once',
      names: ['--once'],
      description:
        'Run one round that answers what would be moved now and why, or why nothing (a hold of several rounds counts as met, and the line says so); nothing is requested. ' +
        'It takes no lock, writes no state and opens no metrics port, so it can run beside the daemon. Exit 1 if the round failed.',
    },
    {
      key: 'sim',
      names: ['--sim'],
      value: '<case-dir>',
      valueOptional: true,
      description:
        'Run against the embedded simulator on a case directory (default: the bundled scenario), time accelerated, printing each decision; mode act unless --mode says otherwise; exits when the scenario ends. ' +
        "The policy keys of the case's datacenter.cfg crs apply over the defaults, a config file's over both. Without --config: one round per 20 s HA round, no listener unless --listen (then the status page stays up after the scenario ends, until SIGINT or SIGTERM).",
    },
    {
      key: 'speed',
      names: ['--speed'],
      value: '<n>',
      description:
        'With --sim: simulated seconds per real second (0, the default: as fast as it runs; 10: one 20 s round every 2 s).',
    },
    {
      key: 'listen',
      names: ['--listen'],
      value: '<host:port>',
      description:
        'Serve the status page (/), its JSON endpoints (/api/…), /status and /metrics on this address (metrics.listen, and the listener on): 127.0.0.1:9879, [::1]:9879; port 0 picks a free one. Not authenticated: keep it on loopback or behind a proxy that is.',
    },
    {
      key: 'checkConfig',
      names: ['--check-config'],
      description:
        'Check the config and everything it names (the API token, the TLS files, the lock directory, the state file; with --sim the case), print a summary, then one verdict: valid (exit 0) or every problem (exit 78).',
    },
    {
      key: 'printSchema',
      names: ['--print-schema'],
      description:
        "Print the config file's JSON schema; with --config, with the keys of the policy plug-ins the file names (policy.plugins).",
    },
    { key: 'version', names: ['--version'], description: 'Print the version.' },
    { key: 'help', names: ['-h', '--help'], description: 'This text.' },
  ],
  subcommands: [
    {
      name: 'plan',
      synopsis: [
        '[--config <file> | --sim [<case-dir>] [--at start|end|<time>] | --snapshot <file.json>] [--drain <node>] [--cpu-overcommit <ratio>] [--memory-headroom <percent>] [--json]',
        '[--config <file> | --sim [<case-dir>] | --snapshot <file.json>] --what-if node-failure [--json]',
      ],
      summary:
        'print a placement plan: where every guest should be, and the safe steps of migrations that get there; never acts',
      description:
        'Reads the cluster (the live cluster through the API with the config of the daemon, the embedded simulator on a case with --sim once its command lists have run and it settled, or a snapshot file) and prints the plan of @poise/plan: ' +
        'the target placement within the HA rules and capacity limits, the steps (the motions of a step run in parallel), the balance before and after (the objective, the highest cpu and memory utilisation, and the reference imbalance), the migrations and the memory they copy, a lower bound on the objective and the gap to it. ' +
        'An infeasible cluster is an answer: the reasons say which constraints conflict (exit 0). Nothing is moved.',
      options: [
        {
          key: 'config',
          names: ['-c', '--config'],
          value: '<file>',
          description:
            'Read the live cluster as the daemon with this config does (env pve), or the simulator case the config names (env sim).',
        },
        {
          key: 'sim',
          names: ['--sim'],
          value: '<case-dir>',
          valueOptional: true,
          description:
            'Read the embedded simulator on a case directory (default: the bundled scenario), at the moment --at names, once the cluster settled.',
        },
        {
          key: 'at',
          names: ['--at'],
          value: 'start|end|<time>',
          description:
            "With --sim: when the simulated cluster is read: start (after the case's first command list, once settled), end (after its last command list, once settled) or a simulated time (seconds, 90m, 2h, hh:mm:ss). " +
            'Default: end when the command lists end within an hour of simulated time, else start (replaying a long timeline takes minutes); the cluster line says which moment was read.',
        },
        {
          key: 'snapshot',
          names: ['--snapshot'],
          value: '<file.json>',
          description:
            'Read the cluster from a JSON file (the schema of @poise/plan: nodes, guests, rules, capacity, weights; see apps/manager/README.md).',
        },
        {
          key: 'drain',
          names: ['--drain'],
          value: '<node>',
          description:
            'Plan emptying this node (repeat for several) as drain does: every guest on it leaves, HA resources and others, and another guest moves only where that is the only way to make room (named with why); the rest stay where they are. A guest that cannot leave (not migratable, pinned, no room) makes the plan infeasible and says why.',
        },
        {
          key: 'whatIf',
          names: ['--what-if'],
          value: 'node-failure',
          description:
            'Instead of a plan, an N+1 report: for each node, whether HA recovers its guests on the others within capacity and rules, where, and the balance after.',
        },
        {
          key: 'cpuOvercommit',
          names: ['--cpu-overcommit'],
          value: '<ratio>',
          description:
            "A hard cpu limit: assigned cores at most ratio × a node's cores (a number > 0; default: no cpu limit, or the snapshot file's).",
        },
        {
          key: 'memoryHeadroom',
          names: ['--memory-headroom'],
          value: '<percent>',
          description:
            "Memory kept free on every node, percent of its memory (0 ≤ x < 100; default 0, or the snapshot file's).",
        },
        {
          key: 'json',
          names: ['--json'],
          description:
            'Print one JSON document instead of text (feasible, reason, placement, steps, objective, bound, …).',
        },
      ],
    },
    {
      name: 'drain',
      synopsis: [
        '<node> [--config <file> | --sim [<case-dir>] [--at start|end|<time>]] [--execute] [--parallel <n>] [--cpu-overcommit <ratio>] [--memory-headroom <percent>]',
      ],
      summary:
        'empty a node by the plan of plan --drain, step by step, through the motion follower of the daemon (observe unless --execute)',
      description:
        "Plans the drain of the node (as plan --drain: the node's guests move, another guest only where that is the only way to make room, each named with why) and carries it out with up to --parallel motions in flight at once (default: the cluster's max_workers, else 4), each started when the motions of earlier steps on its nodes have ended, requested and followed to its outcome as the daemon does (HA resources through the HA manager, other guests by a migration task). " +
        'Without --execute it only prints what it would do. Before each motion it checks that the cluster is still as planned; it stops and says why when a guest is not where the plan expects it, a node failed, or a motion is refused or fails (exit 1). ' +
        'Stop the daemon first, or let the lock (lock.enabled) keep the two apart: with the lock held by another instance the drain does not start.',
      options: [
        {
          key: 'config',
          names: ['-c', '--config'],
          value: '<file>',
          description: 'The config of the daemon: cluster, token, limits, lock.',
        },
        {
          key: 'sim',
          names: ['--sim'],
          value: '<case-dir>',
          valueOptional: true,
          description: 'Drain a node of the embedded simulator on a case directory (default: the bundled scenario).',
        },
        {
          key: 'at',
          names: ['--at'],
          value: 'start|end|<time>',
          description:
            "With --sim: when the simulated cluster is read: start (after the case's first command list, once settled), end (after its last command list, once settled) or a simulated time (seconds, 90m, 2h, hh:mm:ss). " +
            'Default: end when the command lists end within an hour of simulated time, else start (replaying a long timeline takes minutes); the cluster line says which moment was read.',
        },
        {
          key: 'parallel',
          names: ['--parallel'],
          value: '<n>',
          description:
            "Motions in flight at once, 1 to 64 (default: the cluster's max_workers of datacenter.cfg, else 4). Each starts when its step's capacity checks hold with the motions still running.",
        },
        {
          key: 'execute',
          names: ['--execute'],
          description: 'Request the motions (default: print what would be done).',
        },
        { key: 'cpuOvercommit', names: ['--cpu-overcommit'], value: '<ratio>', description: 'As for plan.' },
        { key: 'memoryHeadroom', names: ['--memory-headroom'], value: '<percent>', description: 'As for plan.' },
      ],
    },
    {
      name: 'place',
      synopsis: [
        '--guest cpu=<cores>,mem=<size>[,load=<cores>][,id=<name>][,kind=vm|ct][,count=<n>] [--count <n>] [--config <file> | --sim [<case-dir>] | --snapshot <file.json>] [--json]',
      ],
      summary:
        'where new guests go (batch placement as HA places a guest it starts), honouring rules and capacity, and the cluster after',
      description:
        'Places new guests one after the other as the HA manager places a guest it starts (start scoring over the usable nodes, each placed guest counted for the next), within the capacity limits and the HA rules; existing guests stay. ' +
        'Prints where each goes, those that fit nowhere and why, and the balance after. Nothing is created or moved.',
      options: [
        {
          key: 'guest',
          names: ['--guest'],
          value: '<spec>',
          description:
            'A guest size, repeatable: cpu=<assigned cores>, mem=<size> (K, M, G or T, binary; a bare number is MiB, as in a guest config), and optionally load=<cores in use> (default: cpu), id=<name> (default new), kind=vm|ct, count=<copies>.',
        },
        {
          key: 'count',
          names: ['--count'],
          value: '<n>',
          description: 'Copies of each --guest that gives no count= (default 1).',
        },
        { key: 'config', names: ['-c', '--config'], value: '<file>', description: 'As for plan.' },
        { key: 'sim', names: ['--sim'], value: '<case-dir>', valueOptional: true, description: 'As for plan.' },
        { key: 'snapshot', names: ['--snapshot'], value: '<file.json>', description: 'As for plan.' },
        { key: 'at', names: ['--at'], value: 'start|end|<time>', description: 'As for plan.' },
        { key: 'cpuOvercommit', names: ['--cpu-overcommit'], value: '<ratio>', description: 'As for plan.' },
        { key: 'memoryHeadroom', names: ['--memory-headroom'], value: '<percent>', description: 'As for plan.' },
        { key: 'json', names: ['--json'], description: 'Print one JSON document instead of text.' },
      ],
    },
  ],
  signals: [
    { name: 'SIGTERM, SIGINT', description: 'Finish the current round, release the lock and exit 0.' },
    { name: 'SIGHUP', description: 'Reload the config; a bad file is refused and the running config kept.' },
    { name: 'closed output', description: 'A closed stdout (| head) ends it like SIGTERM, quietly, with status 0.' },
  ],
  exitCodes: [
    { code: EXIT_OK, short: 'ok', description: 'Done (also at the end of a simulated scenario).' },
    {
      code: EXIT_FAILURE,
      short: 'failure',
      description:
        'A runtime failure: a state file of another version, the metrics port taken, a round that failed under --once, a simulation that aborted, a drain that stopped before the node was empty.',
    },
    { code: EXIT_USAGE, short: 'usage error', description: 'A usage error.' },
    {
      code: EXIT_CONFIG,
      short: 'bad config or token',
      description:
        'A bad config, API token, TLS file, lock directory, state file, simulator case or snapshot file (EX_CONFIG).',
    },
  ],
  files: [
    { path: '/etc/poise-manager/config.yaml', description: 'The config file of the packaged service.' },
    { path: '/etc/poise-manager/token', description: 'The API token, USER@REALM!TOKENID=SECRET (mode 0600).' },
    {
      path: '/var/lib/poise-manager/state.json',
      description: 'The state file (state.file): stage state, the motion in flight, outcomes.',
    },
    {
      path: '/etc/pve/priv/lock/poise-manager',
      description: 'The active/standby lock on the cluster file system (lock.dir, lock.name).',
    },
  ],
  seeAlso: ['ha-manager(1)', 'pvesh(1)', 'pveum(1)'],
};

/** The option named `name` (`-c`, `--config`) of a spec, if any. */
export function findOption(spec: Pick<CliSpec, 'options'>, name: string): CliOption | undefined {
  return spec.options.find((o) => o.names.includes(name));
}

/** Width of the help text. */
const HELP_WIDTH = 96;

/** Splits `text` into lines of at most `width` characters (words are never broken). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** `-c, --config <file>` / `--sim [<case-dir>]`. */
function optionLabel(o: CliOption): string {
  const value = o.value === undefined ? '' : o.valueOptional ? ` [${o.value}]` : ` ${o.value}`;
  return `${o.names.join(', ')}${value}`;
}

/** A table of label + wrapped description, as `--help` lays it out. */
function helpTable(rows: readonly { label: string; text: string }[], indent = 2): string[] {
  const labelWidth = Math.min(24, Math.max(...rows.map((r) => r.label.length)));
  const out: string[] = [];
  for (const r of rows) {
    const pad = ' '.repeat(indent + labelWidth + 2);
    const text = wrap(r.text, HELP_WIDTH - pad.length);
    if (r.label.length > labelWidth) {
      out.push(`${' '.repeat(indent)}${r.label}`);
      out.push(...text.map((l) => `${pad}${l}`));
    } else {
      out.push(`${' '.repeat(indent)}${r.label.padEnd(labelWidth)}  ${text[0] ?? ''}`);
      out.push(...text.slice(1).map((l) => `${pad}${l}`));
    }
  }
  return out;
}

/** The `--help` text. */
export function renderHelp(spec: CliSpec = CLI_SPEC): string {
  const lines: string[] = [];
  spec.synopsis.forEach((form, i) => lines.push(`${i === 0 ? 'usage: ' : '       '}${spec.name} ${form}`));
  for (const sub of spec.subcommands)
    for (const form of sub.synopsis) lines.push(`       ${spec.name} ${sub.name} ${form}`);
  for (const paragraph of spec.description) lines.push('', ...wrap(paragraph, HELP_WIDTH));
  lines.push('', 'options:', ...helpTable(spec.options.map((o) => ({ label: optionLabel(o), text: o.description }))));
  if (spec.subcommands.length > 0) {
    lines.push('', 'commands:', ...helpTable(spec.subcommands.map((s) => ({ label: s.name, text: s.summary }))));
    for (const sub of spec.subcommands) {
      if (sub.options.length === 0) continue;
      lines.push(
        '',
        `${sub.name} options:`,
        ...helpTable(sub.options.map((o) => ({ label: optionLabel(o), text: o.description }))),
      );
    }
  }
  lines.push('', 'signals:', ...helpTable(spec.signals.map((s) => ({ label: s.name, text: s.description }))));
  lines.push('', `exit codes: ${spec.exitCodes.map((e) => `${e.code} ${e.short}`).join(', ')}.`);
  return lines.join('\n');
}

/**
 * The `--help` text of one subcommand (`poise-manager plan --help`): its synopsis, description
 * and options, then the exit codes.
 */
export function renderSubcommandHelp(name: string, spec: CliSpec = CLI_SPEC): string {
  const sub = spec.subcommands.find((s) => s.name === name);
  if (sub === undefined) throw new Error(`cli-spec has no subcommand '${name}'`);
  const lines: string[] = [];
  sub.synopsis.forEach((form, i) => lines.push(`${i === 0 ? 'usage: ' : '       '}${spec.name} ${sub.name} ${form}`));
  lines.push('', ...wrap(`${sub.name}: ${sub.summary}.`, HELP_WIDTH), '', ...wrap(sub.description, HELP_WIDTH));
  lines.push(
    '',
    'options:',
    ...helpTable([
      ...sub.options.map((o) => ({ label: optionLabel(o), text: o.description })),
      { label: '-h, --help', text: 'This text.' },
    ]),
  );
  lines.push('', `exit codes: ${spec.exitCodes.map((e) => `${e.code} ${e.short}`).join(', ')}.`);
  return lines.join('\n');
}

/** Text escaped for roff: backslashes, hyphens (so they stay ASCII minus signs), and a leading dot or quote. */
export function roffEscape(text: string): string {
  const escaped = text.replace(/\\/g, '\\e').replace(/-/g, '\\-');
  return /^[.']/.test(escaped) ? `\\&${escaped}` : escaped;
}

/** Synopsis text in roff: option names bold, `<values>` italic, the rest roman. */
function roffSynopsis(form: string): string {
  return form
    .split(/(\s+|[[\]|])/)
    .filter((t) => t !== '')
    .map((t) => {
      if (/^-/.test(t)) return `\\fB${roffEscape(t)}\\fR`;
      const value = /^<(.+)>$/.exec(t);
      if (value) return `\\fI${roffEscape(value[1]!)}\\fR`;
      return roffEscape(t);
    })
    .join('');
}

function roffOption(o: CliOption): string[] {
  const names = o.names.map((n) => `\\fB${roffEscape(n)}\\fR`).join(', ');
  const value =
    o.value === undefined
      ? ''
      : ` ${o.valueOptional ? '[' : ''}\\fI${roffEscape(o.value.replace(/^<(.+)>$/, '$1'))}\\fR${o.valueOptional ? ']' : ''}`;
  return ['.TP', `${names}${value}`, roffEscape(o.description)];
}

/** The man page (roff, section 1) of `version`. Deterministic: no date. */
/** The reference keys, as the man page names them. */
const REFERENCE_KEYS_TEXT =
  'the reference keys (ha-auto-rebalance-threshold, -method, -hold-duration, -margin) and ha-auto-rebalance-preset';

/** One policy key for the man page: what it does, its values, its default and the preset's value. */
function policyKeyText(spec: CrsKeySpec): string {
  const values =
    spec.type === 'number'
      ? `${spec.unit}, ${spec.min} to ${spec.max}; default ${spec.off}; recommended ${spec.recommended}`
      : spec.type === 'flag'
        ? `0 or 1; default ${spec.off ? 1 : 0}; recommended ${spec.recommended ? 1 : 0}`
        : `one of ${spec.choices.join(', ')}; default ${spec.off}; recommended ${spec.recommended}`;
  return `${spec.description} (${values}).`;
}

export function renderManPage(
  version: string,
  spec: CliSpec = CLI_SPEC,
  registry: PolicyRegistry = BUILTIN_REGISTRY,
): string {
  const title = roffEscape(spec.name.toUpperCase());
  const lines: string[] = [
    `.\\" ${spec.name}(1), rendered from apps/manager/src/cli/spec.ts`,
    `.TH ${title} 1 "" "${roffEscape(`${spec.name} ${version}`)}" "poise"`,
    '.SH NAME',
    `${roffEscape(spec.name)} \\- ${roffEscape(spec.summary)}`,
    '.SH SYNOPSIS',
  ];
  const forms = [
    ...spec.synopsis.map((f) => ({ command: spec.name, form: f })),
    ...spec.subcommands.flatMap((s) => s.synopsis.map((f) => ({ command: `${spec.name} ${s.name}`, form: f }))),
  ];
  forms.forEach((f, i) => {
    if (i > 0) lines.push('.br');
    lines.push(`\\fB${roffEscape(f.command)}\\fR ${roffSynopsis(f.form)}`);
  });
  lines.push('.SH DESCRIPTION');
  spec.description.forEach((p, i) => {
    if (i > 0) lines.push('.PP');
    lines.push(roffEscape(p));
  });
  lines.push('.SH OPTIONS');
  for (const o of spec.options) lines.push(...roffOption(o));
  if (spec.subcommands.length > 0) {
    lines.push('.SH COMMANDS');
    for (const s of spec.subcommands) {
      lines.push('.TP', `\\fB${roffEscape(s.name)}\\fR`, roffEscape(s.description));
      if (s.options.length > 0) lines.push('.RS', ...s.options.flatMap(roffOption), '.RE');
    }
  }
  lines.push(
    '.SH "POLICY KEYS"',
    roffEscape(
      `Keys of the config's policy section (and of a simulator case's datacenter.cfg crs) beside ${REFERENCE_KEYS_TEXT}: those of the policy plug-ins, built in or named by policy.plugins. A bad value is logged naming the key and that stage is off.`,
    ),
  );
  for (const k of registry.keys()) lines.push('.TP', `\\fB${roffEscape(k.key)}\\fR`, roffEscape(policyKeyText(k)));
  lines.push('.SH SIGNALS');
  for (const s of spec.signals) lines.push('.TP', `\\fB${roffEscape(s.name)}\\fR`, roffEscape(s.description));
  lines.push('.SH "EXIT STATUS"');
  for (const e of spec.exitCodes) lines.push('.TP', `\\fB${e.code}\\fR`, roffEscape(e.description));
  lines.push('.SH FILES');
  for (const f of spec.files) lines.push('.TP', `\\fI${roffEscape(f.path)}\\fR`, roffEscape(f.description));
  lines.push(
    '.SH "SEE ALSO"',
    spec.seeAlso
      .map((s) => `\\fB${roffEscape(s.replace(/\(\d\)$/, ''))}\\fR${/\(\d\)$/.exec(s)?.[0] ?? ''}`)
      .join(', '),
  );
  return `${lines.join('\n')}\n`;
}
