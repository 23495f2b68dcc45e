# SPDX-License-Identifier: MIT
#
# Hostile node for the loopback cluster (tests/cluster/lib.sh): node I's
# sshd runs every command through tests/cluster/relay.py (ForceCommand),
# which runs the real command and rewrites its answers by the rules the
# test gives. Without rules the relay is honest: the control, which must
# change nothing.
#
#   . tests/cluster/lib.sh; . tests/cluster/relay.sh
#   relay_node DIR I [RULE...]   restart node I behind the relay (with
#                                $RELAY_USRBIN laid over /usr/bin, as
#                                cluster_start_node's third argument); each RULE
#                                is one line of NODE/relay.rules:
#       'hang REGEX'     a command matching REGEX (the SFTP subsystem is
#                        "internal-sftp") reads its input and never answers
#       'cut N REGEX'    a command matching REGEX gets only N bytes of its
#                        input, then the end of it; the relay answers nothing
#       'version HASH'   the agent's `version` answers report sha256 HASH
#       'facts FILE'     the agent's `facts` answer is FILE's bytes, raw
#   relay_rules DIR I [RULE...]  change the rules; no restart (each new SSH
#                                command reads them)
#   relay_clear DIR I            node I back to a plain sshd; ends every
#                                relay process this node started (by PID)
#   relay_count DIR I            how many relay processes node I started
#
# Examples:
#   relay_node "$C" 3 "version $(printf '0%.0s' {1..64})" 'hang ^internal-sftp$'
#   relay_node "$C" 2 "facts $C/deep.json"
#   relay_node "$C" 2                       # honest relay
# Needs python3 (the spec tier uses it too).

RELAY_PY=${RELAY_PY:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/relay.py}

relay_rules() {
	local n=$1/node$2 rule
	shift 2
	: > "$n/relay.rules.tmp"
	for rule in "$@"; do printf '%s\n' "$rule" >> "$n/relay.rules.tmp"; done
	mv -f "$n/relay.rules.tmp" "$n/relay.rules"
}

relay_node() {
	local dir=$1 i=$2 n=$1/node$2
	shift 2
	relay_rules "$dir" "$i" "$@"
	cluster_stop_node "$dir" "$i"
	cluster_write_sshd_config "$dir" "$i"
	echo "ForceCommand python3 $RELAY_PY $n" >> "$n/sshd_config"
	cluster_start_node "$dir" "$i" "${RELAY_USRBIN:-}"
}

relay_kill_all() {
	local n=$1/node$2 pid
	[ -f "$n/relay.pids" ] || return 0
	while read -r pid; do
		# only a PID that is still one of this node's relays
		if [ -r "/proc/$pid/cmdline" ] &&
		   tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$RELAY_PY $n"; then
			kill "$pid" 2>/dev/null || true
		fi
	done < "$n/relay.pids"
}

relay_clear() {
	local dir=$1 i=$2 n=$1/node$2
	cluster_stop_node "$dir" "$i"
	relay_kill_all "$dir" "$i"
	rm -f "$n/relay.rules" "$n/relay.pids"
	cluster_write_sshd_config "$dir" "$i"
	cluster_start_node "$dir" "$i"
}

relay_count() {
	[ -f "$1/node$2/relay.pids" ] && wc -l < "$1/node$2/relay.pids" || echo 0
}
