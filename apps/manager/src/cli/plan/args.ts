import type { CapacityArgs } from '../../balancing/plan-input';
import { CLI_SPEC, type CliSubcommand, findOption, type OptionKey } from '../spec';
import type { NewGuest } from '@poise/plan';

/** A usage error of a subcommand (exit 2): the message names the option and the value. */
export class PlanUsageError extends Error {
  override name = 'PlanUsageError';
}

/** The subcommands this folder runs. */
type PlanCommandName = 'plan' | 'drain' | 'place';

/** Where the cluster is read from. */
export type ClusterSource =
  | { readonly kind: 'config'; readonly file: string }
  | { readonly kind: 'sim'; readonly dir: string | undefined }
  | { readonly kind: 'snapshot'; readonly file: string };

/** Capacity limits from the command line (each absent when not given). */

/** When a simulated cluster is read (`--at`): a named moment, or simulated seconds from the start. */
export type ReadPoint = 'start' | 'end' | { readonly seconds: number };

/** Motions in flight at most (`--parallel`). */
const MAX_PARALLEL = 64;

/** `--at start|end|<time>`: seconds (`600`), `90m`, `2h`, `30s`, or `hh:mm:ss`. */
export function parseReadPoint(text: string): ReadPoint {
  const t = text.trim();
  if (t === 'start' || t === 'end') return t;
  const unit = /^(\d+)(s|m|h)?$/.exec(t);
  if (unit) return { seconds: Number(unit[1]) * (unit[2] === 'h' ? 3600 : unit[2] === 'm' ? 60 : 1) };
  const clock = /^(\d+):([0-5]\d):([0-5]\d)$/.exec(t);
  if (clock) return { seconds: Number(clock[1]) * 3600 + Number(clock[2]) * 60 + Number(clock[3]) };
  throw new PlanUsageError(`'--at' takes start, end or a simulated time (seconds, 90m, 2h or hh:mm:ss), got '${text}'`);
}

/** `--parallel <n>`: a whole number from 1 to {@link MAX_PARALLEL}. */
function parseParallel(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PARALLEL)
    throw new PlanUsageError(
      `'--parallel' takes the number of motions in flight, a whole number from 1 to ${MAX_PARALLEL}, got '${text}'`,
    );
  return n;
}

/** A parsed `plan`, `drain` or `place` command line. */
export interface PlanArgs {
  readonly command: PlanCommandName;
  readonly source: ClusterSource;
  readonly capacity: CapacityArgs;
  readonly json: boolean;
  /** `plan --drain` (repeatable) or `drain <node>`. */
  readonly drain: readonly string[];
  readonly whatIf: 'node-failure' | undefined;
  /** `drain --execute`. */
  readonly execute: boolean;
  /** `place --guest` specs, counts applied. */
  readonly guests: readonly NewGuest[];
  /** `--at` (with `--sim`); undefined: the default moment. */
  readonly at: ReadPoint | undefined;
  /** `drain --parallel`; undefined: the cluster's `max_workers`. */
  readonly parallel: number | undefined;
}

/** Whether `argv` starts with a subcommand this module runs. */
export function isPlanCommand(argv: readonly string[]): boolean {
  return argv[0] === 'plan' || argv[0] === 'drain' || argv[0] === 'place';
}

function subcommand(name: PlanCommandName): CliSubcommand {
  const sub = CLI_SPEC.subcommands.find((s) => s.name === name);
  if (sub === undefined) throw new Error(`cli-spec has no subcommand '${name}'`);
  return sub;
}

/** A number as the whole argument (no trailing garbage, no `Infinity`), else undefined. */
function numberArg(text: string): number | undefined {
  if (!/^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text.trim())) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** `--cpu-overcommit`: a ratio > 0. */
function parseOvercommit(text: string): number {
  const n = numberArg(text);
  if (n === undefined || n <= 0)
    throw new PlanUsageError(
      `'--cpu-overcommit' takes a ratio > 0 (assigned cores per physical core, e.g. 4), got '${text}'`,
    );
  return n;
}

/** `--memory-headroom`: percent, 0 ≤ x < 100. */
function parseHeadroom(text: string): number {
  const n = numberArg(text.replace(/%$/, ''));
  if (n === undefined || n >= 100)
    throw new PlanUsageError(`'--memory-headroom' takes a percent from 0 up to (not including) 100, got '${text}'`);
  return n;
}

