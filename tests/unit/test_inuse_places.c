// SPDX-License-Identifier: MIT
/*
 * The place gate's mount table (agents/agent/target/inuse_mounts.c): which
 * mount holds a path in /proc/self/mountinfo (followed down the mount
 * tree) and /proc/mounts (longest mount point), octal escapes, a mount
 * point equal to the path, a deeper mount hidden by one mounted later
 * above it, and which file system types count as remote. Then the gate
 * (inuse_place.c) on a fixture root whose mount table is mountinfo, as a
 * node's is: a place below a tcp namespace's mount is refused, the same
 * place below a local disk's mount is accepted.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <errno.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/target/inuse.h"

/* The root, /proc, a local disk at /data and at /mnt, /mnt/a on /mnt. */
#define MI_BASE                                                                                 \
	"22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"                             \
	"23 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"        \
	"27 22 254:16 / /data rw,relatime shared:30 - ext4 /dev/vdb rw\n"                      \
	"30 22 254:32 / /mnt rw,relatime shared:31 - ext4 /dev/vdc rw\n"                       \
	"31 30 259:1 / /mnt/a rw,relatime shared:32 - xfs /dev/nvme1n1 rw\n"

static void held_by(const char *text, int mi, const char *path, const char *point,
		  const char *source, const char *fstype)
{
	struct ln_mount m;

	assert_int_equal(ln_inuse_mount_of(text, mi, path, &m), 1);
	assert_string_equal(m.point, point);
	assert_string_equal(m.source, source);
	assert_string_equal(m.fstype, fstype);
}

static void test_inuse_places__mountinfo_longest_mount_point_on_the_way(void **state)
{
	(void)state;
	held_by(MI_BASE, 1, "/mnt/a/b/c.img", "/mnt/a", "/dev/nvme1n1", "xfs");
	/* a name that only begins like a mount point is not below it */
	held_by(MI_BASE, 1, "/mnt/ab/c.img", "/mnt", "/dev/vdc", "ext4");
	held_by(MI_BASE, 1, "/var/lib/nvmet/x.img", "/", "/dev/vda", "ext4");
	held_by(MI_BASE, 1, "/datafile", "/", "/dev/vda", "ext4");
}

static void test_inuse_places__mount_point_equal_to_the_path(void **state)
{
	(void)state;
	held_by(MI_BASE, 1, "/mnt/a", "/mnt/a", "/dev/nvme1n1", "xfs");
	held_by(MI_BASE, 1, "/data", "/data", "/dev/vdb", "ext4");
	held_by(MI_BASE, 1, "/", "/", "/dev/vda", "ext4");
}

static void test_inuse_places__octal_escapes_in_points_and_sources(void **state)
{
	const char *t = MI_BASE "40 22 0:50 / /srv/with\\040space rw - cifs //nas/share\\040x rw\n"
			"41 22 0:51 / /srv/tab\\011ed rw - nfs4 h:/e rw\n";

	(void)state;
	held_by(t, 1, "/srv/with space/b.img", "/srv/with space", "//nas/share x", "cifs");
	held_by(t, 1, "/srv/with space", "/srv/with space", "//nas/share x", "cifs");
	held_by(t, 1, "/srv/tab\ted/f", "/srv/tab\ted", "h:/e", "nfs4");
	/* the escaped name is not the raw one */
	held_by(t, 1, "/srv/with\\040space/b.img", "/", "/dev/vda", "ext4");
}

/* /mnt/ckpt mounted on the root, then /mnt mounted over the root's /mnt:
 * a lookup of /mnt/ckpt/x crosses /mnt first, and /mnt/ckpt is hidden. */
static void test_inuse_places__a_later_upper_mount_hides_a_deeper_one(void **state)
{
	const char *t = "22 1 254:0 / / rw - ext4 /dev/vda rw\n"
			"50 22 259:1 / /mnt/ckpt rw - ext4 /dev/nvme1n1 rw\n"
			"51 22 0:60 / /mnt rw - nfs4 h:/e rw\n";
	const char *stacked = "22 1 254:0 / / rw - ext4 /dev/vda rw\n"
			      "60 22 254:16 / /data rw - ext4 /dev/vdb rw\n"
			      "61 60 0:61 / /data rw - fuse.sshfs u@h:/ rw\n";

	(void)state;
	held_by(t, 1, "/mnt/ckpt/x", "/mnt", "h:/e", "nfs4");
	/* two mounts at one point: the one mounted over the other */
	held_by(stacked, 1, "/data/x", "/data", "u@h:/", "fuse.sshfs");
}

