import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCase, simulate } from './index';

const root = mkdtempSync(join(tmpdir(), 'poise-sim-cfg-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// A rules file with a bad boolean: the rule keeps its other properties, and the problem is
// reported once (not every round) under pve-9.2; pve-5.2.0 keeps the reference's log, where
// such warnings only go to stderr.
const OFF = { power: 'off', network: 'off' };
function writeCase(): string {
  const dir = join(root, 'bad-rules');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'cmdlist'),
    JSON.stringify([['power node1 on', 'power node2 on', 'power node3 on'], ['delay 0']]),
  );
  writeFileSync(join(dir, 'hardware_status'), JSON.stringify({ node1: OFF, node2: OFF, node3: OFF }));
  writeFileSync(join(dir, 'service_config'), JSON.stringify({ 'vm:101': { node: 'node1', state: 'started' } }));
  writeFileSync(join(dir, 'rules_config'), 'node-affinity: pin\n\tresources vm:101\n\tnodes node2\n\tstrict yes\n');
  return dir;
}

describe('rules config warnings', () => {
  const dir = writeCase();
  const warning =
    "warn     20    node1/crm: file ha/rules.cfg line 4 (section 'pin') - unable to parse value of 'strict': type check ('boolean') failed - got 'yes'";

  it('are logged once under pve-9.2, and the rest of the rule still applies', () => {
    const lines = simulate(loadCase(dir), { profile: 'pve-9.2' }).log.split('\n');
    expect(lines.filter((l) => l.includes('unable to parse value'))).toEqual([warning]);
    // the rule (non-strict now) still prefers node2
    expect(lines).toContain("info     20    node1/crm: migrate service 'vm:101' to node 'node2' (running)");
  });

  it('stay out of the log under pve-5.2.0', () => {
    expect(simulate(loadCase(dir), { profile: 'pve-5.2.0' }).log).not.toContain('unable to parse value');
  });
});
