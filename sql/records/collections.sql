-- collections.sql: the records API's collections (PocketBase's dialect), one declaration for
-- SQLite and PostgreSQL.  The seeder (sql/records/seed.c) runs this file, then creates each
-- collection's table from its row (apps/records/coll.h: the fields grammar and the column
-- types per back end); the records workers read _collections when they start and after a
-- SIGHUP.  A rule is NULL (superusers only), '' (anyone) or a filter expression over the
-- record, @request.auth.* and @request.body.*.
CREATE TABLE _collections (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	type TEXT NOT NULL,
	fields TEXT NOT NULL,
	list_rule TEXT,
	view_rule TEXT,
	create_rule TEXT,
	update_rule TEXT,
	delete_rule TEXT
);

-- Superusers: every rule lets them through; their own records are theirs alone.
INSERT INTO _collections VALUES ('pbc_3142635823', '_superusers', 'auth',
	'created autodate; updated autodate onupdate',
	NULL, NULL, NULL, NULL, NULL);

-- Public profiles (so that expand=author works for everyone); the email shows only when
-- emailVisibility is set, to the record itself or to a superuser.
INSERT INTO _collections VALUES ('_pb_users_auth_', 'users', 'auth',
	'name text; created autodate; updated autodate onupdate',
	'', '', '', 'id = @request.auth.id', 'id = @request.auth.id');

INSERT INTO _collections VALUES ('pbc_1125843985', 'posts', 'base',
	'title text required; body text;
	 status select values=draft|published|archived index;
	 author relation to=users index;
	 tags select multiple values=news|tech|life|travel|food|music;
	 created autodate index; updated autodate onupdate',
	'', '', '@request.auth.id != ''''', 'author = @request.auth.id',
	'author = @request.auth.id');

INSERT INTO _collections VALUES ('pbc_533777971', 'comments', 'base',
	'post relation to=posts index; author relation to=users; text text required;
	 created autodate',
	'', '', '@request.auth.id != '''' && author = @request.auth.id',
	'author = @request.auth.id', 'author = @request.auth.id');
