-- What an item search and a q= page of items pay PostgreSQL for on every request besides their reads: planning.
-- Measured with pgbench on the bench data (100,000 items, 4 clients, docs/decisions.md, "Uncached reads against the
-- floor", stop 42).

-- The number and, from 5 characters on, each string made by dropping one of its characters: migration 0023's function,
-- in PL/pgSQL. As SQL with a subquery in its body PostgreSQL cannot inline it, so every statement that called it parsed
-- and planned that body again: 0.1 ms of each search, which calls it for the query. PL/pgSQL keeps its plans for the
-- session. Its results are the same, so the indexes over it (migration 0023) stay as they are; built anew, they take
-- less time than with the SQL body (5.0 s against 6.9 s for items at 100,000).
create or replace function number_typo_variants(n text) returns text[]
language plpgsql immutable strict parallel safe
as $$
declare
  variants text[] := array[n];
begin
  if length(n) < 5 then
    return variants;
  end if;
  for p in 1 .. length(n) loop
    variants := variants || overlay(n placing '' from p for 1);
  end loop;
  return variants;
end $$;

-- The keys of the items a q= text matches, each once: those whose description holds `pattern` (the description's
-- trigram index) or whose number or an alias holds `number`, normalized (the suffixes of migration 0024; none when
-- null). The item list reads its q= page sorted by number from these keys (items/queries.ts, matchKeysAs).
-- Sent as a statement, the LIKE made the service plan it anew for each text (db/connect.ts, PLANNED_PER_VALUE), and
-- the plan was most of its cost: 0.7-0.9 ms of planning against 0.1-3 ms of execution for four digits. Here it is
-- planned once per connection. The generic plan reads the same indexes a planned-per-value one does for any text of 3
-- characters or more (test/query-plans.test.ts); for a text of one or two characters, which matches most of the
-- catalogue either way, it reads the whole trigram index where a plan for that text reads the table (362 ms against
-- 236 ms at 100,000 items), bounded by the statement timeout. No parallel workers: a generic plan went parallel and
-- took 10-13 ms where one process takes 1-3 (stop 34).
create function item_matches(number text, pattern text)
returns table (id uuid, manufacturer_id uuid, status text, item_number_normalized text)
language plpgsql stable
rows 100
set plan_cache_mode = force_generic_plan
set max_parallel_workers_per_gather = 0
as $$
#variable_conflict use_column
begin
  return query
  -- union, not union all: an item can match by description and number, or at two places of its number.
  select d.id, d.manufacturer_id, d.status::text, d.item_number_normalized from items d
   where d.description ilike pattern
  union
  select x.item_id, x.manufacturer_id, x.status, x.item_number_normalized from item_number_suffixes x
   where number is not null and x.suffix ~>=~ number and x.suffix ~<~ (number || chr(1114111));
end $$;
