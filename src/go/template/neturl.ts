// Go's net/url (Go 1.26) as sprig's urlParse and urlJoin use it: Parse, String, Hostname and
// Userinfo, with the RFC 3986 escaping rules of each URL part. Go strings are bytes, so the
// work is done on "binary" strings (one char per byte) and converted back at the edges.
import { fromGoBytes, goBytes } from './bytes.ts';
import { goQuote } from './gofmt.ts';

const toBinary = (s: string): string => Buffer.from(goBytes(s)).toString('latin1');
const fromBinary = (b: string): string => fromGoBytes(Buffer.from(b, 'latin1'));
/** strconv.Quote of a binary string. */
const quote = (b: string): string => goQuote(fromBinary(b));

export class URLError extends Error {}

type Mode = 'path' | 'pathSegment' | 'host' | 'zone' | 'userPassword' | 'queryComponent' | 'fragment';

const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
/** The bytes each part leaves as they are (net/url's encoding table). */
const KEEP: Readonly<Record<Mode, string>> = {
  path: UNRESERVED + "$&+,/:;=@",
  pathSegment: UNRESERVED + '$&+:=@',
  host: UNRESERVED + '!"$&\'()*+,:;<=>[]',
  zone: UNRESERVED + '!"$&\'()*+,:;<=>[]',
  userPassword: UNRESERVED + '$&+,;=',
  queryComponent: UNRESERVED,
  fragment: UNRESERVED + '!$&()*+,/:;=?@',
};

const shouldEscape = (c: string, mode: Mode): boolean => !KEEP[mode].includes(c);
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Fa-f]$/.test(c);
const unhex = (c: string): number => parseInt(c, 16);

function escapeError(s: string): URLError {
  return new URLError(`invalid URL escape ${quote(s)}`);
}

function unescape(s: string, mode: Mode): string {
  for (let i = 0; i < s.length; ) {
    const c = s[i]!;
    if (c === '%') {
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) throw escapeError(s.slice(i, i + 3));
      const esc = s.slice(i, i + 3);
      if (mode === 'host' && unhex(s[i + 1]!) < 8 && esc !== '%25') throw escapeError(esc);
      if (mode === 'zone') {
        const v = String.fromCharCode(unhex(s[i + 1]!) * 16 + unhex(s[i + 2]!));
        if (esc !== '%25' && v !== ' ' && shouldEscape(v, 'host')) throw escapeError(esc);
      }
      i += 3;
    } else {
      if ((mode === 'host' || mode === 'zone') && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode)) {
        throw new URLError(`invalid character ${quote(c)} in host name`);
      }
      i++;
    }
  }
  return s
    .replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\+/g, mode === 'queryComponent' ? ' ' : '+');
}

function escape(s: string, mode: Mode): string {
  let out = '';
  for (const c of s) {
    if (c === ' ' && mode === 'queryComponent') out += '+';
    else if (shouldEscape(c, mode)) out += '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
    else out += c;
  }
  return out;
}

interface Userinfo {
  username: string;
  password: string;
  passwordSet: boolean;
}

export interface URL {
  scheme: string;
  opaque: string;
  user: Userinfo | null;
  host: string;
  path: string;
  rawPath: string;
  fragment: string;
  rawFragment: string;
  rawQuery: string;
  forceQuery: boolean;
  omitHost: boolean;
}

function userinfoString(u: Userinfo): string {
  return escape(u.username, 'userPassword') + (u.passwordSet ? ':' + escape(u.password, 'userPassword') : '');
}

function getScheme(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
    } else if (c === ':') {
      if (i === 0) throw new URLError('missing protocol scheme');
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    } else return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

const validOptionalPort = (port: string): boolean => port === '' || /^:[0-9]*$/.test(port);

// ---------------------------------------------------------------- netip.ParseAddr

class AddrError extends URLError {
  constructor(input: string, msg: string, at = '') {
    super(`ParseAddr(${quote(input)}): ${msg}${at ? ` (at ${quote(at)})` : ''}`);
  }
}

function parseIPv4Fields(input: string, s: string): void {
  let val = 0;
  let pos = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c >= '0' && c <= '9') {
      if (digits === 1 && val === 0) throw new AddrError(input, 'IPv4 field has octet with leading zero');
      val = val * 10 + Number(c);
      digits++;
      if (val > 255) throw new AddrError(input, 'IPv4 field has value >255');
    } else if (c === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.') throw new AddrError(input, 'IPv4 field must have at least one digit', s.slice(i));
      if (pos === 3) throw new AddrError(input, 'IPv4 address too long');
      pos++;
      val = 0;
      digits = 0;
    } else throw new AddrError(input, 'unexpected character', s.slice(i));
  }
  if (pos < 3) throw new AddrError(input, 'IPv4 address too short');
}

