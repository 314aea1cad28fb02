import { loadConfig } from '../../../src/config';
import { randomBytes } from 'node:crypto';
import { keyIdOf, keyringText, parseKeyring, SecretBox } from '../../../src/secrets';

const keyText = (fill: number) => Buffer.alloc(32, fill).toString('base64');

describe('SecretBox (AES-256-GCM at rest)', () => {
  const box = new SecretBox(parseKeyring(keyText(1)));

  it('seals to text naming its key, never the same twice, and opens back', () => {
    const a = box.seal('whsec_value', 'target.signing_secret');
    const b = box.seal('whsec_value', 'target.signing_secret');
    expect(a).toMatch(
      new RegExp(`^enc:v1:${keyIdOf(Buffer.alloc(32, 1))}:[\\w-]+:[\\w-]+:[\\w-]+$`),
    );
    expect(a).not.toBe(b);
    expect(a).not.toContain('whsec_value');
    expect(box.open(a, 'target.signing_secret')).toBe('whsec_value');
  });

  it('refuses a value moved to another purpose, tampered with, or sealed under an unknown key', () => {
    const sealed = box.seal('secret-text', 'target.signing_secret');
    expect(() => box.open(sealed, 'target.auth')).toThrow(/does not open/);
    const parts = sealed.split(':');
    parts[4] = Buffer.from('x'.repeat(11)).toString('base64url');
    expect(() => box.open(parts.join(':'), 'target.signing_secret')).toThrow(/does not open/);
    const other = new SecretBox(parseKeyring(keyText(2)));
    expect(() => other.open(sealed, 'target.signing_secret')).toThrow(/does not hold/);
    expect(() => box.open('plain text', 'target.signing_secret')).toThrow(/not sealed/);
  });

  it('opens under any key of the ring, seals under the first, and knows what a rotation must re-seal', () => {
    const old = box.seal('v', 'target.auth');
    const rotated = new SecretBox(parseKeyring(`${keyText(3)},${keyText(1)}`));
    expect(rotated.open(old, 'target.auth')).toBe('v');
    expect(rotated.isStale(old)).toBe(true);
    const fresh = rotated.seal('v', 'target.auth');
    expect(rotated.isStale(fresh)).toBe(false);
    expect(() => box.open(fresh, 'target.auth')).toThrow(/does not hold/);
  });

  it('rejects a malformed SECRETS_KEY without echoing it', () => {
    const bad = 'c2hvcnQta2V5';
    expect(() => loadConfig({ SECRETS_KEY: bad })).toThrow(/SECRETS_KEY/);
    try {
      loadConfig({ SECRETS_KEY: bad });
    } catch (error) {
      expect((error as Error).message).not.toContain(bad);
    }
  });
});

describe('keyringText', () => {
  it('writes a keyring back as SECRETS_KEY text that parses to the same keys, current first', () => {
    const first = randomBytes(32).toString('base64');
    const second = randomBytes(32).toString('base64');
    const keyring = parseKeyring(`${first}\n${second}`);
    const again = parseKeyring(keyringText(keyring));
    expect(again.current.id).toBe(keyring.current.id);
    expect([...again.all.keys()]).toEqual([...keyring.all.keys()]);
    expect(keyringText(keyring)).toBe(`${first},${second}`);
  });
});
