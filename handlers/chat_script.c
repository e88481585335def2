/*
 * chat_script: GET /chat/script.js (and HEAD): the Starcord chat page's script,
 * handlers/chat_script.js, embedded into this binary when it is built (the assembler's
 * .incbin below), so that the page never loads code from elsewhere at run time and the
 * script always matches the binary's version of the page.
 *
 * The answer is text/javascript, compressed by Accept-Encoding (common/encode.h), with
 * "Cache-Control: no-cache" and a strong ETag (a hash of the script made at start-up): a
 * browser revalidates at each page load and gets 304 Not Modified, an empty answer, while
 * the script is unchanged, and the new script as soon as it is not.
 *
 * No parameters, no database.  Statuses: 200; 304 If-None-Match matches; 405 other methods.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "encode.h"
#include "serve.h"

/* The script's bytes in .rodata, and their count (the assembler subtracts the labels). */
__asm__(".section .rodata\n"
    ".global chat_script_js\n"
    "chat_script_js:\n"
    ".incbin \"handlers/chat_script.js\"\n"
    "chat_script_js_end:\n"
    ".balign 8\n"
    ".global chat_script_js_size\n"
    "chat_script_js_size:\n"
    ".quad chat_script_js_end - chat_script_js\n"
    ".previous\n");
extern const char chat_script_js[];
extern const uint64_t chat_script_js_size;

static char script_etag[24];

static int
handle(struct req *rq, struct resp *rs)
{
	const char *inm = req_header(rq, "If-None-Match");

	if (resp_header(rs, "Cache-Control", "no-cache") < 0 ||
	    resp_header(rs, "ETag", script_etag) < 0)
		return -1;
	if (inm != NULL && strstr(inm, script_etag) != NULL) {
		rs->status = 304;
		return 0;
	}
	if (resp_set(rs, 200, "text/javascript; charset=utf-8", chat_script_js,
	    (size_t)chat_script_js_size) < 0)
		return -1;
	/* A failed compression leaves the body as it was: still a correct answer. */
	(void)encode_response(rq, rs);
	return 0;
}

static const struct endpoint endpoint = {
	.name = "chat_script",
	.handle = handle,
	.methods = REQ_GET,
	.db = NULL,
};

int
main(int argc, char **argv)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a 64 */
	uint64_t i;

	for (i = 0; i < chat_script_js_size; i++) {
		h ^= (unsigned char)chat_script_js[i];
		h *= 1099511628211ULL;
	}
	(void)snprintf(script_etag, sizeof(script_etag), "\"%016llx\"", (unsigned long long)h);
	return serve_main(argc, argv, &endpoint);
}
