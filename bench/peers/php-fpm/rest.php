<?php
// rest.php: the two Chinook reads of the PostgREST benchmark that the PHP-FPM peer
// answers, with the same JSON as sluice's bin/rest:
//   GET /rest/v1/artist?select=*&artist_id=eq.N                   (GETSingle)
//   GET /rest/v1/album?select=*,track(*,genre(*))&artist_id=eq.N  (GETSingleEmbed)
// Only these shapes: select= is taken as written above, artist_id=eq.N is required.
// Anything else is a 404 or 400.

require __DIR__ . '/db.php';

$table = basename(parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH));
$filter = $_GET['artist_id'] ?? '';
if (!preg_match('/^eq\.(\d{1,9})$/', $filter, $m)) {
    peer_fail(400, 'bad_request', 'artist_id=eq.N is required');
    return;
}
$artist_id = (int)$m[1];
$db = peer_db('chinook');

if ($table === 'artist') {
    $st = $db->prepare('SELECT artist_id, name FROM artist WHERE artist_id = ?');
    $st->execute([$artist_id]);
    $rows = $st->fetchAll();
} elseif ($table === 'album') {
    $st = $db->prepare('SELECT album_id, title, artist_id FROM album WHERE artist_id = ? ORDER BY album_id');
    $st->execute([$artist_id]);
    $rows = [];
    $by_album = [];
    foreach ($st->fetchAll() as $album) {
        $album['track'] = [];
        $rows[] = $album;
        $by_album[$album['album_id']] = count($rows) - 1;
    }
    if ($rows) {
        $st = $db->prepare(
            'SELECT t.track_id, t.name, t.album_id, t.media_type_id, t.genre_id, t.composer,
                    t.milliseconds, t.bytes, t.unit_price, g.name AS genre_name
             FROM track t LEFT JOIN genre g ON g.genre_id = t.genre_id
             WHERE t.album_id IN (SELECT album_id FROM album WHERE artist_id = ?)
             ORDER BY t.album_id, t.track_id');
        $st->execute([$artist_id]);
        foreach ($st->fetchAll() as $t) {
            // PostgreSQL's numeric arrives as a string: the JSON has a number.
            $t['unit_price'] = (float)$t['unit_price'];
            $t['genre'] = $t['genre_id'] === null ? null
                : ['genre_id' => $t['genre_id'], 'name' => $t['genre_name']];
            unset($t['genre_name']);
            $rows[$by_album[$t['album_id']]]['track'][] = $t;
        }
    }
} else {
    peer_fail(404, 'not_found', 'no such table');
    return;
}
header('Content-Type: application/json; charset=utf-8');
echo json_encode($rows, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
