// The Starcord chat page in a real browser: Debian's chromium, headless, driven by
// puppeteer-core (which downloads no browser).  Run by tests/integration/test_chat_browser.c
// against the real stack, with CHAT_URL (the stack's base URL), NONCE (a word put in every
// message, which the C test then looks for in the database), ARTIFACTS (where the
// screenshots go) and CHROMIUM (the browser, /usr/bin/chromium by default).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const BASE = process.env.CHAT_URL;
const NONCE = process.env.NONCE || String(Date.now());
const ARTIFACTS = process.env.ARTIFACTS || '../../build/test-artifacts';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
let browser, page, watch;

mkdirSync(ARTIFACTS, { recursive: true });

// Records what a page reports as wrong: console errors, script exceptions, failed
// requests and answers of 400 or more.
function watchPage(p) {
	const w = { errors: [], failed: [], bad: [], urls: [] };
	p.on('console', (m) => {
		if (m.type() === 'error')
			w.errors.push(m.text() + ' @ ' + (m.location().url || ''));
	});
	p.on('pageerror', (e) => w.errors.push('pageerror: ' + e.message));
	p.on('requestfailed', (r) => w.failed.push(r.url() + ' ' + r.failure().errorText));
	p.on('request', (r) => w.urls.push(r.url()));
	p.on('response', (r) => {
		if (r.status() >= 400)
			w.bad.push(r.status() + ' ' + r.url());
	});
	return w;
}

function clean(w, what) {
	assert.deepEqual(w.errors, [], what + ': console errors');
	assert.deepEqual(w.failed, [], what + ': failed requests');
	assert.deepEqual(w.bad, [], what + ': answers >= 400');
}

async function shot(p, name) {
	await p.screenshot({ path: `${ARTIFACTS}/chat-${name}.png` });
}

// The article whose content is text, its place, and whether it is inside the list's view.
function findMessage(p, text) {
	return p.evaluate((t) => {
		const box = document.getElementById('messages');
		const a = Array.from(document.querySelectorAll('.message-content'))
		    .find((e) => e.textContent === t);
		if (!a)
			return null;
		const r = a.getBoundingClientRect(), b = box.getBoundingClientRect();
		return { inView: r.top >= b.top - 1 && r.bottom <= b.bottom + 1 && r.height > 0,
		    last: a.closest('article') === document.getElementById('message-list')
		    .lastElementChild };
	}, text);
}

async function waitMessage(p, text, ms) {
	const t0 = Date.now();
	await p.waitForFunction((t) => Array.from(document.querySelectorAll('.message-content'))
	    .some((e) => e.textContent === t), { timeout: ms, polling: 50 }, text);
	return Date.now() - t0;
}

before(async () => {
	assert.ok(BASE, 'CHAT_URL is set');
	const args = ['--disable-dev-shm-usage', '--no-first-run'];
	if (process.getuid && process.getuid() === 0)
		args.push('--no-sandbox');
	browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args });
	page = await browser.newPage();
	await page.setViewport({ width: 1280, height: 800 });
	watch = watchPage(page);
});

after(async () => {
	if (browser)
		await browser.close();
});

test('the page loads with its script, without errors, at the newest message', async () => {
	const r = await page.goto(BASE + '/', { waitUntil: 'networkidle0' });
	assert.equal(r.status(), 200);
	assert.ok(watch.urls.includes(BASE + '/chat/script.js'), 'the script was requested');
	assert.ok(!watch.urls.some((u) => !u.startsWith(BASE) && !u.startsWith('data:')),
	    'nothing was requested from elsewhere: ' + watch.urls.join(' '));
	assert.equal(await page.$$eval('article.message', (a) => a.length), 500);
	const last = await page.$eval('#message-list', (l) => {
		const r = l.lastElementChild.getBoundingClientRect();
		const b = document.getElementById('messages').getBoundingClientRect();
		return r.bottom <= b.bottom + 1 && r.top >= b.top - 1;
	});
	assert.ok(last, 'the newest message is in view');
	await shot(page, 'loaded');
	clean(watch, 'load');
});

