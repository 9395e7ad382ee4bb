# SPDX-License-Identifier: GPL-2.0
# The Debian releases the tests target, and what each one's root holds
# (sourced by the tools/roots scripts; sh).
#
# rtrs_release_series RELEASE: the kernel series that release ships (its
# linux-image-amd64), which names its tests (guest.abi.5.10, ...).
# bookworm is the host's own release: its root is the host's /.
rtrs_release_series() {
	case $1 in
	bullseye) echo 5.10 ;;
	bookworm) echo 6.1 ;;
	trixie) echo 6.12 ;;
	sid) echo 7.2 ;;
	*) return 1 ;;
	esac
}

# rtrs_series_release SERIES: the other way round.
rtrs_series_release() {
	case $1 in
	5.10) echo bullseye ;;
	6.1) echo bookworm ;;
	6.12) echo trixie ;;
	7.2) echo sid ;;
	*) return 1 ;;
	esac
}

rtrs_releases="bookworm bullseye trixie sid"

# Where the roots are kept between runs.
rtrs_roots_dir() {
	echo "${RTRS_ROOTS_DIR:-${HOME:-/root}/.cache/rtrs-roots}"
}

# rtrs_release_root RELEASE: the root folder of RELEASE ("/" for the host's).
rtrs_release_root() {
	if [ "$1" = bookworm ]; then
		echo /
	else
		echo "$(rtrs_roots_dir)/$1"
	fi
}
