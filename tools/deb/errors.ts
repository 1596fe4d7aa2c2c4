/** A Debian package build that cannot go on: the message names the input or tool at fault. */
export class DebBuildError extends Error {
  readonly code = 'deb-build';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DebBuildError';
  }
}
