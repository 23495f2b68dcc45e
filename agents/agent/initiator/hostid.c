/* SPDX-License-Identifier: MIT */
/*
 * The node's host identity (hostid.h): read and checked for every verb that
 * needs it, and made by apply where it is missing, never overwritten.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/converge/converge.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/initiator/hostid.h"
#include "agents/agent/kernel/fs.h"
#include "agents/agent/kernel/read.h"

/* What is wrong with the host identity file path, which holds b: the byte
 * at offset bad (escaped unless a plain letter, digit or sign), or why.
 * Nothing else of the file is quoted: it may be anything, a pasted key. */
static void bad_identity(const char *path, const struct ln_buf *b, size_t bad, const char *why,
			 struct ln_buf *err)
{
	unsigned char c = bad < b->len ? (unsigned char)b->buf[bad] : 0;

	ln_buf_addf(err, "%s is not %s: ", path, !strcmp(path, LN_HOSTNQN_FILE) ?
		    "a valid host NQN" : "a host ID (a UUID: 8-4-4-4-12 hex digits)");
	if (bad < b->len && c > ' ' && c < 0x7f && c != '\'' && c != '\\')
		ln_buf_addf(err, "'%c' at offset %zu", c, bad);
	else if (bad < b->len)
		ln_buf_addf(err, "byte 0x%02x at offset %zu", c, bad);
	else
		ln_buf_addstr(err, why);
	ln_buf_addstr(err, "; llmnet never rewrites the node's host identity: correct the "
		      "file, or remove it for apply to make one");
}

int ln_host_identity(const struct ln_agent *a, struct ln_buf *nqn, struct ln_buf *id,
		     struct ln_buf *err)
{
	const char *path[2] = { LN_HOSTNQN_FILE, LN_HOSTID_FILE };
	struct ln_buf *b[2] = { nqn, id };
	int i, r;

	for (i = 0; i < 2; i++) {
		size_t n, bad;

		ln_buf_reset(b[i]);
		r = ln_read_attr(a, path[i], b[i]);
		if (r < 0 && r != -ENOENT) {
			/* not "absent": apply would make one over the node's file */
			ln_buf_addf(err, "%s cannot be read: %s; llmnet never rewrites the node's "
				    "host identity", path[i], strerror(-r));
			ln_buf_reset(nqn);
			ln_buf_reset(id);
			return r;
		}
		if (r < 0 || !b[i]->len) {
			ln_buf_reset(b[i]);
			continue;
		}
		ln_buf_rtrim(b[i]);
		if (!b[i]->len)
			continue;	/* only white space: none, as an empty file */
		n = strlen(b[i]->buf);
		bad = n < b[i]->len ? n : i ? strspn(b[i]->buf, "0123456789abcdefABCDEF-")
					     : ln_valid_nqn_bad_at(b[i]->buf, 1);
		if (bad < b[i]->len ||
		    (i ? !ln_valid_uuid(b[i]->buf) : !ln_valid_host_nqn(b[i]->buf))) {
			bad_identity(path[i], b[i], bad, i ? "not 8-4-4-4-12 hex digits"
				     : "an NQN is 'nqn.' and 8 to 218 more bytes", err);
			ln_buf_reset(nqn);	/* neither is used, nor shown */
			ln_buf_reset(id);
			return -EINVAL;
		}
	}
	return 0;
}

/* Ensure /etc/nvme/hostnqn and hostid; hostnqn gets our host NQN (or NULL in a plan).
 * Either file there but not a valid NQN or UUID: refused, nothing written
 * or connected (the files are the node's, never rewritten). */
int ln_host_identity_ensure(struct ln_converge *cv, char *hostnqn, size_t nlen, char *hostid,
			    size_t ilen)
{
	struct ln_buf nqn = LN_BUF_INIT, id = LN_BUF_INIT, err = LN_BUF_INIT, line = LN_BUF_INIT;
	char *gen = NULL;
	int rc, have_nqn, have_id;

	rc = ln_host_identity(cv->a, &nqn, &id, &err);
	if (rc < 0) {
		ln_cv_report(cv, "change", "host_identity", "/etc/nvme/hostnqn", NULL, err.buf);
		goto done;
	}
	have_nqn = nqn.len > 0;
	have_id = id.len > 0;
	if (have_nqn && have_id) {
		ln_cv_report(cv, "ok", "host_identity", "/etc/nvme/hostnqn", NULL, NULL);
		goto done;
	}
	if (cv->plan) {
		ln_cv_report(cv, "create", "host_identity", "/etc/nvme/hostnqn",
			     have_nqn ? "hostid" : "hostnqn and hostid", NULL);
		goto done;
	}
	/* the host identity is the node's, kept by every teardown: not owned */
	rc = ln_cv_mkdirs(cv, "/etc/nvme", 0, &err);
	if (rc == 0 && !have_nqn) {
		rc = cv->a->ini->hostnqn_generate(cv->a, &gen, &err);
		if (rc == 0 && !ln_valid_host_nqn(gen)) {
			ln_buf_addf(&err, "generated host NQN '%s' is not valid", gen);
			rc = -EINVAL;
		}
		if (rc == 0) {
			ln_buf_addf(&line, "%s\n", gen);
			rc = ln_fs_write_file(cv->a, "/etc/nvme/hostnqn", line.buf, line.len, 0644, &err);
			ln_buf_reset(&nqn);
			ln_buf_addstr(&nqn, gen);
		}
	}
	if (rc == 0 && !have_id) {
		/* nvme-cli's convention: the host ID is the UUID in the host NQN */
		const char *u = strstr(nqn.buf, ":uuid:");

		ln_buf_reset(&id);
		if (u && ln_valid_uuid(u + 6)) {
			ln_buf_addstr(&id, u + 6);
		} else {
			char *g2 = NULL;

			rc = ln_iniops_fixture.hostnqn_generate(cv->a, &g2, &err);
			if (rc == 0)
				ln_buf_addstr(&id, strstr(g2, ":uuid:") + 6);
			free(g2);
		}
		ln_buf_reset(&line);
		ln_buf_addf(&line, "%s\n", id.buf);
		if (rc == 0)
			rc = ln_fs_write_file(cv->a, "/etc/nvme/hostid", line.buf, line.len, 0644, &err);
	}
	ln_cv_report(cv, "create", "host_identity", "/etc/nvme/hostnqn",
		     have_nqn ? "hostid" : "hostnqn and hostid", rc < 0 ? err.buf : NULL);
done:
	snprintf(hostnqn, nlen, "%s", nqn.buf);
	snprintf(hostid, ilen, "%s", id.buf);
	free(gen);
	ln_buf_release_all(&nqn, &id, &err, &line);
	return rc;
}
