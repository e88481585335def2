/*
 * test_chatlib: the library pieces under the chat endpoints: the template engine (parse
 * errors, blocks, escaping that cannot be bypassed), Accept-Encoding negotiation, the
 * field rules (code points, character classes), the validation table's reader and its
 * refusals, form bodies read as their JSON twins, and group commit on a real SQLite file
 * (many threads, every write committed, fewer transactions than writes, one failing
 * write undone alone, one file lock held while a batch writes: the writers' queue), the
 * version board shared through a file, and the page cache: labels checked against the
 * board, gzip pages spliced from cached deflate blocks that inflate to the plain page.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "buf.h"
#include "chat/body.h"
#include "chat/chat.h"
#include "chat/pagecache.h"
#include "chat/version.h"
#include "db.h"
#include "encode.h"
#include "gcommit.h"
#include "req.h"
#include "resp.h"
#include "tmpl.h"
#include "../lib/harness.h"

#include <zlib.h>

static const char *const slots[] = { "title", "item", NULL };
static const char *const blocks[] = { "items", NULL };

static int
rows(void *ctx, int block, size_t i, struct tmpl_val *vals)
{
	const char *const *items = ctx;

	(void)block;
	if (items[i] == NULL)
		return 0;
	vals[1].s = items[i];
	vals[1].len = strlen(items[i]);
	return 1;
}

static void
test_tmpl_render(void)
{
	const char *src = "<h1>{{title}}</h1><ul>{{#items}}<li>{{item}}</li>{{/items}}</ul>";
	const char *items[] = { "a", "<b>", "\"q\" & 'p'", NULL };
	const char *none[] = { NULL };
	struct tmpl_val vals[2] = { { "<script>x</script>", 18 }, { NULL, 0 } };
	struct tmpl *t;
	struct buf b;
	char err[128];

	buf_init(&b, 0);
	t = tmpl_parse(src, strlen(src), slots, blocks, err, sizeof(err));
	CHECK(t != NULL);
	if (t == NULL)
		return;
	CHECK(tmpl_render(t, &b, vals, rows, items) == 0);
	CHECK_STR(b.data, "<h1>&lt;script&gt;x&lt;/script&gt;</h1><ul><li>a</li>"
	    "<li>&lt;b&gt;</li><li>&quot;q&quot; &amp; &#39;p&#39;</li></ul>");
	b.len = 0;
	CHECK(tmpl_render(t, &b, vals, rows, none) == 0);
	b.data[b.len] = '\0';
	CHECK_STR(b.data, "<h1>&lt;script&gt;x&lt;/script&gt;</h1><ul></ul>");
	tmpl_free(t);
	buf_free(&b);
}

static void
test_tmpl_errors(void)
{
	static const char *const bad[] = {
		"{{nope}}", "{{#nope}}{{/nope}}", "{{#items}}", "{{/items}}", "{{title",
		"{{#items}}{{#items}}{{/items}}{{/items}}", "{{ title }}", "{{}}",
		"{{{title}}}",
	};
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tmpl *t = tmpl_parse(bad[i], strlen(bad[i]), slots, blocks, err,
		    sizeof(err));

		if (t != NULL)
			printf("  accepted: %s\n", bad[i]);
		CHECK(t == NULL);
		tmpl_free(t);
	}
}

static void
test_encode_choose(void)
{
	static const struct {
		const char *ae;
		enum encode_coding want;
	} cases[] = {
		{ NULL, ENCODE_IDENTITY }, { "", ENCODE_IDENTITY }, { "br", ENCODE_BR },
		{ "gzip, deflate, br", ENCODE_BR }, { "gzip", ENCODE_GZIP },
		{ "br;q=0, gzip", ENCODE_GZIP }, { "br;q=0.0,gzip;q=0", ENCODE_IDENTITY },
		{ "identity", ENCODE_IDENTITY }, { "*", ENCODE_BR }, { "BR", ENCODE_BR },
		{ "gzip;q=0.5, br;q=0.001", ENCODE_BR }, { "x-gzip", ENCODE_GZIP },
		{ "deflate", ENCODE_IDENTITY }, { "brotli", ENCODE_IDENTITY },
		{ "*;q=0, gzip", ENCODE_GZIP },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (encode_choose(cases[i].ae) != cases[i].want)
			printf("  case %zu: %s\n", i, cases[i].ae ? cases[i].ae : "(null)");
		CHECK_INT(encode_choose(cases[i].ae), cases[i].want);
	}
}

/* encode_br_window(): the smallest window that holds the body, 2^10 to 2^21 bytes; a
 * 190 kB page gets 2^18, whose ring buffer comes from the heap rather than fresh pages. */
