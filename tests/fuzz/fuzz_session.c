/*
 * fuzz_session: the signed session cookie (chat_session() in apps/chat/chat.c) on hostile
 * Cookie headers.
 *
 * The input is split at its first NUL: the bytes after it are the Cookie header (cut at the
 * next NUL, as a FastCGI parameter cannot hold one), and every "{mac}" in that header is
 * replaced by the correct HMAC-SHA256 (hex) of the bytes before the NUL under the fuzzing
 * key.  So the fuzzer can build cookies that really are signed, for the session id it
 * chose or for another one, besides forgeries of every shape.
 *
 * Invariants: a session is accepted only when its id is 1..CHAT_SID_MAX-1 bytes of
 * [a-z0-9_] and the header holds "starcord_session=" + that id + "." + the id's correct
 * MAC (recomputed here with OpenSSL, independently of chat.c); a correctly signed cookie
 * for a well-formed id that is the header's only cookie is always accepted.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "arena.h"
#include "chat/chat.h"
#include "req.h"

#define FUZZ_KEY_HEX	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define FUZZ_HDR_MAX	4096

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char fuzz_key[32];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	for (i = 0; i < sizeof(fuzz_key); i++)
		fuzz_key[i] = (unsigned char)i;
	/* No SLUICE_DB: chat_init() touches no file; the key comes from the environment. */
	unsetenv("SLUICE_DB");
	unsetenv("SLUICE_BENCH_SESSIONS");
	setenv("SLUICE_SESSION_KEY", FUZZ_KEY_HEX, 1);
	if (chat_init() < 0)
		abort();
	return 0;
}

static void
fuzz_mac(const char *s, size_t len, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (HMAC(EVP_sha256(), fuzz_key, (int)sizeof(fuzz_key), (const unsigned char *)s, len,
	    md, &mdlen) == NULL || mdlen != 32)
		abort();
	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

static int
fuzz_sid_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= CHAT_SID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct arena *a;
	const char *in = (const char *)data, *nul, *tmpl, *p;
	char hdr[sizeof("HTTP_COOKIE=") + FUZZ_HDR_MAX], mac[65], want[65], sid[CHAT_SID_MAX];
	char *envp[3], *cookie;
	size_t signlen, tlen, off = 0;
	struct req rq;
	int got;

	if (a == NULL)
		a = arena_new(1 << 20);
	arena_reset(a);
	if ((nul = memchr(in, '\0', size)) == NULL)
		return 0;
	signlen = (size_t)(nul - in);
	tmpl = nul + 1;
	tlen = strnlen(tmpl, size - signlen - 1);
	fuzz_mac(in, signlen, mac);

	/* The header: the template with every {mac} replaced. */
	memcpy(hdr, "HTTP_COOKIE=", 12);
	off = 12;
	for (p = tmpl; p < tmpl + tlen; ) {
		if ((size_t)(tmpl + tlen - p) >= 5 && memcmp(p, "{mac}", 5) == 0) {
			if (off + 64 >= sizeof(hdr))
				return 0;
			memcpy(hdr + off, mac, 64);
			off += 64;
			p += 5;
		} else {
			if (off + 1 >= sizeof(hdr))
				return 0;
			hdr[off++] = *p++;
		}
	}
	hdr[off] = '\0';
	cookie = hdr + 12;

	envp[0] = (char *)(uintptr_t)"REQUEST_METHOD=POST";
	envp[1] = hdr;
	envp[2] = NULL;
	if (req_init(&rq, envp, a) != REQ_OK)
		abort();
	memset(sid, 'X', sizeof(sid));
	got = chat_session(&rq, sid);
	if (got != 0 && got != 1)
		abort();
	if (got) {
		size_t n = strnlen(sid, sizeof(sid));
		char needle[sizeof(CHAT_COOKIE) + CHAT_SID_MAX + 66];

		if (n == sizeof(sid) || !fuzz_sid_ok(sid, n))
			abort();
		fuzz_mac(sid, n, want);
		/* The accepted cookie must be in the header, with the id's own MAC. */
		(void)snprintf(needle, sizeof(needle), "%s=%s.%s", CHAT_COOKIE, sid, want);
		if (strstr(cookie, needle) == NULL)
			abort();
	}
	/* The header "starcord_session=ID.{mac}" signed over ID is always accepted. */
	if (fuzz_sid_ok(in, signlen) && tlen == sizeof(CHAT_COOKIE) + signlen + 6 &&
	    memcmp(tmpl, CHAT_COOKIE "=", sizeof(CHAT_COOKIE)) == 0 &&
	    memcmp(tmpl + sizeof(CHAT_COOKIE), in, signlen) == 0 &&
	    memcmp(tmpl + sizeof(CHAT_COOKIE) + signlen, ".{mac}", 6) == 0 &&
	    (!got || memcmp(sid, in, signlen) != 0 || sid[signlen] != '\0'))
		abort();
	return 0;
}
