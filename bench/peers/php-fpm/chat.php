<?php
// chat.php: GET / of the PHP-FPM peer, the Starcord chat page as sluice's chat_page
// renders it in bench mode: the user is a uniformly random seeded one (s_%08d in
// 1..PEER_BENCH_SESSIONS), and one read transaction runs the same three queries (the
// nickname, the user's channels with the current one flagged, the current channel's last
// 500 messages with their authors).  The page is chat.html.php, PHP's own templating,
// every value escaped with htmlspecialchars.

require __DIR__ . '/db.php';

$sid = sprintf('s_%08d', random_int(1, (int)getenv('PEER_BENCH_SESSIONS')));
$db = peer_db('chat');
$db->beginTransaction();
$st = $db->prepare('SELECT nickname FROM users WHERE session_id = ?');
$st->execute([$sid]);
$nickname = $st->fetchColumn();
if ($nickname === false) {
    $db->rollBack();
    peer_fail(500, 'internal', 'bench_sessions exceeds the seeded users');
    return;
}
$st = $db->prepare(
    'SELECT c.name, CASE WHEN c.id = u.current_channel_id THEN 1 ELSE 0 END AS current
     FROM channels c JOIN users u ON u.session_id = ?
     JOIN channel_memberships cm ON cm.user_id = u.id
     WHERE c.id = cm.channel_id ORDER BY c.id');
$st->execute([$sid]);
$channels = $st->fetchAll();
$st = $db->prepare(
    'SELECT m.id, u.nickname, m.content, m.created_ts
     FROM messages m JOIN users u ON u.id = m.user_id
     WHERE m.channel_id = (SELECT current_channel_id FROM users WHERE session_id = ?)
     ORDER BY m.created_ts DESC, m.id DESC LIMIT 500');
$st->execute([$sid]);
$messages = array_reverse($st->fetchAll());
$db->commit();

$current = '';
foreach ($channels as $c) {
    if ($c['current']) {
        $current = $c['name'];
    }
}
header('Content-Type: text/html; charset=utf-8');
header('Cache-Control: no-store');
require __DIR__ . '/chat.html.php';