function parseIPv6(input: string): void {
  let s = input;
  const pct = s.indexOf('%');
  if (pct >= 0) {
    if (pct === s.length - 1) throw new AddrError(input, 'zone must be a non-empty string');
    s = s.slice(0, pct);
  }
  const zoneLen = pct >= 0 ? input.length - pct : 0;
  let ellipsis = -1;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s === '') return;
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length && isHex(s[off]); off++) {
      acc = acc * 16 + unhex(s[off]!);
      if (off > 3) throw new AddrError(input, 'each group must have 4 or less digits', s);
      if (acc > 0xffff) throw new AddrError(input, 'IPv6 field has value >=2^16', s);
    }
    if (off === 0) throw new AddrError(input, 'each colon-separated field must have at least one digit', s);
    if (off < s.length && s[off] === '.') {
      if (ellipsis < 0 && i !== 12) throw new AddrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', s);
      if (i + 4 > 16) throw new AddrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', s);
      const end = input.length - zoneLen;
      parseIPv4Fields(input, input.slice(end - s.length, end));
      s = '';
      i += 4;
      break;
    }
    i += 2;
    s = s.slice(off);
    if (s === '') break;
    if (s[0] !== ':') throw new AddrError(input, 'unexpected character, want colon', s);
    if (s.length === 1) throw new AddrError(input, 'colon must be followed by more characters', s);
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) throw new AddrError(input, 'multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s === '') break;
    }
  }
  if (s !== '') throw new AddrError(input, 'trailing garbage after address', s);
  if (i < 16 && ellipsis < 0) throw new AddrError(input, 'address string too short');
  if (i >= 16 && ellipsis >= 0) throw new AddrError(input, 'the :: must expand to at least one field of zeros');
}

/** netip.ParseAddr, reduced to what parseHost asks: is it valid, and is it plain IPv4. */
function parseAddrIs4(s: string): boolean {
  for (const c of s) {
    if (c === '.') {
      parseIPv4Fields(s, s);
      return true;
    }
    if (c === ':') {
      parseIPv6(s);
      return false;
    }
    if (c === '%') throw new AddrError(s, 'missing IPv6 address');
  }
  throw new AddrError(s, 'unable to parse IP');
}

// ---------------------------------------------------------------- parsing

function parseHost(scheme: string, host: string): string {
  const open = host.lastIndexOf('[');
  if (open > 0) throw new URLError('invalid IP-literal');
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new URLError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new URLError(`invalid port ${quote(colonPort)} after host`);
    const port = unescape(colonPort, 'host');
    const hostname = host.slice(1, close);
    const zone = hostname.indexOf('%25');
    const unescaped = zone >= 0 ? unescape(hostname.slice(0, zone), 'host') + unescape(hostname.slice(zone), 'zone') : unescape(hostname, 'host');
    let is4: boolean;
    try {
      is4 = parseAddrIs4(unescaped);
    } catch (e) {
      if (e instanceof URLError) throw new URLError(`invalid host: ${e.message}`);
      throw e;
    }
    if (is4) throw new URLError('invalid IP-literal');
    return `[${unescaped}]${port}`;
  }
  let i = host.indexOf(':');
  if (i >= 0) {
    const last = host.lastIndexOf(':');
    // only http and https insist on a single colon (urlstrictcolons)
    if (last !== i && scheme !== 'http' && scheme !== 'https') i = last;
    const colonPort = host.slice(i);
    if (!validOptionalPort(colonPort)) throw new URLError(`invalid port ${quote(colonPort)} after host`);
  }
  return unescape(host, 'host');
}

const USERINFO = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/;

function parseAuthority(scheme: string, authority: string): { user: Userinfo | null; host: string } {
  const at = authority.lastIndexOf('@');
  const host = parseHost(scheme, at < 0 ? authority : authority.slice(at + 1));
  if (at < 0) return { user: null, host };
  const info = authority.slice(0, at);
  // userinfo is checked by rune, so non-ASCII is refused
  if (!USERINFO.test(info)) throw new URLError('net/url: invalid userinfo');
  const colon = info.indexOf(':');
  if (colon < 0) return { user: { username: unescape(info, 'userPassword'), password: '', passwordSet: false }, host };
  return {
    user: { username: unescape(info.slice(0, colon), 'userPassword'), password: unescape(info.slice(colon + 1), 'userPassword'), passwordSet: true },
    host,
  };
}

