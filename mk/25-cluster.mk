# SPDX-License-Identifier: MIT
# The loopback cluster tier: sshd nodes on 127.0.1.x, real libssh, each
# agent on its own fixture root (tests/cluster/).
CHECK_TIERS += cluster:900

.PHONY: tier-cluster
tier-cluster: all
	$(Q)tests/cluster/run.sh $(BUILD)
