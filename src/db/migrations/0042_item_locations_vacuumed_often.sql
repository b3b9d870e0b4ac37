-- The location list's stock sums read item_locations' location index alone (0039) only on the heap pages the visibility
-- map marks all-visible, and every pick, shipment and receipt rewrites bin rows: after a bench run, with the default
-- autovacuum (at a fifth of the table changed), 444 of 1,812 pages were all-visible and a page of 50 locations read
-- 13,600 heap buffers (28 ms of PostgreSQL a request against 7 after a vacuum). Vacuumed once about 1,000 bin rows plus
-- 2% of the table have changed, the map stays nearly whole (a vacuum after 3,000 changed bins of the bench: 84 ms).
alter table item_locations set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_insert_threshold = 1000);
