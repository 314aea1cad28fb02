import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { TLSSocket, rootCertificates } from 'node:tls';
import { type AllowedHosts, checkResolvedAddress, checkTargetUrl } from './address-policy';
import { DEFAULT_RESPONSE_HEADERS, keptHeaders, redact } from './response-record';
import {
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  webhookSignatureValue,
} from './standard-webhooks';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signatureHeaderValue } from './target-signature';

export interface TargetRequest {
  url: string;
  method: string;
  /** Non-secret headers from the target registration. Cannot override the headers we set. */
  headers?: Readonly<Record<string, string>> | null;
  timeoutMs: number;
  /** Serialised with JSON.stringify and sent for every method. */
  body: object;
  /**
   * The target's active signing secrets, newest first (two while a rotation overlaps): each
   * signs the call, in the Standard Webhooks headers and in X-Dueline-Signature.
   */
  signingSecrets?: readonly string[] | null;
  /** Sent as Idempotency-Key; callers pass the run id so every attempt of a run shares it. */
  idempotencyKey: string;
  /**
   * A run's call: its X-Dueline-Run-Id, attempt, fencing token and instant headers, and its id as
   * webhook-id. Absent for an event delivery, which gives `webhookId` instead.
   */
  runId?: string;
  attempt?: number;
  fencingToken?: number | string;
  scheduledAt?: string;
  /** The Standard Webhooks message id when the call is not a run's (an event's id). */
  webhookId?: string;
  /**
   * Credential headers (Authorization…) for this call. They override anything registered, and
   * their values are scrubbed from what is kept of the answer.
   */
  credentials?: Readonly<Record<string, string>> | null;
  /** Extra headers of ours for this call (traceparent). */
  extraHeaders?: Readonly<Record<string, string>> | null;
}

export type NotSentCode =
  | 'address_refused'
  | 'dns_failed'
  | 'connect_refused'
  | 'connect_timeout'
  | 'tls_failed'
  | 'aborted_before_send'
  | 'invalid_url'
  /** The request could not be built (unserialisable body, illegal header or method). */
  | 'invalid_request';

export type MaybeSentCode = 'timeout' | 'reset' | 'aborted' | 'protocol_error';

export type TargetResponse =
  | {
      kind: 'response';
      status: number;
      retryAfterMs: number | null;
      durationMs: number;
      /** At most `maxBodySnippetBytes` of the body, UTF-8 decoded, for diagnostics. */
      bodySnippet: string;
      /** True when the snippet is not the whole body (too long, or the read was cut short). */
      bodyTruncated: boolean;
      /** The allow-listed response headers (lower-case names), credentials scrubbed. */
      headers: Record<string, string>;
    }
  /** Failed before the connection was established: no byte of the request reached the target. */
  | { kind: 'not_sent'; error: string; code: NotSentCode; durationMs: number }
  /** Failed after the connection was established: the target may have received and acted. */
  | { kind: 'maybe_sent'; error: string; code: MaybeSentCode; durationMs: number };

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type ResolveHost = (
  hostname: string,
  options: { family?: number; hints?: number },
) => Promise<readonly ResolvedAddress[]>;

export interface InvokeOptions {
  allowed: AllowedHosts;
  /** Aborts the call, e.g. when the worker loses its lease or the run is cancelled. */
  signal?: AbortSignal;
  /** Wall clock in epoch ms, for the signature timestamp and Retry-After dates. */
  now?: () => number;
  /** DNS resolution; replaceable for tests. Defaults to the OS resolver (dns.lookup). */
  resolveHost?: ResolveHost;
  maxBodySnippetBytes?: number;
  /** Response headers kept (lower-case names); `location` always is. */
  keptResponseHeaders?: readonly string[];
  maxRetryAfterMs?: number;
  userAgent?: string;
  /**
   * Extra CA certificates (PEM) to trust for https targets, e.g. allow-listed internal services
   * behind a private CA. Added to Node's bundled roots, not substituted for them.
   */
  extraCaCerts?: readonly (string | Buffer)[];
  /**
   * Connection pools to reuse connections from (see TargetConnections). Pass them only for a
   * target that deduplicates by Idempotency-Key: a pooled connection the target closes just as
   * the request is written fails as "maybe sent", which such a target's retry makes harmless.
   * Without them every call opens a connection of its own.
   */
  pools?: { http: http.Agent; https: https.Agent };
}

