import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Actor } from '../../schedules';
import type { Tenant } from '../../tenants';

export interface AuthenticatedRequest {
  tenant?: Tenant;
  /** The public id of the API key that authenticated the request (never the key). */
  apiKeyId?: string;
}

/** The tenant the AuthGuard resolved from the bearer key. */
export const CurrentTenant = createParamDecorator(
  (_: unknown, context: ExecutionContext): Tenant => {
    const tenant = context.switchToHttp().getRequest<AuthenticatedRequest>().tenant;
    if (!tenant) throw new Error('CurrentTenant used on a route without tenant authentication');
    return tenant;
  },
);

/** Who is calling, as a change records it: the API key's public id. */
export const CurrentActor = createParamDecorator((_: unknown, context: ExecutionContext): Actor => {
  const apiKeyId = context.switchToHttp().getRequest<AuthenticatedRequest>().apiKeyId;
  if (!apiKeyId) throw new Error('CurrentActor used on a route without tenant authentication');
  return { apiKeyId };
});
