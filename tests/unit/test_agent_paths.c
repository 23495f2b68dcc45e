// SPDX-License-Identifier: MIT
/*
 * Paths the agent creates (issue 12, points 1, 2 and 7) on fixture trees:
 * a hostfile or backing file is created, rewritten or deleted only when
 * this cluster's state records it, and never through a symbolic link. Each
 * refusal is asserted with its message and with the tree unchanged: every
 * path's type, size, content (files up to 4 KiB) and mtime, before and after.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#define HOSTFILE_REQ(cluster)                                                            \
	"{\"protocol\":1,\"cluster\":\"" cluster "\",\"hostfile\":{\"path\":"            \
	"\"/etc/llmnet/hostfile\",\"format\":\"openmpi\",\"lines\":[{\"name\":\"te1\","   \
	"\"slots\":2}]}}"
#define HAND_WRITTEN "# my own hostfile\ngpu01 slots=8\n"

static int run(const char *root, const char *verb, const char *in, struct ln_buf *out)
{
	const char *args[] = { verb, "--purge", NULL };
	struct ln_buf err = LN_BUF_INIT;
	int rc;

	if (strcmp(verb, "teardown"))
		args[1] = NULL;
	rc = fx_agent(root, args, in, out, &err, NULL);
	ln_buf_addf(out, "\n%s", err.buf);	/* the messages, wherever they went */
	ln_buf_release(&err);
	return rc;
}

/* The tree's checksum material: the listing with contents, then every
 * path's mtime and size, less the paths skip_fn names. */
static void snapshot(const char *root, struct ln_buf *out, int (*skip_fn)(const char *rel))
{
	struct ln_buf m = LN_BUF_INIT;
	char *line, *save = NULL;

	fx_list(root, out, skip_fn);
	fx_list_mtimes(root, &m);
	for (line = strtok_r(m.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char rel[4096];

		if (sscanf(line, "%4095s", rel) == 1 && (!skip_fn || !skip_fn(rel)))
			ln_buf_addf(out, "%s\n", line);
	}
	ln_buf_release(&m);
}

/* The tree as snapshot() saw it in before. */
static void assert_unchanged(const char *root, const struct ln_buf *before,
			     int (*skip_fn)(const char *rel))
{
	struct ln_buf now = LN_BUF_INIT;

	snapshot(root, &now, skip_fn);
	assert_string_equal(before->buf, now.buf);
	ln_buf_release(&now);
}

/* A fresh target tree that already has its lock file (every mutating run
 * creates it), so a refused run must leave the tree exactly as it was. */
static char *tree(void)
{
	char *root = fx_build("node-target");
	struct ln_buf out = LN_BUF_INIT;

	assert_non_null(root);
	assert_int_equal(run(root, "teardown", NULL, &out), 0);
	ln_buf_release(&out);
	return root;
}

/* What every test starts from, made and removed around it: a fresh
 * tree(), the agent's output and a snapshot() of the tree. */
struct tcase {
	char *root;
	struct ln_buf out, before;
};

static int tcase_setup(void **st)
{
	struct tcase *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->root = tree();
	ln_buf_init(&t->out, 0);
	ln_buf_init(&t->before, 0);
	*st = t;
	return 0;
}

static int tcase_teardown(void **st)
{
	struct tcase *t = *st;

	fx_remove(t->root);
	ln_test_release(&t->out, &t->before);
	free(t);
	return 0;
}

/* A directory outside the root, for links to point at. */
static char *outside(void)
{
	char tmpl[] = "/tmp/llmnet-agent-test.outXXXXXX";

	assert_non_null(mkdtemp(tmpl));
	return strdup(tmpl);
}

#define ANY_FAILURE (-1)	/* an rc for expect(): any but 0 */

/* verb on req exits rc, and its output (answer and log) holds msg. */
static void expect(const char *root, const char *verb, const char *req, int rc, const char *msg)
{
	struct ln_buf out = LN_BUF_INIT;
	int got = run(root, verb, req, &out);

	if (rc == ANY_FAILURE)
		assert_int_not_equal(got, 0);
	else
		assert_int_equal(got, rc);
	if (!strstr(out.buf, msg))
		fail_msg("'%s' not in: %s", msg, out.buf);
	ln_buf_release(&out);
}

/* As expect(), and the tree, less the paths skip_fn names, is as it was. */
static void expect_unchanged(struct tcase *t, const char *verb, const char *req, int rc,
			     const char *msg, int (*skip_fn)(const char *rel))
{
	snapshot(t->root, &t->before, skip_fn);
	expect(t->root, verb, req, rc, msg);
	assert_unchanged(t->root, &t->before, skip_fn);
}

static void test_agent_paths__hand_written_hostfile_is_refused(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096];

	snprintf(p, sizeof(p), "%s/etc/llmnet", root);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(fx_put(root, "/etc/llmnet/hostfile", HAND_WRITTEN), 0);
	snapshot(root, &t->before, NULL);
	assert_int_equal(run(root, "plan", HOSTFILE_REQ("c"), &t->out), 1);
	assert_non_null(strstr(t->out.buf, "'/etc/llmnet/hostfile' exists and is not llmnet's"));
	assert_int_equal(run(root, "apply", HOSTFILE_REQ("c"), &t->out), 1);
	assert_non_null(strstr(t->out.buf, "'/etc/llmnet/hostfile' exists and is not llmnet's"));
	assert_unchanged(root, &t->before, NULL);
	assert_int_equal(run(root, "teardown", NULL, &t->out), 0);
	assert_unchanged(root, &t->before, NULL);
}

