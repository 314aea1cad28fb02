import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { OAuthTokenCache, requestClientCredentialsToken } from '../delivery';
import { SigningKeysService } from '../signing-keys';
import type { DispatchTarget } from '../targets';

/** What a call is for: a run's attempt, or an event's delivery. */
export type CallFor =
  { tenantId: string; runId: string; scheduleId: string } | { tenantId: string; eventId: string };

/** The token endpoint gets at most this long, whatever the target's own timeout. */
const TOKEN_TIMEOUT_MS = 10_000;

/**
 * The Authorization header for a call to a target with auth: a static bearer or basic
 * credential, an OAuth access token (cached per worker until shortly before it expires), or a
 * JWT dueline signs for this call. The values go to the target only; nothing here is logged.
 */
@Injectable()
export class TargetCredentials {
  private readonly tokens: OAuthTokenCache;

  constructor(
    private readonly signingKeys: SigningKeysService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.tokens = new OAuthTokenCache(() => this.clock.nowMs());
  }

  /** `refresh`: the cached OAuth token was refused (401); fetch a new one. */
  async headersFor(
    target: DispatchTarget,
    call: CallFor,
    options: { refresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<Record<string, string>> {
    const auth = target.auth;
    if (!auth) return {};
    switch (auth.type) {
      case 'bearer':
        return { Authorization: `Bearer ${auth.token}` };
      case 'basic':
        return {
          Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`,
        };
      case 'oauth2_client_credentials': {
        const key = OAuthTokenCache.keyOf(target.id, auth);
        if (options.refresh) this.tokens.invalidate(key);
        const token = await this.tokens.get(key, () =>
          requestClientCredentialsToken(auth, {
            allowed: this.config.targetAllowedHosts,
            timeoutMs: Math.min(target.timeoutMs, TOKEN_TIMEOUT_MS),
            signal: options.signal,
          }),
        );
        return { Authorization: `Bearer ${token}` };
      }
      case 'oidc': {
        const token = await this.signingKeys.issueToken(
          {
            audience: auth.audience ?? target.url,
            subject: call.tenantId,
            claims:
              'eventId' in call
                ? { event_id: call.eventId, target_id: target.id }
                : { run_id: call.runId, schedule_id: call.scheduleId, target_id: target.id },
          },
          this.clock.nowMs(),
        );
        return { Authorization: `Bearer ${token}` };
      }
    }
  }
}
