# SPDX-License-Identifier: MIT
#
# The real-kernel lab: QEMU guests under software emulation (docs/lab.md).
#
#   make lab-image        build the guest image (cached in ~/.cache/llmnet-lab)
#   make lab-up [N=3]     boot N guests (2..4); make lab-down stops them
#   KERNEL=6.12|6.1       the guest image: Debian 13's 6.12 with systemd
#                         (the default) or Debian 12's 6.1
#   make e2e [N=3] [SCENARIOS="lab agent"] [KEEP=1]
#                         end-to-end scenarios against one lab boot
#   make e2e QUICK=1      the developer subset: agent and controller on 3
#                         guests (no smoke test, no validate)
#   make demo             deps, build, lab, then `llmnet apply --validate examples/lab.yaml`
#
# make check runs two e2e tiers, each with its own hard limit (docs/lab.md,
# "The e2e tiers"): e2e-6.12, every scenario on the default image, and
# e2e-6.1, the scenarios that tell the kernels apart (the smoke test, the
# agent's configfs shapes and failpoint loop, auth's clear refusal on a
# kernel without NVMe authentication, safety), so that a configfs
# difference between the two kernels fails CI. Each tier builds its image
# if needed and boots its own lab.

N ?= 3
KERNEL ?= 6.12
# The full tier boots 4 guests: with 3, a bad node plus a bad link
# fail every pair and the validate scenario cannot name exactly the two
# faults it injects (docs/validation.md); the 4th guest costs about 10-20 s
# of boot and ~750 MiB on 6.12.
E2E_N ?= 4
# 6.1's subset (no validate, no controller) needs no 4th guest
E2E_61_N ?= 3
E2E_61_SCENARIOS := lab agent auth safety
QUICK_SCENARIOS := agent controller
LAB := tests/lab

.PHONY: lab-image lab-up lab-down e2e tier-e2e-6.12 tier-e2e-6.1 demo

lab-image:
	$(Q)LLMNET_LAB_KERNEL=$(KERNEL) $(LAB)/build-image

lab-up:
	$(Q)LLMNET_LAB_KERNEL=$(KERNEL) $(LAB)/lab-up -n $(N)

lab-down:
	$(Q)$(LAB)/lab-down

e2e: all
	$(Q)LLMNET_LAB_KERNEL=$(KERNEL) BUILD=$(BUILD) tests/e2e/run.sh -n $(N) $(if $(KEEP),--keep) \
		$(if $(SCENARIOS),$(SCENARIOS),$(if $(QUICK),$(QUICK_SCENARIOS)))

# make check's e2e tiers: counts in $(BUILD)/check/e2e-6.12.counts and
# e2e-6.1.counts. Each takes down the lab it booted.
tier-e2e-6.12: all
	$(Q)LLMNET_LAB_KERNEL=6.12 BUILD=$(BUILD) tests/e2e/run.sh --tier e2e-6.12 -n $(E2E_N)

tier-e2e-6.1: all
	$(Q)LLMNET_LAB_KERNEL=6.1 BUILD=$(BUILD) tests/e2e/run.sh --tier e2e-6.1 -n $(E2E_61_N) \
		$(E2E_61_SCENARIOS)

CHECK_TIERS += e2e-6.1:900 e2e-6.12:3000

# The README's first command: from a fresh machine to a converged lab.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)LLMNET_LAB_KERNEL=$(KERNEL) $(LAB)/demo $(BUILD)/llmnet
