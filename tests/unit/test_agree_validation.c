/* SPDX-License-Identifier: MIT */
/*
 * Every key of the mpi section and of each validation stage has an
 * effect: what lint accepts, the probes' command lines, bounds and
 * verdicts of a validation run on a fake cluster show (agree.h, part 2).
 */
#include "tests/unit/agree.h"

/* nccl-tests from its directory, without the probe's variables */
#define TO_NCCL_TESTS "tool: probe, op: all_reduce, bytes: 1GiB, min_busbw: 100GB/s, socket_ifname" \
	": eth0, env: { NCCL_ALGO: Ring }, ", "tool: all_reduce_perf, tests_dir: /opt/nt, "

static const struct key_case key_cases[] = {
	KC("mpi", SECTION, NULL, NULL),
	KC("mpi.hostfile", CHANGES, "/etc/llmnet/hostfile", "/etc/llmnet/other"),
	/* the mpi and nccl stages run Open MPI's mpirun: lint refuses them
	 * with mpich, so the hostfile's lines are the effect */
	{ "mpi.format", CHANGES, "format: openmpi", "format: mpich",
	  "  - { stage: mpi, np: 4, timeout: 150s }\n  - { stage: nccl, tool: probe, op: all_reduce, "
	  "bytes: 1GiB, min_busbw: 100GB/s, socket_ifname: eth0, env: { NCCL_ALGO: Ring }, "
	  "timeout: 300s }\n", "" },
	KC("mpi.mca", CHANGES, "pml: ob1", "pml: ucx"),
	KC("validation", SECTION, NULL, NULL),
	KC("validation.devices.stage", CHANGES, "  - { stage: devices }\n", ""),
	KC("validation.rping.stage", CHANGES, "  - { stage: rping, count: 10, pairs: ring, timeout: 30s, "
	  "rails: aligned, max_errors: 5 }\n", ""),
	KC("validation.rping.max_errors", CHANGES, "30s, rails: aligned, max_errors: 5",
	   "30s, rails: aligned, max_errors: 0"),
	KC("validation.rping.count", CHANGES, "count: 10", "count: 20"),
	KC("validation.rping.pairs", CHANGES, "pairs: ring, timeout", "pairs: all, timeout"),
	KC("validation.rping.timeout", CHANGES, "timeout: 30s", "timeout: 40s"),
	KC("validation.rping.rails", CHANGES, "30s, rails: aligned", "30s, rails: all"),
	/* both rails in one round: half the rounds, each port on its own lane */
	KC("validation.rping.concurrent_rails", CHANGES, "30s, rails: aligned,",
	   "30s, rails: aligned, concurrent_rails: true,"),
	KC("validation.bandwidth.stage", CHANGES, "  - { stage: bandwidth, tool: ib_write_bw, size: 1MiB, "
	  "pairs: ring, min: 50Gb/s, port_base: 18515, timeout: 60s, rails: aligned, max_errors: 5 }\n",
	  ""),
	KC("validation.bandwidth.max_errors", CHANGES, "60s, rails: aligned, max_errors: 5",
	   "60s, rails: aligned, max_errors: 7"),
	KC("validation.bandwidth.tool", CHANGES, "tool: ib_write_bw", "tool: ib_send_bw"),
	KC("validation.bandwidth.size", CHANGES, "size: 1MiB", "size: 2MiB"),
	KC("validation.bandwidth.pairs", CHANGES, "pairs: ring, min", "pairs: all, min"),
	KC("validation.bandwidth.min", CHANGES, "min: 50Gb/s", "min: 200Gb/s"),
	KC("validation.bandwidth.port_base", CHANGES, "port_base: 18515", "port_base: 20000"),
	KC("validation.bandwidth.timeout", CHANGES, "timeout: 60s", "timeout: 90s"),
	KC("validation.bandwidth.rails", CHANGES, "60s, rails: aligned", "60s, rails: all"),
	KC("validation.bandwidth.concurrent_rails", CHANGES, "60s, rails: aligned,",
	   "60s, rails: aligned, concurrent_rails: true,"),
	KC("validation.latency.stage", CHANGES, "  - { stage: latency, tool: ib_write_lat, size: 2B, "
	  "iterations: 1000, pairs: ring, rails: aligned, max_typical: 20us, max_p99: 50us, "
	  "port_base: 18615, timeout: 45s, max_errors: 5 }\n", ""),
	KC("validation.latency.max_errors", CHANGES, "45s, max_errors: 5", "45s, max_errors: 9"),
	KC("validation.latency.tool", CHANGES, "tool: ib_write_lat", "tool: ib_send_lat"),
	KC("validation.latency.size", CHANGES, "size: 2B", "size: 64B"),
	KC("validation.latency.iterations", CHANGES, "iterations: 1000", "iterations: 100"),
	KC("validation.latency.pairs", CHANGES, "1000, pairs: ring", "1000, pairs: all"),
	KC("validation.latency.rails", CHANGES, "ring, rails: aligned, max", "ring, rails: all, max"),
	KC("validation.latency.concurrent_rails", CHANGES, "timeout: 45s,",
	   "timeout: 45s, concurrent_rails: true,"),
	KC("validation.latency.max_typical", CHANGES, "max_typical: 20us", "max_typical: 2us"),
	KC("validation.latency.max_p99", CHANGES, "max_p99: 50us", "max_p99: 5us"),
	KC("validation.latency.port_base", CHANGES, "port_base: 18615", "port_base: 21000"),
	KC("validation.latency.timeout", CHANGES, "timeout: 45s", "timeout: 50s"),
	KC("validation.io.stage", CHANGES,
	  "  - { stage: io, size: 256MiB, min: 500MB/s, destructive: false, timeout: 120s }\n", ""),
	KC("validation.io.size", CHANGES, "size: 256MiB", "size: 512MiB"),
	KC("validation.io.min", CHANGES, "min: 500MB/s", "min: 5000MB/s"),
	{ "validation.io.destructive", CHANGES, "destructive: false", "destructive: true",
	  "      mount: { path: /mnt/keys, fs: ext4, format: never }\n", "" },
	KC("validation.io.timeout", CHANGES, "timeout: 120s", "timeout: 130s"),
	KC("validation.mpi.stage", CHANGES, "  - { stage: mpi, np: 4, timeout: 150s }\n", ""),
	KC("validation.mpi.np", CHANGES, "np: 4", "np: 3"),
	KC("validation.mpi.timeout", CHANGES, "timeout: 150s", "timeout: 160s"),
	KC("validation.nccl.stage", CHANGES, "  - { stage: nccl, tool: probe, op: all_reduce, bytes: 1GiB, "
	   "min_busbw: 100GB/s, socket_ifname: eth0, env: { NCCL_ALGO: Ring }, timeout: 300s }\n",
	   ""),
	{ "validation.nccl.tool", CHANGES, TO_NCCL_TESTS, NULL, NULL },
	{ "validation.nccl.tests_dir", CHANGES, "/opt/nt", "/opt/nccl/bin", TO_NCCL_TESTS },
	KC("validation.nccl.op", CHANGES, "op: all_reduce", "op: all_gather"),
	/* a sweep: its last size and its first (--min-bytes) both change */
	KC("validation.nccl.bytes", CHANGES, "bytes: 1GiB", "bytes: 1MiB..2GiB"),
	KC("validation.nccl.min_busbw", CHANGES, "min_busbw: 100GB/s", "min_busbw: 500GB/s"),
	KC("validation.nccl.timeout", CHANGES, "timeout: 300s", "timeout: 310s"),
	KC("validation.nccl.socket_ifname", CHANGES, "socket_ifname: eth0", "socket_ifname: eth1"),
	KC("validation.nccl.env", CHANGES, "NCCL_ALGO: Ring", "NCCL_ALGO: Tree"),
};

static void test_agree_validation__every_key_has_an_effect(void **state)
{
	static const char *const sections[] = { "mpi", "validation", NULL };
	const struct agree_cases cs = { "test_agree_validation.c", key_cases,
					 ARRAY_SIZE(key_cases) };

	(void)state;
	agree_every_key(&cs, sections);
}

LN_TEST_MAIN(agree_setup, agree_teardown,
	cmocka_unit_test(test_agree_validation__every_key_has_an_effect),
)
