/* SPDX-License-Identifier: MIT */
/*
 * An agent's answer is untrusted input: a compromised node controls every
 * byte of it. Each verb's answer has limits of its own (size, nesting
 * depth, count of elements and of containers, string length), far below
 * the frame cap, checked on the bytes before json-c builds anything, so
 * a hostile answer costs a bounded amount of memory; and the facts that
 * the controller keeps (and caches in the state folder) are only the
 * known fields of the agent's facts, each of its known type.
 * docs/agent-protocol.md, "Answer limits", is the table.
 */
#ifndef LN_ANSWER_H
#define LN_ANSWER_H

#include <stddef.h>

#include <json-c/json.h>

#include "common/buf.h"

struct ln_answer_limits {
	const char *name;	/* "facts", "facts --counters", ... */
	size_t bytes;		/* the answer frame's payload */
	unsigned depth;		/* nesting of objects and arrays, the envelope's included */
	size_t elements;	/* JSON values and member names */
	size_t containers;	/* objects and arrays (json-c's costly ones) */
	size_t string;		/* one string's or number's bytes, as sent */
};

/* The limits of the answer to the request args (verb, then its options):
 * never NULL (an unknown verb gets the strictest row). */
const struct ln_answer_limits *ln_answer_limits_for(const char *const *args);

/* Every row of the table, for tests and docs: *n gets the count. */
const struct ln_answer_limits *ln_answer_limits_table(size_t *n);

/*
 * Check payload s[0..n) against l's structure limits without building
 * anything: 0, or -EMSGSIZE with "answer over the facts limit of 65536
 * elements" (or depth, containers, a string's bytes) in err. The bytes
 * limit is the frame reader's (ln_frame_read's max), not checked here.
 */
int ln_answer_scan(const struct ln_answer_limits *l, const char *s, size_t n,
		   struct ln_buf *err);

/*
 * Scan, then parse s[0..n) into *out (one JSON object; json-c's depth
 * bound set from l as well). 0, -EMSGSIZE (over a limit) or -LN_EPROTO
 * (not JSON, or not an object), the reason in err.
 */
int ln_answer_parse(const struct ln_answer_limits *l, const char *s, size_t n,
		    struct json_object **out, struct ln_buf *err);

/*
 * A new object with only the known fields of a `facts` answer, each of
 * its known type or null (arrays keep only elements of their known type,
 * objects only their known members); the caller owns it. NULL when facts
 * is not an object, or out of memory.
 */
struct json_object *ln_answer_known_facts(struct json_object *facts);

/* The same for a `plan`, `apply` or `teardown` answer (one shape): the
 * known fields of it and of each change, summary and kept entry. */
struct json_object *ln_answer_known_changes(struct json_object *answer);

/* The most output validate asks a `run` for (--max-output), and so the
 * most a run answer's output may hold. */
#define LN_ANSWER_RUN_OUTPUT_MAX (4u << 20)

/*
 * The same for validate's `run` answer: exit_status (0-255), signal (a
 * signal's name), timed_out, duration_ms and output_bytes (not below
 * 0), truncated, protocol, and output (at most LN_ANSWER_RUN_OUTPUT_MAX
 * bytes, else null; control bytes but TAB, LF and CR written '?'). A
 * value out of its range is null; everything else is dropped.
 */
struct json_object *ln_answer_known_run(struct json_object *answer);

#endif
