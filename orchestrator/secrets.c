/* SPDX-License-Identifier: MIT */
/*
 * The controller's key store: a directory tree the operator owns, read by
 * plan and apply, filled by `llmnet keys`. Every file is opened without
 * following a link and judged by fstat on the open descriptor, so what is
 * checked is what is read. Secrets live in struct ln_secret buffers,
 * wiped on free; no message quotes one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/sha.h>

#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/secret_fields.h"
#include "common/util.h"
#include "orchestrator/secrets.h"

/* ---- paths ------------------------------------------------------------ */

/* KEY_DIR (with "~/" expanded), KEY_DIR/<tnode>, and the file for
 * (tnode, hnode) of a slot, "<hnode>.<ext>" with ext "key", "ctrl.key" or
 * "psk" (ln_secret_ext), into p (PATH_MAX). */
static int key_path(char *p, const char *key_dir, const char *tnode, const char *hnode,
		    const char *ext)
{
	const char *home = getenv("HOME");
	int n;

	if (key_dir[0] == '~' && key_dir[1] == '/') {
		if (!home || !*home)
			return -ENOENT;
		n = snprintf(p, PATH_MAX, "%s%s", home, key_dir + 1);
	} else {
		n = snprintf(p, PATH_MAX, "%s", key_dir);
	}
	if (n > 0 && (size_t)n < PATH_MAX && tnode)
		n += snprintf(p + n, PATH_MAX - (size_t)n, "/%s", tnode);
	if (n > 0 && (size_t)n < PATH_MAX && hnode)
		n += snprintf(p + n, PATH_MAX - (size_t)n, "/%s.%s", hnode, ext);
	return n > 0 && (size_t)n < PATH_MAX ? 0 : -ENAMETOOLONG;
}

/* A directory of the store: a real directory, ours, no group/other access. */
static int check_dir(const char *path, struct ln_buf *err)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		ln_buf_addf(err, "key directory '%s': %s%s\n", path, strerror(errno),
			    errno == ENOENT ? " ('llmnet keys SPEC' makes it)" : "");
		return -LN_ESPEC;
	}
	if (!S_ISDIR(st.st_mode)) {
		ln_buf_addf(err, "key directory '%s' is not a directory\n", path);
		return -LN_ESPEC;
	}
	if (st.st_uid != geteuid()) {
		ln_buf_addf(err, "key directory '%s' is owned by uid %u, not by this user (%u)\n",
			    path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -LN_ESPEC;
	}
	if (st.st_mode & 077) {
		ln_buf_addf(err, "key directory '%s' is open to others (mode %04o): chmod 700 it\n",
			    path, (unsigned)(st.st_mode & 07777));
		return -LN_ESPEC;
	}
	return 0;
}

/* Read one secret file into out (LN_DHCHAP_MAX) and check it: a DHHC-1
 * secret, or with psk an NVMeTLSkey-1 PSK. */
