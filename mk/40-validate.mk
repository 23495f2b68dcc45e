# SPDX-License-Identifier: MIT
#
# validate: the io probe (static, like the agent) and, for the unit tests
# only, STAND-IN libnccl/libcudart (clearly not NCCL or CUDA) that let the
# NCCL probe's wiring run without a GPU. The MPI and NCCL probes are built
# by mpicc on the launcher node at run time (and by their unit tests the
# same way).

PROBES_DIR := $(BUILD)/probes
STANDIN_DIR := $(BUILD)/standin
IO_PROBE := $(PROBES_DIR)/io_probe
STANDIN_LIBS := $(STANDIN_DIR)/libcudart.so $(STANDIN_DIR)/libnccl.so.2 \
	$(STANDIN_DIR)/nosym/libnccl.so.2
# The GPU facts program (dynamic: it dlopens NVML) and, for the unit
# tests, STAND-IN libnvidia-ml.so.1 variants, one folder each
# (tests/unit/standin/nvml_standin.c says what each answers).
GPU_FACTS := $(PROBES_DIR)/gpu_facts
NVML_VARIANTS := healthy faulty notsup nosym noinit noentry odd
NVML_STANDINS := $(foreach v,$(NVML_VARIANTS),$(STANDIN_DIR)/nvml/$(v)/libnvidia-ml.so.1)

all: $(IO_PROBE) $(GPU_FACTS)

# libc and libdl only: no link-time NVML (it is opened at run time).
$(GPU_FACTS): agents/probes/gpu_facts.c
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(WARNINGS) -D_GNU_SOURCE -o $@ $< -ldl

$(STANDIN_DIR)/nvml/%/libnvidia-ml.so.1: tests/unit/standin/nvml_standin.c
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(WARNINGS) -DSTANDIN_$* -fPIC -shared \
		-Wl,-soname,libnvidia-ml.so.1 -o $@ $<

$(BUILD)/tests/test_gpu_facts $(BUILD)/tests/test_validate_gpu: $(GPU_FACTS) $(NVML_STANDINS) \
	$(BUILD)/llmnet-agent-dyn

# The io probe runs on nodes like the agent: static, libc only.
$(IO_PROBE): agents/probes/io_probe.c
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(WARNINGS) -D_GNU_SOURCE -static -o $@ $<

$(STANDIN_DIR)/libcudart.so: tests/unit/standin/cudart_standin.c
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(WARNINGS) -fPIC -shared -o $@ $<

$(STANDIN_DIR)/libnccl.so.2: tests/unit/standin/nccl_standin.c
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(WARNINGS) -fPIC -shared -o $@ $<

$(STANDIN_DIR)/nosym/libnccl.so.2: tests/unit/standin/nccl_standin.c
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(WARNINGS) -DSTANDIN_NO_ALLREDUCE -fPIC -shared -o $@ $<

$(BUILD)/tests/test_validate_probes: $(IO_PROBE) $(STANDIN_LIBS) $(BUILD)/llmnet-agent-dyn

# The MPI probe travels as source (built by the launcher's mpicc, then copied); llmnet
# finds it next to itself in probes/, or in LIBEXECDIR/probes once installed.
# The NCCL probe the nccl stage runs travels the same way (nccl_mpi_probe.c).
all: $(PROBES_DIR)/mpi_probe.c $(PROBES_DIR)/nccl_mpi_probe.c

$(PROBES_DIR)/mpi_probe.c: agents/probes/mpi_probe.c
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

$(PROBES_DIR)/nccl_mpi_probe.c: agents/probes/nccl_mpi_probe.c
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

install: install-probes
.PHONY: install-probes
install-probes: $(IO_PROBE) $(GPU_FACTS) $(PROBES_DIR)/mpi_probe.c $(PROBES_DIR)/nccl_mpi_probe.c
	install -d $(DESTDIR)$(LIBEXECDIR)/probes
	install -m 755 $(IO_PROBE) $(DESTDIR)$(LIBEXECDIR)/probes/io_probe
	install -m 755 $(GPU_FACTS) $(DESTDIR)$(LIBEXECDIR)/probes/gpu_facts
	install -m 644 agents/probes/mpi_probe.c $(DESTDIR)$(LIBEXECDIR)/probes/mpi_probe.c
	install -m 644 agents/probes/nccl_mpi_probe.c $(DESTDIR)$(LIBEXECDIR)/probes/nccl_mpi_probe.c

# Diagnosis benchmark (docs/benchmarks.md, "Diagnosis"): make bench-diagnose
$(BUILD)/bench/diagnose_bench: bench/diagnose/diagnose_bench.c $(LIBLLMNET)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBLLMNET) $(LLMNET_LIBS)

.PHONY: bench-diagnose
bench-diagnose: $(BUILD)/bench/diagnose_bench
	$(Q)$(BUILD)/bench/diagnose_bench 1024
