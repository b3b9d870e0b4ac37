// The second factor of an account: TOTP codes (RFC 6238: SHA-1, 6 digits, 30 s steps, the previous and next step
// accepted too), single-use recovery codes, and the per-account limit on wrong codes.
import { randomInt } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import { ApiError } from '../../domain/errors.ts';
import { sha256 } from '../../domain/secrets.ts';
import type { CounterStore } from '../../http/rate-limit.ts';

const ISSUER = 'Consignment WMS';
const STEP_SECONDS = 30;
const TOTP_CODE = /^[0-9]{6}$/;

const RECOVERY_CODE_COUNT = 10;
// Crockford's base32: no i, l, o or u, so a code read aloud or typed from paper is not misread.
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RECOVERY_GROUPS = 3;
const RECOVERY_GROUP_LENGTH = 4;
const RECOVERY_CODE = new RegExp(`^[${RECOVERY_ALPHABET}]{${RECOVERY_GROUPS * RECOVERY_GROUP_LENGTH}}$`);

const FAILURE_LIMIT = 5;
const FAILURE_WINDOW_MS = 15 * 60_000;

/** 20 random bytes in base32, the form authenticator apps take. */
export const newTotpSecret = (): string => generateSecret();

export const otpauthUrl = (secret: string, label: string): string => generateURI({ issuer: ISSUER, label, secret });

export const isTotpCode = (code: string): boolean => TOTP_CODE.test(code);

/** The time step (previous, current or next) whose code this is, when that step is later than `after`; else null. */
export async function acceptedStep(secret: string, code: string, after: number | null): Promise<number | null> {
  if (!isTotpCode(code)) return null;
  const now = Math.floor(Date.now() / 1000);
  // otplib refuses an afterTimeStep beyond the window's last step; such a mark leaves no step to accept anyway.
  if (after !== null && after >= Math.floor(now / STEP_SECONDS) + 1) return null;
  const result = await verify({ secret, token: code, epoch: now, epochTolerance: STEP_SECONDS, ...(after === null ? {} : { afterTimeStep: after }) });
  // The functional verify is typed for HOTP too; a TOTP result always carries its step.
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** Ten codes like `k7m2-9qx4-t0ab`: 60 random bits each. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    Array.from({ length: RECOVERY_GROUPS }, () =>
      Array.from({ length: RECOVERY_GROUP_LENGTH }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('')).join('-'));
}

/** SHA-256 of the user and the code as typed without dashes, spaces or case (o read as 0, i and l as 1); null when it cannot be one. */
export function recoveryCodeHash(userId: string, code: string): string | null {
  const normalized = code.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  return RECOVERY_CODE.test(normalized) ? sha256(`${userId}:${normalized}`) : null;
}

export const wrongCode = () => new ApiError(422, 'invalid_otp', 'the code is wrong, outside its time window, or already used');

export const isWrongCode = (error: unknown): boolean => error instanceof ApiError && error.code === 'invalid_otp';

const failuresOf = (userId: string) => `otp-fail:${userId}`;

/** 429 once the account has had its wrong codes for the window: from then on even the right code waits. */
export async function refuseWhenLockedOut(counters: CounterStore, userId: string): Promise<void> {
  const failures = await counters.peek(failuresOf(userId));
  if (failures.count < FAILURE_LIMIT) return;
  throw new ApiError(429, 'rate_limited', 'too many wrong codes for this account; try again later', {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(failures.resetMs / 1000))) },
  });
}

export async function countWrongCode(counters: CounterStore, userId: string): Promise<void> {
  await counters.hit(failuresOf(userId), FAILURE_WINDOW_MS);
}
