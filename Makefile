# SPDX-License-Identifier: MIT
#
# llmnet: one non-recursive Makefile. Sources are found by folder, so a new
# module needs no edit here; tiers, lab and benchmark rules live in mk/*.mk
# fragments included below (still one make, one dependency graph).
#
#   make            build/llmnet and build/llmnet-agent
#   make check      install what is missing, build, run every test tier
#   make lint       cppcheck and a DEVELOPER=1 build of everything in build/lint
#                   (the first tier of make check; mk/05-lint.mk)
#   make analyze    scan-build over a full rebuild in build/analyze (slow)
#   make asan       unit tests under ASan+UBSan
#   make fuzz       libFuzzer targets (clang)
#   make install    PREFIX=/usr/local DESTDIR=
#   V=1             show commands;  DEVELOPER=1  adds -Werror

VERSION := 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
LIBEXECDIR ?= $(PREFIX)/lib/llmnet

CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -std=gnu11 -Wall -Wextra -Wformat=2 -Wshadow -Wvla -Wstrict-prototypes \
	-Wmissing-prototypes -Wwrite-strings -Wimplicit-fallthrough
ifdef DEVELOPER
WARNINGS += -Werror
endif

BUILD ?= build
ifdef SANITIZE
BUILD := build/san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

ALL_CFLAGS = $(CFLAGS) $(WARNINGS) $(SANFLAGS) -I. -D_GNU_SOURCE -MMD -MP \
	-DLN_VERSION='"$(VERSION)"' $(EXTRA_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS)

ifeq ($(V),1)
Q :=
QUIET_CC =
QUIET_LINK =
QUIET_AR =
else
Q := @
QUIET_CC = @printf '  CC      %s\n' $@;
QUIET_LINK = @printf '  LINK    %s\n' $@;
QUIET_AR = @printf '  AR      %s\n' $@;
endif

# Libraries. The controller links dynamically; the agent links statically
# (see AGENT_STATIC_LIBS) and never links libssh or libyaml. libcurl is not
# linked: the report poster opens it when a report is posted (webhook.c).
LLMNET_LIBS := -lyaml -lssh -ljson-c -lcrypto -lm
# The agent's hashes come from nettle; libcrypto stays out of the static
# agent (agents/link/libnvme_nocrypto.c says why and how).
AGENT_LIBS := -lnvme -ljson-c -lblkid -lnettle -lm
AGENT_STATIC_LIBS := -lnvme -ljson-c -lblkid -lnettle -lm -lpthread -ldl
AGENT_STATIC_ONLY := agents/link/libnvme_nocrypto.c
TEST_LIBS := -lcmocka $(sort $(LLMNET_LIBS) $(AGENT_LIBS))

# Every .c below a folder belongs to that folder's binary or library: a file
# moved within it can never drop out of the build. Probes build on their own
# rules (mk/40-validate.mk).
COMMON_SRC := $(sort $(shell find common -name '*.c'))
ORCH_SRC := $(sort $(shell find orchestrator -name '*.c'))
CMD_SRC := $(sort $(shell find cmd -name '*.c'))
AGENT_MAIN := agents/agent/core/main.c
AGENT_SRC := $(filter-out $(AGENT_MAIN),$(sort $(shell find agents/agent -name '*.c')))
TEST_SRC := $(wildcard tests/unit/test_*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIBLLMNET := $(BUILD)/libllmnet.a
LIBAGENT := $(BUILD)/libagent.a
TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))

# Tiers run by `make check`, in order, as name:seconds (hard limits).
# Fragments append to it.
CHECK_TIERS := unit:600

# The agent is always built: mk/20-agent.mk stops the build when its main
# is missing. A sanitizer build cannot link statically: it builds only the
# -dyn agent.
PROGRAMS := $(BUILD)/llmnet
ifdef SANITIZE
PROGRAMS += $(BUILD)/llmnet-agent-dyn
else
PROGRAMS += $(BUILD)/llmnet-agent $(BUILD)/llmnet-agent-dyn
endif

.PHONY: all check check-tiers deps asan fuzz install clean tier-unit unit-tests FORCE
.DEFAULT_GOAL := all

# --- flags file --------------------------------------------------------------
# $(BUILD)/.flags holds the compiler and every flag a build uses; it is
# rewritten only when they differ from the last build's, and every object
# depends on it, so `make CFLAGS=-O0` or `make DEVELOPER=1` rebuilds what
# it must, and a plain `make` afterwards rebuilds again (git's GIT-CFLAGS).
# Rules that compile and link in one step (tests, probes, bench, fuzz) get
# the dependency below, after the fragments that define them; TRACK_FLAGS
# is set there too.
$(BUILD)/.flags: FORCE
	@mkdir -p $(dir $@)
	@flags='$(subst ','\'',$(TRACK_FLAGS))'; \
	if [ "$$flags" != "$$(cat $@ 2>/dev/null)" ]; then \
		[ ! -f $@ ] || echo '  FLAGS   changed: rebuilding $(BUILD)'; \
		printf '%s\n' "$$flags" > $@; \
	fi
