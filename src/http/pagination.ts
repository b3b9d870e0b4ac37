// page / per_page of every list (CONTRACT: integers >= 1, per_page above 100 is clamped) and the list meta.
import type { FastifyReply } from 'fastify';
import { sql, type RawBuilder } from 'kysely';
import { Type } from 'typebox';

export const MAX_PER_PAGE = 100;

/** Query properties of a paged list; spread them into the list's query schema. */
export function pageParams(defaultPerPage: number) {
  return {
    // page's maximum keeps the offset exact (at most 10^9 rows in); per_page needs none: any larger value reads as
    // MAX_PER_PAGE (CONTRACT), however large.
    page: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 1, description: 'Page number, from 1.' }),
    per_page: Type.Integer({ minimum: 1, default: defaultPerPage, description: `Rows per page; above ${MAX_PER_PAGE} reads as ${MAX_PER_PAGE}.` }),
  };
}

export interface Page {
  page: number;
  perPage: number;
  offset: number;
}

/** The page of an export: every row. */
export const EVERY_ROW: Page = { page: 1, perPage: 2 ** 31 - 1, offset: 0 };

export function pageOf(query: { page?: number; per_page?: number }, defaultPerPage: number): Page {
  const page = query.page ?? 1;
  const perPage = Math.min(query.per_page ?? defaultPerPage, MAX_PER_PAGE);
  return { page, perPage, offset: (page - 1) * perPage };
}

/**
 * One page of a list query (`query.$call(onePage(page))`). The page size is written into the statement (a literal, at
 * most MAX_PER_PAGE of them) and the first page has no offset, so the first page of a list (the one every screen opens)
 * has no parameter that its plan depends on: PostgreSQL keeps one plan for it per connection instead of planning it on
 * every request, which cost as much as running it (docs/decisions.md, "Plans kept for first pages").
 */
export function onePage(page: Page) {
  return <Q extends { limit(value: RawBuilder<number>): Q; offset(value: number): Q }>(query: Q): Q => {
    const limited = query.limit(sql.lit(page.perPage));
    return page.offset > 0 ? limited.offset(page.offset) : limited;
  };
}

export function listResponse<T>(data: T[], totalCount: number, page: Page) {
  return {
    data,
    meta: {
      page: page.page,
      per_page: page.perPage,
      total_count: totalCount,
      total_pages: Math.ceil(totalCount / page.perPage),
    },
  };
}

/**
 * A list page made of its rows' JSON texts (http/row-texts.ts), sent as it is: the same {data, meta} as listResponse,
 * without parsing and serializing the rows again.
 */
export function sendListTexts(reply: FastifyReply, rowTexts: string[], totalCount: number, page: Page): FastifyReply {
  const { meta } = listResponse([], totalCount, page);
  return reply.type('application/json; charset=utf-8').send(`{"data":[${rowTexts.join(',')}],"meta":${JSON.stringify(meta)}}`);
}

/** An answer {data} made of one row's JSON text (http/row-texts.ts), sent as it is. */
export function sendDataText(reply: FastifyReply, rowText: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(`{"data":${rowText}}`);
}
