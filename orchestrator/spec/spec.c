/* SPDX-License-Identifier: MIT */
/*
 * Loading a spec: the stream around the top-level mapping, the defaults,
 * then the two passes (the walker over the key tables of grammar.c, then
 * spec_check() in check.c for references, duplicates and the semantic
 * rules), and the messages of both sorted by position. This file is the
 * driver: the files it calls never call back into it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/util.h"
#include "orchestrator/spec/parser.h"

/* ---- load ------------------------------------------------------------- */

static void set_defaults(struct ln_spec *spec)
{
	struct ln_validation *v = &spec->validation;

	spec->ssh.user = "root";
	spec->ssh.port = 22;
	spec->ssh.known_hosts = "~/.ssh/known_hosts";
	spec->ssh.host_key_policy = LN_HOST_KEY_STRICT;
	spec->ssh.jump_port = 22;
	spec->ssh.connect_timeout_ms = 10000;
	spec->ssh.timeout_ms = 120000;
	spec->ssh.parallel = 32;
	spec->mpi.hostfile = "/etc/llmnet/hostfile";
	spec->mpi.format = LN_MPI_OPENMPI;
	v->devices.max_gpu_distance = LN_DIST_PXB;
	v->rping.count = 10;
	v->rping.pairs = LN_PAIRS_RING;
	v->rping.timeout_ms = 30000;
	v->rping.max_errors = -1;
	v->bandwidth.tool = LN_BW_IB_WRITE_BW;
	v->bandwidth.size = 1 << 20;
	v->bandwidth.pairs = LN_PAIRS_RING;
	v->bandwidth.port_base = 18515;
	v->bandwidth.timeout_ms = 60000;
	v->bandwidth.max_errors = -1;
	v->latency.tool = LN_LAT_IB_WRITE_LAT;
	v->latency.size = 2;
	v->latency.iterations = 1000;
	v->latency.pairs = LN_PAIRS_RING;
	v->latency.port_base = 18615;
	v->latency.timeout_ms = 60000;
	v->latency.max_errors = -1;
	v->io.size = 256ull << 20;
	v->io.timeout_ms = 120000;
	v->mpi.timeout_ms = 120000;
	v->nccl.tool = LN_NCCL_PROBE;
	v->nccl.op = LN_NCCL_ALL_REDUCE;
	v->nccl.bytes = 1ull << 30;
	v->nccl.timeout_ms = 300000;
	v->access.timeout_ms = 20000;
}

static int parse_stream(struct parser *p)
{
	struct ln_mark m;
	int r;

	if (spec_next(p) < 0 || spec_next(p) < 0)	/* stream start, then document start */
		return 0;
	if (p->ev.type == YAML_STREAM_END_EVENT) {
		m.line = m.col = 1;
		spec_diag(p->spec, m, "the spec is empty (it needs at least 'version: 1')");
		return 0;
	}
	if (spec_next(p) < 0)
		return 0;
	if (p->ev.type != YAML_MAPPING_START_EVENT) {
		spec_diag(p->spec, spec_ev_mark(p),
			  "the spec must be a mapping (version, cluster, nodes, ...), not %s",
			  spec_kind(p));
		return 0;
	}
	r = spec_walk_map(p, &spec_top_table, p->spec, NULL, "the spec");
	if (r < 0)
		return r == -1 ? 0 : r;
	/* document end, then stream end or another document */
	if (spec_next(p) < 0 || spec_next(p) < 0)
		return 0;
	if (p->ev.type == YAML_DOCUMENT_START_EVENT)
		spec_diag(p->spec, spec_ev_mark(p), "the spec must be one YAML document, not several");
	return 0;
}

