/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the agent's tests: build a fixture tree (tests/fixtures/agent
 * *.tree) into a fresh temporary directory, run the built agent binary on
 * it (the failpoint exits the process, so tests run the real binary), and
 * list a tree for before/after comparisons. Header-only: each test binary
 * is one file.
 */
#ifndef LN_TEST_AGENT_FIXTURE_H
#define LN_TEST_AGENT_FIXTURE_H

/* test paths live in /tmp and are short; a truncated one fails the test */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "tests/unit/cmocka.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"

#define AGENT_BIN BUILD_DIR "/llmnet-agent-dyn"

/* Build FIXTURES_DIR/agent/<name>.tree into a new temp dir; returns it (malloc'd). */
static inline char *fx_build(const char *name)
{
	char tmpl[] = "/tmp/llmnet-agent-test.XXXXXX", cmd[1024];
	char *dir = mkdtemp(tmpl);

	if (!dir)
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s/agent/build-tree.sh %s/agent/%s.tree %s", FIXTURES_DIR,
		 FIXTURES_DIR, name, dir);
	if (system(cmd) != 0)
		return NULL;
	return strdup(dir);
}

static inline void fx_remove(char *dir)
{
	char cmd[1024];

	if (dir && !strncmp(dir, "/tmp/llmnet-agent-test.", 23)) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	free(dir);
}

/*
 * Run the agent: argv after the binary, stdin from in (may be NULL), stdout
 * into out, stderr into errout (may be NULL); env_kv "K=V" added (may be
 * NULL). Unless args give one, the agent gets a generous time budget, as
 * the controller gives every request (fx_agent_nobudget: none at all).
 * Returns the exit status, or 128+signal.
 */