static void test_agent_paths__another_clusters_hostfile_is_refused(void **st)
{
	struct tcase *t = *st;
	char *root = t->root;

	assert_int_equal(run(root, "apply", HOSTFILE_REQ("loop"), &t->out), 0);
	expect_unchanged(t, "apply", HOSTFILE_REQ("loop2"), 1,
			 "'/etc/llmnet/hostfile' belongs to cluster 'loop'", NULL);
	/* loop2's teardown leaves loop's hostfile alone */
	assert_int_equal(fx_agent(root, (const char *const[]){ "teardown", "--cluster", "loop2",
							       "--purge", NULL },
				  NULL, &t->out, NULL, NULL), 0);
	assert_unchanged(root, &t->before, NULL);
}

static const char *one_target(const char *cluster, const char *nqn, const char *file, long size)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"cluster\":\"%s\",\"targets\":[{\"nqn\":\"%s\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4430,"
		 "\"hosts\":[\"nqn.2014-08.org.example:h1\"],\"namespaces\":[{\"nsid\":1,"
		 "\"file\":\"%s\",\"size\":%ld}]}]}", cluster, nqn, file, size);
	return buf;
}

/* cluster's request for one_target() and the hostfile of HOSTFILE_REQ(),
 * in one, applied. */
static void apply_target_and_hostfile(struct tcase *t, const char *cluster, const char *file)
{
	char req[4096];

	snprintf(req, sizeof(req), "%s", one_target(cluster, "nqn.2024-04.com.example:a", file,
						    1048576));
	snprintf(req + strlen(req) - 1, sizeof(req) - strlen(req) + 1,
		 ",\"hostfile\":{\"path\":\"/etc/llmnet/hostfile\",\"format\":\"openmpi\","
		 "\"lines\":[{\"name\":\"te1\",\"slots\":2}]}}");
	assert_int_equal(run(t->root, "apply", req, &t->out), 0);
}

/* Cluster loop exports /var/lib/nvmet/shared.img, which it creates. */
static void apply_loop(const char *root, struct ln_buf *out)
{
	assert_int_equal(run(root, "apply", one_target("loop", "nqn.2024-04.com.example:a",
							"/var/lib/nvmet/shared.img", 1048576), out), 0);
}

/* loop2's request for loop's file, built by fn (one_target or adopt_target). */
#define SHARED_REQ(fn) \
	fn("loop2", "nqn.2024-04.com.example:b", "/var/lib/nvmet/shared.img", 1048576)
