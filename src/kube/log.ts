// Structured logging on pino. Upstream logs zap JSON with level = -verbosity, so `--log-verbosity 1`
// shows V(1) lines; here V(1) is `debug` and V(2+) is `trace`. Tokens, kubeconfigs and Secret data
// must never reach a log: fields and bindings are redacted by key before pino serialises them, and
// the finished line is scanned once for credential-looking text, parsed and redacted only on a hit.
import { pino } from 'pino';
import type { Logger } from 'pino';

export type { Logger } from 'pino';

export type LogFormat = 'json' | 'console';

export interface LoggerOptions {
  /** Upstream's `--log-verbosity`: 0 = info, 1 = debug (V(1)), 2 and more = trace. Negative = warn. */
  verbosity?: number;
  format?: LogFormat;
  /** Where lines go; defaults to stdout. */
  destination?: { write(line: string): unknown };
  /** Fields on every line. */
  base?: Record<string, unknown>;
}

export function levelForVerbosity(verbosity: number): pino.Level {
  if (verbosity < 0) return 'warn';
  if (verbosity === 0) return 'info';
  if (verbosity === 1) return 'debug';
  return 'trace';
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const dest = opts.destination ?? process.stdout;
  const stream = opts.format === 'console' ? consoleStream(dest) : { write: (l: string) => void dest.write(l) };
  const logger = pino(
    {
      level: levelForVerbosity(opts.verbosity ?? 0),
      base: opts.base ? redactFields(opts.base) : null,
      timestamp: pino.stdTimeFunctions.isoTime,
      // `redact` already gave every error, at any depth, pino's standard shape; pino's own err
      // serializer would take that object for an error again (and type it "Object").
      serializers: { err: (err: unknown) => err },
      formatters: {
        level: (label) => ({ level: label }),
        // The merge object is redacted before pino serialises it: the tree is walked once and the
        // JSON built once.
        log: redactFields,
      },
      hooks: { streamWrite: redactFinishedLine },
    },
    stream,
  );
  // pino's formatters.bindings sees the root's bindings only. Children of any depth find these
  // two through their prototype chain, so their bindings are redacted too, once, when set.
  const pinoMethods = Object.getPrototypeOf(logger) as Logger;
  logger.child = function (this: Logger, bindings, options) {
    return pinoMethods.child.call(this, redactFields(bindings), options);
  } as Logger['child'];
  logger.setBindings = function (this: Logger, bindings) {
    pinoMethods.setBindings.call(this, redactFields(bindings));
  };
  return logger;
}

/**
 * What the formatters cannot redact: text pino adds after them (the message, printf arguments, an
 * error's message as msg), and a Secret's shape split between bindings and fields. A line that
 * cannot hold either costs a regex scan and a substring search; the rest are parsed and redacted.
 */
function redactFinishedLine(line: string): string {
  return SUSPECT.test(line) || (line.includes('"data":') && SECRET_SHAPE.test(line)) ? redactLine(line) : line;
}

function redactLine(line: string): string {
  try {
    return `${JSON.stringify(redact(JSON.parse(line)))}\n`;
  } catch {
    return redactString(line);
  }
}

/** A logger that drops everything: the default for components built without one. */
export const silentLogger: Logger = pino({ level: 'silent' });

// The console format is for people at a terminal: `time LEVEL msg key=value ...`.
function consoleStream(dest: { write(line: string): unknown }): { write(line: string): void } {
  return {
    write(line: string) {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        dest.write(line);
        return;
      }
      const { time, level, msg, ...rest } = rec;
      const fields = Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      dest.write(`${String(time)}\t${String(level).toUpperCase()}\t${typeof msg === 'string' ? msg : JSON.stringify(msg ?? '')}${fields ? `\t${fields}` : ''}\n`);
    },
  };
}

