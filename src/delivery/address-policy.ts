import { isIP } from 'node:net';

/**
 * SSRF protection for tenant-registered targets.
 *
 * Two layers use the same rules:
 * - `checkTargetUrl` at registration (and again at call time) looks only at the URL text, so it
 *   can refuse IP literals and well-known internal names without touching DNS;
 * - `checkResolvedAddress` runs inside the socket's DNS lookup at call time, so the connection
 *   only ever goes to an address that was checked (a public name re-pointed at 10.0.0.5 after
 *   registration — DNS rebinding — is refused there).
 *
 * Operators opt specific internal hosts back in with TARGET_ALLOWED_HOSTS.
 */

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

export const ALLOWED_HOSTS_ENV = 'TARGET_ALLOWED_HOSTS';
export const MAX_TARGET_URL_LENGTH = 2048;

type IpValue = { family: 4; value: number } | { family: 6; value: bigint };

export interface Cidr {
  readonly family: 4 | 6;
  /** Network address with host bits cleared. */
  readonly network: bigint;
  readonly prefix: number;
}

export interface AllowedHosts {
  /** Exact hostnames, lower-case, without a trailing dot. */
  readonly names: ReadonlySet<string>;
  /** From `*.example.com` entries: `.example.com` (matches subdomains, not the apex). */
  readonly suffixes: readonly string[];
  /** Exact IP literals in canonical form (see `canonicalIp`). */
  readonly ips: ReadonlySet<string>;
  readonly cidrs: readonly Cidr[];
}

export const NO_ALLOWED_HOSTS: AllowedHosts = Object.freeze({
  names: new Set<string>(),
  suffixes: [],
  ips: new Set<string>(),
  cidrs: [],
});

export type UrlCheck =
  { ok: true; url: URL } | { ok: false; reason: string; code: 'invalid_url' | 'address_refused' };

export type AddressCheck =
  | { ok: true; classification: AddressClass }
  | { ok: false; reason: string; classification: AddressClass | 'invalid' };

// ---------------------------------------------------------------------------------------------
// Parsing

