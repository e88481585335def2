// server.js: the fastify peer of sluice's benchmark, a cluster of PEER_WORKERS (2)
// processes listening on 127.0.0.1:PEER_PORT behind the benchmark's nginx.
//
// Routes, with the same bodies as sluice:
//   GET /health                                                  {"status":"ok"}
//   GET /rest/v1/artist?select=*&artist_id=eq.N                  (GETSingle)
//   GET /rest/v1/album?select=*,track(*,genre(*))&artist_id=eq.N (GETSingleEmbed)
//   GET /   the Starcord chat page for a random seeded user s_%08d in
//           1..PEER_BENCH_SESSIONS (sluice's bench mode): three queries in one read
//           transaction, rendered from a template literal with every value escaped.
// The databases (Chinook and the chat): PEER_DB_KIND=sqlite with PEER_DB_PATH and
// PEER_CHAT_PATH (better-sqlite3, synchronous, one connection per process and database, a
// busy timeout), or PEER_DB_KIND=pg with PEER_PG_HOST (a socket directory), PEER_PG_PORT,
// PEER_PG_USER, PEER_PG_DB and PEER_PG_CHAT_DB (node-postgres, a pool of PEER_PG_POOL (8)
// connections per process and database).
'use strict';

const cluster = require('node:cluster');

const env = process.env;

if (cluster.isPrimary) {
  const n = Number(env.PEER_WORKERS || 2);
  for (let i = 0; i < n; i++) cluster.fork();
  // A worker that dies is a failed benchmark, not something to hide by restarting it.
  cluster.on('exit', (w, code) => {
    console.error(`fastify worker ${w.process.pid} exited (${code})`);
    process.exit(1);
  });
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers)) w.process.kill('SIGTERM');
    process.exit(0);
  });
  return;
}

const fastify = require('fastify')({ logger: false });

// One query interface over both back ends, for each database (chinook, chat):
// all(sql, params) -> rows, and readTxn(fn) running fn(q) in one read transaction; $N
// placeholders.
let openDb;
if (env.PEER_DB_KIND === 'sqlite') {
  const Database = require('better-sqlite3');
  openDb = (file) => {
    const db = new Database(file, { timeout: 5000 });
    const cache = new Map();
    const prep = (sql) => {
      let st = cache.get(sql);
      if (!st) {
        st = db.prepare(sql.replace(/\$\d+/g, '?'));
        cache.set(sql, st);
      }
      return st;
    };
    const q = (sql, params) => prep(sql).all(...params);
    return {
      all: async (sql, params) => q(sql, params),
      readTxn: async (fn) => {
        // The callbacks are synchronous on SQLite: the transaction never spans an await.
        let out;
        db.transaction(() => { out = fn(q); })();
        return out;
      },
    };
  };
} else {
  const { Pool, types } = require('pg');
  // numeric (unit_price) as a JSON number, as sluice and SQLite give it.
  types.setTypeParser(1700, parseFloat);
  openDb = (database) => {
    const pool = new Pool({
      host: env.PEER_PG_HOST, port: Number(env.PEER_PG_PORT), database,
      user: env.PEER_PG_USER, max: Number(env.PEER_PG_POOL || 8),
    });
    return {
      all: async (sql, params) => (await pool.query(sql, params)).rows,
      readTxn: async (fn) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN READ ONLY');
          const q = async (sql, params) => (await client.query(sql, params)).rows;
          const out = await fn(q);
          await client.query('COMMIT');
          return out;
        } catch (e) {
          await client.query('ROLLBACK').catch(() => {});
          throw e;
        } finally {
          client.release();
        }
      },
    };
  };
}
const sqlite = env.PEER_DB_KIND === 'sqlite';
const chinook = openDb(sqlite ? env.PEER_DB_PATH : env.PEER_PG_DB);
const chat = openDb(sqlite ? env.PEER_CHAT_PATH : env.PEER_PG_CHAT_DB);
const all = chinook.all;

