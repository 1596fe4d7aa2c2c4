import { describe, expect, it } from 'vitest';
import { Logger, REDACTED, resolveLogFormat } from './log';

const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z

function logger(format: 'json' | 'text', level: 'debug' | 'info' | 'warn' | 'error' = 'info') {
  const lines: string[] = [];
  return {
    lines,
    log: new Logger(
      { format, level },
      (l) => lines.push(l),
      () => T0,
    ),
  };
}

describe('Logger', () => {
  it('writes JSON lines with time, level, event, msg, then the fields', () => {
    const { lines, log } = logger('json');
    log.info('round', 'below threshold', { round: 3, imbalance: 0.12, none: undefined });
    expect(lines).toEqual([
      '{"time":"2026-01-01T00:00:00.000Z","level":"info","event":"round","msg":"below threshold","round":3,"imbalance":0.12}',
    ]);
  });

  it('writes text for a terminal, round lines as "round <n>"', () => {
    const { lines, log } = logger('text');
    log.info('round', 'below threshold', { round: 3 });
    log.warn('motion', 'migrate vm:101 from node1 to node2 failed');
    expect(lines).toEqual([
      '2026-01-01T00:00:00.000Z info  round 3: below threshold',
      '2026-01-01T00:00:00.000Z warn  motion: migrate vm:101 from node1 to node2 failed',
    ]);
  });

  it('drops lines below the level', () => {
    const { lines, log } = logger('text', 'warn');
    log.debug('x', 'a');
    log.info('x', 'b');
    log.warn('x', 'c');
    log.error('x', 'd');
    expect(lines.map((l) => l.slice(-1))).toEqual(['c', 'd']);
  });

  it('redacts registered secrets in the message and in any field, also in their JSON-escaped spelling', () => {
    const { lines, log } = logger('json');
    const secret = 'se"cret-0123456789';
    log.addSecrets([secret, 'short']);
    log.error('start', `oops ${secret}`, { header: `PVEAPIToken=x=${secret}`, short: 'short' });
    expect(lines[0]).not.toContain('cret-0123456789');
    expect(lines[0]).toContain(REDACTED);
    expect(lines[0]).toContain('"short":"short"'); // too short to be searched for
  });

  it('auto format: text on a terminal, JSON otherwise', () => {
    expect(resolveLogFormat('auto', true)).toBe('text');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('text', false)).toBe('text');
  });
});