export const DEFAULT_BODY_SNIPPET_BYTES = 4096;
export const DEFAULT_MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_USER_AGENT = 'dueline';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const RUN_ID_HEADER = 'X-Dueline-Run-Id';
export const ATTEMPT_HEADER = 'X-Dueline-Attempt';
export const FENCING_TOKEN_HEADER = 'X-Dueline-Fencing-Token';
export const SCHEDULED_AT_HEADER = 'X-Dueline-Scheduled-At';

// Hop-by-hop and framing headers describe our connection, not the tenant's request; letting a
// registration set them would allow request smuggling or break the framing we compute.
const DROPPED_USER_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  'expect',
  // We send plain JSON and keep a raw snippet of the reply; neither may be renegotiated.
  'content-type',
  'content-encoding',
  'accept-encoding',
  IDEMPOTENCY_KEY_HEADER.toLowerCase(),
]);

function isReservedUserHeader(name: string): boolean {
  const lower = name.toLowerCase();
  // Everything under X-Dueline- and webhook- is ours, so a receiver can trust those values came
  // from us; the credential and trace headers are ours to set too.
  return (
    DROPPED_USER_HEADERS.has(lower) ||
    lower.startsWith('x-dueline-') ||
    lower.startsWith('webhook-')
  );
}

/** The exact headers sent for `request` with the serialised `body`. */
export function buildRequestHeaders(
  request: TargetRequest,
  body: string,
  nowMs: number,
  userAgent: string = DEFAULT_USER_AGENT,
): Record<string, string> {
  const headers: Record<string, string> = {};
  let hasUserAgent = false;
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (isReservedUserHeader(name)) continue;
    if (name.toLowerCase() === 'user-agent') hasUserAgent = true;
    headers[name] = String(value);
  }
  if (!hasUserAgent) headers['User-Agent'] = userAgent;
  headers['Content-Type'] = 'application/json';
  headers['Content-Length'] = String(Buffer.byteLength(body, 'utf8'));
  headers['Accept-Encoding'] = 'identity';
  headers[IDEMPOTENCY_KEY_HEADER] = request.idempotencyKey;
  if (request.runId !== undefined) {
    headers[RUN_ID_HEADER] = request.runId;
    headers[ATTEMPT_HEADER] = String(request.attempt);
    headers[FENCING_TOKEN_HEADER] = String(request.fencingToken);
    headers[SCHEDULED_AT_HEADER] = String(request.scheduledAt);
  }
  for (const [name, value] of Object.entries(request.extraHeaders ?? {})) headers[name] = value;
  for (const [name, value] of Object.entries(request.credentials ?? {})) {
    for (const existing of Object.keys(headers)) {
      if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
    }
    headers[name] = value;
  }
  const timestamp = String(Math.floor(nowMs / 1000));
  // webhook-id is the run id (or the event id): stable across attempts, so a receiver
  // deduplicates retries on it.
  const webhookId = request.webhookId ?? request.runId;
  if (webhookId === undefined) throw new Error('a target request needs a runId or a webhookId');
  headers[WEBHOOK_ID_HEADER] = webhookId;
  headers[WEBHOOK_TIMESTAMP_HEADER] = timestamp;
  const secrets = request.signingSecrets ?? [];
  if (secrets.length > 0) {
    headers[WEBHOOK_SIGNATURE_HEADER] = webhookSignatureValue(secrets, webhookId, timestamp, body);
    headers[TIMESTAMP_HEADER] = timestamp;
    headers[SIGNATURE_HEADER] = secrets
      .map((secret) => signatureHeaderValue(secret, timestamp, body))
      .join(',');
  }
  return headers;
}

