// SPDX-License-Identifier: MIT
/*
 * Places a spec may not name (common/places.c), refused by lint and again
 * by the agent (defence in depth, issue 12 point 3): the list itself (the
 * /lib rule takes /lib, /lib32, /lib64, /libx32 and below, not /library),
 * and requests naming a system place for a hostfile, a backing file or a
 * mount point, refused by the agent binary with the tree unchanged.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include "common/places.h"

static int refused_place(const char *key, const char *path, struct ln_buf *why)
{
	ln_buf_reset(why);
	return ln_place_check(key, path, why) < 0;
}

static void test_agent_places__the_list(void **st)
{
	static const char *const refused[] = {
		"/", "/bin/x", "/boot", "/dev/shm/a.img", "/etc", "/etc/passwd", "/etc/llmnet",
		"/lib", "/lib/x", "/lib32", "/lib32/x", "/lib64/a.img", "/libx32/y/z", "/proc/1",
		"/root/a", "/run", "/run/a.img", "/run/llmnet", "/run/user/0/a", "/sbin/x",
		"/sys/x", "/usr/local/a", "/var/lib/llmnet", "/var/lib/llmnet/state.json",
		"/etc/llmnet/keys", "/etc/llmnet/keys/c/host-x.key", "/home", "/home/u/.ssh/authorized_keys",
		"/var", "/var/spool/cron/crontabs/root", "/var/lib/dpkg/status", "/var/log/auth.log",
		"/var/tmp/a.img", "/var/lib/nvmet", "/var/lib/llmnet2/a", "/var/lib/nvmetx/a", NULL,
	};
	static const char *const allowed[] = {
		"/library/a.img", "/libdata/x", "/lib65/x", "/etc/llmnet/hostfile",
		"/etc/llmnet/keysx/a",
		"/etcetera/a", "/run/llmnet/a.img", "/runs/a", "/var/lib/nvmet/disk.img",
		"/var/lib/nvmet/a/b.img", "/mnt/ckpt", "/data/hostfile", "/srv/x/disk.img", "/homes/a",
		"/variable/a", NULL,
	};
	struct ln_buf why = LN_BUF_INIT;
	size_t i;

	(void)st;
	for (i = 0; refused[i]; i++) {
		if (!refused_place("file", refused[i], &why))
			fprintf(stderr, "not refused: %s\n", refused[i]);
		assert_true(refused_place("file", refused[i], &why));
	}
	for (i = 0; allowed[i]; i++) {
		if (refused_place("file", allowed[i], &why))
			fprintf(stderr, "refused: %s (%s)\n", allowed[i], why.buf);
		assert_false(refused_place("file", allowed[i], &why));
	}
	assert_true(refused_place("path", "/lib64", &why));
	assert_string_equal(why.buf, "mount point '/lib64' is in a system location (/lib64): "
				     "llmnet writes only paths it may own");
	ln_buf_release(&why);
}

static int skip_lock(const char *rel)
{
	return !strcmp(rel, "/run/llmnet.lock");
}

/* apply req on a fresh node-target tree: the request refused (exit 2),
 * want in the answer, and the tree as it was, byte for byte. */
static void agent_refuses(const char *req, const char *want)
{
	char *root = fx_build("node-target");

	assert_non_null(root);
	assert_int_equal(fx_apply_refused(root, req, 2, want, skip_lock), 0);
	fx_remove(root);
}

static void test_agent_places__hostfile_at_etc_passwd(void **st)
{
	(void)st;
	agent_refuses("{\"protocol\":1,\"cluster\":\"c\",\"hostfile\":{\"path\":\"/etc/passwd\","
		      "\"format\":\"openmpi\",\"lines\":[\"n1 slots=1\"]}}",
		      "request: hostfile: hostfile '/etc/passwd' is in a system location (/etc "
		      "outside /etc/llmnet): llmnet writes only paths it may own");
}

static void test_agent_places__backing_file_in_lib64(void **st)
{
	(void)st;
	agent_refuses("{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":"
		      "\"nqn.2024-04.com.example:t\",\"transport\":\"tcp\",\"address\":"
		      "\"10.77.0.11\",\"service\":4430,\"hosts\":\"any\",\"namespaces\":[{\"nsid\":"
		      "1,\"file\":\"/lib64/x.img\",\"size\":1048576}]}]}",
		      "backing file '/lib64/x.img' is in a system location (/lib64)");
}

static void test_agent_places__mount_over_etc(void **st)
{
	(void)st;
	agent_refuses("{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":"
		      "\"nqn.2024-04.com.example:t\",\"transport\":\"tcp\",\"address\":"
		      "\"10.77.0.11\",\"service\":4430,\"mount\":{\"path\":\"/etc\",\"fs\":"
		      "\"ext4\",\"format\":\"if-blank\"}}]}",
		      "mount point '/etc' is in a system location (/etc outside /etc/llmnet)");
}

/* adopt: an existing file is exported as is, never created: root's
 * crontab would become a writable block device, so /var is refused but
 * for nvmet's data folder, adopted or not. */
static void test_agent_places__adopted_crontab(void **st)
{
	(void)st;
	agent_refuses("{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":"
		      "\"nqn.2024-04.com.example:t\",\"transport\":\"tcp\",\"address\":"
		      "\"10.77.0.11\",\"service\":4430,\"hosts\":\"any\",\"namespaces\":[{\"nsid\":"
		      "1,\"file\":\"/var/spool/cron/crontabs/root\",\"size\":4096,\"adopt\":true}]}]}",
		      "backing file '/var/spool/cron/crontabs/root' is in a system location (/var "
		      "outside /var/lib/nvmet)");
}

static void test_agent_places__hostfile_in_home(void **st)
{
	(void)st;
	agent_refuses("{\"protocol\":1,\"cluster\":\"c\",\"hostfile\":{\"path\":"
		      "\"/home/u/.ssh/authorized_keys\",\"format\":\"openmpi\",\"lines\":"
		      "[\"n1 slots=1\"]}}",
		      "request: hostfile: hostfile '/home/u/.ssh/authorized_keys' is in a system "
		      "location (/home, the users' homes)");
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_places__the_list),
	cmocka_unit_test(test_agent_places__hostfile_at_etc_passwd),
	cmocka_unit_test(test_agent_places__backing_file_in_lib64),
	cmocka_unit_test(test_agent_places__mount_over_etc),
	cmocka_unit_test(test_agent_places__adopted_crontab),
	cmocka_unit_test(test_agent_places__hostfile_in_home),
)
