// rest.test.mjs: sluice's rest endpoint driven by the real @supabase/postgrest-js client,
// unchanged, the way a Supabase application would use it.  Run by
// tests/integration/test_rest_js.c once per back end (SQLite, PostgreSQL) with REST_URL set
// to the endpoint's base URL (http://127.0.0.1:PORT/rest/v1) over the fixture schema of
// tests/integration/rest_fixture.h; every test runs, none is skipped.
//
// Covers: select with aliases and embeds (both directions, nested, many-to-many, !inner,
// embed order/limit), every filter (eq neq gt gte lt lte like ilike in is not or match),
// order, limit, range, count (exact, head), single, maybeSingle, insert (one and bulk,
// with return=representation), upsert (merge and ignore), update, delete, rpc (POST, GET,
// setof with filters) and csv.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostgrestClient } from '@supabase/postgrest-js';

const url = process.env.REST_URL;
if (!url) throw new Error('REST_URL is not set');
const db = new PostgrestClient(url);

function ok(res) {
  assert.equal(res.error, null, JSON.stringify(res.error));
  return res.data;
}

test('select columns, aliases and order', async () => {
  const data = ok(await db.from('artist').select('id:artist_id, name').lt('artist_id', 3)
    .order('artist_id'));
  assert.deepEqual(data, [{ id: 1, name: 'AC/DC' }, { id: 2, name: 'Accept' }]);
});

test('select * with a NULL and quotes', async () => {
  const data = ok(await db.from('artist').select('*').in('artist_id', [4, 5])
    .order('artist_id'));
  assert.deepEqual(data, [{ artist_id: 4, name: 'O\'Brien, "Jr"' },
    { artist_id: 5, name: null }]);
});

test('embeds: to-one, to-many, nested, many-to-many', async () => {
  const albums = ok(await db.from('album').select('title, artist(name), track(name, genre(name))')
    .eq('album_id', 2));
  assert.deepEqual(albums, [{ title: 'Let There Be Rock', artist: { name: 'AC/DC' },
    track: [{ name: 'Go Down', genre: { name: 'Jazz' } }] }]);
  const pl = ok(await db.from('playlist').select('name, track(track_id)').eq('playlist_id', 2)
    .order('track_id', { referencedTable: 'track' }));
  assert.deepEqual(pl, [{ name: 'Movies', track: [{ track_id: 3 }, { track_id: 6 }] }]);
  const none = ok(await db.from('artist').select('name, album(title)').eq('artist_id', 5));
  assert.deepEqual(none, [{ name: null, album: [] }]);
});

test('embeds: !inner, filters, order and limit on the embed', async () => {
  const data = ok(await db.from('album').select('album_id, track!inner(track_id)')
    .eq('track.genre_id', 2).order('album_id'));
  assert.deepEqual(data, [{ album_id: 2, track: [{ track_id: 3 }] }]);
  const lim = ok(await db.from('album').select('album_id, track(track_id)').eq('album_id', 1)
    .order('track_id', { referencedTable: 'track', ascending: false })
    .limit(1, { referencedTable: 'track' }));
  assert.deepEqual(lim, [{ album_id: 1, track: [{ track_id: 2 }] }]);
});

test('filters: comparison operators', async () => {
  const ids = async (q) => ok(await q.order('track_id')).map((r) => r.track_id);
  const t = () => db.from('track').select('track_id');
  assert.deepEqual(await ids(t().eq('genre_id', 2)), [3, 7]);
  assert.deepEqual(await ids(t().neq('genre_id', 1)), [3, 6, 7]);
  assert.deepEqual(await ids(t().gt('milliseconds', 331180)), [1, 4]);
  assert.deepEqual(await ids(t().gte('milliseconds', 331180)), [1, 3, 4]);
  assert.deepEqual(await ids(t().lt('milliseconds', 205662)), [7]);
  assert.deepEqual(await ids(t().lte('milliseconds', 205662)), [2, 7]);
  assert.deepEqual(await ids(t().match({ album_id: 1, genre_id: 1 })), [1, 2]);
});

