import type { ManagerOptions } from '@poise/ha';
import type { CaseInput } from './case';
import { Hardware } from './hardware';

export interface SimulationResult {
  /** The log, byte-compatible with the reference's `status/log`. */
  log: string;
  /** Set when the simulation aborted (logged as `exit simulation - <msg>` at level err). */
  error?: string;
}

/** Runs one test case to its end and returns the log. */
export function simulate(input: CaseInput, options: ManagerOptions, sink?: (line: string) => void): SimulationResult {
  const hw = new Hardware(input, options, sink);
  hw.hwLog('info', 'starting simulation');
  try {
    hw.run(input.cmdlist);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    hw.hwLog('err', `exit simulation - ${msg} `);
    return { log: hw.log.text(), error: msg };
  }
  hw.hwLog('info', 'exit simulation - done');
  return { log: hw.log.text() };
}
