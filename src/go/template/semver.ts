// Masterminds/semver v1.5.0, which sprig v2.22's semver and semverCompare use: version parsing,
// precedence, and its constraint language (comma-separated ANDs, || ORs, "a - b" ranges,
// = != > < >= => <= =< ~ ~> ^ operators, x/X/* wildcards, and the rule that a prerelease version
// only satisfies constraints that name a prerelease).

import { RE2JS } from 're2js';
import { LimitError, spend } from './limits.ts';

export class SemverError extends Error {}

export interface Version {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
  metadata: string;
  original: string;
}

const INT64_MAX = (1n << 63n) - 1n;
const SEMVER = /^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?(\+([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?$/;

function segment(digits: string): bigint {
  const n = BigInt(digits);
  if (n > INT64_MAX) throw new SemverError(`Error parsing version segment: strconv.ParseInt: parsing "${digits}": value out of range`);
  return n;
}

/** semver.NewVersion. */
export function parseVersion(v: string): Version {
  const m = SEMVER.exec(v);
  if (!m) throw new SemverError('Invalid Semantic Version');
  return {
    major: segment(m[1]!),
    minor: m[2] ? segment(m[2].slice(1)) : 0n,
    patch: m[3] ? segment(m[3].slice(1)) : 0n,
    pre: m[5] ?? '',
    metadata: m[8] ?? '',
    original: v,
  };
}

/** Version.String(): without a leading v. */
export function versionString(v: Version): string {
  return `${v.major}.${v.minor}.${v.patch}${v.pre ? '-' + v.pre : ''}${v.metadata ? '+' + v.metadata : ''}`;
}

const cmp = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);
const isUint64 = (s: string): boolean => /^[0-9]+$/.test(s) && BigInt(s) < 1n << 64n;

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return -1;
  if (o === '') return 1;
  const sn = isUint64(s);
  const on = isUint64(o);
  if (!sn && !on) return Buffer.compare(Buffer.from(s), Buffer.from(o)) > 0 ? 1 : -1;
  if (!on) return -1;
  if (!sn) return 1;
  return BigInt(s) > BigInt(o) ? 1 : -1;
}

/** Version.Compare: -1, 0 or 1; metadata does not count, a prerelease sorts first. */
export function compareVersions(v: Version, o: Version): number {
  const d = cmp(v.major, o.major) || cmp(v.minor, o.minor) || cmp(v.patch, o.patch);
  if (d !== 0) return d;
  if (v.pre === '' && o.pre === '') return 0;
  if (v.pre === '') return 1;
  if (o.pre === '') return -1;
  const sp = v.pre.split('.');
  const op = o.pre.split('.');
  for (let i = 0; i < Math.max(sp.length, op.length); i++) {
    const r = comparePrePart(sp[i] ?? '', op[i] ?? '');
    if (r !== 0) return r;
  }
  return 0;
}

// ---------------------------------------------------------------- constraints

interface Constraint {
  op: string;
  con: Version;
  minorDirty: boolean;
  dirty: boolean;
  patchDirty: boolean;
}

// Masterminds' own regexes (Go syntax; its operators in any order, as Go's map iteration gives
// them), run on re2js like Go runs them on RE2: backtracking, they take quadratic time over runs
// of spaces, digits or "|".
const CV =
  'v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?' +
  '(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?' +
  '(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?';
const OPS = ['!=', '>=', '=>', '<=', '=<', '~>', '>', '<', '=', '~', '\\^', ''];
const CONSTRAINT = RE2JS.compile(`^\\s*(${OPS.join('|')})\\s*(${CV})\\s*$`).re2();
const RANGE = RE2JS.compile(`\\s*(${CV})\\s+-\\s+(${CV})\\s*`).re2();

/**
 * Longest constraint parsed. Far past any real one; it bounds rewriting ranges, which replaces
 * each in the whole string, and a regex search takes up to a microsecond per byte.
 */
export const MAX_CONSTRAINT_BYTES = 256;
const CONSTRAINT_STEPS_PER_BYTE = 8;

const isX = (s: string | null | undefined): boolean => s === 'x' || s === '*' || s === 'X';

function parseConstraint(c: string): Constraint {
  const m = CONSTRAINT.findSubmatch(c) as (string | null)[] | null;
  if (!m) throw new SemverError(`improper constraint: ${c}`);
  let ver = m[2]!;
  let minorDirty = false;
  let patchDirty = false;
  let dirty = false;
  const minor = m[4] ?? '';
  const patch = m[5] ?? '';
  const pre = m[6] ?? '';
  if (isX(m[3])) {
    ver = '0.0.0';
    dirty = true;
  } else if (isX(minor.slice(1)) || minor === '') {
    minorDirty = true;
    dirty = true;
    ver = `${m[3]}.0.0${pre}`;
  } else if (isX(patch.slice(1))) {
    dirty = true;
    patchDirty = true;
    ver = `${m[3]}${minor}.0${pre}`;
  }
  let con: Version;
  try {
    con = parseVersion(ver);
  } catch {
    throw new SemverError('constraint Parser Error');
  }
  return { op: m[1]!, con, minorDirty, dirty, patchDirty };
}

function tilde(v: Version, c: Constraint): boolean {
  if (compareVersions(v, c.con) < 0) return false;
  if (c.con.major === 0n && c.con.minor === 0n && c.con.patch === 0n && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== c.con.major) return false;
  return v.minor === c.con.minor || c.minorDirty;
}

/** A wildcard upper bound: only major (and minor unless it is a wildcard) must not exceed it. */
function withinDirty(v: Version, c: Constraint): boolean {
  if (v.major > c.con.major) return false;
  return !(v.minor > c.con.minor && !c.minorDirty);
}

function check(v: Version, c: Constraint): boolean {
  // A prerelease only satisfies constraints that ask for prereleases.
  const preBlocked = v.pre !== '' && c.con.pre === '';
  switch (c.op) {
    case '!=':
      if (!c.dirty) return compareVersions(v, c.con) !== 0;
      if (preBlocked) return false;
      if (c.con.major !== v.major) return true;
      return c.con.minor !== v.minor && !c.minorDirty;
    case '>':
      return !preBlocked && compareVersions(v, c.con) === 1;
    case '<':
      if (preBlocked) return false;
      return c.dirty ? withinDirty(v, c) : compareVersions(v, c.con) < 0;
    case '>=':
    case '=>':
      return !preBlocked && compareVersions(v, c.con) >= 0;
    case '<=':
    case '=<':
      if (preBlocked) return false;
      return c.dirty ? withinDirty(v, c) : compareVersions(v, c.con) <= 0;
    case '~':
    case '~>':
      return !preBlocked && tilde(v, c);
    case '^':
      return !preBlocked && compareVersions(v, c.con) >= 0 && v.major === c.con.major;
    default:
      // "" and "=": equality, or tilde when the version has a wildcard
      if (preBlocked) return false;
      return c.dirty ? tilde(v, c) : compareVersions(v, c.con) === 0;
  }
}

/** Rewrites "a - b" ranges into ">= a, <= b". */
function rewriteRange(s: string): string {
  let out = s;
  for (const m of (RANGE.findAllSubmatch(s, -1) ?? []) as string[][]) out = out.replace(m[0]!, () => `>= ${m[1]}, <= ${m[11]}`);
  return out;
}

/** semver.NewConstraint(c).Check(v), as sprig's semverCompare(constraint, version). */
export function semverCompare(constraint: string, version: string): boolean {
  const bytes = Buffer.byteLength(constraint, 'utf8');
  if (bytes > MAX_CONSTRAINT_BYTES) throw new LimitError(`semver constraint exceeds ${MAX_CONSTRAINT_BYTES} bytes`);
  spend(bytes * CONSTRAINT_STEPS_PER_BYTE);
  const ors = rewriteRange(constraint)
    .split('||')
    .map((or) => or.split(',').map(parseConstraint));
  const v = parseVersion(version);
  return ors.some((ands) => ands.every((c) => check(v, c)));
}