const SIZE_UNITS: Readonly<Record<string, number>> = { K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };
/** A bare memory number is MiB, as `memory:` in a Proxmox VE guest config. */
const BARE_MEMORY_UNIT = 1024 ** 2;
/** Copies of one guest spec at most (`@poise/plan`'s limit per request entry). */
const MAX_COPIES = 100_000;

/** `8G`, `512M`, `8GiB`, `8192` (MiB) → bytes; undefined when malformed. */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(?:([KMGT])(?:i?B)?)?$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = m[2] === undefined ? BARE_MEMORY_UNIT : SIZE_UNITS[m[2].toUpperCase()]!;
  const bytes = Number(m[1]) * unit;
  return Number.isFinite(bytes) && bytes > 0 ? Math.round(bytes) : undefined;
}

function parseCount(text: string, what: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_COPIES)
    throw new PlanUsageError(`${what} takes a whole number from 1 to ${MAX_COPIES}, got '${text}'`);
  return n;
}

/**
 * One `--guest` spec: `cpu=4,mem=8G[,load=2][,id=web][,kind=vm|ct][,count=3]` → a new guest
 * (`count` from the spec, else `defaultCount`). Errors name the spec and the key.
 */
export function parseGuestSpec(spec: string, defaultCount: number | undefined): NewGuest {
  const fields = new Map<string, string>();
  for (const part of spec.split(',')) {
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (eq < 0 || key === '')
      throw new PlanUsageError(`'--guest ${spec}': '${part}' is not key=value (keys: cpu, mem, load, id, kind, count)`);
    if (!['cpu', 'mem', 'load', 'id', 'kind', 'count'].includes(key))
      throw new PlanUsageError(`'--guest ${spec}': unknown key '${key}' (keys: cpu, mem, load, id, kind, count)`);
    if (fields.has(key)) throw new PlanUsageError(`'--guest ${spec}': '${key}' given twice`);
    fields.set(key, part.slice(eq + 1).trim());
  }
  const cpuText = fields.get('cpu');
  const memText = fields.get('mem');
  if (cpuText === undefined) throw new PlanUsageError(`'--guest ${spec}': cpu=<assigned cores> is missing`);
  if (memText === undefined) throw new PlanUsageError(`'--guest ${spec}': mem=<size> is missing`);
  const cores = numberArg(cpuText);
  if (cores === undefined || cores <= 0)
    throw new PlanUsageError(`'--guest ${spec}': cpu must be a number of cores > 0, got '${cpuText}'`);
  const mem = parseSize(memText);
  if (mem === undefined)
    throw new PlanUsageError(
      `'--guest ${spec}': mem must be a size > 0 such as 8G, 512M or 8192 (MiB), got '${memText}'`,
    );
  const loadText = fields.get('load');
  const cpu = loadText === undefined ? undefined : numberArg(loadText);
  if (loadText !== undefined && cpu === undefined)
    throw new PlanUsageError(`'--guest ${spec}': load must be a number of cores ≥ 0, got '${loadText}'`);
  if (cpu !== undefined && cpu > cores)
    throw new PlanUsageError(
      `'--guest ${spec}': load (cores in use) ${loadText} is more than the ${cpuText} cores assigned by cpu=`,
    );
  const kind = fields.get('kind');
  if (kind !== undefined && kind !== 'vm' && kind !== 'ct')
    throw new PlanUsageError(`'--guest ${spec}': kind must be vm or ct, got '${kind}'`);
  const id = fields.get('id');
  if (id !== undefined && id === '') throw new PlanUsageError(`'--guest ${spec}': id must not be empty`);
  const countText = fields.get('count');
  const count = countText === undefined ? (defaultCount ?? 1) : parseCount(countText, `'--guest ${spec}': count`);
  return {
    cores,
    mem,
    count,
    ...(cpu === undefined ? {} : { cpu }),
    ...(id === undefined ? {} : { id }),
    ...(kind === undefined ? {} : { kind }),
  };
}

/**
 * Parses `plan …`, `drain <node> …` or `place …` (argv[0] is the subcommand) against its
 * options in `CLI_SPEC`, then checks the values and combinations. Throws
 * {@link PlanUsageError}.
 */
