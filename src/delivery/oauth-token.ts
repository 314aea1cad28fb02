import * as http from 'node:http';
import * as https from 'node:https';
import type { AllowedHosts } from './address-policy';
import { checkTargetUrl } from './address-policy';
import { redact } from './response-record';
import { checkedLookup, type ResolveHost } from './target-invoker';

export interface ClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  audience?: string;
}

export interface AccessToken {
  accessToken: string;
  /** Null when the endpoint did not say (the cache then keeps it a minute). */
  expiresInSeconds: number | null;
}

/** A token endpoint's refusal or failure, in words that never carry a credential. */
export class TokenRequestError extends Error {}

const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * The OAuth 2.0 client credentials grant (RFC 6749 §4.4): client_secret_basic, with scope and
 * audience in the form when given. The endpoint is held to the same address policy as targets,
 * on every connection.
 */
export function requestClientCredentialsToken(
  credentials: ClientCredentials,
  options: {
    allowed: AllowedHosts;
    timeoutMs: number;
    signal?: AbortSignal;
    resolveHost?: ResolveHost;
  },
): Promise<AccessToken> {
  const check = checkTargetUrl(credentials.tokenUrl, options.allowed);
  if (!check.ok)
    return Promise.reject(new TokenRequestError(`token endpoint refused: ${check.reason}`));
  const url = check.url;
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (credentials.scope) form.set('scope', credentials.scope);
  if (credentials.audience) form.set('audience', credentials.audience);
  const body = form.toString();
  const basic = Buffer.from(
    `${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`,
  ).toString('base64');
  const secrets = [credentials.clientSecret, basic];
  const where = `token endpoint ${url.origin}${url.pathname}`;

  return new Promise<AccessToken>((resolve, reject) => {
    const fail = (message: string) => {
      clearTimeout(timer);
      req.destroy();
      reject(new TokenRequestError(redact(message, secrets)));
    };
    const req = (url.protocol === 'https:' ? https : http).request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      agent: false,
      lookup: checkedLookup(options.allowed, options.resolveHost),
      signal: options.signal,
      headers: {
        Authorization: `Basic ${basic}`,
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'application/json',
        'Content-Length': String(Buffer.byteLength(body)),
      },
    });
    const timer = setTimeout(
      () => fail(`${where} did not answer within ${options.timeoutMs} ms`),
      options.timeoutMs,
    );
    req.on('error', (err) => fail(`${where} failed: ${err.message}`));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_TOKEN_RESPONSE_BYTES) return fail(`${where} answered more than 64 KiB`);
        chunks.push(chunk);
      });
      res.on('error', (err) => fail(`${where} failed: ${err.message}`));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: { access_token?: unknown; expires_in?: unknown; error?: unknown } = {};
        try {
          parsed = JSON.parse(text) as typeof parsed;
        } catch {
          // reported below
        }
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299 || typeof parsed.access_token !== 'string') {
          const error = typeof parsed.error === 'string' ? `: ${parsed.error.slice(0, 100)}` : '';
          return reject(
            new TokenRequestError(
              redact(`${where} answered ${status} without an access token${error}`, secrets),
            ),
          );
        }
        const expires = Number(parsed.expires_in);
        resolve({
          accessToken: parsed.access_token,
          expiresInSeconds: Number.isFinite(expires) && expires > 0 ? expires : null,
        });
      });
    });
    req.end(body);
  });
}
