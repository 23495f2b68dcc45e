/* SPDX-License-Identifier: MIT */
/*
 * The change list (changes.c): what a plan would do or an apply or teardown
 * did, one entry per object, with the warnings beside it, counted by
 * action, and turned into the verb's answer at the end. Each entry is also
 * logged as it is added: an error at error level, a change at verbose.
 */
#ifndef LN_AGENT_CHANGES_H
#define LN_AGENT_CHANGES_H

#include <json-c/json.h>

/* The change list answer. */
struct ln_changes {
	struct json_object *list;	/* array of change objects */
	struct json_object *warnings;	/* array of strings */
	int n_create, n_change, n_remove, n_ok, n_error;
};

void ln_changes_init(struct ln_changes *c);
void ln_changes_release(struct ln_changes *c);
/* Append one change; detail and error may be NULL. */
void ln_changes_add(struct ln_changes *c, const char *action, const char *kind, const char *id,
		    const char *detail, const char *error);
/* 1 when c holds a remove of id with no error: in a plan, a path the
 * run would have removed by now (a folder it empties is removed too). */
int ln_changes_removes(const struct ln_changes *c, const char *id);
/* Append a warning (and log it at warn level). */
void ln_changes_warn(struct ln_changes *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Build the answer object (takes the lists out of c); the caller owns it. */
struct json_object *ln_changes_answer(struct ln_changes *c, const char *mode,
				      const char *cluster, int plan);

#endif
