// Query plans of what a GET runs: shared by test/query-plans.test.ts (20,000 items, in CI) and the bench's `plans`
// section (the large data set: 1,000,000 items, 10,000,000 movements, 1,000,000 orders).
import { createQueryId, sql, type Kysely, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { containsPattern } from '../src/db/like.ts';
import type { DB } from '../src/db/schema.ts';

export const BIG_TABLES = ['items', 'item_stock_state', 'item_aliases', 'item_number_suffixes', 'inventory_movements', 'orders', 'pick_batches', 'webhook_deliveries', 'item_locations'];

/** Records every query a database handle runs, for plansOf. */
export function queryRecorder() {
  const captured: RootOperationNode[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      captured.push(node);
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { plugin, captured };
}

export function literal(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `'{${value.map((v) => `"${String(v)}"`).join(',')}}'`;
  return `'${String(value).replace(/'/g, "''")}'`;
}

/** The name of a month of a partitioned table ends so: inventory_movements_2026_05, inventory_movements_default. */
export const MONTH_SUFFIX = /_(\d{4}_\d{2}|default)$/;

export function seqScans(plan: unknown): string[] {
  const found: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    // A month of a partitioned table counts as the table.
    const table = String(node['Relation Name']).replace(MONTH_SUFFIX, '');
    if (node['Node Type'] === 'Seq Scan' && BIG_TABLES.includes(table)) found.push(node['Relation Name'] as string);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(plan as Record<string, unknown>);
  return found;
}

/** Every scan of a relation in a plan: its node type (Seq Scan, Index Scan, ...), the relation and the index it reads. */
export function scansOf(plan: unknown): { type: string; relation: string; index?: string }[] {
  const found: { type: string; relation: string; index?: string }[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (typeof node['Relation Name'] === 'string') found.push({ type: node['Node Type'] as string, relation: node['Relation Name'], index: node['Index Name'] as string | undefined });
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(plan as Record<string, unknown>);
  return found;
}

/** Every relation a plan reads. */
export function relationsOf(plan: unknown): string[] {
  return scansOf(plan).map((scan) => scan.relation);
}

/**
 * The plan of a compiled query, prepared and explained with the values it ran with: the plan made for those values, or
 * with `kept` the generic plan, which a named statement runs with from its sixth call on when it costs no more; with
 * `analyze` run, with each node's actual rows and loops.
 */
export function planOf(db: Kysely<DB>, query: { sql: string; parameters: readonly unknown[] }, { kept = false, analyze = false } = {}): Promise<unknown> {
  return db.connection().execute(async (connection) => {
    await sql.raw(`prepare plan_probe as ${query.sql}`).execute(connection);
    if (kept) await sql`set plan_cache_mode = force_generic_plan`.execute(connection);
    try {
      const values = query.parameters.map(literal);
      const result = await sql.raw<{ 'QUERY PLAN': [{ Plan: unknown }] }>(
        `explain (${analyze ? 'analyze, ' : ''}format json) execute plan_probe${values.length ? `(${values.join(', ')})` : ''}`,
      ).execute(connection);
      return result.rows[0]!['QUERY PLAN'][0].Plan;
    } finally {
      if (kept) await sql`reset plan_cache_mode`.execute(connection);
      await sql.raw('deallocate plan_probe').execute(connection);
    }
  });
}

/** The plans of the recorded queries on the big tables, each prepared and explained with the values it ran with (see planOf for `kept`). */
export async function plansOfRecorded(db: Kysely<DB>, nodes: readonly RootOperationNode[], options: { kept?: boolean } = {}): Promise<{ sql: string; plan: unknown }[]> {
  const queries = nodes.map((node) => db.getExecutor().compileQuery(node, createQueryId()))
    .filter((q) => /^\s*\(?\s*(select|with)/i.test(q.sql) && BIG_TABLES.some((table) => q.sql.includes(`"${table}"`) || q.sql.includes(` ${table} `)));
  const plans: { sql: string; plan: unknown }[] = [];
  for (const query of queries) plans.push({ sql: query.sql, plan: await planOf(db, query, options) });
  return plans;
}

/**
 * A PL/pgSQL function whose statements run with generic plans (`plan_cache_mode = force_generic_plan` on the function):
 * its variables as the parameters of those statements (name and type, in order; a name that holds another comes
 * first), and a call's values for them as SQL expressions.
 */
export interface PlannedFunction<A extends unknown[]> {
  name: string;
  variables: [string, string][];
  values: (...args: A) => string[];
}

/** Item search (migrations 0030 and 0023): q, and the partner or null. No item found yet, so every stage's statement runs. */
export const SEARCH_FUNCTION: PlannedFunction<[string, string | null]> = {
  name: 'search_item_numbers',
  variables: [['prefix_end', 'text'], ['contains', 'text'], ['typo_variants', 'text[]'], ['found_items', 'uuid[]'], ['partner', 'uuid'], ['q', 'text']],
  values: (q, partner) => [`${literal(q)} || chr(1114111)`, literal(containsPattern(q)), `number_typo_variants(${literal(q)})`, `'{}'::uuid[]`, literal(partner), literal(q)],
};

/** The item list's q= matches (migration 0028): the normalized number or null, and the text. */
export const ITEM_MATCHES_FUNCTION: PlannedFunction<[string | null, string]> = {
  name: 'item_matches',
  variables: [['number', 'text'], ['pattern', 'text']],
  values: (number, text) => [literal(number), literal(containsPattern(text))],
};

/**
 * The generic plans a function runs with, one per call: each of its statements (a `return query`, or the query of a
 * `for hit in ... loop`) prepared with the function's variables as parameters, under the function's own settings, and
 * explained with the call's values. A call's statements' plans are the children of one node, walked as one plan.
 */
export async function functionPlans<A extends unknown[]>(db: Kysely<DB>, fn: PlannedFunction<A>, calls: A[]): Promise<unknown[]> {
  const { rows } = await sql<{ body: string; settings: string[] }>`
    select prosrc as body, proconfig as settings from pg_proc where proname = ${fn.name}`.execute(db);
  const { body, settings } = rows[0]!;
  if (!settings?.includes('plan_cache_mode=force_generic_plan')) throw new Error(`${fn.name} does not run with generic plans`);
  const statements = [...body.replace(/--.*$/gm, '').matchAll(/\breturn query\b([\s\S]*?);|\bfor hit in\b([\s\S]*?)\bloop\b/g)]
    .map((match) => fn.variables.reduce((text, [variable], i) => text.replace(new RegExp(`\\b${variable}\\b`, 'g'), `$${i + 1}`), match[1] ?? match[2]!));
  if (!statements.length) throw new Error(`${fn.name}: no statement found`);
  return db.connection().execute(async (connection) => {
    for (const setting of settings) await sql.raw(`set ${setting.replace('=', ' = ')}`).execute(connection);
    const types = fn.variables.map(([, type]) => type).join(', ');
    const prepared: string[] = [];
    try {
      for (const [k, statement] of statements.entries()) {
        await sql.raw(`prepare function_probe_${k} (${types}) as ${statement}`).execute(connection);
        prepared.push(`function_probe_${k}`);
      }
      const plans: unknown[] = [];
      for (const call of calls) {
        const values = fn.values(...call).join(', ');
        const each: unknown[] = [];
        for (const name of prepared) {
          each.push((await sql.raw<{ 'QUERY PLAN': [{ Plan: unknown }] }>(`explain (format json) execute ${name}(${values})`)
            .execute(connection)).rows[0]!['QUERY PLAN'][0].Plan);
        }
        plans.push({ 'Node Type': `Function ${fn.name}`, Plans: each });
      }
      return plans;
    } finally {
      // One by one: the connection holds the service's own prepared statements too.
      for (const name of prepared) await sql.raw(`deallocate ${name}`).execute(connection);
      await sql.raw('reset all').execute(connection);
    }
  });
}

/**
 * The lists, filters, searches and ledgers whose plans must read the page (an index), never a big table whole.
 * Velocity as the kept year of shipments answers it (migration 0043); in the minute after the day turns it reads the
 * ledger, which is not checked here. Not a stock condition matching most items together with a filter only items
 * holds (movement=30d&category=…): PostgreSQL rightly reads the narrow stock state whole for it.
 */
export function pagedReads(partner: string, customer: string): string[] {
  return [
    '/api/v1/items', '/api/v1/items?sort=mfg_code', '/api/v1/items?sort=description', '/api/v1/items?sort=on_hand_desc',
    '/api/v1/items?sort=on_hand_asc', '/api/v1/items?sort=available_asc', '/api/v1/items?sort=last_movement_desc',
    '/api/v1/items?q=plan', '/api/v1/items?filter=oversold&sort=description', '/api/v1/items?filter=below_reorder&category=C1',
    `/api/v1/items?filter=below_reorder&manufacturer=${partner}`, '/api/v1/items?movement=30d&sort=on_hand_asc',
    '/api/v1/items?filter=negative&filter=oversold&filter=out_of_stock&filter=below_reorder&filter=missing_price',
    '/api/v1/items?filter=below_reorder', '/api/v1/items?movement=90d', '/api/v1/items?category=X&uom=EA&location=A',
    `/api/v1/items?manufacturer=${partner}`, '/api/v1/items?status=discontinued',
    '/api/v1/items?sort=on_hand_desc&category=C1', '/api/v1/items?sort=available_asc&category=C1',
    '/api/v1/items/search?q=PLAN-1', '/api/v1/items/search?q=PLA', '/api/v1/items/search?q=PALN-1',
    `/api/v1/inventory/movements?manufacturer=${partner}`, '/api/v1/inventory/movements', '/api/v1/inventory/adjustments',
    '/api/v1/orders', '/api/v1/orders?status=open', '/api/v1/orders?status=shipped', `/api/v1/orders?manufacturer=${partner}`,
    `/api/v1/orders?manufacturer=${partner}&status=released`, `/api/v1/orders?customer=${customer}`, '/api/v1/orders?priority=rush&status=open',
    '/api/v1/orders?from=2026-01-01&to=2026-01-31', '/api/v1/orders?aged_hours=48', '/api/v1/orders?q=100123',
    '/api/v1/pick-batches', '/api/v1/pick-batches?status=shipped', `/api/v1/pick-batches?manufacturer=${partner}`,
    '/api/v1/pick-batches?status=in_progress', '/api/v1/locations', '/api/v1/locations?page=5',
    '/api/v1/exceptions', '/api/v1/exceptions?awaiting_supply_partner=0', '/api/v1/exceptions?awaiting_supply_partner=1',
    '/api/v1/items?velocity=fast', '/api/v1/items?velocity=slow&page=3', '/api/v1/items?velocity=dead', `/api/v1/items?velocity=slow&manufacturer=${partner}`,
  ];
}
