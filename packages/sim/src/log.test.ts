import { describe, expect, it } from 'vitest';
import { SimLog } from './log';

/** One line through a fresh log. */
function line(kind: 'daemon' | 'hardware', level: string, time: number, id: string, msg: string): string {
  const log = new SimLog();
  log[kind](level, time, id, msg);
  return log.text();
}

describe('SimLog: sprintf("%-5s %5d %12s: %s\\n")', () => {
  const cases: Array<{
    name: string;
    kind: 'daemon' | 'hardware';
    level: string;
    time: number;
    id: string;
    msg: string;
    expected: string;
  }> = [
    // level padded right to 5, time right-aligned in 5, id right-aligned in 12
    {
      name: 'a daemon info line',
      kind: 'daemon',
      level: 'info',
      time: 20,
      id: 'node1/crm',
      msg: "got lock 'ha_manager_lock'",
      expected: "info     20    node1/crm: got lock 'ha_manager_lock'\n",
    },
    {
      name: 'daemon warning is cut to warn',
      kind: 'daemon',
      level: 'warning',
      time: 125,
      id: 'node3/lrm',
      msg: 'x',
      expected: 'warn    125    node3/lrm: x\n',
    },
    {
      name: 'daemon notice is cut to noti',
      kind: 'daemon',
      level: 'notice',
      time: 40,
      id: 'node1/crm',
      msg: 'x',
      expected: 'noti     40    node1/crm: x\n',
    },
    {
      name: 'daemon email is cut to emai',
      kind: 'daemon',
      level: 'email',
      time: 160,
      id: 'node1/crm',
      msg: 'FENCE: Try to fence node',
      expected: 'emai    160    node1/crm: FENCE: Try to fence node\n',
    },
    {
      name: 'daemon err is padded to 5',
      kind: 'daemon',
      level: 'err',
      time: 20,
      id: 'node1/crm',
      msg: 'x',
      expected: 'err      20    node1/crm: x\n',
    },
    {
      name: 'daemon warn stays warn',
      kind: 'daemon',
      level: 'warn',
      time: 0,
      id: 'node1/lrm',
      msg: 'x',
      expected: 'warn      0    node1/lrm: x\n',
    },
    {
      name: 'hardware warning is not cut',
      kind: 'hardware',
      level: 'warning',
      time: 20,
      id: 'hardware',
      msg: 'x',
      expected: 'warning    20     hardware: x\n',
    },
    {
      name: 'hardware err is padded',
      kind: 'hardware',
      level: 'err',
      time: 720,
      id: 'hardware',
      msg: 'x',
      expected: 'err     720     hardware: x\n',
    },
    {
      name: 'hardware debug is kept',
      kind: 'hardware',
      level: 'debug',
      time: 0,
      id: 'hardware',
      msg: 'x',
      expected: 'debug     0     hardware: x\n',
    },
    {
      name: 'the cmdlist id',
      kind: 'hardware',
      level: 'info',
      time: 20,
      id: 'cmdlist',
      msg: 'execute power node1 on',
      expected: 'info     20      cmdlist: execute power node1 on\n',
    },
    // a 5-digit time fills the field, a 6-digit one widens it (never cut)
    {
      name: 'time 10000 fills the field',
      kind: 'hardware',
      level: 'info',
      time: 10000,
      id: 'hardware',
      msg: 'x',
      expected: 'info  10000     hardware: x\n',
    },
    {
      name: 'time 123456 widens the field',
      kind: 'hardware',
      level: 'info',
      time: 123456,
      id: 'hardware',
      msg: 'x',
      expected: 'info  123456     hardware: x\n',
    },
    {
      name: 'a fractional time is truncated like %d',
      kind: 'daemon',
      level: 'info',
      time: 20.9,
      id: 'node1/crm',
      msg: 'x',
      expected: 'info     20    node1/crm: x\n',
    },
    {
      name: 'an id longer than 12 widens its field',
      kind: 'daemon',
      level: 'info',
      time: 20,
      id: 'node-long-1/crm',
      msg: 'x',
      expected: 'info     20 node-long-1/crm: x\n',
    },
    // chomp removes one trailing newline only
    {
      name: 'one trailing newline is removed',
      kind: 'daemon',
      level: 'err',
      time: 20,
      id: 'node1/crm',
      msg: 'cfs connection refused - not mounted?\n',
      expected: 'err      20    node1/crm: cfs connection refused - not mounted?\n',
    },
    {
      name: 'a second trailing newline stays',
      kind: 'hardware',
      level: 'info',
      time: 20,
      id: 'hardware',
      msg: 'a\n\n',
      expected: 'info     20     hardware: a\n\n',
    },
    // the reference's "exit simulation - $err " keeps an embedded newline before the space
    {
      name: 'an embedded newline stays',
      kind: 'hardware',
      level: 'err',
      time: 20,
      id: 'hardware',
      msg: 'exit simulation - boom\n ',
      expected: 'err      20     hardware: exit simulation - boom\n \n',
    },
    {
      name: 'an empty message',
      kind: 'hardware',
      level: 'info',
      time: 0,
      id: 'hardware',
      msg: '',
      expected: 'info      0     hardware: \n',
    },
  ];
  it.each(cases)('$name', ({ kind, level, time, id, msg, expected }) => {
    expect(line(kind, level, time, id, msg)).toBe(expected);
  });

  it('drops daemon debug lines but keeps the rest in order', () => {
    const seen: string[] = [];
    const log = new SimLog((l) => seen.push(l));
    log.daemon('info', 20, 'node1/crm', 'one');
    log.daemon('debug', 20, 'node1/crm', 'hidden');
    log.hardware('info', 21, 'hardware', 'two');
    expect(log.text()).toBe('info     20    node1/crm: one\ninfo     21     hardware: two\n');
    // the sink sees exactly the lines of the log, one call per line
    expect(seen).toEqual(['info     20    node1/crm: one\n', 'info     21     hardware: two\n']);
  });

  it('starts empty', () => {
    expect(new SimLog().text()).toBe('');
  });
});