#define SHARED_OF_LOOP "'/var/lib/nvmet/shared.img' belongs to cluster 'loop'"
#define HOSTFILE_OF_LOOP "'/etc/llmnet/hostfile' belongs to cluster 'loop'"

/* Outside configfs and the state (where a refused target's other objects
 * legitimately go), nothing may change. */
static int skip_configfs_state(const char *rel)
{
	return !strncmp(rel, "/sys/kernel/config", 18) || !strncmp(rel, "/var/lib/llmnet", 15) ||
	       !strcmp(rel, "/var/lib");	/* its mtime, when the state's directory is made */
}

static void test_agent_paths__backing_file_of_another_cluster_is_refused(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096];

	apply_loop(root, &t->out);
	snapshot(root, &t->before, skip_configfs_state);
	expect(root, "plan", SHARED_REQ(one_target), 1, SHARED_OF_LOOP);
	expect(root, "apply", SHARED_REQ(one_target), 1, SHARED_OF_LOOP);
	assert_unchanged(root, &t->before, skip_configfs_state);
	/* loop2 exported no namespace on the shared file */
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:b/"
		 "namespaces/1", root);
	assert_int_equal(access(p, F_OK), -1);
}

/* A namespace left by an older agent that used loop's file without
 * recording it: loop's teardown --purge keeps the file it is exported from. */
static void test_agent_paths__purge_keeps_a_file_another_namespace_uses(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096];

	apply_loop(root, &t->out);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:b",
		 root);
	assert_int_equal(mkdir(p, 0755), 0);
	strcat(p, "/namespaces");
	assert_int_equal(mkdir(p, 0755), 0);
	strcat(p, "/1");
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(fx_put(root, "/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:b/"
				 "namespaces/1/device_path", "/var/lib/nvmet/shared.img\n"), 0);
	assert_int_equal(fx_put(root, "/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:b/"
				 "namespaces/1/enable", "1\n"), 0);
	expect_unchanged(t, "teardown", NULL, 0, "kept backing file '/var/lib/nvmet/shared.img': "
			 "namespace 'nqn.2024-04.com.example:b/1' uses it", skip_configfs_state);
}

/* A state that records one file for two clusters (written by hand here):
 * the purge of one forgets the file, never deletes it. */
static void test_agent_paths__purge_keeps_a_file_another_cluster_records(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096];
	struct ln_buf state = LN_BUF_INIT, e = LN_BUF_INIT;
	char *clusters;

	apply_loop(root, &t->out);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	assert_int_equal(ln_file_read(p, &state, &e), 0);
	clusters = strstr(state.buf, "\"clusters\"");
	assert_non_null(clusters);
	clusters = strchr(clusters, '{');
	{
		struct ln_buf edited = LN_BUF_INIT;

		ln_buf_add(&edited, state.buf, (size_t)(clusters + 1 - state.buf));
		ln_buf_addstr(&edited, "\"loop2\":{\"objects\":[{\"kind\":\"backing_file\","
				       "\"id\":\"/var/lib/nvmet/shared.img\"}]},");
		ln_buf_addstr(&edited, clusters + 1);
		assert_int_equal(ln_file_write_atomic(p, edited.buf, edited.len, 0600, &e), 0);
		ln_buf_release(&edited);
	}
	snapshot(root, &t->before, skip_configfs_state);
	assert_int_equal(fx_agent(root, (const char *const[]){ "teardown", "--cluster", "loop",
							       "--purge", NULL },
				  NULL, &t->out, NULL, NULL), 0);
	assert_non_null(strstr(t->out.buf, "kept backing file '/var/lib/nvmet/shared.img': cluster "
				       "'loop2' also records it"));
	assert_unchanged(root, &t->before, skip_configfs_state);
	ln_test_release(&state, &e);
}

static void test_agent_paths__existing_unowned_backing_file_is_refused(void **st)
{
	struct tcase *t = *st;
	char *root = t->root;

	expect_unchanged(t, "apply", one_target("c", "nqn.2024-04.com.example:a", "/srv/foreign.img",
						16777216), 1,
			 "'/srv/foreign.img' exists and is not llmnet's; llmnet uses only backing "
			 "files it created", skip_configfs_state);
	/* and its teardown --purge does not delete it either */
	assert_int_equal(run(root, "teardown", NULL, &t->out), 0);
	assert_unchanged(root, &t->before, skip_configfs_state);
}

