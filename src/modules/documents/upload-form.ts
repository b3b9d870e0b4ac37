// Reading the multipart upload form into request.body before validation: the fields, and the one file in memory
// (bounded by the size limit), so that validation and the Idempotency-Key fingerprint see the whole request.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { ApiError, badRequest, unsupportedMediaType } from '../../domain/errors.ts';

const FIELDS = new Set(['entity_type', 'entity_id', 'description', 'tags']);
export const FILE_FIELD = 'file';
export const MAX_FILE_NAME_LENGTH = 255;

/**
 * The uploaded file. Its bytes are a private field: the request fingerprint of Idempotency-Key walks the body's own
 * keys and so counts the file by its digest, not byte by byte.
 */
export class UploadedFile {
  readonly file_name: string;
  readonly declared_type: string;
  readonly size: number;
  readonly sha256: string;
  readonly #bytes: Buffer;
  constructor(fileName: string, declaredType: string, bytes: Buffer) {
    this.file_name = fileName;
    this.declared_type = declaredType;
    this.size = bytes.length;
    this.sha256 = createHash('sha256').update(bytes).digest('hex');
    this.#bytes = bytes;
  }
  get bytes(): Buffer {
    return this.#bytes;
  }
}

/** The file name without any folder a client put before it, without control characters, at most 255 characters. */
export function cleanFileName(raw: string): string {
  const name = (raw.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  const chars = [...name];
  if (chars.length <= MAX_FILE_NAME_LENGTH) return name;
  // Too long: the stem is cut, the extension kept.
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  return chars.slice(0, MAX_FILE_NAME_LENGTH - [...extension].length).join('').replace(/\.$/, '') + extension;
}

export interface UploadLimits {
  maxFileBytes: number;
}

const tooLarge = (maxBytes: number) => new ApiError(413, 'payload_too_large', `the file is larger than ${maxBytes} bytes`);

async function readWhole(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Errors of the multipart parser and of busboy, as the client's fault they are. */
function parserError(error: unknown, limits: UploadLimits): ApiError {
  if (error instanceof ApiError) return error;
  const { code, message } = error as { code?: string; message?: string };
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE': return tooLarge(limits.maxFileBytes);
    case 'FST_FILES_LIMIT': return badRequest('send exactly one file, in the field "file"');
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT': return badRequest('the form has too many fields');
    case 'FST_PROTO_VIOLATION': return badRequest('the form has a field of a forbidden name');
    case 'FST_INVALID_JSON_FIELD_ERROR': return badRequest('a form field declared as JSON is not valid JSON');
  }
  return badRequest(`malformed multipart body: ${message ?? 'unreadable'}`);
}

/**
 * preValidation of the upload: reads every part (an early refusal would leave the rest of the body unread), then
 * refuses the first problem it met. 415 when the body is not multipart/form-data.
 */
export function readUploadForm(limits: UploadLimits) {
  return async (request: FastifyRequest) => {
    if (!request.isMultipart()) throw unsupportedMediaType('send the document as multipart/form-data');
    const fields: Record<string, string[]> = {};
    let file: UploadedFile | undefined;
    let problem: ApiError | null = null;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          const bytes = await readWhole(part.file);
          if (part.fieldname !== FILE_FIELD) problem ??= badRequest(`the file must be sent in the field "${FILE_FIELD}", not "${part.fieldname}"`);
          else if (part.file.truncated) problem ??= tooLarge(limits.maxFileBytes);
          else if (bytes.length === 0) problem ??= badRequest('the file is empty');
          else file = new UploadedFile(cleanFileName(part.filename ?? ''), part.mimetype, bytes);
        } else if (!FIELDS.has(part.fieldname)) {
          problem ??= badRequest(`${part.fieldname} is not a field of the upload form`);
        } else if (part.valueTruncated) {
          problem ??= badRequest(`${part.fieldname} is too long`);
        } else {
          (fields[part.fieldname] ??= []).push(String(part.value));
        }
      }
    } catch (error) {
      throw parserError(error, limits);
    }
    if (problem) throw problem;
    request.body = formBody(fields, file);
  };
}

function single(fields: Record<string, string[]>, name: string): string | undefined {
  const values = fields[name];
  if (values && values.length > 1) throw badRequest(`${name} was sent ${values.length} times; send it once`);
  return values?.[0];
}

/** The form's fields as the UploadForm schema wants them; absent ones are left out so that the schema names them. */
function formBody(fields: Record<string, string[]>, file: UploadedFile | undefined) {
  const entityType = single(fields, 'entity_type');
  const entityId = single(fields, 'entity_id');
  const description = single(fields, 'description')?.trim();
  const tags = [...new Set((fields.tags ?? []).flatMap((value) => value.split(',')).map((tag) => tag.trim()).filter(Boolean))];
  return {
    ...(entityType !== undefined ? { entity_type: entityType.trim() } : {}),
    ...(entityId !== undefined ? { entity_id: entityId.trim() } : {}),
    ...(description ? { description } : {}),
    ...(tags.length ? { tags } : {}),
    ...(file ? { file } : {}),
  };
}
