import { createHash } from 'node:crypto';
import { SingleFlight } from '../common';
import type { AccessToken, ClientCredentials } from './oauth-token';

/** A token is used until this much before it expires (or a tenth of its life, if shorter). */
const EXPIRY_MARGIN_MS = 30_000;
const UNKNOWN_LIFETIME_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * OAuth access tokens per worker process, by target and credentials (a changed secret is a new
 * entry), kept until shortly before they expire. Concurrent calls for one entry share one
 * request to the token endpoint.
 */
export class OAuthTokenCache {
  private readonly entries = new Map<string, { token: string; usableUntil: number }>();
  private readonly requests = new SingleFlight<string, string>();

  constructor(private readonly now: () => number = Date.now) {}

  static keyOf(targetId: string, credentials: ClientCredentials): string {
    return createHash('sha256')
      .update(
        JSON.stringify([
          targetId,
          credentials.tokenUrl,
          credentials.clientId,
          credentials.clientSecret,
          credentials.scope ?? '',
          credentials.audience ?? '',
        ]),
      )
      .digest('base64url');
  }

  async get(key: string, fetch: () => Promise<AccessToken>): Promise<string> {
    const entry = this.entries.get(key);
    if (entry && entry.usableUntil > this.now()) return entry.token;
    return this.requests.run(key, async () => {
      const { accessToken, expiresInSeconds } = await fetch();
      const lifetime = expiresInSeconds === null ? UNKNOWN_LIFETIME_MS : expiresInSeconds * 1000;
      const margin = Math.min(EXPIRY_MARGIN_MS, lifetime / 10);
      if (this.entries.size >= MAX_ENTRIES) {
        this.entries.delete(this.entries.keys().next().value as string);
      }
      this.entries.set(key, { token: accessToken, usableUntil: this.now() + lifetime - margin });
      return accessToken;
    });
  }

  /** After a 401: the next get() asks the endpoint again. */
  invalidate(key: string): void {
    this.entries.delete(key);
  }
}
