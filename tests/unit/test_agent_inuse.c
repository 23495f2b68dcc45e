// SPDX-License-Identifier: MIT
/*
 * The in-use gate for files (agents/agent/target/inuse.c) on node-target
 * fixture roots: a file that is active swap or a loop device's backing
 * file is refused, by identity (a hard link under another name is the
 * same file), naming the path and the holder; a file that merely shares
 * a name's prefix, or sits beside them on the same file system, is
 * accepted (the control). NVMe namespaces (fabric-disks.tree): one
 * imported over tcp, a multipath head whose controllers are tcp, a head
 * with a controller of unreadable transport are refused; pcie is accepted.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <errno.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/target/inuse.h"

#define SWAPS_HEAD "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

struct gate {
	char *root;
	struct ln_agent a;
	struct ln_buf err;
};

static int setup(void **state)
{
	struct gate *g = calloc(1, sizeof(*g));
	char p[4096];

	assert_non_null(g);
	g->root = fx_build("node-target");
	assert_non_null(g->root);
	snprintf(g->a.root, sizeof(g->a.root), "%s", g->root);
	g->a.fixture = 1;
	g->err = (struct ln_buf)LN_BUF_INIT;
	snprintf(p, sizeof(p), "%s/srv", g->root);
	assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
	assert_int_equal(fx_put(g->root, "/srv/data.img", "d"), 0);
	assert_int_equal(fx_put(g->root, "/srv/data.img.old", "o"), 0);
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct gate *g = *state;

	ln_buf_release(&g->err);
	fx_remove(g->root);
	free(g);
	return 0;
}

/* ln_inuse_file on the node path p, as the gate's callers call it. */
static int check(struct gate *g, const char *p)
{
	struct stat st;

	ln_buf_reset(&g->err);
	assert_int_equal(ln_path_lstat(&g->a, p, &st, &g->err), 0);
	return ln_inuse_file(&g->a, p, &st, &g->err);
}

static void test_agent_inuse__swap_file_is_refused_by_identity(void **state)
{
	struct gate *g = *state;
	char from[4096], to[4096];

	snprintf(from, sizeof(from), "%s/srv/data.img", g->root);
	snprintf(to, sizeof(to), "%s/srv/swap.link", g->root);
	assert_int_equal(link(from, to), 0);
	assert_int_equal(fx_put(g->root, "/proc/swaps", SWAPS_HEAD
				"/srv/swap.link   file\t\t1020\t\t0\t\t-2\n"), 0);
	assert_int_equal(check(g, "/srv/data.img"), -EBUSY);
	assert_non_null(strstr(g->err.buf, "'/srv/data.img' is in use as swap"));
	assert_non_null(strstr(g->err.buf, "/srv/swap.link"));
	/* the control: another file beside it on the same file system */
	assert_int_equal(check(g, "/srv/data.img.old"), 0);
}

static void test_agent_inuse__escaped_swap_name_is_read(void **state)
{
	struct gate *g = *state;

	assert_int_equal(fx_put(g->root, "/srv/my swap", "s"), 0);
	assert_int_equal(fx_put(g->root, "/proc/swaps", SWAPS_HEAD
				"/srv/my\\040swap   file\t\t1020\t\t0\t\t-2\n"), 0);
	assert_int_equal(check(g, "/srv/my swap"), -EBUSY);
	assert_int_equal(check(g, "/srv/data.img"), 0);
}

static void test_agent_inuse__loop_backing_file_is_refused(void **state)
{
	struct gate *g = *state;
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/block/loop7/loop", g->root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(fx_put(g->root, "/sys/block/loop7/loop/backing_file",
				"/srv/data.img\n"), 0);
	assert_int_equal(check(g, "/srv/data.img"), -EBUSY);
	assert_non_null(strstr(g->err.buf, "'/srv/data.img' is the backing file of loop "
				"device /dev/loop7"));
	assert_int_equal(check(g, "/srv/data.img.old"), 0);
	/* a detached-then-deleted file reads "PATH (deleted)": no file is it */
	assert_int_equal(fx_put(g->root, "/sys/block/loop7/loop/backing_file",
				"/srv/data.img (deleted)\n"), 0);
	assert_int_equal(check(g, "/srv/data.img"), 0);
}

