import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PolicyError, PolicyRegistry } from '@poise/policy';
import { contentionPlugin } from '@poise/policy-contention';
import { planPlugin } from '@poise/policy-plan';
import { pressurePlugin } from '@poise/policy-pressure';
import { stablePlugin } from '@poise/policy-stable';

/**
 * The policy plug-ins built in, in the order of their keys, problems and description fragments:
 * what the balancer minimises (the objective), how it picks a move (the plan), then the
 * stability and the pressure stages. This list is the
 * one place a variant package is registered; every host (the HA core, poise-manager, the
 * simulator's case loader and `--set`, the lab, the config schema, the man page) reads the
 * variants through {@link BUILTIN_REGISTRY} or a registry extended from it.
 */
const BUILTIN_PLUGINS = [contentionPlugin, planPlugin, stablePlugin, pressurePlugin] as const;

/** The registry of the built-in plug-ins (see `BUILTIN_PLUGINS`). */
export const BUILTIN_REGISTRY = new PolicyRegistry(BUILTIN_PLUGINS);

/** A plug-in as loaded from a module, before it is checked: the value and the module it came from. */
export interface LoadedPlugin {
  readonly plugin: unknown;
  /** The module as the user named it (`./examples/policy-plugin-freeze`, `@acme/poise-freeze`). */
  readonly origin: string;
}

/** Whether a specifier is a path (`./x`, `../x`, `/x`) rather than a module name. */
function isPath(specifier: string): boolean {
  return (
    specifier.startsWith('./') ||
    specifier.startsWith('../') ||
    specifier === '.' ||
    specifier === '..' ||
    isAbsolute(specifier)
  );
}

/**
 * Loads policy plug-ins from modules, in order: a path (`./dir`, `../x.js`, `/abs`) is resolved
 * against `from` (a directory: the working directory, or the config file's); a module name
 * (`@acme/poise-freeze`) is resolved from `from` as Node's `require.resolve` does (a package
 * whose `exports` have a `default` or `require` condition, or a `main`). A directory is loaded
 * through its `package.json` `main` (or `index.js`). The plug-in is the module's default export,
 * else its export named `plugin`. Throws `PolicyError` `invalid-plugin` naming the module when it
 * cannot be resolved, its import throws, or it has neither export; the plug-in itself is
 * checked by the registry it is added to (`PolicyRegistry.with`).
 */
export async function loadPolicyPlugins(specifiers: readonly string[], from: string): Promise<LoadedPlugin[]> {
  const require = createRequire(join(resolve(from), 'noop.js'));
  const out: LoadedPlugin[] = [];
  for (const specifier of specifiers) {
    const fail = (what: string, cause?: unknown): never => {
      throw new PolicyError('invalid-plugin', `plug-in '${specifier}': ${what}`, { cause });
    };
    if (specifier === '') fail('an empty module name');
    let file: string;
    try {
      file = require.resolve(isPath(specifier) ? resolve(from, specifier) : specifier);
    } catch (err) {
      fail(`cannot find the module from '${resolve(from)}' (${errorText(err)})`, err);
    }
    let module: Record<string, unknown>;
    try {
      module = (await import(pathToFileURL(file!).href)) as Record<string, unknown>;
    } catch (err) {
      fail(`importing '${file!}' failed: ${errorText(err)}`, err);
    }
    const plugin = module!.default !== undefined ? module!.default : module!.plugin;
    if (plugin === undefined) {
      const names = Object.keys(module!);
      fail(
        `no default export and no export named 'plugin' (${names.length === 0 ? 'it exports nothing' : `its exports: ${names.join(', ')}`})`,
      );
    }
    out.push({ plugin, origin: specifier });
  }
  return out;
}

/**
 * The built-in registry extended with the plug-ins of these modules (`loadPolicyPlugins`,
 * then `PolicyRegistry.with`): throws `PolicyError` `invalid-plugin` naming the module and the
 * field for one that cannot be loaded, is not a plug-in, or clashes with a key or name before it.
 */
export async function loadPluginRegistry(
  specifiers: readonly string[],
  from: string,
  base: PolicyRegistry = BUILTIN_REGISTRY,
): Promise<PolicyRegistry> {
  if (specifiers.length === 0) return base;
  return base.with(await loadPolicyPlugins(specifiers, from));
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  // Node's resolution errors list the require stack on further lines: the first says it
  return text.split('\n')[0]!;
}
