/*
 * test_rest_schema: the rest endpoint's reading of SQLite's DDL for foreign keys' names
 * (apps/rest/schema.c, rest_ddl_fk_name()), table-driven: a CREATE TABLE statement,
 * the key's columns and referenced table in, the name (or none) out.  Hostile DDL (cut
 * short, unbalanced, names past the buffer) must answer "no name", never read past the
 * text.
 */
#include <stdio.h>
#include <string.h>

#include "rest/rest.h"
#include "../lib/harness.h"

struct ddl_case {
	const char *ddl;
	const char *cols[3];
	int ncols;
	const char *ref;
	const char *want;	/* NULL: no name */
};

static const struct ddl_case cases[] = {
	/* A table constraint. */
	{ "CREATE TABLE m (id integer primary key, u text, constraint messages_author "
	  "foreign key (u) references users (username))", { "u" }, 1, "users",
	  "messages_author" },
	/* A column constraint, among others that take no name. */
	{ "create table m (id integer, c integer not null constraint message_channel "
	  "references channels (id) on delete cascade)", { "c" }, 1, "channels",
	  "message_channel" },
	/* A name that belongs to another constraint of the column. */
	{ "create table m (c integer constraint pk primary key references channels)",
	  { "c" }, 1, "channels", NULL },
	/* No name at all. */
	{ "create table m (c integer references channels (id))", { "c" }, 1, "channels",
	  NULL },
	/* Two keys: the one asked for. */
	{ "create table bf (a text, b text, constraint one foreign key (a) references users, "
	  "constraint two foreign key (b) references users)", { "b" }, 1, "users", "two" },
	/* Several columns, quoted names of every kind, comments, strings. */
	{ "CREATE TABLE \"t x\" (\"a b\" int, [c] int, `d` int default ')', -- (x, \n"
	  "/* constraint no foreign key (a) */ CONSTRAINT \"k \"\"q\"\"\" FOREIGN KEY "
	  "(\"a b\", [c], `d`) REFERENCES \"Other\" (x, y, z))", { "a b", "c", "d" }, 3,
	  "other", "k \"q\"" },
	/* The wrong referenced table, the wrong columns. */
	{ "create table m (u text, constraint k foreign key (u) references users)", { "u" },
	  1, "groups", NULL },
	{ "create table m (u text, v text, constraint k foreign key (u, v) references users)",
	  { "u" }, 1, "users", NULL },
	/* A check with parentheses and a comma inside, before the key. */
	{ "create table m (u text check (u in ('a,b', 'c')), constraint k foreign key (u) "
	  "references users)", { "u" }, 1, "users", "k" },
	/* Cut short, unbalanced, empty. */
	{ "create table m (u text, constraint k foreign key (u", { "u" }, 1, "users", NULL },
	{ "create table m (u text, constraint", { "u" }, 1, "users", NULL },
	{ "create table m (u text constraint k references", { "u" }, 1, "users", NULL },
	{ "create table m ((((", { "u" }, 1, "users", NULL },
	{ "create table m (u text, constraint k foreign key (u) references users)) x ( y",
	  { "u" }, 1, "users", "k" },
	{ "", { "u" }, 1, "users", NULL },
	{ "'unterminated", { "u" }, 1, "users", NULL },
	{ "create table m (u /* unterminated", { "u" }, 1, "users", NULL },
};

static void
test_ddl_fk_names(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ddl_case *c = &cases[i];
		char out[64];
		int got = rest_ddl_fk_name(c->ddl, c->cols, c->ncols, c->ref, out, sizeof(out));

		CHECK_INT(got, c->want != NULL);
		if (got && c->want != NULL)
			CHECK_STR(out, c->want);
	}
}

static void
test_ddl_fk_name_too_long(void)
{
	static const char *const u[] = { "u" };
	char ddl[1024], out[8];

	/* A name longer than the buffer: no name, nothing written past it. */
	(void)snprintf(ddl, sizeof(ddl), "create table m (u text, constraint %s foreign key "
	    "(u) references users)", "a_name_longer_than_eight");
	memset(out, 'x', sizeof(out));
	CHECK_INT(rest_ddl_fk_name(ddl, u, 1, "users", out, sizeof(out)), 0);
	/* A name longer than the scanner's token: not the key's name cut short. */
	memset(ddl, 'n', sizeof(ddl));
	memcpy(ddl, "create table m (u text constraint ", 34);
	memcpy(ddl + 600, " references users)", 19);
	{
		char big[1024];

		CHECK_INT(rest_ddl_fk_name(ddl, u, 1, "users", big, sizeof(big)), 0);
	}
}

int
main(void)
{
	RUN(test_ddl_fk_names);
	RUN(test_ddl_fk_name_too_long);
	return harness_done();
}
