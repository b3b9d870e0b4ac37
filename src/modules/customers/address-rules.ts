// Rules of drop-ship locations and third-party payers. Every failure is collected, so that one 422 names them all.
import { COUNTRY_PATTERN, isEmailAddress, isUsStateCode, US_ZIP_PATTERN } from '../../domain/addresses.ts';
import { ApiError } from '../../domain/errors.ts';

interface FieldRule {
  max: number;
  required?: boolean;
}

export interface AddressKind {
  /** The history entity type, also the key of the response envelope. */
  entityType: 'drop_ship_location' | 'third_party_payer';
  errorCode: 'invalid_drop_ship_location' | 'invalid_third_party_payer';
  fields: Record<string, FieldRule>;
}

const ADDRESS_FIELDS: Record<string, FieldRule> = {
  name: { max: 100, required: true },
  attention: { max: 100 },
  address_line_1: { max: 100, required: true },
  address_line_2: { max: 100 },
  city: { max: 60, required: true },
  state: { max: 40, required: true },
  zip_code: { max: 20, required: true },
  country: { max: 2 },
};

export const DROP_SHIP_LOCATION: AddressKind = {
  entityType: 'drop_ship_location',
  errorCode: 'invalid_drop_ship_location',
  fields: { ...ADDRESS_FIELDS, phone: { max: 40 }, email: { max: 254 }, notes: { max: 1000 } },
};

export const THIRD_PARTY_PAYER: AddressKind = {
  entityType: 'third_party_payer',
  errorCode: 'invalid_third_party_payer',
  fields: { ...ADDRESS_FIELDS, carrier_account: { max: 60, required: true }, notes: { max: 1000 } },
};

export type AddressRecord = Record<string, string | null>;
export type AddressInput = Record<string, string | null | undefined>;

const UPPERCASE = new Set(['state', 'country']);
const stored = (field: string, value: string) => (UPPERCASE.has(field) ? value.toUpperCase() : value);

/**
 * The values a create or update would store, before the checks: the current record (none on create) with the sent
 * fields over it. Text is trimmed; an empty string or null clears; no country means US. Case is left as sent, so the
 * checks see what was typed; assertValidAddress answers the record to store, with state and country uppercase.
 */
export function addressRecord(kind: AddressKind, input: AddressInput, current?: AddressRecord): AddressRecord {
  const record: AddressRecord = {};
  for (const field of Object.keys(kind.fields)) {
    const sent = input[field];
    record[field] = sent === undefined ? (current?.[field] ?? null) : sent?.trim() || null;
  }
  record.country ??= 'US';
  return record;
}

/** The first rule a field breaks, or null. Codes are checked as sent; lengths on the stored (uppercased) value. */
function fieldFailure(field: string, rule: FieldRule, record: AddressRecord): string | null {
  const value = record[field] ?? null;
  if (value === null) return rule.required ? `${field} is required` : null;
  if (field === 'country') return COUNTRY_PATTERN.test(value) ? null : 'country must be a two-letter country code such as US';
  const storedValue = stored(field, value);
  if (storedValue.length > rule.max) return `${field} must be at most ${rule.max} characters`;
  const country = record.country ?? '';
  const us = COUNTRY_PATTERN.test(country) && country.toUpperCase() === 'US';
  // Named as stored when that is the same text in uppercase, else as sent ('ıd' would read as ID).
  if (field === 'state' && us && !isUsStateCode(value)) return `state ${/^[\x00-\x7f]*$/.test(value) ? storedValue : value} is not a US state code`;
  if (field === 'zip_code' && us && !US_ZIP_PATTERN.test(value)) return 'zip_code must be 12345 or 12345-6789 for a US address';
  if (field === 'email' && !isEmailAddress(value)) return 'email must be an e-mail address';
  return null;
}

/**
 * The record to store (state and country uppercase), or 422 with the kind's code: the message joins every failure
 * with semicolons; details name the fields.
 */
export function assertValidAddress(kind: AddressKind, record: AddressRecord): AddressRecord {
  const failures = Object.entries(kind.fields).flatMap(([field, rule]) => {
    const message = fieldFailure(field, rule, record);
    return message ? [{ field, message }] : [];
  });
  if (failures.length) {
    throw new ApiError(422, kind.errorCode, failures.map((f) => f.message).join('; '), { details: failures });
  }
  return Object.fromEntries(Object.entries(record).map(([field, value]) => [field, value === null ? null : stored(field, value)]));
}
