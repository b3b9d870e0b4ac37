import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const Manufacturer = Closed({
  id: Uuid,
  code: Type.String(),
  name: Type.String(),
  is_active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { description: 'Supply partner (consignor) whose stock the warehouse holds.' });

const Code = Text(32, { minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Unique; stored uppercase.' });
const Name = Label(200);

export const CreateManufacturer = Closed({ code: Code, name: Name });
export const UpdateManufacturer = Closed({ code: Type.Optional(Code), name: Type.Optional(Name), is_active: Type.Optional(Type.Boolean()) });

export const DEFAULT_PER_PAGE = 50;
export const ListManufacturersQuery = Closed({
  q: Type.Optional(Text(200, { description: 'Substring of code or name, case-insensitive.' })),
  is_active: Type.Optional(Type.Boolean()),
  ...pageParams(DEFAULT_PER_PAGE),
});
