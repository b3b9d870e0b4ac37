-- Item search as migration 0029 left it, with three changes (docs/decisions.md, "Search" and "Uncached reads against
-- the floor", stops 42-43). 0029 had already been applied where it landed, so they come as a migration of their own:
-- - The wide look-alike scan runs only for a query that found nothing else. Until now a query with prefix or substring
--   hits but no exact hit and nothing one typo away got it too: numbers that share half of its trigrams, weak beside
--   the prefix hits the answer already leads with, and read from the trigram index at 2-3 ms a call where the other
--   stages together take 0.1-0.25 ms (a 5-character prefix with fewer than 20 hits: one query in six of the bench's).
--   It no longer leaves out found items: there are none.
-- - The prefix stage hands over only the hits the answer can hold: all score 0.95, so the lowest numbers in the
--   answer's order, up to 20 with the exact hits. The answer's join then reads 20 items instead of 40-80.
-- - Whether the typo stage found anything is read from FOUND instead of a counter of its own.

create or replace function search_item_numbers(q text, partner uuid)
-- stage: 1 exact, 2 prefix or substring, 3 look-alike; the order of the spec's match order.
returns table (item_id uuid, alias text, score double precision, match_type text, stage integer)
language plpgsql stable
-- A few dozen rows at most: the caller joins them to items by primary key, not by reading the catalogue.
rows 40
set plan_cache_mode = force_generic_plan
set pg_trgm.word_similarity_threshold = 0.5
as $$
#variable_conflict use_column
declare
  -- Byte-wise range of every string that starts with q (U+10FFFF sorts after any other character).
  prefix_end constant text := q || chr(1114111);
  contains constant text := '%' || replace(replace(replace(q, '\', '\\'), '%', '\%'), '_', '\_') || '%';
  typo_variants text[];
  -- The items answered so far: a later stage leaves them out.
  found_items uuid[] := '{}';
  hit record;
begin
  -- Exact: the number or an alias equals q.
  for hit in
    select distinct on (h.item_id) h.item_id, h.alias from (
      select i.id as item_id, null::text as alias
        from items i where i.item_number_normalized = q and (partner is null or i.manufacturer_id = partner)
      union all
      select a.item_id, a.alias
        from item_aliases a where a.alias_normalized = q and (partner is null or a.manufacturer_id = partner)
    ) h
    order by h.item_id, h.alias is null desc
  loop
    item_id := hit.item_id; alias := hit.alias; score := 1.0; match_type := 'exact'; stage := 1;
    return next;
    found_items := found_items || hit.item_id;
  end loop;

  -- Prefix: the first 40 in number order, read along a prefix index: one branch for all partners, one for a partner.
  -- Of those, the ones the answer can hold: all score 0.95, so the lowest numbers in the answer's order.
  if cardinality(found_items) < 20 then
    for hit in
      select d.item_id, d.alias from (
        select distinct on (h.item_id) h.item_id, h.alias, h.number from (
          (select i.id as item_id, null::text as alias, i.item_number_normalized as number from items i
            where partner is null and i.item_number_normalized ~>=~ q and i.item_number_normalized ~<~ prefix_end
            order by i.item_number_normalized using ~<~ limit 40)
          union all
          (select i.id, null::text, i.item_number_normalized from items i
            where i.manufacturer_id = partner and i.item_number_normalized ~>=~ q and i.item_number_normalized ~<~ prefix_end
            order by i.item_number_normalized using ~<~ limit 40)
          union all
          (select a.item_id, a.alias, (select i.item_number_normalized from items i where i.id = a.item_id) from item_aliases a
            where partner is null and a.alias_normalized ~>=~ q and a.alias_normalized ~<~ prefix_end
            order by a.alias_normalized using ~<~ limit 40)
          union all
          (select a.item_id, a.alias, (select i.item_number_normalized from items i where i.id = a.item_id) from item_aliases a
            where a.manufacturer_id = partner and a.alias_normalized ~>=~ q and a.alias_normalized ~<~ prefix_end
            order by a.alias_normalized using ~<~ limit 40)
        ) h
        where h.item_id <> all (found_items)
        order by h.item_id, h.alias is null desc
      ) d
      order by d.number, d.item_id limit 20 - cardinality(found_items)
    loop
      item_id := hit.item_id; alias := hit.alias; score := 0.95; match_type := 'prefix'; stage := 2;
      return next;
      found_items := found_items || hit.item_id;
    end loop;
  end if;

  -- Substring: up to 40 items whose number or an alias holds q, from the suffixes that start with q (migration 0024).
  -- The spec's MatchType has no substring value: substring hits are prefix hits with Score 0.75. The alias named is
  -- one holding q, and none when the number does.
  if cardinality(found_items) < 20 then
    for hit in
      select c.item_id,
             case when i.item_number_normalized like contains then null
               else (select a.alias from item_aliases a where a.item_id = c.item_id and a.alias_normalized like contains
                     order by a.alias_normalized limit 1) end as alias
        from (select distinct s.item_id from (
                select s.item_id from item_number_suffixes s
                 where s.suffix ~>=~ q and s.suffix ~<~ prefix_end and (partner is null or s.manufacturer_id = partner)
                   and s.item_id <> all (found_items)
                 limit 40) s) c
        join items i on i.id = c.item_id
    loop
      item_id := hit.item_id; alias := hit.alias; score := 0.75; match_type := 'prefix'; stage := 2;
      return next;
      found_items := found_items || hit.item_id;
    end loop;
  end if;

  if cardinality(found_items) >= 20 then
    return;
  end if;

  -- Look-alikes one typo away: their variants meet the query's.
  typo_variants := number_typo_variants(q);
  for hit in
    select distinct on (h.item_id) h.item_id, h.alias, h.similarity from (
      (select i.id as item_id, null::text as alias, similarity(i.item_number_normalized, q)::float8 as similarity from items i
        where number_typo_variants(i.item_number_normalized) && typo_variants
          and (partner is null or i.manufacturer_id = partner)
          and similarity(i.item_number_normalized, q) >= 0.3
          and i.id <> all (found_items)
        order by similarity desc limit 40)
      union all
      (select a.item_id, a.alias, similarity(a.alias_normalized, q)::float8 as similarity from item_aliases a
        where number_typo_variants(a.alias_normalized) && typo_variants
          and (partner is null or a.manufacturer_id = partner)
          and similarity(a.alias_normalized, q) >= 0.3
          and a.item_id <> all (found_items)
        order by similarity desc limit 40)
    ) h
    order by h.item_id, h.similarity desc, h.alias is null desc
  loop
    item_id := hit.item_id; alias := hit.alias; score := hit.similarity; match_type := 'fuzzy'; stage := 3;
    return next;
  end loop;

  -- The wide scan, for a query that found nothing else: no exact, prefix or substring hit (found_items is empty) and
  -- no look-alike one typo away (FOUND: the loop above ran at least once). Numbers holding half of the query's
  -- trigrams, of similarity 0.3 or more.
  if cardinality(found_items) = 0 and not found then
    for hit in
      select distinct on (h.item_id) h.item_id, h.alias, h.similarity from (
        (select i.id as item_id, null::text as alias, similarity(i.item_number_normalized, q)::float8 as similarity from items i
          where q <% i.item_number_normalized and (partner is null or i.manufacturer_id = partner)
          order by similarity desc limit 40)
        union all
        (select a.item_id, a.alias, similarity(a.alias_normalized, q)::float8 as similarity from item_aliases a
          where q <% a.alias_normalized and (partner is null or a.manufacturer_id = partner)
          order by similarity desc limit 40)
      ) h
      where h.similarity >= 0.3
      order by h.item_id, h.similarity desc, h.alias is null desc
    loop
      item_id := hit.item_id; alias := hit.alias; score := hit.similarity; match_type := 'fuzzy'; stage := 3;
      return next;
    end loop;
  end if;
end $$;
