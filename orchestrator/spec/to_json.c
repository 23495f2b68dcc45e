/* SPDX-License-Identifier: MIT */
/*
 * The normalized model as JSON (`llmnet lint -o json`): ranges expanded,
 * defaults filled, references by name, units in the model's own (ms,
 * bytes, bits/s) under keys that say so. The keys are a stable interface,
 * documented in docs/spec.md. No secret can appear: the spec holds none,
 * and a DH-HMAC-CHAP key is named by its file only.
 */
#include <errno.h>
#include <stdio.h>

#include "common/json.h"
#include "orchestrator/spec/impl.h"

static const char *const policy_names[] = { "strict", "accept-new" };
static const char *const format_names[] = { "never", "if-blank" };
static const char *const mpi_format_names[] = { "openmpi", "mpich" };
static const char *const pairs_names[] = { "ring", "all" };
static const char *const rails_names[] = { "aligned", "all" };
static const char *const bw_tool_names[] = { "ib_write_bw", "ib_send_bw" };
static const char *const bw_memory_names[] = { "host", "cuda", "dmabuf" };
static const char *const lat_tool_names[] = { "ib_write_lat", "ib_send_lat" };
/* all_reduce_perf never reaches the model: lint makes it nccl-tests */
static const char *const nccl_tool_names[] = { "probe", "nccl-tests", "nccl-tests" };

/* Accumulate failures in *r so the fillers read as a list of keys. */
#define ADD(expr) (*r |= (expr) < 0)

/* A new array (list) or object under key in o, or appended to the array
 * o when key is NULL; o owns it from then on (filled after, it stands
 * where it was added). NULL, and r set, when out of memory. */
static struct json_object *add_child(struct json_object *o, const char *key, int list, int *r)
{
	struct json_object *c = list ? json_object_new_array() : json_object_new_object();
	int rc = -ENOMEM;

	if (c && key)
		rc = ln_json_add(o, key, c);	/* takes c, even when it fails */
	else if (c && json_object_array_add(o, c) < 0)
		json_object_put(c);
	else if (c)
		rc = 0;
	if (rc < 0) {
		*r = 1;
		return NULL;
	}
	return c;
}

/* v, or null when it is negative (not set: -1). */
static void add_int_or_null(struct json_object *o, const char *key, int64_t v, int *r)
{
	if (v < 0)
		ADD(ln_json_add(o, key, NULL));
	else
		ADD(ln_json_add_i64(o, key, v));
}

/* v, or null when it is 0 (not set). */
static void add_nonzero_or_null(struct json_object *o, const char *key, int64_t v, int *r)
{
	if (v)
		ADD(ln_json_add_i64(o, key, v));
	else
		ADD(ln_json_add(o, key, NULL));
}

static void ssh_json(struct json_object *o, const struct ln_ssh_spec *s, int *r)
{
	struct json_object *j;

	ADD(ln_json_add_str(o, "user", s->user));
	ADD(ln_json_add_i64(o, "port", s->port));
	ADD(ln_json_add_str(o, "identity", s->identity));
	ADD(ln_json_add_str(o, "known_hosts", s->known_hosts));
	ADD(ln_json_add_str(o, "host_key_policy", policy_names[s->host_key_policy]));
	if (s->jump_host) {
		j = add_child(o, "jump", 0, r);
		if (j) {
			ADD(ln_json_add_str(j, "host", s->jump_host));
			ADD(ln_json_add_str(j, "user", s->jump_user ? s->jump_user : s->user));
			ADD(ln_json_add_i64(j, "port", s->jump_port));
		}
	} else {
		ADD(ln_json_add(o, "jump", NULL));
	}
	ADD(ln_json_add_i64(o, "connect_timeout_ms", (int64_t)s->connect_timeout_ms));
	ADD(ln_json_add_i64(o, "timeout_ms", (int64_t)s->timeout_ms));
	ADD(ln_json_add_i64(o, "parallel", s->parallel));
}