test('filters: like, ilike, in, is, not, or', async () => {
  const ids = async (q) => ok(await q.order('track_id')).map((r) => r.track_id);
  const t = () => db.from('track').select('track_id');
  assert.deepEqual(await ids(t().like('name', '%Rock%')), [1]);
  assert.deepEqual(await ids(t().like('name', '*rock*')), []);
  assert.deepEqual(await ids(t().ilike('name', '%rock%')), [1]);
  assert.deepEqual(await ids(t().in('track_id', [1, 3, 5])), [1, 3, 5]);
  assert.deepEqual(await ids(t().in('name', ['Go Down', 'Orphan', 'a,(b)'])), [3, 7]);
  assert.deepEqual(await ids(t().is('composer', null)), [2, 4, 7]);
  assert.deepEqual(await ids(t().not('composer', 'is', null)), [1, 3, 5, 6]);
  assert.deepEqual(await ids(t().not('track_id', 'in', '(1,2,3,4,5)')), [6, 7]);
  assert.deepEqual(await ids(t().or('milliseconds.lt.2000,track_id.eq.2')), [2, 7]);
  assert.deepEqual(await ids(t().or('genre_id.eq.2,and(album_id.eq.1,composer.not.is.null)')),
    [1, 3, 7]);
  const emp = ok(await db.from('employee').select('employee_id').is('active', true));
  assert.deepEqual(emp, [{ employee_id: 1 }]);
});

test('order with nulls first and last', async () => {
  const a = ok(await db.from('artist').select('artist_id')
    .order('name', { ascending: true, nullsFirst: true }).limit(2));
  assert.deepEqual(a, [{ artist_id: 5 }, { artist_id: 1 }]);
  const b = ok(await db.from('track').select('track_id')
    .order('genre_id', { ascending: false, nullsFirst: false }).order('track_id').limit(3));
  assert.deepEqual(b, [{ track_id: 6 }, { track_id: 3 }, { track_id: 7 }]);
});

test('range and count', async () => {
  const r = await db.from('album').select('album_id', { count: 'exact' }).order('album_id')
    .range(1, 2);
  assert.equal(r.error, null);
  assert.equal(r.count, 5);
  assert.equal(r.status, 206);
  assert.deepEqual(r.data, [{ album_id: 2 }, { album_id: 3 }]);
  const h = await db.from('album').select('*', { count: 'exact', head: true });
  assert.equal(h.error, null);
  assert.equal(h.count, 5);
  assert.equal(h.data, null);
  const past = await db.from('album').select('*', { count: 'exact' }).range(10, 12);
  assert.equal(past.status, 416);
  assert.equal(past.error.code, 'PGRST103');
});

test('single and maybeSingle', async () => {
  const one = ok(await db.from('artist').select('name').eq('artist_id', 3).single());
  assert.deepEqual(one, { name: 'Aerosmith' });
  const many = await db.from('artist').select('name').lt('artist_id', 3).single();
  assert.equal(many.status, 406);
  assert.equal(many.error.code, 'PGRST116');
  const none = await db.from('artist').select('name').eq('artist_id', 99).maybeSingle();
  assert.equal(none.error, null);
  assert.equal(none.data, null);
  const some = ok(await db.from('artist').select('name').eq('artist_id', 1).maybeSingle());
  assert.deepEqual(some, { name: 'AC/DC' });
});

test('csv', async () => {
  const csv = ok(await db.from('artist').select('artist_id,name').lte('artist_id', 4)
    .order('artist_id').csv());
  assert.equal(csv, 'artist_id,name\n1,AC/DC\n2,Accept\n3,Aerosmith\n4,"O\'Brien, ""Jr"""');
});

test('insert one, with and without representation', async () => {
  const r = await db.from('employee').insert({ employee_id: 100, last_name: 'User',
    first_name: 'Virtual', title: 'JS Tester', birth_date: '1920-01-01' });
  assert.equal(r.error, null);
  assert.equal(r.status, 201);
  const rep = ok(await db.from('artist').insert({ artist_id: 100, name: 'JS; drop table x' })
    .select());
  assert.deepEqual(rep, [{ artist_id: 100, name: 'JS; drop table x' }]);
  const single = ok(await db.from('artist').insert({ artist_id: 101, name: 'One' }).select('name')
    .single());
  assert.deepEqual(single, { name: 'One' });
});

test('bulk insert with differing keys and defaults', async () => {
  const rows = [];
  for (let i = 0; i < 20; i++)
    rows.push({ employee_id: 200 + i, last_name: `L${i}`, first_name: `F${i}`, title: 'JS Tester' });
  rows.push({ employee_id: 300, last_name: 'X', first_name: 'Y' });
  const r = await db.from('employee').insert(rows, { count: 'exact' });
  assert.equal(r.error, null);
  assert.equal(r.status, 201);
  assert.equal(r.count, 21);
  const got = ok(await db.from('employee').select('employee_id,title,active')
    .gte('employee_id', 200).order('employee_id'));
  assert.equal(got.length, 21);
  assert.deepEqual(got[20], { employee_id: 300, title: null, active: true });
  const d = ok(await db.from('actor').insert([{ actor_id: 100, first_name: 'A', last_name: 'B' },
    { actor_id: 101, first_name: 'C', last_name: 'D', last_update: '2020-01-02T03:04:05' }],
    { defaultToNull: false }).select('actor_id,last_update').order('actor_id'));
  assert.deepEqual(d, [{ actor_id: 100, last_update: '2000-01-01T00:00:00' },
    { actor_id: 101, last_update: '2020-01-02T03:04:05' }]);
});