FORCE:
# --- end flags file ----------------------------------------------------------

all: $(PROGRAMS)

$(BUILD)/obj/%.o: %.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIBLLMNET): $(call obj,$(COMMON_SRC) $(ORCH_SRC))
	@mkdir -p $(dir $@)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

$(LIBAGENT): $(call obj,$(AGENT_SRC))
	@mkdir -p $(dir $@)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

$(BUILD)/llmnet: $(call obj,$(CMD_SRC)) $(LIBLLMNET)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LLMNET_LIBS)

# The agent: static, glibc, no NSS. A sanitizer build cannot be static, so
# the -dyn variant of the same objects serves ASan/UBSan runs. What is
# pushed is stripped (it crosses every node's SSH link); its symbols and
# debug information stay here in llmnet-agent.debug, named by a debuglink.
$(BUILD)/llmnet-agent: $(call obj,$(AGENT_MAIN) $(AGENT_SRC) $(COMMON_SRC) $(AGENT_STATIC_ONLY))
	$(QUIET_LINK)$(CC) $(LDFLAGS) -static -o $@ $^ $(AGENT_STATIC_LIBS) && \
		objcopy --only-keep-debug $@ $@.debug && \
		objcopy --strip-all --add-gnu-debuglink=$@.debug $@

$(BUILD)/llmnet-agent-dyn: $(call obj,$(AGENT_MAIN) $(AGENT_SRC) $(COMMON_SRC))
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(AGENT_LIBS)

# A test's own link flags: LDFLAGS_test_NAME. test_buf wraps the allocator
# to look into the blocks a buffer gives back.
LDFLAGS_test_buf := -Wl,--wrap=malloc,--wrap=realloc,--wrap=free
LDFLAGS_test_agent_unkillable := -Wl,--wrap=waitpid

$(BUILD)/tests/%: tests/unit/%.c $(LIBAGENT) $(LIBLLMNET)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -DFIXTURES_DIR='"$(CURDIR)/tests/fixtures"' \
		-DBUILD_DIR='"$(CURDIR)/$(BUILD)"' $(ALL_LDFLAGS) $(LDFLAGS_$*) -o $@ $< \
		$(LIBAGENT) $(LIBLLMNET) $(TEST_LIBS)

unit-tests: $(TESTS)

tier-unit: all unit-tests
	$(Q)tests/unit/run.sh $(BUILD) unit

# `make check` is the README's test command: dependencies first (apt-get,
# only what is missing), then every tier under its hard time limit.
check: deps
	$(Q)$(MAKE) --no-print-directory check-tiers

check-tiers:
	$(Q)scripts/check.sh $(CHECK_TIERS)

deps:
	$(Q)scripts/deps.sh

asan:
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined CC=clang tier-unit

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(LIBEXECDIR)
	install -m 755 $(BUILD)/llmnet $(DESTDIR)$(BINDIR)/llmnet
	$(if $(wildcard $(BUILD)/llmnet-agent),install -m 755 $(BUILD)/llmnet-agent $(DESTDIR)$(LIBEXECDIR)/llmnet-agent)
	install -m 644 docs/llmnet.1 $(DESTDIR)$(MANDIR)/man1/llmnet.1

clean:
	rm -rf build

include $(sort $(wildcard mk/*.mk))

# --- flags file: what it records, and the one-step compile-and-link rules ---
# Expanded once, here, after every fragment: a target-specific flag (the
# agent's objects add one) must not leak into .flags through whichever
# object happens to ask for it first.
TRACK_FLAGS := $(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) SANITIZE=$(SANITIZE) \
	$(foreach v,$(sort $(filter LDFLAGS_test_%,$(.VARIABLES))),$(v)=$($(v)))

# Their recipes use $< or name their sources, so the extra prerequisite
# changes no command.
$(TESTS) $(IO_PROBE) $(GPU_FACTS) $(NCCL_PROBE) $(STANDIN_LIBS) $(NVML_STANDINS) \
	$(FUZZ_DIR)/fuzz_spec $(FUZZ_DIR)/fuzz_answers \
	$(BUILD)/bench/yaml_events $(BUILD)/bench/runstat $(BUILD)/bench/diagnose_bench: \
	$(BUILD)/.flags

-include $(shell find $(BUILD)/obj $(BUILD)/tests -name '*.d' 2>/dev/null)