function parseIPv4(ip: string): number | null {
  if (isIP(ip) !== 4) return null;
  const [a, b, c, d] = ip.split('.').map(Number);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function parseIPv6(raw: string): bigint | null {
  // A zone id (fe80::1%eth0) does not change which range the address is in.
  const ip = raw.split('%')[0];
  if (isIP(ip) !== 6) return null;
  let groups: number[];
  const halves = ip.split('::');
  const parseHalf = (half: string): number[] => {
    if (half === '') return [];
    const out: number[] = [];
    for (const part of half.split(':')) {
      if (part.includes('.')) {
        const v4 = parseIPv4(part)!;
        out.push(v4 >>> 16, v4 & 0xffff);
      } else {
        out.push(parseInt(part, 16));
      }
    }
    return out;
  };
  if (halves.length === 2) {
    const head = parseHalf(halves[0]);
    const tail = parseHalf(halves[1]);
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    groups = parseHalf(ip);
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is the same endpoint as a.b.c.d, so it gets the same key. */
function parseIp(ip: string): IpValue | null {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return { family: 4, value: v4 };
  const v6 = parseIPv6(stripBrackets(ip));
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn) return { family: 4, value: Number(v6 & 0xffffffffn) };
  return { family: 6, value: v6 };
}

function formatIp(ip: IpValue): string {
  if (ip.family === 4) {
    const v = ip.value;
    return [v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff].join('.');
  }
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) {
    groups.push(((ip.value >> shift) & 0xffffn).toString(16));
  }
  return groups.join(':');
}

/** Canonical text for an IP literal (uncompressed IPv6; IPv4-mapped IPv6 as dotted IPv4). */
export function canonicalIp(ip: string): string | null {
  const parsed = parseIp(ip);
  return parsed ? formatIp(parsed) : null;
}

function normalizeHostname(host: string): string {
  const lower = stripBrackets(host.trim().toLowerCase());
  // "localhost." and "localhost" are the same DNS name.
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

// ---------------------------------------------------------------------------------------------
// Classification

type V4Rule = readonly [network: string, prefix: number, cls: AddressClass];

// First match wins, so the single metadata addresses precede their enclosing ranges.
const V4_RULES: readonly V4Rule[] = [
  ['169.254.169.254', 32, 'metadata'], // AWS, GCP, Azure, OCI, DigitalOcean, ...
  ['169.254.170.2', 32, 'metadata'], // AWS ECS task metadata / credentials
  ['100.100.100.200', 32, 'metadata'], // Alibaba Cloud
  ['0.0.0.0', 8, 'unspecified'], // "this network"; connecting to 0.0.0.0 reaches the local host
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'], // CGNAT, also used for cloud-internal service addresses
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // TEST-NET-1
  ['192.88.99.0', 24, 'reserved'], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'reserved'], // TEST-NET-2
  ['203.0.113.0', 24, 'reserved'], // TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // includes 255.255.255.255 (limited broadcast)
];

const V4_TABLE = V4_RULES.map(([network, prefix, cls]) => {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { network: (parseIPv4(network)! & mask) >>> 0, mask, cls };
});

function classifyV4(value: number): AddressClass {
  for (const rule of V4_TABLE) {
    if ((value & rule.mask) >>> 0 === rule.network) return rule.cls;
  }
  return 'public';
}

/** `embeddedV4Shift`: classify the IPv4 address found at this bit offset instead. */
type V6Action = AddressClass | { embeddedV4Shift: bigint };
type V6Rule = readonly [network: string, prefix: number, action: V6Action];

const EMBEDDED_V4_LOW = { embeddedV4Shift: 0n };

const V6_RULES: readonly V6Rule[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  // These forms carry an IPv4 address that the stack (or a NAT64/6to4 gateway) will actually
  // reach, so ::ffff:127.0.0.1 must be treated exactly like 127.0.0.1.
  ['::ffff:0:0', 96, EMBEDDED_V4_LOW], // IPv4-mapped
  ['::ffff:0:0:0', 96, EMBEDDED_V4_LOW], // IPv4-translated (SIIT)
  ['64:ff9b::', 96, EMBEDDED_V4_LOW], // NAT64 well-known prefix
  ['64:ff9b:1::', 48, 'private'], // NAT64 local-use
  ['2002::', 16, { embeddedV4Shift: 80n }], // 6to4
  ['100::', 64, 'reserved'], // discard-only
  ['2001:db8::', 32, 'reserved'], // documentation
  ['2001::', 23, 'reserved'], // IETF protocol assignments, incl. Teredo
  ['3fff::', 20, 'reserved'], // documentation (RFC 9637)
  ['fd00:ec2::254', 128, 'metadata'], // AWS IMDS over IPv6
  ['fc00::', 7, 'private'], // unique local
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'multicast'],
  ['2000::', 3, 'public'], // global unicast; everything else is unallocated or special
];

const ALL_ONES_128 = (1n << 128n) - 1n;

const V6_TABLE = V6_RULES.map(([network, prefix, action]) => {
  const mask = (ALL_ONES_128 << BigInt(128 - prefix)) & ALL_ONES_128;
  return { network: parseIPv6(network)! & mask, mask, action };
});

function classifyV6(value: bigint): AddressClass {
  for (const rule of V6_TABLE) {
    if ((value & rule.mask) !== rule.network) continue;
    if (typeof rule.action === 'string') return rule.action;
    return classifyV4(Number((value >> rule.action.embeddedV4Shift) & 0xffffffffn));
  }
  return 'reserved';
}

/**
 * Which kind of network an IP literal belongs to. Throws a TypeError for anything that is not an
 * IPv4 or IPv6 literal (IPv6 may be bracketed and may carry a zone id).
 */
export function classifyAddress(ip: string): AddressClass {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return classifyV4(v4);
  const v6 = parseIPv6(stripBrackets(ip));
  if (v6 !== null) return classifyV6(v6);
  throw new TypeError(`not an IP address: ${JSON.stringify(ip)}`);
}

const CLASS_DESCRIPTION: Record<AddressClass, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private address',
  link_local: 'a link-local address',
  metadata: 'a cloud metadata service address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

// ---------------------------------------------------------------------------------------------
// Allow list

