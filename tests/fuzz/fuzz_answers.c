/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the controller's reading of agent answers
 * (orchestrator/transport/answer.c): the input's first line names the
 * answer's limits row (version, facts, plan, apply, run, ...; anything
 * else is the strictest row) and the rest is the answer frame's payload,
 * as tests/fuzz/answers/ holds the agent's real answers. Each goes through
 * the bounded parse; a facts answer that parses is also cut to its known
 * fields, which must be idempotent and within the facts limits again
 * (what the state folder caches is read back with them). ASan and UBSan
 * turn any memory or arithmetic fault into a finding.
 *
 *   make fuzz && build/fuzz/fuzz_answers -max_total_time=600 build/fuzz/answers tests/fuzz/answers
 *   build/fuzz/fuzz_answers tests/fuzz/answers/FILE...   (replay, as make tier-spec does)
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "orchestrator/transport/answer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct ln_answer_limits *row(const char *name, size_t n)
{
	const struct ln_answer_limits *t;
	size_t i, k;

	t = ln_answer_limits_table(&k);
	for (i = 0; i < k; i++)
		if (strlen(t[i].name) == n && !memcmp(t[i].name, name, n))
			return &t[i];
	return &t[k - 1];
}

static void check_facts(const struct ln_answer_limits *l, struct json_object *env)
{
	struct ln_answer_limits wide = *l;
	struct json_object *a = NULL, *k, *k2, *back = NULL;
	struct ln_buf err = LN_BUF_INIT;
	const char *s;

	if (!json_object_object_get_ex(env, "answer", &a))
		return;
	k = ln_answer_known_facts(a);
	if (!k) {
		/* only a non-object has no known facts */
		if (json_object_is_type(a, json_type_object))
			__builtin_trap();
		return;
	}
	k2 = ln_answer_known_facts(k);
	if (!json_object_equal(k, k2))
		__builtin_trap();
	/* the cached form reads back as it was written: within the limits
	 * it came in, but for escapes (a raw byte may come back as \u00XX) */
	wide.bytes *= 6;
	wide.string *= 6;
	s = json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (ln_answer_parse(&wide, s, strlen(s), &back, &err) < 0 || !json_object_equal(back, k))
		__builtin_trap();
	json_object_put(back);
	json_object_put(k2);
	json_object_put(k);
	ln_buf_release(&err);
}

/* validate's run filter: an object for every object, a fixed point, and
 * no control byte but TAB, LF and CR left in the output */
static void check_run(struct json_object *env)
{
	struct json_object *a = NULL, *k, *k2, *v;
	const char *o;
	int i, n;

	if (!json_object_object_get_ex(env, "answer", &a))
		return;
	k = ln_answer_known_run(a);
	if (!k != !json_object_is_type(a, json_type_object))
		__builtin_trap();
	if (!k)
		return;
	k2 = ln_answer_known_run(k);
	if (!json_object_equal(k, k2))
		__builtin_trap();
	if (json_object_object_get_ex(k, "output", &v) && v) {
		o = json_object_get_string(v);
		n = json_object_get_string_len(v);
		for (i = 0; i < n; i++)
			if (((unsigned char)o[i] < 0x20 && !strchr("\t\n\r", o[i])) || o[i] == 0x7f)
				__builtin_trap();
	}
	json_object_put(k2);
	json_object_put(k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *nl = memchr(data, '\n', size);
	const struct ln_answer_limits *l;
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *env = NULL;
	size_t head;
	int r;

	if (!nl)
		return 0;
	head = (size_t)(nl - s);
	l = row(s, head);
	r = ln_answer_parse(l, nl + 1, size - head - 1, &env, &err);
	if (r == 0) {
		if (!json_object_is_type(env, json_type_object) || err.len)
			__builtin_trap();
		if (!strcmp(l->name, "facts"))
			check_facts(l, env);
		if (!strcmp(l->name, "run"))
			check_run(env);
	} else if ((r != -EMSGSIZE && r != -LN_EPROTO) || !err.len || env) {
		/* refused: always one of the two codes, always saying why */
		__builtin_trap();
	}
	json_object_put(env);
	ln_buf_release(&err);
	return 0;
}
