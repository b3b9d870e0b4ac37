// API keys, invite tokens, passwords and webhook secrets. Keys and tokens are stored as SHA-256 (they are high-entropy
// random strings); passwords, chosen by people, as scrypt; webhook secrets sealed (below).
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

/** 32 base62 characters: about 190 bits. */
export function randomBase62(length = 32): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

export const API_KEY_PATTERN = /^jwc_[0-9A-Za-z]{27,128}$/;

export function generateApiKey(): string {
  return `jwc_${randomBase62()}`;
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** What a key list shows so a person can tell keys apart: the prefix and the first characters. */
export function keyPrefix(key: string): string {
  return key.slice(0, 10);
}

const SCRYPT = { N: 16384, r: 8, p: 1 };

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected);
}

// Secrets the service must read back (a webhook's signing secret) are sealed with AES-256-GCM under the service's key:
// a database dump alone does not reveal them when the key is kept outside the database (WMS_SECRET_KEY).
const SEALED = /^v1\.([A-Za-z0-9+/=]+)\.([A-Za-z0-9+/=]+)\.([A-Za-z0-9+/=]+)$/;

export function sealSecret(key: Buffer, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `v1.${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${sealed.toString('base64')}`;
}

/** The secret, or null when it was sealed under another key (the service's key changed) or is not a sealed value. */
export function openSecret(key: Buffer, sealed: string): string | null {
  const parts = SEALED.exec(sealed);
  if (!parts) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1]!, 'base64'));
    decipher.setAuthTag(Buffer.from(parts[2]!, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** The `t=<unix>,v1=<hex>` signature scheme of webhooks: HMAC-SHA256 over "<unix>.<raw body>". */
export function signatureOf(secret: string, unixSeconds: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
}

export type SignatureCheck = 'valid' | 'malformed' | 'stale' | 'mismatch';

/**
 * Checks a `t=<unix>,v1=<hex>[,v1=<hex>...]` header over the raw body: the timestamp within `toleranceSeconds` of now
 * in either direction, and one of the v1 values equal to the expected signature, compared in constant time.
 */
export function checkSignature(header: string | undefined, rawBody: string, secret: string, nowSeconds: number, toleranceSeconds: number): SignatureCheck {
  if (!header) return 'malformed';
  const pairs = header.split(',').map((part) => part.trim().split('='));
  const t = pairs.find(([name]) => name === 't')?.[1];
  const given = pairs.filter(([name, value]) => name === 'v1' && value && /^[0-9a-f]{64}$/i.test(value)).map(([, value]) => Buffer.from(value!.toLowerCase(), 'hex'));
  if (!t || !/^[0-9]{1,12}$/.test(t) || given.length === 0) return 'malformed';
  if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds) return 'stale';
  const expected = Buffer.from(signatureOf(secret, Number(t), rawBody), 'hex');
  // Every candidate is compared (no early exit), each in constant time.
  let match = false;
  for (const candidate of given) match = timingSafeEqual(candidate, expected) || match;
  return match ? 'valid' : 'mismatch';
}