static void port_json(struct json_object *o, const struct ln_rdma_port *p, int *r)
{
	ADD(ln_json_add_str(o, "device", p->device));
	ADD(ln_json_add_i64(o, "port", p->port));
	ADD(ln_json_add_str(o, "ip", p->ip));
	add_int_or_null(o, "gid_index", p->gid_index, r);
	ADD(ln_json_add_i64(o, "min_rate_bps", (int64_t)p->min_rate_bps));
	ADD(ln_json_add_str(o, "link_layer", ln_link_layer_name(p->link_layer)));
	add_nonzero_or_null(o, "mtu", (int64_t)p->mtu, r);
	ADD(ln_json_add_str(o, "rail", p->rail));
	if (p->n_gpus) {
		struct json_object *g = json_object_new_array();
		size_t k;

		for (k = 0; g && k < p->n_gpus; k++)
			if (json_object_array_add(g, json_object_new_int(p->gpus[k])) < 0)
				*r = 1;
		ADD(g ? ln_json_add(o, "gpus", g) : -ENOMEM);
	} else {
		ADD(ln_json_add(o, "gpus", NULL));
	}
}

static void node_json(struct json_object *o, const struct ln_node *n, int *r)
{
	struct json_object *a, *e;
	size_t k;

	ADD(ln_json_add_str(o, "name", n->name));
	ADD(ln_json_add_str(o, "address", n->address));
	ADD(ln_json_add_i64(o, "port", n->port));
	ADD(ln_json_add_str(o, "user", n->user));
	ADD(ln_json_add_i64(o, "gpus", n->gpus));
	ADD(ln_json_add_i64(o, "slots", n->slots));
	ADD(ln_json_add_str(o, "slurm_name", n->slurm_name));
	a = add_child(o, "rdma", 1, r);
	for (k = 0; a && !*r && k < n->n_rdma && (e = add_child(a, NULL, 0, r)); k++)
		port_json(e, &n->rdma[k], r);
}

static void namespace_json(struct json_object *o, const struct ln_namespace *n, int *r)
{
	ADD(ln_json_add_i64(o, "nsid", n->nsid));
	ADD(ln_json_add_str(o, "file", n->file));
	ADD(ln_json_add_i64(o, "size", (int64_t)n->size));
	ADD(ln_json_add_str(o, "device", n->device));
	if (n->file)
		ADD(ln_json_add_bool(o, "adopt", n->adopt));
}

static void target_json(struct json_object *o, const struct ln_spec *spec, const struct ln_target *t,
			int *r)
{
	struct json_object *ns, *h, *d, *e;
	size_t k;

	ADD(ln_json_add_str(o, "nqn", t->nqn));
	ADD(ln_json_add_str(o, "node", spec->nodes[t->node].name));
	ADD(ln_json_add_str(o, "transport", ln_transport_name(t->transport)));
	ADD(ln_json_add_str(o, "address", t->address));
	ADD(ln_json_add_i64(o, "service", t->service));
	if (t->hosts_any) {
		ADD(ln_json_add_str(o, "hosts", "any"));
	} else {
		h = add_child(o, "hosts", 1, r);
		for (k = 0; h && k < t->n_hosts; k++)
			if (json_object_array_add(h, json_object_new_string(
							     spec->nodes[t->hosts[k]].name)) < 0)
				*r = 1;
	}
	ADD(ln_json_add_bool(o, "hosts_given", t->hosts_given));
	ns = add_child(o, "namespaces", 1, r);
	for (k = 0; ns && !*r && k < t->n_namespaces && (e = add_child(ns, NULL, 0, r)); k++)
		namespace_json(e, &t->namespaces[k], r);
	if (t->dhchap.present) {
		/* The key directory only: lint never reads a secret. */
		d = add_child(o, "dhchap", 0, r);
		if (d) {
			ADD(ln_json_add_str(d, "key_dir", t->dhchap.key_dir));
			ADD(ln_json_add_str(d, "hash", ln_dhchap_hash_names[t->dhchap.hash]));
			ADD(ln_json_add_str(d, "dhgroup", ln_dhchap_group_names[t->dhchap.dhgroup]));
			ADD(ln_json_add_bool(d, "bidirectional", t->dhchap.bidirectional));
		}
	} else {
		ADD(ln_json_add(o, "dhchap", NULL));
	}
	ADD(ln_json_add_str(o, "tls", ln_tls_names[t->tls]));
}

