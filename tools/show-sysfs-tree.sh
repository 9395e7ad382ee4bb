#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Prints /sys/class/rtrs-server (or DIR) as a tree, with the value of every
# readable attribute, following the class's symlinks into the devices.
set -u
root=${1:-/sys/class/rtrs-server}
if [ ! -d "$root" ]; then
	echo "$root: absent"
	exit 1
fi
echo "$root/"
show() {
	dir=$1 indent=$2
	for entry in "$dir"/*; do
		[ -e "$entry" ] || continue
		name=${entry##*/}
		case "$name" in subsystem|device|power|uevent) continue ;; esac
		if [ -d "$entry" ]; then
			echo "$indent$name/"
			(show "$entry" "$indent    ")
		elif [ -r "$entry" ]; then
			mode=$(stat -c %a "$entry")
			value=$(head -c 200 "$entry" 2>&1 | tr '\n' ' ')
			printf '%s%-12s %s  %s\n' "$indent" "$name" "$mode" "$value"
		fi
	done
}
show "$root" "    "