/* root/REL becomes a link to a new directory outside the root. */
static char *link_out(const char *root, const char *rel)
{
	char *out = outside(), p[4096];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(symlink(out, p), 0);
	return out;
}

/* With root/REL a link to a new directory outside the root: as
 * expect_unchanged(), and the directory the link points at is unchanged
 * too. */
static void expect_link_refused(struct tcase *t, const char *rel, const char *verb,
				const char *req, int rc, const char *msg,
				int (*skip_fn)(const char *rel))
{
	char *out_dir = link_out(t->root, rel);
	struct ln_buf o1 = LN_BUF_INIT;

	snapshot(out_dir, &o1, NULL);
	expect_unchanged(t, verb, req, rc, msg, skip_fn);
	assert_unchanged(out_dir, &o1, NULL);
	fx_remove(out_dir);
	ln_buf_release(&o1);
}

static void test_agent_paths__symlinked_hostfile_directory_is_refused(void **st)
{
	expect_link_refused(*st, "/etc/llmnet", "apply", HOSTFILE_REQ("c"), 1,
			    "'/etc/llmnet' is a symbolic link; llmnet does not follow links (on the "
			    "way to '/etc/llmnet/hostfile')", NULL);
}

static void test_agent_paths__symlinked_backing_directory_is_refused(void **st)
{
	expect_link_refused(*st, "/var/lib/nvmet", "apply",
			    one_target("c", "nqn.2024-04.com.example:a", "/var/lib/nvmet/d.img",
				       1048576), 1,
			    "'/var/lib/nvmet' is a symbolic link; llmnet does not follow links (on "
			    "the way to '/var/lib/nvmet/d.img')", skip_configfs_state);
}

/* Files created by apply, whose directories are then swapped for links to
 * where they went: teardown --purge deletes nothing through the links. */
static void test_agent_paths__purge_does_not_delete_through_a_link(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, *out_dir = outside(), p[4096], q[4096];
	struct ln_buf o1 = LN_BUF_INIT;

	apply_target_and_hostfile(t, "c", "/var/lib/nvmet/d.img");
	snprintf(p, sizeof(p), "%s/var/lib/nvmet", root);
	snprintf(q, sizeof(q), "%s/nvmet", out_dir);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/etc/llmnet", root);
	snprintf(q, sizeof(q), "%s/llmnet", out_dir);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(symlink(q, p), 0);
	snapshot(out_dir, &o1, NULL);
	assert_int_equal(run(root, "teardown", NULL, &t->out), 1);
	assert_non_null(strstr(t->out.buf, "'/var/lib/nvmet' is a symbolic link; llmnet does not "
				       "follow links (on the way to '/var/lib/nvmet/d.img')"));
	assert_non_null(strstr(t->out.buf, "'/etc/llmnet' is a symbolic link"));
	assert_unchanged(out_dir, &o1, NULL);
	snprintf(q, sizeof(q), "%s/nvmet/d.img", out_dir);
	assert_int_equal(access(q, F_OK), 0);
	fx_remove(out_dir);
	ln_buf_release(&o1);
}

static void test_agent_paths__symlinked_state_directory_is_refused(void **st)
{
	struct tcase *t = *st;
	char p[4096];

	snprintf(p, sizeof(p), "%s/var/lib/llmnet", t->root);
	rmdir(p);	/* the lock-taking teardown made no state */
	expect_link_refused(t, "/var/lib/llmnet", "apply", HOSTFILE_REQ("c"), ANY_FAILURE,
			    "'/var/lib/llmnet' is a symbolic link", NULL);
}

/* A directory path of about 2,100 bytes, made of long names: two files in
 * it share the first 2,048 bytes of their state index keys. */
static void long_dir(char *out, size_t size)
{
	size_t i, n;

	n = (size_t)snprintf(out, size, "/srv/x");
	for (i = 0; i < 9 && n + 232 < size; i++) {
		out[n++] = '/';
		memset(out + n, 'd', 230);
		n += 230;
		out[n] = '\0';
	}
}

