# tests/lib/netns.sh: a private network of hosts made of Linux network namespaces, for the
# multi-host test (tests/integration/test_multihost.sh) and the multihost benchmark suite
# (bench/suites/multihost.sh).  Sourced, not run.
#
# Every namespace is named NETNS_PREFIX (slmh<pid>-) + a host name, so that one run never
# addresses another's (or anything else's) namespaces.  A switch namespace (NETNS_PREFIX sw)
# holds a bridge; each host gets a veth pair whose one end is its eth0 and whose other end
# is a port of that bridge, with the address 10.231.NETNS_NET.X/24.  Nothing is created or
# changed in the namespace the caller runs in: no links, no addresses, no routes.
#
#   netns_usable                 0 when this process can make namespaces (root, ip netns),
#                                else 1 with the reason in NETNS_WHY
#   netns_init                   picks NETNS_PREFIX and NETNS_NET, makes the switch
#   netns_host NAME LAST_OCTET   makes host NAME at 10.231.NETNS_NET.LAST_OCTET
#   netns_addr NAME              prints the address of host NAME
#   netns_run NAME CMD...        runs CMD in host NAME's namespace
#   netns_down                   kills every process left in the run's namespaces (by
#                                the pids `ip netns pids` gives for them) and deletes them
#   netns_pg_bin                 prints the newest /usr/lib/postgresql/N/bin

NETNS_PREFIX=
NETNS_NET=
NETNS_HOSTS=()
declare -A NETNS_ADDRS=()

netns_usable() {
	NETNS_WHY=
	if [ "$(id -u)" -ne 0 ]; then
		NETNS_WHY="not root (network namespaces need CAP_SYS_ADMIN)"
		return 1
	fi
	if ! command -v ip >/dev/null 2>&1; then
		NETNS_WHY="no ip command (apt-get install iproute2)"
		return 1
	fi
	local probe="slmhprobe$$"
	if ! ip netns add "$probe" 2>/dev/null; then
		NETNS_WHY="ip netns add failed (no namespace support here)"
		return 1
	fi
	if ! ip -n "$probe" link add vprobe type veth peer name vprobe2 2>/dev/null; then
		ip netns del "$probe" 2>/dev/null
		NETNS_WHY="cannot make veth pairs in a namespace"
		return 1
	fi
	ip netns del "$probe"
	return 0
}

netns_init() {
	NETNS_PREFIX="slmh$$-"
	NETNS_NET=$(($$ % 250 + 1))
	ip netns add "${NETNS_PREFIX}sw" || return 1
	ip -n "${NETNS_PREFIX}sw" link set lo up &&
	ip -n "${NETNS_PREFIX}sw" link add br0 type bridge &&
	ip -n "${NETNS_PREFIX}sw" link set br0 up
}

netns_host() {
	local name=$1 ns="${NETNS_PREFIX}$1" addr="10.231.$NETNS_NET.$2"
	ip netns add "$ns" || return 1
	NETNS_HOSTS+=("$name")
	NETNS_ADDRS[$name]=$addr
	ip -n "${NETNS_PREFIX}sw" link add "v-$name" type veth peer name eth0 netns "$ns" &&
	ip -n "${NETNS_PREFIX}sw" link set "v-$name" master br0 &&
	ip -n "${NETNS_PREFIX}sw" link set "v-$name" up &&
	ip -n "$ns" link set lo up &&
	ip -n "$ns" addr add "$addr/24" dev eth0 &&
	ip -n "$ns" link set eth0 up
}

netns_addr() {
	echo "${NETNS_ADDRS[$1]}"
}

netns_run() {
	local ns="${NETNS_PREFIX}$1"
	shift
	ip netns exec "$ns" "$@"
}

netns_down() {
	local h ns pids
	[ -n "$NETNS_PREFIX" ] || return 0
	for h in "${NETNS_HOSTS[@]}" sw; do
		ns="${NETNS_PREFIX}$h"
		[ -e "/run/netns/$ns" ] || continue
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	done
	# Processes die asynchronously; a namespace goes once its last one has.
	sleep 0.3
	for h in "${NETNS_HOSTS[@]}" sw; do
		ns="${NETNS_PREFIX}$h"
		[ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	NETNS_HOSTS=()
	NETNS_PREFIX=
}

netns_pg_bin() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -x "$d/pg_ctl" ] && echo "$d"
}