/**
 * Retry-After as milliseconds from `nowMs`: delta-seconds or an HTTP-date (past dates give 0),
 * capped at `maxMs` so a hostile value cannot park a run indefinitely. Null when absent or
 * unparseable.
 */
export function parseRetryAfter(
  value: string | undefined,
  nowMs: number,
  maxMs: number = DEFAULT_MAX_RETRY_AFTER_MS,
): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, maxMs);
  // HTTP-date forms all start with a day name; requiring it keeps Date.parse's leniency
  // ("1.5" parses as a year) from turning garbage into a date.
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  // asctime-date carries no zone but is defined as GMT; Date.parse would read it as local time.
  const asctime = /^[A-Za-z]{3} [A-Za-z]{3} /.test(text);
  const at = Date.parse(asctime ? `${text} GMT` : text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), maxMs);
}

/**
 * What of a credential header must never be kept: the whole value and, for `Bearer x` or
 * `Basic x`, the token alone (a target may echo either), with basic's user:password decoded.
 */
function credentialParts(value: string): string[] {
  const parts = [value];
  const match = /^(\S+)\s+(\S+)$/.exec(value.trim());
  if (match) {
    parts.push(match[2]);
    if (match[1].toLowerCase() === 'basic') {
      const decoded = Buffer.from(match[2], 'base64').toString('utf8');
      parts.push(decoded, ...decoded.split(':').slice(1).filter(Boolean));
    }
  }
  return parts;
}

const defaultResolveHost: ResolveHost = (hostname, options) =>
  dns.promises.lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints });

export class AddressRefusedError extends Error {
  readonly code = 'EDUELINE_ADDRESS_REFUSED';
}

/**
 * A socket lookup that checks every address against the address policy. It runs inside the
 * socket's connect: whatever it hands back is exactly what gets dialled, so checking here (not
 * in a separate, earlier lookup) defeats DNS rebinding, on every new connection.
 */
export function checkedLookup(
  allowed: AllowedHosts,
  resolveHost: ResolveHost = defaultResolveHost,
  onResolved: () => void = () => undefined,
): LookupFunction {
  return (host, lookupOptions, callback) => {
    resolveHost(host, {
      family: lookupOptions.family as number | undefined,
      hints: lookupOptions.hints,
    }).then(
      (addresses) => {
        let failure: Error | null = null;
        if (addresses.length === 0) {
          failure = Object.assign(new Error(`no addresses found for ${host}`), {
            code: 'ENOTFOUND',
          });
        }
        // One refused address refuses the whole answer: a mixed public/private answer is
        // itself a rebinding signature, and the error is clearer than silently dropping it.
        for (const { address } of addresses) {
          const check = checkResolvedAddress(host, address, allowed);
          if (!check.ok) {
            failure = new AddressRefusedError(check.reason);
            break;
          }
        }
        // Deferred so an exception thrown by Node's callback is not swallowed by this promise.
        process.nextTick(() => {
          if (failure) return callback(failure, '', 0);
          onResolved();
          if (lookupOptions.all) {
            callback(
              null,
              addresses.map(({ address, family }) => ({ address, family })),
            );
          } else {
            callback(null, addresses[0].address, addresses[0].family);
          }
        });
      },
      (err: unknown) => {
        process.nextTick(() =>
          callback(asErrorLike(err) ? (err as Error) : new Error(String(err)), '', 0),
        );
      },
    );
  };
}

// Duck-typed rather than `instanceof Error`: errors raised inside Node come from another realm
// under Jest's VM sandbox and would fail that check.
function asErrorLike(err: unknown): { message: string; code?: unknown } | null {
  return typeof err === 'object' && err !== null && typeof (err as Error).message === 'string'
    ? (err as { message: string; code?: unknown })
    : null;
}

function errorText(err: unknown): string {
  const e = asErrorLike(err);
  if (!e) return String(err);
  const code = typeof e.code === 'string' ? e.code : undefined;
  return code && !e.message.includes(code) ? `${e.message} (${code})` : e.message;
}

