/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect Storage facts (gds.h). nvidia_fs is loaded when the kernel
 * shows its module (/sys/module/nvidia_fs) or its driver's proc file
 * (/proc/driver/nvidia-fs). cufile.json is read where libcufile looks
 * when no CUFILE_ENV_PATH_JSON is set (the agent cannot see the
 * environment of the programs that will use it): /etc/cufile.json, at
 * most 64 KiB and never through a link, its // comments removed outside
 * strings, then parsed. Of it the agent reports
 * properties.allow_compat_mode (true: cuFile silently falls back to
 * POSIX reads through host memory when GDS cannot be used) and
 * properties.rdma_dev_addr_list (at most 64 addresses), each checked for
 * its type; anything else in the file stays on the node.
 */
#include <string.h>

#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/run/gds.h"
#include "common/buf.h"
#include "common/json.h"

#define CUFILE_MAX (64u << 10)
#define ADDRS_MAX 64

/* s without its // comments (outside strings), in place. */
static void strip_comments(char *s)
{
	char *w = s;
	int in_str = 0;

	while (*s) {
		if (in_str) {
			if (*s == '\\' && s[1])
				*w++ = *s++;
			else if (*s == '"')
				in_str = 0;
			*w++ = *s++;
		} else if (*s == '/' && s[1] == '/') {
			s += strcspn(s, "\n");
		} else {
			in_str = *s == '"';
			*w++ = *s++;
		}
	}
	*w = '\0';
}

/* properties.rdma_dev_addr_list, at most ADDRS_MAX addresses of hex
 * digits, dots and colons; NULL when absent or anything else. */
static struct json_object *addr_list(struct json_object *props)
{
	struct json_object *v = ln_json_at(props, "rdma_dev_addr_list"), *out;
	size_t i, n;

	if (!v || !json_object_is_type(v, json_type_array) ||
	    (n = json_object_array_length(v)) > ADDRS_MAX)
		return NULL;
	out = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		const char *s = json_object_is_type(e, json_type_string) ?
				json_object_get_string(e) : NULL;

		if (!s || !*s || strlen(s) > 64 ||
		    strspn(s, "0123456789abcdefABCDEF.:") != strlen(s)) {
			json_object_put(out);
			return NULL;
		}
		json_object_array_add(out, json_object_new_string(s));
	}
	return out;
}

static struct json_object *cufile_facts(const struct ln_agent *a)
{
	struct json_object *o, *parsed = NULL, *props, *v;
	struct ln_buf b, err = LN_BUF_INIT;
	const char *bad = NULL;

	if (!ln_path_exists(a, LN_CUFILE_JSON))
		return NULL;
	o = json_object_new_object();
	ln_json_add_str(o, "path", LN_CUFILE_JSON);
	ln_buf_init(&b, CUFILE_MAX);
	if (ln_path_read(a, LN_CUFILE_JSON, &b, &err) < 0 || !b.buf) {
		bad = "cannot be read (a link, not a regular file, or over 64 KiB)";
	} else {
		strip_comments(b.buf);
		if (ln_json_parse(b.buf, strlen(b.buf), &parsed, &err) < 0 ||
		    !json_object_is_type(parsed, json_type_object))
			bad = "is not JSON (with // comments) holding an object";
	}
	props = parsed ? ln_json_at(parsed, "properties") : NULL;
	v = ln_json_at(props, "allow_compat_mode");
	ln_json_add(o, "allow_compat_mode", v && json_object_is_type(v, json_type_boolean) ?
		    json_object_new_boolean(json_object_get_boolean(v)) : NULL);
	ln_json_add(o, "rdma_dev_addr_list", addr_list(props));
	ln_json_add(o, "error", bad ? json_object_new_string(bad) : NULL);
	json_object_put(parsed);
	ln_buf_release_all(&b, &err);
	return o;
}

struct json_object *ln_gds_facts(const struct ln_agent *a)
{
	struct json_object *o = json_object_new_object();

	ln_json_add_bool(o, "nvidia_fs", ln_is_dir(a, "/sys/module/nvidia_fs") ||
					 ln_path_exists(a, "/proc/driver/nvidia-fs"));
	ln_json_add(o, "cufile", cufile_facts(a));
	return o;
}
