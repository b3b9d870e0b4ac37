-- Item search's prefix stage reads the first 40 prefix hits in number order along a prefix index and stops. It took
-- any 40 of them, and with no order the generic plan read them as a bitmap: every hit of the prefix first (a 4-character
-- prefix shared by 83,333 of 1,000,000 items: 10 ms of the index before the first row, bench `search prefix`). The
-- search now answers the lowest numbers of a long prefix run, not whichever 20 the plan met first. A partner's prefix
-- stage has an index of its own (partner, number), so it does not walk every partner's numbers of that prefix to find
-- its own. The substring and look-alike stages leave out the items an earlier stage found before they take their 40:
-- a number found as a prefix hit is also a substring hit, and an item's many aliases could fill a stage's 40 with
-- hits of items already found, crowding out one found only there. The function is otherwise migration 0021's.

create index items_manufacturer_number_prefix_idx on items (manufacturer_id, item_number_normalized text_pattern_ops);
create index item_aliases_manufacturer_prefix_idx on item_aliases (manufacturer_id, alias_normalized text_pattern_ops);

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
begin
  return query
  with exact (item_id, alias, score, match_type, stage) as (
    select i.id, null::text, 1.0::float8, 'exact', 1
      from items i where i.item_number_normalized = q and (partner is null or i.manufacturer_id = partner)
    union all
    select a.item_id, a.alias, 1.0::float8, 'exact', 1
      from item_aliases a where a.alias_normalized = q and (partner is null or a.manufacturer_id = partner)
  ), exact_found (n) as (
    select count(distinct e.item_id) from exact e
  ), prefix (item_id, alias, score, match_type, stage) as (
    -- The first 40 in number order, read along a prefix index: one branch for all partners, one for a partner.
    (select i.id, null::text, 0.95::float8, 'prefix', 2 from items i
      where (select n from exact_found) < 20 and partner is null
        and i.item_number_normalized ~>=~ q and i.item_number_normalized ~<~ prefix_end
      order by i.item_number_normalized using ~<~ limit 40)
    union all
    (select i.id, null::text, 0.95::float8, 'prefix', 2 from items i
      where (select n from exact_found) < 20 and i.manufacturer_id = partner
        and i.item_number_normalized ~>=~ q and i.item_number_normalized ~<~ prefix_end
      order by i.item_number_normalized using ~<~ limit 40)
    union all
    (select a.item_id, a.alias, 0.95::float8, 'prefix', 2 from item_aliases a
      where (select n from exact_found) < 20 and partner is null
        and a.alias_normalized ~>=~ q and a.alias_normalized ~<~ prefix_end
      order by a.alias_normalized using ~<~ limit 40)
    union all
    (select a.item_id, a.alias, 0.95::float8, 'prefix', 2 from item_aliases a
      where (select n from exact_found) < 20 and a.manufacturer_id = partner
        and a.alias_normalized ~>=~ q and a.alias_normalized ~<~ prefix_end
      order by a.alias_normalized using ~<~ limit 40)
  ), before_substring as (
    select e.item_id from exact e union select p.item_id from prefix p
  ), substring (item_id, alias, score, match_type, stage) as (
    -- The spec's MatchType has no substring value: substring hits are prefix hits with Score 0.75.
    (select i.id, null::text, 0.75::float8, 'prefix', 2 from items i
      where (select count(*) from before_substring) < 20
        and i.item_number_normalized like contains and (partner is null or i.manufacturer_id = partner)
        and i.id not in (select b.item_id from before_substring b) limit 40)
    union all
    (select a.item_id, a.alias, 0.75::float8, 'prefix', 2 from item_aliases a
      where (select count(*) from before_substring) < 20
        and a.alias_normalized like contains and (partner is null or a.manufacturer_id = partner)
        and a.item_id not in (select b.item_id from before_substring b) limit 40)
  ), before_fuzzy as (
    select b.item_id from before_substring b union select s.item_id from substring s
  ), fuzzy (item_id, alias, score, match_type, stage) as (
    (select i.id, null::text, similarity(i.item_number_normalized, q)::float8 as similarity, 'fuzzy', 3 from items i
      where (select count(*) from before_fuzzy) < 20
        and q <% i.item_number_normalized and (partner is null or i.manufacturer_id = partner)
        and i.id not in (select b.item_id from before_fuzzy b)
      order by similarity desc limit 40)
    union all
    (select a.item_id, a.alias, similarity(a.alias_normalized, q)::float8 as similarity, 'fuzzy', 3 from item_aliases a
      where (select count(*) from before_fuzzy) < 20
        and q <% a.alias_normalized and (partner is null or a.manufacturer_id = partner)
        and a.item_id not in (select b.item_id from before_fuzzy b)
      order by similarity desc limit 40)
  )
  -- Each item once, with its hit of the earliest stage (a number equal to q is a look-alike of similarity 1.0 too, and
  -- a long number containing q one of more than 0.75), the best of that stage, a direct hit before an alias hit.
  select distinct on (h.item_id) h.item_id, h.alias, h.score, h.match_type, h.stage
    from (select * from exact union all select * from prefix union all select * from substring union all select * from fuzzy) h
   where h.score >= 0.3
   order by h.item_id, h.stage, h.score desc, h.alias is null desc;
end $$;
