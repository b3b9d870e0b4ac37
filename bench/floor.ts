// The floor: the cheapest request this stack can serve (Fastify + one `select 1` through the service's own pool setup),
// so an endpoint's requests/s can be read as a fraction of what the HTTP server and driver allow on this machine.
import Fastify from 'fastify';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/connect.ts';

export async function startFloor(url: string, port: number, poolSize: number) {
  const database = connectPostgres(url, { poolSize });
  // No logger: the service runs at LOG_LEVEL=warn, which writes nothing per request either.
  const app = Fastify({ logger: false });
  app.get('/floor', async () => {
    const result = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    return { data: result.rows[0] };
  });
  app.addHook('onClose', () => database.close());
  await app.listen({ host: '127.0.0.1', port });
  return app;
}

// As a child process of run.ts: FLOOR_DATABASE_URL, PORT, WMS_DB_POOL_SIZE (the service's own pool variable).
if (import.meta.main) {
  const url = process.env.FLOOR_DATABASE_URL;
  if (!url) throw new Error('FLOOR_DATABASE_URL is required');
  const app = await startFloor(url, Number(process.env.PORT ?? 18182), Number(process.env.WMS_DB_POOL_SIZE ?? 10));
  const stop = () => void app.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
