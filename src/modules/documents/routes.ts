import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Permission } from '../../domain/roles.ts';
import { actorOf } from '../../http/auth.ts';
import { sendError, toApiError } from '../../http/errors.ts';
import { ApiError, unsupportedMediaType } from '../../domain/errors.ts';
import { DataEnvelope, ErrorEnvelope, IdParams, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { validatorCompiler } from '../../http/validation.ts';
import { ANY_READ, ANY_UPLOAD, DOCUMENT_ENTITY_TYPES, permissionTable, requireAnyPermission } from './entities.ts';
import { ACCEPTED_TYPE_LIST } from './file-types.ts';
import { BinaryFile, Document, MAX_DESCRIPTION_LENGTH, UploadForm, UploadFormDoc } from './schemas.ts';
import { attachmentDisposition } from './serialize.ts';
import { discardUncommittedFiles, getDocument, openDocument, uploadDocument, type UploadInput } from './service.ts';
import { FILE_FIELD, readUploadForm } from './upload-form.ts';

const tags = ['Documents'];
const MULTIPART = 'multipart/form-data';

/** Refuses, before the body is read, a key that holds none of the permissions the route could need. */
const holdingOneOf = (permissions: readonly Permission[], what: string) => async (request: FastifyRequest) => {
  requireAnyPermission(actorOf(request), permissions, what);
};

const readAccess = `Permission: the read permission of the record the document is filed under (${permissionTable('read')}); ` +
  'a key holding none of them is 403 at once. A partner-scoped key sees only its own partner\'s documents: another partner\'s ' +
  '(and documents of shared records such as customers) are 404.';

const uploadDescription =
  `Files a document under a record: multipart/form-data with the fields entity_type (${DOCUMENT_ENTITY_TYPES.join(', ')}), entity_id, ` +
  `description (optional, at most ${MAX_DESCRIPTION_LENGTH} characters), tags (optional: repeat the field or send a comma list) and ` +
  `exactly one file in the field "${FILE_FIELD}". The document's manufacturer_id is the record's supply partner (null for customers).\n\n` +
  `Permission: the upload permission of the record's type (${permissionTable('upload')}); a key holding none of them is 403 before the ` +
  'body is read. The record must exist and, for a partner-scoped key, belong to its partner (404 otherwise); partner-scoped keys ' +
  'cannot file under customers (403).\n\n' +
  `The type is read from the bytes, not taken from the client. Accepted: ${ACCEPTED_TYPE_LIST.join(', ')}. Anything else (executables, ` +
  'HTML, SVG, archives, macro-enabled or old binary Office files), or a file whose declared Content-Type or file name extension ' +
  'contradicts its bytes, is 415 unsupported_media_type. A file over the size limit (WMS_DOCUMENT_MAX_BYTES, 10 MiB by default) is ' +
  '413 payload_too_large. A body that is not multipart is 415; a missing or second file, an unknown field, a missing or unknown ' +
  'entity_type or a malformed entity_id is 400. A refused upload stores nothing.';

const downloadResponse = {
  description: 'The file\'s bytes, with its file_type as Content-Type and Content-Disposition: attachment (filename and filename*).',
  content: Object.fromEntries(ACCEPTED_TYPE_LIST.map((type) => [type, { schema: BinaryFile }])),
};

export async function documentRoutes(app: App, { db, config, documents }: ModuleDeps) {
  // The upload alone takes multipart bodies: JSON stays the rule everywhere else.
  await app.register(async (plugin) => {
    const uploads = plugin as App;
    uploads.removeAllContentTypeParsers();
    await uploads.register(multipart, {
      limits: { fileSize: config.documentMaxBytes, files: 1, fields: 40, parts: 41, fieldSize: 8 * 1024, headerPairs: 20 },
    });
    uploads.setErrorHandler((error, request, reply) => sendError(reply, (error as { code?: string }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
      ? unsupportedMediaType(`send the document as ${MULTIPART}`)
      : toApiError(error as Error, request)));

    // The file a request stored: if its answer is not the 201 (a later step of the request failed), no orphan stays.
    const storedBy = new WeakMap<FastifyRequest, string>();
    uploads.post('/documents', {
      onRequest: holdingOneOf(ANY_UPLOAD, 'filing documents'),
      preValidation: readUploadForm({ maxFileBytes: config.documentMaxBytes }),
      // The body is checked as the form reader leaves it (the file as an object); the document shows it as multipart.
      validatorCompiler: (route) => validatorCompiler(route.httpPart === 'body' ? { ...route, schema: UploadForm } : route),
      onResponse: async (request, reply) => {
        const key = storedBy.get(request);
        if (key && reply.statusCode !== 201) {
          await discardUncommittedFiles(db, documents, [key]).catch((err) => request.log.warn({ err, key }, 'document file left behind'));
        }
      },
      schema: {
        tags, summary: 'Upload a document', description: uploadDescription,
        body: { content: { [MULTIPART]: { schema: UploadFormDoc } } },
        response: responses({ 201: DataEnvelope(Document) }),
      },
    }, async (request, reply) => {
      const form = request.body as UploadInput;
      const document = await uploadDocument(db, documents, actorOf(request), form, (key) => storedBy.set(request, key));
      return reply.code(201).send({ data: document });
    });
  });

  app.get('/documents/:id', {
    onRequest: holdingOneOf(ANY_READ, 'reading documents'),
    schema: { tags, summary: 'Get a document\'s metadata', description: readAccess, params: IdParams, response: responses({ 200: DataEnvelope(Document) }) },
  }, async (request) => ({ data: await getDocument(db, actorOf(request), request.params.id) }));

  app.get('/documents/:id/download', {
    onRequest: holdingOneOf(ANY_READ, 'reading documents'),
    schema: {
      tags, summary: 'Download a document\'s file',
      description: `${readAccess} A document whose file is missing from storage is 404 as well.`,
      params: IdParams,
      response: { 200: downloadResponse, '4xx': ErrorEnvelope, '5xx': ErrorEnvelope },
    },
  }, async (request, reply) => {
    const { document, file } = await openDocument(db, documents, actorOf(request), request.params.id);
    if (!file) {
      request.log.error({ documentId: document.id, storageKey: document.storage_key }, 'document file missing from storage');
      throw new ApiError(404, 'not_found', 'the file of this document is missing from storage');
    }
    // The answer is a stream, which the reply type (inferred from the JSON schemas) does not know.
    return (reply as FastifyReply)
      .header('content-type', document.file_type.startsWith('text/') ? `${document.file_type}; charset=utf-8` : document.file_type)
      .header('content-length', file.size)
      .header('content-disposition', attachmentDisposition(document.file_name))
      // The bytes are a download, never a page: no sniffing, no scripts, not kept by shared caches.
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', 'default-src \'none\'; sandbox')
      .header('cache-control', 'private, no-store')
      .send(file.stream);
  });
}
