// The rest endpoint's OpenAPI document rendered by Swagger UI (swagger-ui-dist from npm,
// served by this file from tests/js/node_modules on a loopback port: nothing comes from
// elsewhere) in Debian's chromium, headless, driven by puppeteer-core.  Run by
// tests/integration/test_rest_openapi.c once per back end with REST_URL (the endpoint's
// base URL), REST_TOKEN (a token of web_user, whose document lists every table),
// REST_BACKEND (sqlite or postgresql, for the screenshot's name), ARTIFACTS (where the
// screenshot goes) and CHROMIUM (the browser, /usr/bin/chromium by default).  The
// document is fetched here with the token and served to the page from the same origin,
// as the endpoint answers no cross-origin request unless rest_cors_origins says so.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import puppeteer from 'puppeteer-core';

const url = process.env.REST_URL;
const token = process.env.REST_TOKEN;
const backend = process.env.REST_BACKEND || 'sqlite';
const ARTIFACTS = process.env.ARTIFACTS || '../../build/test-artifacts';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
if (!url || !token) throw new Error('REST_URL or REST_TOKEN is not set');
const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const page_html = `<!doctype html>
<html><head><meta charset="utf-8"><title>sluice OpenAPI</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/swagger-ui.css"></head>
<body><div id="swagger-ui"></div><script src="/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui',
  validatorUrl: null, deepLinking: false, defaultModelsExpandDepth: 1 });</script>
</body></html>`;

let server, base, browser, page, spec;
mkdirSync(ARTIFACTS, { recursive: true });
const seen = { errors: [], warnings: [], failed: [], bad: [], foreign: [] };

before(async () => {
  const res = await fetch(`${url}/`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  const text = await res.text();
  spec = JSON.parse(text);
  const files = {
    '/': ['text/html; charset=utf-8', page_html],
    '/openapi.json': ['application/openapi+json', text],
    '/swagger-ui.css': ['text/css', readFileSync(join(dist, 'swagger-ui.css'))],
    '/swagger-ui-bundle.js': ['text/javascript', readFileSync(join(dist, 'swagger-ui-bundle.js'))],
  };
  server = createServer((req, rs) => {
    const f = files[req.url];
    rs.writeHead(f ? 200 : 404, { 'Content-Type': f ? f[0] : 'text/plain' });
    rs.end(f ? f[1] : 'not found');
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${server.address().port}`;
  const args = ['--disable-dev-shm-usage', '--no-first-run'];
  if (process.getuid && process.getuid() === 0)
    args.push('--no-sandbox');
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args });
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  // Nothing may leave the loopback server: anything else is refused and reported.
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    if (r.url().startsWith(base + '/') || r.url().startsWith('data:'))
      r.continue();
    else {
      seen.foreign.push(r.url());
      r.abort();
    }
  });
  page.on('console', (m) => {
    if (m.type() === 'error')
      seen.errors.push(m.text());
    else if (m.type() === 'warning')
      seen.warnings.push(m.text());
  });
  page.on('pageerror', (e) => seen.errors.push('pageerror: ' + e.message));
  page.on('requestfailed', (r) => seen.failed.push(r.url() + ' ' + r.failure().errorText));
  page.on('response', (r) => {
    if (r.status() >= 400)
      seen.bad.push(r.status() + ' ' + r.url());
  });
});

after(async () => {
  if (browser)
    await browser.close();
  if (server)
    server.close();
});

test('Swagger UI renders the document with no console error', async () => {
  const r = await page.goto(base + '/', { waitUntil: 'networkidle0' });
  assert.equal(r.status(), 200);
  await page.waitForSelector('.opblock', { timeout: 15000 });
  const shown = await page.$$eval('.opblock', (els) => els.map((e) => {
    const m = e.querySelector('.opblock-summary-method');
    const p = e.querySelector('.opblock-summary-path');
    return `${m ? m.textContent.trim().toLowerCase() : '?'} ${p ? p.getAttribute('data-path') : '?'}`;
  }));
  const want = [];
  for (const [path, item] of Object.entries(spec.paths))
    for (const method of Object.keys(item))
      want.push(`${method} ${path}`);
  assert.deepEqual([...shown].sort(), [...want].sort(), 'every operation is shown once');
  assert.ok(shown.includes('delete /track') && shown.includes('post /rpc/add_them'));
  assert.equal(await page.$('.errors-wrapper'), null, 'Swagger UI reports no error in the document');
  assert.equal(await page.$eval('.info .title', (e) => e.textContent.trim().startsWith('sluice')), true);
  // OpenAPI 3.1's schemas are drawn as JSON Schema 2020-12, one article each.
  const models = await page.$$eval('.models article[data-json-schema-level="0"] .json-schema-2020-12__title',
    (els) => els.map((e) => e.textContent.trim()));
  assert.deepEqual(models, Object.keys(spec.components.schemas), 'a model per table schema, in order');
  await page.screenshot({ path: `${ARTIFACTS}/openapi-swagger-ui-${backend}.png`, fullPage: false });
  if (seen.warnings.length)
    console.log('# console warnings: ' + JSON.stringify(seen.warnings).slice(0, 500));
  assert.deepEqual(seen.errors, [], 'console errors');
  assert.deepEqual(seen.failed, [], 'failed requests');
  assert.deepEqual(seen.bad, [], 'answers >= 400');
  assert.deepEqual(seen.foreign, [], 'requests beyond the loopback server');
});

test('an operation opens and shows its parameters and the row schema', async () => {
  await page.click('#operations-track-get_track .opblock-summary-control, #operations-track-get_track .opblock-summary');
  await page.waitForSelector('#operations-track-get_track .parameters', { timeout: 10000 });
  const names = await page.$$eval('#operations-track-get_track .parameters .parameter__name',
    (els) => els.map((e) => e.textContent.replace(/\s*\*\s*required/, '').trim()));
  for (const n of ['track_id', 'composer', 'select', 'order', 'limit', 'offset', 'Range', 'Prefer'])
    assert.ok(names.some((x) => x.startsWith(n)), `parameter ${n} in ${names}`);
  await page.screenshot({ path: `${ARTIFACTS}/openapi-swagger-ui-${backend}-track.png`, fullPage: false });
  assert.deepEqual(seen.errors, [], 'console errors');
  assert.deepEqual(seen.foreign, [], 'requests beyond the loopback server');
});
