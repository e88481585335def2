// sluiced's status page (GET / on set metrics_listen) in a real browser: Debian's
// chromium, headless, driven by puppeteer-core.  Run by
// tests/integration/test_status_browser.c against the real stack, with STATUS_URL (the
// metrics address's base URL), POOLS (the pools' names, comma-separated), ARTIFACTS
// (where the screenshot goes) and CHROMIUM (the browser, /usr/bin/chromium by default).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const BASE = process.env.STATUS_URL;
const POOLS = (process.env.POOLS || '').split(',').filter((p) => p !== '');
const ARTIFACTS = process.env.ARTIFACTS || '../../build/test-artifacts';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
let browser, page;
const seen = { errors: [], failed: [], bad: [], urls: [] };

mkdirSync(ARTIFACTS, { recursive: true });

before(async () => {
	assert.ok(BASE, 'STATUS_URL is set');
	const args = ['--disable-dev-shm-usage', '--no-first-run'];
	if (process.getuid && process.getuid() === 0)
		args.push('--no-sandbox');
	browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args });
	page = await browser.newPage();
	await page.setViewport({ width: 1280, height: 900 });
	page.on('console', (m) => {
		if (m.type() === 'error' || m.type() === 'warning')
			seen.errors.push(m.type() + ': ' + m.text());
	});
	page.on('pageerror', (e) => seen.errors.push('pageerror: ' + e.message));
	page.on('requestfailed', (r) => seen.failed.push(r.url() + ' ' + r.failure().errorText));
	page.on('request', (r) => seen.urls.push(r.url()));
	page.on('response', (r) => {
		if (r.status() >= 400)
			seen.bad.push(r.status() + ' ' + r.url());
	});
});

after(async () => {
	if (browser)
		await browser.close();
});

test('the page loads alone, with no script and no console error', async () => {
	const r = await page.goto(BASE + '/', { waitUntil: 'networkidle0' });
	assert.equal(r.status(), 200);
	assert.match(r.headers()['content-type'], /^text\/html/);
	assert.equal(await page.title(), 'sluiced status');
	assert.equal(await page.evaluate(() => document.scripts.length), 0);
	assert.deepEqual(seen.urls.filter((u) => !u.startsWith('data:')), [BASE + '/'],
	    'nothing but the page was requested');
	assert.deepEqual(seen.errors, [], 'console errors');
	assert.deepEqual(seen.failed, [], 'failed requests');
	assert.deepEqual(seen.bad, [], 'answers >= 400');
});

test('every pool has a section whose charts render', async () => {
	for (const name of POOLS) {
		const s = await page.$eval(`#pool-${name}`, (sec) => {
			const charts = Array.from(sec.querySelectorAll('svg.chart')).map((svg) => {
				const b = svg.getBoundingClientRect();
				return { w: svg.width.baseVal.value, h: svg.height.baseVal.value,
				    bw: b.width, bh: b.height,
				    paths: Array.from(svg.querySelectorAll('path')).map((p) => ({
					cls: p.getAttribute('class'), len: p.getTotalLength(),
					stroke: getComputedStyle(p).stroke })) };
			});
			return { title: sec.querySelector('h2').textContent, charts };
		});
		assert.ok(s.title.startsWith(name + ' '), `${name}: its heading`);
		assert.equal(s.charts.length, 3, `${name}: three charts`);
		for (const c of s.charts) {
			assert.equal(c.w, 300, `${name}: a chart's width`);
			assert.equal(c.h, 60, `${name}: a chart's height`);
			// Drawn at that size (and its 1px border).
			assert.ok(c.bw >= 300 && c.bw <= 304 && c.bh >= 60 && c.bh <= 64,
			    `${name}: a chart drawn ${c.bw}x${c.bh}`);
			assert.equal(c.paths.length, 2, `${name}: two series a chart`);
			for (const p of c.paths)
				assert.notEqual(p.stroke, 'none', `${name}: ${p.cls} is stroked`);
		}
	}
	// The loaded pool's requests line was drawn: several samples long.
	const rps = await page.$eval('#pool-health path.s-rps', (p) => p.getTotalLength());
	console.log(`# health's requests line: ${rps.toFixed(1)} units long`);
	assert.ok(rps >= 4, 'the requests line has at least two samples');
	await page.screenshot({ path: `${ARTIFACTS}/status-page.png`, fullPage: true });
});

test("a path's markup is shown as text, never made into elements", async () => {
	const where = await page.$eval('#pool-rest .where', (p) => p.textContent);
	assert.ok(where.includes('<b>x&y.db'), where);
	assert.equal(await page.evaluate(() => document.querySelectorAll('b').length), 0);
	assert.deepEqual(seen.errors, [], 'console errors');
});
