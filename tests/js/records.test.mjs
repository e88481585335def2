// records.test.mjs: sluice's records API driven by the real PocketBase JavaScript SDK
// (npm "pocketbase"), unchanged, the way a PocketBase application would use it.  Run by
// tests/integration/test_records.c once per back end, with RECORDS_URL set to the stack's
// base URL (http://127.0.0.1:PORT) over the seeded demo (sql/records/seed.c: 20 users,
// 200 posts, 400 comments, password123), and RECORDS_EXPIRED set to a well-signed token of
// user0001 that expired.  Every test runs, none is skipped.
//
// Covers: health.check, getList with filter, sort, expand (relation and back-relation,
// nested), fields and skipTotal, getFullList, getFirstListItem (found and 404), getOne
// with expand, create, update, delete, authWithPassword (right and wrong), authRefresh, requests with
// the token, an expired token (401), rules that hide records (404) or refuse (403, 400),
// the field+ / +field / field- and number+ / number- modifiers, rules with :isset,
// :changed and @collection, expand on a write, a password change, createBatch(), and the
// account flows: listAuthMethods, requestVerification / confirmVerification,
// requestOTP / authWithOTP (the code read from the captured mail),
// requestPasswordReset / confirmPasswordReset and requestEmailChange /
// confirmEmailChange, each token read from the mail the stack's records_sendmail command
// captured into RECORDS_MAIL (a directory of *.eml files); superusers: sign-in to
// _superusers, impersonate() (the token works, and authRefresh() refuses it), a superuser
// made by the seeder's -a (RECORDS_SEEDER on RECORDS_DB) then signed in; and the 429 of
// the sign-in rate limit, sent from 127.0.0.5 (the stacks exempt 127.0.0.1 only, and
// allow 4 sign-ins an identity a minute); FormData bodies (multipart: fields given twice,
// modifiers, @jsonPayload) on create and update, and a body with a Blob refused (400).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import PocketBase, { getTokenPayload } from 'pocketbase';

const url = process.env.RECORDS_URL;
if (!url) throw new Error('RECORDS_URL is not set');
const mailDir = process.env.RECORDS_MAIL;
if (!mailDir) throw new Error('RECORDS_MAIL is not set');

function client() {
  const pb = new PocketBase(url);
  pb.autoCancellation(false);
  return pb;
}

async function signIn(n) {
  const pb = client();
  const auth = await pb.collection('users').authWithPassword(
    `user${String(n).padStart(4, '0')}@example.com`, 'password123');
  return { pb, auth };
}

async function rejects(promise, status) {
  try {
    await promise;
  } catch (e) {
    assert.equal(e.status, status, JSON.stringify(e.response));
    return e;
  }
  assert.fail(`expected a ${status}`);
}

test('health.check', async () => {
  const h = await client().health.check();
  assert.equal(h.code, 200);
  assert.equal(h.message, 'API is healthy.');
});

