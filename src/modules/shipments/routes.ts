import { Type } from 'typebox';
import { unsupportedMediaType } from '../../domain/errors.ts';
import { actorOf } from '../../http/auth.ts';
import { DataEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { validatorCompiler } from '../../http/validation.ts';
import { CSV_TYPE, MAX_UPLOAD_BYTES } from '../receiving/spreadsheet.ts';
import { TrackingImportQuery, TrackingImportResult } from './schemas.ts';
import { importTracking, MAX_TRACKING_ROWS } from './tracking-import.ts';

const tags = ['Pick, pack and ship'];
const FileBody = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' });

export async function shipmentRoutes(app: App, { db }: ModuleDeps) {
  // The CSV is the raw body, accepted on this route only: JSON stays the rule elsewhere.
  await app.register(async (plugin) => {
    const files = plugin as App;
    files.removeAllContentTypeParsers();
    files.addContentTypeParser(CSV_TYPE, { parseAs: 'buffer', bodyLimit: MAX_UPLOAD_BYTES }, (_request, body, done) => done(null, body));
    files.post('/shipments/tracking-import', {
      config: { permission: 'shipping.edit' },
      bodyLimit: MAX_UPLOAD_BYTES,
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
      schema: {
        tags, summary: 'Import tracking numbers from a CSV file, all rows or none',
        description: `Send the file as the body with Content-Type ${CSV_TYPE} (UTF-8, a BOM and quoted fields allowed; at most ` +
          `${MAX_TRACKING_ROWS} rows). Header row: order_number or batch_number (or both), tracking_number, carrier (ups, fedex, usps, other). ` +
          'Each row sets the primary box of a completed, packed or shipped batch, named by its number or as the only such batch of the order, ' +
          'and emits shipment.tracking_updated. Rows that match no batch or several, name a batch twice, or would replace tracking a batch ' +
          'already has without confirm_overwrite=true: 422 invalid_request with details [{row, reason}], and nothing is applied. ' +
          'A missing column: 422 with details.missing_columns; an unreadable file: 400.',
        querystring: TrackingImportQuery,
        body: { content: { [CSV_TYPE]: { schema: FileBody } } },
        response: responses({ 200: DataEnvelope(TrackingImportResult) }),
      },
    }, async (request) => {
      if (!Buffer.isBuffer(request.body)) throw unsupportedMediaType(`send the file with Content-Type ${CSV_TYPE}`);
      return { data: await importTracking(db, actorOf(request), request.body, request.query.confirm_overwrite ?? false) };
    });
  });
}
