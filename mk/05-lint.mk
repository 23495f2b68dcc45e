# SPDX-License-Identifier: MIT
# lint and analyze: static checks kept apart from the normal build.
#
#   make lint         cppcheck, then a DEVELOPER=1 (-Werror) build of
#                     everything in build/lint, a check that every C source
#                     is built, the size limits and no call circle between
#                     files, read from build/lint's objects (scripts/lint.sh
#                     runs scripts/sizes.sh and scripts/callcircles.sh); the
#                     `lint` tier of make check, run first
#   make analyze      scan-build over a full rebuild in build/analyze; fails
#                     on any report (slow: not part of make check)
#
# cppcheck, scan-build and nm come from deps/lint.list (make deps).

.PHONY: lint tier-lint lint-everything analyze

LINT_BUILD := build/lint
ANALYZE_BUILD := build/analyze

# Everything the tree builds, for the -Werror build: programs and probes,
# unit tests (and the stand-in libraries they load), the fuzzer, every
# benchmark program, and the probes that travel as source, compiled here as
# their launcher's mpicc would.
LINT_BENCH := $(patsubst %.c,$(BUILD)/bench/%,$(notdir $(wildcard bench/*/*.c)))
LINT_MPI_PROBES := $(patsubst agents/probes/%.c,$(BUILD)/lint-mpi/%.o,\
	agents/probes/mpi_probe.c agents/probes/nccl_mpi_probe.c)

lint-everything: all unit-tests fuzz $(LINT_BENCH) $(LINT_MPI_PROBES)

$(BUILD)/lint-mpi/%.o: agents/probes/%.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(QUIET_CC)mpicc $(CFLAGS) $(WARNINGS) -D_GNU_SOURCE -c -o $@ $<

lint:
	+$(Q)MAKE="$(MAKE)" scripts/lint.sh $(LINT_BUILD)

tier-lint:
	+$(Q)MAKE="$(MAKE)" scripts/lint.sh $(LINT_BUILD) $(BUILD)/check/lint.counts

# First of make check's tiers: it is quick and names what the others would
# trip over.
CHECK_TIERS := lint:900 $(CHECK_TIERS)

analyze:
	+$(Q)MAKE="$(MAKE)" ANALYZE_CC="$(CC)" scripts/analyze.sh $(ANALYZE_BUILD)