/* Two namespaces of one target, on the files a and b of long_dir(). */
static void two_files_req(struct ln_buf *req, const char *dir, int with_b)
{
	ln_buf_reset(req);
	ln_buf_addf(req, "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":"
		    "\"nqn.2024-04.com.example:a\",\"transport\":\"tcp\",\"address\":"
		    "\"10.77.0.11\",\"service\":4430,\"hosts\":[\"nqn.2014-08.org.example:h1\"],"
		    "\"namespaces\":[{\"nsid\":1,\"file\":\"%s/a.img\",\"size\":1048576}", dir);
	if (with_b)
		ln_buf_addf(req, ",{\"nsid\":2,\"file\":\"%s/b.img\",\"size\":1048576}", dir);
	ln_buf_addstr(req, "]}]}");
}

/* Review finding: the state's index key was cut at 2,048 bytes, so a file
 * whose path shares that much with an owned one passed as owned. */
static void test_agent_paths__long_paths_do_not_collide_in_the_state(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, dir[4096], p[8192];
	struct ln_buf req = LN_BUF_INIT;
	int fd;

	long_dir(dir, sizeof(dir));
	assert_true(strlen(dir) > 2048);
	two_files_req(&req, dir, 0);
	assert_int_equal(run(root, "apply", req.buf, &t->out), 0);
	/* a file llmnet did not create, next to the one it did */
	snprintf(p, sizeof(p), "%s%s/b.img", root, dir);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1048576), 0);
	close(fd);
	two_files_req(&req, dir, 1);
	snprintf(p, sizeof(p), "'%s/b.img' exists and is not llmnet's", dir);
	expect_unchanged(t, "apply", req.buf, 1, p, skip_configfs_state);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:a/"
		 "namespaces/2", root);
	assert_int_equal(access(p, F_OK), -1);
	ln_buf_release(&req);
}

/* The state, and the mtime of /etc, where a directory was made and removed. */
static int skip_state_etc(const char *rel)
{
	return skip_configfs_state(rel) || !strcmp(rel, "/etc");
}

/* Review finding: ownership was recorded before a create and kept when the
 * create failed. A hostfile name too long for its temporary file fails the
 * write after the record and /etc/llmnet were made: both must go again. */
static void test_agent_paths__failed_create_leaves_no_record(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, name[256], req[1024], p[4096];
	struct ln_buf state = LN_BUF_INIT;
	struct ln_buf e = LN_BUF_INIT;

	memset(name, 'h', 245);
	name[245] = '\0';
	snprintf(req, sizeof(req),
		 "{\"protocol\":1,\"cluster\":\"c\",\"hostfile\":{\"path\":\"/etc/llmnet/%s\","
		 "\"format\":\"openmpi\",\"lines\":[{\"name\":\"te1\",\"slots\":2}]}}", name);
	expect_unchanged(t, "apply", req, 1, "File name too long", skip_state_etc);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	if (ln_file_read(p, &state, &e) == 0) {
		assert_null(strstr(state.buf, name));
		assert_null(strstr(state.buf, "/etc/llmnet"));
	}
	ln_test_release(&state, &e);
}

/* A directory under root/REL with mode (chmod, so no umask applies). */
static void dir_mode(const char *root, const char *rel, mode_t mode)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chmod(p, mode), 0);
}

/* Review finding: the directories llmnet writes into were not checked. A
 * directory others may write to is refused at plan and at apply. */
