/**
 * What is kept of a target's answer on its attempt: the status, the headers of an allow-list,
 * and the start of the body. The credentials a call carried are scrubbed from all of it, so a
 * target that echoes its request (many do) cannot make us store a token.
 */

/** Kept unless the operator lists others (ATTEMPT_RESPONSE_HEADERS). */
export const DEFAULT_RESPONSE_HEADERS: readonly string[] = [
  'content-type',
  'content-length',
  'location',
  'retry-after',
  'date',
  'server',
  'x-request-id',
  'request-id',
  'traceparent',
];

/** Never kept, whatever the allow-list says: they carry credentials or session state. */
export const NEVER_KEPT_HEADERS: ReadonlySet<string> = new Set([
  'set-cookie',
  'set-cookie2',
  'authorization',
  'proxy-authorization',
  'cookie',
]);

const MAX_HEADER_VALUE = 512;
const REDACTED = '[redacted]';

/** `location` is always kept: a redirect is reported with where it pointed. */
export function keptHeaders(
  raw: Readonly<Record<string, string | string[] | undefined>>,
  allowList: readonly string[],
  secrets: readonly string[],
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of new Set([...allowList, 'location'])) {
    if (NEVER_KEPT_HEADERS.has(name)) continue;
    const value = raw[name];
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    kept[name] = redact(text, secrets).slice(0, MAX_HEADER_VALUE);
  }
  return kept;
}

/**
 * `text` with every occurrence of a secret replaced. NUL characters go too: Postgres text
 * cannot hold them.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text.split(String.fromCharCode(0)).join('');
  for (const secret of secrets) {
    // Short values would match by chance and say little; credentials are never this short.
    if (secret.length < 8) continue;
    out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Why an allow-list entry cannot be used, or null. */
export function responseHeaderProblem(name: string): string | null {
  if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(name)) return `"${name}" is not a header name`;
  if (NEVER_KEPT_HEADERS.has(name)) return `${name} carries credentials and is never kept`;
  return null;
}
