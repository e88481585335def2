/*
 * test_multipart.c: one plain field of a multipart/form-data body (apps/records/multipart.c):
 * the SDK's own shape read, quoted and unquoted boundaries; and malformed and hostile
 * bodies refused: no boundary, one past 70 characters, a missing first or closing
 * delimiter, headers that never end, a part cut short, a file part, another field, the
 * field twice, and every prefix of a good body.
 */
#include <string.h>

#include "harness.h"
#include "records/multipart.h"

#define CT	"multipart/form-data; boundary=XyZ"
#define GOOD	"--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\"\r\n\r\n" \
		"{\"requests\":[]}\r\n--XyZ--\r\n"

/* multipart_sole_field() of "@jsonPayload" on body (a string), the value in out. */
static int
field(const char *ct, const char *body, char *out, size_t size)
{
	const char *v;
	size_t n;

	out[0] = '\0';
	if (multipart_sole_field(ct, body, strlen(body), "@jsonPayload", &v, &n) < 0)
		return -1;
	if (n >= size)
		return -2;
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

static void
test_read(void)
{
	char v[256];

	CHECK_INT(field(CT, GOOD, v, sizeof(v)), 0);
	CHECK_STR(v, "{\"requests\":[]}");
	CHECK_INT(field("multipart/form-data; boundary=\"XyZ\"", GOOD, v, sizeof(v)), 0);
	CHECK_STR(v, "{\"requests\":[]}");
	CHECK_INT(field("multipart/form-data; boundary=XyZ; charset=utf-8", GOOD, v,
	    sizeof(v)), 0);
	/* A value holding CRLFs and dashes that are not the delimiter. */
	CHECK_INT(field(CT, "--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\""
	    "\r\n\r\na\r\n--Xy\r\nb\r\n--XyZ--", v, sizeof(v)), 0);
	CHECK_STR(v, "a\r\n--Xy\r\nb");
	/* An empty value. */
	CHECK_INT(field(CT, "--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\""
	    "\r\n\r\n\r\n--XyZ--", v, sizeof(v)), 0);
	CHECK_STR(v, "");
}

static void
test_refused(void)
{
	static const char *const bodies[] = {
		"",
		"--XyZ--",
		"XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\"\r\n\r\n{}\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\"\r\n{}\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\"\r\n\r\n{}",
		"--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\"\r\n\r\n{}\r\n--XyZ",
		"--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\"; "
		    "filename=\"a.json\"\r\n\r\n{}\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\n{}\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\"\r\n\r\n{}\r\n--XyZ"
		    "\r\nContent-Disposition: form-data; name=\"@jsonPayload\"\r\n\r\n{}\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=\"@jsonPayload\"\r\n\r\n{}\r\n--XyZ"
		    "\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\nzz\r\n"
		    "--XyZ--",
		"--XyZ\r\n\r\n{}\r\n--XyZ--",
	};
	char v[256], ct[128];
	size_t i, n = strlen(GOOD);

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		CHECK_INT(field(CT, bodies[i], v, sizeof(v)), -1);
	CHECK_INT(field("multipart/form-data", GOOD, v, sizeof(v)), -1);
	CHECK_INT(field("multipart/form-data; boundary=", GOOD, v, sizeof(v)), -1);
	CHECK_INT(field(NULL, GOOD, v, sizeof(v)), -1);
	memset(ct, 'a', sizeof(ct));
	memcpy(ct, "boundary=", 9);
	ct[9 + 71] = '\0';
	CHECK_INT(field(ct, GOOD, v, sizeof(v)), -1);
	/* Every prefix of a good body short of its closing delimiter is refused. */
	for (i = 0; i + 2 < n - 2; i++) {
		const char *val;
		size_t len;

		CHECK_INT(multipart_sole_field(CT, GOOD, i, "@jsonPayload", &val, &len), -1);
	}
}

int
main(void)
{
	RUN(test_read);
	RUN(test_refused);
	return harness_done();
}
