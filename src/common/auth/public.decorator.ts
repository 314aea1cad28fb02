import { SetMetadata } from '@nestjs/common';

export const AUTH_MODE = 'dueline:auth-mode';
export type AuthMode = 'public' | 'admin' | 'tenant';

/** Health, metrics and docs: no credentials. */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(AUTH_MODE, 'public');
/** Tenant administration: the ADMIN_TOKEN. */
export const AdminOnly = (): ClassDecorator & MethodDecorator => SetMetadata(AUTH_MODE, 'admin');
