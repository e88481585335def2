#!/usr/bin/env bash
# Creates the system users that sluice runs as when it is started as root, when they are
# missing: `sluice` (group sluice, no home, no login shell), the user sluiced and its
# workers drop to (supervisor/priv.c).  nginx's and Apache's workers run as Debian's
# www-data.  Not root: nothing to do (everything runs as the caller).  Run by every
# `make deps*` target, so by `make run` and `make test`.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || exit 0
getent group sluice >/dev/null || groupadd --system sluice
if ! getent passwd sluice >/dev/null; then
	useradd --system --gid sluice --home-dir /nonexistent --no-create-home \
	    --shell /usr/sbin/nologin --comment "sluice workers" sluice
	echo "sluice: created the system user sluice (sluiced's workers run as it)" >&2
fi
if ! getent passwd www-data >/dev/null; then
	getent group www-data >/dev/null || groupadd --system www-data
	useradd --system --gid www-data --home-dir /var/www --no-create-home \
	    --shell /usr/sbin/nologin www-data
fi
