import { parseGroupsConfig, parseRulesConfig } from '@poise/rules';
import type { Command } from './commands';
import { SimError } from './errors';
import { sortNames } from '@poise/usage';

/**
 * Checks of a test case that look across its files: commands against the services they name,
 * delays against the time limit, and the names the rules, groups and per-service files use.
 * What would abort the run is an error (`SimError` `bad-case`); what the reference loads
 * silently is a warning (see `CaseInput.warnings`).
 */

/** A parsed cmdlist command and where it is, for messages: `'<path>' [1][0] 'delay 5'`. */
export interface CaseCommand {
  readonly at: string;
  readonly command: Command;
}

/** How many names a warning lists before it counts the rest. */
export const NAMES_SHOWN = 3;

/** `'a', 'b', 'c' and 7 more` (the names quoted, at most {@link NAMES_SHOWN} of them). */
function nameList(names: readonly string[]): string {
  const shown = names
    .slice(0, NAMES_SHOWN)
    .map((n) => `'${n}'`)
    .join(', ');
  return names.length > NAMES_SHOWN ? `${shown} and ${names.length - NAMES_SHOWN} more` : shown;
}

/** What the messages say of a service that the run never has. */
const NOT_CONFIGURED = 'not configured (not in service_config, not added by a command)';
/** What the command checks say of a service that is not there at the command's turn. */
const NOT_THERE =
  'is not configured at this point (not in service_config, not added by an earlier command, or deleted)';

/**
 * `service 'vm:1' is not configured (…)` or `5 services, 'vm:1', 'vm:2', 'vm:3' and 2 more,
 * are not configured (…)`, for a warning: `sids` are the names (sorted here), or the first
 * few of `count` when the caller kept only those.
 */
export function unknownServices(sids: readonly string[], count = sids.length): string {
  const sorted = sortNames(sids);
  const shown =
    nameList(sorted) +
    (count > sorted.length && sorted.length <= NAMES_SHOWN ? ` and ${count - sorted.length} more` : '');
  return `${count === 1 ? `service ${shown} is` : `${count} services, ${shown}, are`} ${NOT_CONFIGURED}`;
}

/** The services that `service <sid> add` commands add, in any list. */
export function commandSids(commands: readonly CaseCommand[]): Set<string> {
  const sids = new Set<string>();
  for (const { command } of commands) if (command.kind === 'service-add') sids.add(command.sid);
  return sids;
}

/**
 * Follows the configured services through the commands in run order (an `add` adds one, a
 * `delete` removes it). A command the run could not apply is refused here, as an unknown node
 * is: a state, lock, unlock or manual migration of a service that is not there, an `add` of
 * one that is. One that the run applies but that names no service (a migration or stop the
 * CRM refuses in its log, stats for a service never added, a delete that finds nothing) is a
 * warning.
 */
export function checkCommandServices(
  commands: readonly CaseCommand[],
  configured: Iterable<string>,
  warnings: string[],
): void {
  const present = new Set(configured);
  const everAdded = commandSids(commands);
  for (const { at, command } of commands) {
    if (!('sid' in command)) continue;
    const sid = command.sid;
    switch (command.kind) {
      case 'service-add':
        if (present.has(sid)) throw new SimError('bad-case', `${at}: service '${sid}' already exists`);
        present.add(sid);
        break;
      case 'service-state':
      case 'service-lock':
      case 'service-unlock':
      case 'service-manual-migrate':
        if (!present.has(sid)) throw new SimError('bad-case', `${at}: service '${sid}' ${NOT_THERE}`);
        break;
      case 'service-delete':
        if (!present.delete(sid)) warnings.push(`${at}: service '${sid}' ${NOT_THERE}; nothing is deleted`);
        break;
      case 'service-move':
      case 'service-stop':
        if (!present.has(sid)) warnings.push(`${at}: service '${sid}' ${NOT_THERE}; the CRM refuses the command`);
        break;
      case 'service-stats':
        if (!present.has(sid) && !everAdded.has(sid))
          warnings.push(`${at}: service '${sid}' is ${NOT_CONFIGURED}; the stats are never used`);
        break;
    }
  }
}

/**
 * Refuses a `delay` that cannot end before the time limit: the first command slot is at 20 s,
 * so a delay of more than `maxTime` − 20 seconds would end the run with "time limit reached"
 * without naming it.
 */
export function checkDelays(commands: readonly CaseCommand[], maxTime: number): void {
  for (const { at, command } of commands) {
    if (command.kind === 'delay' && FIRST_SLOT_SECONDS + command.seconds > maxTime) {
      throw new SimError(
        'bad-case',
        `${at}: the delay ends after the time limit of ${maxTime} s (the first command list runs at ${FIRST_SLOT_SECONDS} s; sim_options 'max-time' sets the limit)`,
      );
    }
  }
}

/** Simulated time of the first command slot, seconds (the end of the first round). */
const FIRST_SLOT_SECONDS = 20;

/** Names the case's files can refer to. */
export interface CaseNames {
  readonly nodes: ReadonlySet<string>;
  /** Configured services and those added by commands. */
  readonly services: ReadonlySet<string>;
}

/**
 * Warnings for the rules and groups configs: a rule naming a node that is not in
 * hardware_status or a service that is not there, a group naming an unknown node, a service
 * whose group is not in the groups config. (Parse problems are the HA core's: it logs them
 * under `pve-9.2`, as the reference prints them.)
 */
export function rulesWarnings(
  files: { rules: string; groups: string; serviceConfig: string },
  texts: { rules: string; groups: string },
  names: CaseNames,
  /** sid → the `group` of its service_config entry, for services in a group. */
  serviceGroups: ReadonlyMap<string, string>,
): string[] {
  const warnings: string[] = [];
  const unknownNodes = (nodes: object) => sortNames(Object.keys(nodes).filter((n) => !names.nodes.has(n)));
  const rules = parseRulesConfig(texts.rules).config;
  for (const id of Object.keys(rules.ids).sort((a, b) => rules.order[a]! - rules.order[b]!)) {
    const rule = rules.ids[id]!;
    if (rule.type === 'node-affinity') {
      const unknown = unknownNodes(rule.nodes);
      for (const node of unknown)
        warnings.push(`'${files.rules}' rule '${id}' nodes: node '${node}' does not exist in hardware_status`);
      if (rule.strict && unknown.length > 0 && unknown.length === Object.keys(rule.nodes).length) {
        warnings.push(
          `'${files.rules}' rule '${id}': none of its nodes exists, and the rule is strict: its services can run on no node`,
        );
      }
    }
    const missing = Object.keys(rule.resources).filter((sid) => !names.services.has(sid));
    if (missing.length > 0) warnings.push(`'${files.rules}' rule '${id}' resources: ${unknownServices(missing)}`);
  }
  const groups = parseGroupsConfig(texts.groups).config;
  for (const id of Object.keys(groups.ids).sort((a, b) => groups.order[a]! - groups.order[b]!)) {
    for (const node of unknownNodes(groups.ids[id]!.nodes)) {
      warnings.push(`'${files.groups}' group '${id}' nodes: node '${node}' does not exist in hardware_status`);
    }
  }
  for (const [sid, group] of serviceGroups) {
    if (!Object.hasOwn(groups.ids, group))
      warnings.push(`'${files.serviceConfig}' ${sid}.group: group '${group}' does not exist in '${files.groups}'`);
  }
  return warnings;
}