test('a sent message appears at once, in view, and the URL never holds it', async () => {
	const text = `browser says hi ${NONCE}`;
	await page.type('.composer input', text);
	const t0 = Date.now();
	await page.keyboard.press('Enter');
	const ms = await waitMessage(page, text, 1500);
	console.log(`# own message shown after ${Date.now() - t0} ms (${ms} ms of waiting)`);
	const m = await findMessage(page, text);
	assert.ok(m && m.inView && m.last, 'the message is the last one and in view');
	assert.equal(await page.$eval('.composer input', (i) => i.value), '');
	assert.equal(page.url(), BASE + '/');
	assert.ok(!watch.urls.some((u) => u.includes(NONCE)), 'no URL carries the text');
	await shot(page, 'sent');
	clean(watch, 'send');
});

test("another client's message appears within 2 s", async () => {
	const text = `from another client ${NONCE}`;
	const home = await fetch(BASE + '/');
	const cookie = home.headers.get('set-cookie').split(';')[0];
	await home.text();
	const t0 = Date.now();
	const r = await fetch(BASE + '/chat/message-send', { method: 'POST',
	    headers: { 'Content-Type': 'application/json', Cookie: cookie },
	    body: JSON.stringify({ messageSend: text }) });
	assert.equal(r.status, 204);
	await waitMessage(page, text, 2500);
	const ms = Date.now() - t0;
	console.log(`# other client's message shown after ${ms} ms`);
	assert.ok(ms <= 2500);
	const m = await findMessage(page, text);
	assert.ok(m && m.inView, 'in view (the list sat at the bottom)');
	clean(watch, 'poll');
});

test('opening a channel changes the header, and a channel click goes back', async () => {
	const room = `room_${NONCE}`.toLowerCase().slice(0, 32);
	await page.type('.channel-open input', room);
	await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }),
	    page.keyboard.press('Enter')]);
	assert.equal(await page.$eval('.channel-header h2', (h) => h.textContent), `# ${room}`);
	assert.equal(await page.$eval('.channel.current', (b) => b.value), room);
	await shot(page, 'channel-new');
	await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }),
	    page.click('.channel[value="starcord"]')]);
	assert.equal(await page.$eval('.channel-header h2', (h) => h.textContent),
	    '# starcord');
	assert.equal(await page.$eval('.channel.current', (b) => b.value), 'starcord');
	assert.equal(page.url(), BASE + '/');
	await shot(page, 'channel-back');
	clean(watch, 'channels');
});

test('a valid nickname is saved and shown; an invalid one shows its reason', async () => {
	const nick = `Tester ${NONCE}`.slice(0, 32);
	await page.$eval('#nickname', (i) => { i.value = ''; });
	await page.type('#nickname', nick);
	await page.keyboard.press('Enter');
	await page.waitForFunction(() => document.querySelector('.nickname .ok').textContent
	    === 'Saved.', { timeout: 2000 });
	assert.equal(await page.$eval('#nickname-error', (e) => e.textContent), '');
	clean(watch, 'nickname');
	await page.reload({ waitUntil: 'networkidle0' });
	assert.equal(await page.$eval('#nickname', (i) => i.value), nick);

	await page.$eval('#nickname', (i) => { i.value = ''; });
	await page.type('#nickname', 'no <tags>');
	await page.keyboard.press('Enter');
	await page.waitForFunction(() => document.getElementById('nickname-error').textContent
	    !== '', { timeout: 2000 });
	const e = await page.$eval('#nickname-error', (d) => {
		const r = d.getBoundingClientRect();
		const f = document.getElementById('nickname').getBoundingClientRect();
		return { text: d.textContent, visible: r.height > 0,
		    below: r.top >= f.bottom - 1 && r.top - f.bottom < 40 };
	});
	assert.equal(e.text, 'The nickname may contain only letters, digits, spaces, _ and -.');
	assert.ok(e.visible && e.below, 'the reason is shown right below the field');
	await shot(page, 'nickname-refused');
	// The refusal's 422 is the one expected error (chromium logs every 4xx fetch).
	assert.ok(watch.bad.length === 1 && watch.bad[0].startsWith('422 ') &&
	    watch.bad[0].endsWith('/chat/nickname-set'), watch.bad.join(' '));
	assert.ok(watch.errors.every((m) => m.includes('422')), watch.errors.join(' '));
	watch.bad.length = 0;
	watch.errors.length = 0;
	assert.deepEqual(watch.failed, []);
});