function parse(raw: string): URL {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new URLError('net/url: invalid control character in URL');
  const url: URL = { scheme: '', opaque: '', user: null, host: '', path: '', rawPath: '', fragment: '', rawFragment: '', rawQuery: '', forceQuery: false, omitHost: false };
  if (raw === '*') {
    url.path = '*';
    return url;
  }
  const { scheme, rest: afterScheme } = getScheme(raw);
  url.scheme = scheme.toLowerCase();
  let rest = afterScheme;
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    url.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) [rest, url.rawQuery] = [rest.slice(0, q), rest.slice(q + 1)];
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') {
      url.opaque = rest;
      return url;
    }
    if ((rest.split('/')[0] ?? '').includes(':')) throw new URLError('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) [authority, rest] = [authority.slice(0, slash), authority.slice(slash)];
    ({ user: url.user, host: url.host } = parseAuthority(url.scheme, authority));
  } else if (url.scheme !== '' && rest.startsWith('/')) url.omitHost = true;
  url.path = unescape(rest, 'path');
  url.rawPath = escape(url.path, 'path') === rest ? '' : rest;
  return url;
}

/** url.Parse; throws URLError with Go's *url.Error text. */
export function parseURL(raw: string): URL {
  const b = toBinary(raw);
  const hash = b.indexOf('#');
  const [u, frag] = hash < 0 ? [b, ''] : [b.slice(0, hash), b.slice(hash + 1)];
  let url: URL;
  try {
    url = parse(u);
  } catch (e) {
    if (e instanceof URLError) throw new URLError(`parse ${quote(u)}: ${e.message}`);
    throw e;
  }
  if (frag === '') return url;
  try {
    url.fragment = unescape(frag, 'fragment');
  } catch (e) {
    if (e instanceof URLError) throw new URLError(`parse ${quote(b)}: ${e.message}`);
    throw e;
  }
  url.rawFragment = escape(url.fragment, 'fragment') === frag ? '' : frag;
  return url;
}

const VALID_ENCODED_EXTRA = "!$&'()*+,;=:@[]%";

function validEncoded(s: string, mode: Mode): boolean {
  return [...s].every((c) => VALID_ENCODED_EXTRA.includes(c) || !shouldEscape(c, mode));
}

function escapedPart(raw: string, value: string, mode: 'path' | 'fragment'): string {
  if (raw !== '' && validEncoded(raw, mode)) {
    try {
      if (unescape(raw, mode) === value) return raw;
    } catch (e) {
      if (!(e instanceof URLError)) throw e;
    }
  }
  if (mode === 'path' && value === '*') return '*';
  return escape(value, mode);
}

/** URL.String(). */
function urlString(u: URL): string {
  let out = '';
  if (u.scheme !== '') out += u.scheme + ':';
  if (u.opaque !== '') out += u.opaque;
  else {
    if ((u.scheme !== '' || u.host !== '' || u.user !== null) && !(u.omitHost && u.host === '' && u.user === null)) {
      if (u.host !== '' || u.path !== '' || u.user !== null) out += '//';
      if (u.user) out += userinfoString(u.user) + '@';
      if (u.host !== '') out += escape(u.host, 'host');
    }
    const path = escapedPart(u.rawPath, u.path, 'path');
    if (path !== '' && path[0] !== '/' && u.host !== '') out += '/';
    if (out === '' && (path.split('/')[0] ?? '').includes(':')) out += './';
    out += path;
  }
  if (u.forceQuery || u.rawQuery !== '') out += '?' + u.rawQuery;
  if (u.fragment !== '') out += '#' + escapedPart(u.rawFragment, u.fragment, 'fragment');
  return out;
}

/** URL.Hostname(): the host without a valid port and without IPv6 brackets. */
function hostname(host: string): string {
  let h = host;
  const colon = h.lastIndexOf(':');
  if (colon >= 0 && validOptionalPort(h.slice(colon))) h = h.slice(0, colon);
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h;
}

/** The fields of sprig's urlParse dict, as Go strings. */
export function urlParts(raw: string): Record<string, string> {
  const u = parseURL(raw);
  const parts: Record<string, string> = {
    scheme: u.scheme,
    host: u.host,
    hostname: hostname(u.host),
    path: u.path,
    query: u.rawQuery,
    opaque: u.opaque,
    fragment: u.fragment,
    userinfo: u.user ? userinfoString(u.user) : '',
  };
  return Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, fromBinary(v)]));
}

/** sprig's urlJoin: url.URL{...}.String() from the dict's parts (userinfo parsed by url.Parse). */
export function joinURL(parts: Record<'scheme' | 'host' | 'path' | 'query' | 'opaque' | 'fragment' | 'userinfo', string>): string {
  const b = (k: keyof typeof parts): string => toBinary(parts[k]);
  const url: URL = {
    scheme: b('scheme'),
    opaque: b('opaque'),
    user: parts.userinfo === '' ? null : parseURL(`proto://${parts.userinfo}@host`).user,
    host: b('host'),
    path: b('path'),
    rawPath: '',
    fragment: b('fragment'),
    rawFragment: '',
    rawQuery: b('query'),
    forceQuery: false,
    omitHost: false,
  };
  return fromBinary(urlString(url));
}
