// Document numbers people read and type: PREFIX-YYYYMMDD-XXXXXX, the day in the server's time zone and six random
// letters and digits (36^6 per prefix and day), made unique by the table's constraint.
import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Today (or the given moment) as YYYY-MM-DD in the server's local time zone (TZ). */
export function localDate(at = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}

export function documentNumber(prefix: string, at = new Date()): string {
  const suffix = Array.from({ length: 6 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  return `${prefix}-${localDate(at).replaceAll('-', '')}-${suffix}`;
}
