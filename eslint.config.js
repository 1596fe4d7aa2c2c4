// Lint configuration: typescript-eslint with type information, from one TypeScript program of
// every package's sources, tools and benchmarks (tsconfig.check.json, which `pnpm typecheck`
// checks too): one program instead of one per package halves the run, as each package's
// program re-read the sources of the packages it imports. Formatting is Biome's job (biome.json), so no rule here is about
// layout. Every rule that is off or relaxed says why; a single line that must break a rule says
// why in its disable comment (`// eslint-disable-next-line <rule> -- <reason>`), which
// `require-description` enforces. See CONTRIBUTING.md.
import comments from '@eslint-community/eslint-plugin-eslint-comments/configs';
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['**/dist/', 'docs/api/', '.ci/out/', '**/test-output/', '**/.turbo/', '**/coverage/']),
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.{ts,mts,js,mjs}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked, comments.recommended],
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        // a file outside them is an error naming it: add its folder there. The status page's
        // browser code has a program of its own (the DOM library, no Node types).
        project: ['./tsconfig.check.json', './apps/manager/web/page/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // The three rules this linter is here for: a promise nobody awaits or handles (an
      // unhandled rejection ends the daemon), a promise where a value or a void callback is
      // expected (an `async` listener whose rejection no one sees), and a switch over a union that
      // forgets a member added later.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A `default` branch counts: it is a decision for the members not named (portErrorKind's
      // 'other', the states a round does nothing in); what the rule catches is a switch over a
      // union that silently does nothing for a member.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `return promise` inside try/catch skips the catch when the promise rejects.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],

      // Off: an `async` method without `await` is how this code implements a Promise-returning
      // interface (fakes, the simulator port): `async` turns a throw into a rejection, which is
      // what callers handle. Dropping `async` to satisfy the rule would make those throws
      // synchronous.
      '@typescript-eslint/require-await': 'off',

      // A leading underscore marks a binding kept on purpose: a property left out of a rest
      // spread (`const { format: _f, ...body } = doc`), an argument an interface requires.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],

      // A disable comment says why (`-- reason`), and names the rules it disables.
      '@eslint-community/eslint-comments/require-description': 'error',
      '@eslint-community/eslint-comments/no-unlimited-disable': 'error',
    },
  },
  {
    // Tests compare parsed JSON output and log records with `expect`, which fails loudly on a
    // wrong shape; vitest's own asymmetric matchers (`expect.stringMatching`,
    // `expect.objectContaining`) are typed `any`. The no-unsafe-* rules would ask for a cast on
    // every `JSON.parse` in a test without adding safety. Production code keeps them.
    files: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // the status page runs in a browser
    files: ['apps/manager/web/page/*.ts'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Plain JavaScript (this file, the CI report counter, test fixtures) has no types to check,
    // and the build configs (`tsup.config.ts`, `vitest.config.ts`, a few lines each) are outside
    // tsconfig.check.json: lint them with the rules that need no type information.
    files: ['**/*.{js,mjs}', '**/tsup.config.ts', 'tsup.config.base.ts', 'vitest.config.ts'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