static void
test_encode_br_window(void)
{
	static const struct {
		size_t len;
		int want;
	} cases[] = {
		{ 0, 10 }, { 1, 10 }, { 1024, 10 }, { 1025, 11 }, { 190000, 18 },
		{ 262144, 18 }, { 262145, 19 }, { 2097152, 21 }, { 2097153, 21 },
		{ (size_t)1 << 40, 21 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (encode_br_window(cases[i].len) != cases[i].want)
			printf("  len %zu\n", cases[i].len);
		CHECK_INT(encode_br_window(cases[i].len), cases[i].want);
	}
}

/* encode_accepts(): gzip is taken whenever it is acceptable, br or not. */
static void
test_encode_accepts(void)
{
	static const struct {
		const char *ae;
		int gzip, br;
	} cases[] = {
		{ NULL, 0, 0 }, { "", 0, 0 }, { "gzip, deflate, br", 1, 1 }, { "br", 0, 1 },
		{ "gzip;q=0, br", 0, 1 }, { "*", 1, 1 }, { "*;q=0, gzip", 1, 0 },
		{ "X-GZIP", 1, 0 }, { "identity", 0, 0 }, { "gzip;q=0.001", 1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(encode_accepts(cases[i].ae, ENCODE_GZIP), cases[i].gzip);
		CHECK_INT(encode_accepts(cases[i].ae, ENCODE_BR), cases[i].br);
		CHECK_INT(encode_accepts(cases[i].ae, ENCODE_IDENTITY), 1);
	}
}

/* Inflates a gzip member whole (CRC and length checked by zlib) into out[cap]: its
 * length, or -1. */
static long
gunzip_buf(const char *in, size_t len, char *out, size_t cap)
{
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -1;
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	rc = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	return rc == Z_STREAM_END && z.avail_in == 0 ? (long)z.total_out : -1;
}

/*
 * chat_version_quiet(): since a sequence, a message in another channel keeps a channel
 * quiet (its list may be stored), one in its slot or any nickname change does not; a
 * board made before the per-slot sequences (a shorter file) is extended with zeros.
 */
static void
test_version_quiet(void)
{
	char dir[] = "/tmp/test_chatlib.XXXXXX", url[128], path[160];
	struct stat sb;
	uint64_t seq;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(url, sizeof(url), "sqlite:%s/chat.db", dir);
	snprintf(path, sizeof(path), "%s/" CHAT_VERSION_FILE, dir);
	/* The board as it was: seq and the two counter arrays. */
	CHECK((fd = open(path, O_RDWR | O_CREAT, 0600)) >= 0);
	CHECK(ftruncate(fd, (off_t)(8 * (1 + CHAT_VERSION_SLOTS + CHAT_VERSION_USER_SLOTS)))
	    == 0);
	close(fd);
	setenv("SLUICE_DB", url, 1);
	chat_version_close();
	CHECK_INT(chat_version_open(), 0);
	CHECK(stat(path, &sb) == 0 && sb.st_size >
	    (off_t)(8 * (1 + CHAT_VERSION_SLOTS + CHAT_VERSION_USER_SLOTS)));
	seq = chat_version_seq();
	CHECK(chat_version_quiet(7, seq));
	chat_version_bump_channel(8);
	CHECK(chat_version_quiet(7, seq));
	CHECK(!chat_version_quiet(8, seq));
	chat_version_bump_channel(7 + CHAT_VERSION_SLOTS);
	CHECK(!chat_version_quiet(7, seq));
	CHECK(chat_version_quiet(7, chat_version_seq()));
	seq = chat_version_seq();
	CHECK(chat_version_quiet(7, seq) && chat_version_quiet(8, seq));
	chat_version_bump_user(9);
	CHECK(!chat_version_quiet(7, seq) && !chat_version_quiet(8, seq));
	CHECK(chat_version_quiet(8, chat_version_seq()));
	chat_version_close();
	unsetenv("SLUICE_DB");
	(void)unlink(path);
	(void)rmdir(dir);
}

/*
 * The version board (a real file, mapped twice as two processes would) and the cache:
 * a label holds until its channel's or an author's counter moves; a spliced gzip page
 * and a spliced identity page are the plain page, for lists empty and long.
 */
static void
test_page_cache(void)
{
	char dir[] = "/tmp/test_chatlib.XXXXXX", url[128], path[160], *plain, *out;
	struct chat_author au[2];
	struct chat_frag *f, *g, *h;
	struct arena *a = arena_new(16 * 1024 * 1024);
	struct buf body;
	size_t i, lens[] = { 0, 1, 70000 }, li, head = 1500, tail = 900, at;
	uint64_t v0;
	long n;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(url, sizeof(url), "sqlite:%s/chat.db", dir);
	setenv("SLUICE_DB", url, 1);
	CHECK_INT(chat_version_open(), 0);
	CHECK(chat_version_ready());
	snprintf(path, sizeof(path), "%s/" CHAT_VERSION_FILE, dir);
	CHECK(access(path, R_OK | W_OK) == 0);
	v0 = chat_version_channel(7);
	CHECK_INT(chat_version_channel(7 + CHAT_VERSION_SLOTS), v0);	/* one slot */
	au[0].slot = chat_version_user_slot(3);
	au[0].ver = chat_version_user(au[0].slot);
	au[1].slot = chat_version_user_slot(5);
	au[1].ver = chat_version_user(au[1].slot);
	/* No table yet: nothing is kept. */
	CHECK(chat_cache_put(7, v0, au, 2, NULL, 0, "<li>x</li>", 10) == NULL);
	CHECK(chat_cache_get(7, v0) == NULL);
	CHECK_INT(chat_cache_init(64), 0);
	f = chat_cache_put(7, v0, au, 2, NULL, 0, "<li>x</li>", 10);
	CHECK(f != NULL);
	chat_cache_release(f);
	CHECK((g = chat_cache_get(7, v0)) != NULL);
	chat_cache_release(g);
	CHECK(chat_cache_get(8, v0) == NULL);
	/* Another author's nickname: the label holds; this one's: it does not. */
	chat_version_bump_user(4);
	CHECK((g = chat_cache_get(7, v0)) != NULL);
	chat_cache_release(g);
	chat_version_bump_user(5);
	CHECK(chat_cache_get(7, v0) == NULL);
	/* A message elsewhere leaves the channel's counter; one in it moves it. */
	chat_version_bump_channel(8);
	CHECK_INT(chat_version_channel(7), v0);
	chat_version_bump_channel(7);
	CHECK_INT(chat_version_channel(7), v0 + 1);
	CHECK(chat_version_seq() >= 4);

	/* Splicing: head + list + tail, with the list cached, both codings. */
	plain = malloc(head + 70000 + tail + 1);
	out = malloc(head + 70000 + tail + 1024);
	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (i = 0; i < head + lens[li] + tail; i++)
			plain[i] = (char)('a' + (i * 7 + i / 13) % 26);
		f = chat_cache_put(100 + (int64_t)li, 1, NULL, 0, NULL, 0, plain + head, lens[li]);
		CHECK(f != NULL);
		if (f == NULL)
			continue;
		for (at = 0; at < 2; at++) {
			/* at 0: the page without its list (a hit); 1: with it (just stored). */
			buf_init(&body, 0);
			CHECK(buf_append(&body, plain, head) == 0);
			if (at == 1)
				CHECK(buf_append(&body, plain + head, lens[li]) == 0);
			CHECK(buf_append(&body, plain + head + lens[li], tail) == 0);
			CHECK_INT(chat_cache_gzip(&body, head, at == 1 ? lens[li] : 0, f, a), 0);
			n = gunzip_buf(body.data, body.len, out, head + 70000 + tail + 1024);
			CHECK_INT(n, (long)(head + lens[li] + tail));
			CHECK(n >= 0 && memcmp(out, plain, (size_t)n) == 0);
			buf_free(&body);
		}
		buf_init(&body, 0);
		CHECK(buf_append(&body, plain, head) == 0 &&
		    buf_append(&body, plain + head + lens[li], tail) == 0);
		CHECK_INT(chat_cache_splice(&body, head, f, a), 0);
		CHECK(body.len == head + lens[li] + tail &&
		    memcmp(body.data, plain, body.len) == 0);
		buf_free(&body);
		/* Stored fast; found the second time, compressed again at the default
		 * level in its place: the same list, no longer, and the pages it makes the
		 * same. */
		CHECK((g = chat_cache_get(100 + (int64_t)li, 1)) == f);
		chat_cache_release(g);
		g = chat_cache_get(100 + (int64_t)li, 1);
		CHECK(g != NULL && g != f);
		if (g != NULL) {
			CHECK(g->level != f->level && g->len == f->len && g->zlen <= f->zlen &&
			    g->crc == f->crc && memcmp(g->text, f->text, f->len) == 0);
			buf_init(&body, 0);
			CHECK(buf_append(&body, plain, head) == 0 &&
			    buf_append(&body, plain + head + lens[li], tail) == 0);
			CHECK_INT(chat_cache_gzip(&body, head, 0, g, a), 0);
			n = gunzip_buf(body.data, body.len, out, head + 70000 + tail + 1024);
			CHECK_INT(n, (long)(head + lens[li] + tail));
			CHECK(n >= 0 && memcmp(out, plain, (size_t)n) == 0);
			buf_free(&body);
			chat_cache_release(g);
		}
		/* Promoted once: later finds keep it. */
		CHECK((h = chat_cache_get(100 + (int64_t)li, 1)) == g && h != NULL);
		chat_cache_release(h);
		chat_cache_release(f);
		arena_reset(a);
	}
	free(plain);
	free(out);
	arena_free(a);
	chat_cache_free();
	/* A table of 2 slots: channels 7 and 9 share one and evict each other, 8 has its own;
	 * made again after chat_cache_free(), the table takes its new size. */
	CHECK_INT(chat_cache_init(2), 0);
	v0 = chat_version_channel(7);
	CHECK((f = chat_cache_put(7, v0, NULL, 0, NULL, 0, "<li>7</li>", 10)) != NULL);
	chat_cache_release(f);
	CHECK((f = chat_cache_put(8, chat_version_channel(8), NULL, 0, NULL, 0,
	    "<li>8</li>", 10)) != NULL);
	chat_cache_release(f);
	CHECK((g = chat_cache_get(7, v0)) != NULL);
	chat_cache_release(g);
	CHECK((f = chat_cache_put(9, chat_version_channel(9), NULL, 0, NULL, 0,
	    "<li>9</li>", 10)) != NULL);
	chat_cache_release(f);
	CHECK(chat_cache_get(7, v0) == NULL);
	CHECK((g = chat_cache_get(8, chat_version_channel(8))) != NULL);
	chat_cache_release(g);
	CHECK_INT(chat_cache_init(0), -1);
	chat_cache_free();
	chat_version_close();
	CHECK(!chat_version_ready());
	CHECK_INT(chat_version_seq(), 0);
	unsetenv("SLUICE_DB");
	unlink(path);
	rmdir(dir);
}

/*
 * A list stored in chunks from another (chat_cache_put_list() with a base): the chunks
 * whose text the base holds are its blocks copied, the others compressed anew, and the
 * gzip page made from it is the page.  Lists of 40 rows of 300 bytes, cut every 8 rows;
 * the second drops the first row, changes row 20 and adds one: of its 5 chunks, the 2
 * with none of those rows are the base's.
 */
static void
test_page_cache_chunks(void)
{
	static const char head[] = "<html><body>", tail[] = "</body></html>";
	char *text[2], *out;
	size_t cuts[2][8], ncuts[2] = { 0, 0 }, len[2] = { 0, 0 }, i, k, shared = 0;
	struct chat_frag *f[2] = { NULL, NULL };
	struct chat_list l;
	struct arena *a = arena_new(1 << 20);
	struct buf body;
	int row, from, v;
	long n;

	CHECK_INT(chat_cache_init(4), 0);
	for (v = 0; v < 2; v++) {
		text[v] = malloc(41 * 300);
		from = v;	/* the second list lost row 0 and gained row 40 */
		for (row = from; row < from + 40; row++) {
			if ((row - from) % 8 == 0)
				cuts[v][ncuts[v]++] = len[v];
			for (k = 0; k < 300; k++)
				text[v][len[v] + k] = (char)('a' + (row * 31 + (int)k * 7 +
				    (v == 1 && row == 20)) % 26);
			len[v] += 300;
		}
	}
	/* The cuts fall on rows 0, 8, ... of the first, 1, 9, ... of the second: make the
	 * second cut where the first did, as the page does (by message, not position). */
	for (i = 0; i < 5; i++)
		cuts[1][i] = i == 0 ? 0 : cuts[0][i] - 300;
	for (v = 0; v < 2; v++) {
		memset(&l, 0, sizeof(l));
		l.channel = 5;
		l.ver = (uint64_t)v + 1;
		l.text = text[v];
		l.len = len[v];
		l.cuts = cuts[v];
		l.ncuts = 5;
		l.base = v == 1 ? f[0] : NULL;
		CHECK((f[v] = chat_cache_put_list(&l)) != NULL);
		if (f[v] == NULL)
			goto out;
		CHECK_INT(f[v]->nchunks, 5);
	}
	for (i = 0; i < 5; i++)
		for (k = 0; k < 5; k++)
			shared += f[1]->chunks[i].zlen == f[0]->chunks[k].zlen &&
			    memcmp(f[1]->z + f[1]->chunks[i].zat, f[0]->z + f[0]->chunks[k].zat,
			    f[0]->chunks[k].zlen) == 0 && f[1]->chunks[i].len == 8 * 300 &&
			    memcmp(text[1] + f[1]->chunks[i].at, text[0] + f[0]->chunks[k].at,
			    8 * 300) == 0;
	CHECK_INT(shared, 2);
	out = malloc(len[1] + 100);
	buf_init(&body, 0);
	CHECK(buf_append(&body, head, strlen(head)) == 0 &&
	    buf_append(&body, tail, strlen(tail)) == 0);
	CHECK_INT(chat_cache_gzip(&body, strlen(head), 0, f[1], a), 0);
	n = gunzip_buf(body.data, body.len, out, len[1] + 100);
	CHECK_INT(n, (long)(strlen(head) + len[1] + strlen(tail)));
	CHECK(n > 0 && memcmp(out + strlen(head), text[1], len[1]) == 0 &&
	    memcmp(out + strlen(head) + len[1], tail, strlen(tail)) == 0);
	CHECK(f[1]->crc == crc32(0L, (const Bytef *)text[1], (uInt)len[1]));
	buf_free(&body);
	free(out);
out:
	chat_cache_release(f[0]);
	chat_cache_release(f[1]);
	free(text[0]);
	free(text[1]);
	arena_free(a);
	chat_cache_free();
}

static void
test_chat_fields(void)
{
	static const struct {
		const char *s;
		size_t min, max;
		enum chat_kind chars;
		enum chat_field_err want;
	} cases[] = {
		{ "hello", 1, 500, CHAT_KIND_TEXT, CHAT_FIELD_OK },
		{ "", 1, 500, CHAT_KIND_TEXT, CHAT_FIELD_LENGTH },
		{ "a\tb\nc", 1, 500, CHAT_KIND_TEXT, CHAT_FIELD_OK },
		{ "a\rb", 1, 500, CHAT_KIND_TEXT, CHAT_FIELD_CHARS },
		{ "a\x01", 1, 500, CHAT_KIND_TEXT, CHAT_FIELD_CHARS },
		{ "a\x7f", 1, 500, CHAT_KIND_TEXT, CHAT_FIELD_CHARS },
		{ "\xc2\x85", 1, 500, CHAT_KIND_TEXT, CHAT_FIELD_CHARS },	/* U+0085 */
		{ "\xc3\xa9\xc3\xa9", 1, 2, CHAT_KIND_TEXT, CHAT_FIELD_OK },	/* 2 code points */
		{ "\xc3\xa9\xc3\xa9\xc3\xa9", 1, 2, CHAT_KIND_TEXT, CHAT_FIELD_LENGTH },
		{ "<script>", 1, 500, CHAT_KIND_TEXT, CHAT_FIELD_OK },
		{ "c_00000001", 1, 32, CHAT_KIND_CHANNEL, CHAT_FIELD_OK },
		{ "_x-1", 1, 32, CHAT_KIND_CHANNEL, CHAT_FIELD_OK },
		{ "1abc", 1, 32, CHAT_KIND_CHANNEL, CHAT_FIELD_CHARS },
		{ "-abc", 1, 32, CHAT_KIND_CHANNEL, CHAT_FIELD_CHARS },
		{ "Abc", 1, 32, CHAT_KIND_CHANNEL, CHAT_FIELD_CHARS },
		{ "a b", 1, 32, CHAT_KIND_CHANNEL, CHAT_FIELD_CHARS },
		{ "abcdefghijabcdefghijabcdefghijabc", 1, 32, CHAT_KIND_CHANNEL,
		    CHAT_FIELD_LENGTH },
		{ "Alice B_-9", 1, 32, CHAT_KIND_NICKNAME, CHAT_FIELD_OK },
		{ "<script>", 1, 32, CHAT_KIND_NICKNAME, CHAT_FIELD_CHARS },
		{ "\xc3\xa9", 1, 32, CHAT_KIND_NICKNAME, CHAT_FIELD_CHARS },
		{ "", 1, 32, CHAT_KIND_NICKNAME, CHAT_FIELD_LENGTH },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Text as the messages take it: tab and newline are its only controls. */
		struct chat_field f = { .name = "f", .kind = cases[i].chars,
		    .min = cases[i].min, .max = cases[i].max,
		    .ctrl = CHAT_CTRL('\t') | CHAT_CTRL('\n') };
		enum chat_field_err e;

		e = chat_field_check(&f, cases[i].s, strlen(cases[i].s));

		if (e != cases[i].want)
			printf("  case %zu: \"%s\"\n", i, cases[i].s);
		CHECK_INT(e, cases[i].want);
	}
	CHECK_INT(chat_utf8_len("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10), 4);
}

/* Rows as the write endpoints hold them: a message and a nickname. */
static const struct chat_field tf_rows[] = {
	{ .name = "messageSend", .kind = CHAT_KIND_TEXT, .min = 1, .max = 500,
	    .ctrl = CHAT_CTRL('\t') | CHAT_CTRL('\n'), .required = 1, .status = 400,
	    .code = "invalid_value", .len_msg = "messageSend must be 1 to 500 characters",
	    .chars_msg = "messageSend may not contain control characters",
	    .chars_hint = "tab and newline are allowed" },
	{ .name = "nicknameSet", .kind = CHAT_KIND_NICKNAME, .min = 1, .max = 32,
	    .required = 0, .status = 422, .code = "invalid_nickname",
	    .signal = "_nicknameSetError",
	    .len_msg = "The nickname must be 1 to 32 characters.",
	    .len_hint = "1 to 32 characters: letters, digits, space, _ and -",
	    .chars_msg = "The nickname may contain only letters, digits, spaces, _ and -.",
	    .chars_hint = "1 to 32 characters: letters, digits, space, _ and -" },
};

/*
 * The table's reader on decoded bytes, whatever encoding they came in: NUL and bad UTF-8
 * in a value, an unknown or repeated name, a missing required field; what is stored.
 */
static void
test_chat_field_read(void)
{
	struct chat_value v[2];
	size_t row = 99;

	memset(v, 0, sizeof(v));
	CHECK_INT(chat_field_missing(tf_rows, 2, v), 0);
	CHECK_INT(chat_field_read(tf_rows, 2, v, "nicknameSet", "a\0b", 3, &row),
	    CHAT_FIELD_NUL);
	CHECK_INT(row, 1);
	CHECK_INT(chat_field_read(tf_rows, 2, v, "nicknameSet", "\xc3", 1, NULL),
	    CHAT_FIELD_UTF8);
	CHECK_INT(chat_field_read(tf_rows, 2, v, "messageSend", "\xed\xa0\x80", 3, NULL),
	    CHAT_FIELD_UTF8);	/* a surrogate */
	CHECK_INT(chat_field_read(tf_rows, 2, v, "nicknameset", "x", 1, &row),
	    CHAT_FIELD_UNKNOWN);
	CHECK_INT(row, 2);
	CHECK_INT(chat_field_read(tf_rows, 2, v, NULL, "x", 1, NULL), CHAT_FIELD_UNKNOWN);
	CHECK(v[0].s == NULL && v[1].s == NULL);
	CHECK_INT(chat_field_read(tf_rows, 2, v, "messageSend", "hi\tthere", 8, &row),
	    CHAT_FIELD_OK);
	CHECK_INT(row, 0);
	CHECK(v[0].s != NULL && v[0].len == 8 && memcmp(v[0].s, "hi\tthere", 8) == 0);
	CHECK_INT(chat_field_read(tf_rows, 2, v, "messageSend", "again", 5, NULL),
	    CHAT_FIELD_TWICE);
	CHECK_INT(v[0].len, 8);
	/* The nickname is optional in this table: nothing is missing now. */
	CHECK_INT(chat_field_missing(tf_rows, 2, v), 2);
}

/* The answers: a row's own for its rules (400, or 422 led by the page's signal), else
 * 400 invalid_body, all of the {code, message, details, hint} shape. */
static void
test_chat_field_refuse(void)
{
	static const struct {
		const struct chat_field *f;
		const char *name;
		enum chat_field_err e;
		int status;
		const char *ctype, *body;
	} cases[] = {
		{ &tf_rows[1], "nicknameSet", CHAT_FIELD_LENGTH, 422, "application/json",
		    "{\"_nicknameSetError\":\"The nickname must be 1 to 32 characters.\","
		    "\"code\":\"invalid_nickname\",\"message\":\"The nickname must be 1 to 32 "
		    "characters.\",\"details\":null,\"hint\":\"1 to 32 characters: letters, "
		    "digits, space, _ and -\"}" },
		{ &tf_rows[0], "messageSend", CHAT_FIELD_CHARS, 400, NULL,
		    "{\"code\":\"invalid_value\",\"message\":\"messageSend may not contain "
		    "control characters\",\"details\":null,\"hint\":\"tab and newline are "
		    "allowed\"}" },
		{ &tf_rows[0], "messageSend", CHAT_FIELD_LENGTH, 400, NULL,
		    "{\"code\":\"invalid_value\",\"message\":\"messageSend must be 1 to 500 "
		    "characters\",\"details\":null,\"hint\":null}" },
		{ NULL, "evil", CHAT_FIELD_UNKNOWN, 400, NULL,
		    "{\"code\":\"invalid_body\",\"message\":\"unexpected key in the body\","
		    "\"details\":\"evil\",\"hint\":null}" },
		{ &tf_rows[0], "messageSend", CHAT_FIELD_TWICE, 400, NULL,
		    "{\"code\":\"invalid_body\",\"message\":\"a key appears twice\","
		    "\"details\":\"messageSend\",\"hint\":null}" },
		{ &tf_rows[0], "messageSend", CHAT_FIELD_MISSING, 400, NULL,
		    "{\"code\":\"invalid_body\",\"message\":\"the body must have the key "
		    "\\\"messageSend\\\"\",\"details\":null,\"hint\":null}" },
		{ &tf_rows[1], "nicknameSet", CHAT_FIELD_NUL, 400, NULL,
		    "{\"code\":\"invalid_body\",\"message\":\"NUL characters are not allowed\","
		    "\"details\":null,\"hint\":null}" },
		{ &tf_rows[1], "nicknameSet", CHAT_FIELD_UTF8, 400, NULL,
		    "{\"code\":\"invalid_body\",\"message\":\"the string is not valid UTF-8\","
		    "\"details\":null,\"hint\":null}" },
	};
	struct resp rs;
	size_t i;

	resp_init(&rs, 1 << 16);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		resp_reset(&rs);
		CHECK_INT(chat_field_refuse(&rs, cases[i].f, cases[i].name, cases[i].e), -1);
		CHECK_INT(rs.status, cases[i].status);
		if (cases[i].ctype != NULL)
			CHECK_STR(rs.content_type, cases[i].ctype);
		buf_putc(&rs.body, '\0');
		CHECK_STR(rs.body.data, cases[i].body);
	}
	resp_free(&rs);
}

/* One body through chat_body_read() with the table tf_rows: its status (0 accepted), the
 * answer's body or the accepted values ("messageSend|nicknameSet") into out. */
static int
body_read(const char *ctype, const char *body, char *out, size_t outlen)
{
	static char ct[96];
	char *envp[3] = { (char *)(uintptr_t)"REQUEST_METHOD=POST", ct, NULL };
	struct arena *a = arena_new(1 << 16);
	struct chat_value v[2];
	struct resp rs;
	struct req rq;
	int status = -1;

	snprintf(ct, sizeof(ct), "CONTENT_TYPE=%s", ctype);
	resp_init(&rs, 1 << 16);
	if (a == NULL || req_init(&rq, envp, a) != REQ_OK)
		goto out;
	rq.body = body;
	rq.body_len = strlen(body);
	if (chat_body_read(&rq, &rs, tf_rows, 2, v) == 0) {
		snprintf(out, outlen, "%.*s|%.*s", (int)v[0].len, v[0].s ? v[0].s : "",
		    (int)v[1].len, v[1].s ? v[1].s : "");
		status = 0;
	} else {
		buf_putc(&rs.body, '\0');
		snprintf(out, outlen, "%s", rs.body.data);
		status = rs.status;
	}
out:
	resp_free(&rs);
	arena_free(a);
	return status;
}

/*
 * A form body and its JSON twin are read by the same table: the same values, or the same
 * refusal, byte for byte (the form is the page without its script).
 */
static void
test_chat_body_form(void)
{
	static const struct {
		const char *form, *json;
		int status;
	} cases[] = {
		{ "messageSend=hi+there%21%0A%E2%82%AC", "{\"messageSend\":\"hi there!\\n\u20ac\"}",
		    0 },
		{ "messageSend=x&nicknameSet=Bob", "{\"messageSend\":\"x\",\"nicknameSet\":\"Bob\"}",
		    0 },
		{ "channelOpen=&messageSend=x", "{\"channelOpen\":\"\",\"messageSend\":\"x\"}", 0 },
		{ "messageSend=", "{\"messageSend\":\"\"}", 400 },
		{ "messageSend=a%01b", "{\"messageSend\":\"a\\u0001b\"}", 400 },
		{ "messageSend=x&nicknameSet=a%3Cb", "{\"messageSend\":\"x\",\"nicknameSet\":\"a<b\"}",
		    422 },
		{ "nicknameSet=Bob", "{\"nicknameSet\":\"Bob\"}", 400 },
		{ "messageSend=x&messageSend=y", "{\"messageSend\":\"x\",\"messageSend\":\"y\"}",
		    400 },
		{ "messageSend=x&evil=1", "{\"messageSend\":\"x\",\"evil\":\"1\"}", 400 },
	};
	char f[512], j[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(body_read("application/x-www-form-urlencoded", cases[i].form, f,
		    sizeof(f)), cases[i].status);
		CHECK_INT(body_read("application/json", cases[i].json, j, sizeof(j)),
		    cases[i].status);
		if (strcmp(f, j) != 0)
			printf("  case %zu: form %s\n  json %s\n", i, f, j);
		CHECK_STR(f, j);
	}
	/* What only a form can get wrong: a bad escape, a NUL, bytes that are not UTF-8 (JSON
	 * refuses those at parse time), a name that is not text. */
	CHECK_INT(body_read("application/x-www-form-urlencoded", "messageSend=%C3%28", f,
	    sizeof(f)), 400);
	CHECK_STR(f, "{\"code\":\"invalid_body\",\"message\":\"the string is not valid "
	    "UTF-8\",\"details\":null,\"hint\":null}");
	CHECK_INT(body_read("application/x-www-form-urlencoded", "messageSend=%zz", f,
	    sizeof(f)), 400);
	CHECK(strstr(f, "malformed form encoding") != NULL);
	CHECK_INT(body_read("application/x-www-form-urlencoded", "messageSend=a%00", f,
	    sizeof(f)), 400);
	CHECK_INT(body_read("application/x-www-form-urlencoded", "caf%E9=1&messageSend=x", f,
	    sizeof(f)), 400);
	CHECK_STR(f, "{\"code\":\"invalid_body\",\"message\":\"unexpected key in the body\","
	    "\"details\":null,\"hint\":null}");
	CHECK_INT(body_read("text/plain", "messageSend=x", f, sizeof(f)), 415);
}

/* Group commit: THREADS threads with a connection each write N rows through it. */
#define GC_THREADS	8
#define GC_N		50

static char gc_path[128];

static int
gc_insert(struct db *db, void *arg)
{
	struct db_stmt *st = db_prepare(db, "INSERT INTO t(v) VALUES ($1)");

	if (st == NULL)
		return -1;
	db_bind_int(st, 1, *(int *)arg);
	return db_step(st) == DB_DONE ? 0 : -1;
}

static void *
gc_worker(void *arg)
{
	struct db *db = NULL;
	char err[128];
	int i, v, *bad = arg;

	if (db_open(&db, gc_path, NULL, err, sizeof(err)) < 0) {
		(*bad)++;
		return NULL;
	}
	for (i = 0; i < GC_N; i++) {
		/* Every 10th write violates the CHECK: it alone must be undone. */
		v = i % 10 == 9 ? -1 : i;
		if (gcommit_run(db, gc_insert, &v, NULL) != (v < 0 ? -1 : 0))
			(*bad)++;
	}
	db_close(db);
	return NULL;
}

static void
test_gcommit(void)
{
	pthread_t tids[GC_THREADS];
	int bad[GC_THREADS] = { 0 }, i, total = 0;
	struct db *db = NULL;
	struct db_stmt *st;
	struct gcommit_counts c;
	char err[128], file[100];

	snprintf(file, sizeof(file), "/tmp/sluice-gcommit-%d.db", (int)getpid());
	snprintf(gc_path, sizeof(gc_path), "sqlite:%s", file);
	CHECK(db_open(&db, gc_path, NULL, err, sizeof(err)) == 0);
	if (db == NULL)
		return;
	CHECK(db_exec(db, "CREATE TABLE t(v integer CHECK (v >= 0))") == 0);
	/* The batches queue across processes on "<file>-wlock", as the chat endpoints'. */
	snprintf(err, sizeof(err), "%s-wlock", file);
	CHECK(access(err, F_OK) == 0);
	for (i = 0; i < GC_THREADS; i++)
		pthread_create(&tids[i], NULL, gc_worker, &bad[i]);
	for (i = 0; i < GC_THREADS; i++) {
		pthread_join(tids[i], NULL);
		total += bad[i];
	}
	CHECK_INT(total, 0);
	st = db_prepare(db, "SELECT count(*) FROM t");
	CHECK(st != NULL && db_step(st) == DB_ROW);
	CHECK_INT(db_column_int(st, 0), GC_THREADS * GC_N * 9 / 10);
	db_reset(st);
	gcommit_counts(&c);
	printf("  %ld writes in %ld transactions\n", c.writes, c.batches);
	CHECK_INT(c.writes, GC_THREADS * GC_N);
	CHECK(c.batches <= c.writes);
	db_close(db);
	snprintf(err, sizeof(err), "%s-wlock", file);
	unlink(err);
	snprintf(err, sizeof(err), "%s-wal", file);
	unlink(err);
	snprintf(err, sizeof(err), "%s-shm", file);
	unlink(err);
	unlink(file);
}

/*
 * The flock() locks this process holds, from /proc/locks: on the inode ino into *queue,
 * on any other file into *other (waiters, "->", do not count).  A read of /proc/locks
 * longer than a page is not one snapshot (other processes lock meanwhile, and a lock can
 * show twice), so the files locked are told apart, not counted.  Returns 0, or -1 when
 * /proc/locks cannot be read.
 */
static int
gc_flocks(unsigned long ino, int *queue, int *other)
{
	char line[256], type[16], dev[64];
	unsigned long i;
	long pid;
	FILE *f;

	*queue = *other = 0;
	if ((f = fopen("/proc/locks", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "->") != NULL ||
		    sscanf(line, "%*d: %15s %*s %*s %ld %63s", type, &pid, dev) != 3 ||
		    strcmp(type, "FLOCK") != 0 || pid != (long)getpid() ||
		    strrchr(dev, ':') == NULL || sscanf(strrchr(dev, ':') + 1, "%lu", &i) != 1)
			continue;
		if (i == ino)
			(*queue)++;
		else
			(*other)++;
	}
	fclose(f);
	return 0;
}

struct gc_locks {
	unsigned long ino;	/* of "<file>-wlock" */
	int queue, other;
};

static int
gc_count_locks(struct db *db, void *arg)
{
	struct gc_locks *l = arg;

	if (gc_flocks(l->ino, &l->queue, &l->other) < 0)
		return -1;
	return gc_insert(db, &(int){ 1 });
}

/*
 * One lock per write: while a group-committed write runs, the process holds exactly one
 * file lock, the SQLite writers' queue "<file>-wlock" (db_sqlite.c), taken by the
 * batch's BEGIN; the group commit adds none of its own.
 */
static void
test_gcommit_one_lock(void)
{
	struct gc_locks l = { 0, -1, -1 };
	struct db *db = NULL;
	char url[160], file[100], path[140];
	struct stat sb;
	int queue, other;

	snprintf(file, sizeof(file), "/tmp/sluice-gcommit1-%d.db", (int)getpid());
	snprintf(url, sizeof(url), "sqlite:%s", file);
	CHECK(db_open(&db, url, NULL, path, sizeof(path)) == 0);
	if (db == NULL)
		return;
	CHECK(db_exec(db, "CREATE TABLE t(v integer CHECK (v >= 0))") == 0);
	snprintf(path, sizeof(path), "%s-wlock", file);
	CHECK_INT(stat(path, &sb), 0);
	l.ino = (unsigned long)sb.st_ino;
	CHECK_INT(gcommit_run(db, gc_count_locks, &l, NULL), 0);
	CHECK(l.queue >= 1);
	CHECK_INT(l.other, 0);
	/* And it is let go with the commit. */
	CHECK_INT(gc_flocks(l.ino, &queue, &other), 0);
	CHECK_INT(queue + other, 0);
	db_close(db);
	unlink(path);
	snprintf(path, sizeof(path), "%s-wal", file);
	unlink(path);
	snprintf(path, sizeof(path), "%s-shm", file);
	unlink(path);
	unlink(file);
}

int
main(void)
{
	RUN(test_tmpl_render);
	RUN(test_tmpl_errors);
	RUN(test_encode_choose);
	RUN(test_encode_accepts);
	RUN(test_encode_br_window);
	RUN(test_version_quiet);
	RUN(test_page_cache);
	RUN(test_page_cache_chunks);
	RUN(test_chat_fields);
	RUN(test_chat_field_read);
	RUN(test_chat_field_refuse);
	RUN(test_chat_body_form);
	RUN(test_gcommit);
	RUN(test_gcommit_one_lock);
	return harness_done();
}
