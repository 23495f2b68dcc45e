/* SPDX-License-Identifier: MIT */
/*
 * Answers are untrusted input (answer.h): the per-verb limits, the scan
 * that checks them on the raw bytes before json-c allocates (json-c
 * makes a hash table for every object: 6 MiB of `[{},{},...]` cost
 * 1.6 GB resident before this), the bounded parse, and the schema of the
 * facts answer that decides what the controller keeps of it.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/transport/answer.h"

#define KiB (1u << 10)
#define MiB (1u << 20)

/*
 * Measured on the agent's answers for the fixture nodes (tests/fixtures/
 * agent) and sized for a 1,000-node cluster with a margin:
 *   facts       2.9 KB, 185 elements, depth 8 on the fixture target; a
 *               target node allowing 1,000 hosts on 8 subsystems holds
 *               about 10,000 host NQN strings (about 700 KB); the HGX
 *               H100 fixture (8 GPUs, 10 RDMA devices) 12 KB, 190 objects
 *               and arrays, depth 7 in topology, which lists at most 256
 *               GPUs and 256 RDMA devices (about 5,000 of them)
 *   plan/apply  4.1 KB for 20 changes; 10,000 changes for that target
 *               node (about 2 MB, 90,000 elements)
 *   run         validate asks for at most 4 MiB of output, which JSON
 *               may escape to 6 bytes a byte (\u00XX)
 * The envelope ({"protocol","id","exit","answer"}) counts in each.
 * docs/agent-protocol.md, "Answer limits", shows this table.
 */
static const struct ln_answer_limits table[] = {
	/* name               bytes      depth elements  containers string */
	{ "version",          64 * KiB,  8,    1024,     64,        4 * KiB },
	{ "facts",            4 * MiB,   16,   65536,    8192,      8 * KiB },
	{ "facts --counters", 1 * MiB,   16,   16384,    1024,      8 * KiB },
	{ "facts --discovery", 8 * MiB,  16,   262144,   32768,     8 * KiB },
	{ "facts --refused",  256 * KiB, 8,    4096,     64,        8 * KiB },
	{ "plan",             16 * MiB,  16,   262144,   32768,     64 * KiB },
	{ "apply",            16 * MiB,  16,   262144,   32768,     64 * KiB },
	{ "teardown",         16 * MiB,  16,   262144,   32768,     64 * KiB },
	{ "run",              25 * MiB,  8,    1024,     64,        24 * MiB + 64 },
	/* any other verb (seal, restore): as small as version */
	{ "other",            64 * KiB,  8,    1024,     64,        4 * KiB },
};
#define N_LIMITS (sizeof(table) / sizeof(table[0]))

const struct ln_answer_limits *ln_answer_limits_table(size_t *n)
{
	*n = N_LIMITS;
	return table;
}

const struct ln_answer_limits *ln_answer_limits_for(const char *const *args)
{
	size_t i, vl;

	if (!args || !args[0])
		return &table[N_LIMITS - 1];
	vl = strlen(args[0]);
	/* "facts --counters": the verb and its first option; else the verb */
	for (i = 0; i < N_LIMITS - 1; i++)
		if (args[1] && !strncmp(table[i].name, args[0], vl) && table[i].name[vl] == ' ' &&
		    !strcmp(table[i].name + vl + 1, args[1]))
			return &table[i];
	for (i = 0; i < N_LIMITS - 1; i++)
		if (!strcmp(table[i].name, args[0]))
			return &table[i];
	return &table[N_LIMITS - 1];
}

static int over(const struct ln_answer_limits *l, size_t limit, const char *what,
		struct ln_buf *err)
{
	ln_buf_addf(err, "answer over the %s limit of %zu %s", l->name, limit, what);
	return -EMSGSIZE;
}

int ln_answer_scan(const struct ln_answer_limits *l, const char *s, size_t n,
		   struct ln_buf *err)
{
	size_t i, elements = 0, containers = 0, run = 0;
	unsigned depth = 0;
	int in_str = 0, esc = 0, in_scalar = 0;

