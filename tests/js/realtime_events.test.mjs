// realtime_events.test.mjs: record events received by the real PocketBase JavaScript SDK
// (npm "pocketbase", collection(...).subscribe(), with the "eventsource" package as Node's
// EventSource), unchanged, from sluice's realtime pool.  Run by
// tests/integration/test_realtime_delivery.c on SQLite and on PostgreSQL with RECORDS_URL
// set to a stack whose records and realtime pools share realtime_socket=, seeded with two
// users and the test's collection "notes" (list rule: public or the owner's; view rule:
// the owner's).
//
// Covers: subscribe('*') receives {action, record} for create, update and delete of what
// the subscriber may list, and never a note it may not (checked after a sentinel event);
// subscribe(RECORD_ID) follows the view rule; the options expand and fields shape the
// record; unsubscribe() stops the events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import PocketBase from 'pocketbase';

globalThis.EventSource = EventSource;

const url = process.env.RECORDS_URL;
if (!url) throw new Error('RECORDS_URL is not set');

async function signedIn(n) {
  const pb = new PocketBase(url);
  pb.autoCancellation(false);
  if (n > 0) {
    await pb.collection('users').authWithPassword(`user000${n}@example.com`, 'password123');
  }
  return pb;
}

// Resolves with the first event of list that pred accepts, within ms.
function waitFor(list, pred, ms = 5000) {
  return new Promise((resolve, reject) => {
    const end = Date.now() + ms;
    const tick = () => {
      const e = list.find(pred);
      if (e) return resolve(e);
      if (Date.now() > end) return reject(new Error('no such event within ' + ms + ' ms'));
      setTimeout(tick, 20);
    };
    tick();
  });
}

test('subscribe() receives the events its rules allow, shaped by its options', async () => {
  const a = await signedIn(1);
  const b = await signedIn(2);
  const anon = await signedIn(0);
  const ea = [], eb = [], en = [], eopt = [];
  const unsubA = await a.collection('notes').subscribe('*', (e) => ea.push(e));
  const unsubB = await b.collection('notes').subscribe('*', (e) => eb.push(e));
  const unsubN = await anon.collection('notes').subscribe('*', (e) => en.push(e));
  const opt = await signedIn(2);
  const unsubOpt = await opt.collection('notes').subscribe('*', (e) => eopt.push(e),
    { expand: 'owner', fields: 'id,title,expand.owner.name' });
  const owner = a.authStore.record.id;

  // A private note: its owner hears create, update and delete.
  const p = await a.collection('notes').create({ owner, title: 'js-private', public: false });
  const created = await waitFor(ea, (e) => e.action === 'create' && e.record.id === p.id);
  assert.equal(created.record.title, 'js-private');
  assert.equal(created.record.collectionName, 'notes');
  await a.collection('notes').update(p.id, { title: 'js-private-2' });
  await waitFor(ea, (e) => e.action === 'update' && e.record.title === 'js-private-2');
  await a.collection('notes').delete(p.id);
  const deleted = await waitFor(ea, (e) => e.action === 'delete' && e.record.id === p.id);
  assert.equal(deleted.record.title, 'js-private-2');

  // A public note as the sentinel: everyone hears it, and nobody else heard the private.
  const q = await a.collection('notes').create({ owner, title: 'js-public', public: true });
  await waitFor(eb, (e) => e.record.id === q.id);
  await waitFor(en, (e) => e.record.id === q.id);
  const shaped = await waitFor(eopt, (e) => e.record.id === q.id);
  assert.deepEqual(Object.keys(shaped.record).sort(), ['expand', 'id', 'title']);
  assert.equal(shaped.record.expand.owner.name, a.authStore.record.name);
  for (const list of [eb, en, eopt]) {
    assert.equal(list.some((e) => e.record.id === p.id), false, 'the private note leaked');
  }

  // One record's topic follows the view rule: the owner hears it, B does not.
  const oneA = [], oneB = [];
  const unsubOneA = await a.collection('notes').subscribe(q.id, (e) => oneA.push(e));
  const unsubOneB = await b.collection('notes').subscribe(q.id, (e) => oneB.push(e));
  await a.collection('notes').update(q.id, { title: 'js-public-2' });
  await waitFor(oneA, (e) => e.action === 'update' && e.record.title === 'js-public-2');
  await waitFor(eb, (e) => e.action === 'update' && e.record.title === 'js-public-2');
  assert.equal(oneB.length, 0);

  // After unsubscribe() B hears nothing more; the anonymous client is the sentinel.
  await unsubB();
  await unsubOneB();
  const before = eb.length;
  const r = await a.collection('notes').create({ owner, title: 'js-after', public: true });
  await waitFor(en, (e) => e.record.id === r.id);
  assert.equal(eb.length, before);

  await unsubOneA();
  await unsubA();
  await unsubN();
  await unsubOpt();
});
