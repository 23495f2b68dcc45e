/* SPDX-License-Identifier: MIT */
/*
 * Private to the parser's files (spec.c, walker.c, expand.c, grammar.c and
 * the section handlers settings.c, nodes.c, storage.c, stages.c):
 * the parser's state, the walker that the key tables drive, range
 * expansion, and the handlers the tables name. The check, JSON and schema
 * passes never see libyaml and include only impl.h.
 */
#ifndef LN_SPEC_PARSER_H
#define LN_SPEC_PARSER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yaml.h>

#include "orchestrator/spec/hostlist.h"
#include "orchestrator/spec/impl.h"

/* ---- entries collected before expansion ------------------------------- */

/* Keys of one table at the most: entries keep a mark per key. */
#define MAX_FIELDS 16
/* The deepest a spec may nest (the deepest valid one nests 6 levels) and
 * its largest size in bytes (the 4,096-node benchmark, written out, is
 * 4.9 MB): docs/spec.md, "Limits". */
#define SPEC_MAX_DEPTH 64
#define SPEC_MAX_BYTES (64u << 20)

/* A port's gpus list as written (nodes.c): its items, each an index or a
 * range lo-hi with its mark, judged once the node entry's gpus is known. */
#define SPEC_PORT_GPU_ITEMS 64

struct gpu_item {
	uint16_t lo, hi;
	struct ln_mark mark;
};

struct rdma_entry {
	struct ln_rdma_port r;
	struct ln_mark m[MAX_FIELDS];
	struct gpu_item gpu[SPEC_PORT_GPU_ITEMS];
	size_t n_gpu;		/* past SPEC_PORT_GPU_ITEMS: refused */
};

struct node_entry {
	struct ln_node n;
	struct ln_mark m[MAX_FIELDS];
	struct rdma_entry *rdma;
	size_t n_rdma, alloc_rdma;
};

struct ns_entry {
	struct ln_namespace ns;
	struct ln_mark m[MAX_FIELDS];
};

struct target_entry {
	struct ln_target t;
	const char *node;
	struct ln_mark m[MAX_FIELDS];
	struct ns_entry *ns;
	size_t n_ns, alloc_ns;
	struct host_raw *hosts;
	size_t n_hosts, alloc_hosts;
};

/* The index of `discovery` in grammar.c's init_fields (its value's mark). */
#define LN_INIT_F_DISCOVERY 7
/* ... and of `gds` */
#define LN_INIT_F_GDS 8

struct init_entry {
	struct ln_initiator i;
	const char *node, *target;
	struct ln_mark m[MAX_FIELDS];
};

/* Nodes usually repeat the same device names port by port: see
 * share_device() in nodes.c. */
#define SHARED_DEVICES 16

struct parser {
	yaml_parser_t yp;
	yaml_event_t ev;
	int have;		/* ev must be deleted */
	int dead;		/* libyaml failed: stop at once */
	unsigned depth;		/* mappings and sequences open */
	FILE *in;		/* the spec file, read by a capped reader */
	size_t in_bytes;	/* read from it so far */
	int too_big;		/* past SPEC_MAX_BYTES: reading stopped */
	const char *data;	/* or the spec in memory, data_len bytes */
	size_t data_len;
	struct ln_spec *spec;
	struct ln_spec_store *st;
	struct ln_buf why;
	struct node_entry ne;	/* reused for every node entry */
	struct target_entry te;
	struct init_entry ie;
	uint64_t seen;		/* keys seen by the last spec_walk_map() */
	const char *last_device[SHARED_DEVICES];
	int stage_seen[LN_STAGE_COUNT];
	struct ln_mark stage_mark[LN_STAGE_COUNT];
};

/* ---- the walker (walker.c) -------------------------------------------- */

/* The field at byte offset off of obj. */
static inline void *spec_at(void *obj, size_t off)
{
	return (char *)obj + off;
}

/* The current event's mark (1-based). */
struct ln_mark spec_ev_mark(const struct parser *p);
/* Advance to the next event; < 0 when libyaml failed (reported). */
int spec_next(struct parser *p);
/* "a mapping", "a sequence", ...: what the current event starts. */
const char *spec_kind(const struct parser *p);
/* Consume the node whose first event is current. */
int spec_skip_node(struct parser *p);
/* Consume a pair whose key (a mapping or sequence) is current. */
int spec_skip_pair(struct parser *p);
/* Consume the value of the key that is current. */
int spec_skip_value(struct parser *p);
/* Whether a scalar reads as YAML's null. */
int spec_is_null(const char *v, size_t len, int plain);

/* The closest of n names (stride bytes apart) within a small edit
 * distance, or NULL; spec_did_you_mean() appends " (did you mean ...?)". */
const char *spec_closest(const char *word, const char *const *names, size_t n, size_t stride);
void spec_did_you_mean(struct ln_buf *b, const char *word, const char *const *names, size_t n,
		       size_t stride);
/* "a, b or c" from a NULL-terminated list. */
void spec_enum_list(struct ln_buf *b, const char *const *names);
/* A decimal integer of at most 12 digits, optionally negative. */
int spec_parse_int(const char *v, long long *out);

const struct field *spec_find_field(const struct table *t, const char *key);
/* Convert and check scalar v (len bytes) for field f into obj; problems
 * are reported. Returns 0, or < 0 when reading must stop. */
