import { main } from './main';

// A closed stdout or stderr (`poise-sim run … | head`) is the reader's choice: exit 0 at once,
// quietly (every command is a batch run except `serve`, which stops serving with it). Without
// this listener Node reports the EPIPE as an unhandled 'error' event: a stack trace, exit 1.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(0);
  });
}

void Promise.resolve(main(process.argv.slice(2))).then((code) => {
  process.exitCode = code;
});
