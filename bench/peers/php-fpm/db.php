<?php
// db.php: the PDO connection of the PHP-FPM peer (included by rest.php and chat.php).
//
// The pool's environment names the two databases, Chinook and the chat: PEER_DB_KIND=sqlite
// with PEER_DB_PATH and PEER_CHAT_PATH, or PEER_DB_KIND=pg with PEER_PG_HOST (a socket
// directory), PEER_PG_PORT, PEER_PG_USER, PEER_PG_DB and PEER_PG_CHAT_DB.  PEER_PERSISTENT=1 (the tuned pool) keeps one connection per child across
// requests, as production PHP does; the default pool connects per request, PHP's default.
// SQLite gets a busy timeout: without one, a child opening the file while another holds a
// lock answers "database is locked" instead of waiting.

function peer_db(string $name): PDO
{
    $opts = [
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        PDO::ATTR_DEFAULT_FETCH_MODE => PDO::FETCH_ASSOC,
        PDO::ATTR_PERSISTENT => getenv('PEER_PERSISTENT') === '1',
    ];
    if (getenv('PEER_DB_KIND') === 'sqlite') {
        $opts[PDO::ATTR_TIMEOUT] = 5;
        return new PDO('sqlite:' . getenv($name === 'chat' ? 'PEER_CHAT_PATH' : 'PEER_DB_PATH'), null, null, $opts);
    }
    $dsn = sprintf('pgsql:host=%s;port=%s;dbname=%s', getenv('PEER_PG_HOST'),
        getenv('PEER_PG_PORT'), getenv($name === 'chat' ? 'PEER_PG_CHAT_DB' : 'PEER_PG_DB'));
    return new PDO($dsn, getenv('PEER_PG_USER'), null, $opts);
}

function peer_fail(int $status, string $code, string $message): void
{
    http_response_code($status);
    header('Content-Type: application/json; charset=utf-8');
    echo json_encode(['code' => $code, 'message' => $message, 'details' => null, 'hint' => null]);
}