test('insert errors', async () => {
  const dup = await db.from('artist').insert({ artist_id: 1, name: 'dup' });
  assert.equal(dup.status, 409);
  assert.equal(dup.error.code, '23505');
  const nn = await db.from('album').insert({ album_id: 91, artist_id: 1 });
  assert.equal(nn.status, 400);
  assert.equal(nn.error.code, '23502');
  const col = await db.from('artist').insert({ artist_id: 102, nosuch: 1 });
  assert.equal(col.status, 400);
  assert.equal(col.error.code, 'PGRST204');
  const tab = await db.from('nosuch').select();
  assert.equal(tab.status, 404);
  const bad = await db.from('artist').select('nosuch');
  assert.equal(bad.status, 400);
  assert.equal(bad.error.code, '42703');
});

test('upsert: merge and ignore duplicates', async () => {
  const m = ok(await db.from('artist').upsert([{ artist_id: 100, name: 'Merged' },
    { artist_id: 103, name: 'New' }]).select().order('artist_id'));
  assert.deepEqual(m, [{ artist_id: 100, name: 'Merged' }, { artist_id: 103, name: 'New' }]);
  const i = ok(await db.from('artist').upsert([{ artist_id: 100, name: 'Ignored' },
    { artist_id: 104, name: 'Other' }], { ignoreDuplicates: true }).select());
  assert.deepEqual(i, [{ artist_id: 104, name: 'Other' }]);
  const oc = ok(await db.from('artist').upsert({ artist_id: 104, name: 'Again' },
    { onConflict: 'artist_id' }).select('name'));
  assert.deepEqual(oc, [{ name: 'Again' }]);
});

test('update', async () => {
  const r = await db.from('actor').update({ first_name: 'Pen' }).eq('actor_id', 1);
  assert.equal(r.error, null);
  assert.equal(r.status, 204);
  const rep = ok(await db.from('actor').update({ last_name: 'Changed' }).in('actor_id', [1, 2])
    .select('actor_id,first_name,last_name').order('actor_id'));
  assert.deepEqual(rep, [{ actor_id: 1, first_name: 'Pen', last_name: 'Changed' },
    { actor_id: 2, first_name: 'Nick', last_name: 'Changed' }]);
});

test('delete', async () => {
  const r = await db.from('employee').delete({ count: 'exact' }).eq('title', 'JS Tester');
  assert.equal(r.error, null);
  assert.equal(r.status, 204);
  assert.equal(r.count, 21);
  const rep = ok(await db.from('artist').delete().in('artist_id', [103, 104]).select('artist_id')
    .order('artist_id'));
  assert.deepEqual(rep.map((x) => x.artist_id).sort(), [103, 104]);
  const fk = await db.from('artist').delete().eq('artist_id', 1);
  assert.equal(fk.status, 409);
  assert.equal(fk.error.code, '23503');
});

test('rpc: scalar, POST and GET', async () => {
  assert.equal(ok(await db.rpc('add_them', { a: 1, b: 2 })), 3);
  assert.equal(ok(await db.rpc('add_them', { a: 10, b: 5 }, { get: true })), 15);
  const missing = await db.rpc('add_them', { a: 1 });
  assert.equal(missing.status, 404);
  assert.equal(missing.error.code, 'PGRST202');
});

test('rpc: setof with select, filters, order, embeds, count', async () => {
  const a = ok(await db.rpc('albums_of', { aid: 1 }).select('title').order('title'));
  assert.deepEqual(a, [{ title: 'For Those About To Rock' }, { title: 'Let There Be Rock' }]);
  const b = ok(await db.rpc('all_albums').select('album_id, artist(name)').eq('album_id', 5));
  assert.deepEqual(b, [{ album_id: 5, artist: { name: 'Aerosmith' } }]);
  const c = await db.rpc('all_albums', {}, { count: 'exact' }).select('album_id')
    .order('album_id').limit(2);
  assert.equal(c.error, null);
  assert.equal(c.count, 5);
  assert.deepEqual(c.data, [{ album_id: 1 }, { album_id: 2 }]);
  const d = ok(await db.rpc('albums_of', { aid: 3 }).select('title').single());
  assert.deepEqual(d, { title: 'Big Ones' });
});
