/* SPDX-License-Identifier: MIT */
/*
 * Agent push: compare by SHA-256, upload only on difference, install by
 * rename and seal. The node's agent is asked through ln_agent_call
 * (rpc.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/transport/push.h"

void ln_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
	for (i = 0; i < mdlen && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
}

static int try_load(struct ln_agent_image *img, const char *path, struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r;

	if (access(path, R_OK) < 0)
		return -ENOENT;
	r = ln_file_read(path, &img->data, &e);
	if (r < 0) {
		ln_buf_addf(err, "%s", e.buf);
		ln_buf_release(&e);
		return r;
	}
	img->path = strdup(path);
	if (!img->path)
		return -ENOMEM;
	ln_sha256_hex(img->data.buf, img->data.len, img->sha256);
	return 0;
}

static int agent_image_load(struct ln_agent_image *img, struct ln_buf *err);

/* The GPU facts program beside the agent img found (optional: none
 * found leaves it empty). */
static int load_gpu_facts(struct ln_agent_image *img, struct ln_buf *err)
{
	const char *env = getenv("LLMNET_PROBES");
	char cand[PATH_MAX + 64];
	const char *slash = strrchr(img->path, '/');
	int r;

	if (env && *env)
		snprintf(cand, sizeof(cand), "%s/gpu_facts", env);
	else
		snprintf(cand, sizeof(cand), "%.*s/probes/gpu_facts",
			 slash ? (int)(slash - img->path) : 1, slash ? img->path : ".");
	if (access(cand, R_OK) < 0)
		return 0;
	r = ln_file_read(cand, &img->gpu_facts, err);
	if (r < 0)
		return r;
	ln_sha256_hex(img->gpu_facts.buf, img->gpu_facts.len, img->gpu_facts_sha256);
	return 0;
}

int ln_agent_image_load(struct ln_agent_image *img, struct ln_buf *err)
{
	int r = agent_image_load(img, err);

	if (r == 0)
		r = load_gpu_facts(img, err);
	return r;
}