const REDACTED = '[REDACTED]';
// Keys whose values are credentials wherever they appear, in any case. One regex test per key,
// without lower-casing (allocating) every key of every line first.
const SECRET_KEY = new RegExp(
  `^(?:${[
    'authorization', 'proxy-authorization', 'token', 'bearertoken', 'bearer-token', 'access-token', 'accesstoken',
    'id-token', 'idtoken', 'refresh-token', 'refreshtoken', 'password', 'client-key-data', 'clientkeydata',
    'client-key', 'keydata', 'kubeconfig', 'stringdata', 'cookie', 'set-cookie', 'client-secret',
  ].join('|')})$`,
  'i',
);
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
// A kubeconfig pasted into a string: its credentials may be in any field, so drop the whole text.
const KUBECONFIG = /kind:\s*"?Config"?[\s\S]*(users|clusters):|(client-key-data|client-certificate-data|certificate-authority-data)\s*:/;
// Matches wherever one of the four above would, in a string and in its JSON-escaped form (a
// whitespace may be written as an escape, `"` as `\"`, and an escaped character before a word
// breaks \b), so a text or line it misses needs no redaction. The replacements do not match it.
const JSON_SPACE = String.raw`(?:\s|\\[tnfr]|\\u000b)`;
const SUSPECT = new RegExp(
  [
    String.raw`B(?:earer|asic)${JSON_SPACE}+[A-Za-z0-9._~+/=-]`,
    String.raw`eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.`,
    String.raw`PRIVATE KEY-----`,
    String.raw`kind:${JSON_SPACE}*(?:\\?")?Config`,
    // client-key-data, client-certificate-data, certificate-authority-data: one shared suffix is faster.
    String.raw`-data${JSON_SPACE}*:`,
  ].join('|'),
);
// A line that has top-level `data` only looks like a Secret (see `walk`) if it has one of these.
const SECRET_SHAPE = /"kind":"Secret"|"metadata":/;
const TOO_DEEP = '[Circular or too deep]';

export function redactString(s: string): string {
  if (!SUSPECT.test(s)) return s;
  if (KUBECONFIG.test(s)) return '[REDACTED kubeconfig]';
  return s.replace(PEM_KEY, '[REDACTED private key]').replace(BEARER, `$1 ${REDACTED}`).replace(JWT, REDACTED);
}

/**
 * `value` as a log line shows it, redacted: credential keys at any depth, `data` of Secrets (an
 * object with kind Secret or with a string `type`, which ConfigMaps do not have), and
 * credential-looking strings; errors in pino's standard shape. The input is never mutated, and
 * whatever needs no change is returned as it is rather than copied.
 */
export function redact(value: unknown): unknown {
  return walk(value, [], redactString);
}

// The logger's per-line pass: keys only. Strings are left to the scan of the finished line, one
// regex over the whole line instead of one call per string.
function redactFields(fields: object): Record<string, unknown> {
  return walk(fields, [], keep) as Record<string, unknown>;
}

const keep = (s: string): string => s;

function walk(value: unknown, ancestors: object[], scrub: (s: string) => string): unknown {
  if (typeof value === 'string') return scrub(value);
  if (value === null || typeof value !== 'object') return value;
  if (ancestors.length > 32 || ancestors.includes(value)) return TOO_DEEP;
  if (Buffer.isBuffer(value)) return `[Buffer ${value.length} bytes]`;
  ancestors.push(value);
  try {
    // The message, causes and own fields of an error, as pino would have serialised them.
    if (value instanceof Error) return walk(pino.stdSerializers.err(value), ancestors, scrub);
    // What JSON.stringify will write; a Date's string is harmless and not worth a copy.
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function' && !(value instanceof Date)) return walk(toJSON.call(value), ancestors, scrub);
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        const r = walk(v, ancestors, scrub);
        if (r !== v) (out ??= [...(value as unknown[])])[i] = r;
      }
      return out ?? value;
    }
    const src = value as Record<string, unknown>;
    const looksLikeSecret = src.kind === 'Secret' || (typeof src.type === 'string' && 'data' in src && 'metadata' in src);
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(src)) {
      const v = src[k];
      const r = SECRET_KEY.test(k) || (k === 'data' && looksLikeSecret) ? (v === undefined || v === null || v === '' ? v : REDACTED) : walk(v, ancestors, scrub);
      // A computed key makes an own property even for "__proto__" (JSON.parse makes those).
      if (r !== v) out = { ...(out ?? src), [k]: r };
    }
    return out ?? src;
  } finally {
    ancestors.pop();
  }
}
