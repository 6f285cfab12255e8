import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config/config';
import { generateKeyText, keyIdOf, parseKeyRing, SecretBox, SecretBoxError } from './secret-box';
import { openSecretBox } from './secret-keys';

const PURPOSE = 'gateway.settings.token_secret';
const keyA = generateKeyText();
const keyB = generateKeyText();

describe('SecretBox', () => {
  it('round-trips a secret, with the key id in the ciphertext and a fresh IV each time', () => {
    const box = new SecretBox(parseKeyRing(`a1:${keyA}`));
    const one = box.encrypt('s3cret value', PURPOSE);
    const two = box.encrypt('s3cret value', PURPOSE);
    expect(one).toMatch(/^dsec1\.a1\.[A-Za-z0-9_-]+$/);
    expect(one).not.toContain('s3cret');
    expect(one).not.toBe(two);
    expect(SecretBox.keyIdOf(one)).toBe('a1');
    expect(box.decrypt(one, PURPOSE)).toBe('s3cret value');
    expect(box.decrypt(two, PURPOSE)).toBe('s3cret value');
  });

  it('refuses another purpose, an altered ciphertext, an unknown key id and a plaintext', () => {
    const box = new SecretBox(parseKeyRing(`a1:${keyA}`));
    const sealed = box.encrypt('value', PURPOSE);
    expect(() => box.decrypt(sealed, 'other.purpose')).toThrow(/does not authenticate/);
    const last = sealed.at(-1) === 'A' ? 'B' : 'A';
    expect(() => box.decrypt(sealed.slice(0, -1) + last, PURPOSE)).toThrow(SecretBoxError);
    const stranger = new SecretBox(parseKeyRing(`b1:${keyB}`));
    expect(() => stranger.decrypt(sealed, PURPOSE)).toThrow(/key id a1, which DAGU_ENCRYPTION_KEY does not hold/);
    const sameIdOtherKey = new SecretBox(parseKeyRing(`a1:${keyB}`));
    expect(() => sameIdOtherKey.decrypt(sealed, PURPOSE)).toThrow(/does not authenticate/);
    expect(() => box.decrypt('plain text', PURPOSE)).toThrow(/not an encrypted secret/);
    expect(() => box.decrypt('dsec1.a1.AAAA', PURPOSE)).toThrow(/truncated/);
  });

  it('rotates keys: the new key encrypts, the old one still decrypts, rewrap moves old ciphertexts and plaintexts to the new key', () => {
    const before = new SecretBox(parseKeyRing(`old:${keyA}`));
    const oldSealed = before.encrypt('rotate me', PURPOSE);
    const after = new SecretBox(parseKeyRing(`new:${keyB},old:${keyA}`));
    expect(after.currentKeyId).toBe('new');
    expect(after.decrypt(oldSealed, PURPOSE)).toBe('rotate me');
    expect(after.needsRewrap(oldSealed)).toBe(true);
    const rewrapped = after.rewrap(oldSealed, PURPOSE);
    expect(SecretBox.keyIdOf(rewrapped)).toBe('new');
    expect(after.needsRewrap(rewrapped)).toBe(false);
    expect(after.rewrap(rewrapped, PURPOSE)).toBe(rewrapped);
    // Once the old key is removed, only the rewrapped value opens.
    const onlyNew = new SecretBox(parseKeyRing(`new:${keyB}`));
    expect(onlyNew.decrypt(rewrapped, PURPOSE)).toBe('rotate me');
    expect(() => onlyNew.decrypt(oldSealed, PURPOSE)).toThrow(/key id old/);
    const fromPlain = after.rewrap('legacy plaintext', PURPOSE);
    expect(SecretBox.isCiphertext(fromPlain)).toBe(true);
    expect(after.decrypt(fromPlain, PURPOSE)).toBe('legacy plaintext');
  });

  it('parses a bare key with a derived id, and refuses bad rings without echoing the key', () => {
    const [bare] = parseKeyRing(keyA);
    expect(bare?.id).toBe(keyIdOf(Buffer.from(keyA, 'base64')));
    expect(bare?.id).toMatch(/^[0-9a-f]{8}$/);
    expect(() => parseKeyRing('')).toThrow(/empty/);
    expect(() => parseKeyRing('k:c2hvcnQ=')).toThrow(/32 bytes/);
    expect(() => parseKeyRing(`k:${keyA},k:${keyB}`)).toThrow(/used twice/);
    expect(() => parseKeyRing(`bad id:${keyA}`)).toThrow(/id must be/);
    const message = (() => {
      try {
        parseKeyRing(`bad id:${keyA}`);
        return 'no error';
      } catch (error) {
        return String(error);
      }
    })();
    expect(message).toMatch(/id must be/);
    expect(message).not.toContain(keyA);
  });
});

describe('openSecretBox', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'secret-keys-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses the configured ring and reports a malformed one as a config error', () => {
    const opened = openSecretBox({ keyRing: `k1:${keyA}`, loopback: false });
    expect(opened.box.currentKeyId).toBe('k1');
    expect(opened.devKeyFile).toBeUndefined();
    expect(() => openSecretBox({ keyRing: 'nope', loopback: true })).toThrow(ConfigError);
  });

  it('stops a non-loopback start without a key, with a clear message', () => {
    expect(() => openSecretBox({ keyRing: undefined, loopback: false, devKeyFile: join(dir, 'k') })).toThrow(
      /DAGU_ENCRYPTION_KEY \(or DAGU_ENCRYPTION_KEY_FILE\) is required/,
    );
  });

  it('on loopback, generates a development key once (mode 0600) and reuses it', () => {
    const file = join(dir, 'dev.key');
    const first = openSecretBox({ keyRing: undefined, loopback: true, devKeyFile: file });
    expect(first.devKeyFile).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const sealed = first.box.encrypt('x', PURPOSE);
    const second = openSecretBox({ keyRing: undefined, loopback: true, devKeyFile: file });
    expect(second.box.decrypt(sealed, PURPOSE)).toBe('x');
    expect(readFileSync(file, 'utf8').trim()).toHaveLength(44);
  });
});
