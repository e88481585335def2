<?php
// health.php: GET /health of the PHP-FPM peer, {"status":"ok"} without a database.
header('Content-Type: application/json');
echo '{"status":"ok"}';