function artistId(request, reply) {
  const m = /^eq\.(\d{1,9})$/.exec(request.query.artist_id || '');
  if (!m) {
    reply.code(400).send({ code: 'bad_request', message: 'artist_id=eq.N is required', details: null, hint: null });
    return null;
  }
  return Number(m[1]);
}

fastify.get('/health', async () => ({ status: 'ok' }));

fastify.get('/rest/v1/artist', async (request, reply) => {
  const id = artistId(request, reply);
  if (id === null) return reply;
  reply.type('application/json; charset=utf-8');
  return all('SELECT artist_id, name FROM artist WHERE artist_id = $1', [id]);
});

fastify.get('/rest/v1/album', async (request, reply) => {
  const id = artistId(request, reply);
  if (id === null) return reply;
  const albums = await all('SELECT album_id, title, artist_id FROM album WHERE artist_id = $1 ORDER BY album_id', [id]);
  if (albums.length > 0) {
    const byId = new Map();
    for (const a of albums) {
      a.track = [];
      byId.set(a.album_id, a);
    }
    const tracks = await all(
      `SELECT t.track_id, t.name, t.album_id, t.media_type_id, t.genre_id, t.composer,
              t.milliseconds, t.bytes, t.unit_price, g.name AS genre_name
       FROM track t LEFT JOIN genre g ON g.genre_id = t.genre_id
       WHERE t.album_id IN (SELECT album_id FROM album WHERE artist_id = $1)
       ORDER BY t.album_id, t.track_id`, [id]);
    for (const t of tracks) {
      const { genre_name: genreName, ...track } = t;
      track.genre = t.genre_id === null ? null : { genre_id: t.genre_id, name: genreName };
      byId.get(t.album_id).track.push(track);
    }
  }
  reply.type('application/json; charset=utf-8');
  return albums;
});

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);
// The avatar's letter: the nickname's first character (a whole code point).
const initial = (s) => (s.length ? String.fromCodePoint(s.codePointAt(0)) : '');
const isoSecond = (ts) => new Date(Math.trunc(ts) * 1000).toISOString().slice(0, 19) + 'Z';
const isoMinute = (ts) => new Date(Math.trunc(ts) * 1000).toISOString().slice(0, 16).replace('T', ' ');
const sessions = Number(env.PEER_BENCH_SESSIONS || 1);

const Q_NICK = 'SELECT nickname FROM users WHERE session_id = $1';
const Q_CHANNELS = `SELECT c.name, CASE WHEN c.id = u.current_channel_id THEN 1 ELSE 0 END AS current
FROM channels c JOIN users u ON u.session_id = $1
JOIN channel_memberships cm ON cm.user_id = u.id
WHERE c.id = cm.channel_id ORDER BY c.id`;
const Q_MESSAGES = `SELECT m.id, u.nickname, m.content, m.created_ts
FROM messages m JOIN users u ON u.id = m.user_id
WHERE m.channel_id = (SELECT current_channel_id FROM users WHERE session_id = $1)
ORDER BY m.created_ts DESC, m.id DESC LIMIT 500`;
const pageOf = (who, channels, messages) => (who.length === 0 ? null
  : { nickname: who[0].nickname, channels, messages: messages.reverse() });
// The page's three queries: synchronous on better-sqlite3, awaited on node-postgres.
const loadPage = (sid) => (q) => pageOf(q(Q_NICK, [sid]), q(Q_CHANNELS, [sid]), q(Q_MESSAGES, [sid]));
const loadPageAsync = (sid) => async (q) => {
  const who = await q(Q_NICK, [sid]);
  if (who.length === 0) return null;
  return pageOf(who, await q(Q_CHANNELS, [sid]), await q(Q_MESSAGES, [sid]));
};

fastify.get('/', async (request, reply) => {
  const sid = `s_${String(1 + Math.floor(Math.random() * sessions)).padStart(8, '0')}`;
  const page = await chat.readTxn(sqlite ? loadPage(sid) : loadPageAsync(sid));
  if (page === null) {
    return reply.code(500).send({ code: 'internal', message: 'bench_sessions exceeds the seeded users', details: sid, hint: null });
  }
  const cur = page.channels.find((c) => Number(c.current) === 1);
  reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store');
  return render({ ...page, current: cur ? cur.name : '' });
});

