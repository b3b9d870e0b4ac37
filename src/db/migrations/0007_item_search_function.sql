-- Item search (GET /items/search) as one function: its four stages run in one round trip, its plan is made once per
-- connection (a generic plan: every stage has an index path for any value), and its trigram threshold travels with it.
-- Stages: exact normalized number or alias (1.0), prefix (0.95), substring (0.75), look-alikes (trigram similarity,
-- at least 0.3) among numbers holding at least half of the query's trigrams (word similarity >= 0.5, which the GIN
-- index answers). A stage runs only while fewer than 20 items were found.
create function search_item_numbers(q text, partner uuid)
returns table (item_id uuid, alias text, score double precision, match_type text)
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
  with exact (item_id, alias, score, match_type) as (
    select i.id, null::text, 1.0::float8, 'exact'
      from items i where i.item_number_normalized = q and (partner is null or i.manufacturer_id = partner)
    union all
    select a.item_id, a.alias, 1.0::float8, 'exact'
      from item_aliases a where a.alias_normalized = q and (partner is null or a.manufacturer_id = partner)
  ), prefix (item_id, alias, score, match_type) as (
    (select i.id, null::text, 0.95::float8, 'prefix' from items i
      where (select count(distinct e.item_id) from exact e) < 20
        and i.item_number_normalized ~>=~ q and i.item_number_normalized ~<~ prefix_end
        and (partner is null or i.manufacturer_id = partner) limit 40)
    union all
    (select a.item_id, a.alias, 0.95::float8, 'prefix' from item_aliases a
      where (select count(distinct e.item_id) from exact e) < 20
        and a.alias_normalized ~>=~ q and a.alias_normalized ~<~ prefix_end
        and (partner is null or a.manufacturer_id = partner) limit 40)
  ), before_substring as (
    select e.item_id from exact e union select p.item_id from prefix p
  ), substring (item_id, alias, score, match_type) as (
    -- The spec's MatchType has no substring value: substring hits are prefix hits with Score 0.75.
    (select i.id, null::text, 0.75::float8, 'prefix' from items i
      where (select count(*) from before_substring) < 20
        and i.item_number_normalized like contains and (partner is null or i.manufacturer_id = partner) limit 40)
    union all
    (select a.item_id, a.alias, 0.75::float8, 'prefix' from item_aliases a
      where (select count(*) from before_substring) < 20
        and a.alias_normalized like contains and (partner is null or a.manufacturer_id = partner) limit 40)
  ), before_fuzzy as (
    select b.item_id from before_substring b union select s.item_id from substring s
  ), fuzzy (item_id, alias, score, match_type) as (
    (select i.id, null::text, similarity(i.item_number_normalized, q)::float8 as similarity, 'fuzzy' from items i
      where (select count(*) from before_fuzzy) < 20
        and q <% i.item_number_normalized and (partner is null or i.manufacturer_id = partner)
      order by similarity desc limit 40)
    union all
    (select a.item_id, a.alias, similarity(a.alias_normalized, q)::float8 as similarity, 'fuzzy' from item_aliases a
      where (select count(*) from before_fuzzy) < 20
        and q <% a.alias_normalized and (partner is null or a.manufacturer_id = partner)
      order by similarity desc limit 40)
  )
  -- Each item once, with its best hit; a direct hit beats an alias hit of the same score.
  select distinct on (h.item_id) h.item_id, h.alias, h.score, h.match_type
    from (select * from exact union all select * from prefix union all select * from substring union all select * from fuzzy) h
   where h.score >= 0.3
   order by h.item_id, h.score desc, h.alias is null desc;
end $$;

-- The look-alike stage reads the GIN indexes now; the GiST ones served nearest-neighbour ordering, which is gone.
drop index items_number_knn_idx;
drop index item_aliases_knn_idx;