	/* Not a validator (json-c is, afterwards): it counts what json-c
	 * would build from these bytes, so nothing over the limits is. */
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"') {
				in_str = 0;
				continue;
			}
			if (++run > l->string)
				return over(l, l->string, "bytes in a string", err);
			continue;
		}
		switch (c) {
		case '"':
			in_str = 1;
			in_scalar = 0;
			run = 0;
			elements++;
			break;
		case '{':
		case '[':
			in_scalar = 0;
			elements++;
			if (++containers > l->containers)
				return over(l, l->containers, "objects and arrays", err);
			if (++depth > l->depth)
				return over(l, l->depth, "levels of nesting", err);
			break;
		case '}':
		case ']':
			in_scalar = 0;
			if (depth)
				depth--;
			break;
		case ',':
		case ':':
		case ' ':
		case '\t':
		case '\r':
		case '\n':
			in_scalar = 0;
			break;
		default:
			/* a number or a literal: one element per run of bytes */
			if (!in_scalar) {
				in_scalar = 1;
				run = 0;
				elements++;
			}
			if (++run > l->string)
				return over(l, l->string, "bytes in a number or literal", err);
			break;
		}
		if (elements > l->elements)
			return over(l, l->elements, "elements", err);
	}
	return 0;
}

int ln_answer_parse(const struct ln_answer_limits *l, const char *s, size_t n,
		    struct json_object **out, struct ln_buf *err)
{
	struct json_tokener *tok = NULL;
	struct json_object *o = NULL;
	enum json_tokener_error jerr;
	size_t used;
	int r;

	*out = NULL;
	if (n > l->bytes) {
		ln_buf_addf(err, "answer of %zu bytes over the %s limit of %zu", n, l->name,
			    l->bytes);
		return -EMSGSIZE;
	}
	r = ln_answer_scan(l, s, n, err);
	if (r < 0)
		return r;
	/* json-c's own bound too, one level above ours (its count starts at 1) */
	tok = json_tokener_new_ex((int)l->depth + 1);
	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, s, (int)n);
	jerr = json_tokener_get_error(tok);
	used = (size_t)json_tokener_get_parse_end(tok);
	r = -LN_EPROTO;
	if (!o || jerr != json_tokener_success) {
		ln_buf_addf(err, "invalid JSON at offset %zu: %s", used,
			    jerr == json_tokener_continue ? "unexpected end of input"
							  : json_tokener_error_desc(jerr));
		goto out;
	}
	while (used < n && strchr(" \t\r\n", s[used]))
		used++;
	if (used < n) {
		ln_buf_addf(err, "invalid JSON at offset %zu: trailing bytes", used);
		goto out;
	}
	if (!json_object_is_type(o, json_type_object)) {
		ln_buf_addstr(err, "the answer is not a JSON object");
		goto out;
	}
	*out = o;
	o = NULL;
	r = 0;
out:
	json_object_put(o);
	json_tokener_free(tok);
	return r;
}

/*
 * The facts answer's schema (docs/agent-protocol.md, "facts"): each
 * member's types; an array's element type and, for objects, their
 * members. Every member may also be null (a section the agent could not
 * read), which is what a wrong type becomes.
 */
enum {
	T_STR = 1 << json_type_string,
	T_INT = 1 << json_type_int,
	T_NUM = 1 << json_type_int | 1 << json_type_double,
	T_BOOL = 1 << json_type_boolean,
	T_OBJ = 1 << json_type_object,
	T_ARR = 1 << json_type_array,
};

struct field {
	const char *name;	/* NULL ends a list; "*" any member name (a map) */
	unsigned types;
	unsigned elem;		/* an array's element type */
	const struct field *sub; /* the members of an object, or of an array's objects */
};

#define END { NULL, 0, 0, NULL }
#define STR(n) { n, T_STR, 0, NULL }
#define INT(n) { n, T_INT, 0, NULL }
#define BOOL(n) { n, T_BOOL, 0, NULL }
#define STRS(n) { n, T_ARR, T_STR, NULL }
#define OBJS(n, s) { n, T_ARR, T_OBJ, s }

