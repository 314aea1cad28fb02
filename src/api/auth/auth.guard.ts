import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { type AppConfig, APP_CONFIG } from '../../config';
import { AUTH_MODE, AuthMode, UnauthorizedError } from '../../common';
import { apiKeyIdOf, tokensEqual, TenantsService } from '../../tenants';
import type { AuthenticatedRequest } from './current-tenant.decorator';

/**
 * Every route is tenant-scoped unless marked @Public() or @AdminOnly(). The tenant comes only
 * from the bearer API key, never from the URL or body, so a caller cannot name another tenant.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tenants: TenantsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const mode =
      this.reflector.getAllAndOverride<AuthMode>(AUTH_MODE, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'tenant';
    if (mode === 'public') return true;
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const token = bearerToken(request);
    if (mode === 'admin') {
      const adminToken = this.config.adminToken;
      if (!token || !adminToken || !tokensEqual(token, adminToken)) {
        throw new UnauthorizedError('missing or invalid admin token');
      }
      return true;
    }
    if (!token) throw new UnauthorizedError('missing or invalid API key');
    request.tenant = await this.tenants.authenticate(token);
    request.apiKeyId = apiKeyIdOf(token)!;
    return true;
  }
}

function bearerToken(request: Request): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S{1,512})\s*$/i.exec(header);
  return match ? match[1] : null;
}
