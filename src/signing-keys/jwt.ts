import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';

/** ES256 (ECDSA P-256 with SHA-256): small keys and tokens, verified by every JOSE library. */
export const JWT_ALGORITHM = 'ES256';

export interface GeneratedKey {
  kid: string;
  privateKeyPem: string;
  publicJwk: Record<string, unknown>;
}

export function generateSigningKey(): GeneratedKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomUUID();
  return {
    kid,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicJwk: {
      ...publicKey.export({ format: 'jwk' }),
      kid,
      alg: JWT_ALGORITHM,
      use: 'sig',
    },
  };
}

export interface JwtClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  exp: number;
  [claim: string]: unknown;
}

const b64 = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/** A compact JWS (RFC 7515/7519) signed with the PEM key; `jti` is added. */
export function signJwt(kid: string, privateKeyPem: string, claims: JwtClaims): string {
  const header = b64(JSON.stringify({ alg: JWT_ALGORITHM, typ: 'JWT', kid }));
  const payload = b64(JSON.stringify({ ...claims, jti: randomUUID() }));
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), {
    key: privateKeyPem,
    // JWS wants the raw r||s form, not DER.
    dsaEncoding: 'ieee-p1363',
  });
  return `${header}.${payload}.${b64(signature)}`;
}
