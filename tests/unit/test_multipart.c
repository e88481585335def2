/*
 * test_multipart.c: multipart/form-data bodies (apps/records/multipart.c).  One plain
 * field: the SDK's own shape read, quoted and unquoted boundaries; and malformed and
 * hostile bodies refused: no boundary, one past 70 characters, a missing first or closing
 * delimiter, headers that never end, a part cut short, a file part, another field, the
 * field twice, and every prefix of a good body.  The walk over parts: names, filenames
 * (empty, with a path, quoted ';'), types and values as sent; the boundary's text inside
 * a value; refused: parts without a name or Content-Disposition, a header line without a
 * colon, an unterminated quote, headers past MULTIPART_HEADERS_MAX, more parts than
 * MULTIPART_PARTS_MAX, and a failed walk staying failed.
 */
#include <stdio.h>
#include <stdlib.h>
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
	CHECK_INT(field("multipart/form-data;charset=\"a;boundary=no\"; BOUNDARY=XyZ", GOOD, v,
	    sizeof(v)), 0);
	CHECK_STR(v, "{\"requests\":[]}");
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
	CHECK_INT(field("multipart/form-data; xboundary=XyZ", GOOD, v, sizeof(v)), -1);
	CHECK_INT(field("multipart/form-data; boundary=\"XyZ", GOOD, v, sizeof(v)), -1);
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

/* Walks body (a string) of CT: the parts into pt[max], their count, or the failure. */
static int
walk(const char *body, struct multipart_part *pt, int max)
{
	struct multipart m;
	int n = 0, r;

	if (multipart_open(&m, CT, body, strlen(body)) < 0)
		return MULTIPART_BAD;
	while ((r = multipart_next(&m, &pt[n < max ? n : max - 1])) == MULTIPART_PART)
		n++;
	if (r != MULTIPART_END)
		return r;
	CHECK_INT(multipart_next(&m, &pt[0]), MULTIPART_END);
	return n;
}

static int
is(const char *p, size_t len, const char *want)
{
	return p != NULL && len == strlen(want) && memcmp(p, want, len) == 0;
}

static void
test_parts(void)
{
	struct multipart_part pt[4];

	CHECK_INT(walk("--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n"
	    "Hello\r\n--XyZ\r\ncontent-disposition: FORM-DATA; name=avatar; "
	    "filename=\"../../etc/passwd\"\r\nContent-Type: image/png\r\n\r\n"
	    "\x89PNG\r\n--Xy\r-XyZ\r\n--XyZ\r\nContent-Disposition: form-data; "
	    "filename=\"a;name=evil\"; name=\"f\"\r\n\r\n\r\n--XyZ\r\n"
	    "Content-Disposition: form-data; name=\"e\"; filename=\"\"\r\n\r\n"
	    "\r\n--XyZ--\r\n", pt, 4), 4);
	CHECK(is(pt[0].name, pt[0].namelen, "title") && pt[0].filename == NULL &&
	    pt[0].type == NULL && is(pt[0].data, pt[0].len, "Hello"));
	CHECK(is(pt[1].name, pt[1].namelen, "avatar") &&
	    is(pt[1].filename, pt[1].filenamelen, "../../etc/passwd") &&
	    is(pt[1].type, pt[1].typelen, "image/png") &&
	    is(pt[1].data, pt[1].len, "\x89PNG\r\n--Xy\r-XyZ"));
	CHECK(is(pt[2].name, pt[2].namelen, "f") &&
	    is(pt[2].filename, pt[2].filenamelen, "a;name=evil") && pt[2].len == 0);
	CHECK(is(pt[3].name, pt[3].namelen, "e") && pt[3].filename != NULL &&
	    pt[3].filenamelen == 0);
	/* No parts at all. */
	CHECK_INT(walk("--XyZ--", pt, 4), 0);
}

static void
test_parts_refused(void)
{
	static const char *const bodies[] = {
		"--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nx\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: attachment; name=a\r\n\r\nx\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name\r\n\r\nx\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-datax; name=a\r\n\r\nx\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=a\r\nno colon\r\n\r\nx\r\n"
		    "--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=a\r\nContent-Disposition: "
		    "form-data; name=b\r\n\r\nx\r\n--XyZ--",
		"--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--XyZ\r\n",
		"--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--XyZZ",
		/* The boundary's text inside a value ends it there. */
		"--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--XyZ-\r\n--XyZ--",
	};
	struct multipart_part pt[4];
	struct multipart m;
	size_t i, n;
	char *big, *p;

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		CHECK_INT(walk(bodies[i], pt, 4), MULTIPART_BAD);
	CHECK_INT(multipart_open(&m, "multipart/form-data", "--XyZ--", 7), MULTIPART_BAD);
	CHECK_INT(multipart_next(&m, &pt[0]), MULTIPART_BAD);
	/* Headers past their cap, even when they end later. */
	n = MULTIPART_HEADERS_MAX + 200;
	big = malloc(n + 200);
	p = big + sprintf(big, "--XyZ\r\nContent-Disposition: form-data; name=a\r\nX-Pad: ");
	memset(p, 'a', MULTIPART_HEADERS_MAX);
	strcpy(p + MULTIPART_HEADERS_MAX, "\r\n\r\nx\r\n--XyZ--");
	CHECK_INT(walk(big, pt, 4), MULTIPART_BAD);
	free(big);
	/* One part more than allowed, and exactly as many. */
	n = MULTIPART_PARTS_MAX + 1;
	big = malloc(n * 64 + 16);
	p = big + sprintf(big, "--XyZ");
	for (i = 0; i < n; i++)
		p += sprintf(p, "\r\nContent-Disposition: form-data; name=f\r\n\r\nv\r\n--XyZ");
	strcpy(p, "--");
	CHECK_INT(walk(big, pt, 4), MULTIPART_TOO_MANY);
	p = big + 5 + (size_t)MULTIPART_PARTS_MAX * 52;
	CHECK(strncmp(p, "\r\nContent", 9) == 0);
	strcpy(p, "--");
	CHECK_INT(walk(big, pt, 4), MULTIPART_PARTS_MAX);
	free(big);
}

int
main(void)
{
	RUN(test_read);
	RUN(test_refused);
	RUN(test_parts);
	RUN(test_parts_refused);
	return harness_done();
}
