import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import { SecretBox } from '../secrets';
import { generateSigningKey, JWT_ALGORITHM, signJwt } from './jwt';
import { SigningKeysRepository } from './signing-keys.repository';

const PURPOSE = 'signing_key.private_key';
/** How long a replica keeps the signing key it read before asking again. */
const CURRENT_KEY_CACHE_MS = 5_000;
/** A retired key stays published this long past its tokens' lifetime (clock skew). */
const RETIRE_MARGIN_SECONDS = 60;

export interface TokenRequest {
  audience: string;
  subject: string;
  /** Extra claims (run_id…). */
  claims?: Record<string, string | number>;
}

/**
 * dueline's OIDC-style JWTs for targets and the keys behind them. Keys rotate without downtime
 * (see rotateIfDue): a new key is published OIDC_KEY_PUBLISH_AHEAD_SECONDS before it signs, and
 * the one it replaces stays published until the last token it signed has expired.
 */
@Injectable()
export class SigningKeysService {
  private cached: { kid: string; pem: string; until: number } | null = null;

  constructor(
    private readonly keys: SigningKeysRepository,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A short-lived JWT for one call: iss, sub, aud, iat, exp, jti and the given claims. */
  async issueToken(request: TokenRequest, nowMs: number): Promise<string> {
    const key = await this.currentKey();
    const iat = Math.floor(nowMs / 1000);
    return signJwt(key.kid, key.pem, {
      ...request.claims,
      iss: this.config.oidc.issuer,
      sub: request.subject,
      aud: request.audience,
      iat,
      exp: iat + this.config.oidc.tokenTtlSeconds,
    });
  }

  /** The JWKS document: every published key (pending and retiring ones included). */
  async jwks(): Promise<{ keys: object[] }> {
    return { keys: await this.keys.published() };
  }

  /**
   * The relay's round: the first key when there is none; a successor, published ahead, when
   * the newest key is due for rotation; retired keys deleted after a day. `force` rotates now
   * whatever the newest key's age (an operator who suspects a key leaked).
   */
  async rotateIfDue(force = false): Promise<'created' | 'rotated' | 'none'> {
    const { rotationSeconds, publishAheadSeconds, tokenTtlSeconds } = this.config.oidc;
    // This replica reads the signing key again after whatever the rotation decides.
    this.cached = null;
    return this.keys.transaction(async (tx) => {
      await this.keys.lock(tx);
      await this.keys.deleteOld(tx);
      const unretired = await this.keys.unretired(tx);
      const newest = unretired[0];
      if (!newest) {
        await this.keys.insert(tx, this.newKey(), 0);
        return 'created';
      }
      const ageSeconds = (newest.dbNow.getTime() - newest.activatesAt.getTime()) / 1000;
      // A successor already waiting to sign: nothing to do until it does.
      if (ageSeconds < 0) return 'none';
      if (!force && ageSeconds < rotationSeconds - publishAheadSeconds) return 'none';
      const next = this.newKey();
      await this.keys.insert(tx, next, publishAheadSeconds);
      await this.keys.retireOthers(tx, next.kid, tokenTtlSeconds + RETIRE_MARGIN_SECONDS);
      return 'rotated';
    });
  }

  /** Re-seals private keys under the current SECRETS_KEY; returns how many it found. */
  async resealSecrets(limit: number): Promise<number> {
    const stale = await this.keys.staleSealed(limit, this.box.currentKeyId);
    for (const { kid, sealed } of stale) {
      await this.keys.reseal(kid, sealed, this.box.seal(this.box.open(sealed, PURPOSE), PURPOSE));
    }
    return stale.length;
  }

  private newKey() {
    const key = generateSigningKey();
    return {
      kid: key.kid,
      algorithm: JWT_ALGORITHM,
      sealedPrivateKey: this.box.seal(key.privateKeyPem, PURPOSE),
      publicJwk: key.publicJwk,
    };
  }

  private async currentKey(): Promise<{ kid: string; pem: string }> {
    const now = Date.now();
    if (this.cached && this.cached.until > now) return this.cached;
    let row = await this.keys.current();
    if (!row) {
      await this.rotateIfDue();
      row = await this.keys.current();
      if (!row) throw new Error('no JWT signing key is active');
    }
    this.cached = {
      kid: row.kid,
      pem: this.box.open(row.sealedPrivateKey, PURPOSE),
      until: now + Math.min(CURRENT_KEY_CACHE_MS, Math.max(0, row.successorInMs ?? Infinity)),
    };
    return this.cached;
  }
}
