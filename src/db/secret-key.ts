// The service's key for sealed secrets (src/domain/secrets.ts): from WMS_SECRET_KEY, else one made on first use and
// kept in the database, so every instance of it reads the same key. The first is the better: then a dump of the
// database alone does not open the secrets.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { DB } from './schema.ts';

const KEY_NAME = 'sealed_secrets';
// Asked for on every delivery and carrier message: each key is made (or read) once.
const known = new WeakMap<Kysely<DB>, Buffer>();
let derived: { from: string; key: Buffer } | null = null;

export async function secretKeyOf(db: Kysely<DB>, config: Pick<Config, 'secretKey'>): Promise<Buffer> {
  if (config.secretKey) {
    if (derived?.from !== config.secretKey) derived = { from: config.secretKey, key: createHash('sha256').update(config.secretKey).digest() };
    return derived.key;
  }
  const cached = known.get(db);
  if (cached) return cached;
  // Two instances making it at once: one insert wins, both read the winner's.
  await db.insertInto('service_keys').values({ name: KEY_NAME, key: randomBytes(32) }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const { key } = await db.selectFrom('service_keys').select('key').where('name', '=', KEY_NAME).executeTakeFirstOrThrow();
  // PGlite hands bytea out as a Uint8Array, pg as a Buffer.
  const buffer = Buffer.from(key);
  known.set(db, buffer);
  return buffer;
}
