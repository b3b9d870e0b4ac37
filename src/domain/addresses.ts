// Postal and e-mail checks shared by every record that holds an address or an e-mail address.

/** USPS codes: the states, DC, the territories and the military post offices. */
export const US_STATE_CODES: ReadonlySet<string> = new Set([
  'AL', 'AK', 'AZ', 'AR', 'CA', 'CO', 'CT', 'DE', 'FL', 'GA', 'HI', 'ID', 'IL', 'IN', 'IA', 'KS', 'KY', 'LA', 'ME',
  'MD', 'MA', 'MI', 'MN', 'MS', 'MO', 'MT', 'NE', 'NV', 'NH', 'NJ', 'NM', 'NY', 'NC', 'ND', 'OH', 'OK', 'OR', 'PA',
  'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VT', 'VA', 'WA', 'WV', 'WI', 'WY', 'DC',
  'AS', 'GU', 'MP', 'PR', 'VI', 'UM', 'FM', 'MH', 'PW',
  'AA', 'AE', 'AP',
]);

/** 12345 or ZIP+4 12345-6789. */
export const US_ZIP_PATTERN = /^\d{5}(-\d{4})?$/;

/**
 * ISO 3166-1 alpha-2 shape: two ASCII letters, in any case, tested on the value as sent (before uppercasing, which
 * turns 'ß' into 'SS' and 'ı' into 'I'); the list of countries itself is not checked.
 */
export const COUNTRY_PATTERN = /^[A-Za-z]{2}$/;

/** A USPS code in any case: two ASCII letters as sent (so 'ıd' is not ID) that uppercase to one of US_STATE_CODES. */
export const isUsStateCode = (value: string) => /^[A-Za-z]{2}$/.test(value) && US_STATE_CODES.has(value.toUpperCase());

/**
 * One '@', no spaces (nor NUL), a dot in the domain: catches typos without refusing addresses mail servers accept.
 * Kept as a string so JSON schemas (with "or empty" around it) and code use the same rule.
 */
export const EMAIL_PATTERN_SOURCE = '[^\\s@\\u0000]+@[^\\s@\\u0000]+\\.[^\\s@\\u0000]+';
const EMAIL = new RegExp(`^${EMAIL_PATTERN_SOURCE}$`);

export const isEmailAddress = (value: string) => EMAIL.test(value);
