import { Type } from 'typebox';
import { EMAIL_PATTERN_SOURCE } from '../../domain/addresses.ts';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const ENTITY_TYPES = ['manufacturer', 'customer'] as const;
export const CONTACT_STATUSES = ['active', 'inactive'] as const;

const NullableText = Nullable(Type.String());

const ContactFields = {
  id: Uuid,
  first_name: NullableText,
  last_name: Type.String(),
  title: NullableText,
  email: NullableText,
  phone: NullableText,
  mobile: NullableText,
  notes: NullableText,
  is_primary: Type.Boolean(),
  status: Type.Enum(CONTACT_STATUSES),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: Nullable(Uuid),
  updated_by: Nullable(Uuid),
};

export const Contact = Closed(ContactFields, { description: 'A contact person, bare (no data wrapper).' });
export const LinkedContact = Closed({
  ...ContactFields,
  association_id: Uuid,
  role: Type.String({ description: 'Free-form role of the link (direct_ship, billing, ...); empty when none was given.' }),
}, { description: 'A contact as seen through one of its links (entity lists, create, link): bare, with the link.' });

// An empty string or null clears a field.
const Clearable = (maxLength: number) => Type.Optional(Nullable(Text(maxLength)));
// Stored trimmed like every other field: surrounding whitespace is allowed, and whitespace only clears.
const Email = Type.Optional(Nullable(Type.String({
  maxLength: 254, pattern: `^\\s*(|${EMAIL_PATTERN_SOURCE})\\s*$`, description: 'An e-mail address, stored trimmed; empty or blank clears it.', example: 'ana@acme.example',
})));
const Role = Text(60, { description: 'Free-form, e.g. direct_ship or billing; stored trimmed, looked up case-insensitively.' });

const EditableFields = {
  last_name: Label(100),
  first_name: Clearable(100),
  title: Clearable(100),
  email: Email,
  phone: Clearable(40),
  mobile: Clearable(40),
  notes: Clearable(2000),
};

export const CreateContact = Closed({
  ...EditableFields,
  is_primary: Type.Optional(Type.Boolean({ default: false })),
  role: Type.Optional(Role),
});

export const UpdateContact = Closed({ ...EditableFields, is_primary: Type.Optional(Type.Boolean()) }, {
  description: 'last_name is required; omitted fields keep their value, an empty string clears one. Status and role have their own operations.',
});

export const LinkContact = Closed({ role: Role });

const EntityType = Type.Enum(ENTITY_TYPES);
export const EntityParams = Closed({ entityType: EntityType, entityID: Uuid });
export const ContactParams = Closed({ id: Uuid });
export const AssociationParams = Closed({ id: Uuid, entityType: EntityType, entityID: Uuid });

export const DEFAULT_PER_PAGE = 50;
export const ListContactsQuery = Closed(pageParams(DEFAULT_PER_PAGE));
