# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest scripts of tools/upstream and tools/rtrs-client (runs
# in the QEMU guest): Soft-RoCE on dummy interfaces, and loading a server.

# rxe_up (the project's test network) and insmod_deps KO [PARAMS] (modprobe
# what KO depends on, then insmod it): test/guest/lib.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../../test/guest/lib.sh"

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