export function parsePlanArgs(argv: readonly string[]): PlanArgs {
  const command = argv[0] as PlanCommandName;
  const sub = subcommand(command);
  const values = new Map<OptionKey, string[]>();
  const positional: string[] = [];
  let simDir: string | undefined;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-') || a === '-') {
      positional.push(a);
      continue;
    }
    const option = findOption(sub, a);
    if (option === undefined) throw new PlanUsageError(`unknown option '${a}' for '${command}'`);
    let v = '';
    if (option.value !== undefined) {
      const next = argv[i + 1];
      if (option.valueOptional) {
        if (next !== undefined && !next.startsWith('-')) v = argv[++i]!;
      } else {
        if (next === undefined || next.startsWith('--'))
          throw new PlanUsageError(`'${a}' needs a value (${option.value})`);
        v = argv[++i]!;
      }
    }
    if (option.key === 'sim' && v !== '') simDir = v;
    values.set(option.key, [...(values.get(option.key) ?? []), v]);
  }
  const once = (key: OptionKey, name: string): string | undefined => {
    const list = values.get(key);
    if (list !== undefined && list.length > 1) throw new PlanUsageError(`'${name}' given more than once`);
    return list?.[0];
  };
  const drain = [...(values.get('drain') ?? [])];
  for (const [i, node] of drain.entries())
    if (drain.indexOf(node) !== i) throw new PlanUsageError(`'--drain ${node}' given more than once`);
  if (command === 'drain') {
    if (positional.length !== 1)
      throw new PlanUsageError(
        positional.length === 0
          ? "'drain' needs the node to empty: poise-manager drain <node>"
          : `'drain' takes one node, got ${positional.map((p) => `'${p}'`).join(', ')}`,
      );
    drain.push(positional[0]!);
  } else if (positional.length > 0) throw new PlanUsageError(`unexpected argument '${positional[0]}' for '${command}'`);

  const sources: ClusterSource[] = [];
  const config = once('config', '--config');
  if (config !== undefined) sources.push({ kind: 'config', file: config });
  if (values.has('sim')) {
    once('sim', '--sim');
    sources.push({ kind: 'sim', dir: simDir });
  }
  const snapshot = once('snapshot', '--snapshot');
  if (snapshot !== undefined) sources.push({ kind: 'snapshot', file: snapshot });
  if (sources.length === 0)
    throw new PlanUsageError(
      `'${command}' reads the cluster from --config <file>, --sim [<case-dir>]${command === 'drain' ? '' : ' or --snapshot <file.json>'}: none given`,
    );
  if (sources.length > 1)
    throw new PlanUsageError(`'${command}' reads one cluster: --config, --sim and --snapshot do not go together`);

  const overcommit = once('cpuOvercommit', '--cpu-overcommit');
  const headroom = once('memoryHeadroom', '--memory-headroom');
  const capacity: CapacityArgs = {
    ...(overcommit === undefined ? {} : { cpuOvercommitRatio: parseOvercommit(overcommit) }),
    ...(headroom === undefined ? {} : { memoryHeadroomPercent: parseHeadroom(headroom) }),
  };
  const whatIfText = once('whatIf', '--what-if');
  if (whatIfText !== undefined && whatIfText !== 'node-failure')
    throw new PlanUsageError(`'--what-if' takes node-failure, got '${whatIfText}'`);
  if (whatIfText !== undefined && drain.length > 0)
    throw new PlanUsageError("'--what-if' and '--drain' do not go together");
  const countText = once('count', '--count');
  const defaultCount = countText === undefined ? undefined : parseCount(countText, "'--count'");
  const guests = (values.get('guest') ?? []).map((spec) => parseGuestSpec(spec, defaultCount));
  if (command === 'place' && guests.length === 0)
    throw new PlanUsageError("'place' needs at least one --guest cpu=<cores>,mem=<size>");
  const atText = once('at', '--at');
  const at = atText === undefined ? undefined : parseReadPoint(atText);
  if (at !== undefined && sources[0]!.kind !== 'sim')
    throw new PlanUsageError("'--at' says when a simulated cluster is read: it goes with --sim only");
  const parallelText = once('parallel', '--parallel');
  return {
    at,
    parallel: parallelText === undefined ? undefined : parseParallel(parallelText),
    command,
    source: sources[0]!,
    capacity,
    json: values.has('json'),
    drain,
    whatIf: whatIfText,
    execute: values.has('execute'),
    guests,
  };
}
