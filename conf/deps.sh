#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are not installed yet.
# Runs apt-get through sudo when not root; does nothing (and needs no network) when
# everything is already there.  An installed nginx of any flavour satisfies nginx-light.
set -euo pipefail

missing=()
for p in "$@"; do
	if [ "$p" = nginx-light ] && [ -x /usr/sbin/nginx ]; then
		continue
	fi
	# A Node.js from elsewhere (NodeSource's nodejs bundles npm) satisfies npm; asking
	# apt for Debian's npm next to it would conflict.
	if [ "$p" = npm ] && command -v npm >/dev/null; then
		continue
	fi
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "sluice: installing ${missing[*]}" >&2
sudo=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "sluice: need root or sudo to install ${missing[*]}" >&2; exit 1; }
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# The packages' own start-up scripts would start a system nginx on port 80 and a system
# PostgreSQL cluster (and Apache); sluice runs its own, so tell invoke-rc.d not to start
# services.
policy=/usr/sbin/policy-rc.d
created_policy=
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
	$sudo chmod 755 "$policy"
	created_policy=1
fi
rc=0
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" || rc=$?
[ -n "$created_policy" ] && $sudo rm -f "$policy"
exit $rc