static int agent_image_load(struct ln_agent_image *img, struct ln_buf *err)
{
	char self[PATH_MAX], cand[PATH_MAX + 64];
	const char *env = getenv("LLMNET_AGENT");
	ssize_t n;
	char *slash;
	int r;

	memset(img, 0, sizeof(*img));
	ln_buf_init(&img->data, 0);
	ln_buf_init(&img->gpu_facts, 0);
	if (env && *env) {
		r = try_load(img, env, err);
		if (r == -ENOENT)
			ln_buf_addf(err, "cannot read the agent named by LLMNET_AGENT: '%s'", env);
		return r;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		n = 0;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(cand, sizeof(cand), "%s/llmnet-agent", self);
	r = try_load(img, cand, err);
	if (r != -ENOENT)
		return r;
	snprintf(cand, sizeof(cand), "%s/../lib/llmnet/llmnet-agent", self);
	r = try_load(img, cand, err);
	if (r != -ENOENT)
		return r;
	ln_buf_addf(err, "cannot find llmnet-agent next to '%s' or in ../lib/llmnet (set LLMNET_AGENT)",
		    self);
	return -ENOENT;
}

void ln_agent_image_release(struct ln_agent_image *img)
{
	free(img->path);
	img->path = NULL;
	ln_buf_release(&img->data);
	ln_buf_release(&img->gpu_facts);
}


/* 1 when the node's agent is img's build and speaks our protocol. */
static int agent_matches(struct ln_session *s, const struct ln_agent_image *img,
			 struct ln_buf *why)
{
	static const char *const args[] = { LN_VERB_VERSION, NULL };
	struct json_object *ans = NULL;
	struct ln_buf e = LN_BUF_INIT;
	const char *sha = NULL;
	int r, status;

	r = ln_agent_call(s, args, NULL, 0, &ans, &status, &e);
	if (r == -LN_ETIMEOUT || r == -LN_EUNREACH) {
		ln_buf_addf(why, "%s", e.buf);
		ln_buf_release(&e);
		return r;
	}
	if (r < 0) {
		/* absent, older protocol, or unreadable answer: upgrade it */
		ln_buf_addf(why, "%s", e.buf);
		r = 0;
		goto out;
	}
	if (ln_json_get_str(ans, "sha256", 0, &sha, &e) < 0 || !sha) {
		ln_buf_addstr(why, "the node's agent does not report its sha256");
		r = 0;
		goto out;
	}
	if (strcmp(sha, img->sha256)) {
		ln_buf_addf(why, "the node's agent is %.12s, ours is %.12s", sha, img->sha256);
		r = 0;
		goto out;
	}
	r = 1;
out:
	json_object_put(ans);
	ln_buf_release(&e);
	return r;
}

/* Install data as LN_PROTO_REMOTE_DIR/name on the node: staged in the login user's home (ln_ssh_put: no SFTP)
 * in the login user's home (a relative path lands there, private to that
 * user; the name is unique per run and node), copied into the root-only
 * directory under a temporary name, then renamed over the old one, so a
 * half-written program is never run; then, with seal_sha, sealed (the
 * agent's own step). what names it in messages. */
static int install_file(struct ln_session *s, const char *what, const char *name,
			const struct ln_buf *data, const char *seal_sha, struct ln_buf *err)
{
	struct ln_buf cmd = LN_BUF_INIT, out = LN_BUF_INIT, errout = LN_BUF_INIT;
	char stage[160];
	int r, status = -1;

	snprintf(stage, sizeof(stage), ".%s.upload.%ld.%s.%08lx", name, (long)getpid(),
		 ln_ssh_node(s), (unsigned long)random());
	if (!ln_ssh_safe_word(stage)) {
		ln_buf_addf(err, "cannot name a staging file for '%s'", ln_ssh_node(s));
		return -EINVAL;
	}
	r = ln_ssh_put(s, stage, data->buf, data->len, 0600, err);
	if (r < 0)
		return r;
	/* The new agent then seals itself: it checks its own SHA-256 against
	 * ours (a corrupt upload fails here) and writes the sidecar that
	 * spares `version` hashing it again. */
	ln_buf_addf(&cmd,
		    "%sumask 077 && mkdir -p " LN_AGENT_DIR_FMT " && chmod 0700 " LN_AGENT_DIR_FMT
		    " && cp -- \"$HOME/%s\" " LN_AGENT_DIR_FMT "/.%s.new && chmod 0700 " LN_AGENT_DIR_FMT
		    "/.%s.new && mv -f -- " LN_AGENT_DIR_FMT "/.%s.new " LN_AGENT_DIR_FMT "/%s",
		    ln_ssh_is_sudo(s) ? "sudo -n env ${LLMNET_AGENT_ROOT:+LLMNET_AGENT_ROOT=\"$LLMNET_AGENT_ROOT\"} HOME=\"$HOME\" sh -c '" : "",
		    stage, name, name, name, name);
	if (seal_sha)
		ln_buf_addf(&cmd, " && " LN_AGENT_DIR_FMT "/%s " LN_VERB_SEAL " %s", name, seal_sha);
	ln_buf_addf(&cmd, "; r=$?; rm -f -- \"$HOME/%s\"; exit $r%s", stage,
		    ln_ssh_is_sudo(s) ? "'" : "");
	r = ln_ssh_exec(s, cmd.buf, NULL, 0, 0, &out, &errout, &status, err);
	if (r < 0)
		goto out;
	if (status != 0) {
		ln_buf_rtrim(&errout);
		ln_buf_addf(err, "cannot install %s on '%s' (exit %d): %s", what, ln_ssh_node(s),
			    status, errout.buf);
		r = -EIO;
		goto out;
	}
	r = 0;
out:
	ln_buf_release_all(&cmd, &out, &errout);
	return r;
}

int ln_agent_ensure(struct ln_session *s, const struct ln_agent_image *img, int *pushed,
		    struct ln_buf *why_pushed, struct ln_buf *err)
{
	struct ln_buf why = LN_BUF_INIT;
	int r;

	*pushed = 0;
	r = agent_matches(s, img, &why);
	if (r < 0) {
		ln_buf_addf(err, "%s", why.buf);
		goto out;
	}
	if (r == 1) {
		r = 0;
		goto out;
	}
	if (why_pushed)
		ln_buf_addstr(why_pushed, why.buf);
	/* the old agent's session ends before its binary is replaced */
	ln_ssh_stream_close(s, 0, NULL);
	r = install_file(s, "the agent", LN_PROTO_AGENT_NAME, &img->data, img->sha256, err);
	if (r < 0)
		goto out;
	*pushed = 1;
	ln_buf_reset(&why);
	r = agent_matches(s, img, &why);
	if (r < 0) {
		ln_buf_addf(err, "%s", why.buf);
		goto out;
	}
	if (r == 0) {
		ln_buf_addf(err, "agent pushed to '%s' does not answer as expected: %s",
			    ln_ssh_node(s), why.buf);
		r = -LN_EPROTO;
		goto out;
	}
	r = 0;
out:
	ln_buf_release(&why);
	return r;
}

int ln_gpu_facts_ensure(struct ln_session *s, const struct ln_agent_image *img,
			struct json_object *facts, int *pushed, struct ln_buf *err)
{
	struct json_object *gpus = ln_json_at(facts, "gpus");
	const char *program = ln_json_str_at(gpus, "program");
	int64_t count;
	int r;

	*pushed = 0;
	if (!img->gpu_facts.len || ln_json_i64_at(gpus, "count", &count) || count <= 0 ||
	    !program || (strcmp(program, "absent") && strcmp(program, "mismatch")))
		return 0;
	/* the agent checks its hash before it runs it */
	r = install_file(s, "the GPU facts program", LN_PROBE_GPU_FACTS, &img->gpu_facts, NULL,
			 err);
	if (r == 0)
		*pushed = 1;
	return r;
}
