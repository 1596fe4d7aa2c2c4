import { describe, expect, it } from 'vitest';
import type { DaemonContext, RunCounts } from './context';
import { runSummary } from './status';

function ctx(counts: Partial<RunCounts>): Pick<DaemonContext, 'runCounts' | 'config'> {
  return {
    runCounts: { requested: 0, succeeded: 0, failed: 0, wouldMove: 0, forbidden: 0, ...counts },
    config: { mode: 'act' } as DaemonContext['config'],
  };
}

describe('the closing line', () => {
  it('counts the requests refused for the credentials, with the fault', () => {
    expect(
      runSummary(
        ctx({
          requested: 12,
          succeeded: 2,
          forbidden: 10,
          forbiddenFault: "the API token lacks 'Sys.Console' on '/'",
        }) as DaemonContext,
        null,
      ),
    ).toBe(
      "; motions this run: 12 requested, 2 succeeded, 0 failed, 10 refused for the credentials (the API token lacks 'Sys.Console' on '/')",
    );
    expect(runSummary(ctx({ requested: 3, succeeded: 3 }) as DaemonContext, null)).toBe(
      '; motions this run: 3 requested, 3 succeeded, 0 failed',
    );
  });
});
