/* SPDX-License-Identifier: MIT */
/*
 * Where llmnet's io probe may write (io_target.c): the agent checks the
 * probe's --mount and --device before it runs, against what the state
 * file records and what the node shows, so that a `run` request can never
 * make it write into /boot, /var or a disk llmnet did not connect.
 */
#ifndef LN_AGENT_IO_TARGET_H
#define LN_AGENT_IO_TARGET_H

struct ln_agent;
struct ln_buf;

/* The io probe's argv (argc entries, options already typed): 0 when what
 * it writes is a cluster's own (cluster's, the request's `run --cluster`,
 * when not NULL), else -LN_EREQUEST naming the path (and, when it is
 * another cluster's, that cluster). */
int ln_io_target_check(const struct ln_agent *a, const char *cluster, int argc, char **argv,
		       struct ln_buf *err);

#endif
