// SPDX-License-Identifier: MIT
/*
 * Paths the agent creates (issue 12, points 2 and 7) on fixture trees: a
 * hostfile, a backing file, their directories and the state are never
 * reached through a symbolic link, on apply or teardown --purge. Each
 * refusal is asserted with its message and with the tree unchanged: every
 * path's type, size, content (files up to 4 KiB) and mtime, before and after.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#define HOSTFILE_REQ(cluster)                                                            \
	"{\"protocol\":1,\"cluster\":\"" cluster "\",\"hostfile\":{\"path\":"            \
	"\"/etc/llmnet/hostfile\",\"format\":\"openmpi\",\"lines\":[{\"name\":\"te1\","   \
	"\"slots\":2}]}}"

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

/* A directory outside the root, for links to point at. */
static char *outside(void)
{
	char tmpl[] = "/tmp/llmnet-agent-test.outXXXXXX";

	assert_non_null(mkdtemp(tmpl));
	return strdup(tmpl);
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

/* Outside configfs and the state (where a refused target's other objects
 * legitimately go), nothing may change. */
static int skip_configfs_state(const char *rel)
{
	return !strncmp(rel, "/sys/kernel/config", 18) || !strncmp(rel, "/var/lib/llmnet", 15) ||
	       !strcmp(rel, "/var/lib");	/* its mtime, when the state's directory is made */
}

/* root/REL becomes a link to a new directory outside the root. */
static char *link_out(const char *root, const char *rel)
{
	char *out = outside(), p[4096];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(symlink(out, p), 0);
	return out;
}

static void test_agent_paths__symlinked_hostfile_directory_is_refused(void **st)
{
	char *root = tree(), *out_dir = link_out(root, "/etc/llmnet");
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;
	struct ln_buf o1 = LN_BUF_INIT, o2 = LN_BUF_INIT;

	(void)st;
	snapshot(root, &before, NULL);
	snapshot(out_dir, &o1, NULL);
	assert_int_equal(run(root, "apply", HOSTFILE_REQ("c"), &out), 1);
	assert_non_null(strstr(out.buf, "'/etc/llmnet' is a symbolic link; llmnet does not follow "
				       "links (on the way to '/etc/llmnet/hostfile')"));
	snapshot(root, &after, NULL);
	assert_string_equal(before.buf, after.buf);
	snapshot(out_dir, &o2, NULL);
	assert_string_equal(o1.buf, o2.buf);
	fx_remove(root);
	fx_remove(out_dir);
	ln_buf_release(&out);
	ln_buf_release(&before);
	ln_buf_release(&after);
	ln_buf_release(&o1);
	ln_buf_release(&o2);
}

static void test_agent_paths__symlinked_backing_directory_is_refused(void **st)
{
	char *root = tree(), *out_dir = link_out(root, "/var/lib/nvmet");
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;
	struct ln_buf o1 = LN_BUF_INIT, o2 = LN_BUF_INIT;

	(void)st;
	snapshot(root, &before, skip_configfs_state);
	snapshot(out_dir, &o1, NULL);
	assert_int_equal(run(root, "apply", one_target("c", "nqn.2024-04.com.example:a",
							"/var/lib/nvmet/d.img", 1048576), &out), 1);
	assert_non_null(strstr(out.buf, "'/var/lib/nvmet' is a symbolic link; llmnet does not "
				       "follow links (on the way to '/var/lib/nvmet/d.img')"));
	snapshot(root, &after, skip_configfs_state);
	assert_string_equal(before.buf, after.buf);
	snapshot(out_dir, &o2, NULL);
	assert_string_equal(o1.buf, o2.buf);
	fx_remove(root);
	fx_remove(out_dir);
	ln_buf_release(&out);
	ln_buf_release(&before);
	ln_buf_release(&after);
	ln_buf_release(&o1);
	ln_buf_release(&o2);
}

/* Files created by apply, whose directories are then swapped for links to
 * where they went: teardown --purge deletes nothing through the links. */
static void test_agent_paths__purge_does_not_delete_through_a_link(void **st)
{
	char *root = tree(), *out_dir = outside(), p[4096], q[4096];
	struct ln_buf out = LN_BUF_INIT, o1 = LN_BUF_INIT, o2 = LN_BUF_INIT;
	char req[4096];

	(void)st;
	snprintf(req, sizeof(req), "%s", one_target("c", "nqn.2024-04.com.example:a",
						    "/var/lib/nvmet/d.img", 1048576));
	/* the same request with a hostfile */
	snprintf(req + strlen(req) - 1, sizeof(req) - strlen(req) + 1,
		 ",\"hostfile\":{\"path\":\"/etc/llmnet/hostfile\",\"format\":\"openmpi\","
		 "\"lines\":[{\"name\":\"te1\",\"slots\":2}]}}");
	assert_int_equal(run(root, "apply", req, &out), 0);
	snprintf(p, sizeof(p), "%s/var/lib/nvmet", root);
	snprintf(q, sizeof(q), "%s/nvmet", out_dir);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/etc/llmnet", root);
	snprintf(q, sizeof(q), "%s/llmnet", out_dir);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(symlink(q, p), 0);
	snapshot(out_dir, &o1, NULL);
	assert_int_equal(run(root, "teardown", NULL, &out), 1);
	assert_non_null(strstr(out.buf, "'/var/lib/nvmet' is a symbolic link; llmnet does not "
				       "follow links (on the way to '/var/lib/nvmet/d.img')"));
	assert_non_null(strstr(out.buf, "'/etc/llmnet' is a symbolic link"));
	snapshot(out_dir, &o2, NULL);
	assert_string_equal(o1.buf, o2.buf);
	snprintf(q, sizeof(q), "%s/nvmet/d.img", out_dir);
	assert_int_equal(access(q, F_OK), 0);
	fx_remove(root);
	fx_remove(out_dir);
	ln_buf_release(&out);
	ln_buf_release(&o1);
	ln_buf_release(&o2);
}

static void test_agent_paths__symlinked_state_directory_is_refused(void **st)
{
	char *root = tree(), *out_dir, p[4096];
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;
	struct ln_buf o1 = LN_BUF_INIT, o2 = LN_BUF_INIT;

	(void)st;
	snprintf(p, sizeof(p), "%s/var/lib/llmnet", root);
	rmdir(p);	/* the lock-taking teardown made no state */
	out_dir = link_out(root, "/var/lib/llmnet");
	snapshot(root, &before, NULL);
	snapshot(out_dir, &o1, NULL);
	assert_int_not_equal(run(root, "apply", HOSTFILE_REQ("c"), &out), 0);
	assert_non_null(strstr(out.buf, "'/var/lib/llmnet' is a symbolic link"));
	snapshot(root, &after, NULL);
	assert_string_equal(before.buf, after.buf);
	snapshot(out_dir, &o2, NULL);
	assert_string_equal(o1.buf, o2.buf);
	fx_remove(root);
	fx_remove(out_dir);
	ln_buf_release(&out);
	ln_buf_release(&before);
	ln_buf_release(&after);
	ln_buf_release(&o1);
	ln_buf_release(&o2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_paths__symlinked_hostfile_directory_is_refused),
		cmocka_unit_test(test_agent_paths__symlinked_backing_directory_is_refused),
		cmocka_unit_test(test_agent_paths__purge_does_not_delete_through_a_link),
		cmocka_unit_test(test_agent_paths__symlinked_state_directory_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
