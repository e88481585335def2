/*
 * pberr.h: an error response in PocketBase's shape, {"data":{...},"message":"...",
 * "status":N}, which its JavaScript SDK reads (ClientResponseError): the records API's
 * errors (handlers/records/) and the realtime endpoint's (handlers/realtime.c).
 */
#ifndef SLUICE_RECORDS_PBERR_H
#define SLUICE_RECORDS_PBERR_H

#include "resp.h"

/*
 * Replaces rs's status, type and body with the error: data is a JSON object's text or
 * NULL ({}), message NULL means the status's standard one ("The requested resource wasn't
 * found.").  Always leaves a complete response; returns 0.
 */
int pberr_set(struct resp *rs, int status, const char *message, const char *data);

#endif /* SLUICE_RECORDS_PBERR_H */
