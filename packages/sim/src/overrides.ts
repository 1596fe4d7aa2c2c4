import { PRESET_KEY, type PolicyRegistry } from '@poise/policy';
import type { DatacenterSettings } from '@poise/env';
import { AUTO_REBALANCE_PERCENT_RANGE, BUILTIN_REGISTRY, SCHEDULER_MODES } from '@poise/ha';
import { crsKeys, type CaseInput } from './case';
import { SimError } from './errors';

/** A decimal number as the command line gives it (no hex, no blanks). */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The problem with a reference key's value, or undefined (the rules of the case loader). */
function referenceProblem(key: string, value: number | string | boolean): string | undefined {
  switch (key) {
    case 'ha':
      // a case file may hold any mode (the HA core logs an unknown one and uses basic, as the
      // reference does); on the command line a typo is caught before the run
      return (SCHEDULER_MODES as readonly unknown[]).includes(value)
        ? undefined
        : `one of ${SCHEDULER_MODES.join(', ')}`;
    case 'ha-rebalance-on-start':
    case 'ha-auto-rebalance':
      return value === 0 || value === 1 || value === true || value === false
        ? undefined
        : 'a flag (0, 1, true or false)';
    case 'ha-auto-rebalance-threshold':
    case 'ha-auto-rebalance-margin': {
      const { min, max } = AUTO_REBALANCE_PERCENT_RANGE;
      return typeof value === 'number' && value >= min && value <= max
        ? undefined
        : `a finite number from ${min} to ${max}`;
    }
    case 'ha-auto-rebalance-hold-duration':
      return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
        ? undefined
        : `a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`;
    case 'ha-auto-rebalance-method':
      return value === 'bruteforce' || value === 'topsis' ? undefined : 'bruteforce or topsis';
    default:
      return 'a known key';
  }
}

/** The problem with a variant key's value (judged as the HA core judges it, by the registry), or undefined. */
function variantProblem(registry: PolicyRegistry, key: string, value: number | string | boolean): string | undefined {
  return registry
    .checkValue(key, value)
    ?.message.replace(/^datacenter\.cfg: /, '')
    .replace(/, falling back to .*$|, using no preset$/, '');
}

/**
 * One `--set <crs-key>=<value>` of the command line, parsed: a decimal value becomes a number
 * (except for `ha`, the scheduler mode, and the method), `true`/`false` a boolean (as JSON
 * would give them), anything else stays a string; an
 * empty value (`key=`) removes the key, i.e. restores its default. Throws {@link SimError}
 * `bad-override` for an unknown key or a value the key does not accept (the same rules as the
 * case loader for the reference keys, and the HA core's ranges for the balancer's variant
 * keys, which the core would otherwise only log). The variant keys are those of `registry`'s
 * plug-ins (default the built-in ones).
 */
export function parseCrsOverride(
  text: string,
  registry: PolicyRegistry = BUILTIN_REGISTRY,
): { key: string; value: number | string | boolean | undefined } {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new SimError('bad-override', `'--set ${text}': expected <crs-key>=<value>`);
  const key = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  const known = crsKeys(registry);
  if (!known.includes(key))
    throw new SimError('bad-override', `'--set ${text}': unknown crs key '${key}' (one of ${known.join(', ')})`);
  // `key=` clears the key (its default): how the lab's reference variant clears every variant key
  if (raw === '') return { key, value: undefined };
  const value =
    raw === 'true' || raw === 'false'
      ? raw === 'true'
      : key !== 'ha' && key !== 'ha-auto-rebalance-method' && DECIMAL.test(raw)
        ? Number(raw)
        : raw;
  const problem =
    registry.spec(key) !== undefined || key === PRESET_KEY
      ? variantProblem(registry, key, value)
      : referenceProblem(key, value);
  if (problem !== undefined) {
    const expected = problem.startsWith('a ') || !problem.includes("'") ? `expected ${problem}` : problem;
    throw new SimError('bad-override', `'--set ${text}': ${expected}`);
  }
  return { key, value };
}

/**
 * The case with `datacenter.cfg` `crs` keys overridden (`poise-sim … --set <key>=<value>`),
 * applied in order (a later one wins); the input is not changed. Throws {@link SimError}
 * `bad-override` (see {@link parseCrsOverride}; the variant keys of `registry`).
 */
export function withCrsOverrides(
  input: CaseInput,
  sets: readonly string[],
  registry: PolicyRegistry = BUILTIN_REGISTRY,
): CaseInput {
  if (sets.length === 0) return input;
  const crs = Object.assign(Object.create(null) as Record<string, unknown>, input.datacenterCfg.crs);
  for (const text of sets) {
    const { key, value } = parseCrsOverride(text, registry);
    if (value === undefined) delete crs[key];
    else crs[key] = value;
  }
  const datacenterCfg = Object.assign(Object.create(null) as DatacenterSettings, input.datacenterCfg, { crs });
  return { ...input, datacenterCfg };
}
