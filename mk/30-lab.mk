# SPDX-License-Identifier: MIT
#
# The real-kernel lab: QEMU guests under software emulation (docs/lab.md).
#
#   make lab-image        build the guest image (cached in ~/.cache/llmnet-lab)
#   make lab-up [N=3]     boot N guests (2..4); make lab-down stops them
#   KERNEL=6.1|6.12       the guest image: Debian 12's 6.1 (the default for
#                         now) or Debian 13's 6.12 with systemd
#   make e2e [N=3] [SCENARIOS="lab agent"] [KEEP=1]
#                         end-to-end scenarios against one lab boot
#   make demo             deps, build, lab, then `llmnet apply --validate examples/lab.yaml`
#
# The e2e tier is part of `make check`: one lab boot (and the image build on
# a new machine) for the lab's smoke test and every scenario. Measured on a
# 2-core machine: image ~1-6 min from nothing, boot ~15-40 s, smoke ~1 min.

N ?= 3
KERNEL ?= 6.1
# make check's e2e tier boots 4 guests: with 3, a bad node plus a bad link
# fail every pair and the validate scenario cannot name exactly the two
# faults it injects (docs/validation.md); the 4th guest costs about 10 s of
# boot and ~425 MiB.
E2E_N ?= 4
LAB := tests/lab

.PHONY: lab-image lab-up lab-down e2e tier-e2e tier-e2e-6.12 demo

lab-image:
	$(Q)LLMNET_LAB_KERNEL=$(KERNEL) $(LAB)/build-image

lab-up:
	$(Q)LLMNET_LAB_KERNEL=$(KERNEL) $(LAB)/lab-up -n $(N)

lab-down:
	$(Q)$(LAB)/lab-down

e2e: all
	$(Q)LLMNET_LAB_KERNEL=$(KERNEL) BUILD=$(BUILD) tests/e2e/run.sh -n $(N) $(if $(KEEP),--keep) $(SCENARIOS)

# make check's e2e tier: the 6.1 image's scenarios. The 6.12 image's tier
# (its scenarios per their "# images:" line) is not in make check yet.
tier-e2e: all
	$(Q)LLMNET_LAB_KERNEL=6.1 BUILD=$(BUILD) tests/e2e/run.sh --tier e2e -n $(E2E_N)

tier-e2e-6.12: all
	$(Q)LLMNET_LAB_KERNEL=6.12 BUILD=$(BUILD) tests/e2e/run.sh --tier e2e-6.12 -n $(E2E_N)

CHECK_TIERS += e2e:1800

# The README's first command: from a fresh machine to a converged lab.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(LAB)/demo $(BUILD)/llmnet
