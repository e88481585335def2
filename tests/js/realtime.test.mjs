// realtime.test.mjs: sluice's /api/realtime driven by the real PocketBase JavaScript SDK
// (npm "pocketbase", pb.realtime), unchanged, with the "eventsource" package as Node's
// EventSource, as PocketBase's documentation sets it up for Node.  Run by
// tests/integration/test_realtime.c with REALTIME_URL set to the stack's base URL.
//
// Covers: subscribe() connects (PB_CONNECT received, its clientId the SDK's, 40 letters
// and digits) and sends the subscriptions (the SDK's POST answered 204, or subscribe()
// would reject); a second client gets another id; unsubscribe() of the last topic
// disconnects.  Record events: realtime_events.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import PocketBase from 'pocketbase';

globalThis.EventSource = EventSource;

const url = process.env.REALTIME_URL;
if (!url) throw new Error('REALTIME_URL is not set');

function client() {
  const pb = new PocketBase(url);
  pb.autoCancellation(false);
  return pb;
}

test('pb.realtime connects, receives PB_CONNECT and subscribes', async () => {
  const pb = client();
  let connectEvent = null;
  const unsubConnect = await pb.realtime.subscribe('PB_CONNECT', (e) => { connectEvent = e; });
  const unsubPosts = await pb.realtime.subscribe('posts', () => {});
  assert.equal(pb.realtime.isConnected, true);
  assert.match(pb.realtime.clientId, /^[A-Za-z0-9]{40}$/);
  assert.ok(connectEvent, 'the PB_CONNECT callback ran');
  assert.equal(connectEvent.clientId, pb.realtime.clientId);
  // A topic with options: the SDK adds ?options=... to it.
  const unsubOne = await pb.realtime.subscribe('posts/abc', () => {}, { query: { expand: 'author' } });

  const other = client();
  const unsubOther = await other.realtime.subscribe('comments', () => {});
  assert.match(other.realtime.clientId, /^[A-Za-z0-9]{40}$/);
  assert.notEqual(other.realtime.clientId, pb.realtime.clientId);

  await unsubOne();
  await unsubPosts();
  await unsubConnect();
  await unsubOther();
  assert.equal(pb.realtime.isConnected, false);
  assert.equal(other.realtime.isConnected, false);
});