static void test_agent_paths__writable_parent_is_refused(void **st)
{
	struct tcase *t = *st;
	char *root = t->root;
	const char *req = one_target("c", "nqn.2024-04.com.example:a", "/srv/shared/d.img",
				     1048576);

	dir_mode(root, "/srv/shared", 01777);
	snapshot(root, &t->before, skip_configfs_state);
	expect(root, "plan", req, 1,
	       "'/srv/shared' is writable by group or others (mode 1777); llmnet writes only in "
	       "directories no one but root may change (on the way to '/srv/shared/d.img')");
	req = one_target("c", "nqn.2024-04.com.example:a", "/srv/shared/d.img", 1048576);
	expect(root, "apply", req, 1, "'/srv/shared' is writable by group or others");
	assert_unchanged(root, &t->before, skip_configfs_state);
	/* the hostfile's directory, group-writable */
	dir_mode(root, "/etc/llmnet", 0775);
	expect_unchanged(t, "apply", HOSTFILE_REQ("c"), 1,
			 "'/etc/llmnet' is writable by group or others (mode 0775)",
			 skip_configfs_state);
}

/* The state's directory and file are checked as well: nothing is written,
 * not even the record, and nothing is removed on a state others could have
 * written. */
static void test_agent_paths__writable_state_directory_is_refused(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096];

	snprintf(p, sizeof(p), "%s/var/lib", root);
	assert_int_equal(chmod(p, 0777), 0);
	expect_unchanged(t, "apply", HOSTFILE_REQ("c"), ANY_FAILURE,
			 "'/var/lib' is writable by group or others (mode 0777)", NULL);
	/* a state file others could have written is not believed */
	assert_int_equal(chmod(p, 0755), 0);
	assert_int_equal(run(root, "apply", HOSTFILE_REQ("c"), &t->out), 0);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	assert_int_equal(chmod(p, 0666), 0);
	expect_unchanged(t, "teardown", NULL, ANY_FAILURE, "state file '/var/lib/llmnet/state.json' is "
			 "writable by group or others (mode 0666)", NULL);
}

/* A directory another user owns is refused, naming its owner. */
static void test_agent_paths__parent_of_another_owner_is_refused(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096];

	if (geteuid() != 0) {
		skip();	/* only root can give a directory to another user */
	}
	dir_mode(root, "/etc/llmnet", 0755);
	snprintf(p, sizeof(p), "%s/etc/llmnet", root);
	assert_int_equal(chown(p, 4242, 4242), 0);
	snapshot(root, &t->before, skip_configfs_state);
	expect(root, "plan", HOSTFILE_REQ("c"), 1,
	       "'/etc/llmnet' is owned by uid 4242, not root; llmnet writes only in directories "
	       "root owns (on the way to '/etc/llmnet/hostfile')");
	expect(root, "apply", HOSTFILE_REQ("c"), 1, "'/etc/llmnet' is owned by uid 4242, not root");
	assert_unchanged(root, &t->before, skip_configfs_state);
}

/* A path another cluster records is refused even while it is missing: its
 * teardown would delete what this cluster writes there. */
static void test_agent_paths__missing_path_another_cluster_records_is_refused(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096];

	apply_target_and_hostfile(t, "loop", "/var/lib/nvmet/shared.img");
	snprintf(p, sizeof(p), "%s/etc/llmnet/hostfile", root);
	assert_int_equal(unlink(p), 0);
	snprintf(p, sizeof(p), "%s/var/lib/nvmet/shared.img", root);
	assert_int_equal(unlink(p), 0);
	snapshot(root, &t->before, skip_configfs_state);
	expect(root, "plan", HOSTFILE_REQ("loop2"), 1, HOSTFILE_OF_LOOP);
	expect(root, "apply", HOSTFILE_REQ("loop2"), 1, HOSTFILE_OF_LOOP);
	expect(root, "plan", SHARED_REQ(one_target), 1, SHARED_OF_LOOP);
	expect(root, "apply", SHARED_REQ(one_target), 1, SHARED_OF_LOOP);
	assert_unchanged(root, &t->before, skip_configfs_state);
}

/* The request of one_target() with "adopt": true on its namespace. */
static const char *adopt_target(const char *cluster, const char *nqn, const char *file, long size)
{
	static char buf[2048];
	const char *r = one_target(cluster, nqn, file, size);
	size_t n = strlen(r) - strlen("}]}]}");

	snprintf(buf, sizeof(buf), "%.*s,\"adopt\":true}]}]}", (int)n, r);
	return buf;
}

/* A file the spec adopts: used, recorded as adopted, and kept by
 * teardown --purge, which says so. */
