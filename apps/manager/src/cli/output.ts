/**
 * A standard output whose reader went away (`poise-manager --sim | head`) is the reader's
 * choice, not a failure. Node reports it as an `error` event (EPIPE) on the stream; nobody
 * listening, that is a stack trace and exit 1. `onOutputClosed` listens on each stream: the
 * first EPIPE calls `onClosed` (later ones are ignored: the stream is destroyed and drops
 * further writes); any other error is thrown as before.
 */
export function onOutputClosed(streams: readonly NodeJS.WritableStream[], onClosed: () => void): void {
  let closed = false;
  for (const stream of streams) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      if (closed) return;
      closed = true;
      onClosed();
    });
  }
}
