/*
 * serve_ops.h: internal to common/: the database operations that the serve loop calls
 * through a table, so that serve.c itself references no database symbol.
 */
#ifndef SLUICE_SERVE_OPS_H
#define SLUICE_SERVE_OPS_H

struct db;
struct resp;

/* What serve_db_ops.open() found. */
enum serve_db_open {
	SERVE_DB_OPEN = 0,	/* connected */
	SERVE_DB_LATER = 1,	/* a database server is unreachable: retry per request */
	SERVE_DB_FATAL = -1,	/* a configuration error: the worker cannot start */
};

struct serve_db_ops {
	enum serve_db_open (*open)(struct db **out, const char *url);	/* logged */
	void (*close)(struct db *db);
	int (*ready)(struct db *db);			/* 0 or -1 */
	int (*rollback)(struct db *db);
	int (*error)(struct resp *rs, struct db *db);
	int (*restart_wanted)(const struct db *db);	/* 1: replace this worker */
	/* Installs what the database layer calls before a thread sleeps on it (extern.h's
	 * db_blocking_hook()). */
	void (*blocking_hook)(void (*hook)(void));
};

#endif /* SLUICE_SERVE_OPS_H */
