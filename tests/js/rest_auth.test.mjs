// rest_auth.test.mjs: sluice's rest endpoint with access control on, driven by the real
// @supabase/postgrest-js client with and without a token, as a Supabase application sends
// one (the Authorization header of the client).  Run by tests/integration/test_rest_auth.c
// once per back end with REST_URL (the endpoint's base URL), REST_TOKEN (an HS256 token of
// the role web_user, sub alice), REST_BAD_TOKEN (the same signed with another secret) and
// REST_BACKEND (sqlite or postgresql) set; every test runs, none is skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostgrestClient } from '@supabase/postgrest-js';

const url = process.env.REST_URL;
const token = process.env.REST_TOKEN;
const bad = process.env.REST_BAD_TOKEN;
const backend = process.env.REST_BACKEND;
if (!url || !token || !bad || !backend) throw new Error('REST_URL, REST_TOKEN, REST_BAD_TOKEN or REST_BACKEND is not set');
const anon = new PostgrestClient(url);
const user = new PostgrestClient(url, { headers: { Authorization: `Bearer ${token}` } });
const forged = new PostgrestClient(url, { headers: { Authorization: `Bearer ${bad}` } });

test('the anonymous role reads', async () => {
  const res = await anon.from('artist').select('name').eq('artist_id', 1);
  assert.equal(res.error, null, JSON.stringify(res.error));
  assert.deepEqual(res.data, [{ name: 'AC/DC' }]);
});

test('the anonymous role may not insert: 401 42501', async () => {
  const res = await anon.from('artist').insert({ artist_id: 95, name: 'anon' });
  assert.equal(res.status, 401);
  assert.equal(res.error.code, '42501');
});

test('a token of web_user inserts, reads back and deletes', async () => {
  let res = await user.from('artist').insert({ artist_id: 95, name: 'js' }).select();
  assert.equal(res.error, null, JSON.stringify(res.error));
  assert.deepEqual(res.data, [{ artist_id: 95, name: 'js' }]);
  res = await user.from('artist').delete().eq('artist_id', 95);
  assert.equal(res.error, null, JSON.stringify(res.error));
  res = await anon.from('artist').select('*').eq('artist_id', 95);
  assert.deepEqual(res.data, []);
});

test('a forged token: 401 PGRST301', async () => {
  const res = await forged.from('artist').select('*').limit(1);
  assert.equal(res.status, 401);
  assert.equal(res.error.code, 'PGRST301');
  assert.equal(res.error.message, 'JWSError JWSInvalidSignature');
});

test('row-level security sees the token (PostgreSQL), grants alone (SQLite)', async () => {
  const res = await user.from('note').select('note_id').lt('note_id', 4).order('note_id');
  assert.equal(res.error, null, JSON.stringify(res.error));
  assert.deepEqual(res.data, backend === 'postgresql'
    ? [{ note_id: 1 }, { note_id: 3 }]
    : [{ note_id: 1 }, { note_id: 2 }, { note_id: 3 }]);
});