static void test_agent_inuse__no_swap_no_loop_is_accepted(void **state)
{
	struct gate *g = *state;

	assert_int_equal(check(g, "/srv/data.img"), 0);
	assert_int_equal(g->err.len, 0);
}

/* A swap file whose name was deleted, another link left: /proc/swaps has
 * no name to compare, so a file carrying a swap signature is taken for
 * it; a file without one is not (the control), nor is a signed file when
 * every entry is found. */
static void test_agent_inuse__deleted_swap_name_refuses_a_swap_signature(void **state)
{
	struct gate *g = *state;
	char sig[4097];

	memset(sig, 'x', 4086);
	memcpy(sig + 4086, "SWAPSPACE2", 10);
	sig[4096] = '\0';
	assert_int_equal(fx_put(g->root, "/srv/data.img", sig), 0);
	assert_int_equal(check(g, "/srv/data.img"), 0);	/* no swap at all */
	assert_int_equal(fx_put(g->root, "/proc/swaps", SWAPS_HEAD
				"/srv/swap.img\\040(deleted)   file\t\t1020\t\t0\t\t-2\n"), 0);
	assert_int_equal(check(g, "/srv/data.img"), -EBUSY);
	assert_non_null(strstr(g->err.buf, "'/srv/data.img' carries a swap signature"));
	assert_non_null(strstr(g->err.buf, "(/srv/swap.img (deleted))"));
	assert_int_equal(check(g, "/srv/data.img.old"), 0);
}

/* A loop device asked by identity (the fixture's /dev/loopN is a hard
 * link to its file) finds its file under any name, and a name in
 * backing_file that is now another file's does not count. */
static void test_agent_inuse__loop_backing_file_by_identity(void **state)
{
	struct gate *g = *state;
	char from[4096], to[4096], cmd[4200];

	g->a.fs = &ln_fsops_fixture;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/block/loop7/loop %s/dev", g->root, g->root);
	assert_int_equal(system(cmd), 0);
	snprintf(from, sizeof(from), "%s/srv/data.img", g->root);
	snprintf(to, sizeof(to), "%s/dev/loop7", g->root);
	assert_int_equal(link(from, to), 0);
	assert_int_equal(fx_put(g->root, "/sys/block/loop7/loop/backing_file",
				"/srv/gone.img (deleted)\n"), 0);
	assert_int_equal(check(g, "/srv/data.img"), -EBUSY);
	assert_non_null(strstr(g->err.buf, "loop device /dev/loop7 (by identity: its "
				"backing_file reads '/srv/gone.img (deleted)')"));
	/* the control: backing_file names data.img.old, identity says not */
	assert_int_equal(fx_put(g->root, "/sys/block/loop7/loop/backing_file",
				"/srv/data.img.old\n"), 0);
	assert_int_equal(check(g, "/srv/data.img.old"), 0);
}

/* ln_inuse_fabric on the fabric-disks overlay for the sysfs block name. */
static int fabric(struct gate *g, const char *name)
{
	char cmd[8400];

	snprintf(cmd, sizeof(cmd), "%s/agent/build-tree.sh %s/agent/fabric-disks.tree %s",
		 FIXTURES_DIR, FIXTURES_DIR, g->root);
	assert_int_equal(system(cmd), 0);
	ln_buf_reset(&g->err);
	return ln_inuse_fabric(&g->a, name, "/dev/x", &g->err);
}

