"""app.py: the FastAPI peer of sluice's benchmark (uvicorn --workers 2, uvloop, httptools).

Routes, with the same bodies as sluice:
  GET /health                                                  {"status":"ok"}
  GET /rest/v1/artist?select=*&artist_id=eq.N                  (GETSingle)
  GET /rest/v1/album?select=*,track(*,genre(*))&artist_id=eq.N (GETSingleEmbed)
  GET /   the Starcord chat page (chat.html, Jinja) for a random seeded user s_%08d in
          1..PEER_BENCH_SESSIONS (sluice's bench mode): three queries in one transaction.
The databases (Chinook and the chat): PEER_DB_KIND=pg with PEER_PG_HOST (a socket
directory), PEER_PG_PORT, PEER_PG_USER, PEER_PG_DB and PEER_PG_CHAT_DB: psycopg 3's
AsyncConnectionPool of PEER_PG_POOL (8) per worker and database, async endpoints; or
PEER_DB_KIND=sqlite with PEER_DB_PATH and PEER_CHAT_PATH: the standard sqlite3 module, one
connection per worker with a busy timeout, queried in the event loop (reads of a few
hundred microseconds, cheaper than a hop to the thread pool).
"""
import contextlib
import datetime
import os
import random
import re
import sqlite3
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.templating import Jinja2Templates

ENV = os.environ
KIND = ENV.get("PEER_DB_KIND", "sqlite")
SESSIONS = int(ENV.get("PEER_BENCH_SESSIONS", "1"))
ARTIST = re.compile(r"eq\.(\d{1,9})")

app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
templates = Jinja2Templates(directory=str(Path(__file__).parent))
utc = datetime.timezone.utc
templates.env.filters["iso"] = lambda ts: datetime.datetime.fromtimestamp(int(ts), utc).strftime("%Y-%m-%dT%H:%M:%SZ")
templates.env.filters["minute"] = lambda ts: datetime.datetime.fromtimestamp(int(ts), utc).strftime("%Y-%m-%d %H:%M")

SQL_ARTIST = "SELECT artist_id, name FROM artist WHERE artist_id = ?"
SQL_ALBUMS = "SELECT album_id, title, artist_id FROM album WHERE artist_id = ? ORDER BY album_id"
SQL_TRACKS = """SELECT t.track_id, t.name, t.album_id, t.media_type_id, t.genre_id, t.composer,
       t.milliseconds, t.bytes, t.unit_price, g.name AS genre_name
FROM track t LEFT JOIN genre g ON g.genre_id = t.genre_id
WHERE t.album_id IN (SELECT album_id FROM album WHERE artist_id = ?)
ORDER BY t.album_id, t.track_id"""
SQL_NICK = "SELECT nickname FROM users WHERE session_id = ?"
SQL_CHANNELS = """SELECT c.name, CASE WHEN c.id = u.current_channel_id THEN 1 ELSE 0 END AS current
FROM channels c JOIN users u ON u.session_id = ?
JOIN channel_memberships cm ON cm.user_id = u.id
WHERE c.id = cm.channel_id ORDER BY c.id"""
SQL_MESSAGES = """SELECT m.id, u.nickname, m.content, m.created_ts
FROM messages m JOIN users u ON u.id = m.user_id
WHERE m.channel_id = (SELECT current_channel_id FROM users WHERE session_id = ?)
ORDER BY m.created_ts DESC, m.id DESC LIMIT 500"""

if KIND == "pg":
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    class Db:
        """A psycopg 3 pool of PEER_PG_POOL connections to one database."""

        def __init__(self, dbname):
            size = int(ENV.get("PEER_PG_POOL", "8"))
            self.pool = AsyncConnectionPool(
                f"host={ENV['PEER_PG_HOST']} port={ENV['PEER_PG_PORT']} dbname={dbname} user={ENV['PEER_PG_USER']}",
                min_size=size, max_size=size, kwargs={"row_factory": dict_row}, open=False)

        async def query(self, sql, params):
            async with self.pool.connection() as conn:
                cur = await conn.execute(sql.replace("?", "%s"), params)
                return await cur.fetchall()

        @contextlib.asynccontextmanager
        async def read_txn(self):
            """One transaction on one pooled connection; yields q(sql, params) -> rows."""
            async with self.pool.connection() as conn, conn.transaction():
                async def q(sql, params):
                    cur = await conn.execute(sql.replace("?", "%s"), params)
                    return await cur.fetchall()
                yield q

    chinook, chat = Db(ENV["PEER_PG_DB"]), Db(ENV["PEER_PG_CHAT_DB"])

    @app.on_event("startup")
    async def open_pools():
        # Serve only once every connection is up, like the other stacks.
        await chinook.pool.open(wait=True)
        await chat.pool.open(wait=True)
else:
    class Db:
        """One sqlite3 connection per worker, with a busy timeout."""

        def __init__(self, path):
            self.db = sqlite3.connect(path, timeout=5, check_same_thread=False, isolation_level=None)
            self.db.row_factory = lambda cur, row: {d[0]: v for d, v in zip(cur.description, row)}

        async def query(self, sql, params):
            return self.db.execute(sql, params).fetchall()

        @contextlib.asynccontextmanager
        async def read_txn(self):
            self.db.execute("BEGIN")
            try:
                async def q(sql, params):
                    return self.db.execute(sql, params).fetchall()
                yield q
            finally:
                self.db.execute("COMMIT")

    chinook, chat = Db(ENV["PEER_DB_PATH"]), Db(ENV["PEER_CHAT_PATH"])


def parse_artist_id(value: str) -> int:
    m = ARTIST.fullmatch(value)
    if m is None:
        raise HTTPException(400, "artist_id=eq.N is required")
    return int(m.group(1))


@app.get("/health")
async def health():
    return {"status": "ok"}


@app.get("/rest/v1/artist")
async def artist(artist_id: str = ""):
    rows = await chinook.query(SQL_ARTIST, (parse_artist_id(artist_id),))
    return JSONResponse(rows, media_type="application/json; charset=utf-8")


@app.get("/rest/v1/album")
async def album(artist_id: str = ""):
    aid = parse_artist_id(artist_id)
    albums = await chinook.query(SQL_ALBUMS, (aid,))
    if albums:
        by_id = {}
        for a in albums:
            a["track"] = []
            by_id[a["album_id"]] = a
        for t in await chinook.query(SQL_TRACKS, (aid,)):
            name = t.pop("genre_name")
            t["unit_price"] = float(t["unit_price"])
            t["genre"] = None if t["genre_id"] is None else {"genre_id": t["genre_id"], "name": name}
            by_id[t["album_id"]]["track"].append(t)
    return JSONResponse(albums, media_type="application/json; charset=utf-8")


@app.get("/")
async def chat_page(request: Request):
    sid = "s_%08d" % random.randint(1, SESSIONS)
    async with chat.read_txn() as q:
        who = await q(SQL_NICK, (sid,))
        if not who:
            raise HTTPException(500, "bench_sessions exceeds the seeded users")
        channels = await q(SQL_CHANNELS, (sid,))
        messages = await q(SQL_MESSAGES, (sid,))
    messages.reverse()
    current = next((c["name"] for c in channels if c["current"]), "")
    return templates.TemplateResponse("chat.html", {
        "request": request, "nickname": who[0]["nickname"], "current": current,
        "channels": channels, "messages": messages,
    }, headers={"Cache-Control": "no-store"})
