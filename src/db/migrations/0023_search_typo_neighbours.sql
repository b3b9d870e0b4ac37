-- Item search's look-alikes are the numbers one typo away; only a query with no exact hit and none of those gets the
-- wide trigram scan. That scan read, through the trigram GIN index, every number holding half of the query's trigrams,
-- and at 1,000,000 items the digit trigrams of a query are in 4,000-14,000 numbers each: 12 ms of a 15 ms search went
-- to merging those posting lists and rechecking ~1,100 candidates (bench `search exact` and `search misspelled`, p99
-- ~160 ms). A number one typo away differs by a changed, added or dropped character or two swapped neighbours: the
-- slips of a scanner or a keyboard, and the look-alikes a warehouse wants. A number's typo variants are the number and
-- each string made by dropping one of its characters; two numbers are one typo apart when their variants meet (so are a
-- few that differ by one dropped character on each side, as 12345 and 1245X), which a GIN index over the variants
-- answers (an expression index that PostgreSQL keeps: no table or trigger of our own). They come back by similarity (at
-- least 0.3). A query with no exact hit and no number one typo away (two typos, an unusual number) falls back to the
-- wide scan as before. So an answer may hold fewer than 20 items where the wide scan would have filled it with weak
-- look-alikes (similarity mostly 0.375-0.5 at 1,000,000 items); the spec's 20 is a maximum. A number shorter than 5
-- characters has only itself as a variant: its dropped characters would be keys shared by thousands of numbers. The
-- function is otherwise migration 0022's.

-- The number and, from 5 characters on, each string made by dropping one of its characters.
create function number_typo_variants(n text) returns text[]
language sql immutable strict parallel safe
as $$
  select case when length(n) < 5 then array[n]
    else array[n] || array(select overlay(n placing '' from p for 1) from generate_series(1, length(n)) p) end
$$;

create index items_number_typo_idx on items using gin (number_typo_variants(item_number_normalized));
create index item_aliases_typo_idx on item_aliases using gin (number_typo_variants(alias_normalized));

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
