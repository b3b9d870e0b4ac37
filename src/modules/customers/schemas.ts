import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const CUSTOMER_STATUSES = ['active', 'inactive'] as const;

const NullableText = Nullable(Type.String());

export const Customer = Closed({
  id: Uuid,
  account_number: Type.String(),
  name: Type.String(),
  customer_type_code: NullableText,
  region: NullableText,
  address_line_1: NullableText,
  address_line_2: NullableText,
  city: NullableText,
  state: NullableText,
  zip_code: NullableText,
  status: Type.Enum(CUSTOMER_STATUSES),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { description: 'A customer of the supply partners (global: every key with customers.view sees every customer).' });

// Optional text of a customer: an empty string (or null) stores null.
const Clearable = (maxLength: number) => Type.Optional(Nullable(Text(maxLength)));
const CustomerFields = {
  customer_type_code: Clearable(20),
  region: Clearable(60),
  address_line_1: Clearable(100),
  address_line_2: Clearable(100),
  city: Clearable(60),
  state: Clearable(40), // also at most 40 once uppercased (service)
  zip_code: Clearable(20),
};

export const CreateCustomer = Closed({
  account_number: Label(40, { description: 'Unique, whatever the case; a duplicate is 422 duplicate_account_number.' }),
  name: Label(200),
  ...CustomerFields,
}, { description: 'state is stored uppercase.' });

export const UpdateCustomer = Closed({ name: Label(200), ...CustomerFields }, {
  description: 'name is required; the other fields keep their value when omitted and are cleared by an empty string. ' +
    'account_number and status cannot change (400: not a known field).',
});

export const DEFAULT_PER_PAGE = 50;
export const ListCustomersQuery = Closed({
  q: Type.Optional(Text(200, { description: 'Substring of the account number or the name, case-insensitive.' })),
  status: Type.Optional(Type.Enum(CUSTOMER_STATUSES)),
  ...pageParams(DEFAULT_PER_PAGE),
});

export const CustomerParams = Closed({ id: Uuid });
export const DropShipLocationParams = Closed({ id: Uuid, locationId: Uuid });
export const ThirdPartyPayerParams = Closed({ id: Uuid, payerId: Uuid });

export const ListChildrenQuery = Closed({
  include_hidden: Type.Optional(Type.Enum(['0', '1', 'true', 'false'], { description: '1 (or true) lists hidden records too.' })),
  ...pageParams(DEFAULT_PER_PAGE),
});

const Address = {
  id: Uuid,
  customer_id: Uuid,
  name: Type.String(),
  attention: NullableText,
  address_line_1: Type.String(),
  address_line_2: NullableText,
  city: Type.String(),
  state: Type.String(),
  zip_code: Type.String(),
  country: Type.String({ description: 'Two letters, uppercase; US by default.' }),
};
const Hidden = {
  is_hidden: Type.Boolean({ description: 'Hidden records are left out of lists (unless include_hidden=1) and stay on the orders that reference them.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const DropShipLocation = Closed({ ...Address, phone: NullableText, email: NullableText, notes: NullableText, ...Hidden });
export const ThirdPartyPayer = Closed({ ...Address, carrier_account: Type.String(), notes: NullableText, ...Hidden });

// Only types and unknown fields are checked here (400); required fields, lengths, state, ZIP and e-mail are rules of
// the service, so that one 422 names every failure at once.
const RuleChecked = Type.Optional(Nullable(Text(2000)));
const ADDRESS_RULES = 'Rules (422, every failure in one semicolon-joined message, also as details): required fields present; ' +
  'country two ASCII letters in any case (default US); for US addresses a USPS state code (two ASCII letters in any ' +
  'case) and a 12345 or 12345-6789 ZIP; lengths, of state once uppercased. state and country are stored uppercase; ' +
  'in an update an empty string clears an optional field.';

export const DropShipLocationInput = Closed({
  name: RuleChecked, attention: RuleChecked, address_line_1: RuleChecked, address_line_2: RuleChecked, city: RuleChecked,
  state: RuleChecked, zip_code: RuleChecked, country: RuleChecked, phone: RuleChecked, email: RuleChecked, notes: RuleChecked,
}, {
  description: `Required on create: name, address_line_1, city, state, zip_code. email must be an e-mail address. ${ADDRESS_RULES}`,
  example: { name: 'Lakeside job site', address_line_1: '200 Harbor Rd', city: 'Springfield', state: 'IL', zip_code: '62701' },
});

export const ThirdPartyPayerInput = Closed({
  name: RuleChecked, attention: RuleChecked, address_line_1: RuleChecked, address_line_2: RuleChecked, city: RuleChecked,
  state: RuleChecked, zip_code: RuleChecked, country: RuleChecked, carrier_account: RuleChecked, notes: RuleChecked,
}, {
  description: `Required on create: name, address_line_1, city, state, zip_code, carrier_account. ${ADDRESS_RULES}`,
  example: { name: 'Northgate Hardware', address_line_1: '9 Depot St', city: 'Peoria', state: 'IL', zip_code: '61602', carrier_account: 'UPS-4471X' },
});

export const DropShipLocationEnvelope = Closed({ drop_ship_location: DropShipLocation });
export const ThirdPartyPayerEnvelope = Closed({ third_party_payer: ThirdPartyPayer });
