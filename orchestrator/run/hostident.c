/* SPDX-License-Identifier: MIT */
/* Host identity pinning: see hostident.h for the rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/fileio.h"
#include "common/hostnqn.h"
#include "common/json.h"
#include "common/util.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/hostident.h"
#include "orchestrator/run/state.h"
#include "orchestrator/transport/ssh.h"

#define PINS "hostident.json"

/* The identity accessors of facts.h live here, beside the pins that judge
 * them (facts.c calls the check: no call circle). A string field of the
 * facts that passes ok(), else NULL: a value the
 * agent would refuse in a request is no identity at all, so it never
 * reaches another node's request (one bad node fails no other). */
static const char *checked_str(const struct ln_node_run *nr, const char *key,
			       int (*ok)(const char *))
{
	struct json_object *v = NULL;

	if (!nr->facts || !json_object_object_get_ex(nr->facts, key, &v) ||
	    !json_object_is_type(v, json_type_string) || !ok(json_object_get_string(v)))
		return NULL;
	return json_object_get_string(v);
}

const char *ln_facts_host_nqn(const struct ln_node_run *nr)
{
	return checked_str(nr, "host_nqn", ln_valid_host_nqn);
}

const char *ln_facts_host_id(const struct ln_node_run *nr)
{
	return checked_str(nr, "host_id", ln_valid_uuid);
}

/* Node i's pinned host NQN (or host ID, key "host_id"): its pin, else
 * what its last facts on record said. */
static const char *pinned(struct json_object *pins, struct json_object *last,
			  const struct ln_node_run *nr, const char *key)
{
	const char *p = ln_json_str_at(ln_json_at(pins, nr->spec->name), key);

	return p ? p : ln_json_str_at(ln_json_at(ln_json_at(last, nr->spec->name), "facts"), key);
}

static int differs(const char *pin, const char *live)
{
	return pin && live && strcmp(pin, live);
}

/* 1 with why when node i reports, as its key (what names it), a value
 * that another node is pinned to, or that another reachable node reports
 * too while it is not node i's own pin. */
static int claims_other(struct ln_run *r, size_t i, struct json_object *pins,
			struct json_object *last, const char *key, const char *what,
			const char *(*live)(const struct ln_node_run *), struct ln_buf *why)
{
	const struct ln_node_run *nr = &r->nodes[i];
	const char *v = live(nr), *own = pinned(pins, last, nr, key);
	size_t j;

	for (j = 0; v && j < r->n; j++) {
		const struct ln_node_run *o = &r->nodes[j];
		const char *theirs = pinned(pins, last, o, key);

		if (j == i)
			continue;
		if (theirs && !strcmp(theirs, v)) {
			ln_buf_addf(why, "%s '%s' is pinned to node '%s'", what, v, o->spec->name);
			return 1;
		}
		if (o->state == LN_NODE_OK && live(o) && !strcmp(live(o), v) &&
		    !(own && !strcmp(own, v))) {
			ln_buf_addf(why, "nodes '%s' and '%s' report the same %s '%s' (a cloned "
				    "image?); give one a new /etc/nvme/hostnqn and hostid",
				    nr->spec->name, o->spec->name, what, v);
			return 1;
		}
	}
	return 0;
}

/* Why node i may not use the identity it reports, into why; 0 when it may. */
static int refused(struct ln_run *r, size_t i, struct json_object *pins, struct json_object *last,
		   struct ln_buf *why)
{
	struct ln_node_run *nr = &r->nodes[i];
	const char *nqn = ln_facts_host_nqn(nr), *own = pinned(pins, last, nr, "host_nqn");

	const char *id = ln_facts_host_id(nr), *own_id = pinned(pins, last, nr, "host_id");

	if (!nr->accept_replaced && (differs(own, nqn) || differs(own_id, id))) {
		if (differs(own, nqn))
			ln_buf_addf(why, "host identity '%s' is not the one pinned for it ('%s')",
				    nqn, own);
		else
			ln_buf_addf(why, "host ID '%s' is not the one pinned for it ('%s')", id,
				    own_id);
		ln_buf_addf(why, "; --accept-replaced %s re-pins it", nr->spec->name);
		return 1;
	}
	return claims_other(r, i, pins, last, "host_nqn", "host NQN", ln_facts_host_nqn, why) ||
	       claims_other(r, i, pins, last, "host_id", "host ID", ln_facts_host_id, why);
}

