// The lab commands' usage lines and usage error, kept apart from the lab itself so that
// \`poise-sim run\`, \`test\` and \`--help\` do not load the lab (Vega, mathjs, the generator).

export const LAB_USAGE = `  poise-sim generate [<params.yaml|json>] --out <dir> [--seed <n>] [--duration <d>] [--guests <n>] [--shape idle|diurnal|bursty|hot-node] [--trace-dir <dir>] [--trace-day <day>]
  poise-sim compare <scenario-dir|dir-of-cases|params.yaml>... --variants <variants.yaml> [--seeds 1..20] [--jobs <n>] --out <dir> [--title <text>] [--save-traces] [--plugin <module>]... [--shard <i>/<n>] [--trace-dir <dir>] [--trace-day <day>]
  poise-sim merge <shard-dir>... --out <dir>
  poise-sim report <run-trace.json|case-dir>... --out <dir> [--title <text>]`;

/** The lab's commands: each module is loaded when its command runs. */
export const LAB_COMMAND_NAMES: readonly string[] = ['generate', 'compare', 'merge', 'report'];

/** A usage mistake: exit code 2. */
export class LabUsageError extends Error {
  override readonly name = 'LabUsageError';
}
