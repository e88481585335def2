/*
 * serve_ops.h: internal to common/: the database operations that the serve loop calls
 * through a table, so that serve.c itself references no database symbol.
 */
#ifndef SLUICE_SERVE_OPS_H
#define SLUICE_SERVE_OPS_H

struct db;
struct resp;

struct serve_db_ops {
	int (*open)(struct db **out, const char *url);	/* 0 or -1, logged */
	void (*close)(struct db *db);
	int (*ready)(struct db *db);			/* 0 or -1 */
	int (*rollback)(struct db *db);
	int (*error)(struct resp *rs, struct db *db);
};

#endif /* SLUICE_SERVE_OPS_H */