static void test_agent_paths__adopted_file_is_used_and_never_deleted(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096], moved[4096];
	struct ln_buf data = LN_BUF_INIT, state = LN_BUF_INIT;
	struct ln_buf e = LN_BUF_INIT, now = LN_BUF_INIT;
	const char *req;

	snprintf(p, sizeof(p), "%s/srv/data.img", root);
	{
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "precious", 8), 8);
		assert_int_equal(ftruncate(fd, 1048576), 0);
		close(fd);
	}
	assert_int_equal(ln_file_read(p, &data, &e), 0);
	/* without adopt: refused, as any file llmnet did not create */
	req = one_target("c", "nqn.2024-04.com.example:a", "/srv/data.img", 1048576);
	expect(root, "apply", req, 1,
	       "'/srv/data.img' exists and is not llmnet's; llmnet uses only backing files it "
	       "created, or one the spec adopts ('adopt: true')");
	/* plan shows the adoption, apply records it */
	req = adopt_target("c", "nqn.2024-04.com.example:a", "/srv/data.img", 1048576);
	expect(root, "plan", req, 0, "adopt, 1048576 bytes; never deleted");
	req = adopt_target("c", "nqn.2024-04.com.example:a", "/srv/data.img", 1048576);
	assert_int_equal(run(root, "apply", req, &t->out), 0);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:a/"
		 "namespaces/1/device_path", root);
	assert_int_equal(ln_file_read(p, &now, &e), 0);
	assert_non_null(strstr(now.buf, "/srv/data.img"));
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	assert_int_equal(ln_file_read(p, &state, &e), 0);
	assert_non_null(strstr(state.buf, "\"adopted\": true"));
	/* converged: a second apply changes nothing */
	req = adopt_target("c", "nqn.2024-04.com.example:a", "/srv/data.img", 1048576);
	assert_int_equal(run(root, "apply", req, &t->out), 0);
	assert_non_null(strstr(t->out.buf, "\"change\": 0"));
	/* gone (its disk unmounted, say): nothing is made in its place, adopt or not */
	snprintf(p, sizeof(p), "%s/srv/data.img", root);
	snprintf(moved, sizeof(moved), "%s/moved.img", root);
	assert_int_equal(rename(p, moved), 0);
	req = one_target("c", "nqn.2024-04.com.example:a", "/srv/data.img", 1048576);
	expect(root, "apply", req, 1, "adopted backing file '/srv/data.img' is missing");
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(rename(moved, p), 0);
	expect(root, "teardown", NULL, 0,
	       "kept backing file '/srv/data.img': adopted, llmnet never deletes it");
	snprintf(p, sizeof(p), "%s/srv/data.img", root);
	ln_buf_reset(&now);
	assert_int_equal(ln_file_read(p, &now, &e), 0);
	assert_int_equal(now.len, data.len);
	assert_memory_equal(now.buf, data.buf, data.len);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	ln_buf_reset(&state);
	assert_int_equal(ln_file_read(p, &state, &e), 0);
	assert_null(strstr(state.buf, "/srv/data.img"));
	ln_test_release(&data, &state, &now, &e);
}

/* A backing file llmnet made and exported, then lost (deleted, or its disk
 * not mounted): not made again blank under the namespace's stable
 * identity; teardown forgets it, and the next apply makes a new one. */
static void test_agent_paths__made_file_lost_is_not_remade(void **st)
{
	struct tcase *t = *st;
	char *root = t->root, p[4096];
	struct ln_buf state = LN_BUF_INIT, e = LN_BUF_INIT;

	assert_int_equal(run(root, "apply", one_target("c", "nqn.2024-04.com.example:a",
						       "/srv/new.img", 1048576), &t->out), 0);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	assert_int_equal(ln_file_read(p, &state, &e), 0);
	assert_non_null(strstr(state.buf, "\"made\": true"));
	snprintf(p, sizeof(p), "%s/srv/new.img", root);
	assert_int_equal(unlink(p), 0);
	expect(root, "apply", one_target("c", "nqn.2024-04.com.example:a", "/srv/new.img", 1048576),
	       1, "backing file '/srv/new.img', which llmnet made for this cluster, is missing");
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(run(root, "teardown", NULL, &t->out), 0);
	assert_int_equal(run(root, "apply", one_target("c", "nqn.2024-04.com.example:a",
						       "/srv/new.img", 1048576), &t->out), 0);
	assert_int_equal(access(p, F_OK), 0);
	ln_test_release(&state, &e);
}