test('getList: envelope, perPage, totals', async () => {
  const r = await client().collection('posts').getList(1, 30);
  assert.equal(r.page, 1);
  assert.equal(r.perPage, 30);
  assert.equal(r.totalItems, 200);
  assert.equal(r.totalPages, 7);
  assert.equal(r.items.length, 30);
  const p = r.items[0];
  assert.equal(p.collectionName, 'posts');
  assert.equal(p.collectionId, 'pbc_1125843985');
  assert.match(p.id, /^[a-z0-9]{15}$/);
  assert.match(p.created, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(Array.isArray(p.tags));
  assert.equal(p.expand, undefined);
  const last = await client().collection('posts').getList(7, 30);
  assert.equal(last.items.length, 20);
});

test('getList: filter on an indexed select, sort, skipTotal', async () => {
  const pb = client();
  const all = await pb.collection('posts').getFullList({ filter: "status = 'published'" });
  const r = await pb.collection('posts').getList(1, 10, {
    filter: "status = 'published'", sort: '-created', skipTotal: true,
  });
  assert.equal(r.totalItems, -1);
  assert.equal(r.totalPages, -1);
  assert.equal(r.items.length, 10);
  for (const p of r.items) assert.equal(p.status, 'published');
  const sorted = [...all].sort((a, b) => (a.created < b.created ? 1 : -1)).slice(0, 10);
  assert.deepEqual(r.items.map((p) => p.id), sorted.map((p) => p.id));
});

test('getList: filter operators, any-of, null and contains', async () => {
  const pb = client();
  const all = await pb.collection('posts').getFullList();
  const count = async (filter) => (await pb.collection('posts').getList(1, 1, { filter })).totalItems;
  assert.equal(await count("tags ?= 'tech'"), all.filter((p) => p.tags.includes('tech')).length);
  assert.equal(await count("tags = ''"), all.filter((p) => p.tags.length === 0).length);
  assert.equal(await count('tags != null'), all.filter((p) => p.tags.length > 0).length);
  assert.equal(await count("title ~ 'POST 1'"), all.filter((p) => p.title.startsWith('Post 1')).length);
  assert.equal(await count("title !~ 'post 1'"), all.filter((p) => !p.title.startsWith('Post 1')).length);
  assert.equal(await count("status != 'draft' && (status = 'archived' || title = 'Post 3')"),
    all.filter((p) => p.status === 'archived' || (p.status !== 'draft' && p.title === 'Post 3')).length);
  assert.equal(await count("created >= '2025-01-01 00:30:00.000Z'"),
    all.filter((p) => p.created >= '2025-01-01 00:30:00.000Z').length);
  const u1 = await pb.collection('users').getFirstListItem("name = 'User 1'");
  assert.equal(await count("author.name = 'User 1'"), all.filter((p) => p.author === u1.id).length);
  assert.equal(await count('created > @now'), 0);
  // Through back-relations: any comment (?~) or every comment (~) of the post.
  const comments = await pb.collection('comments').getFullList();
  const zebra = new Set(comments.filter((c) => /zebra/i.test(c.text)).map((c) => c.post));
  assert.ok(zebra.size > 0);
  assert.equal(await count("comments_via_post.text ?~ 'zebra'"), zebra.size);
  const allZebra = all.filter((p) => {
    const cs = comments.filter((c) => c.post === p.id);
    return cs.length > 0 && cs.every((c) => /zebra/i.test(c.text));
  });
  assert.equal(await count("comments_via_post.text ~ 'zebra'"), allZebra.length);
  assert.equal(await count('tags:length >= 2'), all.filter((p) => p.tags.length >= 2).length);
  await rejects(pb.collection('posts').getList(1, 1, { filter: 'nope = 1' }), 400);
  await rejects(pb.collection('posts').getList(1, 1, { filter: "title = 'x" }), 400);
  await rejects(pb.collection('posts').getList(1, 1, { filter: "@request.auth.id = ''" }), 403);
});

test('getList: expand a relation, a back-relation and a nested path; fields', async () => {
  const pb = client();
  const r = await pb.collection('posts').getList(1, 5, {
    expand: 'author,comments_via_post.author', sort: 'created',
  });
  for (const p of r.items) {
    assert.equal(p.expand.author.id, p.author);
    assert.equal(p.expand.author.collectionName, 'users');
    assert.equal(p.expand.author.email, undefined);
    for (const c of p.expand.comments_via_post ?? []) {
      assert.equal(c.post, p.id);
      assert.equal(c.expand.author.id, c.author);
    }
  }
  assert.ok(r.items.some((p) => (p.expand.comments_via_post ?? []).length > 0));
  const f = await pb.collection('posts').getList(1, 2, {
    expand: 'author', fields: 'id,title,expand.author.name', sort: 'created',
  });
  assert.deepEqual(Object.keys(f.items[0]), ['expand', 'id', 'title']);
  assert.deepEqual(Object.keys(f.items[0].expand.author), ['name']);
  const e = await pb.collection('posts').getList(1, 1, { fields: 'body:excerpt(10,true)' });
  assert.ok(e.items[0].body.length <= 13);
});

test('getFullList and getFirstListItem', async () => {
  const pb = client();
  const users = await pb.collection('users').getFullList({ sort: 'name' });
  assert.equal(users.length, 20);
  const visible = users.filter((u) => u.email !== undefined);
  assert.equal(visible.length, 5);
  for (const u of visible) assert.equal(u.emailVisibility, true);
  const p = await pb.collection('posts').getFirstListItem("title = 'Post 3'");
  assert.equal(p.title, 'Post 3');
  await rejects(pb.collection('posts').getFirstListItem("title = 'none'"), 404);
});

test('getOne with expand; unknown id 404', async () => {
  const pb = client();
  const first = await pb.collection('posts').getFirstListItem("title = 'Post 7'");
  const p = await pb.collection('posts').getOne(first.id, { expand: 'author' });
  assert.deepEqual({ ...p, expand: undefined }, { ...first, expand: undefined });
  assert.equal(p.expand.author.id, p.author);
  await rejects(pb.collection('posts').getOne('aaaaaaaaaaaaaaa'), 404);
});

test('authWithPassword: token, record with its email; wrong password 400', async () => {
  const { pb, auth } = await signIn(1);
  assert.ok(pb.authStore.isValid);
  assert.equal(auth.record.email, 'user0001@example.com');
  assert.equal(auth.record.password, undefined);
  assert.equal(auth.record.tokenKey, undefined);
  assert.equal(auth.token.split('.').length, 3);
  const claims = JSON.parse(Buffer.from(auth.token.split('.')[1], 'base64url'));
  assert.deepEqual(Object.keys(claims), ['collectionId', 'exp', 'id', 'refreshable', 'type']);
  assert.equal(claims.id, auth.record.id);
  assert.ok(claims.exp > Date.now() / 1000 + 4 * 86400);
  // authRefresh: a new token for the same record.
  const refreshed = await pb.collection('users').authRefresh();
  assert.equal(refreshed.record.id, auth.record.id);
  assert.equal(refreshed.record.email, 'user0001@example.com');
  assert.ok(pb.authStore.isValid);
  await rejects(client().collection('users').authRefresh(), 401);
  // The owner sees its own email in a plain read.
  const me = await pb.collection('users').getOne(auth.record.id);
  assert.equal(me.email, 'user0001@example.com');
  await rejects(client().collection('users').authWithPassword('user0001@example.com', 'nope'), 400);
  await rejects(client().collection('users').authWithPassword('nobody@example.com', 'password123'), 400);
});

test('create, update, delete with the token; rules hide and refuse', async () => {
  const { pb, auth } = await signIn(2);
  const other = (await signIn(3)).pb;
  await rejects(client().collection('posts').create({ title: 'anon', author: auth.record.id }), 400);
  const p = await pb.collection('posts').create({
    title: 'Hello', body: 'from the SDK', status: 'draft', author: auth.record.id, tags: ['tech'],
  });
  assert.match(p.id, /^[a-z0-9]{15}$/);
  assert.equal(p.title, 'Hello');
  assert.deepEqual(p.tags, ['tech']);
  assert.equal(p.created, p.updated);
  await rejects(pb.collection('posts').create({ title: 'x', status: 'nope', author: auth.record.id }), 400);
  await rejects(pb.collection('posts').create({ body: 'no title', author: auth.record.id }), 400);
  await rejects(pb.collection('posts').create({ title: 'x', author: 'aaaaaaaaaaaaaaa' }), 400);
  const u = await pb.collection('posts').update(p.id, { title: 'Changed', status: 'published' });
  assert.equal(u.title, 'Changed');
  assert.equal(u.status, 'published');
  assert.ok(u.updated >= p.updated);
  // Another user's update and delete find nothing: the rule hides the record.
  await rejects(other.collection('posts').update(p.id, { title: 'stolen' }), 404);
  await rejects(other.collection('posts').delete(p.id), 404);
  await rejects(client().collection('posts').delete(p.id), 404);
  assert.equal(await pb.collection('posts').delete(p.id), true);
  await rejects(pb.collection('posts').getOne(p.id), 404);
});

test('sign up: create a user with password and passwordConfirm, then sign in', async () => {
  const pb = client();
  const email = `new${Date.now()}@example.com`;
  const u = await pb.collection('users').create({
    email, password: 'secret-pass-1', passwordConfirm: 'secret-pass-1', name: 'New',
  });
  assert.equal(u.email, undefined);
  assert.equal(u.name, 'New');
  await rejects(pb.collection('users').create({
    email: `x${email}`, password: 'secret-pass-1', passwordConfirm: 'other-pass-1',
  }), 400);
  const auth = await pb.collection('users').authWithPassword(email, 'secret-pass-1');
  assert.equal(auth.record.id, u.id);
  assert.equal(await pb.collection('users').delete(u.id), true);
});

test('an expired or forged token is 401; superusers-only collections', async () => {
  const pb = client();
  pb.authStore.save(process.env.RECORDS_EXPIRED, null);
  await rejects(pb.collection('posts').getList(1, 1), 401);
  const { auth } = await signIn(4);
  const forged = auth.token.slice(0, -2) + (auth.token.endsWith('AA') ? 'BB' : 'AA');
  pb.authStore.save(forged, null);
  await rejects(pb.collection('posts').getList(1, 1), 401);
  const guest = await client().collection('_superusers').getList(1, 10);
  assert.equal(guest.totalItems, 0);
  const admin = client();
  await admin.collection('_superusers').authWithPassword('admin@example.com', 'password123');
  const seen = await admin.collection('_superusers').getList(1, 10);
  assert.equal(seen.totalItems, 1);
  const users = await admin.collection('users').getList(1, 1, { sort: 'name' });
  assert.equal(users.items[0].email, 'user0001@example.com');
});

test('multiple values: field+, +field and field- modifiers; expand on a write', async () => {
  const { pb, auth } = await signIn(5);
  const p = await pb.collection('posts').create(
    { title: 'Tags', author: auth.record.id, tags: ['tech'] }, { expand: 'author' });
  assert.equal(p.expand.author.id, auth.record.id);
  let u = await pb.collection('posts').update(p.id, { 'tags+': ['food', 'tech'] });
  assert.deepEqual(u.tags, ['food', 'tech']);
  u = await pb.collection('posts').update(p.id, { '+tags': 'music' });
  assert.deepEqual(u.tags, ['music', 'food', 'tech']);
  u = await pb.collection('posts').update(p.id, { 'tags-': ['food', 'nope'] });
  assert.deepEqual(u.tags, ['music', 'tech']);
  await rejects(pb.collection('posts').update(p.id, { 'tags+': 'bad' }), 400);
  await pb.collection('posts').delete(p.id);
});

test('FormData: a create and an update from forms, @jsonPayload merged; a file refused', async () => {
  const { pb, auth } = await signIn(9);
  const fd = new FormData();
  fd.append('title', 'From FormData');
  fd.append('author', auth.record.id);
  fd.append('status', 'draft');
  fd.append('tags', 'news');
  fd.append('tags', 'tech');
  const p = await pb.collection('posts').create(fd);
  assert.equal(p.title, 'From FormData');
  assert.equal(p.status, 'draft');
  assert.deepEqual(p.tags, ['news', 'tech']);
  const up = new FormData();
  up.append('tags+', 'life');
  up.append('@jsonPayload', JSON.stringify({ title: 'Renamed', status: 'published' }));
  const u = await pb.collection('posts').update(p.id, up);
  assert.equal(u.title, 'Renamed');
  assert.equal(u.status, 'published');
  assert.deepEqual(u.tags, ['news', 'tech', 'life']);
  // A body holding a Blob: the SDK sends multipart with the other values as @jsonPayload
  // parts; sluice has no file fields yet, so the write is a 400 naming the field and
  // changes nothing.
  const e = await rejects(pb.collection('posts').update(p.id, {
    title: 'Not stored', tags: ['food'], cover: new Blob(['<svg/>'], { type: 'image/png' }),
  }), 400);
  assert.equal(e.response.data.cover.code, 'validation_file_not_accepted');
  const still = await pb.collection('posts').getOne(p.id);
  assert.equal(still.title, 'Renamed');
  assert.deepEqual(still.tags, ['news', 'tech', 'life']);
  await pb.collection('posts').delete(p.id);
});

// The tests' own collections (test_records.c): notes, whose rules use @collection.members,
// @request.body.locked:isset and @request.body.labels:changed, and members.
test('number+ / number- and field+ in creates and updates; rules with :isset, :changed and @collection', async () => {
  const { pb, auth } = await signIn(7);
  const other = (await signIn(8)).pb;
  const n = await pb.collection('notes').create(
    { owner: auth.record.id, title: 'sdk', 'views+': 5, 'views-': 1, 'labels+': ['x'] });
  assert.equal(n.views, 4);
  assert.deepEqual(n.labels, ['x']);
  const u = await pb.collection('notes').update(n.id, { 'views+': 3, '+labels': 'z', 'labels+': 'y' });
  assert.equal(u.views, 7);
  assert.deepEqual(u.labels, ['z', 'x', 'y']);
  await rejects(pb.collection('notes').update(n.id, { 'views+': 'many' }), 400);
  // The body may not set locked on a create, nor change labels on an update.
  await rejects(pb.collection('notes').create({ owner: auth.record.id, title: 'l', locked: false }), 400);
  await rejects(pb.collection('notes').update(n.id, { labels: ['y'] }), 404);
  assert.equal((await pb.collection('notes').update(n.id, { labels: ['z', 'x', 'y'] })).title, 'sdk');
  // Another user sees the note once a membership row names both.
  await rejects(other.collection('notes').getOne(n.id), 404);
  await pb.collection('members').create({ user: other.authStore.record.id, note: n.id, role: 'member' });
  assert.equal((await other.collection('notes').getOne(n.id)).id, n.id);
  const list = await other.collection('notes').getList(1, 30, { filter: `id = '${n.id}'` });
  assert.equal(list.totalItems, 1);
  // Deleting takes an admin membership of the deleting user: the owner has none.
  await rejects(pb.collection('notes').delete(n.id), 404);
});

test('a password change needs the old one and revokes the old tokens', async () => {
  const pb = client();
  const email = `pw${Date.now()}@example.com`;
  const u = await pb.collection('users').create(
    { email, password: 'first-pass-1', passwordConfirm: 'first-pass-1' });
  const auth = await pb.collection('users').authWithPassword(email, 'first-pass-1');
  const oldToken = auth.token;
  await rejects(pb.collection('users').update(u.id,
    { password: 'second-pass-2', passwordConfirm: 'second-pass-2' }), 400);
  await rejects(pb.collection('users').update(u.id,
    { oldPassword: 'wrong-pass', password: 'second-pass-2', passwordConfirm: 'second-pass-2' }), 400);
  // Another user learns nothing about it: 404 before any password is looked at.
  const other = (await signIn(6)).pb;
  await rejects(other.collection('users').update(u.id,
    { oldPassword: 'first-pass-1', password: 'x-pass-333', passwordConfirm: 'x-pass-333' }), 404);
  await pb.collection('users').update(u.id,
    { oldPassword: 'first-pass-1', password: 'second-pass-2', passwordConfirm: 'second-pass-2' });
  const stale = client();
  stale.authStore.save(oldToken, null);
  await rejects(stale.collection('posts').getList(1, 1), 401);
  await rejects(client().collection('users').authWithPassword(email, 'first-pass-1'), 400);
  const again = client();
  await again.collection('users').authWithPassword(email, 'second-pass-2');
  assert.equal(await again.collection('users').delete(u.id), true);
});

test('createBatch: two creates in one batch, read back, then deleted in another', async () => {
  const { pb, auth } = await signIn(5);
  const batch = pb.createBatch();
  batch.collection('posts').create({ title: 'batch one', author: auth.record.id, status: 'draft' });
  batch.collection('posts').create({ title: 'batch two', author: auth.record.id, tags: ['tech'] });
  const res = await batch.send();
  assert.equal(res.length, 2);
  assert.deepEqual(res.map((r) => r.status), [200, 200]);
  const [a, b] = res.map((r) => r.body);
  assert.equal(a.title, 'batch one');
  assert.equal(b.title, 'batch two');
  const ra = await pb.collection('posts').getOne(a.id);
  const rb = await pb.collection('posts').getOne(b.id);
  assert.equal(ra.status, 'draft');
  assert.deepEqual(rb.tags, ['tech']);
  assert.equal(rb.author, auth.record.id);
  const del = pb.createBatch();
  del.collection('posts').delete(a.id);
  del.collection('posts').delete(b.id);
  const gone = await del.send();
  assert.deepEqual(gone.map((r) => r.status), [204, 204]);
  await rejects(pb.collection('posts').getOne(a.id), 404);
  // A batch whose second request its rule refuses stores nothing and names the request.
  const other = await signIn(6);
  const post = (await pb.collection('posts').getList(1, 1)).items[0].id;
  const before = (await pb.collection('comments').getList(1, 1)).totalItems;
  const bad = other.pb.createBatch();
  bad.collection('comments').create({ post, author: other.auth.record.id, text: 'never' });
  bad.collection('comments').create({ post, author: auth.record.id, text: 'never' });
  const e = await rejects(bad.send(), 400);
  assert.equal(e.response.message, 'Batch transaction failed.');
  assert.equal(e.response.data.requests['1'].code, 'batch_request_failed');
  assert.equal(e.response.data.requests['1'].response.status, 400);
  assert.equal((await pb.collection('comments').getList(1, 1)).totalItems, before);
});

// The captured message to `to` (waited for: the mail command runs after the answer), taken
// out of the directory, and the token it carries (the first group of `line`).
async function mailTo(to, line = /^Token: (\S+)\r$/m) {
  for (let i = 0; i < 100; i++) {
    for (const f of readdirSync(mailDir).filter((n) => n.endsWith('.eml')).sort()) {
      const p = join(mailDir, f);
      const text = readFileSync(p, 'utf8');
      if (text.includes(`\r\nTo: ${to}\r\n`)) {
        unlinkSync(p);
        const m = text.match(line);
        assert.ok(m, text);
        return { text, token: m[1] };
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`no mail to ${to}`);
}

test('listAuthMethods: password sign-in by email, OTP, no OAuth2 or MFA', async () => {
  const m = await client().collection('users').listAuthMethods();
  assert.deepEqual(m.password, { identityFields: ['email'], enabled: true });
  assert.deepEqual(m.oauth2, { providers: [], enabled: false });
  assert.deepEqual(m.mfa, { enabled: false, duration: 0 });
  assert.deepEqual(m.otp, { enabled: true, duration: 180 });
  await rejects(client().collection('posts').listAuthMethods(), 404);
});

// One account of its own, made and deleted here, so the seeded users stay as they were.
test('account flows: verification, password reset, email change', async () => {
  const pb = client();
  const users = () => pb.collection('users');
  const email = `flows${Date.now()}@example.com`;
  const made = await users().create({
    email, password: 'password123', passwordConfirm: 'password123', name: 'Flows',
  });
  assert.equal(made.verified, false);

  // Verification: the token the mail carries, PocketBase's claims, verified after.
  assert.equal(await users().requestVerification(email), true);
  const v = await mailTo(email);
  assert.match(v.text, /\/_\/#\/auth\/confirm-verification\/eyJ/);
  const claims = getTokenPayload(v.token);
  assert.equal(claims.type, 'verification');
  assert.equal(claims.email, email);
  assert.equal(claims.id, made.id);
  assert.ok(claims.exp - Date.now() / 1000 > 3 * 86400 - 60);
  assert.equal(await users().confirmVerification(v.token), true);
  const before = client();
  const a1 = await before.collection('users').authWithPassword(email, 'password123');
  assert.equal(a1.record.verified, true);
  // A verified account gets no second verification mail, and nobody's address none either;
  // both answer as any other request does.
  assert.equal(await users().requestVerification(email), true);
  assert.equal(await users().requestPasswordReset('nobody-at-all@example.com'), true);

  // Password reset: the new password signs in, the old one and the old tokens do not,
  // and the token is spent.
  assert.equal(await users().requestPasswordReset(email), true);
  const r = await mailTo(email);
  assert.equal(getTokenPayload(r.token).type, 'passwordReset');
  assert.equal(await users().confirmPasswordReset(r.token, 'newpassword456', 'newpassword456'),
    true);
  await rejects(client().collection('users').authWithPassword(email, 'password123'), 400);
  await rejects(before.collection('users').authRefresh(), 401);
  const again = await rejects(
    users().confirmPasswordReset(r.token, 'other-password', 'other-password'), 400);
  assert.equal(again.response.data.token.code, 'validation_invalid_token');
  const me = client();
  await me.collection('users').authWithPassword(email, 'newpassword456');

  // Email change: asked for signed in, mailed to the new address, confirmed with the
  // password; the old address no longer signs in.
  const newEmail = `new-${email}`;
  assert.equal(await me.collection('users').requestEmailChange(newEmail), true);
  const c = await mailTo(newEmail);
  const cc = getTokenPayload(c.token);
  assert.equal(cc.type, 'emailChange');
  assert.equal(cc.newEmail, newEmail);
  const wrong = await rejects(me.collection('users').confirmEmailChange(c.token, 'password123'),
    400);
  assert.equal(wrong.response.data.password.code, 'validation_invalid_password');
  assert.equal(await me.collection('users').confirmEmailChange(c.token, 'newpassword456'), true);
  await rejects(client().collection('users').authWithPassword(email, 'newpassword456'), 400);
  const after = client();
  const a2 = await after.collection('users').authWithPassword(newEmail, 'newpassword456');
  assert.equal(a2.record.email, newEmail);
  assert.equal(a2.record.verified, true);

  // Tokens of the wrong type or forged: PocketBase's 400 on the token.
  for (const bad of [a2.token, v.token.slice(0, -2) + 'xx', 'not-a-token']) {
    const e = await rejects(users().confirmVerification(bad), 400);
    assert.equal(e.response.data.token.code, 'validation_invalid_token');
    assert.equal(e.response.message, 'An error occurred while validating the submitted data.');
  }
  await after.collection('users').delete(a2.record.id);
});

// The one-time password mailed to `to`: the "Code: " line of the captured message.
async function otpTo(to) {
  return (await mailTo(to, /^Code: (\d+)\r$/m)).token;
}

// One account of its own, made and deleted here.
test('requestOTP + authWithOTP: the mailed code signs in once and verifies', async () => {
  const pb = client();
  const email = `otp${Date.now()}@example.com`;
  const made = await pb.collection('users').create({
    email, password: 'password123', passwordConfirm: 'password123', name: 'Otp',
  });
  assert.equal(made.verified, false);
  const req = await pb.collection('users').requestOTP(email);
  assert.match(req.otpId, /^[a-z0-9]{15}$/);
  const code = await otpTo(email);
  assert.match(code, /^\d{8}$/);
  const wrong = await rejects(pb.collection('users').authWithOTP(req.otpId, '00000000'), 400);
  assert.equal(wrong.response.message, 'Invalid or expired OTP');
  const auth = await pb.collection('users').authWithOTP(req.otpId, code);
  assert.equal(auth.record.id, made.id);
  assert.equal(auth.record.email, email);
  assert.equal(auth.record.verified, true);
  assert.equal(pb.authStore.isValid, true);
  assert.equal(pb.authStore.record.id, made.id);
  assert.equal(getTokenPayload(auth.token).type, 'auth');
  await pb.collection('users').authRefresh();
  // Spent: the same code again is refused.
  await rejects(client().collection('users').authWithOTP(req.otpId, code), 400);
  // Nobody's address: an otpId all the same, which signs nobody in.
  const none = await client().collection('users').requestOTP('nobody-otp@example.com');
  assert.match(none.otpId, /^[a-z0-9]{15}$/);
  await rejects(client().collection('users').authWithOTP(none.otpId, '12345678'), 400);
  await pb.collection('users').delete(made.id);
});

test('superusers: sign-in, impersonate() and its token, not refreshable', async () => {
  const admin = client();
  const a = await admin.collection('_superusers').authWithPassword('admin@example.com',
    'password123');
  assert.equal(a.record.collectionName, '_superusers');
  assert.equal(admin.authStore.isSuperuser, true);
  const target = await admin.collection('users').getFirstListItem(
    'email = "user0009@example.com"');
  const imp = await admin.collection('users').impersonate(target.id, 3600);
  assert.equal(imp.authStore.record.id, target.id);
  assert.equal(imp.authStore.record.email, 'user0009@example.com');
  const claims = getTokenPayload(imp.authStore.token);
  assert.equal(claims.refreshable, false);
  assert.ok(Math.abs(claims.exp - Date.now() / 1000 - 3600) < 60);
  // The token is the user's: its own update rule lets it through.
  const u = await imp.collection('users').update(target.id, { name: target.name });
  assert.equal(u.id, target.id);
  await rejects(imp.collection('users').authRefresh(), 403);
  // Anyone but a superuser: 401 without a token, 403 with a user's.
  await rejects(client().collection('users').impersonate(target.id, 0), 401);
  const { pb } = await signIn(10);
  await rejects(pb.collection('users').impersonate(target.id, 0), 403);
});

test('a superuser upserted by records-seed -a signs in', async () => {
  const seeder = process.env.RECORDS_SEEDER, db = process.env.RECORDS_DB;
  assert.ok(seeder && db, 'RECORDS_SEEDER and RECORDS_DB are set');
  execFileSync(seeder, ['-q', '-a', 'cli-admin@example.com', db],
    { input: 'cli-password-1\n' });
  const su = client();
  const a = await su.collection('_superusers').authWithPassword('cli-admin@example.com',
    'cli-password-1');
  assert.equal(a.record.email, 'cli-admin@example.com');
  const list = await su.collection('_superusers').getFullList();
  assert.ok(list.some((r) => r.email === 'admin@example.com'));
});

// fetch() from another loopback address: the SDK takes a fetch of its own per request.
function fetchFrom(localAddress) {
  return (u, opts) => new Promise((resolve, reject) => {
    const req = request(u, { method: opts.method, headers: opts.headers, localAddress },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(new Response(Buffer.concat(chunks),
          { status: res.statusCode, headers: res.headers })));
      });
    req.on('error', reject);
    if (opts.body) req.write(opts.body);
    req.end();
  });
}

test('sign-in past the identity limit: 429, PocketBase\'s body', async () => {
  const users = client().collection('users');
  const fetch = fetchFrom('127.0.0.5');
  for (let i = 0; i < 4; i++)
    await rejects(users.authWithPassword('user0015@example.com', 'wrong-password',
      { fetch }), 400);
  const e = await rejects(users.authWithPassword('user0015@example.com', 'password123',
    { fetch }), 429);
  assert.deepEqual(e.response, { status: 429, message: 'Too Many Requests.', data: {} });
  // Another identity from the same address still signs in.
  const ok = await users.authWithPassword('user0016@example.com', 'password123', { fetch });
  assert.equal(ok.record.email, 'user0016@example.com');
});
