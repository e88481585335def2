/*
 * sqlq.h: the records API's names for the SQL statement builder (common/sqlb.h) and for
 * the merge of a multiple field's values (coll_merge()), one to one.
 */
#ifndef SLUICE_RECORDS_SQLQ_H
#define SLUICE_RECORDS_SQLQ_H

#include "coll.h"
#include "sqlb.h"

#define sqlq		sqlb
#define sqlq_init	sqlb_init
#define sqlq_text	sqlb_text
#define sqlq_int	sqlb_int
#define sqlq_double	sqlb_double
#define sqlq_null	sqlb_null
#define sqlq_col	sqlb_col
#define sqlq_in_json	sqlb_in_json
#define sqlq_bind_all	sqlb_bind
#define sqlq_merge	coll_merge

#endif /* SLUICE_RECORDS_SQLQ_H */
