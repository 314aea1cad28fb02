/** One server of a formation, as the URL names it. */
export interface HostPort {
  host: string;
  port: number;
}

/**
 * A parsed `DATABASE_URL`: the libpq URI form, which may name several hosts
 * (`postgres://user:secret@h1:5432,h2:5432/db?target_session_attrs=read-write`). Everything but
 * the host list is shared by every host, so `urlFor(host)` is a single-host URL that `pg`
 * understands (sslmode and the other query parameters included).
 */
export interface DatabaseAddress {
  hosts: readonly HostPort[];
  /** `postgres://user:secret@` (or `postgres://` without credentials). */
  readonly prefix: string;
  /** `/db?param=value…` without `target_session_attrs` (pg does not know it). */
  readonly suffix: string;
}

export class InvalidDatabaseUrlError extends Error {}

/**
 * dueline writes on every role, so it only ever wants a read-write session: `any` (libpq's
 * default), `read-write` and `primary` all mean "the writable server" here; asking for a
 * standby is a configuration mistake, refused at boot.
 */
const ACCEPTED_SESSION_ATTRS = new Set(['any', 'read-write', 'primary']);
const DEFAULT_PORT = 5432;

export function parseDatabaseUrl(url: string): DatabaseAddress {
  const scheme = /^(postgres(?:ql)?:\/\/)/.exec(url);
  if (!scheme) throw new InvalidDatabaseUrlError('must be a postgres:// or postgresql:// URL');
  const rest = url.slice(scheme[1].length);
  const end = rest.search(/[/?]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  const tail = end === -1 ? '' : rest.slice(end);
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hostList = at === -1 ? authority : authority.slice(at + 1);
  const [path, query = ''] = splitOnce(tail, '?');
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs') ?? 'any';
  if (!ACCEPTED_SESSION_ATTRS.has(attrs)) {
    throw new InvalidDatabaseUrlError(
      `target_session_attrs=${attrs} is not possible: dueline writes, so it needs read-write (or primary, any)`,
    );
  }
  params.delete('target_session_attrs');
  const defaultPort = params.has('port') ? Number(params.get('port')) : DEFAULT_PORT;
  params.delete('port');
  const hosts = hostList.split(',').map((entry) => parseHost(entry, defaultPort));
  if (hosts.length === 0 || hosts.some((h) => h.host === '')) {
    throw new InvalidDatabaseUrlError('must name at least one host');
  }
  const remaining = params.toString();
  return {
    hosts,
    prefix: `${scheme[1]}${userinfo}`,
    suffix: `${path}${remaining ? `?${remaining}` : ''}`,
  };
}

/** A single-host URL for one server of the address (what `pg` and TypeORM understand). */
/** libpq's rule: a host that starts with "/" is the directory of the server's Unix socket. */
export function isSocketDirectory(host: HostPort): boolean {
  return host.host.startsWith('/');
}

export function urlFor(address: DatabaseAddress, host: HostPort): string {
  // A socket directory goes back percent-encoded, as it came.
  const name = isSocketDirectory(host)
    ? encodeURIComponent(host.host)
    : host.host.includes(':')
      ? `[${host.host}]`
      : host.host;
  return `${address.prefix}${name}:${host.port}${address.suffix}`;
}

export function describeHost(host: HostPort): string {
  return `${host.host}:${host.port}`;
}

function parseHost(entry: string, defaultPort: number): HostPort {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1], port: port(bracketed[2], defaultPort) };
  const [host, rawPort] = splitOnce(entry, ':');
  return { host: decodeURIComponent(host), port: port(rawPort, defaultPort) };
}

function port(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > 65535) {
    throw new InvalidDatabaseUrlError(`has an invalid port "${raw}"`);
  }
  return value;
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const index = text.indexOf(separator);
  return index === -1 ? [text, undefined] : [text.slice(0, index), text.slice(index + 1)];
}