/* Node nr's facts key set to its pin, or dropped when it has none. */
static void pin_for(struct ln_node_run *nr, struct json_object *pins, const char *key)
{
	const char *p = ln_json_str_at(ln_json_at(pins, nr->spec->name), key);

	if (p)
		ln_json_add_str(nr->facts, key, p);
	else
		json_object_object_del(nr->facts, key);
}

static int save_pins(struct ln_run *r, struct json_object *pins, struct ln_buf *err)
{
	struct json_object *all = json_object_new_object();
	struct ln_buf b = LN_BUF_INIT;
	char *dir = ln_state_dir(), *path = NULL;
	int rc = -ENOMEM;

	if (!all || !dir || asprintf(&path, "%s/%s.%s", dir, r->spec->cluster, PINS) < 0) {
		path = NULL;
		goto out;
	}
	/* the folder the run log lives in; a run without one makes it */
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		rc = -errno;
		ln_buf_addf(err, "cannot create '%s': %s", dir, strerror(errno));
		goto out;
	}
	ln_json_add_str(all, "format", "llmnet-state/1");
	ln_json_add(all, "nodes", json_object_get(pins));
	rc = ln_json_write(all, 0, &b);
	if (rc == 0)
		rc = ln_file_write_atomic(path, b.buf, b.len, 0600, err);
out:
	json_object_put(all);
	ln_buf_release(&b);
	free(path);
	free(dir);
	return rc;
}

int ln_hostident_check(struct ln_run *r, struct ln_buf *err)
{
	struct json_object *pins = NULL, *last = NULL;
	unsigned char *out = calloc(r->n ? r->n : 1, 1);
	struct ln_buf why = LN_BUF_INIT, line = LN_BUF_INIT;
	size_t i;
	int rc, n_out = 0;

	rc = out ? ln_state_load(r, PINS, &pins, err) : -ENOMEM;
	if (rc == 0)
		rc = ln_state_load(r, "facts.json", &last, err);
	if (rc < 0)
		goto out;
	/* decide on everyone first: an exclusion must not change another's case */
	for (i = 0; i < r->n; i++) {
		ln_buf_reset(&why);
		if (r->nodes[i].state == LN_NODE_OK && ln_facts_host_nqn(&r->nodes[i]) &&
		    refused(r, i, pins, last, &why)) {
			out[i] = 1;
			ln_run_note(r, LN_LOG_WARN, "%s: excluded: %s", r->nodes[i].spec->name, why.buf);
			ln_run_log(r, "%s excluded: %s", r->nodes[i].spec->name, why.buf);
		}
	}
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];
		struct json_object *pin;

		if (out[i]) {
			ln_buf_reset(&why);
			ln_buf_addstr(&why, "host identity refused (see the warning)");
			ln_run_node_failed(nr, LN_NODE_REFUSED, -LN_ECONFLICT, why.buf, NULL, &line);
			ln_buf_reset(&line);
			/* its pin stands for it, as for a silent node: its own
			 * entries stay as they are, keyed with its own secret */
			pin_for(nr, pins, "host_nqn");
			pin_for(nr, pins, "host_id");
			ln_ssh_close(nr->s);
			nr->s = NULL;
			n_out++;
		} else if (nr->state == LN_NODE_OK && ln_facts_host_nqn(nr)) {
			const char *id = ln_facts_host_id(nr);

			/* no valid host ID now is no claim: the pinned one
			 * stays, so a node cannot shed its pin in two runs */
			if (!id && !nr->accept_replaced)
				id = ln_json_str_at(ln_json_at(pins, nr->spec->name), "host_id");
			pin = json_object_new_object();
			ln_json_add_str(pin, "host_nqn", ln_facts_host_nqn(nr));
			if (id)
				ln_json_add_str(pin, "host_id", id);
			json_object_object_add(pins, nr->spec->name, pin);
		}
	}
	rc = save_pins(r, pins, err);
	if (rc == 0)
		rc = n_out;
out:
	json_object_put(pins);
	json_object_put(last);
	ln_buf_release(&why);
	ln_buf_release(&line);
	free(out);
	return rc;
}
