-- Item search's substring stage reads the suffixes of numbers and aliases (migration 0024) instead of their trigram
-- indexes: at 1,000,000 items the trigram scan was most of a search's 3-5 ms (docs/decisions.md). The stage takes the
-- first 40 items in suffix order, as the trigram scan took 40 numbers and 40 aliases in the order it found them. The
-- function is otherwise migration 0023's.

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
  typo_variants constant text[] := number_typo_variants(q);
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
    -- The spec's MatchType has no substring value: substring hits are prefix hits with Score 0.75. Up to 40 items whose
    -- number or an alias holds q: suffixes that start with q (migration 0024). The alias named is one holding q, and
    -- none when the number does.
    select c.item_id,
           case when i.item_number_normalized like contains then null
             else (select a.alias from item_aliases a where a.item_id = c.item_id and a.alias_normalized like contains
                   order by a.alias_normalized limit 1) end,
           0.75::float8, 'prefix', 2
      from (select distinct s.item_id from (
              select s.item_id from item_number_suffixes s
               where (select count(*) from before_substring) < 20
                 and s.suffix ~>=~ q and s.suffix ~<~ prefix_end and (partner is null or s.manufacturer_id = partner)
                 and s.item_id not in (select b.item_id from before_substring b)
               limit 40) s) c
      join items i on i.id = c.item_id
  ), before_fuzzy as (
    select b.item_id from before_substring b union select s.item_id from substring s
  ), typo (item_id, alias, score, match_type, stage) as (
    -- Numbers and aliases one typo away: their variants meet the query's.
    (select i.id, null::text, similarity(i.item_number_normalized, q)::float8 as similarity, 'fuzzy', 3 from items i
      where (select count(*) from before_fuzzy) < 20
        and number_typo_variants(i.item_number_normalized) && typo_variants
        and (partner is null or i.manufacturer_id = partner)
        and similarity(i.item_number_normalized, q) >= 0.3
        and i.id not in (select b.item_id from before_fuzzy b)
      order by similarity desc limit 40)
    union all
    (select a.item_id, a.alias, similarity(a.alias_normalized, q)::float8 as similarity, 'fuzzy', 3 from item_aliases a
      where (select count(*) from before_fuzzy) < 20
        and number_typo_variants(a.alias_normalized) && typo_variants
        and (partner is null or a.manufacturer_id = partner)
        and similarity(a.alias_normalized, q) >= 0.3
        and a.item_id not in (select b.item_id from before_fuzzy b)
      order by similarity desc limit 40)
  ), fuzzy (item_id, alias, score, match_type, stage) as (
    -- The wide scan, for a query with no exact hit and no look-alike one typo away: numbers holding half of the query's
    -- trigrams.
    (select i.id, null::text, similarity(i.item_number_normalized, q)::float8 as similarity, 'fuzzy', 3 from items i
      where (select count(*) from before_fuzzy) < 20 and (select n from exact_found) = 0
        and not exists (select from typo)
        and q <% i.item_number_normalized and (partner is null or i.manufacturer_id = partner)
        and i.id not in (select b.item_id from before_fuzzy b)
      order by similarity desc limit 40)
    union all
    (select a.item_id, a.alias, similarity(a.alias_normalized, q)::float8 as similarity, 'fuzzy', 3 from item_aliases a
      where (select count(*) from before_fuzzy) < 20 and (select n from exact_found) = 0
        and not exists (select from typo)
        and q <% a.alias_normalized and (partner is null or a.manufacturer_id = partner)
        and a.item_id not in (select b.item_id from before_fuzzy b)
      order by similarity desc limit 40)
  )
  -- Each item once, with its hit of the earliest stage (a number equal to q is a look-alike of similarity 1.0 too, and
  -- a long number containing q one of more than 0.75), the best of that stage, a direct hit before an alias hit.
  select distinct on (h.item_id) h.item_id, h.alias, h.score, h.match_type, h.stage
    from (select * from exact union all select * from prefix union all select * from substring
      union all select * from typo union all select * from fuzzy) h
   where h.score >= 0.3
   order by h.item_id, h.stage, h.score desc, h.alias is null desc;
end $$;
