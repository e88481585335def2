-- schema.sqlite.sql: the Chinook database of the PostgREST benchmark, SQLite version.
--
-- The twin of schema.pg.sql (same tables, columns, keys, foreign keys and indexes; read
-- that file's paragraph first), written so that the same rows come back as the same JSON
-- from json_object() here and from row_to_json() there, and so that inserts are accepted
-- or refused alike:
--
-- - Declared types keep PostgreSQL's names (INTEGER, VARCHAR(n), NUMERIC(10,2),
--   TIMESTAMP), so that introspection (pragma_table_info) tells the REST engine what a
--   column is.  SQLite does not enforce them, so CHECK constraints do: integers must be
--   integers after affinity ('5' becomes 5, 'x' is refused), numerics numbers, VARCHAR(n)
--   at most n characters (length() counts characters, like PostgreSQL), timestamps
--   something strftime() can read.
-- - NUMERIC affinity stores 0.99 as a REAL, which json_object() prints as 0.99, as
--   PostgreSQL prints numeric(10,2).  (A whole amount would print as 1 instead of 1.00;
--   the seeder never generates one.)
-- - Timestamps are TEXT in PostgREST's JSON form, 'YYYY-MM-DDTHH:MM:SS' in UTC, which
--   PostgreSQL's JSON prints for a timestamp without fractional seconds.  A value written
--   in another form ('1920-01-01') is kept as written: the REST engine normalises input
--   to a TIMESTAMP column with strftime('%Y-%m-%dT%H:%M:%S', value).
-- - actor.last_update: SQLite triggers cannot change NEW, so an AFTER UPDATE trigger
--   rewrites the row (recursive_triggers is off, the default, so it does not fire itself
--   again).  Consequence: UPDATE ... RETURNING shows the value from before the trigger.
-- - No STRICT tables: STRICT allows only INTEGER/REAL/TEXT/BLOB/ANY as declared types,
--   which would hide what a column is.
--
-- The RPC functions live in rpc.sqlite.sql (table sluice_functions).

create table artist (
	artist_id INTEGER primary key,
	name VARCHAR(120) check (length(name) <= 120)
);

create table genre (
	genre_id INTEGER primary key,
	name VARCHAR(120) check (length(name) <= 120)
);

create table media_type (
	media_type_id INTEGER primary key,
	name VARCHAR(120) check (length(name) <= 120)
);

create table album (
	album_id INTEGER primary key,
	title VARCHAR(160) not null check (length(title) <= 160),
	artist_id INTEGER not null references artist (artist_id)
	    check (typeof(artist_id) = 'integer')
);
create index album_artist_id_idx on album (artist_id);

create table track (
	track_id INTEGER primary key,
	name VARCHAR(200) not null check (length(name) <= 200),
	album_id INTEGER references album (album_id)
	    check (album_id is null or typeof(album_id) = 'integer'),
	media_type_id INTEGER not null references media_type (media_type_id)
	    check (typeof(media_type_id) = 'integer'),
	genre_id INTEGER references genre (genre_id)
	    check (genre_id is null or typeof(genre_id) = 'integer'),
	composer VARCHAR(220) check (length(composer) <= 220),
	milliseconds INTEGER not null check (typeof(milliseconds) = 'integer'),
	bytes INTEGER check (bytes is null or typeof(bytes) = 'integer'),
	unit_price NUMERIC(10,2) not null check (typeof(unit_price) in ('integer', 'real'))
);
create index track_album_id_idx on track (album_id);
create index track_media_type_id_idx on track (media_type_id);
create index track_genre_id_idx on track (genre_id);

create table playlist (
	playlist_id INTEGER primary key,
	name VARCHAR(120) check (length(name) <= 120)
);

create table playlist_track (
	playlist_id INTEGER not null references playlist (playlist_id)
	    check (typeof(playlist_id) = 'integer'),
	track_id INTEGER not null references track (track_id)
	    check (typeof(track_id) = 'integer'),
	primary key (playlist_id, track_id)
);
create index playlist_track_playlist_id_idx on playlist_track (playlist_id);
create index playlist_track_track_id_idx on playlist_track (track_id);

