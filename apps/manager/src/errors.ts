/** Machine-readable reason of a {@link ManagerError}. */
export type ManagerErrorCode =
  /** The config file is missing, unreadable, not YAML, or fails validation. */
  | 'invalid-config'
  /** The API token could not be read (file, environment variable) or is malformed. */
  | 'invalid-token'
  /** The state file cannot be read, written, or is of a version this build does not read. */
  | 'state'
  /** The active/standby lock directory cannot be used. */
  | 'lock'
  /** The balancer port (cluster adapter) failed; see {@link PortError}. */
  | 'port'
  /** The metrics endpoint cannot listen. */
  | 'metrics'
  /** A command-line usage error. */
  | 'usage';

/**
 * The one error class family of `poise-manager`: thrown for invalid input (config, state file,
 * token, arguments) and for failures of the environment. Expected outcomes of a round (a skip,
 * a refused motion) are values, never errors.
 */
export class ManagerError extends Error {
  override name = 'ManagerError';
  readonly code: ManagerErrorCode;

  constructor(code: ManagerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The message of any thrown value, for a log line. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
