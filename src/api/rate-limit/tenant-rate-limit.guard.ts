import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { type AppConfig, APP_CONFIG } from '../../config';
import { Clock, RateLimitedError } from '../../common';
import type { AuthenticatedRequest } from '../auth/current-tenant.decorator';
import { TokenBuckets } from './token-bucket';

/**
 * Management calls per tenant and replica (MANAGEMENT_RATE_PER_SECOND, MANAGEMENT_BURST).
 * Keeps one tenant's scripts from starving the API for the others. Runs after the AuthGuard;
 * admin and public routes carry no tenant and are not limited here.
 */
@Injectable()
export class TenantRateLimitGuard implements CanActivate {
  private readonly buckets: TokenBuckets;

  constructor(
    private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.buckets = new TokenBuckets(config.management.ratePerSecond, config.management.burst);
  }

  canActivate(context: ExecutionContext): boolean {
    const tenant = context.switchToHttp().getRequest<AuthenticatedRequest>().tenant;
    if (!tenant) return true;
    const waitSeconds = this.buckets.take(tenant.id, this.clock.nowMs());
    if (waitSeconds > 0) throw new RateLimitedError(waitSeconds);
    return true;
  }
}
