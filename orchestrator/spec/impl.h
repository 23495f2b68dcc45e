/* SPDX-License-Identifier: MIT */
/*
 * Private to the files of orchestrator/spec/: the key tables that drive
 * the event walker (and from which the JSON Schema is generated), the
 * store that owns the model's memory, and the diagnostics list. Nothing
 * outside the spec module includes this; the parser's own state is in
 * parser.h.
 */
#ifndef LN_SPEC_IMPL_H
#define LN_SPEC_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "orchestrator/spec/spec.h"

/* ---- storage ---------------------------------------------------------- */

/* A bump allocator: the model's strings and small arrays live in a few
 * large chunks, so a 4,096-node spec costs its bytes, not malloc's
 * per-object overhead, and freeing is one walk over the chunks. */
struct spec_arena_chunk;
struct spec_arena {
	struct spec_arena_chunk *head;
	char *cur;			/* aligned objects */
	size_t left;
	char *scur;			/* strings: byte-packed, no alignment */
	size_t sleft;
};

void *spec_arena_alloc(struct spec_arena *a, size_t n);
char *spec_arena_strndup(struct spec_arena *a, const char *s, size_t n);
void spec_arena_release(struct spec_arena *a);

/* Open-addressing set of uint32 indexes, hashed and compared through the
 * caller's callbacks, so one structure serves names, (address, port)
 * pairs and (node, path) pairs without building composite keys. Sized up
 * front (no rehash): every use knows its element count. */
struct spec_idxmap {
	uint32_t *slot;			/* index + 1; 0 = empty */
	size_t mask;
	uint64_t (*hash)(const void *ctx, uint32_t idx);
	int (*eq)(const void *ctx, uint32_t a, uint32_t b);
	const void *ctx;
};

int spec_idxmap_init(struct spec_idxmap *m, size_t n, uint64_t (*hash)(const void *, uint32_t),
		int (*eq)(const void *, uint32_t, uint32_t), const void *ctx);
/* Insert idx; returns -1 when inserted, else the index already there. */
long spec_idxmap_insert(struct spec_idxmap *m, uint32_t idx);
/* The index whose element matches key (hash h, as the hash callback would
 * give), or -1. */
long spec_idxmap_find(const struct spec_idxmap *m, uint64_t h,
		 int (*match)(const void *ctx, uint32_t idx, const void *key), const void *key);
void spec_idxmap_release(struct spec_idxmap *m);

uint64_t spec_hash_str(const char *s, uint64_t h);
#define HASH_SEED 0xcbf29ce484222325ull

