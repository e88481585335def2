-- schema.sqlite.sql: the Starcord chat schema on SQLite (data/chat.db).
--
-- Four tables: channels (the first row is 'starcord', id 1), users (one per session; the
-- seeded ones have session ids s_%08d), channel_memberships and messages.  The seeder
-- (sql/chat/seed.c) runs the part above the "-- indexes" line, loads the rows, then runs
-- the part below it, so that indexes are built once over sorted data instead of row by
-- row.  Keep that line.
CREATE TABLE IF NOT EXISTS channels (
	id integer PRIMARY KEY,
	name text UNIQUE NOT NULL,
	created_ts real NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
	id integer PRIMARY KEY,
	nickname text NOT NULL,
	session_id text NOT NULL UNIQUE,
	current_channel_id integer REFERENCES channels(id) ON DELETE SET NULL,
	created_ts real
);
CREATE TABLE IF NOT EXISTS channel_memberships (
	user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	channel_id integer NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	created_ts real,
	PRIMARY KEY (user_id, channel_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
	id integer PRIMARY KEY,
	channel_id integer REFERENCES channels(id) ON DELETE CASCADE,
	user_id integer REFERENCES users(id) ON DELETE CASCADE,
	content text NOT NULL,
	created_ts real
);
-- indexes
CREATE INDEX IF NOT EXISTS channel_memberships_channel_id ON channel_memberships(channel_id);
CREATE INDEX IF NOT EXISTS messages_channel_id_created_ts ON messages(channel_id, created_ts);
