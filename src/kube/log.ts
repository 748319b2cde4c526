// Structured logging on pino. Upstream logs zap JSON with level = -verbosity, so `--log-verbosity 1`
// shows V(1) lines; here V(1) is `debug` and V(2+) is `trace`. Every finished line goes through
// `redact`, because tokens, kubeconfigs and Secret data must never reach a log.
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
  return pino(
    {
      level: levelForVerbosity(opts.verbosity ?? 0),
      base: opts.base ?? null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
      },
      hooks: {
        // The one choke point every line passes, child bindings and serialized errors included.
        streamWrite: redactLine,
      },
    },
    stream,
  );
}

function redactLine(line: string): string {
  try {
    return `${JSON.stringify(redact(JSON.parse(line)))}\n`;
  } catch {
    return `${redactString(line)}`;
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
// Keys whose values are credentials wherever they appear.
const SECRET_KEYS = new Set(
  [
    'authorization', 'proxy-authorization', 'token', 'bearertoken', 'bearer-token', 'access-token', 'accesstoken',
    'id-token', 'idtoken', 'refresh-token', 'refreshtoken', 'password', 'client-key-data', 'clientkeydata',
    'client-key', 'keydata', 'kubeconfig', 'stringdata', 'cookie', 'set-cookie', 'client-secret',
  ].map((k) => k.toLowerCase()),
);
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
// A kubeconfig pasted into a string: its credentials may be in any field, so drop the whole text.
const KUBECONFIG = /kind:\s*"?Config"?[\s\S]*(users|clusters):|(client-key-data|client-certificate-data|certificate-authority-data)\s*:/;

export function redactString(s: string): string {
  if (KUBECONFIG.test(s)) return '[REDACTED kubeconfig]';
  return s.replace(PEM_KEY, '[REDACTED private key]').replace(BEARER, `$1 ${REDACTED}`).replace(JWT, REDACTED);
}

/**
 * A redacted deep copy: credential keys at any depth, `data` of Secrets (an object with kind
 * Secret or with a string `type`, which ConfigMaps do not have), and credential-looking strings.
 * The input is never mutated.
 */
export function redact(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32 || seen.has(value)) return '[Circular or too deep]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1, seen));
    if (value instanceof Error) return redactError(value, depth, seen);
    if (Buffer.isBuffer(value)) return `[Buffer ${value.length} bytes]`;
    const src = value as Record<string, unknown>;
    const looksLikeSecret = src.kind === 'Secret' || (typeof src.type === 'string' && 'data' in src && 'metadata' in src);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(src)) {
      if (SECRET_KEYS.has(k.toLowerCase()) || (k === 'data' && looksLikeSecret)) {
        out[k] = v === undefined || v === null || v === '' ? v : REDACTED;
      } else {
        out[k] = redact(v, depth + 1, seen);
      }
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function redactError(err: Error, depth: number, seen: WeakSet<object>): Record<string, unknown> {
  const out: Record<string, unknown> = { type: err.name, message: redactString(err.message) };
  if (err.stack) out.stack = redactString(err.stack);
  for (const [k, v] of Object.entries(err)) out[k] = SECRET_KEYS.has(k.toLowerCase()) ? REDACTED : redact(v, depth + 1, seen);
  if (err.cause !== undefined) out.cause = redact(err.cause, depth + 1, seen);
  return out;
}
