import { describe, expect, test } from 'vitest';
import { TableUsageError, parseTableArgs, runTable, tableVariants } from './scenario-table';

describe('the scenario table of the policy READMEs', () => {
  const columns = tableVariants();

  test('has a column for defaults, each key whose recommended value is not its default, and the preset', () => {
    expect(columns.map((c) => c.name)).toEqual([
      'defaults',
      'backoff 60',
      'cooldown 600',
      'min-improvement 5',
      'smoothing 300',
      'cost-weight 0.2',
      'memhost 1',
      'min-pressure-cpu 10',
      'min-pressure-mem 5',
      'check-migratable 1',
      'recommended',
    ]);
  });

  test('piped, nothing but the table: no progress', () => {
    const drawn: string[] = [];
    const results = runTable([{ name: 'rebalance-and-failover' }], columns.slice(0, 2), {
      progress: { isTTY: false, write: (c) => drawn.push(c) },
    });
    expect(drawn).toEqual([]);
    expect([...results.get('rebalance-and-failover')!.keys()]).toEqual(['defaults', 'backoff 60']);
  });

  test.each([
    [['--seed', 'x'], "'--seed' needs an integer from 0 to 4294967295, got 'x'"],
    [['--seed', '4294967296'], "'--seed' needs an integer from 0 to 4294967295, got '4294967296'"],
    [['--set'], "'--set' needs <crs-key>=<value>"],
    [
      ['--set', 'ha-auto-rebalance-threshold=150'],
      "'--set ha-auto-rebalance-threshold=150': expected a finite number from 0 to 100",
    ],
    [['--write', '--seed', '3'], "'--write' writes the committed configuration only (no --seed or --set)"],
    [['--bogus'], "unknown argument '--bogus' (--write, --seed <n>, --set <crs-key>=<value>)"],
  ])('bad arguments %j are refused before anything runs', (argv, message) => {
    expect(() => parseTableArgs(argv)).toThrow(new TableUsageError(message));
  });

  test('arguments', () => {
    expect(parseTableArgs(['--seed', '3', '--set', 'ha-auto-rebalance-smoothing=600'])).toEqual({
      write: false,
      seed: 3,
      extra: ['ha-auto-rebalance-smoothing=600'],
    });
  });
});
