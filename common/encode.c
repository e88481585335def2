/*
 * encode.c: Accept-Encoding negotiation and the two encoders of encode.h (libbrotlienc,
 * zlib).  Both compress the whole body in one call into an arena buffer sized by the
 * encoder's own worst-case bound, so neither can run out of room.
 */
#include <ctype.h>
#include <string.h>

#include <brotli/encode.h>
#include <zlib.h>

#include "arena.h"
#include "encode.h"
#include "log.h"
#include "req.h"
#include "resp.h"

/* Whether the q parameter in p[0..len) (";q=0.5") allows the coding: q > 0. */
static int
encode_q_ok(const char *p, size_t len)
{
	size_t i = 0;

	while (i < len) {
		while (i < len && (p[i] == ';' || p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i + 1 < len && (p[i] == 'q' || p[i] == 'Q') && p[i + 1] == '=') {
			for (i += 2; i < len && (p[i] == '0' || p[i] == '.'); i++)
				;
			/* Only zeros and dots: q=0, q=0.0, q=0.000. */
			return i < len && p[i] >= '1' && p[i] <= '9';
		}
		while (i < len && p[i] != ';')
			i++;
	}
	return 1;
}

static int
encode_token_is(const char *p, size_t len, const char *lit)
{
	size_t i, n = strlen(lit);

	if (len != n)
		return 0;
	for (i = 0; i < n; i++)
		if (tolower((unsigned char)p[i]) != lit[i])
			return 0;
	return 1;
}

/* What ae says of br and gzip (x-gzip) and "*": -1 not named, 0 refused, 1 accepted. */
static void
encode_parse(const char *ae, int *br_out, int *gz_out, int *any_out)
{
	int br = -1, gz = -1, any = -1, ok;
	const char *p = ae, *end, *tok, *tokend;

	while (*p != '\0') {
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		tok = p;
		while (tok < end && (*tok == ' ' || *tok == '\t'))
			tok++;
		for (tokend = tok; tokend < end && *tokend != ';' && *tokend != ' ' &&
		    *tokend != '\t'; tokend++)
			;
		ok = encode_q_ok(tokend, (size_t)(end - tokend));
		if (encode_token_is(tok, (size_t)(tokend - tok), "br"))
			br = ok;
		else if (encode_token_is(tok, (size_t)(tokend - tok), "gzip") ||
		    encode_token_is(tok, (size_t)(tokend - tok), "x-gzip"))
			gz = ok;
		else if (encode_token_is(tok, (size_t)(tokend - tok), "*"))
			any = ok;
		p = *end == ',' ? end + 1 : end;
	}
	*br_out = br;
	*gz_out = gz;
	*any_out = any;
}

/* 1 when a coding that ae named as named (encode_parse()'s -1, 0 or 1) is accepted. */
static int
encode_ok(int named, int any)
{
	return named == 1 || (named == -1 && any == 1);
}

enum encode_coding
encode_choose(const char *ae)
{
	int br, gz, any;

	/* One pass over the header for both codings: this runs for every response. */
	if (ae == NULL)
		return ENCODE_IDENTITY;
	encode_parse(ae, &br, &gz, &any);
	if (encode_ok(br, any))
		return ENCODE_BR;
	if (encode_ok(gz, any))
		return ENCODE_GZIP;
	return ENCODE_IDENTITY;
}

int
encode_accepts(const char *ae, enum encode_coding c)
{
	int br, gz, any;

	if (c == ENCODE_IDENTITY)
		return 1;
	if (ae == NULL)
		return 0;
	encode_parse(ae, &br, &gz, &any);
	return encode_ok(c == ENCODE_BR ? br : gz, any);
}

static int
encode_gzip(const char *in, size_t len, char *out, size_t *outlen)
{
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)*outlen;
	rc = deflate(&z, Z_FINISH);
	*outlen = z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}

/*
 * Brotli sizes its ring buffer by the window: 2^21 bytes is past glibc's mmap threshold
 * (serve.c), so every response mapped fresh pages and faulted in each one it wrote (52
 * faults for the 190 kB chat page); the window of a smaller body comes from the heap,
 * whose pages are reused.
 */
int
encode_br_window(size_t len)
{
	int w = BROTLI_MIN_WINDOW_BITS;

	while (w < ENCODE_BR_LGWIN && ((size_t)1 << w) < len)
		w++;
	return w;
}

int
encode_response(const struct req *rq, struct resp *rs)
{
	enum encode_coding c = encode_choose(req_header(rq, "Accept-Encoding"));
	size_t len = rs->body.len, outlen;
	char *out;

	if (resp_header(rs, "Vary", "Accept-Encoding") < 0)
		return -1;
	if (c == ENCODE_IDENTITY || len < ENCODE_MIN || rs->body.data == NULL)
		return 0;
	if (c == ENCODE_BR) {
		outlen = BrotliEncoderMaxCompressedSize(len);
		if (outlen == 0 || (out = arena_alloc(rq->arena, outlen)) == NULL)
			return -1;
		if (!BrotliEncoderCompress(ENCODE_BR_QUALITY, encode_br_window(len),
		    BROTLI_MODE_TEXT, len, (const uint8_t *)rs->body.data, &outlen,
		    (uint8_t *)out)) {
			log_warn("brotli compression failed");
			return -1;
		}
	} else {
		if (len > 0xffffffffu)
			return -1;
		outlen = compressBound((uLong)len) + 32;
		if ((out = arena_alloc(rq->arena, outlen)) == NULL)
			return -1;
		if (encode_gzip(rs->body.data, len, out, &outlen) < 0) {
			log_warn("gzip compression failed");
			return -1;
		}
	}
	rs->body.len = 0;
	if (buf_append(&rs->body, out, outlen) < 0 ||
	    resp_header(rs, "Content-Encoding", c == ENCODE_BR ? "br" : "gzip") < 0)
		return -1;
	return 0;
}