static const struct field gid[] = { INT("index"), STR("gid"), STR("type"), STR("netdev"), END };
static const struct field rdma_port[] = {
	INT("port"), STR("state"), STR("phys_state"), STR("rate"),
	{ "rate_gbps", T_NUM, 0, NULL }, STR("link_layer"), INT("active_mtu"),
	OBJS("gids", gid), END
};
static const struct field rdma[] = { STR("device"), STR("node_guid"), OBJS("ports", rdma_port),
				     END };
static const struct field netdev[] = { STR("name"), STR("mac"), INT("mtu"), STR("operstate"),
				       STRS("addresses"), END };
static const struct field nvme_ns[] = { INT("nsid"), STR("block"), INT("size_bytes"), END };
static const struct field nvme[] = {
	STR("name"), STR("transport"), STR("address"), STR("service"), STR("subsysnqn"),
	STR("host_nqn"), STR("state"), OBJS("namespaces", nvme_ns), END
};
/* the GPU facts program's (agents/agent/run/gpu_nvml.c), bounded below */
static const struct field gpu_device[] = {
	INT("index"), STR("uuid"), STR("model"), STR("bus_id"), INT("numa_node"),
	INT("memory_bytes"), BOOL("persistence"), INT("nvlink_up"), INT("nvlink_total"),
	INT("ecc_volatile_uncorrected"), BOOL("row_remap_pending"), BOOL("row_remap_failed"),
	STRS("errors"), STRS("dropped"), END
};
static const struct field gpus[] = {
	INT("count"), STRS("models"), STR("source"), STR("driver_version"), STR("cuda_version"),
	STR("nvml"), STR("program"), OBJS("devices", gpu_device), END
};
static const struct field nvmet_ns[] = { INT("nsid"), STR("device_path"), BOOL("enable"),
					 BOOL("buffered_io"), END };
static const struct field nvmet_sub[] = { STR("nqn"), BOOL("allow_any_host"),
					  STRS("allowed_hosts"), OBJS("namespaces", nvmet_ns), END };
static const struct field nvmet_port[] = { INT("id"), STR("transport"), STR("address"),
					   STR("service"), STR("family"), STRS("subsystems"),
					   END };
static const struct field nvmet[] = {
	BOOL("configfs"), BOOL("auth"), OBJS("subsystems", nvmet_sub), OBJS("ports", nvmet_port),
	STRS("hosts"), END
};
static const struct field acs[] = { INT("ctrl"), BOOL("req_redir"), BOOL("cmplt_redir"),
				    BOOL("egress_ctrl"), END };
static const struct field pci_hop[] = { STR("bus_id"), STR("type"), { "acs", T_OBJ, 0, acs },
					END };
#define PCI_PLACE INT("numa_node"), STR("host_bridge"), OBJS("path", pci_hop), \
		  INT("iommu_group"), STR("iommu_type")
static const struct field topo_gpu[] = { INT("index"), STR("bus_id"), STR("vendor"),
					 STR("device"), PCI_PLACE, END };
static const struct field topo_nic[] = { STR("device"), STR("bus_id"), STR("vendor"),
					 STR("device_id"), PCI_PLACE, END };
static const struct field iommu[] = { BOOL("present"), STR("cmdline"), END };
static const struct field dmabuf[] = { BOOL("kernel"), BOOL("gpu_open_modules"), BOOL("verbs"),
				       STR("why"), END };
static const struct field peer_memory[] = { BOOL("nvidia_peermem"), BOOL("nv_peer_mem"),
					    { "dmabuf", T_OBJ, 0, dmabuf }, END };
static const struct field topology[] = {
	OBJS("gpus", topo_gpu), OBJS("nics", topo_nic), { "iommu", T_OBJ, 0, iommu },
	{ "peer_memory", T_OBJ, 0, peer_memory }, END
};
static const struct field cufile[] = { STR("path"), BOOL("allow_compat_mode"),
				       STRS("rdma_dev_addr_list"), STR("error"), END };
static const struct field gds[] = { BOOL("nvidia_fs"), { "cufile", T_OBJ, 0, cufile }, END };
static const struct field owned_cluster[] = { INT("objects"), STR("updated"), STR("persistent"),
					      END };
