import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const Warehouse = Closed({
  id: Uuid,
  code: Type.String(),
  name: Type.String(),
  is_active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreateWarehouse = Closed({
  code: Text(32, { minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Unique; stored uppercase.' }),
  name: Label(200),
});

export const DEFAULT_PER_PAGE = 50;
export const ListWarehousesQuery = Closed({ ...pageParams(DEFAULT_PER_PAGE) });