test('a phone viewport shows the composer and does not scroll sideways', async () => {
	const ctx = await browser.createBrowserContext();
	const p = await ctx.newPage();
	const w = watchPage(p);
	await p.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true,
	    deviceScaleFactor: 2 });
	await p.goto(BASE + '/', { waitUntil: 'networkidle0' });
	const v = await p.evaluate(() => {
		const c = document.querySelector('.composer input').getBoundingClientRect();
		const last = document.getElementById('message-list').lastElementChild
		    .getBoundingClientRect();
		return { top: c.top, bottom: c.bottom, width: c.width,
		    wide: document.documentElement.scrollWidth, inner: innerWidth,
		    height: innerHeight, lastBottom: last.bottom };
	});
	assert.ok(v.top >= 0 && v.bottom <= v.height && v.width >= 200,
	    'composer on screen: ' + JSON.stringify(v));
	assert.ok(v.wide <= v.inner, 'no sideways scroll: ' + JSON.stringify(v));
	assert.ok(v.lastBottom <= v.top, 'the newest message is above the composer');
	await shot(p, 'phone');
	clean(w, 'phone');
	await ctx.close();
});

test('without JavaScript a form post saves the message and comes back to /', async () => {
	const ctx = await browser.createBrowserContext();
	const p = await ctx.newPage();
	const w = watchPage(p);
	await p.setJavaScriptEnabled(false);
	await p.setViewport({ width: 1280, height: 800 });
	await p.goto(BASE + '/', { waitUntil: 'load' });
	const text = `no script here ${NONCE}`;
	await p.type('.composer input', text);
	const [nav] = await Promise.all([p.waitForNavigation({ waitUntil: 'load' }),
	    p.keyboard.press('Enter')]);
	assert.equal(nav.status(), 200);
	assert.equal(p.url(), BASE + '/');
	const chain = nav.request().redirectChain();
	assert.equal(chain.length, 1);
	assert.equal(chain[0].method(), 'POST');
	assert.equal(chain[0].response().status(), 303);
	const m = await findMessage(p, text);
	assert.ok(m && m.inView && m.last, 'the message is the newest, in view, without script');
	assert.ok(!w.urls.some((u) => u.includes(encodeURIComponent(text).slice(0, 10)) ||
	    u.includes('messageSend') || u.includes(NONCE)), 'no URL carries the text: ' +
	    w.urls.join(' '));
	assert.ok(!w.urls.includes(BASE + '/chat/script.js'), 'the script was not loaded');
	await shot(p, 'noscript-sent');
	clean(w, 'noscript');

	// A refused nickname: a small page with the reason and the 422.
	await p.$eval('#nickname', (i) => { i.value = 'no <tags>'; });
	const [bad] = await Promise.all([p.waitForNavigation({ waitUntil: 'load' }),
	    p.focus('#nickname').then(() => p.keyboard.press('Enter'))]);
	assert.equal(bad.status(), 422);
	assert.equal(await p.$eval('.error', (e) => e.textContent),
	    'The nickname may contain only letters, digits, spaces, _ and -.');
	assert.ok(!p.url().includes('tags'));
	await shot(p, 'noscript-refused');
	await ctx.close();
});
