/**
 * poise-manager(1): rendered by the daemon's own command-line definition (`cli-spec.ts`), the
 * one `--help` prints from, so the page and the help cannot disagree.
 */
import { renderManPage } from '../../apps/manager/src/cli/spec';

/** The man page source (troff), for `version`. */
export function manPage(version: string): string {
  return renderManPage(version);
}
