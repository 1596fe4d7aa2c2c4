import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCase, simulate } from './index';

const root = mkdtempSync(join(tmpdir(), 'poise-sim-run-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes a case directory `<root>/<name>` (every file as JSON) and loads it. */
function tinyCase(name: string, files: Record<string, unknown>) {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), JSON.stringify(content));
  return loadCase(dir, name);
}

const OFF = { power: 'off', network: 'off' };
const threeNodes = { node1: OFF, node2: OFF, node3: OFF };
const powerOn = ['power node1 on', 'power node2 on', 'power node3 on'];

describe('simulate: a tiny case end to end', () => {
  const input = tinyCase('one-service', {
    cmdlist: [powerOn],
    hardware_status: threeNodes,
    service_config: { 'vm:101': { node: 'node1', state: 'enabled' } },
  });
  const sinkLines: string[] = [];
  const result = simulate(input, { profile: 'pve-9.2' }, (line) => sinkLines.push(line));
  const lines = result.log.split('\n').slice(0, -1);

  it('starts at 0 and runs the first command list at the end of the first round (20)', () => {
    expect(lines[0]).toBe('info      0     hardware: starting simulation');
    expect(lines[1]).toBe('info     20      cmdlist: execute power node1 on');
    expect(lines[2]).toBe('info     20    node1/crm: status change startup => wait_for_quorum');
    expect(lines[3]).toBe('info     20    node1/lrm: status change startup => wait_for_agent_lock');
  });

  it('adds the enabled service and starts it on its node', () => {
    expect(lines).toContain("info     20    node1/crm: adding new service 'vm:101' on node 'node1'");
    expect(lines).toContain(
      "info     20    node1/crm: service 'vm:101': state changed from 'request_start' to 'started'  (node = node1)",
    );
    // in the same round node1's LRM runs 1 s after node1's CRM: 20 + 1 = 21; it takes its lock first
    const at21 = lines.filter((l) => l.includes(' 21 '));
    expect(at21).toEqual([
      "info     21    node1/lrm: got lock 'ha_agent_node1_lock'",
      'info     21    node1/lrm: status change wait_for_agent_lock => active',
      'info     21    node1/lrm: starting service vm:101',
      'info     21    node1/lrm: service status vm:101 started',
    ]);
    // node2 and node3 follow at 20 + 2 and 20 + 4; their LRMs have nothing to do and stay idle
    expect(lines).toContain('info     22    node2/crm: status change wait_for_quorum => slave');
    expect(lines).toContain('info     24    node3/crm: status change wait_for_quorum => slave');
  });

  it('ends 600 s after the last command: 20 + 600 = 620', () => {
    expect(result.error).toBeUndefined();
    expect(lines.at(-1)).toBe('info    620     hardware: exit simulation - done');
    expect(result.log.endsWith('\n')).toBe(true);
  });

  it('sends every log line to the sink too', () => {
    expect(sinkLines.join('')).toBe(result.log);
  });

  it('is deterministic: the same input gives the same log', () => {
    expect(simulate(input, { profile: 'pve-9.2' }).log).toBe(result.log);
  });
});

describe('simulate: end of simulation and aborts', () => {
  it('counts only non-empty command lists: [] at 120 does not move the end', () => {
    const input = tinyCase('empty-slot', { cmdlist: [powerOn, []], hardware_status: threeNodes, service_config: {} });
    expect(simulate(input, { profile: 'pve-9.2' }).log).toMatch(/info {4}620 {5}hardware: exit simulation - done\n$/);
  });

  it('a command at 120 moves the end to 720', () => {
    const input = tinyCase('delay-0', {
      cmdlist: [powerOn, ['delay 0']],
      hardware_status: threeNodes,
      service_config: {},
    });
    const { log } = simulate(input, { profile: 'pve-9.2' });
    expect(log).toContain('info    120      cmdlist: execute delay 0\n');
    expect(log).toMatch(/info {4}720 {5}hardware: exit simulation - done\n$/);
  });

  it('logs a failing command as err "exit simulation - <msg> " and returns the error', () => {
    // a manual migration needs the service ignored (or the stack disarmed): known only at run time
    const input = tinyCase('manual-migrate-managed', {
      cmdlist: [powerOn, ['service vm:101 manual-migrate node2']],
      hardware_status: threeNodes,
      service_config: { 'vm:101': { node: 'node1', state: 'started' } },
    });
    const result = simulate(input, { profile: 'pve-9.2' });
    expect(result.error).toContain("manual-migrate requires service 'vm:101' to be ignored");
    expect(result.log).toContain('info    120      cmdlist: execute service vm:101 manual-migrate node2\n');
    // the reference appends a space after the message
    expect(result.log).toMatch(/err {5}120 {5}hardware: exit simulation - .*disarmed in ignore mode \n$/);
    expect(result.log).not.toContain('exit simulation - done');
  });
});