-- No primary key, no foreign key on reports_to, no index: the benchmark's variant.
create table employee (
	employee_id INTEGER not null check (typeof(employee_id) = 'integer'),
	last_name VARCHAR(20) not null check (length(last_name) <= 20),
	first_name VARCHAR(20) not null check (length(first_name) <= 20),
	title VARCHAR(30) check (length(title) <= 30),
	reports_to INTEGER check (reports_to is null or typeof(reports_to) = 'integer'),
	birth_date TIMESTAMP
	    check (birth_date is null or strftime('%Y-%m-%dT%H:%M:%S', birth_date) is not null),
	hire_date TIMESTAMP
	    check (hire_date is null or strftime('%Y-%m-%dT%H:%M:%S', hire_date) is not null),
	address VARCHAR(70) check (length(address) <= 70),
	city VARCHAR(40) check (length(city) <= 40),
	state VARCHAR(40) check (length(state) <= 40),
	country VARCHAR(40) check (length(country) <= 40),
	postal_code VARCHAR(10) check (length(postal_code) <= 10),
	phone VARCHAR(24) check (length(phone) <= 24),
	fax VARCHAR(24) check (length(fax) <= 24),
	email VARCHAR(60) check (length(email) <= 60)
);

create table customer (
	customer_id INTEGER primary key,
	first_name VARCHAR(40) not null check (length(first_name) <= 40),
	last_name VARCHAR(20) not null check (length(last_name) <= 20),
	company VARCHAR(80) check (length(company) <= 80),
	address VARCHAR(70) check (length(address) <= 70),
	city VARCHAR(40) check (length(city) <= 40),
	state VARCHAR(40) check (length(state) <= 40),
	country VARCHAR(40) check (length(country) <= 40),
	postal_code VARCHAR(10) check (length(postal_code) <= 10),
	phone VARCHAR(24) check (length(phone) <= 24),
	fax VARCHAR(24) check (length(fax) <= 24),
	email VARCHAR(60) not null check (length(email) <= 60),
	support_rep_id INTEGER
	    check (support_rep_id is null or typeof(support_rep_id) = 'integer')
);
create index customer_support_rep_id_idx on customer (support_rep_id);

create table invoice (
	invoice_id INTEGER primary key,
	customer_id INTEGER not null references customer (customer_id)
	    check (typeof(customer_id) = 'integer'),
	invoice_date TIMESTAMP not null
	    check (strftime('%Y-%m-%dT%H:%M:%S', invoice_date) is not null),
	billing_address VARCHAR(70) check (length(billing_address) <= 70),
	billing_city VARCHAR(40) check (length(billing_city) <= 40),
	billing_state VARCHAR(40) check (length(billing_state) <= 40),
	billing_country VARCHAR(40) check (length(billing_country) <= 40),
	billing_postal_code VARCHAR(10) check (length(billing_postal_code) <= 10),
	total NUMERIC(10,2) not null check (typeof(total) in ('integer', 'real'))
);
create index invoice_customer_id_idx on invoice (customer_id);

create table invoice_line (
	invoice_line_id INTEGER primary key,
	invoice_id INTEGER not null references invoice (invoice_id)
	    check (typeof(invoice_id) = 'integer'),
	track_id INTEGER not null references track (track_id)
	    check (typeof(track_id) = 'integer'),
	unit_price NUMERIC(10,2) not null check (typeof(unit_price) in ('integer', 'real')),
	quantity INTEGER not null check (typeof(quantity) = 'integer')
);
create index invoice_line_invoice_id_idx on invoice_line (invoice_id);
create index invoice_line_track_id_idx on invoice_line (track_id);

create table actor (
	actor_id INTEGER primary key,
	first_name VARCHAR(45) not null check (length(first_name) <= 45),
	last_name VARCHAR(45) not null check (length(last_name) <= 45),
	last_update TIMESTAMP not null default (strftime('%Y-%m-%dT%H:%M:%S', 'now'))
	    check (strftime('%Y-%m-%dT%H:%M:%S', last_update) is not null)
);
create index actor_last_name_idx on actor (last_name);

create trigger actor_last_update after update on actor for each row
begin
	update actor set last_update = strftime('%Y-%m-%dT%H:%M:%S', 'now')
	    where actor_id = new.actor_id;
end;
