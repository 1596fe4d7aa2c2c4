/**
 * A large, deterministic rules config for the scale test and the bench (not exported from the
 * package). It is made of independent blocks; block `b` uses its own 32 resources
 * `vm:<32b+1>`..`vm:<32b+32>` (s1..s32 below) and holds 21 rules, chosen so every check and
 * every transform has work, and its outcome is known by construction:
 *
 * kept (10): node-affinity `na1` {s1,s2} strict on one node; positive `pa` {s2,s3} and `pb`
 * {s3,s4} (merged, joined to `na1`); negative `n1` {s4,s5} (two implicit negatives s2|s5,
 * s3|s5); negative `n2` {s6,s7,s8} with node-affinity `na2` {s6} (node1, node2) and `na3` {s7}
 * (node3) (3 nodes for 2 placed resources: fine); positive `pc` {s9,s10}; node-affinity `na4`
 * {s11} with two priority groups but no resource affinity; a disabled positive `off` {s1,s5}.
 *
 * dropped (11 rules, 11 messages): `dup1` {s12,s13} and `dup2` {s13} (s13 in two node-affinity
 * rules); positive `ch1` {s14,s15} and `ch2` {s15,s16} against negative `cha` {s14,s16} (only
 * the merged group shares two resources); `multi` {s17} with priorities 2 and 0 against positive
 * `multip` {s17,s18}; positive `lonely` {s19}; negative `wide` {s20..s25} (6 > 5 nodes);
 * negative `fit` {s26,s27} against strict `tight` {s26,s27} on node1 (1 node for 2 resources).
 */

/** The cluster of every block: five nodes. */
export const LARGE_CONFIG_NODES: readonly string[] = ['node1', 'node2', 'node3', 'node4', 'node5'];
/** Rules per block. */
export const LARGE_CONFIG_RULES_PER_BLOCK = 21;
/** Resources per block. */
const LARGE_CONFIG_SIDS_PER_BLOCK = 32;

/** Rule id `<name>-<b>` with the block number zero-padded, so ids sort by block. */
export function largeConfigRuleId(name: string, block: number): string {
  return `${name}-${String(block).padStart(6, '0')}`;
}

/** The rules text of `blocks` blocks. */
export function largeRulesConfigText(blocks: number): string {
  const parts: string[] = [];
  for (let b = 0; b < blocks; b++) {
    const s = (k: number) => `vm:${LARGE_CONFIG_SIDS_PER_BLOCK * b + k}`;
    const list = (...ks: number[]) => ks.map(s).join(',');
    const id = (name: string) => largeConfigRuleId(name, b);
    const na = (name: string, sids: string, nodes: string, strict: boolean) =>
      `node-affinity: ${id(name)}\n\tresources ${sids}\n\tnodes ${nodes}\n${strict ? '\tstrict 1\n' : ''}`;
    const ra = (name: string, sids: string, affinity: string, disabled = false) =>
      `resource-affinity: ${id(name)}\n\tresources ${sids}\n\taffinity ${affinity}\n${disabled ? '\tdisable\n' : ''}`;
    parts.push(
      na('na1', list(1, 2), LARGE_CONFIG_NODES[b % LARGE_CONFIG_NODES.length] as string, true),
      ra('pa', list(2, 3), 'positive'),
      ra('pb', list(3, 4), 'positive'),
      ra('n1', list(4, 5), 'negative'),
      ra('n2', list(6, 7, 8), 'negative'),
      na('na2', s(6), 'node1,node2', false),
      na('na3', s(7), 'node3', false),
      ra('pc', list(9, 10), 'positive'),
      na('na4', s(11), 'node4:1,node5', false),
      ra('off', list(1, 5), 'positive', true),
      na('dup1', list(12, 13), 'node2', false),
      na('dup2', s(13), 'node3', false),
      ra('ch1', list(14, 15), 'positive'),
      ra('ch2', list(15, 16), 'positive'),
      ra('cha', list(14, 16), 'negative'),
      na('multi', s(17), 'node1:2,node2', false),
      ra('multip', list(17, 18), 'positive'),
      ra('lonely', s(19), 'positive'),
      ra('wide', list(20, 21, 22, 23, 24, 25), 'negative'),
      ra('fit', list(26, 27), 'negative'),
      na('tight', list(26, 27), 'node1', true),
    );
  }
  return parts.join('\n');
}

/** The drop messages of block `b`, each `[rule id, reason]`, in check order per rule. */
export function largeConfigBlockDrops(b: number): Array<[string, string]> {
  const s = (k: number) => `vm:${LARGE_CONFIG_SIDS_PER_BLOCK * b + k}`;
  const id = (name: string) => largeConfigRuleId(name, b);
  return [
    [id('dup1'), `resource '${s(13)}' is already used in another node affinity rule`],
    [id('dup2'), `resource '${s(13)}' is already used in another node affinity rule`],
    [id('ch1'), 'rule shares two or more resources with a negative resource affinity rule'],
    [id('ch2'), 'rule shares two or more resources with a negative resource affinity rule'],
    [id('cha'), 'rule shares two or more resources with a positive resource affinity rule'],
    [
      id('multi'),
      'resources are in a resource affinity rule and cannot be in a node affinity rule with multiple priorities',
    ],
    [id('multip'), 'resources are in node affinity rules with multiple priorities'],
    [id('lonely'), 'rule is ineffective as there are less than two resources'],
    [id('wide'), 'rule defines more resources than available nodes'],
    [id('fit'), 'two or more resources are restricted to less nodes than available to the resources'],
    [
      id('tight'),
      'at least one resource is in a negative resource affinity rule and this rule would restrict these to less nodes than available to the resources',
    ],
  ];
}
