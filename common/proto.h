/* SPDX-License-Identifier: MIT */
/*
 * The agent wire contract, defined once for both binaries: the protocol
 * version the controller and agent negotiate, the verbs, the agent's exit
 * codes, where llmnet keeps its programs on a node, and the names of the
 * probes the `run` verb accepts. docs/agent-protocol.md describes each.
 */
#ifndef LN_PROTO_H
#define LN_PROTO_H

/* Bumped when a request or an answer changes shape. 2: the session.
 * 3: the GPU half of the fabric (PCIe topology and GPU facts). */
#define LN_PROTO_VERSION 3

/* Where the controller pushes the agent and the probes on a node. */
#define LN_PROTO_REMOTE_DIR "/var/lib/llmnet/bin"
#define LN_PROTO_AGENT_NAME "llmnet-agent"
/* The identity sidecar the agent's `seal` writes next to it at push time:
 * its SHA-256 and the file's size, times and inode, so `version` hashes the
 * binary again only when one of them changed. */
#define LN_PROTO_AGENT_ID_SUFFIX ".id"

/* Session frames: the payload's length in decimal ASCII (at most
 * LN_FRAME_DIGITS digits), a newline, then that many bytes of JSON. */
#define LN_FRAME_DIGITS 10
#define LN_FRAME_REQUEST_MAX (16u << 20)	/* the agent refuses larger requests */
#define LN_FRAME_ANSWER_MAX (64u << 20)		/* the controller refuses larger answers */

/* Verbs (argv[1] of the agent, or "verb" of a session request). */
#define LN_VERB_SESSION "session"	/* one process serves framed requests */
#define LN_VERB_SEAL "seal"		/* install time only: write the sidecar */
#define LN_VERB_VERSION "version"
#define LN_VERB_FACTS "facts"
#define LN_VERB_PLAN "plan"
#define LN_VERB_APPLY "apply"
#define LN_VERB_TEARDOWN "teardown"
#define LN_VERB_RUN "run"
/* run's --env NAME=VALUE (nccl-tests only, allow.c): at most this many.
 * The program gets these and nothing else of the agent's environment
 * but PATH. */
#define LN_RUN_ENV_MAX 40
#define LN_VERB_RESTORE "restore"	/* the boot unit's, node-local: agent-protocol.md */

/* `facts --counters DEV/PORT`: the most ports one request may name. */
#define LN_FACTS_COUNTER_PORTS_MAX 64
/* `facts --discovery TRANSPORT,ADDRESS,SERVICE,NQN`: the most places one
 * request may name. */
#define LN_FACTS_DISCOVERY_MAX 64
/* facts --refused: at most this many attempts a request, each bounded by
 * --timeout S (1 .. LN_FACTS_REFUSED_TIMEOUT_MAX seconds). */
#define LN_FACTS_REFUSED_MAX 16
#define LN_FACTS_REFUSED_TIMEOUT_MAX 600

/* llmnet's own probes, as installed in LN_PROTO_REMOTE_DIR, and the MPI
 * sources (in LN_PROBE_SRC_DIR) the agent lets mpicc build into them. */
#define LN_PROBE_SRC_DIR "/var/lib/llmnet/src"
#define LN_PROBE_IO "llmnet-probe-io"
#define LN_PROBE_MPI "llmnet-probe-mpi"
#define LN_PROBE_NCCL "llmnet-probe-nccl"
/* The GPU facts program (agents/probes/gpu_facts.c): pushed and
 * hash-checked like the io probe, run by the facts verb itself, not by
 * `run`. Under --root it is given the NVML library at LN_GPU_FACTS_ROOT_LIB
 * below the root (a test's stand-in), on a node the loader's own. */
#define LN_PROBE_GPU_FACTS "llmnet-gpu-facts"
#define LN_GPU_FACTS_ROOT_LIB "/usr/lib/llmnet-fixture/libnvidia-ml.so.1"
#define LN_PROBE_MPI_SRC "mpi_probe.c"
#define LN_PROBE_NCCL_SRC "nccl_mpi_probe.c"

/* nccl-tests' program the nccl stage runs with tool all_reduce_perf: the
 * run verb accepts it only by an absolute path whose last name is this,
 * in a directory root owns (validation.nccl.tests_dir on the controller;
 * the agent checks the file and every directory above it). An absent one
 * is refused with LN_PROTO_CODE_MISSING, which the stage reports as "not
 * run". */
#define LN_NCCL_TESTS_ALL_REDUCE "all_reduce_perf"
/* The error code of a run whose program is not on the node. */
#define LN_PROTO_CODE_MISSING "missing"

/* Agent exit codes. */
enum ln_agent_exit {
	LN_AGENT_EXIT_OK = 0,
	LN_AGENT_EXIT_PARTIAL = 1,	/* some changes failed; the answer says which */
	LN_AGENT_EXIT_REQUEST = 2,	/* the request was refused; nothing changed */
	LN_AGENT_EXIT_LOCKED = 3,	/* another llmnet run holds the node lock */
	LN_AGENT_EXIT_TIMEOUT = 4,	/* the time budget ran out (or the caller went away);
					 * nothing was changed after that point */
	LN_AGENT_EXIT_USAGE = 64,
	LN_AGENT_EXIT_INTERNAL = 70,
	LN_AGENT_EXIT_FAILPOINT = 99,	/* tests only: stopped at the failpoint */
};

#endif
