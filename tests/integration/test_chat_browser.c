/*
 * test_chat_browser: the Starcord chat page in a real browser.  The real stack (nginx
 * tuned, sluiced, bin/chat_* with the page's script and the messages it polls) on a
 * freshly seeded SQLite database, driven by tests/js/chat_browser.test.mjs: Debian's
 * chromium, headless, through puppeteer-core (installed from npm, pinned by
 * tests/js/package-lock.json; it downloads no browser).  The script loads the page (no
 * console error, no failed request, nothing from another host, the newest message in
 * view), sends a message (shown at once, in view, never in a URL), sees another client's
 * message within 2 s, opens a channel and goes back, sets a valid and an invalid nickname
 * (the reason shown below the field), checks a 390x844 phone viewport, and with
 * JavaScript off posts the form (303 back to /, the message in view, not in any URL).
 * Screenshots go to build/test-artifacts/chat-*.png.
 *
 * Then the database behind the stack must hold what the browser did: the three messages,
 * the new channel and the nickname.  Without chromium, node or npm the test fails
 * (the Debian packages chromium, nodejs and npm).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chatfix.h"
#include "jsrun.h"
#include "stack.h"
#include "../lib/harness.h"

static struct stack st;
static char dir[64], dburl[128], nonce[32];
static int up;

static int
setup(void)
{
	char conf[2048 + PATH_MAX];

	snprintf(dir, sizeof(dir), "/tmp/sluice-chatb-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(dburl, sizeof(dburl), "sqlite:%s/chat.db", dir);
	if (chatfix_seed(dburl, "") != 0) {
		fprintf(stderr, "seeding failed\n");
		return -1;
	}
	snprintf(conf, sizeof(conf),
	    "db chat %s\n"
	    "chat_page =/ workers=2 threads=2 db=chat\n"
	    "chat_message_send =/chat/message-send workers=1 threads=4 db=chat\n"
	    "chat_channel_open =/chat/channel-open workers=1 threads=4 db=chat\n"
	    "chat_nickname_set =/chat/nickname-set workers=1 threads=4 db=chat\n"
	    "chat_messages =/chat/messages workers=1 threads=4 db=chat\n"
	    "chat_script =/chat/script.js workers=1 threads=2\n", dburl);
	if (stack_start(&st, conf, "tuned", 2, NULL) < 0)
		return -1;
	up = 1;
	return 0;
}

static void
teardown(void)
{
	if (up)
		stack_stop(&st);
	stack_sh("rm -rf %s", dir);
}

static void
test_chat_in_chromium(void)
{
	char env[256], text[128];

	snprintf(env, sizeof(env), "CHAT_URL='%s' NONCE='%s'", st.base, nonce);
	CHECK(jsrun_browser(env, "chat_browser.test.mjs") == 0);

	/* What the browser did is in the database. */
	snprintf(text, sizeof(text), "browser says hi %s", nonce);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages WHERE content = $1", text),
	    1);
	snprintf(text, sizeof(text), "from another client %s", nonce);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages WHERE content = $1", text),
	    1);
	snprintf(text, sizeof(text), "no script here %s", nonce);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages WHERE content = $1", text),
	    1);
	snprintf(text, sizeof(text), "room_%s", nonce);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM channels WHERE name = $1", text), 1);
	snprintf(text, sizeof(text), "Tester %s", nonce);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users WHERE nickname = $1", text), 1);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users WHERE nickname LIKE $1",
	    "%<%"), 0);
}

int
main(void)
{
	snprintf(nonce, sizeof(nonce), "n%ld", (long)getpid());
	if (jsrun_browser_ready() < 0)
		return harness_done();
	if (setup() < 0) {
		CHECK(!"the chat stack started");
		teardown();
		return harness_done();
	}
	RUN(test_chat_in_chromium);
	teardown();
	return harness_done();
}
