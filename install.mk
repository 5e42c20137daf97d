# install.mk: where livesquash's files go on a system, in one place: `make install`
# (and `make install-dkms`; debian/rules calls both), the man pages (scdoc), and the
# Debian packages (`make deb`) with their tests. Included by the top-level Makefile;
# debian/rules runs it alone (make -f install.mk), in a copy of the sources.
#
# Installed names: the checkout's iso/NAME is the command livesquash-NAME (a link in
# PREFIX/bin to PREFIX/lib/livesquash/NAME, where its helpers are beside it: the
# tools find them through their own real path, from a checkout and installed alike).

SHELL := /bin/bash
TOP ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(TOP)/build

PREFIX ?= /usr## install: the tools go to PREFIX/bin (livesquash-NAME), their helpers to PREFIX/lib/livesquash, the man pages to PREFIX/share/man
DESTDIR ?= ## install: a folder every installed path is put under (packaging: debian/tmp); empty = this system
DRACUT_MODULES_DIR ?= /usr/lib/dracut/modules.d## install: where 90livesquash goes (the one folder dracut reads modules from, whatever PREFIX is)

# the version: the driver's, which its banner prints (fs-squashfs/internal.h, also
# read by kernel-config/mkpatches.sh): the packages and DKMS take it from there
LS_VERSION := $(shell sed -n 's/^\#define LIVESQUASH_VERSION[[:space:]]*"\(.*\)"/\1/p' $(TOP)/fs-squashfs/internal.h)
LS_TOOLS := remaster check-iso mkpersist mknetboot signiso sbkeys
# what the tools source or run from their own folder
LS_HELPERS := tool-lib.sh qemu-lib.sh accel.sh sb-files.sh boot-sort.sh
LS_LIBDIR := $(PREFIX)/lib/livesquash
LS_MANS := $(LS_TOOLS:%=livesquash-%.1) livesquash.cmdline.7
LS_INST := $(BUILD)/install
LS_LOOPSWAP := $(LS_INST)/livesquash-loopswap
LS_MAN_OUT := $(LS_MANS:%=$(LS_INST)/man/%)
LS_DKMS_SRC := /usr/src/livesquash-$(LS_VERSION)

# the helper of rd.live.ram=background; CFLAGS, CPPFLAGS, LDFLAGS from the caller
# (dpkg-buildflags in debian/rules)
CFLAGS ?= -O2 -g0
$(LS_LOOPSWAP): $(TOP)/dracut-module/90livesquash/livesquash-loopswap.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Wall -Wextra -Werror $(CFLAGS) $(LDFLAGS) -o $@ $<

$(LS_INST)/man/%.1: $(TOP)/iso/man/%.1.scd
	@mkdir -p $(@D)
	@command -v scdoc > /dev/null || { echo "man: scdoc missing: run 'make deps'" >&2; exit 1; }
	$(if $(SOURCE_DATE_EPOCH),SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) )scdoc < $< > $@.tmp && mv $@.tmp $@
$(LS_INST)/man/%.7: $(TOP)/dracut-module/%.7.scd
	@mkdir -p $(@D)
	@command -v scdoc > /dev/null || { echo "man: scdoc missing: run 'make deps'" >&2; exit 1; }
	$(if $(SOURCE_DATE_EPOCH),SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) )scdoc < $< > $@.tmp && mv $@.tmp $@

.PHONY: man install-build install install-dkms deb check-man check-packages
man: $(LS_MAN_OUT) ## make the man pages (scdoc: iso/man/*.scd, dracut-module/*.scd) into build/install/man (man -l to read one)

install-build: $(LS_LOOPSWAP) $(LS_MAN_OUT)

install: install-build ## install the tools as PREFIX/bin/livesquash-NAME, their helpers in PREFIX/lib/livesquash, the man pages, and the dracut module in DRACUT_MODULES_DIR/90livesquash (loopswap compiled), under DESTDIR; nothing installed refers to this checkout
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LS_LIBDIR) $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man7 $(DESTDIR)$(DRACUT_MODULES_DIR)/90livesquash
	for t in $(LS_TOOLS); do \
		install -m 0755 $(TOP)/iso/$$t $(DESTDIR)$(LS_LIBDIR)/$$t && \
		ln -sfn ../lib/livesquash/$$t $(DESTDIR)$(PREFIX)/bin/livesquash-$$t || exit 1; \
	done
	install -m 0755 $(LS_HELPERS:%=$(TOP)/iso/%) $(DESTDIR)$(LS_LIBDIR)/
	install -m 0644 $(filter %.1,$(LS_MAN_OUT)) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 $(filter %.7,$(LS_MAN_OUT)) $(DESTDIR)$(PREFIX)/share/man/man7/
	install -m 0755 $(TOP)/dracut-module/90livesquash/*.sh $(LS_LOOPSWAP) $(DESTDIR)$(DRACUT_MODULES_DIR)/90livesquash/

install-dkms: ## install the driver's source for DKMS under DESTDIR: /usr/src/livesquash-VERSION with its dkms.conf (dkms builds it as squashfs.ko into each kernel's updates/dkms)
	install -d $(DESTDIR)$(LS_DKMS_SRC)
	install -m 0644 $(TOP)/fs-squashfs/Makefile $(wildcard $(TOP)/fs-squashfs/*.[ch]) $(DESTDIR)$(LS_DKMS_SRC)/
	install -m 0755 $(TOP)/debian/dkms-make.sh $(DESTDIR)$(LS_DKMS_SRC)/dkms-make.sh
	sed 's/#MODULE_VERSION#/$(LS_VERSION)/' $(TOP)/debian/livesquash-dkms.dkms > $(DESTDIR)$(LS_DKMS_SRC)/dkms.conf
	chmod 0644 $(DESTDIR)$(LS_DKMS_SRC)/dkms.conf

deb: ## the Debian packages livesquash-tools, dracut-livesquash and livesquash-dkms (dpkg-buildpackage -us -uc -b in a copy of the sources, build/deb/livesquash-VERSION) into build/deb/, then lintian on them
	@bash $(TOP)/debian/make-deb.sh

check-man: ## each tool's --help and man page name the same options, and the dracut options the module reads are the ones livesquash.cmdline(7) documents (TAP)
	@bash $(TOP)/boot-tests/packages/man.sh

check-packages: ## the packages proven by installing them (TAP, as root, no QEMU): make deb, a Debian 13 chroot (debootstrap, cached in build/packages/) with the three .debs installed by apt-get, DKMS builds squashfs.ko for its linux-headers-amd64, its dracut builds an initramfs with 90livesquash, remove and purge leave nothing
	@bash $(TOP)/boot-tests/packages/host.sh
