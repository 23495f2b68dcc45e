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

# The agent and the probes must never drop out of the build unnoticed (the
# Makefile builds the agent only where agents/agent/main.c exists): a
# missing source stops every make, and the agent tier checks the outputs.
AGENT_BUILT_FROM := $(AGENT_MAIN) agents/probes/io_probe.c agents/probes/mpi_probe.c \
	agents/probes/nccl_mpi_probe.c
$(foreach f,$(AGENT_BUILT_FROM),$(if $(wildcard $(f)),,$(error $(f) is missing: \
	the agent and its probes must be built (mk/20-agent.mk))))
AGENT_OUTPUTS := $(BUILD)/llmnet-agent $(BUILD)/llmnet-agent-dyn $(BUILD)/probes/io_probe \
	$(BUILD)/probes/mpi_probe.c $(BUILD)/probes/nccl_mpi_probe.c

# The agent must be static, stripped under 8 MiB, and make no NSS calls.
agent-static-check: $(BUILD)/llmnet-agent
	$(Q)tests/unit/agent_static_check.sh $(BUILD)/llmnet-agent

# The agent tier: static/size/NSS checks (its cmocka tests run in tier-unit).
tier-agent: all unit-tests
	$(Q)for f in $(AGENT_OUTPUTS); do test -f $$f || { echo "[  FAILED  ] not built: $$f"; exit 1; }; done
	$(Q)tests/unit/agent_static_check.sh $(BUILD)/llmnet-agent $(BUILD)/check/agent.counts

CHECK_TIERS += agent:300

bench-agent: $(BUILD)/llmnet-agent
	$(Q)bench/agent/run.sh $(BUILD) 20
