// The architecture's rules, checked by dependency-cruiser (`pnpm depcruise`, run by .ci/run).
// ARCHITECTURE.md explains the tiers; this file is their enforcement. The exceptions, each with
// its reason:
// - bench/ and tools/ are not held to "only through the public entry": benchmarks measure
//   kernels and internals (bench/start-score.ts times usage's start kernel against its
//   predecessor), and the .deb build renders the man page from the daemon's CLI spec. Nothing
//   imports them back (rule no-test-support-in-production).
// - the build scripts (tsup configurations, the status page's bundler) count as not shipped.

/** The tiers, bottom up: a package's production code imports its own tier or a lower one. */
export const TIERS = [
  // maths: pure functions and models, no I/O
  ['imbalance', 'topsis', 'usage', 'contention'],
  // models of the cluster: rules, the HA environment's records, the planner; the API client
  ['rules', 'env', 'plan', 'pve-api'],
  // the balancer's pipeline and its variants (plug-ins)
  ['policy', 'policy-stable', 'policy-pressure', 'policy-contention', 'policy-plan'],
  // the HA core (CRM, LRM, service state machine, the balancer host)
  ['ha'],
  // the cluster simulator
  ['sim'],
];
/** Packages of the tiers that do no I/O (no file system, network or processes). */
const PURE = ['imbalance', 'topsis', 'usage', 'contention', 'rules', 'env', 'plan', 'policy', 'policy-[a-z]+'];

/** Test code, test support, benchmarks and repository tools: everything that is not shipped. */
const NOT_SHIPPED = [
  '\\.test\\.ts$',
  '(^|/)src/testing/',
  '(^|/)test-support/',
  '(^|/)fixtures?/',
  '^bench/',
  '^tools/',
  '^examples/',
  // build scripts: the status page's bundler and the packages' tsup configurations
  '^apps/manager/web/build\\.ts$',
  '(^|/)tsup\\.config\\.ts$',
];

const anyOf = (names) => `(${names.join('|')})`;

const tierRules = TIERS.slice(0, -1).map((tier, i) => ({
  name: `tier-${tier[0]}-points-down`,
  comment: `${tier.join(', ')}: production code imports only its own tier or lower ones (ARCHITECTURE.md, "Tiers")`,
  severity: 'error',
  from: { path: `^packages/${anyOf(tier)}/`, pathNot: NOT_SHIPPED },
  to: { path: `^packages/${anyOf(TIERS.slice(i + 1).flat())}/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules form no import circle (a circle makes load order and layering meaningless).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-test-support-in-production',
      comment:
        'Shipped code never imports tests, test support (src/testing/, @poise/test-support), benchmarks or tools.',
      severity: 'error',
      from: { pathNot: NOT_SHIPPED },
      to: { path: NOT_SHIPPED },
    },
    {
      name: 'only-through-the-public-entry',
      comment:
        "A package or app imports another only through its public entry (`@poise/x`, `@poise/x/testing`, `@poise/pve-api/server`), never a path into the other's src/.",
      severity: 'error',
      from: { path: '^(packages|apps)/([^/]+)/' },
      to: {
        path: '^(packages|apps)/[^/]+/',
        pathNot: [
          '^$1/$2/',
          '^packages/[^/]+/src/index\\.ts$',
          '^packages/[^/]+/src/testing/index\\.ts$',
          '^packages/pve-api/src/server/index\\.ts$',
        ],
      },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves (a moved file leaves no dangling import behind).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'packages-not-to-apps',
      comment: 'Libraries never import the applications built on them.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^apps/' },
    },
    ...tierRules,
    {
      name: 'pure-tiers-do-no-io',
      comment: 'Pure maths and models do no I/O: I/O lives in adapters (pve-api, the apps, the simulator’s files).',
      severity: 'error',
      from: { path: `^packages/${anyOf(PURE)}/src/`, pathNot: NOT_SHIPPED },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|net|http|https|http2|tls|dgram|child_process|cluster|worker_threads|readline)$',
      },
    },
    {
      name: 'apps-not-to-each-other',
      comment: 'The daemon and the lab share code through packages, not by importing each other.',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)node_modules/', '(^|/)dist/', '(^|/)\\.turbo/', '^examples/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.check.json' },
    // workspace packages resolve to their sources, as the tests and tsx see them
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['poise-source', 'import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