static void initiator_json(struct json_object *o, const struct ln_spec *spec,
			   const struct ln_initiator *in, int *r)
{
	ADD(ln_json_add_str(o, "node", spec->nodes[in->node].name));
	ADD(ln_json_add_str(o, "target", spec->targets[in->target].nqn));
	add_nonzero_or_null(o, "nr_io_queues", (int64_t)in->nr_io_queues, r);
	add_nonzero_or_null(o, "queue_size", (int64_t)in->queue_size, r);
	add_int_or_null(o, "ctrl_loss_tmo_ms", in->ctrl_loss_tmo_ms, r);
	add_int_or_null(o, "reconnect_delay_ms", in->reconnect_delay_ms, r);
	ADD(ln_json_add_bool(o, "discovery", in->discovery));
	ADD(ln_json_add_bool(o, "gds", in->gds));
	if (in->mount.present) {
		struct json_object *m = add_child(o, "mount", 0, r);

		if (m) {
			ADD(ln_json_add_str(m, "path", in->mount.path));
			ADD(ln_json_add_str(m, "fs", in->mount.fs));
			ADD(ln_json_add_str(m, "format", format_names[in->mount.format]));
			ADD(ln_json_add_bool(m, "exec", in->mount.exec));
		}
	} else {
		ADD(ln_json_add(o, "mount", NULL));
	}
}

static void mpi_json(struct json_object *o, const struct ln_mpi_spec *m, int *r)
{
	struct json_object *mca;
	size_t k;

	ADD(ln_json_add_str(o, "hostfile", m->hostfile));
	ADD(ln_json_add_str(o, "format", mpi_format_names[m->format]));
	mca = add_child(o, "mca", 0, r);
	for (k = 0; mca && k < m->n_mca; k++)
		ADD(ln_json_add_str(mca, m->mca[k].key, m->mca[k].value));
}

/* A pairwise stage's max_errors; null: reported, not judged. */
static int max_errors_json(struct json_object *o, int max_errors)
{
	return max_errors < 0 ? ln_json_add(o, "max_errors", NULL) :
				ln_json_add_i64(o, "max_errors", max_errors);
}

/* The nccl stage's nccl-tests options and KPI thresholds into o. */
static void nccl_tests_json(struct json_object *o, const struct ln_validation *v, int *r)
{
	struct json_object *sc = json_object_new_array();
	size_t k;

	if (!sc)
		*r = 1;
	ADD(ln_json_add_str(o, "scope", v->nccl.tool == LN_NCCL_PROBE ? NULL :
			    v->nccl.scope == LN_NCCL_SCOPE_NODE ? "node" : "cluster"));
	for (k = 0; sc && k < v->nccl.n_scaling; k++)
		json_object_array_add(sc, json_object_new_int((int)v->nccl.scaling[k]));
	if (sc)
		ADD(ln_json_add(o, "scaling", sc));
	if (v->nccl.min_efficiency > 0)
		ADD(ln_json_add(o, "min_efficiency", json_object_new_double(v->nccl.min_efficiency)));
	else
		ADD(ln_json_add(o, "min_efficiency", NULL));
	add_nonzero_or_null(o, "max_latency_us", (int64_t)v->nccl.max_latency_us, r);
}

/* The nccl stage's options into o. */
static void nccl_json(struct json_object *o, const struct ln_validation *v, int *r)
{
	struct json_object *env = json_object_new_object();
	size_t k;

	if (!env)
		*r = 1;

	ADD(ln_json_add_str(o, "tool", nccl_tool_names[v->nccl.tool]));
	ADD(ln_json_add_str(o, "tests_dir", v->nccl.tests_dir));	/* NULL: null */
	ADD(ln_json_add_str(o, "op", ln_nccl_op_name(v->nccl.op)));
	ADD(ln_json_add_i64(o, "bytes", (int64_t)v->nccl.bytes));
	add_nonzero_or_null(o, "min_bytes", (int64_t)v->nccl.min_bytes, r);
	add_nonzero_or_null(o, "min_busbw_bps", (int64_t)v->nccl.min_busbw_bps, r);
	ADD(ln_json_add_str(o, "socket_ifname", v->nccl.socket_ifname));	/* NULL: null */
	for (k = 0; env && k < v->nccl.n_env; k++)
		ADD(ln_json_add_str(env, v->nccl.env[k].key, v->nccl.env[k].value));
	if (env)
		ADD(ln_json_add(o, "env", env));
	ADD(ln_json_add_i64(o, "timeout_ms", (int64_t)v->nccl.timeout_ms));
	nccl_tests_json(o, v, r);
	ADD(ln_json_add_str(o, "launcher", v->nccl.launcher == LN_NCCL_LAUNCHER_NONE ? "none" :
			    "mpirun"));
	ADD(ln_json_add_str(o, "nccl_lib", v->nccl.nccl_lib));	/* NULL: null */
	ADD(ln_json_add_str(o, "cuda_lib", v->nccl.cuda_lib));	/* NULL: null */
}

