// Structured logging on pino. Upstream logs zap JSON with level = -verbosity, so `--log-verbosity 1`
// shows V(1) lines; here V(1) is `debug` and V(2+) is `trace`. Tokens, kubeconfigs and Secret data
// must never reach a log: fields and bindings are redacted by key before pino serialises them, and
// the finished line is scanned once for credential-looking text, parsed and redacted only on a hit.
// Logged text may come from other clusters (their errors, objects, rendered templates), so every
// string a line carries is cut to a bound, and every pattern runs in time linear in the text.
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
 * error's message as msg), a Secret's shape split between bindings and fields, and strings over
 * the length limit, which only a line longer than the limit can hold. A line that cannot hold
 * any of them costs a regex scan and a substring search; the rest are parsed and redacted.
 */
function redactFinishedLine(line: string): string {
  if (line.length > MAX_STRING) return redactLine(line);
  return SUSPECT.test(line) || (line.includes('"data":') && SECRET_SHAPE.test(line)) ? redactLine(line) : line;
}

function redactLine(line: string): string {
  try {
    return `${JSON.stringify(redact(JSON.parse(line)))}\n`;
  } catch {
    return `${redactString(line.trimEnd())}\n`;
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
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
// A kubeconfig pasted into a string: its credentials may be in any field, so drop the whole text.
// It is `kind: Config` with `users:` or `clusters:` anywhere after it, or a key of inline
// credentials. One regex for the first (`kind:...Config[\s\S]*(users|clusters):`) would scan to
// the end of the text from every `kind:` in it.
const KIND_CONFIG = /kind:\s*"?Config/;
const CREDENTIAL_DATA = /(client-key-data|client-certificate-data|certificate-authority-data)\s*:/;
// Matches wherever one of the patterns here would, in a string and in its JSON-escaped form (a
// whitespace may be written as an escape, `"` as `\"`, and an escaped character before a word
// breaks \b), so a text or line it misses needs no redaction. The replacements do not match it.
// Each branch reads a bounded stretch from where it starts, or one run no other start shares.
const JSON_SPACE = String.raw`(?:\s|\\[tnfr]|\\u000b)`;
const SUSPECT = new RegExp(
  [
    String.raw`B(?:earer|asic)${JSON_SPACE}+[A-Za-z0-9._~+/=-]`,
    String.raw`eyJ[A-Za-z0-9_-]{5}`,
    String.raw`PRIVATE KEY-----`,
    String.raw`kind:${JSON_SPACE}*(?:\\?")?Config`,
    // client-key-data, client-certificate-data, certificate-authority-data: one shared suffix is faster.
    String.raw`-data${JSON_SPACE}*:`,
  ].join('|'),
);
// A line that has top-level `data` only looks like a Secret (see `walk`) if it has one of these.
const SECRET_SHAPE = /"kind":"Secret"|"metadata":/;
const TOO_DEEP = '[Circular or too deep]';
/** Longest string a log line carries; the rest is cut before redaction and counted. */
const MAX_STRING = 4096;

export function redactString(s: string): string {
  if (s.length <= MAX_STRING) return redactText(s);
  return `${redactText(s.slice(0, MAX_STRING))}…[truncated ${s.length - MAX_STRING} chars]`;
}

function redactText(s: string): string {
  if (!SUSPECT.test(s)) return s;
  if (isKubeconfig(s)) return '[REDACTED kubeconfig]';
  return redactJwts(s.replace(PEM_KEY, '[REDACTED private key]').replace(BEARER, `$1 ${REDACTED}`));
}

function isKubeconfig(s: string): boolean {
  const kind = KIND_CONFIG.exec(s);
  // The first `kind:` ends first, so whatever follows a later one follows it too.
  const after = kind ? kind.index + kind[0].length : -1;
  return (after >= 0 && (s.includes('users:', after) || s.includes('clusters:', after))) || CREDENTIAL_DATA.test(s);
}

// JWTs as `\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*` would replace them, without
// its backtracking: a token-character run holding many `eyJ` after a '-' ("-eyJ-eyJ...") would
// be scanned to its end from each. Runs are matched whole instead, from their start, and the
// token starts at the first `eyJ` of the run that a \b precedes: any later one has fewer
// characters after it to the same '.'.
const JWT_RUNS = /(?<![\w-])([\w-]+)\.[\w-]{5,}\.[\w-]*/g;

function redactJwts(s: string): string {
  // The substring search is much faster than the regex, which has no literal to look for.
  if (!s.includes('eyJ')) return s;
  let out = '';
  let copied = 0;
  JWT_RUNS.lastIndex = 0;
  for (let m = JWT_RUNS.exec(s); m; m = JWT_RUNS.exec(s)) {
    const run = m[1]!;
    const at = jwtStart(run);
    if (at < 0) {
      // No token starts in the first run; one may in the second.
      JWT_RUNS.lastIndex = m.index + run.length + 1;
      continue;
    }
    out += s.slice(copied, m.index + at) + REDACTED;
    copied = m.index + m[0].length;
  }
  return copied === 0 ? s : out + s.slice(copied);
}

/** Where in a run of token characters a JWT starts, or -1. */
function jwtStart(run: string): number {
  for (let i = run.indexOf('eyJ'); i >= 0; i = run.indexOf('eyJ', i + 1)) {
    if (i > 0 && run[i - 1] !== '-') continue; // no \b: a word character precedes it
    return run.length - i >= 8 ? i : -1;
  }
  return -1;
}

/**
 * `value` as a log line shows it, redacted: credential keys at any depth, `data` of Secrets (an
 * object with kind Secret or with a string `type`, which ConfigMaps do not have), and
 * credential-looking strings; errors in pino's standard shape; strings cut to MAX_STRING. The
 * input is never mutated, and whatever needs no change is returned as it is rather than copied.
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
      // One copy per object, however many of its values change. Defined rather than assigned, so
      // an own "__proto__" (JSON.parse makes those) stays a property.
      if (r !== v) Object.defineProperty((out ??= { ...src }), k, { value: r, enumerable: true, writable: true, configurable: true });
    }
    return out ?? src;
  } finally {
    ancestors.pop();
  }
}