/* adopt does not reach what it must not: another cluster's file, a file
 * a foreign namespace exports, or a missing file (made in its place). */
static void test_agent_paths__adopt_is_refused_where_it_must_not_reach(void **st)
{
	struct tcase *t = *st;
	char *root = t->root;

	apply_loop(root, &t->out);
	snapshot(root, &t->before, skip_configfs_state);
	expect(root, "apply", SHARED_REQ(adopt_target), 1, SHARED_OF_LOOP);
	expect(root, "apply",
	       adopt_target("loop2", "nqn.2024-04.com.example:b", "/srv/foreign.img", 16777216), 1,
	       "backing file '/srv/foreign.img' is already exported by namespace "
	       "'nqn.2014-08.org.example:foreign.target/1'");
	expect(root, "apply",
	       adopt_target("loop2", "nqn.2024-04.com.example:b", "/srv/gone.img", 1048576), 1,
	       "backing file '/srv/gone.img' is missing, and 'adopt' uses an existing file");
	assert_unchanged(root, &t->before, skip_configfs_state);
}

/* The request's adopt: a boolean, with a file only. */
static void test_agent_paths__adopt_is_checked_in_the_request(void **st)
{
	struct tcase *t = *st;
	char *root = t->root;
	const char *dev = "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":"
			  "\"nqn.2024-04.com.example:a\",\"transport\":\"tcp\",\"address\":"
			  "\"10.77.0.11\",\"service\":4430,\"hosts\":[],\"namespaces\":[{\"nsid\":1,"
			  "\"device\":\"/dev/nvme0n1\",\"adopt\":true}]}]}";
	char req[2048];

	snapshot(root, &t->before, NULL);
	expect(root, "apply", dev, 2, "'adopt' goes with 'file', not 'device'");
	snprintf(req, sizeof(req), "%s", adopt_target("c", "nqn.2024-04.com.example:a",
						      "/srv/data.img", 1048576));
	memcpy(strstr(req, "true"), "1   ", 4);
	expect(root, "apply", req, 2, "field 'adopt' must be boolean");
	assert_unchanged(root, &t->before, NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, tcase_setup, tcase_teardown)
LN_TEST_MAIN(NULL, NULL,
	T(test_agent_paths__hand_written_hostfile_is_refused),
	T(test_agent_paths__another_clusters_hostfile_is_refused),
	T(test_agent_paths__backing_file_of_another_cluster_is_refused),
	T(test_agent_paths__purge_keeps_a_file_another_namespace_uses),
	T(test_agent_paths__purge_keeps_a_file_another_cluster_records),
	T(test_agent_paths__existing_unowned_backing_file_is_refused),
	T(test_agent_paths__symlinked_hostfile_directory_is_refused),
	T(test_agent_paths__symlinked_backing_directory_is_refused),
	T(test_agent_paths__purge_does_not_delete_through_a_link),
	T(test_agent_paths__symlinked_state_directory_is_refused),
	T(test_agent_paths__long_paths_do_not_collide_in_the_state),
	T(test_agent_paths__failed_create_leaves_no_record),
	T(test_agent_paths__writable_parent_is_refused),
	T(test_agent_paths__writable_state_directory_is_refused),
	T(test_agent_paths__parent_of_another_owner_is_refused),
	T(test_agent_paths__missing_path_another_cluster_records_is_refused),
	T(test_agent_paths__adopted_file_is_used_and_never_deleted),
	T(test_agent_paths__made_file_lost_is_not_remade),
	T(test_agent_paths__adopt_is_refused_where_it_must_not_reach),
	T(test_agent_paths__adopt_is_checked_in_the_request),
)
