/**
 * The learner's limits and the usage-based prior, each with why it has its value. Loads are
 * fractions of a node's capacity (cpu in use / cores, memory in use / physical memory);
 * pressures are PSI "some" avg10 percentages (0..100), as the kernel reports them.
 */

/** Width of a load bin (fraction of capacity): the learner keeps its samples per bin. One bin is 2.5 % of the node. */
export const LOAD_BIN_WIDTH = 0.025;

/**
 * The highest load the learner tells apart (fraction): a sample above it counts at this load,
 * in the last bin. 1.5 leaves room for overcommitted memory and for hosts that report cpu
 * demand above their cores; predictions beyond it follow the curve's shape.
 */
export const LOAD_MAX = 1.5;

/** Bins per curve: `LOAD_MAX / LOAD_BIN_WIDTH`. */
export const LOAD_BINS = 60;

/**
 * Samples kept per bin, the most recent ones (a ring): the bin's value is their median, so up
 * to three outliers among seven change nothing, and a node whose behaviour drifts is followed
 * within seven visits of a bin.
 */
export const BIN_SAMPLES = 7;

/**
 * A sample is learned from only when the load moved by at most this much (fraction) since the
 * node's previous observation: PSI avg10 is a 10-second moving average, so right after a load
 * step it still shows the old load. One bin width.
 */
export const SETTLE_LOAD_DELTA = 0.025;

/** ... and the previous observation is at most this old (seconds): over a longer gap nothing says the load was steady. */
export const SETTLE_MAX_GAP_SECONDS = 120;

/**
 * Bins not written for this long (seconds, 7 days) are forgotten, and so are nodes not
 * observed for as long: the state stays bounded by the nodes and the loads of the last week.
 */
export const RETAIN_SECONDS = 7 * 86_400;

/**
 * A curve with fewer samples than this is not used at all: the prediction falls back to the
 * usage-based prior (reason `too-little-history`). Six settled rounds are one to two minutes.
 */
export const MIN_SAMPLES = 6;

/** Confidence of a learned prediction: `n / (n + CONFIDENCE_SAMPLES)` of the `n` samples within `NEAR_BINS` bins of the load (0.5 at 8 samples). */
export const CONFIDENCE_SAMPLES = 8;

/** Bins on each side of a load whose samples count for its confidence (±5 % of the node). */
export const NEAR_BINS = 2;

/**
 * Beyond the observed loads the pressure can lie between the prediction and the end point
 * moved along the steepest expected rise (`STEEPEST_RISE`): the confidence loses that
 * interval's share of 100 %, the more the farther out, nearly all of it at three times this
 * distance (fraction of load).
 */
export const EXTRAPOLATION_SCALE = 0.15;

/** Extrapolating with the prior's shape (the node's own curve has not shown its rise yet): the part of the interval trusted is halved. */
export const PRIOR_SHAPE_FACTOR = 0.5;

/** Confidence of a usage-based prediction (no or too little PSI history): a guess from the load alone. */
export const USAGE_CONFIDENCE = 0.25;

/**
 * A bin whose median lies further than this many robust standard deviations (1.4826 · the
 * median absolute residual) from the fitted curve is left out of the learned points: a bin
 * whose recent samples are mostly outliers would otherwise bend the curve (at the ends of the
 * observed range, where nothing outvotes it).
 */
export const OUTLIER_DEVIATIONS = 5;

/** ... and at least this far (percentage points): noise never removes a bin. */
export const OUTLIER_MIN_PERCENT = 10;

/** Counters of samples per bin stop at this value (they only feed the confidence, which is 1 long before). */
export const COUNT_CAP = 1_000_000;
