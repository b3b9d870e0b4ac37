import { Type } from 'typebox';
import { actorOf } from '../../http/auth.ts';
import { unsupportedMediaType } from '../../domain/errors.ts';
import { DataEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { validatorCompiler } from '../../http/validation.ts';
import { deleteProfile, getProfile, importFile, putProfile } from './file-import.ts';
import { importBatch } from './import.ts';
import { ImportBatch, ImportFileQuery, ImportResult, ManufacturerParams, Profile, PutProfile } from './schemas.ts';
import { CSV_TYPE, MAX_DATA_ROWS, MAX_UPLOAD_BYTES, XLSX_TYPE } from './spreadsheet.ts';

const tags = ['Receiving'];
const importing = { permission: 'inventory.import' } as const;
const imported = responses({ 201: DataEnvelope(ImportResult) });
const scoped404 = 'A partner-scoped key gets 404 for another partner.';
const FileBody = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' });

export async function importRoutes(app: App, { db }: ModuleDeps) {
  app.post('/receiving/import', {
    config: importing,
    schema: {
      tags, summary: 'Import a draft batch from JSON lines',
      description: 'Each line becomes a line with qty_expected = qty_received. Lines naming an unknown item, another partner\'s item or an unusable ' +
        'location are reported in skipped (index, reason, item_id) and the rest imported; when none is left: 422 invalid_request. ' +
        'A partner-scoped key imports only for its own partner (else 403).',
      body: ImportBatch, response: imported,
    },
  }, async (request, reply) => reply.code(201).send({ data: await importBatch(db, actorOf(request), request.body) }));

  // The file upload is a raw body (text/csv or the XLSX type), accepted on this route only: JSON stays the rule elsewhere.
  await app.register(async (plugin) => {
    const files = plugin as App;
    files.removeAllContentTypeParsers();
    files.addContentTypeParser([CSV_TYPE, XLSX_TYPE], { parseAs: 'buffer', bodyLimit: MAX_UPLOAD_BYTES }, (_request, body, done) => done(null, body));
    files.post('/receiving/import-file', {
      config: importing,
      bodyLimit: MAX_UPLOAD_BYTES,
      // The body is a file, not JSON: only the query string is validated by schema.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
      schema: {
        tags, summary: 'Import a draft batch from a CSV or XLSX file, read with the partner\'s import profile',
        description: `Send the file as the body with Content-Type ${CSV_TYPE} or ${XLSX_TYPE} (at most ${MAX_UPLOAD_BYTES / 1024 / 1024} MB, ` +
          `${MAX_DATA_ROWS} data rows). Item numbers match the partner's items by normalized number or alias; unknown ones are reported ` +
          'in skipped (index = the row number in the file). Unreadable files, a header row past the end, missing mapped columns, formulas, ' +
          'cells over 1000 characters and quantities that are not whole numbers >= 1 are 400 and import nothing. No profile: 422. ' +
          'A partner-scoped key imports only for its own partner (else 403).',
        querystring: ImportFileQuery,
        body: { content: { [CSV_TYPE]: { schema: FileBody }, [XLSX_TYPE]: { schema: FileBody } } },
        response: imported,
      },
    }, async (request, reply) => {
      if (!Buffer.isBuffer(request.body)) throw unsupportedMediaType(`send the file with Content-Type ${CSV_TYPE} or ${XLSX_TYPE}`);
      const kind = request.headers['content-type']?.toLowerCase().startsWith(CSV_TYPE) ? 'csv' : 'xlsx';
      return reply.code(201).send({ data: await importFile(db, actorOf(request), request.query.manufacturer_id, request.body, kind) });
    });
  });

  app.get('/receiving/import-profiles/:manufacturerId', {
    config: importing,
    schema: { tags, summary: 'Get a partner\'s import profile', description: `404 when the partner has none. ${scoped404}`, params: ManufacturerParams, response: responses({ 200: DataEnvelope(Profile) }) },
  }, async (request) => ({ data: await getProfile(db, actorOf(request), request.params.manufacturerId) }));

  app.put('/receiving/import-profiles/:manufacturerId', {
    config: importing,
    schema: {
      tags, summary: 'Replace a partner\'s import profile',
      description: `A full upsert. Two fields mapped to the same header: 422 invalid_request. ${scoped404}`,
      params: ManufacturerParams, body: PutProfile, response: responses({ 200: DataEnvelope(Profile) }),
    },
  }, async (request) => ({ data: await putProfile(db, actorOf(request), request.params.manufacturerId, request.body) }));

  app.delete('/receiving/import-profiles/:manufacturerId', {
    config: importing,
    schema: { tags, summary: 'Delete a partner\'s import profile', description: scoped404, params: ManufacturerParams, response: noContent },
  }, async (request, reply) => {
    await deleteProfile(db, actorOf(request), request.params.manufacturerId);
    return reply.code(204).send(null);
  });
}