/* Both strings there and equal. */
static inline int spec_streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* idx[0..n) = first .. first + n - 1, sorted by cmp (through ctx, like the
 * index's callbacks), equal elements by index: a total order, so every
 * sort gives the same result. */
void spec_sort_idx(uint32_t *idx, size_t n, size_t first,
		   int (*cmp)(const void *ctx, uint32_t a, uint32_t b), const void *ctx);

/* ---- diagnostics ------------------------------------------------------ */

struct diag {
	uint32_t line, col;
	uint32_t seq;			/* keeps equal positions in report order */
	char *msg;
};

/* What the parser leaves for the check pass: references by name, with
 * the marks of the values that made them. Freed once the load ends. */
struct node_raw {
	struct ln_mark name, address;
};

struct target_raw {
	const char *node;
	struct ln_mark nqn, node_mark, address, hosts;
	size_t n_hosts;			/* raw host names of this target */
};

struct host_raw {
	const char *name;
	struct ln_mark mark;
};

struct init_raw {
	const char *node, *target;
	struct ln_mark node_mark, target_mark;
};

struct ln_spec_store {
	struct spec_arena arena;
	struct ln_buf scratch;

	struct diag *diags;
	size_t n_diags, alloc_diags;
	size_t n_dropped;		/* past the cap of 1000 messages */
	struct ln_buf warnings;		/* spec_warn's lines: spec->warnings */
	int version_bad;		/* report only the version problem */

	/* Growing arrays; the model's pointers are set once parsing ends. */
	size_t alloc_nodes, alloc_targets, alloc_initiators;
	struct ln_rdma_port *ports;
	size_t n_ports, alloc_ports;
	struct ln_namespace *nss;
	size_t n_nss, alloc_nss;
	struct ln_setting *mca;
	size_t alloc_mca;
	struct ln_setting *nccl_env;
	size_t alloc_nccl_env;
	struct node_raw *node_raw;
	size_t alloc_node_raw;
	struct target_raw *target_raw;
	size_t alloc_target_raw;
	struct host_raw *hosts_raw;
	size_t n_hosts_raw, alloc_hosts_raw;
	struct init_raw *init_raw;
	size_t alloc_init_raw;
	size_t *host_idx;		/* storage for every target's hosts[] */

	/* Lookups that outlive the load. */
	struct spec_idxmap node_by_name;
	struct spec_idxmap target_by_nqn;
};

/* Record "line:col: message" (mark is 1-based; 0/0 reads as 1:1). */
void spec_diag(struct ln_spec *spec, struct ln_mark m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record "file:line:col: warning: message" (spec->warnings): accepted,
 * but better written otherwise. At most 64 KiB of them are kept. */
void spec_warn(struct ln_spec *spec, struct ln_mark m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The messages kept; past them only a count (spec_diag). */
#define SPEC_MAX_DIAGS 1000
/* Whether spec_diag keeps no more messages. */
int spec_diags_full(const struct ln_spec *spec);

/* The second pass: defaults that depend on other sections, references,
 * duplicates and the semantic rules. Reports through spec_diag. */
int spec_check(struct ln_spec *spec);

/* ---- key tables ------------------------------------------------------- */

enum ftype {
	FT_STR,		/* any string (pattern by check) */
	FT_UINT,	/* unsigned, min..max, stored as unsigned */
	FT_U16,		/* 1..65535 (or min..max), stored as uint16_t */
	FT_INT,		/* int, min..max */
	FT_BOOL,	/* true | false, stored as int */
	FT_SIZE,	/* uint64_t bytes */
	FT_RATE,	/* uint64_t bits/s */
	FT_DURATION,	/* uint64_t ms (F_US: microseconds) */
	FT_ENUM,	/* one of names[], stored as int */
	FT_MAP,		/* nested mapping at off, described by sub */
	FT_CUSTOM,	/* handled by fn (sequences, special scalars) */
};

/* String patterns: every string that can reach a path, a configfs name or
 * a command line has one. */
enum spat {
	SP_NONE = 0,
	SP_CLUSTER,	/* [A-Za-z0-9][A-Za-z0-9_-]{0,62} */
	SP_NODE,	/* [A-Za-z0-9][A-Za-z0-9._-]{0,62}, no ".." */
	SP_USER,	/* [a-z_][a-z0-9_-]{0,31} */
	SP_HOST,	/* IPv4, IPv6 or an RFC 1123 host name */
	SP_IP,		/* numeric IPv4 or IPv6 */
	SP_DEVICE,	/* RDMA device: [A-Za-z0-9_-][A-Za-z0-9_.-]{0,63} */
	SP_RAIL,	/* rail name: [A-Za-z0-9][A-Za-z0-9_.-]{0,31} */
	SP_PATH,	/* absolute, [A-Za-z0-9._+,@=:/-], no "." or ".." parts */
	SP_OWNPATH,	/* SP_PATH that llmnet writes: not a system place (common/places.c) */
	SP_LOCALPATH,	/* SP_PATH, or "~/" and a relative SP_PATH */
	SP_DEVPATH,	/* SP_PATH under /dev/ */
	SP_NQN,		/* ln_nqn_check() */
	SP_FS,		/* handled as an enum */
	SP_MCA_KEY,	/* [a-z][a-z0-9_]{0,63} */
	SP_MCA_VALUE,	/* [A-Za-z0-9_.,:/@+^=-]{1,255} */
	SP_JUMP,	/* [user@]host[:port] */
	SP_NCCL_VALUE,	/* [A-Za-z0-9_.,:^=+-]{1,127} (common/nccl_env.c) */
	SP_IFNAME,	/* NCCL_SOCKET_IFNAME: [A-Za-z0-9_.,:^=-]{1,255} */
	SP_COUNT,
};

#define F_REQUIRED 0x1u		/* must be written */
#define F_RANGE 0x2u		/* may hold a range, expanded in step with the entry */
#define F_THRESHOLD 0x4u	/* a pass/fail threshold (for "cannot have one") */
#define F_WHOLE_SECONDS 0x8u	/* duration must be whole seconds */
#define F_NULL_NAME 0x10u	/* FT_ENUM: a plain `null` is the name "null", not no value */
#define F_US 0x20u		/* FT_DURATION kept in microseconds (a field ending in _us) */

struct parser;
struct field;

/* A value handler: the value's first event is current; it consumes the
 * whole value. Returns 0, or < 0 when reading must stop. */
typedef int field_handler(struct parser *p, const struct field *f, void *obj);
typedef field_handler *field_fn;
/* A scalar handler: converts and checks v, reports through spec_diag. */
typedef int scalar_handler(struct parser *p, const struct field *f, void *obj, const char *v,
			   struct ln_mark m);
typedef scalar_handler *scalar_fn;

struct table {
	const char *what;		/* "node", "rdma port": used in messages */
	const struct field *fields;
	size_t n_fields;
	size_t mark_off;		/* offset + 1 of a struct ln_mark to set; 0: none */
	size_t present_off;		/* offset + 1 of an int set to 1; 0: none */
	const char *doc;
	/* Rules across keys the parser checks by hand, for the schema:
	 * "namespace" (file+size or device), the only one. */
	const char *schema_rule;
	/* Keys refused by name with a reason (NULL-terminated; may be NULL). */
	const struct refused_key *refused;
};

struct refused_key {
	const char *key;
	const char *why;
};

struct field {
	const char *key;
	enum ftype type;
	size_t off;
	unsigned flags;
	enum spat pat;
	long long min, max;		/* FT_UINT, FT_U16, FT_INT */
	const char *const *names;	/* FT_ENUM (NULL-terminated) */
	/* FT_ENUM: values known but not supported yet, each refused with
	 * its reason rather than as unknown; FT_SIZE, FT_RATE, FT_DURATION:
	 * forms of value not supported yet, refused when the value holds the
	 * key (nccl's "bytes: A..B"). NULL-terminated; may be NULL */
	const struct refused_key *later;
	/* FT_MAP; FT_CUSTOM: item table, if any ("validation": the
	 * LN_STAGE_COUNT stage tables, by enum ln_stage) */
	const struct table *sub;
	field_fn fn;			/* FT_CUSTOM */
	scalar_fn sfn;			/* a scalar with its own conversion */
	const char *schema_type;	/* FT_CUSTOM: hint for the schema */
	const char *def;		/* default, as text, for the schema */
	const char *doc;
};

/* 0 if s matches pattern pat; else -1 with "'key' takes ..., not 's'"
 * (or the specific rule broken) appended to why. */
int spec_pattern_check(enum spat pat, const char *key, const char *s, struct ln_buf *why);


extern const struct table spec_top_table;
/* Validation stages, indexed by enum ln_stage. */
extern const struct table spec_stage_tables[LN_STAGE_COUNT];
/* Enum names (names.c), NULL-terminated. */
extern const char *const spec_stage_names[];
extern const char *const spec_fs_names[];
extern const char *const spec_link_layer_names[];
extern const char *const spec_nccl_op_names[];
extern const char *const spec_pci_distance_names[];

/* Regular expressions (ECMA-262) equivalent to each string pattern, for
 * the schema; NULL where no regex says it (checked by llmnet lint only). */
extern const char *const spec_pattern_regex[SP_COUNT];
extern const char *const spec_size_regex, *const spec_rate_regex, *const spec_duration_regex;

#endif
