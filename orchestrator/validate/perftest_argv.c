/* SPDX-License-Identifier: MIT */
/*
 * perftest's command line, one builder for the bandwidth and latency
 * stages (stage_pair.c) and every later use of perftest: each end on its
 * own device, port and GID (see stage_common.h), and bound to its
 * declared port (issue 27). Over RDMA CM (-R) an unbound end leaves by
 * the port the route picks, which on rails that share a subnet need not
 * be the one reported. perftest can bind it with --bind_source_ip
 * (4.5-0.17, Debian 12, lacks it), but Debian 13's client crashed with it
 * in the lab, so every end runs without -R, its data path bound by
 * -d/-i/-x; each node's tool is still asked once per run (its --help,
 * bounded) whether it lists the option, and the check's note says so.
 * The builder keeps the -R form (bind_source) for when it is proven.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "orchestrator/validate/results.h"
#include "orchestrator/validate/stage_common.h"

#define HELP_TIMEOUT_S 10
#define HELP_OUTPUT_MAX (256u << 10)
#define BIND_OPTION "--bind_source_ip"

/* GPUDirect RDMA (bandwidth memory cuda or dmabuf): the buffers on the
 * GPU the port serves, named by its PCI bus id (perftest_mem.c says why
 * not a CUDA index); dma-buf after it, as perftest takes it only once
 * the memory is CUDA's. */
static void memory_args(const struct port_info *ni, struct argv *a)
{
	if (!ni->mem.bus[0])
		return;
	vs_arg(a, "--use_cuda_bus_id");
	vs_arg(a, "%s", ni->mem.bus);
	if (ni->mem.dmabuf)
		vs_arg(a, "--use_cuda_dmabuf");
}

void vs_perftest_argv(const struct port_info *srv, const struct port_info *cli, const char *tool,
		      uint64_t size, unsigned iters, unsigned tcp_port, const char *extra,
		      int bind_source, struct argv *sv, struct argv *cv)
{
	const struct port_info *ends[2] = { srv, cli };
	struct argv *both[2] = { sv, cv };
	int k;

	for (k = 0; k < 2; k++) {
		const struct port_info *ni = ends[k];

		vs_arg(both[k], "%s", tool);
		vs_arg(both[k], "-d");
		vs_arg(both[k], "%s", ni->dev);
		vs_arg(both[k], "-i");
		vs_arg(both[k], "%u", ni->port);
		if (ni->gid_index >= 0) {
			vs_arg(both[k], "-x");
			vs_arg(both[k], "%d", ni->gid_index);
		}
		vs_arg(both[k], "-s");
		vs_arg(both[k], "%llu", (unsigned long long)size);
		vs_arg(both[k], "-n");
		vs_arg(both[k], "%u", iters);
		vs_arg(both[k], "-p");
		vs_arg(both[k], "%u", tcp_port);
		if (bind_source) {
			vs_arg(both[k], "-R");
			vs_arg(both[k], BIND_OPTION);
			vs_arg(both[k], "%s", ni->ip);
		}
		vs_arg(both[k], "-F");
		memory_args(ni, both[k]);
		if (extra)
			vs_arg(both[k], "%s", extra);
	}
	vs_arg(cv, "%s", srv->ip);
}

/* Whether perftest's usage text lists the option as a word of its own. */
static int help_lists_bind(const char *text, size_t len)
{
	size_t n = strlen(BIND_OPTION);
	const char *p = text, *end = text + len;

	while (p && (p = memmem(p, (size_t)(end - p), BIND_OPTION, n))) {
		const char *after = p + n;

		if ((p == text || p[-1] == ' ' || p[-1] == '\t' || p[-1] == ',') &&
		    (after == end || *after == ' ' || *after == '\t' || *after == '=' ||
		     *after == '\n' || *after == '\r' || *after == ','))
			return 1;
		p = after;
	}
	return 0;
}

/* Read tool's --help on node i (its lane), once per tool: the answer in
 * ni->perftest_binds, why it could not be read in ni->perftest_why. The
 * exit status is not judged: perftest's --help exits 1. */
static void read_help(struct vctx *c, const char *tool, size_t i, unsigned lane)
{
	struct node_info *ni = &c->ni[i];
	const char *argv[] = { tool, "--help", NULL };
	struct ln_probe_result pr = { 0 };
	struct ln_buf err = LN_BUF_INIT;
	int r;

	free(ni->perftest_tool);
	free(ni->perftest_why);
	ni->perftest_why = NULL;
	ni->perftest_binds = 0;
	ni->perftest_tool = strdup(tool);
	ln_buf_init(&pr.output, HELP_OUTPUT_MAX);
	r = c->ops->run(c->octx, i, lane, argv, NULL, HELP_TIMEOUT_S, &pr, &err);
	if (r < 0) {
		if (!err.len)
			ln_buf_addstr(&err, "it could not run");
	} else if (pr.timed_out) {
		ln_buf_addf(&err, "it timed out after %ds", HELP_TIMEOUT_S);
	} else {
		ni->perftest_binds = help_lists_bind(pr.output.buf, pr.output.len);
	}
	if (err.len)
		ni->perftest_why = strdup(err.buf);
	ln_buf_release(&pr.output);
	ln_buf_release(&err);
}

/* Node i's answer for tool, read when not yet (or for another tool). */
static int node_binds(struct vctx *c, const char *tool, size_t i, unsigned lane)
{
	struct node_info *ni = &c->ni[i];
	int binds;

	pthread_mutex_lock(&ni->perftest_lock);
	if (!ni->perftest_tool || strcmp(ni->perftest_tool, tool))
		read_help(c, tool, i, lane);
	binds = ni->perftest_binds;
	pthread_mutex_unlock(&ni->perftest_lock);
	return binds;
}

int vs_perftest_binds(struct vctx *c, const char *tool, size_t a, unsigned pa, size_t b,
		      unsigned pb)
{
	/* Each end's answer is read for the note; RDMA CM's binding is not
	 * used: Debian 13's perftest client with --bind_source_ip died with
	 * SIGSEGV in 2 of 10 lab runs (its server then waits out its bound),
	 * while -d/-i/-x without -R passed every time (docs/validation.md,
	 * "Binding"). */
	node_binds(c, tool, a, vs_lane(c, pa));
	node_binds(c, tool, b, vs_lane(c, pb));
	return 0;
}

void vs_perftest_note(struct vctx *c, const char *tool, struct ln_check *k)
{
	size_t e[2] = { k->a, k->b };
	struct ln_buf note = LN_BUF_INIT;
	int j;

	if (k->status != LN_ST_PASS || k->a == LN_NO_NODE || k->b == LN_NO_NODE)
		return;
	ln_buf_addf(&note, "bound: -d/-i/-x, not RDMA CM (%s", tool);
	for (j = 0; j < 2; j++) {
		const struct node_info *ni = &c->ni[e[j]];

		ln_buf_addf(&note, "%s on '%s' ", j ? ";" : "", vs_nname(c, e[j]));
		if (ni->perftest_why)
			ln_buf_addf(&note, "--help could not be read: %s", ni->perftest_why);
		else
			ln_buf_addf(&note, "%s %s", ni->perftest_binds ? "lists" : "lists no",
				    BIND_OPTION);
	}
	ln_buf_addstr(&note, "; RDMA CM's binding is not used: docs/validation.md, Binding)");
	ln_check_set(k, LN_ST_PASS, "%s", note.buf);
	ln_buf_release(&note);
}

void vs_perftest_release(struct node_info *ni)
{
	free(ni->perftest_tool);
	free(ni->perftest_why);
	pthread_mutex_destroy(&ni->perftest_lock);
}