static inline int fx_agent_run(const char *root, const char *const *args, const char *in,
			       struct ln_buf *out, struct ln_buf *errout, const char *env_kv,
			       int budget)
{
	char inpath[] = "/tmp/llmnet-agent-in.XXXXXX", outpath[] = "/tmp/llmnet-agent-out.XXXXXX";
	char errpath[] = "/tmp/llmnet-agent-err.XXXXXX";
	struct ln_buf e = LN_BUF_INIT;
	const char *argv[32];
	int ifd = mkstemp(inpath), ofd = mkstemp(outpath), efd = mkstemp(errpath);
	int status = -1, i = 0, n;
	pid_t pid;

	if (in && write(ifd, in, strlen(in)) < 0) {
		close(ifd);
		close(ofd);
		close(efd);
		unlink(inpath);
		unlink(outpath);
		unlink(errpath);
		return -1;
	}
	lseek(ifd, 0, SEEK_SET);
	argv[i++] = AGENT_BIN;
	if (root) {
		argv[i++] = "--root";
		argv[i++] = root;
	}
	/* a session's requests carry their own (budget_ms) */
	for (n = 0; args[n]; n++)
		if (!strcmp(args[n], "--budget-ms") || !strcmp(args[n], "session"))
			budget = 0;
	if (budget) {
		argv[i++] = "--budget-ms";
		argv[i++] = "120000";
	}
	for (n = 0; args[n] && i < 30; n++)
		argv[i++] = args[n];
	argv[i] = NULL;
	pid = fork();
	if (pid == 0) {
		dup2(ifd, 0);
		dup2(ofd, 1);
		dup2(efd, 2);
		if (env_kv)
			putenv((char *)env_kv);
		execv(argv[0], (char *const *)argv);
		_exit(126);
	}
	waitpid(pid, &status, 0);
	close(ifd);
	close(ofd);
	close(efd);
	if (out) {
		ln_buf_reset(out);
		ln_file_read(outpath, out, &e);
	}
	if (errout) {
		ln_buf_reset(errout);
		ln_file_read(errpath, errout, &e);
	}
	unlink(inpath);
	unlink(outpath);
	unlink(errpath);
	ln_buf_release(&e);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static inline int fx_agent(const char *root, const char *const *args, const char *in,
			   struct ln_buf *out, struct ln_buf *errout, const char *env_kv)
{
	return fx_agent_run(root, args, in, out, errout, env_kv, 1);
}

static inline int fx_agent_nobudget(const char *root, const char *const *args, const char *in,
				    struct ln_buf *out, struct ln_buf *errout, const char *env_kv)
{
	return fx_agent_run(root, args, in, out, errout, env_kv, 0);
}

/* base followed by rel, opened for reading; NULL when it is no folder. */
static inline DIR *fx_opendir(const char *base, const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s%s", base, rel);
	return opendir(p);
}

/* d's next entry other than . and ..; NULL at its end. */
static inline struct dirent *fx_readdir(DIR *d)
{
	struct dirent *de;

	while ((de = readdir(d)) && (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")))
		;
	return de;
}

/* rel/name into r (4096), base/r into full (4096), lstat'ed into st:
 * 0, or -1 when it is gone. */
static inline int fx_entry(const char *base, const char *rel, const char *name, char *r,
			   char *full, struct stat *st)
{
	snprintf(r, 4096, "%s/%s", rel, name);
	snprintf(full, 4096, "%s%s", base, r);
	return lstat(full, st) < 0 ? -1 : 0;
}

/* 1 when the agent's answer in out lists a change of action on kind; an
 * answer that is not JSON fails the test (the file includes cmocka.h
 * first). */
static inline int fx_has_change(const struct ln_buf *out, const char *action, const char *kind)
{
	struct ln_buf e = LN_BUF_INIT;
	struct json_object *o = NULL, *changes;
	size_t i;
	int found = 0;

	if (ln_json_parse(out->buf, out->len, &o, &e) < 0)
		fprintf(stderr, "bad answer: %s\n%s\n", e.buf, out->buf);
	ln_buf_release(&e);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "changes", &changes));
	for (i = 0; i < json_object_array_length(changes); i++) {
		struct json_object *c = json_object_array_get_idx(changes, i);

		found |= !strcmp(json_object_get_string(json_object_object_get(c, "action")),
				 action) &&
			 !strcmp(json_object_get_string(json_object_object_get(c, "kind")), kind);
	}
	json_object_put(o);
	return found;
}

/* Append a sorted listing of dir (type, path, link target or file content
 * digest) to out, skipping paths for which skip() returns 1. */
static inline void fx_list_rec(const char *base, const char *rel, struct ln_buf *out,
			       int (*skip_fn)(const char *rel))
{
	char **names = NULL;
	struct dirent *de;
	size_t n = 0, i;
	DIR *d = fx_opendir(base, rel);

	if (!d)
		return;
	while ((de = fx_readdir(d))) {
		char **grown = realloc(names, (n + 1) * sizeof(*names));

		if (!grown)
			break;	/* a short listing: the comparison fails */
		names = grown;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	for (i = 0; i < n; i++) {
		size_t j;

		for (j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *t = names[i];

				names[i] = names[j];
				names[j] = t;
			}
	}
	for (i = 0; i < n; i++) {
		char r[4096], full[4096], tgt[4096];
		struct stat st;
		int gone = fx_entry(base, rel, names[i], r, full, &st);

		if ((skip_fn && skip_fn(r)) || gone) {
			free(names[i]);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t k = readlink(full, tgt, sizeof(tgt) - 1);

			tgt[k < 0 ? 0 : k] = '\0';
			ln_buf_addf(out, "l %s -> %s\n", r, tgt);
		} else if (S_ISDIR(st.st_mode)) {
			ln_buf_addf(out, "d %s\n", r);
			fx_list_rec(base, r, out, skip_fn);
		} else {
			struct ln_buf c = LN_BUF_INIT, e = LN_BUF_INIT;

			if (st.st_size <= 4096)
				ln_file_read(full, &c, &e);
			ln_buf_addf(out, "f %s %lld %s\n", r, (long long)st.st_size,
				    st.st_size <= 4096 ? c.buf : "(large)");
			ln_buf_release(&c);
			ln_buf_release(&e);
		}
		free(names[i]);
	}
	free(names);
}

static inline void fx_list(const char *root, struct ln_buf *out, int (*skip_fn)(const char *rel))
{
	ln_buf_reset(out);
	fx_list_rec(root, "", out, skip_fn);
}

/* The agent's args on root as the initiator tests run it (a namespace
 * block device waited for 2 s at most), its answer into out; a failure's
 * exit code, messages and answer go to stderr. Returns the exit code. */
static inline int fx_run_ini(const char *root, const char *const *args, const char *in,
			     struct ln_buf *out)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = fx_agent(root, args, in, out, &err, "LLMNET_NS_WAIT=2");

	if (rc != 0)
		fprintf(stderr, "%s rc %d: %s\n%s\n", args[0], rc, err.buf, out->buf);
	ln_buf_release(&err);
	return rc;
}

/* What a reboot of an initiator node keeps, from root to boot: llmnet's
 * files (state, stored request, agent), the host identity and the units. */
static inline void fx_copy_boot(const char *root, const char *boot)
{
	char cmd[16384];

	snprintf(cmd, sizeof(cmd),
		 "cp -a %s/var/lib/llmnet %s/var/lib/ && cp -a %s/etc/nvme %s/etc/ && "
		 "cp -a %s/etc/systemd/system/. %s/etc/systemd/system/",
		 root, boot, root, boot, root, boot);
	assert_int_equal(system(cmd), 0);
}

/* Run the agent's apply with in on root and expect a refusal: exit code
 * want_rc, want in the answer, and the tree (less what skip_fn skips) as it
 * was. 0, or -1 with what differed on stderr. */
static inline int fx_apply_refused(const char *root, const char *in, int want_rc,
				   const char *want, int (*skip_fn)(const char *rel))
{
	const char *args[] = { "apply", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, before = LN_BUF_INIT,
		      after = LN_BUF_INIT;
	int rc, r = 0;

	fx_list(root, &before, skip_fn);
	rc = fx_agent(root, args, in, &out, &err, NULL);
	fx_list(root, &after, skip_fn);
	if (rc != want_rc || !strstr(out.buf, want) || strcmp(before.buf, after.buf)) {
		fprintf(stderr, "exit %d\nwant: %s\ngot: %s\n%s\n%s", rc, want, out.buf, err.buf,
			strcmp(before.buf, after.buf) ? "and the tree changed\n" : "");
		r = -1;
	}
	ln_buf_release(&out);
	ln_buf_release(&err);
	ln_buf_release(&before);
	ln_buf_release(&after);
	return r;
}

/* Every path with its mtime (ns) and size: "converged writes nothing". */
static inline void fx_mtimes_rec(const char *base, const char *rel, struct ln_buf *out)
{
	struct dirent *de;
	DIR *d = fx_opendir(base, rel);

	if (!d)
		return;
	while ((de = fx_readdir(d))) {
		char r[4096], full[4096];
		struct stat st;

		if (fx_entry(base, rel, de->d_name, r, full, &st) < 0)
			continue;
		ln_buf_addf(out, "%s %lld.%09ld %lld\n", r, (long long)st.st_mtim.tv_sec,
			    st.st_mtim.tv_nsec, (long long)st.st_size);
		if (S_ISDIR(st.st_mode))
			fx_mtimes_rec(base, r, out);
	}
	closedir(d);
}

static inline void fx_list_mtimes(const char *root, struct ln_buf *out)
{
	ln_buf_reset(out);
	fx_mtimes_rec(root, "", out);
}

/* Write ROOT/rel (rel starts with '/'), as a test changes a node behind
 * the agent's back; 0 or negative. */
static inline int fx_put(const char *root, const char *rel, const char *val)
{
	struct ln_buf e = LN_BUF_INIT;
	char p[4096];
	int r;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	r = ln_file_write_atomic(p, val, strlen(val), 0644, &e);
	ln_buf_release(&e);
	return r;
}

/* Read ROOT/rel into v (emptied first); the file must be there. Returns
 * v->buf. */
static inline const char *fx_read(const char *root, const char *rel, struct ln_buf *v)
{
	struct ln_buf e = LN_BUF_INIT;
	char p[4096];

	ln_buf_reset(v);
	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(ln_file_read(p, v, &e), 0);
	ln_buf_release(&e);
	return v->buf;
}

#endif