static const struct field owned[] = { { "*", T_OBJ, 0, owned_cluster }, END };
static const struct field facts[] = {
	INT("protocol"), STR("root"), STR("hostname"), STR("machine_id"), STR("product_uuid"),
	STR("kernel"), STR("host_nqn"), STR("host_id"),
	OBJS("rdma", rdma), OBJS("netdevs", netdev), OBJS("nvme", nvme),
	{ "gpus", T_OBJ, 0, gpus }, STRS("modules"), { "nvmet", T_OBJ, 0, nvmet },
	{ "topology", T_OBJ, 0, topology }, { "gds", T_OBJ, 0, gds },
	BOOL("systemd"), { "owned", T_OBJ, 0, owned }, STRS("warnings"), END
};

/* plan, apply and teardown answer one shape (docs/agent-protocol.md) */
static const struct field change[] = { STR("action"), STR("kind"), STR("id"), STR("detail"),
				       STR("error"), END };
static const struct field counts[] = { INT("create"), INT("change"), INT("remove"), INT("ok"),
				       INT("error"), END };
static const struct field kept[] = { STR("nqn"), STR("reason"), END };
static const struct field changes[] = {
	INT("protocol"), STR("mode"), STR("cluster"), OBJS("changes", change), STRS("warnings"),
	{ "summary", T_OBJ, 0, counts }, BOOL("converged"), OBJS("kept", kept), END
};

/* validate's `run` answer: only what the controller reads, the probe's
 * fate and its output. `probe`, `path` and `argv` are the request's own
 * words, never taken back from the node. */
static const struct field run_answer[] = {
	INT("protocol"), INT("exit_status"), STR("signal"), BOOL("timed_out"),
	INT("duration_ms"), STR("output"), INT("output_bytes"), BOOL("truncated"), END
};

/* Bounds some members have beyond the answer's own: an array's most
 * elements (the rest dropped), a string's most bytes (a longer one is
 * null, as a wrong type is). */
static const struct bound {
	const struct field *in;	/* the member list it is in */
	const char *name;
	size_t max;
} bounds[] = {
	/* at most 64 GPUs, 8 errors each; NVML's names and UUIDs under 96
	 * bytes, its driver version under 80 */
	{ gpus, "models", 64 }, { gpus, "devices", 64 }, { gpus, "driver_version", 79 },
	{ gpus, "cuda_version", 31 }, { gpus, "nvml", 512 }, { gpus, "program", 16 },
	{ gpu_device, "uuid", 95 }, { gpu_device, "model", 95 }, { gpu_device, "bus_id", 16 },
	{ gpu_device, "errors", 8 }, { gpu_device, "dropped", 13 },
	/* the agent's caps (gds.c) */
	{ cufile, "rdma_dev_addr_list", 64 }, { cufile, "path", 64 }, { cufile, "error", 128 },
	/* the agent's own caps (LN_TOPO_MAX_DEVICES): a node sending more
	 * would have the controller build a GPU x (GPU + NIC) matrix of
	 * millions of cells; PCIe has no path of 32 bridges */
	{ topology, "gpus", 256 }, { topology, "nics", 256 }, { topo_gpu, "path", 32 },
	{ topo_nic, "path", 32 }, { iommu, "cmdline", 4096 },
	/* a run's output: what validate asks for (--max-output), no more;
	 * "SIGRTMIN+15" is the longest signal name */
	{ run_answer, "output", LN_ANSWER_RUN_OUTPUT_MAX }, { run_answer, "signal", 15 },
};

static size_t bound_of(const struct field *in, const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
		if (bounds[i].in == in && !strcmp(bounds[i].name, name))
			return bounds[i].max;
	return 0;
}

static int of_type(struct json_object *v, unsigned types)
{
	/* json-c reads NaN and Infinity, which are not JSON: never kept */
	if (json_object_is_type(v, json_type_double) && !isfinite(json_object_get_double(v)))
		return 0;
	return v && (types & (1u << json_object_get_type(v)));
}

static struct json_object *known(struct json_object *o, const struct field *fields);

/* v as the schema's f allows it (max: its bound, or 0): a copy of what
 * is known, or NULL. */