static void stage_json(struct json_object *o, const struct ln_validation *v, enum ln_stage s, int *r)
{
	ADD(ln_json_add_str(o, "stage", ln_stage_name(s)));
	switch (s) {
	case LN_STAGE_DEVICES:
		ADD(ln_json_add_str(o, "max_gpu_distance",
				    ln_pci_distance_name(v->devices.max_gpu_distance)));
		break;
	case LN_STAGE_COUNT:
		break;
	case LN_STAGE_RPING:
		ADD(ln_json_add_i64(o, "count", v->rping.count));
		ADD(ln_json_add_str(o, "pairs", pairs_names[v->rping.pairs]));
		ADD(ln_json_add_str(o, "rails", rails_names[v->rping.rails]));
		ADD(ln_json_add(o, "concurrent_rails",
				json_object_new_boolean(v->rping.concurrent_rails)));
		ADD(max_errors_json(o, v->rping.max_errors));
		ADD(ln_json_add_i64(o, "timeout_ms", (int64_t)v->rping.timeout_ms));
		break;
	case LN_STAGE_BANDWIDTH:
		ADD(ln_json_add_str(o, "tool", bw_tool_names[v->bandwidth.tool]));
		ADD(ln_json_add_i64(o, "size", (int64_t)v->bandwidth.size));
		ADD(ln_json_add_str(o, "pairs", pairs_names[v->bandwidth.pairs]));
		ADD(ln_json_add_str(o, "rails", rails_names[v->bandwidth.rails]));
		ADD(ln_json_add(o, "concurrent_rails",
				json_object_new_boolean(v->bandwidth.concurrent_rails)));
		if (v->bandwidth.min_kind == LN_MIN_RATE) {
			ADD(ln_json_add_i64(o, "min_bps", (int64_t)v->bandwidth.min_bps));
			ADD(ln_json_add(o, "min_fraction", NULL));
		} else if (v->bandwidth.min_kind == LN_MIN_FRACTION) {
			ADD(ln_json_add(o, "min_bps", NULL));
			char txt[32];

			/* As written ("0.9"), not as the nearest double prints. */
			snprintf(txt, sizeof(txt), "%.6g", v->bandwidth.min_fraction);
			ADD(ln_json_add(o, "min_fraction",
					json_object_new_double_s(v->bandwidth.min_fraction, txt)));
		} else {
			ADD(ln_json_add(o, "min_bps", NULL));
			ADD(ln_json_add(o, "min_fraction", NULL));
		}
		if (v->bandwidth.min_msg_rate > 0) {
			char txt[32];

			snprintf(txt, sizeof(txt), "%.6g", v->bandwidth.min_msg_rate);
			ADD(ln_json_add(o, "min_msg_rate",
					json_object_new_double_s(v->bandwidth.min_msg_rate, txt)));
			ADD(ln_json_add_i64(o, "msg_size", (int64_t)(v->bandwidth.msg_size ?
					    v->bandwidth.msg_size : LN_BW_MSG_SIZE)));
		} else {
			ADD(ln_json_add(o, "min_msg_rate", NULL));
			ADD(ln_json_add(o, "msg_size", NULL));
		}
		ADD(max_errors_json(o, v->bandwidth.max_errors));
		ADD(ln_json_add_i64(o, "port_base", v->bandwidth.port_base));
		ADD(ln_json_add_i64(o, "timeout_ms", (int64_t)v->bandwidth.timeout_ms));
		ADD(ln_json_add_str(o, "memory", bw_memory_names[v->bandwidth.memory]));
		ADD(ln_json_add_str(o, "perftest_dir", v->bandwidth.perftest_dir));	/* NULL: null */
		break;
	case LN_STAGE_LATENCY:
		ADD(ln_json_add_str(o, "tool", lat_tool_names[v->latency.tool]));
		ADD(ln_json_add_i64(o, "size", (int64_t)v->latency.size));
		ADD(ln_json_add_i64(o, "iterations", v->latency.iterations));
		ADD(ln_json_add_str(o, "pairs", pairs_names[v->latency.pairs]));
		ADD(ln_json_add_str(o, "rails", rails_names[v->latency.rails]));
		ADD(ln_json_add(o, "concurrent_rails",
				json_object_new_boolean(v->latency.concurrent_rails)));
		/* microseconds, as the keys say; null: no threshold */
		add_nonzero_or_null(o, "max_typical_us", (int64_t)v->latency.max_typical_us, r);
		add_nonzero_or_null(o, "max_p99_us", (int64_t)v->latency.max_p99_us, r);
		ADD(max_errors_json(o, v->latency.max_errors));
		ADD(ln_json_add_i64(o, "port_base", v->latency.port_base));
		ADD(ln_json_add_i64(o, "timeout_ms", (int64_t)v->latency.timeout_ms));
		ADD(ln_json_add_str(o, "perftest_dir", v->latency.perftest_dir));	/* NULL: null */
		break;
	case LN_STAGE_IO:
		ADD(ln_json_add_i64(o, "size", (int64_t)v->io.size));
		add_nonzero_or_null(o, "min_bps", (int64_t)v->io.min_bps, r);
		ADD(ln_json_add_bool(o, "destructive", v->io.destructive));
		ADD(ln_json_add_bool(o, "destructive_device", v->io.destructive_device));
		ADD(ln_json_add_i64(o, "timeout_ms", (int64_t)v->io.timeout_ms));
		break;
	case LN_STAGE_MPI:
		add_nonzero_or_null(o, "np", (int64_t)v->mpi.np, r);
		ADD(ln_json_add_i64(o, "timeout_ms", (int64_t)v->mpi.timeout_ms));
		break;
	case LN_STAGE_NCCL:
		nccl_json(o, v, r);
		break;
	case LN_STAGE_ACCESS:
		ADD(ln_json_add_i64(o, "timeout_ms", (int64_t)v->access.timeout_ms));
		break;
	}
}

