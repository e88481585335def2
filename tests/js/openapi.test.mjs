// openapi.test.mjs: the OpenAPI 3.1 document at the rest endpoint's root, checked with a
// standard validator of the OpenAPI specification's JSON schemas
// (@seriousme/openapi-schema-validator), as the anonymous role and as web_user.  Run by
// tests/integration/test_rest_openapi.c once per back end with REST_URL (the endpoint's
// base URL) and REST_TOKEN (an HS256 token of the role web_user) set; every test runs,
// none is skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';

const url = process.env.REST_URL;
const token = process.env.REST_TOKEN;
if (!url || !token) throw new Error('REST_URL or REST_TOKEN is not set');

async function documentOf(headers) {
  const res = await fetch(`${url}/`, { headers: { Accept: 'application/openapi+json', ...headers } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/openapi\+json/);
  const text = await res.text();
  console.log(`document: ${text.length} bytes, ${Object.keys(JSON.parse(text).paths).length} paths`);
  return JSON.parse(text);
}

// Validates spec against the 3.1 schema, then resolves every $ref (a dangling one throws).
async function validate(spec) {
  const v = new Validator();
  const res = await v.validate(spec);
  assert.equal(res.valid, true, JSON.stringify(res.errors, null, 1)?.slice(0, 4000));
  assert.equal(v.version, '3.1');
  const resolved = v.resolveRefs();
  assert.equal(typeof resolved.paths, 'object');
  return resolved;
}

test('the anonymous role\'s document is valid OpenAPI 3.1', async () => {
  const spec = await documentOf({});
  const resolved = await validate(spec);
  assert.deepEqual(Object.keys(resolved.paths), ['/album', '/artist', '/rpc/add_them']);
});

test('web_user\'s document is valid OpenAPI 3.1, with every table', async () => {
  const spec = await documentOf({ Authorization: `Bearer ${token}` });
  const resolved = await validate(spec);
  assert.deepEqual(Object.keys(resolved.paths['/track']), ['get', 'post', 'patch', 'delete']);
  const row = resolved.paths['/track'].get.responses['200'].content['application/json'].schema.items;
  assert.equal(row.properties.milliseconds.type, 'integer');
  assert.ok(row.required.includes('name'));
});

test('the document lists what the API serves: a listed read answers 200', async () => {
  const spec = await documentOf({});
  for (const path of Object.keys(spec.paths).filter((p) => !p.startsWith('/rpc/'))) {
    const res = await fetch(`${url}${path}?limit=1`);
    assert.equal(res.status, 200, path);
  }
  const res = await fetch(`${url}/track?limit=1`);
  assert.equal(res.status, 401, 'a table left out is one the role may not read');
});
