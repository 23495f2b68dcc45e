/* SPDX-License-Identifier: MIT */
/*
 * A thin wrapper over json-c for both binaries: parsing with a clear error,
 * typed getters that say which key was wrong, an unknown-field check for
 * request objects, and small builders. Objects are json-c's own; callers
 * release them with json_object_put().
 */
#ifndef LN_JSON_H
#define LN_JSON_H

#include <stdint.h>
#include <json-c/json.h>

#include "buf.h"

/* Parse exactly one JSON value from s[0..n). Trailing garbage is an error. */
int ln_json_parse(const char *s, size_t n, struct json_object **out, struct ln_buf *err);

/* Serialize obj; pretty adds two-space indentation. Appends a newline. */
int ln_json_write(struct json_object *obj, int pretty, struct ln_buf *out);

/* Fail with -LN_EREQUEST naming the first key of obj not in allowed
 * (a NULL-terminated list); where names the object in the message. */
int ln_json_check_keys(struct json_object *obj, const char *const *allowed, const char *where,
		       struct ln_buf *err);

/* Typed getters. A missing key yields -ENOENT (and *out untouched) unless
 * required, in which case it is -LN_EREQUEST with a message; a key of the
 * wrong type is always -LN_EREQUEST. */
int ln_json_get_str(struct json_object *obj, const char *key, int required, const char **out,
		    struct ln_buf *err);
int ln_json_get_i64(struct json_object *obj, const char *key, int required, int64_t *out,
		    struct ln_buf *err);
int ln_json_get_bool(struct json_object *obj, const char *key, int required, int *out,
		     struct ln_buf *err);
int ln_json_get_obj(struct json_object *obj, const char *key, int required,
		    struct json_object **out, struct ln_buf *err);
int ln_json_get_arr(struct json_object *obj, const char *key, int required,
		    struct json_object **out, struct ln_buf *err);

/* Lenient lookups for reading facts, where a missing or odd value is just
 * "unknown": NULL-safe on o, NULL (or -ENOENT) when the key is absent or
 * holds another type. ln_json_i64_at accepts an integer or a double. */
struct json_object *ln_json_at(struct json_object *o, const char *key);
const char *ln_json_str_at(struct json_object *o, const char *key);

/* 1 when a change list (an agent answer's "changes") has a failed
 * nvme_connection change for nqn (its id ends in "/NQN"), or one with id
 * "*" (the node's controllers could not even be listed). Both binaries
 * read it: the agent before removing a target, the controller after. */
int ln_json_disconnect_failed(struct json_object *changes, const char *nqn);
int ln_json_i64_at(struct json_object *o, const char *key, int64_t *out);

/* Builders: add key to obj. A NULL string becomes JSON null. They return
 * 0 or -ENOMEM. */
int ln_json_add_str(struct json_object *obj, const char *key, const char *val);
int ln_json_add_i64(struct json_object *obj, const char *key, int64_t val);
int ln_json_add_bool(struct json_object *obj, const char *key, int val);
int ln_json_add_double(struct json_object *obj, const char *key, double val);
/* Takes ownership of val (also on failure). */
int ln_json_add(struct json_object *obj, const char *key, struct json_object *val);
/* The agent protocol's change counts, as an answer's "summary" holds them
 * (and plan -o json's): create, change, remove, ok and error. */
int ln_json_add_counts(struct json_object *obj, int create, int change, int remove, int ok,
		       int error);

#endif