function parseCidr(entry: string): Cidr | null {
  const slash = entry.lastIndexOf('/');
  const addr = entry.slice(0, slash);
  const prefixText = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  const v4 = parseIPv4(addr);
  if (v4 !== null) {
    if (prefix > 32) return null;
    const mask = ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - prefix)) - 1n);
    return { family: 4, network: BigInt(v4) & mask, prefix };
  }
  const v6 = parseIPv6(stripBrackets(addr));
  if (v6 !== null) {
    if (prefix > 128) return null;
    const mask = (ALL_ONES_128 << BigInt(128 - prefix)) & ALL_ONES_128;
    return { family: 6, network: v6 & mask, prefix };
  }
  return null;
}

function cidrContains(cidr: Cidr, ip: IpValue): boolean {
  if (cidr.family !== ip.family) return false;
  const bits = cidr.family === 4 ? 32 : 128;
  const shift = BigInt(bits - cidr.prefix);
  return BigInt(ip.value) >> shift === cidr.network >> shift;
}

const HOSTNAME_RE =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * Parses TARGET_ALLOWED_HOSTS: comma-separated hostnames (`billing.internal`), wildcard suffixes
 * (`*.svc.cluster.local`, subdomains only), IP literals (`10.0.0.5`, `::1`, `[::1]`) and CIDRs
 * (`10.0.0.0/8`, `fd00::/8`). Case-insensitive; blanks ignored.
 *
 * Throws on an entry it cannot understand (a port, a URL, a bad CIDR): a typo in a security
 * allow list should stop startup rather than silently block or allow the wrong thing.
 */
export function parseAllowedHosts(csv: string | undefined): AllowedHosts {
  const names = new Set<string>();
  const suffixes: string[] = [];
  const ips = new Set<string>();
  const cidrs: Cidr[] = [];
  for (const rawEntry of (csv ?? '').split(',')) {
    const entry = normalizeHostname(rawEntry);
    if (entry === '') continue;
    const invalid = (why: string) =>
      new Error(`${ALLOWED_HOSTS_ENV}: invalid entry ${JSON.stringify(rawEntry.trim())}: ${why}`);
    if (entry.includes('/')) {
      if (entry.includes('://')) throw invalid('give a hostname or IP, not a URL');
      const cidr = parseCidr(entry);
      if (!cidr) throw invalid('not a valid CIDR (expected e.g. 10.0.0.0/8 or fd00::/8)');
      cidrs.push(cidr);
      continue;
    }
    const ip = canonicalIp(entry);
    if (ip !== null) {
      ips.add(ip);
      continue;
    }
    if (entry.includes(':')) throw invalid('ports are not supported; list the host only');
    if (entry.startsWith('*.')) {
      const suffix = entry.slice(1);
      if (!HOSTNAME_RE.test(suffix.slice(1))) throw invalid('not a valid wildcard hostname');
      suffixes.push(suffix);
      continue;
    }
    if (!HOSTNAME_RE.test(entry)) throw invalid('not a valid hostname or IP address');
    names.add(entry);
  }
  return { names, suffixes, ips, cidrs };
}

function isNameAllowed(hostname: string, allowed: AllowedHosts): boolean {
  const host = normalizeHostname(hostname);
  return allowed.names.has(host) || allowed.suffixes.some((suffix) => host.endsWith(suffix));
}

// ---------------------------------------------------------------------------------------------
// Checks

function refusalHint(hostname: string, address: string): string {
  return normalizeHostname(hostname) === normalizeHostname(address)
    ? `list it in ${ALLOWED_HOSTS_ENV} to allow it`
    : `list the host or the address in ${ALLOWED_HOSTS_ENV} to allow it`;
}

/**
 * Decides whether a connection to `address` (what `hostname` resolved to, or the IP literal
 * itself) may be made.
 *
 * Public addresses always pass. Others pass if the hostname is allowed by name/wildcard, or the
 * address is allowed by exact IP or CIDR — except cloud metadata addresses, which only an exact
 * IP entry unlocks: they hand out cloud credentials, and allowing `169.254.0.0/16` or an
 * internal hostname should not silently include them.
 */