static struct json_object *keep(struct json_object *v, const struct field *f, size_t max)
{
	struct json_object *a;
	size_t i, n;

	if (!of_type(v, f->types))
		return NULL;
	if (max && json_object_is_type(v, json_type_string) &&
	    (size_t)json_object_get_string_len(v) > max)
		return NULL;
	if (json_object_is_type(v, json_type_object))
		return known(v, f->sub);
	if (!json_object_is_type(v, json_type_array))
		return json_object_get(v);	/* scalars are immutable: shared */
	a = json_object_new_array();
	n = json_object_array_length(v);
	if (max && n > max)
		n = max;
	for (i = 0; a && i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i), *k;

		if (!of_type(e, f->elem))
			continue;
		k = f->sub ? known(e, f->sub) : json_object_get(e);
		if (k && json_object_array_add(a, k) < 0)
			json_object_put(k);
	}
	return a;
}

static struct json_object *known(struct json_object *o, const struct field *fields)
{
	struct json_object *out = json_object_new_object();
	const struct field *f;

	if (!out)
		return NULL;
	json_object_object_foreach(o, key, val) {
		for (f = fields; f->name; f++)
			if (!strcmp(f->name, "*") || !strcmp(f->name, key))
				break;
		if (!f->name)
			continue;	/* unknown: dropped */
		/* null stays null; a wrong type becomes null */
		json_object_object_add(out, key, keep(val, f, bound_of(fields, f->name)));
	}
	return out;
}

struct json_object *ln_answer_known_facts(struct json_object *o)
{
	if (!json_object_is_type(o, json_type_object))
		return NULL;
	return known(o, facts);
}

struct json_object *ln_answer_known_changes(struct json_object *o)
{
	if (!json_object_is_type(o, json_type_object))
		return NULL;
	return known(o, changes);
}

/* A signal's name as the agent writes it ("SIGKILL", "SIGRTMIN+3"). */
static int signal_name(const char *s)
{
	return !strncmp(s, "SIG", 3) && s[3] &&
	       strspn(s + 3, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-") == strlen(s + 3);
}

/* o's integer member name, set to null unless it is within [lo, hi]. */
static void int_within(struct json_object *o, const char *name, int64_t lo, int64_t hi)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(o, name, &v) || !v)
		return;
	n = json_object_get_int64(v);
	if (n < lo || n > hi)
		json_object_object_add(o, name, NULL);
}

static int control_byte(unsigned char c)
{
	return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

/* The run's output with every control byte but TAB, LF and CR (NUL,
 * ESC, BEL, DEL: what could end a C string early or act on a terminal)
 * written '?': the parsers and every printer see text. */
static void output_printable(struct json_object *o)
{
	struct json_object *v, *t;
	const char *s;
	char *c;
	size_t i, n;

	if (!json_object_object_get_ex(o, "output", &v) || !v)
		return;
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	for (i = 0; i < n; i++)
		if (control_byte((unsigned char)s[i]))
			break;
	if (i == n)
		return;
	c = malloc(n + 1);
	if (!c) {
		json_object_object_add(o, "output", NULL);
		return;
	}
	for (i = 0; i < n; i++)
		c[i] = control_byte((unsigned char)s[i]) ? '?' : s[i];
	t = json_object_new_string_len(c, (int)n);
	free(c);
	json_object_object_add(o, "output", t);
}

struct json_object *ln_answer_known_run(struct json_object *o)
{
	struct json_object *k, *v;

	if (!json_object_is_type(o, json_type_object))
		return NULL;
	k = known(o, run_answer);
	if (!k)
		return NULL;
	/* what a process's end can be, and a duration or a count never
	 * below zero: anything else is null, as a wrong type is */
	int_within(k, "exit_status", 0, 255);
	int_within(k, "duration_ms", 0, INT64_MAX);
	int_within(k, "output_bytes", 0, INT64_MAX);
	if (json_object_object_get_ex(k, "signal", &v) && v &&
	    !signal_name(json_object_get_string(v)))
		json_object_object_add(k, "signal", NULL);
	output_printable(k);
	return k;
}
