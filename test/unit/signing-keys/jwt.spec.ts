import { createLocalJWKSet, jwtVerify } from 'jose';
import { generateSigningKey, signJwt } from '../../../src/signing-keys/jwt';

describe('JWTs signed by dueline', () => {
  it('verify with jose against the published JWK, and not against another key', async () => {
    const key = generateSigningKey();
    const other = generateSigningKey();
    expect(key.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(key.publicJwk).not.toHaveProperty('d');
    const iat = Math.floor(Date.now() / 1000);
    const token = signJwt(key.kid, key.privateKeyPem, {
      iss: 'https://dueline.test',
      sub: 'tenant-1',
      aud: 'https://target.example/hook',
      iat,
      exp: iat + 60,
    });
    const { payload, protectedHeader } = await jwtVerify(
      token,
      createLocalJWKSet({ keys: [key.publicJwk as never] }),
      { issuer: 'https://dueline.test', audience: 'https://target.example/hook' },
    );
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: key.kid });
    expect(payload).toMatchObject({ sub: 'tenant-1', jti: expect.any(String) });
    const forged = signJwt(key.kid, other.privateKeyPem, {
      ...payload,
      iat,
      exp: iat + 60,
    } as never);
    await expect(
      jwtVerify(forged, createLocalJWKSet({ keys: [key.publicJwk as never] })),
    ).rejects.toThrow();
  });
});
