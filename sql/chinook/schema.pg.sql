-- schema.pg.sql: the Chinook database of the PostgREST benchmark, PostgreSQL version.
--
-- Applied by sql/chinook/seed.c (chinook-seed) inside its seeding transaction; the SQLite
-- twin is schema.sqlite.sql and both must keep the same tables, columns, keys and
-- indexes.  Names and types follow ../shared/data/chinook-shape/README.md (snake_case
-- Chinook), with the benchmark's variant: employee has no primary key, sequence or index,
-- so that repeated inserts of the same employee_id succeed (POSTSingle/POSTBulk); the
-- dvdrental table actor, whose last_update a BEFORE UPDATE trigger sets (PATCHSingle);
-- the RPC functions ret_albums, ret_artists and add_them at the end.
--
-- Every foreign key column has its own index, so that embeds in both directions
-- (album -> track, track -> album) are index lookups.
--
-- actor.last_update is set to the current UTC time truncated to the second, so that both
-- back ends print it the same way ("2024-05-01T12:00:00"; SQLite has no fractional
-- now() and no session time zone).

create table artist (
	artist_id integer primary key,
	name varchar(120)
);

create table genre (
	genre_id integer primary key,
	name varchar(120)
);

create table media_type (
	media_type_id integer primary key,
	name varchar(120)
);

create table album (
	album_id integer primary key,
	title varchar(160) not null,
	artist_id integer not null references artist (artist_id)
);
create index album_artist_id_idx on album (artist_id);

create table track (
	track_id integer primary key,
	name varchar(200) not null,
	album_id integer references album (album_id),
	media_type_id integer not null references media_type (media_type_id),
	genre_id integer references genre (genre_id),
	composer varchar(220),
	milliseconds integer not null,
	bytes integer,
	unit_price numeric(10,2) not null
);
create index track_album_id_idx on track (album_id);
create index track_media_type_id_idx on track (media_type_id);
create index track_genre_id_idx on track (genre_id);

create table playlist (
	playlist_id integer primary key,
	name varchar(120)
);

create table playlist_track (
	playlist_id integer not null references playlist (playlist_id),
	track_id integer not null references track (track_id),
	primary key (playlist_id, track_id)
);
create index playlist_track_playlist_id_idx on playlist_track (playlist_id);
create index playlist_track_track_id_idx on playlist_track (track_id);

-- No primary key, no foreign key on reports_to, no index: the benchmark's variant.
create table employee (
	employee_id integer not null,
	last_name varchar(20) not null,
	first_name varchar(20) not null,
	title varchar(30),
	reports_to integer,
	birth_date timestamp,
	hire_date timestamp,
	address varchar(70),
	city varchar(40),
	state varchar(40),
	country varchar(40),
	postal_code varchar(10),
	phone varchar(24),
	fax varchar(24),
	email varchar(60)
);

-- support_rep_id points at an employee, but employee has no key to reference.
create table customer (
	customer_id integer primary key,
	first_name varchar(40) not null,
	last_name varchar(20) not null,
	company varchar(80),
	address varchar(70),
	city varchar(40),
	state varchar(40),
	country varchar(40),
	postal_code varchar(10),
	phone varchar(24),
	fax varchar(24),
	email varchar(60) not null,
	support_rep_id integer
);
create index customer_support_rep_id_idx on customer (support_rep_id);

create table invoice (
	invoice_id integer primary key,
	customer_id integer not null references customer (customer_id),
	invoice_date timestamp not null,
	billing_address varchar(70),
	billing_city varchar(40),
	billing_state varchar(40),
	billing_country varchar(40),
	billing_postal_code varchar(10),
	total numeric(10,2) not null
);
create index invoice_customer_id_idx on invoice (customer_id);

create table invoice_line (
	invoice_line_id integer primary key,
	invoice_id integer not null references invoice (invoice_id),
	track_id integer not null references track (track_id),
	unit_price numeric(10,2) not null,
	quantity integer not null
);
create index invoice_line_invoice_id_idx on invoice_line (invoice_id);
create index invoice_line_track_id_idx on invoice_line (track_id);

-- dvdrental's actor.  The seeder gives explicit ids; the sequence behind serial is moved
-- past them afterwards so that inserts without an id keep working.
create table actor (
	actor_id serial primary key,
	first_name varchar(45) not null,
	last_name varchar(45) not null,
	last_update timestamp not null
	    default date_trunc('second', now() at time zone 'UTC')
);
create index actor_last_name_idx on actor (last_name);

create function actor_last_update() returns trigger language plpgsql as $$
begin
	new.last_update := date_trunc('second', now() at time zone 'UTC');
	return new;
end
$$;

create trigger actor_last_update before update on actor
	for each row execute function actor_last_update();

-- The benchmark's RPC functions (SQL language).
create function ret_albums() returns setof album language sql stable as
	$$ select * from album $$;

create function ret_artists() returns setof artist language sql stable as
	$$ select * from artist $$;

create function add_them(a integer, b integer, c integer, d integer, e integer)
	returns integer language sql immutable as
	$$ select a + b + c + d + e $$;
