import { PRESET_KEY, type PolicyRegistry } from '@poise/policy';
import { crsKeys } from '@poise/sim';

/**
 * The one rule for a bad policy value, as poise-manager applies it to its config file and to a
 * simulator case's `datacenter.cfg`: refused where it is loaded, naming the file, the key and
 * the value (`<case>/datacenter.cfg: crs.ha-auto-rebalance-backoff: invalid value 'abc' (seconds,
 * 0 to 3600)`), never read as off. The HA core still reads a bad value as off (a running
 * cluster's `datacenter.cfg` cannot be refused; `poise-sim test` checks that log); the commands
 * that measure a run (`run`, `summary`, `compare`) refuse the case first.
 */
export function policyValueProblems(crs: unknown, file: string, registry: PolicyRegistry): string[] {
  if (typeof crs !== 'object' || crs === null) return [];
  const problems: string[] = [];
  for (const [key, value] of Object.entries(crs as Record<string, unknown>)) {
    if (key !== PRESET_KEY && registry.spec(key) === undefined) continue;
    const refusal = registry.refusal(key, value);
    if (refusal !== undefined) problems.push(`${file}: crs.${key}: ${refusal}`);
  }
  return problems;
}

/**
 * The problem with an empty `--set <key>=` (no key takes an empty value: the simulator would
 * quietly drop the key, and the run would not be the one asked for), or `undefined`. The
 * message names the key and what it takes.
 */
export function emptySetProblem(text: string, registry: PolicyRegistry): string | undefined {
  const eq = text.indexOf('=');
  if (eq <= 0 || eq !== text.length - 1) return undefined;
  const key = text.slice(0, eq);
  if (!crsKeys(registry).includes(key)) return undefined; // the parser names an unknown key
  const spec = registry.spec(key);
  const takes =
    spec === undefined
      ? key === PRESET_KEY
        ? 'the preset, e.g. recommended'
        : 'a value'
      : spec.type === 'choice'
        ? `one of ${spec.choices.join(', ')}`
        : spec.type === 'flag'
          ? '0 or 1'
          : `${spec.unit}, ${spec.min} to ${spec.max}`;
  return `'--set ${text}': no value for '${key}' (it takes ${takes}; leave the --set out to keep the case's own value)`;
}
