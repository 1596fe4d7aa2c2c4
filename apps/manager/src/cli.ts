import { processIo } from './cli/io';
import { EXIT_OK, main } from './cli/main';
import { onOutputClosed } from './cli/output';

// A closed stdout or stderr (`poise-manager --sim | head`): a running daemon finishes its round
// and exits 0, as on SIGTERM (its state is saved as after every round); otherwise exit 0 now.
const whenClosed = new Set<() => void>();
onOutputClosed([process.stdout, process.stderr], () => {
  if (whenClosed.size === 0) process.exit(EXIT_OK);
  for (const handler of whenClosed) handler();
});

// No top-level await: the Debian package bundles this entry as CommonJS (a Node.js single
// executable application), where it is not available.
void main(process.argv.slice(2), {
  ...processIo,
  onOutputClosed: (handler) => {
    whenClosed.add(handler);
    return () => whenClosed.delete(handler);
  },
}).then((code) => {
  process.exitCode = code;
});
