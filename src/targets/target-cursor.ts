/**
 * List cursors are opaque to clients: base64url of "<createdAt>|<id>". createdAt is Postgres'
 * own microsecond text (a JS Date would round to milliseconds, and a keyset position that is off
 * by a few microseconds skips or repeats rows).
 */
export interface TargetCursor {
  /** UTC, microsecond precision: 2027-01-01T09:00:00.123456Z. */
  createdAt: string;
  id: string;
}

const ENCODED_RE = /^[A-Za-z0-9_-]{1,200}$/;
const DECODED_RE =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function encodeTargetCursor(cursor: TargetCursor): string {
  return Buffer.from(`${cursor.createdAt}|${cursor.id}`, 'utf8').toString('base64url');
}

/** Null for anything this module did not produce (Buffer's base64 decoder is lenient). */
export function decodeTargetCursor(encoded: string): TargetCursor | null {
  if (!ENCODED_RE.test(encoded)) return null;
  const match = DECODED_RE.exec(Buffer.from(encoded, 'base64url').toString('utf8'));
  if (!match) return null;
  // Refuses dates that only look valid (Feb 30), which Postgres would answer with an error.
  const ms = Date.parse(match[1]);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== match[1].slice(0, 19)) {
    return null;
  }
  return { createdAt: match[1], id: match[2] };
}