static void test_inuse_places__proc_mounts_longest_then_last(void **state)
{
	const char *t = "/dev/vda / ext4 rw 0 0\n/dev/vdb /data ext4 rw 0 0\n"
			"/dev/nvme1n1 /data/in ext4 rw 0 0\nh:/e /data nfs4 rw 0 0\n"
			"//nas/a\\040b /srv/a\\040b cifs rw 0 0\n";

	(void)state;
	held_by(t, 0, "/data/in/f", "/data/in", "/dev/nvme1n1", "ext4");
	held_by(t, 0, "/data/f", "/data", "h:/e", "nfs4");
	held_by(t, 0, "/srv/a b/f", "/srv/a b", "//nas/a b", "cifs");
	held_by(t, 0, "/etc/llmnet/hostfile", "/", "/dev/vda", "ext4");
}

static void test_inuse_places__no_table_no_mount(void **state)
{
	struct ln_mount m;

	(void)state;
	assert_int_equal(ln_inuse_mount_of("", 1, "/x", &m), 0);
	assert_int_equal(ln_inuse_mount_of(NULL, 0, "/x", &m), 0);
	assert_int_equal(ln_inuse_mount_of("garbage\n", 1, "/x", &m), 0);
	assert_int_equal(ln_inuse_mount_of("/dev/vdb /data ext4 rw 0 0\n", 0, "/x", &m), 0);
}

static void test_inuse_places__remote_file_system_types(void **state)
{
	(void)state;
	assert_string_equal(ln_inuse_remote_fs("nfs4"), "a network file system");
	assert_string_equal(ln_inuse_remote_fs("cifs"), "a network file system");
	assert_string_equal(ln_inuse_remote_fs("ceph"), "a network file system");
	assert_string_equal(ln_inuse_remote_fs("9p"), "a network file system");
	assert_string_equal(ln_inuse_remote_fs("fuse.sshfs"), "a FUSE file system");
	assert_string_equal(ln_inuse_remote_fs("fuseblk"), "a FUSE file system");
	assert_null(ln_inuse_remote_fs("ext4"));
	assert_null(ln_inuse_remote_fs("xfs"));
	assert_null(ln_inuse_remote_fs("tmpfs"));
	assert_null(ln_inuse_remote_fs("fusectl"));
	assert_null(ln_inuse_remote_fs("nfsd"));
}

/* The gate on a fixture root with a mountinfo (a node's format): a tcp
 * namespace mounted at /mnt/ckpt, a local disk at /data. */
static void test_inuse_places__gate_reads_mountinfo(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_agent a = { 0 };
	char *root = fx_build("node-target"), cmd[4200];

	(void)state;
	assert_non_null(root);
	snprintf(cmd, sizeof(cmd), "%s/agent/build-tree.sh %s/agent/fabric-disks.tree %s",
		 FIXTURES_DIR, FIXTURES_DIR, root);
	assert_int_equal(system(cmd), 0);
	snprintf(a.root, sizeof(a.root), "%s", root);
	a.fixture = 1;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/self", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(fx_put(root, "/proc/self/mountinfo",
				"22 1 254:0 / / rw - ext4 /dev/vda rw\n"
				"27 22 254:16 / /data rw - ext4 /dev/vdb rw\n"
				"31 22 259:1 / /mnt/ckpt rw - ext4 /dev/nvme1n1 rw\n"),
			 0);
	assert_int_equal(ln_inuse_place(&a, NULL, NULL, "backing file", "/mnt/ckpt/d.img",
					LN_PLACE_FILE, &err),
			 -EBUSY);
	assert_non_null(strstr(err.buf, "backing file '/mnt/ckpt/d.img' is on the file system "
				       "mounted at '/mnt/ckpt' (source /dev/nvme1n1, ext4), a "
				       "namespace (nvme1n1) of NVMe controller nvme1 over "
				       "transport tcp"));
	ln_buf_reset(&err);
	assert_int_equal(ln_inuse_place(&a, NULL, NULL, "backing file", "/data/d.img",
					LN_PLACE_FILE, &err),
			 0);
	assert_int_equal(ln_inuse_place(&a, NULL, NULL, "program folder", "/mnt/ckpt",
					LN_PLACE_PROGRAMS, &err),
			 -EBUSY);
	ln_buf_reset(&err);
	assert_int_equal(ln_inuse_place(&a, NULL, NULL, "program folder", "/data",
					LN_PLACE_PROGRAMS, &err),
			 0);
	/* the file at a mount point someone else made: /data itself */
	assert_int_equal(ln_inuse_place(&a, NULL, NULL, "hostfile", "/data", LN_PLACE_FILE,
					&err),
			 -EBUSY);
	assert_non_null(strstr(err.buf, "hostfile '/data' is a mount point (source /dev/vdb, "
				       "ext4) that llmnet did not make for this cluster"));
	ln_buf_release(&err);
	fx_remove(root);
}