// The page: the markup of sluice's handlers/chat_page.html as a template literal.
function render({ nickname, current, channels, messages }) {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Starcord · #${esc(current)}</title>
<script type="module" src="https://cdn.jsdelivr.net/gh/starfederation/datastar@1.0.0-RC.1/bundles/datastar.js"></script>
<style>
body{margin:0;font:15px/1.4 system-ui,sans-serif;background:#313338;color:#dbdee1;display:flex;height:100vh}
.sidebar{width:240px;background:#2b2d31;display:flex;flex-direction:column;padding:12px;gap:8px}
.sidebar h1{font-size:18px;margin:0 0 8px}
.channel{display:block;width:100%;text-align:left;background:none;border:0;color:#949ba4;padding:6px 8px;border-radius:4px;cursor:pointer}
.channel.current{background:#404249;color:#fff}
.main{flex:1;display:flex;flex-direction:column;min-width:0}
.messages{flex:1;overflow-y:auto;padding:16px}
.message{display:grid;grid-template-columns:40px 1fr;column-gap:12px;padding:4px 0}
.message-avatar{grid-row:span 2}
.message-avatar{width:40px;height:40px;border-radius:50%;background:#5865f2;color:#fff;display:flex;align-items:center;justify-content:center;font-weight:600;flex:none}
.message-author{font-weight:600;color:#f2f3f5;margin-right:8px}
.message-time{font-size:12px;color:#949ba4}
.message-content{margin:2px 0 0;overflow-wrap:anywhere;white-space:pre-wrap}
.composer{padding:16px}
.composer input{width:100%;box-sizing:border-box;padding:10px;border-radius:8px;border:0;background:#383a40;color:#dbdee1}
.error{color:#f23f43;font-size:12px}
</style>
</head>
<body data-signals="{messageSend: '', channelOpen: '', _nicknameSetError: ''}">
<nav class="sidebar" aria-label="Channels">
<h1>Starcord</h1>
<form class="nickname" data-on-submit="@post('/chat/nickname-set')">
<label for="nickname">Nickname</label>
<input id="nickname" name="nickname" maxlength="32" data-bind-nickname-set value="${esc(nickname)}">
<div class="error" data-text="$_nicknameSetError"></div>
</form>
<form class="channel-open" data-on-submit="@post('/chat/channel-open'); $channelOpen = ''">
<input name="channel" maxlength="32" placeholder="Open a channel" data-bind-channel-open>
</form>
<ul class="channels">
${channels.map((c) => `<li><button class="channel${c.current ? ' current' : ''}" value="${esc(c.name)}" data-on-click="$channelOpen = el.value; @post('/chat/channel-open')"># ${esc(c.name)}</button></li>
`).join('')}</ul>
</nav>
<main class="main">
<header class="channel-header"><h2># ${esc(current)}</h2></header>
<section class="messages" id="messages">
${messages.map((m) => `<article class="message" id="message-${m.id}">
<div class="message-avatar" aria-hidden="true">${esc(initial(m.nickname))}</div>
<header class="message-header"><span class="message-author">${esc(m.nickname)}</span>
<time class="message-time" datetime="${isoSecond(m.created_ts)}">${isoMinute(m.created_ts)}</time></header>
<p class="message-content">${esc(m.content)}</p>
</article>
`).join('')}</section>
<form class="composer" data-on-submit="@post('/chat/message-send'); $messageSend = ''">
<input name="message" maxlength="500" placeholder="Message #${esc(current)}" data-bind-message-send autocomplete="off" autofocus>
</form>
</main>
</body>
</html>
`;
}

fastify.listen({ host: '127.0.0.1', port: Number(env.PEER_PORT) }).catch((e) => {
  console.error(e);
  process.exit(1);
});
