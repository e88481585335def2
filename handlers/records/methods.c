/*
 * methods.c: which sign-in methods an auth collection C offers, and their answer:
 *
 *   GET /api/collections/C/auth-methods   200 {"password":{"identityFields":["email"],
 *       "enabled":true},"oauth2":{"providers":[],"enabled":false},"mfa":{"enabled":false,
 *       "duration":0},"otp":{"enabled":E,"duration":D}}: password sign-in always, OTP
 *       (otp.c) where SLUICE_RECORDS_OTP names C (D: SLUICE_RECORDS_OTP_DURATION), no
 *       OAuth2 or MFA (sluice serves neither)
 *
 * No table is read.
 */
#include <string.h>

#include "records.h"
#include "settings.h"

int
rec_otp_on(const struct coll *c)
{
	const char *p = settings_get(SETTING_RECORDS_OTP);
	size_t n;

	if (c == NULL || !c->auth)
		return 0;
	while (p != NULL && *p != '\0') {
		n = strcspn(p, ", ");
		if ((n == strlen(c->name) && strncmp(p, c->name, n) == 0) ||
		    (n == strlen(c->id) && strncmp(p, c->id, n) == 0))
			return 1;
		p += n;
		p += strspn(p, ", ");
	}
	return 0;
}

int
rec_auth_methods(struct rec_ctx *x)
{
	struct buf *b = &x->rs->body;
	long long d = 0;
	int on = rec_otp_on(x->c);

	if (on)
		(void)settings_int(SETTING_RECORDS_OTP_DURATION, &d);
	x->rs->status = 200;
	x->rs->content_type = "application/json";
	buf_reset(b, 4096);
	buf_printf(b, "{\"password\":{\"identityFields\":[\"email\"],\"enabled\":true},"
	    "\"oauth2\":{\"providers\":[],\"enabled\":false},\"mfa\":{\"enabled\":false,"
	    "\"duration\":0},\"otp\":{\"enabled\":%s,\"duration\":%lld}}",
	    on ? "true" : "false", d);
	return 0;
}