static int cmp_diag(const void *a, const void *b)
{
	const struct diag *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Point each node's rdma, each target's namespaces at their slices of the
 * shared arrays (stable now that parsing is over). */
static void fix_pointers(struct ln_spec *spec)
{
	struct ln_spec_store *st = spec->store;
	size_t i, off = 0;

	for (i = 0; i < spec->n_nodes; i++) {
		spec->nodes[i].rdma = spec->nodes[i].n_rdma ? &st->ports[off] : NULL;
		off += spec->nodes[i].n_rdma;
	}
	off = 0;
	for (i = 0; i < spec->n_targets; i++) {
		spec->targets[i].namespaces = spec->targets[i].n_namespaces ? &st->nss[off] : NULL;
		off += spec->targets[i].n_namespaces;
	}
	spec->mpi.mca = spec->mpi.n_mca ? st->mca : NULL;
	spec->validation.nccl.env = spec->validation.nccl.n_env ? st->nccl_env : NULL;
}

/* Append the messages to err as "file:line:col: message", in order. */
static void report_diags(struct ln_spec_store *st, const char *name, struct ln_buf *err)
{
	size_t i;

	qsort(st->diags, st->n_diags, sizeof(*st->diags), cmp_diag);
	for (i = 0; i < st->n_diags; i++) {
		const struct diag *d = &st->diags[i];

		/* An unknown version makes every other message a guess. */
		if (st->version_bad && !strstr(d->msg, "spec version") &&
		    !strstr(d->msg, "yaml syntax error"))
			continue;
		ln_buf_addf(err, "%s:%u:%u: %s\n", name, d->line, d->col, d->msg);
	}
	if (st->n_dropped && !st->version_bad)
		ln_buf_addf(err, "%s: %zu more problems not shown\n", name, st->n_dropped);
}

static void release_parse_state(struct ln_spec_store *st)
{
	free(st->node_raw);
	free(st->target_raw);
	free(st->hosts_raw);
	free(st->init_raw);
	st->node_raw = NULL;
	st->target_raw = NULL;
	st->hosts_raw = NULL;
	st->init_raw = NULL;
	ln_buf_release(&st->scratch);
}

/* libyaml's reader: the file in chunks, stopping past SPEC_MAX_BYTES (a
 * pipe has no size to check before reading). */
static int read_capped(void *data, unsigned char *buf, size_t size, size_t *got)
{
	struct parser *p = data;
	size_t n = fread(buf, 1, size, p->in);

	if (!n && ferror(p->in))
		return 0;
	p->in_bytes += n;
	if (p->in_bytes > SPEC_MAX_BYTES) {
		p->too_big = 1;
		return 0;
	}
	*got = n;
	return 1;
}

/* len: the file's size, or data's; 0 when unknown (a pipe). */
static int load(const char *name, FILE *f, const char *data, size_t len, struct ln_spec **out,
		struct ln_buf *err)
{
	struct ln_spec *spec = NULL;
	struct ln_spec_store *st = NULL;
	struct parser p;
	int r;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	spec = calloc(1, sizeof(*spec));
	st = calloc(1, sizeof(*st));
	if (!spec || !st) {
		free(spec);
		free(st);
		ln_buf_addstr(err, "cannot load the spec: out of memory");
		return -ENOMEM;
	}
	spec->store = st;
	ln_buf_init(&st->scratch, 1 << 16);
	ln_buf_init(&st->warnings, 0);
	ln_buf_init(&p.why, 1 << 16);
	spec->path = spec_arena_strndup(&st->arena, name, strlen(name));
	if (!spec->path) {
		r = -ENOMEM;
		goto out;
	}
	set_defaults(spec);
	p.spec = spec;
	p.st = st;
	if (!yaml_parser_initialize(&p.yp)) {
		r = -ENOMEM;
		goto out;
	}
	p.in = f;
	p.data = data;
	p.data_len = len;
	if (f)
		yaml_parser_set_input(&p.yp, read_capped, &p);
	else
		yaml_parser_set_input_string(&p.yp, (const unsigned char *)data, len);
	if (len > SPEC_MAX_BYTES) {
		struct ln_mark m = { 1, 1 };

		spec_diag(spec, m, "the spec is %zu bytes, more than the %u MiB a spec may be "
			  "(use ranges)", len, SPEC_MAX_BYTES >> 20);
		p.dead = 1;
		r = 0;
	} else {
		r = parse_stream(&p);
	}
	if (p.have)
		yaml_event_delete(&p.ev);
	yaml_parser_delete(&p.yp);
	if (r < 0)
		goto out;
	fix_pointers(spec);
	/* Even after syntax errors the cross-reference pass runs, so one run
	 * shows every problem; it tolerates the missing pieces. Only a YAML
	 * error leaves too little to check. */
	if (!p.dead) {
		r = spec_check(spec);
		if (r < 0)
			goto out;
	}
	if (st->n_diags) {
		report_diags(st, name, err);
		r = -LN_ESPEC;
		goto out;
	}
	r = 0;
out:
	if (r == -ENOMEM)
		ln_buf_addf(err, "cannot load '%s': out of memory\n", name);
	release_parse_state(st);
	ln_buf_release(&p.why);
	free(p.ne.rdma);
	free(p.te.ns);
	free(p.te.hosts);
	if (r < 0)
		ln_spec_free(spec);
	else
		*out = spec;
	return r;
}

int ln_spec_load_buf(const char *name, const char *data, size_t len, struct ln_spec **out,
		     struct ln_buf *err)
{
	return load(name, NULL, data, len, out, err);
}

int ln_spec_load(const char *path, struct ln_spec **out, struct ln_buf *err)
{
	struct stat sb;
	FILE *f;
	int r;

	*out = NULL;
	/* libyaml reads the file in chunks: the spec is never held whole. */
	f = fopen(path, "rb");
	if (!f) {
		r = -errno;
		ln_buf_addf(err, "cannot open spec '%s': %s\n", path, strerror(errno));
		return r;
	}
	if (fstat(fileno(f), &sb) < 0)
		memset(&sb, 0, sizeof(sb));	/* size unknown: the reader still caps it */
	if (S_ISDIR(sb.st_mode)) {
		fclose(f);
		ln_buf_addf(err, "cannot open spec '%s': %s\n", path, strerror(EISDIR));
		return -EISDIR;
	}
	r = load(path, f, NULL, S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0, out, err);
	fclose(f);
	return r;
}

void ln_spec_free(struct ln_spec *spec)
{
	struct ln_spec_store *st;
	size_t i;

	if (!spec)
		return;
	st = spec->store;
	if (st) {
		for (i = 0; i < st->n_diags && i < 1000; i++)
			free(st->diags[i].msg);
		ln_free_all(st->diags, st->ports, st->nss, st->mca, st->nccl_env, st->host_idx);
		ln_buf_release(&st->warnings);
		spec_idxmap_release(&st->node_by_name);
		spec_idxmap_release(&st->target_by_nqn);
		release_parse_state(st);
		spec_arena_release(&st->arena);
		free(st);
	}
	ln_free_all(spec->nodes, spec->targets, spec->initiators, spec);
}
