<?php
// chat.html.php: the chat page's template (included by chat.php), the markup of sluice's
// handlers/chat_page.html in PHP's own templating.
function h(string $s): string { return htmlspecialchars($s, ENT_QUOTES); }
// The avatar's letter: the nickname's first character, whole if it is multi-byte.
function initial(string $s): string { return preg_match('/^./su', $s, $m) ? $m[0] : ''; }
?>
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Starcord · #<?= h($current) ?></title>
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
<input id="nickname" name="nickname" maxlength="32" data-bind-nickname-set value="<?= h($nickname) ?>">
<div class="error" data-text="$_nicknameSetError"></div>
</form>
<form class="channel-open" data-on-submit="@post('/chat/channel-open'); $channelOpen = ''">
<input name="channel" maxlength="32" placeholder="Open a channel" data-bind-channel-open>
</form>
<ul class="channels">
<?php foreach ($channels as $c): ?><li><button class="channel<?= $c['current'] ? ' current' : '' ?>" value="<?= h($c['name']) ?>" data-on-click="$channelOpen = el.value; @post('/chat/channel-open')"># <?= h($c['name']) ?></button></li>
<?php endforeach ?></ul>
</nav>
<main class="main">
<header class="channel-header"><h2># <?= h($current) ?></h2></header>
<section class="messages" id="messages">
<?php foreach ($messages as $m): $ts = (int)(float)$m['created_ts'] ?><article class="message" id="message-<?= $m['id'] ?>">
<div class="message-avatar" aria-hidden="true"><?= h(initial($m['nickname'])) ?></div>
<header class="message-header"><span class="message-author"><?= h($m['nickname']) ?></span>
<time class="message-time" datetime="<?= gmdate('Y-m-d\TH:i:s\Z', $ts) ?>"><?= gmdate('Y-m-d H:i', $ts) ?></time></header>
<p class="message-content"><?= h($m['content']) ?></p>
</article>
<?php endforeach ?></section>
<form class="composer" data-on-submit="@post('/chat/message-send'); $messageSend = ''">
<input name="message" maxlength="500" placeholder="Message #<?= h($current) ?>" data-bind-message-send autocomplete="off" autofocus>
</form>
</main>
</body>
</html>