static void test_inuse_places__mount_by_id_and_its_parent(void **state)
{
	struct ln_mount m;

	(void)state;
	assert_int_equal(ln_inuse_mount_by_id(MI_BASE, 31, 0, &m), 1);
	assert_string_equal(m.point, "/mnt/a");
	assert_string_equal(m.source, "/dev/nvme1n1");
	assert_int_equal(ln_inuse_mount_by_id(MI_BASE, 31, 1, &m), 1);
	assert_string_equal(m.point, "/mnt");
	assert_int_equal(ln_inuse_mount_by_id(MI_BASE, 22, 0, &m), 1);
	assert_string_equal(m.point, "/");
	/* the root's parent is not listed; an id nobody has */
	assert_int_equal(ln_inuse_mount_by_id(MI_BASE, 22, 1, &m), 0);
	assert_int_equal(ln_inuse_mount_by_id(MI_BASE, 99, 0, &m), 0);
	assert_int_equal(ln_inuse_mount_by_id(NULL, 22, 0, &m), 0);
}

/* The mount id the fake kernel below says every opened place lies in. */
static unsigned long long fake_id;

static int fake_mount_id(const struct ln_agent *a, int fd, unsigned long long *id)
{
	(void)a;
	assert_true(fd >= 0);
	*id = fake_id;
	return 0;
}

/* By identity, not by path: the mount the opened place lies in decides,
 * whatever its path's prefix says. /data/d.img in the tcp namespace's
 * mount (31; a path whose text says /data) is refused; /mnt/ckpt/d.img in
 * the local disk's (27) is accepted; an id mountinfo does not list falls
 * back to the path. */
static void test_inuse_places__gate_picks_the_mount_by_id(void **state)
{
	struct ln_fsops ops = ln_fsops_fixture;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_agent a = { 0 };
	char *root = fx_build("node-target"), cmd[4200];

	(void)state;
	assert_non_null(root);
	snprintf(cmd, sizeof(cmd), "%s/agent/build-tree.sh %s/agent/fabric-disks.tree %s && "
		 "mkdir -p %s/proc/self %s/data %s/mnt/ckpt", FIXTURES_DIR, FIXTURES_DIR, root,
		 root, root, root);
	assert_int_equal(system(cmd), 0);
	snprintf(a.root, sizeof(a.root), "%s", root);
	a.fixture = 1;
	ops.mount_id = fake_mount_id;
	a.fs = &ops;
	assert_int_equal(fx_put(root, "/proc/self/mountinfo",
				"22 1 254:0 / / rw - ext4 /dev/vda rw\n"
				"27 22 254:16 / /data rw - ext4 /dev/vdb rw\n"
				"31 22 259:1 / /mnt/ckpt rw - ext4 /dev/nvme1n1 rw\n"),
			 0);
	fake_id = 31;
	assert_int_equal(ln_inuse_place(&a, NULL, NULL, "backing file", "/data/d.img",
					LN_PLACE_FILE, &err),
			 -EBUSY);
	assert_non_null(strstr(err.buf, "backing file '/data/d.img' is on the file system "
				       "mounted at '/mnt/ckpt' (source /dev/nvme1n1, ext4)"));
	ln_buf_reset(&err);
	fake_id = 27;
	assert_int_equal(ln_inuse_place(&a, NULL, NULL, "backing file", "/mnt/ckpt/d.img",
					LN_PLACE_FILE, &err),
			 0);
	assert_int_equal(err.len, 0);
	/* not listed: the path decides, as without mount ids */
	fake_id = 99;
	assert_int_equal(ln_inuse_place(&a, NULL, NULL, "backing file", "/mnt/ckpt/d.img",
					LN_PLACE_FILE, &err),
			 -EBUSY);
	ln_buf_release(&err);
	fx_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inuse_places__mountinfo_longest_mount_point_on_the_way),
		cmocka_unit_test(test_inuse_places__mount_point_equal_to_the_path),
		cmocka_unit_test(test_inuse_places__octal_escapes_in_points_and_sources),
		cmocka_unit_test(test_inuse_places__a_later_upper_mount_hides_a_deeper_one),
		cmocka_unit_test(test_inuse_places__proc_mounts_longest_then_last),
		cmocka_unit_test(test_inuse_places__no_table_no_mount),
		cmocka_unit_test(test_inuse_places__remote_file_system_types),
		cmocka_unit_test(test_inuse_places__gate_reads_mountinfo),
		cmocka_unit_test(test_inuse_places__mount_by_id_and_its_parent),
		cmocka_unit_test(test_inuse_places__gate_picks_the_mount_by_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
