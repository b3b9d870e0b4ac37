-- Reference data every installation starts with: the MAIN warehouse with its quarantine location, and the carriers.
insert into warehouses (code, name) values ('MAIN', 'Main warehouse') on conflict (code) do nothing;

insert into locations (warehouse_id, location_code, location_type)
select id, 'QUARANTINE', 'quarantine' from warehouses where code = 'MAIN'
on conflict (location_code) do nothing;

insert into ship_via (code, description, carrier_name, mode) values
  ('UPS', 'UPS Ground', 'UPS', 'parcel'),
  ('FEDEX', 'FedEx Ground', 'FedEx', 'parcel'),
  ('USPS', 'USPS Priority Mail', 'USPS', 'parcel'),
  ('LTL', 'LTL freight', null, 'ltl'),
  ('WILL-CALL', 'Customer pickup (will call)', null, 'will_call')
on conflict (code) do nothing;