static void test_agent_inuse__fabric_namespace_is_refused(void **state)
{
	struct gate *g = *state;

	assert_int_equal(fabric(g, "nvme1n1"), -EBUSY);
	assert_non_null(strstr(g->err.buf, "controller nvme1 over transport tcp, subsystem "
				"nqn.2024-04.com.example:remote.disk"));
	assert_int_equal(fabric(g, "nvme0n1"), 0);
	assert_int_equal(g->err.len, 0);
	/* rdma, fc, loop: every transport but pcie */
	assert_int_equal(fx_put(g->root, "/sys/class/nvme/nvme1/transport", "loop\n"), 0);
	assert_int_equal(ln_inuse_fabric(&g->a, "nvme1n1", "/dev/x", &g->err), -EBUSY);
	/* not an NVMe namespace: not this gate's */
	assert_int_equal(fabric(g, "sda"), 0);
}

/* Partition number no of disk, as the kernel shows it: its directory in
 * the disk's, and /sys/class/block's link to it. */
static void put_partition(struct gate *g, const char *disk, const char *part, int no)
{
	char cmd[8400];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/class/block %s/sys/block/%s/%s && "
		 "ln -sfn ../../block/%s/%s %s/sys/class/block/%s && "
		 "echo %d > %s/sys/block/%s/%s/partition", g->root, g->root, disk, part, disk,
		 part, g->root, part, no, g->root, disk, part);
	assert_int_equal(system(cmd), 0);
}

/* A partition is judged by its disk's controllers (/sys/block lists only
 * disks; the kernel's /sys/class/block link names the disk): a partition
 * of the tcp nvme1n1 is refused naming nvme1, the control, a partition of
 * the local pcie nvme0n1, is accepted (before, both were "controller
 * (none found) over transport unknown"). */
static void test_agent_inuse__partition_judged_by_its_disk(void **state)
{
	struct gate *g = *state;
	char disk[64];

	assert_int_equal(fabric(g, "nvme0n1"), 0);
	put_partition(g, "nvme0n1", "nvme0n1p1", 1);
	put_partition(g, "nvme1n1", "nvme1n1p2", 2);
	ln_buf_reset(&g->err);
	assert_int_equal(ln_inuse_fabric(&g->a, "nvme0n1p1", "/dev/nvme0n1p1", &g->err), 0);
	assert_int_equal(g->err.len, 0);
	assert_int_equal(ln_inuse_fabric(&g->a, "nvme1n1p2", "/dev/nvme1n1p2", &g->err), -EBUSY);
	assert_non_null(strstr(g->err.buf, "device '/dev/nvme1n1p2' (nvme1n1p2) is a namespace of "
				"NVMe controller nvme1 over transport tcp"));
	assert_int_equal(ln_inuse_partition_disk(&g->a, "nvme1n1p2", disk, sizeof(disk)), 1);
	assert_string_equal(disk, "nvme1n1");
	/* a disk is no partition, nor a name without a link that is not one */
	assert_int_equal(ln_inuse_partition_disk(&g->a, "nvme0n1", disk, sizeof(disk)), 0);
	assert_int_equal(ln_inuse_partition_disk(&g->a, "sdz", disk, sizeof(disk)), 0);
}

static void test_agent_inuse__multipath_head_checks_every_controller(void **state)
{
	struct gate *g = *state;

	assert_int_equal(fabric(g, "nvme2n1"), -EBUSY);
	assert_non_null(strstr(g->err.buf, "controller nvme2 of nvme-subsys2 over transport "
				"tcp, subsystem nqn.2024-04.com.example:remote.mp"));
	/* the first pcie, the second unreadable: unknown counts as a fabric */
	assert_int_equal(fabric(g, "nvme4n1"), -EBUSY);
	assert_non_null(strstr(g->err.buf, "controller nvme5 of nvme-subsys4 over transport "
				"unknown"));
	/* both pcie: accepted */
	assert_int_equal(fx_put(g->root, "/sys/class/nvme/nvme5/transport", "pcie\n"), 0);
	ln_buf_reset(&g->err);
	assert_int_equal(ln_inuse_fabric(&g->a, "nvme4n1", "/dev/x", &g->err), 0);
}

