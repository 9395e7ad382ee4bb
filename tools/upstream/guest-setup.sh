# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest scripts of tools/upstream and tools/rtrs-client (runs
# in the QEMU guest): Soft-RoCE on dummy interfaces, and loading a server.

# rxe_up: dummy0 (10.77.0.1, 10.77.0.2, fd00::1, fd00::2) on rxe0, dummy1
# (10.78.0.1, 10.78.0.2) on rxe1, and the userspace RDMA CM.
rxe_up() {
	modprobe rdma_rxe && modprobe rdma_ucm && modprobe ib_uverbs || return 1
	local i
	for i in 0 1; do
		ip link add dummy$i type dummy || return 1
		ip addr add 10.$((77 + i)).0.1/24 dev dummy$i
		ip addr add 10.$((77 + i)).0.2/24 dev dummy$i
		ip link set dummy$i up
		rdma link add rxe$i type rxe netdev dummy$i || return 1
	done
	ip -6 addr add fd00::1/64 dev dummy0 nodad
	ip -6 addr add fd00::2/64 dev dummy0 nodad
	# The rxe GID table follows the addresses; give it a moment.
	sleep 1
}

# insmod_deps KO [PARAMS]: modprobe what KO depends on, then insmod it.
insmod_deps() {
	local ko=$1 dep
	shift
	for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
		case $dep in rtrs[-_]core|rtrs[-_]server) continue ;; esac
		modprobe "$dep" || { echo "cannot modprobe $dep"; return 1; }
	done
	insmod "$ko" "$@"
}

# server_up upstream DIR: DIR/src/rtrs/{rtrs-core,rtrs-server}.ko and
#   DIR/src/rnbd/rnbd-server.ko (listens on 1234), from build-peers.sh.
# server_up ours DIR: DIR/rtrs-server.ko and DIR/rtrs-null.ko, from
#   tools/build-module.sh.
server_up() {
	case $1 in
	upstream)
		insmod_deps "$2/src/rtrs/rtrs-core.ko" &&
			insmod_deps "$2/src/rtrs/rtrs-server.ko" &&
			insmod_deps "$2/src/rnbd/rnbd-server.ko" ;;
	ours)
		insmod_deps "$2/rtrs-server.ko" && insmod_deps "$2/rtrs-null.ko" ;;
	*) echo "server_up: upstream or ours, not '$1'"; return 1 ;;
	esac
}

server_down() {
	case $1 in
	upstream) rmmod rnbd_server rtrs_server rtrs_core ;;
	ours) rmmod rtrs_null rtrs_server ;;
	esac
}
