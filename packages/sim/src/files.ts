import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { SimError } from './errors';

/**
 * Largest input file the simulator reads (64 MiB). A 20,000-service `service_config` is about
 * 1 MiB, so this leaves room for clusters far beyond the reference's while refusing a runaway
 * file before it is read into memory.
 */
const MAX_INPUT_FILE_BYTES = 64 * 1024 * 1024;

export interface ReadOptions {
  /** Refuse files larger than this many bytes (default `MAX_INPUT_FILE_BYTES`). */
  maxBytes?: number;
}

/** What kind of file system object `stats` is, for messages. */
function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** The stats of `path`, or undefined when nothing is there. */
export function statPath(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') {
      return undefined;
    }
    throw new SimError('bad-case', `cannot access '${path}': ${(err as Error).message}`, { cause: err });
  }
}

/** Throws unless `path` is a directory (naming what it is instead). */
export function expectDirectory(path: string, what = 'a directory'): void {
  const st = statPath(path);
  if (!st) throw new SimError('bad-case', `no such directory '${path}'`);
  if (!st.isDirectory()) {
    const kind = st.isFile() ? 'a file' : kindOf(st);
    throw new SimError('bad-case', `'${path}' is ${kind}, expected ${what}`);
  }
}

/**
 * Reads a text input file: a regular file (a directory, FIFO, socket or device is refused by
 * its type before anything is opened, so a FIFO never blocks the reader), at most
 * `maxBytes` long, UTF-8 without a byte order mark. Returns undefined when the file does not
 * exist; every other problem is a {@link SimError} (`bad-case`) naming the file.
 */
export function readInputFile(path: string, options: ReadOptions = {}): string | undefined {
  const maxBytes = options.maxBytes ?? MAX_INPUT_FILE_BYTES;
  const st = statPath(path);
  if (!st) return undefined;
  if (!st.isFile()) throw new SimError('bad-case', `'${path}' is ${kindOf(st)}, expected a regular file`);
  if (st.size > maxBytes) {
    throw new SimError('bad-case', `'${path}' is ${st.size} bytes, over the limit of ${maxBytes} bytes`);
  }
  // O_NONBLOCK: should the path have been swapped for a FIFO since the stat, the open still
  // returns at once and the fstat below refuses it
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new SimError('bad-case', `cannot read '${path}': ${(err as Error).message}`, { cause: err });
  }
  let bytes: Buffer;
  try {
    const fst = fstatSync(fd);
    if (!fst.isFile()) throw new SimError('bad-case', `'${path}' is ${kindOf(fst)}, expected a regular file`);
    // read to the end, in case the file grew since the stat
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.max(64 * 1024, Math.min(fst.size, maxBytes) + 1 - length));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      length += n;
      if (length > maxBytes) throw new SimError('bad-case', `'${path}' is over the limit of ${maxBytes} bytes`);
    }
    bytes = Buffer.concat(chunks, length);
  } finally {
    closeSync(fd);
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new SimError('bad-case', `'${path}' starts with a UTF-8 byte order mark; save it without one`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw new SimError('bad-case', `'${path}' is not valid UTF-8`, { cause: err });
  }
}