function errorCode(err: unknown): string | undefined {
  const code = asErrorLike(err)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Where the exchange is. Only once the connection is up (TCP, plus the TLS handshake for https)
 * can a byte of the request reach the target: before that Node merely buffers the request.
 */
type Phase = 'resolving' | 'connecting' | 'handshaking' | 'sent' | 'responded';

/**
 * Calls a target once and reports what happened, including whether the request may have reached
 * the target. Never rejects.
 *
 * A call opens a connection of its own unless `pools` are given (targets that deduplicate): a
 * pooled connection's address was checked when it was opened, but one the target closes just as
 * the request goes out can only be reported as "maybe sent", which only a deduplicating target
 * can retry without risk.
 */
export function invokeTarget(
  request: TargetRequest,
  options: InvokeOptions,
): Promise<TargetResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const now = options.now ?? Date.now;
  const { signal, allowed } = options;
  const resolveHost = options.resolveHost ?? defaultResolveHost;
  const snippetLimit = Math.max(0, options.maxBodySnippetBytes ?? DEFAULT_BODY_SNIPPET_BYTES);

  const notSent = (code: NotSentCode, error: string): TargetResponse => ({
    kind: 'not_sent',
    code,
    error,
    durationMs: elapsed(),
  });
  const maybeSent = (code: MaybeSentCode, error: string): TargetResponse => ({
    kind: 'maybe_sent',
    code,
    error,
    durationMs: elapsed(),
  });
  const abortText = () =>
    `aborted by caller${signal?.reason !== undefined ? `: ${errorText(signal.reason)}` : ''}`;

  if (signal?.aborted) return Promise.resolve(notSent('aborted_before_send', abortText()));

  // Re-checked at call time: the allow list may have changed since registration, and this also
  // covers IP-literal hosts, for which Node skips the lookup hook below.
  const urlCheck = checkTargetUrl(request.url, allowed);
  if (!urlCheck.ok) return Promise.resolve(notSent(urlCheck.code, urlCheck.reason));
  const url = urlCheck.url;
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');

  if (!Number.isFinite(request.timeoutMs) || request.timeoutMs <= 0) {
    return Promise.resolve(notSent('invalid_request', `timeoutMs must be a positive number`));
  }
  let body: string | undefined;
  try {
    body = JSON.stringify(request.body);
  } catch (err) {
    return Promise.resolve(
      notSent('invalid_request', `body is not serialisable as JSON: ${errorText(err)}`),
    );
  }
  if (body === undefined) {
    return Promise.resolve(notSent('invalid_request', 'body is not serialisable as JSON'));
  }
  const requestBody = body;

  return new Promise<TargetResponse>((resolve) => {
    let phase: Phase = isIP(hostname) ? 'connecting' : 'resolving';
    let settled = false;
    let req: http.ClientRequest | undefined;
    let finishResponse: ((truncated: boolean) => void) | undefined;
    const target = `${hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;

    const settle = (result: TargetResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(result);
      // A complete response leaves a pooled connection to the pool; anything else (an error, a
      // body we stopped reading) must not be reused, and stops reading what we no longer want.
      if (!(options.pools && result.kind === 'response' && !result.bodyTruncated)) req?.destroy();
    };

    const onTimeout = () => {
      if (phase === 'responded') return finishResponse?.(true);
      if (phase === 'sent') {
        return settle(
          maybeSent('timeout', `no response from ${target} within ${request.timeoutMs} ms`),
        );
      }
      settle(
        notSent(
          'connect_timeout',
          `could not ${phase === 'resolving' ? 'resolve' : 'connect to'} ${target} within ${request.timeoutMs} ms`,
        ),
      );
    };

    function onAbort() {
      if (phase === 'responded') return finishResponse?.(true);
      settle(
        phase === 'sent'
          ? maybeSent('aborted', abortText())
          : notSent('aborted_before_send', abortText()),
      );
    }

    const onError = (err: Error) => {
      if (settled) return;
      if (phase === 'responded') return finishResponse?.(true);
      const code = errorCode(err);
      const text = errorText(err);
      if (err instanceof AddressRefusedError) {
        return settle(notSent('address_refused', err.message));
      }
      switch (phase) {
        case 'resolving':
          return settle(notSent('dns_failed', `DNS lookup for ${hostname} failed: ${text}`));
        case 'connecting':
          return settle(
            code === 'ETIMEDOUT'
              ? notSent('connect_timeout', `connecting to ${target} timed out: ${text}`)
              : notSent('connect_refused', `could not connect to ${target}: ${text}`),
          );
        case 'handshaking':
          return settle(notSent('tls_failed', `TLS handshake with ${target} failed: ${text}`));
        case 'sent':
          if (code?.startsWith('HPE_')) {
            return settle(
              maybeSent('protocol_error', `invalid HTTP response from ${target}: ${text}`),
            );
          }
          if (code === 'ETIMEDOUT') {
            return settle(maybeSent('timeout', `connection to ${target} timed out: ${text}`));
          }
          return settle(
            maybeSent(
              'reset',
              `connection to ${target} failed after the request was sent: ${text}`,
            ),
          );
      }
    };

    const lookup = checkedLookup(allowed, resolveHost, () => {
      if (phase === 'resolving') phase = 'connecting';
    });

    // setTimeout fires immediately for delays beyond 2^31-1 ms, so clamp to ~24.8 days.
    const timer = setTimeout(onTimeout, Math.min(request.timeoutMs, 2 ** 31 - 1));
    signal?.addEventListener('abort', onAbort, { once: true });

    try {
      const requestOptions: https.RequestOptions = {
        protocol: url.protocol,
        hostname,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: request.method.toUpperCase(),
        headers: buildRequestHeaders(request, requestBody, now(), options.userAgent),
        agent: options.pools
          ? url.protocol === 'https:'
            ? options.pools.https
            : options.pools.http
          : false,
        lookup,
        ...(options.extraCaCerts?.length
          ? { ca: [...rootCertificates, ...options.extraCaCerts] }
          : {}),
      };
      req = (url.protocol === 'https:' ? https : http).request(requestOptions);
    } catch (err) {
      // Node validates the method and header values synchronously.
      return settle(notSent('invalid_request', `request could not be built: ${errorText(err)}`));
    }

    req.on('error', onError);
    req.on('socket', (socket: Socket) => {
      // A pooled connection is up (and past its handshake): what is written may be read.
      if (req?.reusedSocket) {
        if (phase !== 'responded') phase = 'sent';
        return;
      }
      const tls = socket instanceof TLSSocket;
      const onConnect = () => {
        if (phase === 'resolving' || phase === 'connecting') phase = tls ? 'handshaking' : 'sent';
      };
      if (socket.connecting) socket.once('connect', onConnect);
      else if (!socket.destroyed) onConnect();
      if (tls) {
        socket.once('secureConnect', () => {
          if (phase !== 'responded') phase = 'sent';
        });
      }
    });

    req.on('response', (res: http.IncomingMessage) => {
      phase = 'responded';
      const status = res.statusCode ?? 0;
      const retryAfterHeader = res.headers['retry-after'];
      const retryAfterMs = parseRetryAfter(
        Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader,
        now(),
        options.maxRetryAfterMs,
      );
      const chunks: Buffer[] = [];
      let size = 0;
      const secrets = Object.values(request.credentials ?? {}).flatMap(credentialParts);
      finishResponse = (truncated) =>
        settle({
          kind: 'response',
          status,
          retryAfterMs,
          durationMs: elapsed(),
          // StringDecoder.write holds back a multi-byte character cut in half by the limit.
          bodySnippet: redact(new StringDecoder('utf8').write(Buffer.concat(chunks)), secrets),
          bodyTruncated: truncated,
          headers: keptHeaders(
            res.headers,
            options.keptResponseHeaders ?? DEFAULT_RESPONSE_HEADERS,
            secrets,
          ),
        });
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        const room = snippetLimit - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size = snippetLimit;
          return finishResponse?.(true);
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => finishResponse?.(false));
      res.on('error', () => finishResponse?.(true));
      res.on('close', () => finishResponse?.(!res.complete));
    });

    req.end(requestBody);
  });
}
