# SPDX-License-Identifier: MIT
# The docs and safety tiers (issue 12, points 8 and 9).
#
#   make tier-docs     docs/exit-codes.md lists exactly the exit codes the
#                      commands use, and no other page has its own table;
#                      docs/hacking.md's layout names every product source
#   make tier-safety   the adversarial corpus (tests/adversarial/): each
#                      reproduction refused, the fixture node's tree
#                      byte-for-byte unchanged; cases another branch fixes
#                      are reported XFAIL, never as passed

.PHONY: tier-docs tier-safety

tier-docs:
	$(Q)tests/docs/run.sh $(BUILD)

# The agent on fixture roots, and lint: seconds.
tier-safety: all
	$(Q)tests/adversarial/run.sh $(BUILD)

CHECK_TIERS += docs:60 safety:300