int ln_spec_to_json(const struct ln_spec *spec, struct json_object **out)
{
	struct json_object *o = json_object_new_object(), *a, *e;
	size_t i;
	int failed = !o, *r = &failed;

	*out = NULL;
	if (failed)
		return -ENOMEM;
	ADD(ln_json_add_i64(o, "version", spec->version));
	ADD(ln_json_add_str(o, "cluster", spec->cluster));
	ADD(ln_json_add_bool(o, "persist", spec->persist));
	if ((a = add_child(o, "ssh", 0, r)))
		ssh_json(a, &spec->ssh, r);
	a = add_child(o, "nodes", 1, r);
	for (i = 0; a && !failed && i < spec->n_nodes && (e = add_child(a, NULL, 0, r)); i++)
		node_json(e, &spec->nodes[i], r);
	a = add_child(o, "targets", 1, r);
	for (i = 0; a && !failed && i < spec->n_targets && (e = add_child(a, NULL, 0, r)); i++)
		target_json(e, spec, &spec->targets[i], r);
	a = add_child(o, "initiators", 1, r);
	for (i = 0; a && !failed && i < spec->n_initiators && (e = add_child(a, NULL, 0, r)); i++)
		initiator_json(e, spec, &spec->initiators[i], r);
	if ((a = add_child(o, "mpi", 0, r)))
		mpi_json(a, &spec->mpi, r);
	if (spec->slurm.present && (a = add_child(o, "slurm", 0, r))) {
		ADD(ln_json_add_str(a, "node", spec->slurm.node));
		ADD(ln_json_add_bool(a, "drain", spec->slurm.drain));
		ADD(ln_json_add_bool(a, "resume", spec->slurm.resume));
	}
	a = add_child(o, "validation", 1, r);
	for (i = 0; a && !failed && i < spec->validation.n_order && (e = add_child(a, NULL, 0, r));
	     i++)
		stage_json(e, &spec->validation, spec->validation.order[i], r);
	if (failed) {
		json_object_put(o);
		return -ENOMEM;
	}
	*out = o;
	return 0;
}
