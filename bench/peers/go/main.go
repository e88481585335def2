// main.go: the compiled peer of sluice's benchmark, Go's net/http listening on
// 127.0.0.1:PEER_PORT behind the benchmark's nginx, built from Debian's Go packages
// (golang-go, golang-github-jackc-pgx-v4-dev, golang-github-mattn-go-sqlite3-dev) in GOPATH
// mode by bench/suites/peers.sh: nothing is fetched.
//
// Routes, with the same bodies as sluice:
//
//	GET /health                                  {"status":"ok"}
//	GET /rest/v1/artist?select=*&artist_id=eq.N  (GETSingle) [{"artist_id":N,"name":"..."}]
//
// and 400 with a JSON error for a malformed artist_id, 404 for anything else (the suite
// reports GETSingleEmbed and the chat page as n/a for this peer).  The database:
// PEER_DB_KIND=sqlite with PEER_DB_PATH (go-sqlite3, database/sql's pool of PEER_SQLITE_CONNS
// (2 x GOMAXPROCS) read connections, a prepared statement, WAL as seeded) or PEER_DB_KIND=pg
// with PEER_PG_HOST (a socket directory), PEER_PG_PORT, PEER_PG_USER and PEER_PG_DB (pgx v4's
// pgxpool of PEER_PG_POOL (8) connections; statements are prepared and cached by pgx).
// One process: the Go runtime spreads the handlers over every CPU it may use.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"

	"github.com/jackc/pgx/v4/pgxpool"
	_ "github.com/mattn/go-sqlite3"
)

type artist struct {
	ArtistID int64   `json:"artist_id"`
	Name     *string `json:"name"`
}

// One lookup over either back end: the artist rows for an id.
type store interface {
	artists(ctx context.Context, id int64) ([]artist, error)
}

type sqliteStore struct{ st *sql.Stmt }

func (s sqliteStore) artists(ctx context.Context, id int64) ([]artist, error) {
	rows, err := s.st.QueryContext(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []artist{}
	for rows.Next() {
		var a artist
		if err := rows.Scan(&a.ArtistID, &a.Name); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

type pgStore struct{ pool *pgxpool.Pool }

func (s pgStore) artists(ctx context.Context, id int64) ([]artist, error) {
	rows, err := s.pool.Query(ctx, "SELECT artist_id, name FROM artist WHERE artist_id = $1", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []artist{}
	for rows.Next() {
		var a artist
		var aid int32
		if err := rows.Scan(&aid, &a.Name); err != nil {
			return nil, err
		}
		a.ArtistID = int64(aid)
		out = append(out, a)
	}
	return out, rows.Err()
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func open() (store, error) {
	if os.Getenv("PEER_DB_KIND") == "sqlite" {
		db, err := sql.Open("sqlite3", "file:"+os.Getenv("PEER_DB_PATH")+"?mode=ro&_busy_timeout=5000")
		if err != nil {
			return nil, err
		}
		n := envInt("PEER_SQLITE_CONNS", 2*runtime.GOMAXPROCS(0))
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
		st, err := db.Prepare("SELECT artist_id, name FROM artist WHERE artist_id = ?")
		if err != nil {
			return nil, err
		}
		return sqliteStore{st}, nil
	}
	cfg, err := pgxpool.ParseConfig(fmt.Sprintf("host=%s port=%s user=%s dbname=%s",
		os.Getenv("PEER_PG_HOST"), os.Getenv("PEER_PG_PORT"), os.Getenv("PEER_PG_USER"),
		os.Getenv("PEER_PG_DB")))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(envInt("PEER_PG_POOL", 8))
	pool, err := pgxpool.ConnectConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return pgStore{pool}, nil
}

var artistID = regexp.MustCompile(`^eq\.([0-9]{1,9})$`)

// writeJSON writes v as sluice does: no HTML escaping, no trailing newline.
func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, "{}", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func main() {
	db, err := open()
	if err != nil {
		log.Fatalf("go peer: database: %v", err)
	}
	health := []byte(`{"status":"ok"}`)
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(health)
	})
	mux.HandleFunc("/rest/v1/artist", func(w http.ResponseWriter, r *http.Request) {
		m := artistID.FindStringSubmatch(r.URL.Query().Get("artist_id"))
		if m == nil {
			writeJSON(w, http.StatusBadRequest, map[string]interface{}{"code": "bad_request",
				"message": "artist_id=eq.N is required", "details": nil, "hint": nil})
			return
		}
		id, _ := strconv.ParseInt(m[1], 10, 64)
		rows, err := db.artists(r.Context(), id)
		if err != nil {
			log.Printf("go peer: %v", err)
			writeJSON(w, http.StatusInternalServerError, map[string]interface{}{"code": "internal",
				"message": "database error", "details": nil, "hint": nil})
			return
		}
		writeJSON(w, http.StatusOK, rows)
	})
	addr := "127.0.0.1:" + os.Getenv("PEER_PORT")
	log.Fatal((&http.Server{Addr: addr, Handler: mux}).ListenAndServe())
}
