/**
 * Rules for the static headers a tenant registers with a target. They are sent on every call
 * and shown back on every read, so they are configuration, not secrets.
 */
export const MAX_TARGET_HEADERS = 20;
export const MAX_HEADER_NAME_LENGTH = 256;
export const MAX_HEADER_VALUE_LENGTH = 1024;

// RFC 9110 token characters.
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Visible ASCII and space: Node refuses most other bytes when sending, and a value that cannot
// be sent must be refused now rather than fail every attempt later.
const VALUE_RE = /^[\x20-\x7e]*$/;

const FRAMING =
  'describes the connection or the body framing, which dueline sets itself; it cannot be registered';
const CREDENTIAL =
  'carries a credential, and registered headers are stored and shown as plain configuration; ' +
  'set auth (write-only) or signingSecret and verify webhook-signature instead';

/**
 * Hop-by-hop and framing headers would let a registration smuggle requests or break the framing
 * the invoker computes; the body headers are fixed because we always send JSON; Idempotency-Key
 * is the run id. Refusing them here (the invoker silently drops them) tells the tenant now.
 */
const RESERVED: ReadonlyMap<string, string> = new Map([
  ['host', FRAMING],
  ['content-length', FRAMING],
  ['transfer-encoding', FRAMING],
  ['connection', FRAMING],
  ['keep-alive', FRAMING],
  ['proxy-connection', FRAMING],
  ['te', FRAMING],
  ['trailer', FRAMING],
  ['upgrade', FRAMING],
  ['expect', FRAMING],
  ['content-type', 'is always application/json; it cannot be registered'],
  ['content-encoding', 'is set by dueline; it cannot be registered'],
  ['accept-encoding', 'is set by dueline; it cannot be registered'],
  ['idempotency-key', 'is set by dueline to the run id on every attempt; it cannot be registered'],
  ['authorization', CREDENTIAL],
  ['proxy-authorization', CREDENTIAL],
  ['proxy-authenticate', FRAMING],
  ['cookie', CREDENTIAL],
  ['traceparent', "is set by dueline to the run's trace; it cannot be registered"],
  ['tracestate', "is set by dueline to the run's trace; it cannot be registered"],
]);

/** Why `name` may not be registered, or null when it may. Case-insensitive, like HTTP. */
export function reservedHeaderReason(name: string): string | null {
  const lower = name.toLowerCase();
  // A receiver trusts X-Dueline-* to come from us (run id, attempt, fencing token, signature).
  if (lower.startsWith('x-dueline-') || lower.startsWith('webhook-')) {
    return 'is reserved for headers that dueline sets';
  }
  return RESERVED.get(lower) ?? null;
}

/**
 * Every problem with a headers object, as messages that name the header; empty when valid.
 * Takes `unknown` because it also guards values that bypassed the DTO.
 */
export function targetHeaderProblems(headers: unknown): string[] {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return ['headers must be an object of header name to string value'];
  }
  const entries = Object.entries(headers);
  const problems: string[] = [];
  if (entries.length > MAX_TARGET_HEADERS) {
    problems.push(`headers may hold at most ${MAX_TARGET_HEADERS} entries`);
  }
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const shown = JSON.stringify(name.slice(0, 64));
    if (name.length === 0 || name.length > MAX_HEADER_NAME_LENGTH || !TOKEN_RE.test(name)) {
      problems.push(
        `header name ${shown} is not a valid HTTP token of at most ${MAX_HEADER_NAME_LENGTH} characters`,
      );
      continue;
    }
    const reserved = reservedHeaderReason(name);
    if (reserved) problems.push(`header ${name} ${reserved}`);
    const lower = name.toLowerCase();
    if (seen.has(lower))
      problems.push(`header ${name} is given more than once (names ignore case)`);
    seen.add(lower);
    if (typeof value !== 'string') {
      problems.push(`header ${name} must have a string value`);
    } else if (value.length > MAX_HEADER_VALUE_LENGTH) {
      problems.push(`header ${name} must be at most ${MAX_HEADER_VALUE_LENGTH} characters`);
    } else if (!VALUE_RE.test(value)) {
      problems.push(
        `header ${name} must contain only printable ASCII characters (no control characters)`,
      );
    }
  }
  return problems;
}
