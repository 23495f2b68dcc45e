# SPDX-License-Identifier: MIT
# llmnet-agent: static-link checks, the agent test tier, the benchmark.
#
#   make tier-agent   agent unit tests + static/NSS/size checks
#   make bench-agent  converged apply vs a stat walk (docs/benchmarks.md)

.PHONY: tier-agent agent-static-check bench-agent

# Agent paths are built into PATH_MAX buffers by snprintf; a path that does
# not fit is truncated and then simply not found (every lookup checks), so
# GCC's truncation warning is noise there.
$(BUILD)/obj/agents/%.o: ALL_CFLAGS += -Wno-format-truncation

# The agent must be static, stripped under 8 MiB, and make no NSS calls.
agent-static-check: $(BUILD)/llmnet-agent
	$(Q)tests/unit/agent_static_check.sh $(BUILD)/llmnet-agent

# The agent tier: static/size/NSS checks (its cmocka tests run in tier-unit).
tier-agent: all unit-tests
	$(Q)tests/unit/agent_static_check.sh $(BUILD)/llmnet-agent $(BUILD)/check/agent.counts

CHECK_TIERS += agent:300

bench-agent: $(BUILD)/llmnet-agent
	$(Q)bench/agent/run.sh $(BUILD) 20
