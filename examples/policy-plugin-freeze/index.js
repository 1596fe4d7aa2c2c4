// @ts-check
/**
 * A poise policy plug-in from outside the repository: the key `freeze` (0/1) blocks every
 * balancer move while it is set, e.g. during a maintenance window. Plain JavaScript with its
 * types from `@poise/policy` (a type-only import: nothing of it runs here), so a host loads this
 * file by path with nothing installed in this folder, and no build step.
 *
 * @import { FlagKeySpec, PolicyPlugin, Stage } from '@poise/policy'
 */

/** The key: off (0) unless set; the preset leaves it off. */
const FREEZE_KEY = /** @type {const} @satisfies {FlagKeySpec} */ ({
  key: 'freeze',
  type: 'flag',
  off: false,
  recommended: false,
  description: 'while set, the balancer moves nothing (e.g. during a maintenance window)',
  why: 'a freeze is an operator decision, never a default',
});

/**
 * The first gate: while the freeze is on, every round stops here with code `frozen`. The stop
 * breaks the hold streak, so after the freeze the imbalance is held for its rounds afresh.
 *
 * @type {Stage<null>}
 */
const freezeGate = {
  name: 'freeze',
  kind: 'gate',
  initialState: () => null,
  validateState: (value) => {
    // a host's errors are judged by their code, not by a class this file would have to import
    if (value !== null)
      throw Object.assign(new Error("stage 'freeze': state must be null (the stage keeps no state)"), {
        code: 'invalid-state',
      });
    return null;
  },
  run: (_ctx, _plan, state) => ({
    stop: 'freeze: balancer moves are frozen (policy key freeze)',
    code: 'frozen',
    breaksStreak: true,
    state,
  }),
};

/** @type {PolicyPlugin<{ freeze: typeof FREEZE_KEY }>} */
const plugin = {
  name: 'freeze',
  keys: { freeze: FREEZE_KEY },
  stages: (settings) => (settings.freeze ? [{ slot: 'gate', order: 0, stage: freezeGate }] : []),
  describe: (settings) => (settings.freeze ? ['freeze'] : []),
};

export default plugin;
