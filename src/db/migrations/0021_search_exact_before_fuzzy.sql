-- Item search follows the spec's match order: exact, then prefix or substring, then look-alikes. A number equal to
-- the query is found by the exact stage (1.0) and, while fewer than 20 items were found, by the look-alike stage
-- with similarity 1.0; a long number containing the query is a substring hit (0.75) and a look-alike of more than
-- 0.75. Each item's hit was picked by score alone, so an exact hit could come back as fuzzy (which of two equal
-- scores won depended on the plan; a black-box run saw BT-B1 answered fuzzy) and a substring hit as a look-alike.
-- Each item's hit is now the earliest stage's, and the function returns the stage, by which the caller orders its
-- results first. The function is otherwise migration 0007's.

drop function search_item_numbers(text, uuid);
create function search_item_numbers(q text, partner uuid)
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
begin
  return query
  with exact (item_id, alias, score, match_type, stage) as (
    select i.id, null::text, 1.0::float8, 'exact', 1
      from items i where i.item_number_normalized = q and (partner is null or i.manufacturer_id = partner)
    union all
    select a.item_id, a.alias, 1.0::float8, 'exact', 1
      from item_aliases a where a.alias_normalized = q and (partner is null or a.manufacturer_id = partner)
  ), prefix (item_id, alias, score, match_type, stage) as (
    (select i.id, null::text, 0.95::float8, 'prefix', 2 from items i
      where (select count(distinct e.item_id) from exact e) < 20
        and i.item_number_normalized ~>=~ q and i.item_number_normalized ~<~ prefix_end
        and (partner is null or i.manufacturer_id = partner) limit 40)
    union all
    (select a.item_id, a.alias, 0.95::float8, 'prefix', 2 from item_aliases a
      where (select count(distinct e.item_id) from exact e) < 20
        and a.alias_normalized ~>=~ q and a.alias_normalized ~<~ prefix_end
        and (partner is null or a.manufacturer_id = partner) limit 40)
  ), before_substring as (
    select e.item_id from exact e union select p.item_id from prefix p
  ), substring (item_id, alias, score, match_type, stage) as (
    -- The spec's MatchType has no substring value: substring hits are prefix hits with Score 0.75.
    (select i.id, null::text, 0.75::float8, 'prefix', 2 from items i
      where (select count(*) from before_substring) < 20
        and i.item_number_normalized like contains and (partner is null or i.manufacturer_id = partner) limit 40)
    union all
    (select a.item_id, a.alias, 0.75::float8, 'prefix', 2 from item_aliases a
      where (select count(*) from before_substring) < 20
        and a.alias_normalized like contains and (partner is null or a.manufacturer_id = partner) limit 40)
  ), before_fuzzy as (
    select b.item_id from before_substring b union select s.item_id from substring s
  ), fuzzy (item_id, alias, score, match_type, stage) as (
    (select i.id, null::text, similarity(i.item_number_normalized, q)::float8 as similarity, 'fuzzy', 3 from items i
      where (select count(*) from before_fuzzy) < 20
        and q <% i.item_number_normalized and (partner is null or i.manufacturer_id = partner)
      order by similarity desc limit 40)
    union all
    (select a.item_id, a.alias, similarity(a.alias_normalized, q)::float8 as similarity, 'fuzzy', 3 from item_aliases a
      where (select count(*) from before_fuzzy) < 20
        and q <% a.alias_normalized and (partner is null or a.manufacturer_id = partner)
      order by similarity desc limit 40)
  )
  -- Each item once, with its hit of the earliest stage (a number equal to q is a look-alike of similarity 1.0 too, and
  -- a long number containing q one of more than 0.75), the best of that stage, a direct hit before an alias hit.
  select distinct on (h.item_id) h.item_id, h.alias, h.score, h.match_type, h.stage
    from (select * from exact union all select * from prefix union all select * from substring union all select * from fuzzy) h
   where h.score >= 0.3
   order by h.item_id, h.stage, h.score desc, h.alias is null desc;
end $$;