int spec_set_scalar(struct parser *p, const struct field *f, void *obj, const char *v, size_t len,
		    int plain, struct ln_mark m);
/* Walk the mapping whose start event is current against t into obj;
 * vmarks (may be NULL) receives each value's mark by field index; key
 * names the mapping in messages. Returns 0, or < 0 when reading must stop. */
int spec_walk_map(struct parser *p, const struct table *t, void *obj, struct ln_mark *vmarks,
		  const char *key);
/* One entry of a list (nodes, targets, initiators): spec_walk_map() of
 * f->sub into obj, then finish() to expand what the entry declared.
 * Returns 0, or < 0 when reading must stop. */
int spec_walk_entry(struct parser *p, const struct field *f, void *obj, struct ln_mark *vmarks,
		    const char *key, int (*finish)(struct parser *p));
/* Iterate the sequence, the value of field f, whose start event is
 * current: item() is called with each item's first event current. A
 * sequence with no item is reported ("'KEY' is empty: " if_empty) unless
 * if_empty is NULL. */
int spec_walk_seq(struct parser *p, const struct field *f,
		  int (*item)(struct parser *p, const struct field *f), const char *if_empty);

/* Zero and return element n of a growing array (NULL: out of memory). */
void *spec_grow(void **arr, size_t *alloc, size_t n, size_t elem);
#define GROW(arr, n, alloc) \
	((__typeof__(arr))spec_grow((void **)&(arr), &(alloc), (n), sizeof(*(arr))))
/* Slot n of a list section (nodes, targets, initiators) in both of its
 * arrays, grown as needed: *obj in the model's, a copy of *tmpl (the
 * entry's template), and *raw in the one the check pass reads, zeroed.
 * 0, or -ENOMEM. The caller counts the object once it is whole. */
int spec_grow_entry(void **arr, size_t *alloc, size_t elem, const void *tmpl, void **raw_arr,
		    size_t *raw_alloc, size_t raw_elem, size_t n, void **obj, void **raw);
#define GROW_ENTRY(arr, alloc, tmpl, raw_arr, raw_alloc, n, obj, raw) \
	spec_grow_entry((void **)&(arr), &(alloc), sizeof(*(arr)), (tmpl), (void **)&(raw_arr), \
			&(raw_alloc), sizeof(*(raw_arr)), (n), (void **)(obj), (void **)(raw))
/* Append a copy of *src (an element of arr's type) and count it in *n;
 * 0 or -ENOMEM. */
int spec_append(void **arr, size_t *n, size_t *alloc, const void *src, size_t elem);
#define APPEND(arr, n, alloc, src) \
	spec_append((void **)&(arr), &(n), &(alloc), (src), sizeof(*(arr)))

/* ---- ranges (expand.c) ------------------------------------------------ */

/* The lead field of an entry ("name" of a node, "nqn" of a target): its
 * count decides how many objects the entry makes. */
struct lead {
	const char *raw, *key;
	struct ln_mark mark;
	struct ln_hostlist hl;
	int parsed;		/* hl holds the range */
	size_t n;		/* values: 1 if not a range, 0 if it cannot expand */
};

/* One other field of the entry, expanded in step with the lead. */
struct rng {
	const char *raw;
	const char *key;
	enum spat pat;
	struct ln_mark mark;
	struct ln_hostlist hl;
	int is_range, bad;
};

/* Open the lead; returns l->n, which is 0 when raw is NULL (the entry
 * lacks it: reported as missing), when it cannot expand (reported) or
 * when the total of `what` (have so far) would pass the cap. */
size_t spec_lead_open(struct parser *p, struct lead *l, const char *raw, const char *key,
		   struct ln_mark m, size_t have, const char *what);
/* The i-th value into *out (the raw value when not a range), copied to
 * the arena. It is checked against pat; a failure is reported unless
 * *quiet, which it then sets (once per entry, not once per object). */
int spec_lead_get(struct parser *p, struct lead *l, size_t i, enum spat pat, int *quiet,
		  const char **out);
void spec_lead_release(struct lead *l);

void spec_rng_init(struct parser *p, struct rng *r, const char *raw, const char *key,
		   enum spat pat, struct ln_mark mark, const struct lead *l);
/* The i-th value (NULL when the field is absent or broken). */
const char *spec_rng_get(struct parser *p, struct rng *r, size_t i);
void spec_rng_release(struct rng *r);

/* ---- handlers named by the key tables (grammar.c) --------------------- */

/* They are declared by their type (impl.h): field_handler for a mapping
 * or a list, scalar_handler for a scalar with its own conversion. */
/* nodes.c */
field_handler spec_parse_nodes, spec_parse_rdma, spec_parse_port_gpus;
scalar_handler spec_parse_mtu;
/* storage.c */
field_handler spec_parse_targets, spec_parse_namespaces, spec_parse_hosts, spec_parse_initiators;
scalar_handler spec_parse_fs;
/* settings.c; spec_parse_mpi walks the mpi mapping (f->sub), keeping where
 * the hostfile's value is. */
scalar_handler spec_parse_version, spec_parse_jump;
field_handler spec_parse_mpi, spec_parse_mca, spec_parse_nccl_env, spec_parse_slurm,
	spec_parse_nccl_scaling;
/* stages.c */
field_handler spec_parse_validation;
scalar_handler spec_parse_bw_min;
scalar_handler spec_parse_nccl_bytes, spec_parse_nccl_efficiency, spec_parse_bw_msg_rate;

#endif