/* ln_inuse_blockdev on the disks-in-use overlay for /dev/NAME. */
static int device(struct gate *g, const char *name)
{
	char cmd[8400], dev[64];

	snprintf(cmd, sizeof(cmd), "%s/agent/build-tree.sh %s/agent/disks-in-use.tree %s",
		 FIXTURES_DIR, FIXTURES_DIR, g->root);
	assert_int_equal(system(cmd), 0);
	snprintf(dev, sizeof(dev), "/dev/%s", name);
	ln_buf_reset(&g->err);
	return ln_inuse_blockdev(&g->a, "it", name, dev, &g->err);
}

/* One /proc/swaps walk for files and partitions: a swap partition named
 * there by another link to it is the same device. */
static void test_agent_inuse__swap_partition_is_found_by_identity(void **state)
{
	struct gate *g = *state;

	assert_int_equal(device(g, "sdc"), 1);
	assert_string_equal(g->err.buf, "it is in use as swap (/dev/sdc in /proc/swaps)");
	assert_int_equal(fx_put(g->root, "/proc/swaps", SWAPS_HEAD
				"/dev/disk/by-id/wwn-0x5000c500a1b2c3d4 partition\t1020\t0\t-2\n"), 0);
	ln_buf_reset(&g->err);
	assert_int_equal(ln_inuse_blockdev(&g->a, "it", "sdd", "/dev/sdd", &g->err), 1);
	assert_non_null(strstr(g->err.buf, "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4 in /proc/swaps"));
	/* the control: sdc is no longer swap, and nothing else holds it */
	ln_buf_reset(&g->err);
	assert_int_equal(ln_inuse_blockdev(&g->a, "it", "sdc", "/dev/sdc", &g->err), 0);
	assert_int_equal(g->err.len, 0);
}

static void test_agent_inuse__holder_is_named(void **state)
{
	struct gate *g = *state;

	assert_int_equal(device(g, "sdb1"), 1);
	assert_string_equal(g->err.buf, "it is held by dm-0 (LVM volume 'vg0-data')");
	/* the control: sdd has an empty holders folder */
	assert_int_equal(device(g, "sdd"), 0);
	assert_int_equal(g->err.len, 0);
}

static void test_agent_inuse__lvm_label_is_read(void **state)
{
	struct gate *g = *state;
	char p[4200];
	FILE *f;

	assert_int_equal(device(g, "sde"), 0);
	snprintf(p, sizeof(p), "%s/dev/sde", g->root);
	f = fopen(p, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, 512, SEEK_SET), 0);
	fputs("LABELONE", f);
	assert_int_equal(fseek(f, 512 + 24, SEEK_SET), 0);
	fputs("LVM2 001", f);
	fclose(f);
	ln_buf_reset(&g->err);
	assert_int_equal(ln_inuse_blockdev(&g->a, "it", "sde", "/dev/sde", &g->err), 1);
	assert_string_equal(g->err.buf, "it is an LVM physical volume (LVM2_member)");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
LN_TEST_MAIN(NULL, NULL,
	T(test_agent_inuse__swap_file_is_refused_by_identity),
	T(test_agent_inuse__escaped_swap_name_is_read),
	T(test_agent_inuse__loop_backing_file_is_refused),
	T(test_agent_inuse__no_swap_no_loop_is_accepted),
	T(test_agent_inuse__fabric_namespace_is_refused),
	T(test_agent_inuse__multipath_head_checks_every_controller),
	T(test_agent_inuse__swap_partition_is_found_by_identity),
	T(test_agent_inuse__partition_judged_by_its_disk),
	T(test_agent_inuse__holder_is_named),
	T(test_agent_inuse__lvm_label_is_read),
	T(test_agent_inuse__deleted_swap_name_refuses_a_swap_signature),
	T(test_agent_inuse__loop_backing_file_by_identity))
