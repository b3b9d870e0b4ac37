import { Type } from 'typebox';
import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf, pageParams, sendDataText, sendListTexts } from '../../http/pagination.ts';
import { sendCsvExport } from '../../http/csv-export.ts';
import { CSV, JSON_TYPE, preferredRepresentation } from '../../http/representations.ts';
import { Closed, DataEnvelope, ListEnvelope, listOrCsv, noContent, responses, Uuid } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { allItemRows, itemFilterOf, listItemsAsAsked, searchItems, withVelocitySource } from './queries.ts';
import {
  Alias, AliasParams, CreateAlias, CreateItem, DEFAULT_PER_PAGE, Discontinue, Item, ItemEnvelope, ItemLocation, ItemParams,
  ListItemsQuery, Reactivate, SearchQuery, SearchResult, UpdateItem,
} from './schemas.ts';
import { LIST_COLUMNS, serializeListItem, serializeSearchItem } from './serialize.ts';
import {
  addAlias, createItem, discontinueItem, getItemText, itemBinStock, listAliases, reactivateItem, removeAlias, updateItem,
} from './service.ts';

const tags = ['Items'];
/**
 * The export's columns: the fields a list row fills, in the order of the JSON (the rest of an item is at its zero
 * value in a list row; 26 empty columns would only double the file and the time to write it).
 */
const ITEM_COLUMNS = Object.keys(Item.properties).filter((field) => field !== 'item_number_normalized' &&
  ((LIST_COLUMNS as readonly string[]).includes(field) || field === 'manufacturer_code' || field === 'manufacturer_name'));
const view = { permission: 'inventory.view' } as const;
const edit = { permission: 'inventory.edit' } as const;

export async function itemRoutes(app: App, { db, reads, rowTexts }: ModuleDeps) {
  app.get('/items', {
    config: { ...view, readCache: { clockParams: ['movement', 'velocity'] } },
    schema: {
      tags, summary: 'List items',
      description: 'status defaults to active; filter values OR together; an unknown sort falls back to item_number. ' +
        'List rows carry the list columns; the other fields are at their zero value.',
      querystring: ListItemsQuery, response: listOrCsv(Item),
    },
  }, async (request, reply) => {
    if (preferredRepresentation(request, [JSON_TYPE, CSV]) === CSV) {
      return sendCsvExport(reply, reads, { query: allItemRows(reads, actorOf(request), await withVelocitySource(reads, itemFilterOf(request.query))), columns: ITEM_COLUMNS, fileName: 'items.csv', toRow: serializeListItem });
    }
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listItemsAsAsked(reads, actorOf(request), itemFilterOf(request.query), page, rowTexts);
    return sendListTexts(reply, rows, total, page);
  });

  app.post('/items', {
    config: edit,
    schema: { tags, summary: 'Create an item', body: CreateItem, response: responses({ 201: DataEnvelope(ItemEnvelope) }) },
  }, async (request, reply) => reply.code(201).send({ data: { item: await createItem(db, actorOf(request), request.body) } }));

  app.get('/items/search', {
    config: { ...view, readCache: { clockParams: [] } },
    schema: {
      tags, summary: 'Search items by number or alias (exact, prefix, substring, fuzzy)',
      description: 'Up to 20 matches in the spec\'s order: exact, prefix or substring, then look-alikes (fuzzy, by trigram similarity): the ' +
        'numbers and aliases one typo away (a character changed, added or dropped, two neighbours swapped); only a query that found nothing ' +
        'else (no exact, prefix or substring hit, nothing one typo away) gets the wider look-alikes that hold half of its trigrams.',
      querystring: SearchQuery, response: responses({ 200: Closed({ data: Type.Array(SearchResult, { maxItems: 20 }) }) }),
    },
  }, async (request) => {
    const hits = await searchItems(reads, actorOf(request), request.query.q, request.query.manufacturer);
    return {
      data: hits.map((hit) => ({
        Item: serializeSearchItem(hit),
        ...(hit.alias ? { AliasValue: hit.alias } : {}),
        // pg_trgm's similarity is a float4: 0.6 arrives as 0.6000000238418579. Six decimals is what it holds.
        Score: Math.round(hit.score * 1e6) / 1e6,
        MatchType: hit.match_type,
      })),
    };
  });

  app.get('/items/:id', {
    config: view,
    schema: { tags, summary: 'Get an item', params: ItemParams, response: responses({ 200: DataEnvelope(Item) }) },
  }, async (request, reply) => sendDataText(reply, await getItemText(db, rowTexts, actorOf(request), request.params.id)));

  app.patch('/items/:id', {
    config: edit,
    schema: { tags, summary: 'Update an item', params: ItemParams, body: UpdateItem, response: responses({ 200: DataEnvelope(ItemEnvelope) }) },
  }, async (request) => ({ data: { item: await updateItem(db, actorOf(request), request.params.id, request.body) } }));

  app.post('/items/:id/discontinue', {
    config: { ...edit, optionalBody: true },
    schema: {
      tags, summary: 'Discontinue an item', description: 'stock_warning is present when on-hand stock remains.',
      params: ItemParams, body: Discontinue,
      response: responses({ 200: DataEnvelope(Closed({ item: Item, stock_warning: Type.Optional(Closed({ qty_on_hand: Type.Integer() })) })) }),
    },
  }, async (request) => ({ data: await discontinueItem(db, actorOf(request), request.params.id, request.body) }));

  app.post('/items/:id/reactivate', {
    config: { ...edit, optionalBody: true },
    schema: { tags, summary: 'Reactivate a discontinued item', params: ItemParams, body: Reactivate, response: responses({ 200: DataEnvelope(ItemEnvelope) }) },
  }, async (request) => ({ data: { item: await reactivateItem(db, actorOf(request), request.params.id, request.body) } }));

  app.get('/items/:id/locations', {
    config: view,
    schema: {
      tags, summary: 'Bin stock of an item', params: ItemParams,
      response: responses({ 200: DataEnvelope(Closed({ item_id: Uuid, locations: Type.Array(ItemLocation) })) }),
    },
  }, async (request) => ({ data: await itemBinStock(db, actorOf(request), request.params.id) }));

  app.get('/items/:id/aliases', {
    config: view,
    schema: { tags, summary: 'Alias numbers of an item', params: ItemParams, querystring: Closed(pageParams(DEFAULT_PER_PAGE)), response: responses({ 200: ListEnvelope(Alias) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listAliases(db, actorOf(request), request.params.id, page);
    return listResponse(rows, total, page);
  });

  app.post('/items/:id/aliases', {
    config: edit,
    schema: { tags, summary: 'Add an alias number', params: ItemParams, body: CreateAlias, response: responses({ 201: DataEnvelope(Alias) }) },
  }, async (request, reply) => reply.code(201).send({ data: await addAlias(db, actorOf(request), request.params.id, request.body.alias) }));

  app.delete('/items/:id/aliases/:aliasId', {
    config: edit,
    schema: { tags, summary: 'Remove an alias number', params: AliasParams, response: noContent },
  }, async (request, reply) => {
    await removeAlias(db, actorOf(request), request.params.id, request.params.aliasId);
    return reply.code(204).send(null);
  });
}
