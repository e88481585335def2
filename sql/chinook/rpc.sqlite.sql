-- rpc.sqlite.sql: the Chinook RPC functions for SQLite, which has no stored functions.
--
-- Applied by sql/chinook/seed.c after schema.sqlite.sql.  The REST engine introspects the
-- table sluice_functions at start-up (and on SIGHUP) and serves each row as
-- /rpc/<name>, the way PostgREST serves a PostgreSQL function of the same name
-- (schema.pg.sql declares the same three):
--
--   name        the function's name, as in /rpc/<name>.
--   args        its parameters in order, comma-separated "name type" pairs with
--               PostgreSQL type names ("a integer, b integer"); '' for none.  Requests
--               pass them by name (query string or JSON object).  The last ones may
--               have a default, "b integer default 10", "s text default 'x'" or
--               "n text default null" (a number, a quoted string or null, without a
--               comma), taken when the request leaves them out; a function with another
--               kind of default is not served (the worker logs it).
--   returns     "setof <table>" (a set of that table's rows: the result accepts select=,
--               filters, order, limit and embeds like the table), "table(a type, ...)"
--               (rows of those columns, as PostgreSQL's RETURNS TABLE: the body's
--               columns carry those names; select=, filters, order and limit apply) or a
--               scalar type name ("integer", "text", ...: the first column of the first
--               row, as a bare JSON value), or "void" (the body runs, the answer is 204
--               without a body).
--   volatility  immutable | stable | volatile, as in PostgreSQL: whether GET is allowed
--               (volatile functions are POST only in PostgREST) and which transaction
--               (read-only for immutable and stable).
--   body        one SELECT statement; it refers to parameter x as :x (SQLite's named
--               parameter syntax: sqlite3_bind_parameter_index(":x"); through common/db.h,
--               which speaks $N, the engine rewrites each :x outside string literals
--               into the $N of x's position in args).  For "setof <table>" it selects
--               that table's columns, so that select=, filters and embeds apply to it.
--               Or one INSERT, UPDATE or DELETE ... RETURNING (a function that writes:
--               POST only; its RETURNING gives the rows or the scalar, and it must name
--               its last argument).

create table sluice_functions (
	name text primary key,
	args text not null default '',
	returns text not null,
	volatility text not null default 'volatile',
	body text not null
);

insert into sluice_functions (name, args, returns, volatility, body) values
	('ret_albums', '', 'setof album', 'stable', 'select * from album'),
	('ret_artists', '', 'setof artist', 'stable', 'select * from artist'),
	('add_them', 'a integer, b integer, c integer, d integer, e integer', 'integer',
	    'immutable', 'select :a + :b + :c + :d + :e');