static int read_secret(const char *path, char *out, int psk, struct ln_buf *err)
{
	struct ln_buf why = LN_BUF_INIT;
	char buf[LN_DHCHAP_MAX + 2];
	struct stat st;
	ssize_t n;
	int fd, r = -LN_ESPEC;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			ln_buf_addf(err, "secret '%s' is missing ('llmnet keys SPEC' makes it)\n",
				    path);
		else
			ln_buf_addf(err, "cannot open secret '%s': %s\n", path, strerror(errno));
		return -LN_ESPEC;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ln_buf_addf(err, "secret '%s' is not a regular file\n", path);
		goto out;
	}
	if (st.st_uid != geteuid()) {
		ln_buf_addf(err, "secret '%s' is owned by uid %u, not by this user (%u)\n", path,
			    (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	if (st.st_mode & 077) {
		ln_buf_addf(err, "secret '%s' is open to others (mode %04o): chmod 600 it\n", path,
			    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		ln_buf_addf(err, "cannot read secret '%s': %s\n", path, strerror(errno));
		goto out;
	}
	buf[n] = '\0';
	/* one trailing newline, as an editor or echo leaves it */
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if ((size_t)n >= LN_DHCHAP_MAX ||
	    (psk ? ln_tls_psk_check(buf, &why) : ln_dhchap_check(buf, &why)) < 0) {
		ln_buf_addf(err, "secret '%s' is malformed: %s\n", path,
			    why.len ? why.buf : "too long");
		goto out;
	}
	memcpy(out, buf, (size_t)n + 1);
	r = 0;
out:
	explicit_bzero(buf, sizeof(buf));
	ln_buf_release(&why);
	close(fd);
	return r;
}

/* ---- the pairs a spec needs ------------------------------------------- */

struct need {
	size_t tnode, hnode;
	const struct ln_dhchap *d;
	int tls;		/* some target of the pair has tls: a .psk too */
};

/* Does the pair need the secret of slot (common/secret_fields.h)? */
static int slot_needed(const struct need *nd, int slot)
{
	return slot == LN_SECRET_KEY || (slot == LN_SECRET_CTRL_KEY && nd->d->bidirectional) ||
	       (slot == LN_SECRET_PSK && nd->tls);
}

/* Where the secret of slot goes (LN_DHCHAP_MAX bytes). */
static char *slot_buf(struct ln_secret *s, int slot)
{
	return slot == LN_SECRET_KEY ? s->key : slot == LN_SECRET_CTRL_KEY ? s->ctrl_key : s->psk;
}

static int cmp_need(const void *a, const void *b)
{
	const struct need *x = a, *y = b;
	int c = LN_CMP(x->tnode, y->tnode);

	return c ? c : LN_CMP(x->hnode, y->hnode);
}

/* Every (target node, host node) of a target with dhchap, once each
 * (lint made the settings of one pair agree). */
static int needs(const struct ln_spec *spec, struct need **out, size_t *n_out)
{
	struct need *v = NULL;
	size_t n = 0, i, k, m = 0;

	for (i = 0; i < spec->n_targets; i++)
		if (spec->targets[i].dhchap.present && !spec->targets[i].hosts_any)
			n += spec->targets[i].n_hosts;
	*out = NULL;
	*n_out = 0;
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < spec->n_targets; i++) {
		const struct ln_target *t = &spec->targets[i];

		if (!t->dhchap.present || t->hosts_any)
			continue;
		for (k = 0; k < t->n_hosts; k++)
			v[m++] = (struct need){ t->node, t->hosts[k], &t->dhchap, t->tls };
	}
	qsort(v, m, sizeof(*v), cmp_need);
	for (i = 0, k = 0; i < m; i++)
		if (!k || cmp_need(&v[k - 1], &v[i]))
			v[k++] = v[i];
		else
			v[k - 1].tls |= v[i].tls;
	*out = v;
	*n_out = k;
	return 0;
}

/* ---- load ------------------------------------------------------------- */

static int load_pair(const struct ln_spec *spec, const struct need *nd, struct ln_secret *s,
		     struct ln_buf *err)
{
	const char *tn = spec->nodes[nd->tnode].name, *hn = spec->nodes[nd->hnode].name;
	char p[PATH_MAX];
	int r = 0, k;

	s->target_node = nd->tnode;
	s->host_node = nd->hnode;
	if (key_path(p, nd->d->key_dir, tn, hn, ln_secret_ext[LN_SECRET_KEY]) < 0) {
		ln_buf_addf(err, "key directory '%s': cannot make the path of '%s/%s.%s'\n",
			    nd->d->key_dir, tn, hn, ln_secret_ext[LN_SECRET_KEY]);
		return -LN_ESPEC;
	}
	for (k = 0; k < LN_SECRET_SLOTS; k++) {
		if (!slot_needed(nd, k))
			continue;
		key_path(p, nd->d->key_dir, tn, hn, ln_secret_ext[k]);
		if (read_secret(p, slot_buf(s, k), k == LN_SECRET_PSK, err) < 0)
			r = -LN_ESPEC;
	}
	return r;
}

int ln_secrets_load(const struct ln_spec *spec, struct ln_secrets **out, struct ln_buf *err)
{
	struct ln_secrets *s = NULL;
	struct need *v = NULL;
	char p[PATH_MAX];
	size_t n = 0, i;
	int r, dir_bad = 0, node_bad = 0;

	*out = NULL;
	r = needs(spec, &v, &n);
	if (r < 0 || !n)
		return r;
	s = calloc(1, sizeof(*s));
	if (s)
		s->v = calloc(n, sizeof(*s->v));
	if (!s || !s->v) {
		r = -ENOMEM;
		goto out;
	}
	s->n = n;
	for (i = 0; i < n; i++) {
		const char *tn = spec->nodes[v[i].tnode].name;
		int new_dir = !i || strcmp(v[i].d->key_dir, v[i - 1].d->key_dir);

		/* each directory once, the key directory then the node's; the
		 * files of a bad one are not reported again one by one */
		if (new_dir)
			dir_bad = key_path(p, v[i].d->key_dir, NULL, NULL, NULL) < 0 ||
				  check_dir(p, err) < 0;
		if (!dir_bad && (new_dir || v[i].tnode != v[i - 1].tnode))
			node_bad = key_path(p, v[i].d->key_dir, tn, NULL, NULL) < 0 ||
				   check_dir(p, err) < 0;
		if (dir_bad || node_bad || load_pair(spec, &v[i], &s->v[i], err) < 0)
			r = -LN_ESPEC;
	}
	if (r == 0) {
		*out = s;
		s = NULL;
	}
out:
	free(v);
	ln_secrets_free(s);
	return r;
}

const struct ln_secret *ln_secrets_find(const struct ln_secrets *s, size_t target_node,
					size_t host_node)
{
	size_t lo = 0, hi = s ? s->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ln_secret *e = &s->v[mid];

		if (e->target_node == target_node && e->host_node == host_node)
			return e;
		if (e->target_node < target_node ||
		    (e->target_node == target_node && e->host_node < host_node))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void ln_secrets_free(struct ln_secrets *s)
{
	if (!s)
		return;
	if (s->v)
		explicit_bzero(s->v, s->n * sizeof(*s->v));
	free(s->v);
	free(s);
}

/* ---- make ------------------------------------------------------------- */

/* mkdir 0700 if missing, then the same checks as a load. */
static int make_dir(const char *path, struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r = ln_mkdir_p(path, 0700, &e);

	if (r < 0) {
		ln_buf_addf(err, "cannot create key directory '%s': %s", path, e.buf);
		ln_buf_release(&e);
		return r;
	}
	ln_buf_release(&e);
	if (check_dir(path, err) < 0) {
		ln_buf_rtrim(err);
		return -LN_ESPEC;
	}
	return 0;
}

/* Make a new directory entry durable (best effort: the file is whole
 * either way, fsync'd before it was linked). */
static void fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int dfd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	dfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
}

/* Write a new secret (with psk a TLS PSK) to path unless a file is there:
 * a temporary file in the same directory, fsync'd, then link(2), which
 * never replaces. */
static int make_secret(const char *path, int psk, struct ln_buf *made, struct ln_buf *err)
{
	char tmp[PATH_MAX], key[LN_DHCHAP_MAX + 1];
	struct stat st;
	size_t len;
	int fd = -1, r;

	if (lstat(path, &st) == 0)
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	r = psk ? ln_tls_psk_generate(key, sizeof(key) - 1)
		: ln_dhchap_generate(key, sizeof(key) - 1);
	if (r < 0) {
		ln_buf_addf(err, "cannot generate a secret for '%s': %s", path, strerror(-r));
		return r;
	}
	len = strlen(key);
	key[len++] = '\n';
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (fchmod(fd, 0600) < 0 || ln_write_all(fd, key, len) < 0 || fsync(fd) < 0 ||
	    close(fd) < 0) {
		r = -errno;
		fd = -1;
		ln_buf_addf(err, "cannot write '%s': %s", tmp, strerror(-r));
		unlink(tmp);
		goto out;
	}
	fd = -1;
	if (link(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		if (r == -EEXIST) {	/* made meanwhile by someone else: theirs stays */
			r = 0;
			goto out;
		}
		ln_buf_addf(err, "cannot create '%s': %s", path, strerror(-r));
		goto out;
	}
	unlink(tmp);
	fsync_parent(path);
	ln_buf_addf(made, "%s\n", path);
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	explicit_bzero(key, sizeof(key));
	return r;
}

int ln_secrets_make(const struct ln_spec *spec, struct ln_buf *made, struct ln_buf *err)
{
	struct need *v = NULL;
	char p[PATH_MAX];
	size_t n = 0, i;
	int r, k;

	r = needs(spec, &v, &n);
	for (i = 0; r == 0 && i < n; i++) {
		const char *tn = spec->nodes[v[i].tnode].name, *hn = spec->nodes[v[i].hnode].name;

		r = key_path(p, v[i].d->key_dir, NULL, NULL, NULL);
		if (r == 0)
			r = make_dir(p, err);
		if (r == 0)
			r = key_path(p, v[i].d->key_dir, tn, NULL, NULL);
		if (r == 0)
			r = make_dir(p, err);
		for (k = 0; r == 0 && k < LN_SECRET_SLOTS; k++) {
			if (!slot_needed(&v[i], k))
				continue;
			r = key_path(p, v[i].d->key_dir, tn, hn, ln_secret_ext[k]);
			if (r == 0)
				r = make_secret(p, k == LN_SECRET_PSK, made, err);
		}
		if (r == -ENAMETOOLONG || r == -ENOENT)
			ln_buf_addf(err, "key directory '%s': %s", v[i].d->key_dir,
				    r == -ENOENT ? "HOME is not set" : "path too long");
	}
	free(v);
	return r;
}

/* ---- redaction -------------------------------------------------------- */

static void redact_field(struct json_object *o, const char *key)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[SHA256_DIGEST_LENGTH];
	char fp[sizeof("redacted:") + 16];
	const char *s = ln_json_str_at(o, key);
	size_t i;

	if (!s)
		return;
	SHA256((const unsigned char *)s, strlen(s), md);
	memcpy(fp, "redacted:", 9);
	for (i = 0; i < 8; i++) {
		fp[9 + 2 * i] = hex[md[i] >> 4];
		fp[10 + 2 * i] = hex[md[i] & 15];
	}
	fp[25] = '\0';
	ln_json_add_str(o, key, fp);
}

void ln_secrets_redact(struct json_object *req)
{
	ln_secret_fields_each(req, redact_field);
}
