/**
 * A policy plug-in that no host knows: the proof that adding a variant needs no host edit. The
 * tests of both CLIs load it by path (`--plugin`, `policy.plugins`) and set its key through every
 * way a key is set (`--set`, a case's datacenter.cfg, a lab variants file, the daemon's config);
 * no source outside the tests names it. Plain JavaScript with no import at all, as an
 * out-of-tree module would be.
 *
 * `fixture-move-quota` (moves, 0 = off): after that many moves the balancer moves no more (an
 * accept stage that counts the moves it let through in its state).
 */

const QUOTA_KEY = {
  key: 'fixture-move-quota',
  type: 'number',
  unit: 'moves',
  min: 0,
  max: 1000,
  off: 0,
  recommended: 0,
  description: 'after this many moves the balancer moves no more',
  why: 'a test fixture',
};

/** @param {number} quota */
function quotaStage(quota) {
  return {
    name: 'move-quota',
    kind: 'accept',
    initialState: () => ({ moves: 0 }),
    validateState: (value) => {
      if (typeof value !== 'object' || value === null || !Number.isSafeInteger(value.moves) || value.moves < 0)
        throw Object.assign(new Error("stage 'move-quota': state field 'moves' must be a count"), {
          code: 'invalid-state',
        });
      return { moves: value.moves };
    },
    run: (_ctx, plan, state) =>
      state.moves >= quota
        ? { stop: `move quota of ${quota} reached`, code: 'quota-reached', state }
        : { plan, state: { moves: state.moves + 1 } },
  };
}

export const plugin = {
  name: 'move-quota',
  keys: { quota: QUOTA_KEY },
  stages: (settings) => (settings.quota > 0 ? [{ slot: 'accept', order: 100, stage: quotaStage(settings.quota) }] : []),
  describe: (settings) => (settings.quota > 0 ? [`move-quota ${settings.quota}`] : []),
};