export function checkResolvedAddress(
  hostname: string,
  address: string,
  allowed: AllowedHosts,
): AddressCheck {
  const ip = parseIp(address);
  if (ip === null) {
    return {
      ok: false,
      classification: 'invalid',
      reason: `target host ${hostname} resolved to ${JSON.stringify(address)}, which is not an IP address`,
    };
  }
  const classification = ip.family === 4 ? classifyV4(ip.value) : classifyV6(ip.value);
  if (classification === 'public') return { ok: true, classification };
  const exactIp = allowed.ips.has(formatIp(ip));
  if (classification === 'metadata') {
    if (exactIp) return { ok: true, classification };
  } else if (
    exactIp ||
    allowed.cidrs.some((cidr) => cidrContains(cidr, ip)) ||
    isNameAllowed(hostname, allowed)
  ) {
    return { ok: true, classification };
  }
  const host = normalizeHostname(hostname);
  const shown = stripBrackets(address);
  const subject =
    host === normalizeHostname(address)
      ? `target host ${shown} is`
      : `target host ${host} resolved to ${shown},`;
  return {
    ok: false,
    classification,
    reason: `${subject} ${CLASS_DESCRIPTION[classification]}; ${refusalHint(hostname, address)}`,
  };
}

// RFC 6761/6762/8375 and common intranet suffixes: names that only mean something inside a
// private network, so a tenant has no business pointing a job at them.
const INTERNAL_SUFFIXES: readonly [suffix: string, description: string][] = [
  ['localhost', 'a loopback name'],
  ['internal', 'an internal name'],
  ['local', 'a link-local (mDNS) name'],
  ['localdomain', 'a private-network name'],
  ['home.arpa', 'a private-network name'],
  ['lan', 'a private-network name'],
  ['intranet', 'a private-network name'],
  ['corp', 'a private-network name'],
  ['home', 'a private-network name'],
  ['private', 'a private-network name'],
];

const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'metadata.goog']);

function internalNameDescription(host: string): string | null {
  if (METADATA_NAMES.has(host)) return 'a cloud metadata service name';
  for (const [suffix, description] of INTERNAL_SUFFIXES) {
    if (host === suffix || host.endsWith(`.${suffix}`)) return description;
  }
  // A dotless name is completed with the resolver's search domains (Kubernetes services,
  // corporate DNS), so it never names a public endpoint.
  if (!host.includes('.')) return 'a single-label name that resolves via local search domains';
  return null;
}

/**
 * Syntactic check of a target URL, without DNS. Used when a target is registered (reasons are
 * written for a 400/422 problem detail) and again before every call.
 */
export function checkTargetUrl(url: string, allowed: AllowedHosts): UrlCheck {
  const invalid = (reason: string): UrlCheck => ({ ok: false, code: 'invalid_url', reason });
  if (typeof url !== 'string' || url.trim() === '') return invalid('target URL is required');
  if (url.length > MAX_TARGET_URL_LENGTH) {
    return invalid(`target URL is longer than ${MAX_TARGET_URL_LENGTH} characters`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return invalid('target URL is not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return invalid(
      `target URL scheme ${parsed.protocol.slice(0, -1)} is not allowed; use http or https`,
    );
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return invalid(
      'target URL must not contain credentials (user:password@); send them as a registration header instead',
    );
  }
  if (parsed.hostname === '') return invalid('target URL has no host');

  // The URL parser has already normalised IPv4 spellings such as 0x7f.1 or 2130706433 to
  // dotted form, so every IP literal is caught here.
  const host = normalizeHostname(parsed.hostname);
  if (isIP(host) !== 0) {
    const check = checkResolvedAddress(host, host, allowed);
    return check.ok
      ? { ok: true, url: parsed }
      : { ok: false, code: 'address_refused', reason: check.reason };
  }
  const description = internalNameDescription(host);
  if (description !== null && !isNameAllowed(host, allowed)) {
    return {
      ok: false,
      code: 'address_refused',
      reason: `target host ${host} is ${description}; list it in ${ALLOWED_HOSTS_ENV} to allow it`,
    };
  }
  return { ok: true, url: parsed };
}
