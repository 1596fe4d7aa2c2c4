/** Log levels, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVEL_RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Extra structured fields of a line (JSON values). */
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined | readonly string[]>>;

/** One log line before formatting. */
interface LogRecord {
  /** ISO 8601 time. */
  readonly time: string;
  readonly level: LogLevel;
  /**
   * What kind of line: `round` (exactly one per round), `start`, `config`, `lock`, `motion`,
   * `state`, `cluster`, `metrics`, `stop`, `error`.
   */
  readonly event: string;
  readonly msg: string;
  readonly fields: LogFields;
}

/** Replacement of a secret found in a line. */
export const REDACTED = '[redacted]';
/** Secrets shorter than this are not searched for (they would match ordinary words). */
const MIN_SECRET_LENGTH = 8;

/**
 * Structured logger. `json`: one JSON object per line (`time`, `level`, `event`, `msg`, then the
 * fields); `text`: `<time> <level> <event>: <msg>` for a terminal (a round line reads
 * `round <n>: <msg>`). Every line passes a last filter that replaces any registered secret with
 * `[redacted]`, whatever field it hides in.
 */
export class Logger {
  private level: LogLevel;
  private format: 'json' | 'text';
  private readonly secrets = new Set<string>();
  private readonly redactions: ((text: string) => string)[] = [];

  private readonly timeLabel: ((seconds: number) => string) | undefined;

  /**
   * `timeLabel` writes the time of a text line instead of ISO 8601 (the simulator's simulated
   * time); JSON lines always carry ISO 8601 `time`.
   */
  constructor(
    options: { format: 'json' | 'text'; level: LogLevel; timeLabel?: (seconds: number) => string },
    private readonly write: (line: string) => void,
    private readonly now: () => number,
  ) {
    this.level = options.level;
    this.format = options.format;
    this.timeLabel = options.timeLabel;
  }

  configure(options: { format: 'json' | 'text'; level: LogLevel }): void {
    this.level = options.level;
    this.format = options.format;
  }

  /** Registers strings that must never appear in a line. */
  addSecrets(values: readonly string[]): void {
    for (const v of values) if (v.length >= MIN_SECRET_LENGTH) this.secrets.add(v);
  }

  /**
   * Registers a function that removes a secret from a text (`ApiToken.redact`): applied to the
   * message and every string field before the line is formatted, and to the line itself.
   */
  addRedaction(redact: (text: string) => string): void {
    this.redactions.push(redact);
  }

  enabled(level: LogLevel): boolean {
    return LEVEL_RANK[level] >= LEVEL_RANK[this.level];
  }

  log(level: LogLevel, event: string, msg: string, fields: LogFields = {}): void {
    if (!this.enabled(level)) return;
    const now = this.now();
    const clean = (text: string) => this.redactions.reduce((out, redact) => redact(out), text);
    const cleanFields: Record<string, LogFields[string]> = {};
    for (const [k, v] of Object.entries(fields))
      cleanFields[k] = typeof v === 'string' ? clean(v) : Array.isArray(v) ? v.map((x: string) => clean(x)) : v;
    const record: LogRecord = {
      time: new Date(now * 1000).toISOString(),
      level,
      event,
      msg: clean(msg),
      fields: cleanFields,
    };
    this.write(this.redact(this.format === 'json' ? formatJson(record) : formatText(record, this.timeLabel?.(now))));
  }

  debug(event: string, msg: string, fields?: LogFields): void {
    this.log('debug', event, msg, fields);
  }

  info(event: string, msg: string, fields?: LogFields): void {
    this.log('info', event, msg, fields);
  }

  warn(event: string, msg: string, fields?: LogFields): void {
    this.log('warn', event, msg, fields);
  }

  error(event: string, msg: string, fields?: LogFields): void {
    this.log('error', event, msg, fields);
  }

  private redact(line: string): string {
    let out = this.redactions.reduce((text, redact) => redact(text), line);
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
      // the JSON form escapes some characters; look for that spelling too
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret && out.includes(escaped)) out = out.split(escaped).join(REDACTED);
    }
    return out;
  }
}

function formatJson(record: LogRecord): string {
  const out: Record<string, unknown> = { time: record.time, level: record.level, event: record.event, msg: record.msg };
  for (const [k, v] of Object.entries(record.fields)) if (v !== undefined && !(k in out)) out[k] = v;
  return JSON.stringify(out);
}

function formatText(record: LogRecord, time = record.time): string {
  const round =
    record.event === 'round' && typeof record.fields.round === 'number' ? `round ${record.fields.round}` : record.event;
  return `${time} ${record.level.padEnd(5)} ${round}: ${record.msg}`;
}

/** `auto` → text on a terminal, JSON lines otherwise. */
export function resolveLogFormat(format: 'auto' | 'json' | 'text', isTty: boolean): 'json' | 'text' {
  if (format !== 'auto') return format;
  return isTty ? 'text' : 'json';
}
