import type { Selectable } from 'kysely';
import type { DocumentsTable } from '../../db/schema.ts';

export type DocumentRow = Selectable<DocumentsTable> & { uploaded_by_name: string | null };

/** A documents row with its uploader's name, as the spec's Document. */
export function serializeDocument(row: DocumentRow) {
  return {
    id: row.id,
    entity_type: row.entity_type,
    entity_id: row.entity_id,
    manufacturer_id: row.manufacturer_id,
    file_name: row.file_name,
    file_type: row.file_type,
    storage_key: row.storage_key,
    file_size: row.file_size,
    description: row.description,
    uploaded_by: row.uploaded_by,
    uploaded_at: row.uploaded_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    tags: row.tags,
    uploaded_by_name: row.uploaded_by_name,
  };
}

export type Document = ReturnType<typeof serializeDocument>;

/** Content-Disposition of a download: a plain ASCII name for old clients, the exact UTF-8 name (RFC 6266) for others. */
export function attachmentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  const exact = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
