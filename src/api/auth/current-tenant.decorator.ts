import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Tenant } from '../../tenants';

export interface AuthenticatedRequest {
  tenant?: Tenant;
}

/** The tenant the AuthGuard resolved from the bearer key. */
export const CurrentTenant = createParamDecorator(
  (_: unknown, context: ExecutionContext): Tenant => {
    const tenant = context.switchToHttp().getRequest<AuthenticatedRequest>().tenant;
    if (!tenant) throw new Error('CurrentTenant used on a route without tenant authentication');
    return tenant;
  },
);
