import { Type } from 'typebox';
import { Closed, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';
import { DOCUMENT_ENTITY_TYPES } from './entities.ts';
import type { UploadedFile } from './upload-form.ts';

const NullableText = Nullable(Type.String());

/** The spec's Document (Order documents section), exactly. */
export const Document = Closed({
  id: Uuid,
  entity_type: Type.String(),
  entity_id: Uuid,
  manufacturer_id: Nullable(Uuid),
  file_name: Type.String(),
  file_type: Type.String(),
  storage_key: Type.String(),
  file_size: Type.Integer(),
  description: NullableText,
  uploaded_by: Uuid,
  uploaded_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  tags: Nullable(Type.Array(Type.String())),
  uploaded_by_name: NullableText,
});

export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;
export const MAX_DESCRIPTION_LENGTH = 2000;

const EntityType = Type.String({ enum: DOCUMENT_ENTITY_TYPES });
const Description = Text(MAX_DESCRIPTION_LENGTH, { description: 'Empty or blank: no description (null).' });
const Tags = Type.Array(Text(MAX_TAG_LENGTH, { minLength: 1 }), {
  maxItems: MAX_TAGS,
  description: `Repeat the field, or send one comma-separated list (or both); blanks are dropped, duplicates kept once; at most ${MAX_TAGS} tags of ${MAX_TAG_LENGTH} characters.`,
});

/** The multipart form as the API document shows it. */
export const UploadFormDoc = Closed({
  entity_type: EntityType,
  entity_id: Uuid,
  description: Type.Optional(Description),
  tags: Type.Optional(Tags),
  file: Type.Unsafe<UploadedFile>({ type: 'string', format: 'binary', description: 'The one file, with its file name.' }),
});

/** The same form as the upload's preValidation hook leaves it in request.body, which is what gets validated. */
export const UploadForm = Closed({
  entity_type: EntityType,
  entity_id: Uuid,
  description: Type.Optional(Description),
  tags: Type.Optional(Tags),
  file: Type.Unsafe<UploadedFile>({ type: 'object' }),
});

export const BinaryFile = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' });
