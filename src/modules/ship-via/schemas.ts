import { Type } from 'typebox';
import { Closed, Label, Nullable, Text, Uuid } from '../../http/schemas.ts';

export const SHIP_VIA_MODES = ['parcel', 'ltl', 'will_call'] as const;

export const ShipVia = Closed({
  id: Uuid,
  code: Type.String(),
  description: Type.String(),
  carrier_name: Nullable(Type.String()),
  mode: Type.Enum(SHIP_VIA_MODES),
  is_active: Type.Boolean(),
}, { description: 'Ship-via code; its id is an order\'s ship_via_id.' });

export const CreateShipVia = Closed({
  code: Text(32, { minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Unique; stored uppercase.' }),
  description: Label(200),
  carrier_name: Type.Optional(Nullable(Text(120))),
  mode: Type.Enum(SHIP_VIA_MODES),
  is_active: Type.Optional(Type.Boolean()),
});
