// Customers, drop-ship locations and third-party payers as the API shows them: every column, always present.
import type { Selectable } from 'kysely';
import type { CustomersTable, DropShipLocationsTable, ThirdPartyPayersTable } from '../../db/schema.ts';

export function serializeCustomer(row: Selectable<CustomersTable>) {
  return {
    id: row.id,
    account_number: row.account_number,
    name: row.name,
    customer_type_code: row.customer_type_code,
    region: row.region,
    address_line_1: row.address_line_1,
    address_line_2: row.address_line_2,
    city: row.city,
    state: row.state,
    zip_code: row.zip_code,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

type AddressRow = Pick<Selectable<DropShipLocationsTable>,
  'id' | 'customer_id' | 'name' | 'attention' | 'address_line_1' | 'address_line_2' | 'city' | 'state' | 'zip_code' | 'country'>;

// The address both address books share.
const address = (row: AddressRow) => ({
  id: row.id,
  customer_id: row.customer_id,
  name: row.name,
  attention: row.attention,
  address_line_1: row.address_line_1,
  address_line_2: row.address_line_2,
  city: row.city,
  state: row.state,
  zip_code: row.zip_code,
  country: row.country,
});

export function serializeDropShipLocation(row: Selectable<DropShipLocationsTable>) {
  return {
    ...address(row),
    phone: row.phone,
    email: row.email,
    notes: row.notes,
    is_hidden: row.is_hidden,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function serializeThirdPartyPayer(row: Selectable<ThirdPartyPayersTable>) {
  return {
    ...address(row),
    carrier_account: row.carrier_account,
    notes: row.notes,
    is_hidden: row.is_hidden,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
