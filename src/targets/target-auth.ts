/**
 * How dueline authenticates to a target. Write-only like the signing secret: the whole block is
 * sealed at rest, and reads show only its view (the type and the fields that are not secrets).
 */
export const TARGET_AUTH_TYPES = ['bearer', 'basic', 'oauth2_client_credentials', 'oidc'] as const;
export type TargetAuthType = (typeof TARGET_AUTH_TYPES)[number];

export type TargetAuth =
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | {
      type: 'oauth2_client_credentials';
      tokenUrl: string;
      clientId: string;
      clientSecret: string;
      scope?: string;
      audience?: string;
    }
  /** A JWT dueline signs per call: `aud` is the target URL unless `audience` is given. */
  | { type: 'oidc'; audience?: string };

/** What reads show: never a token, password or client secret. */
export type TargetAuthView =
  | { type: 'bearer' }
  | { type: 'basic'; username: string }
  | {
      type: 'oauth2_client_credentials';
      tokenUrl: string;
      clientId: string;
      scope: string | null;
      audience: string | null;
    }
  | { type: 'oidc'; audience: string | null };

const MAX_SECRET = 4096;
const MAX_FIELD = 1024;
// Sent in HTTP headers or a form body: visible ASCII only, so nothing can split a header.
const PRINTABLE = /^[\x21-\x7e]+$/;
const PRINTABLE_WITH_SPACES = /^[\x20-\x7e]+$/;

const FIELDS: Record<TargetAuthType, { required: string[]; optional: string[] }> = {
  bearer: { required: ['token'], optional: [] },
  basic: { required: ['username', 'password'], optional: [] },
  oauth2_client_credentials: {
    required: ['tokenUrl', 'clientId', 'clientSecret'],
    optional: ['scope', 'audience'],
  },
  oidc: { required: [], optional: ['audience'] },
};

export interface AuthProblem {
  field: string;
  message: string;
}

/**
 * Every structural problem with an auth block (the URL policy of tokenUrl is the service's);
 * empty when valid. Messages name fields, never values.
 */
export function targetAuthProblems(value: unknown): AuthProblem[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ field: 'auth', message: 'auth must be an object with a type, or null' }];
  }
  const block = value as Record<string, unknown>;
  const type = block.type;
  if (typeof type !== 'string' || !(TARGET_AUTH_TYPES as readonly string[]).includes(type)) {
    return [
      { field: 'auth.type', message: `auth.type must be one of ${TARGET_AUTH_TYPES.join(', ')}` },
    ];
  }
  const { required, optional } = FIELDS[type as TargetAuthType];
  const problems: AuthProblem[] = [];
  for (const key of Object.keys(block)) {
    if (key !== 'type' && !required.includes(key) && !optional.includes(key)) {
      problems.push({
        field: `auth.${key}`,
        message: `auth.${key} is not a field of ${type} auth`,
      });
    }
  }
  for (const key of [...required, ...optional]) {
    const field = `auth.${key}`;
    const v = block[key];
    if (v === undefined) {
      if (required.includes(key)) {
        problems.push({ field, message: `${field} is required for ${type} auth` });
      }
      continue;
    }
    const secret = key === 'token' || key === 'password' || key === 'clientSecret';
    const max = secret ? MAX_SECRET : MAX_FIELD;
    const pattern = key === 'scope' || key === 'password' ? PRINTABLE_WITH_SPACES : PRINTABLE;
    if (typeof v !== 'string' || v.length === 0 || v.length > max || !pattern.test(v)) {
      problems.push({
        field,
        message: `${field} must be 1 to ${max} printable ASCII characters${
          pattern === PRINTABLE ? ' without spaces' : ''
        }`,
      });
    } else if (key === 'username' && v.includes(':')) {
      problems.push({ field, message: `${field} must not contain ":" (basic auth)` });
    }
  }
  return problems;
}

export function authView(auth: TargetAuth): TargetAuthView {
  switch (auth.type) {
    case 'bearer':
      return { type: 'bearer' };
    case 'basic':
      return { type: 'basic', username: auth.username };
    case 'oauth2_client_credentials':
      return {
        type: auth.type,
        tokenUrl: auth.tokenUrl,
        clientId: auth.clientId,
        scope: auth.scope ?? null,
        audience: auth.audience ?? null,
      };
    case 'oidc':
      return { type: 'oidc', audience: auth.audience ?? null };
  }
}
