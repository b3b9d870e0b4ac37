// API keys, invite tokens and passwords. Keys and tokens are stored as SHA-256 (they are high-entropy random strings);
// passwords, chosen by people, as scrypt.
import { createHash, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';
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
