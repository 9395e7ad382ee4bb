# SPDX-License-Identifier: GPL-2.0
# Convenience wrapper; the build itself is the standard out-of-tree one:
#   make -C /lib/modules/<version>/build M=$PWD modules
# KVER picks the kernel (default: the running one if its headers exist,
# otherwise the newest installed headers); KDIR overrides the build folder.
# RTRS_TEST_BUILD=1 builds the test variant (see Kbuild).

KVER ?= $(shell v=$$(uname -r); if [ -d /lib/modules/$$v/build ]; then echo $$v; \
	else ls -1 /lib/modules 2>/dev/null | while read k; do \
	[ -d /lib/modules/$$k/build ] && echo $$k; done | sort -V | tail -n 1; fi)
KDIR ?= /lib/modules/$(KVER)/build

all: modules

modules modules_install clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $@

.PHONY: all modules modules_install clean
