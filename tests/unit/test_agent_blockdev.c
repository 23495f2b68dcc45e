// SPDX-License-Identifier: MIT
/*
 * Namespace devices in use are never exported (agents/agent/target/blockdev.c), on
 * the disks-in-use fixture laid over node-target: a partition mounted (found
 * by major:minor only), a partition held by LVM, swap, unassembled LVM and md
 * signatures, a partition backing a foreign namespace in configfs, two
 * namespaces of one request on one disk, and links: a by-id link is resolved
 * and the resolved device is what is recorded; a link out of /dev is refused.
 * Each refusal leaves the tree as it was.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <errno.h>
#include <sys/file.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/target/blockdev.h"

static char *build(void)
{
	char *root = fx_build("node-target"), cmd[1024];

	assert_non_null(root);
	snprintf(cmd, sizeof(cmd), "%s/agent/build-tree.sh %s/agent/disks-in-use.tree %s",
		 FIXTURES_DIR, FIXTURES_DIR, root);
	assert_int_equal(system(cmd), 0);
	return root;
}

static const char *request(const char *ns)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.com.example:t\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4430,"
		 "\"hosts\":[\"nqn.2014-08.org.example:h1\"],\"namespaces\":[%s]}]}", ns);
	return buf;
}

/* The agent's own bookkeeping (state, lock) may change on a refusal. */
static int skip_agent_files(const char *rel)
{
	return !strncmp(rel, "/var/lib/llmnet", 15) || !strncmp(rel, "/run/llmnet", 11);
}

/* Apply ns on a fresh tree; expect exit 1, want in the answer, and the
 * tree unchanged. */
static void refused(const char *ns, const char *want, void (*prepare)(const char *root))
{
	char *root = build();

	if (prepare)
		prepare(root);
	assert_int_equal(fx_apply_refused(root, request(ns), 1, want, skip_agent_files), 0);
	fx_remove(root);
}

static void test_agent_blockdev__partition_mounted_refuses_disk(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sda\"}",
		"device '/dev/sda' is in use: partition sda1 is mounted at /boot; refusing", NULL);
}

static void test_agent_blockdev__link_is_resolved_and_named(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001\"}",
		"device '/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001' ('/dev/sda') is in use: "
		"partition sda1 is mounted at /boot",
		NULL);
}

static void test_agent_blockdev__lvm_holder_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sdb\"}",
		"device '/dev/sdb' is in use: partition sdb1 is held by dm-0 (LVM volume "
		"'vg0-data')",
		NULL);
}

static void test_agent_blockdev__swap_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sdc\"}", "device '/dev/sdc' is in use: it is in use as swap",
		NULL);
}

static void write_at(const char *root, const char *dev, long off, const char *bytes, size_t n)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s%s", root, dev);
	fd = open(p, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, n, off), (ssize_t)n);
	close(fd);
}

static void lvm_label(const char *root)
{
	write_at(root, "/dev/sde", 512, "LABELONE", 8);
	write_at(root, "/dev/sde", 512 + 24, "LVM2 001", 8);
}

static void md_superblock(const char *root)
{
	write_at(root, "/dev/sdf", 4096, "\xfc\x4e\x2b\xa9", 4);
}

static void test_agent_blockdev__lvm_signature_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sde\"}",
		"device '/dev/sde' is in use: it is an LVM physical volume (LVM2_member)", lvm_label);
}

static void test_agent_blockdev__md_signature_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sdf\"}",
		"device '/dev/sdf' is in use: it is an md member (linux_raid_member)", md_superblock);
}

static void test_agent_blockdev__backing_a_configfs_namespace_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sdg\"}",
		"device '/dev/sdg' is in use: '/dev/disk/by-id/wwn-0x5000c500a1b2c3d7-part1' backs "
		"namespace 2 of 'nqn.2014-08.org.example:foreign.target' in nvmet configfs",
		NULL);
}

static void test_agent_blockdev__two_namespaces_one_disk_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sdd\"},"
		"{\"nsid\":2,\"device\":\"/dev/disk/by-id/wwn-0x5000c500a1b2c3d4\"}",
		"device '/dev/sdd' is in use: namespace 2 of 'nqn.2024-04.com.example:t' in this "
		"request uses '/dev/disk/by-id/wwn-0x5000c500a1b2c3d4'",
		NULL);
}

static void test_agent_blockdev__link_out_of_dev_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/disk/by-id/escape\"}",
		"device '/dev/disk/by-id/escape' resolves to '/etc/machine-id', outside /dev", NULL);
}

static void test_agent_blockdev__directory_is_not_a_device(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sdz\"}", "'/dev/sdz' is not a block device", NULL);
}

/* Free devices export as before; a link is recorded as the device it names. */
static void exported(const char *ns, const char *want_path)
{
	char *root = build(), p[4096];
	const char *args[] = { "apply", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, dp = LN_BUF_INIT, e = LN_BUF_INIT;

	if (fx_agent(root, args, request(ns), &out, &err, NULL) != 0)
		fprintf(stderr, "%s\n%s\n", out.buf, err.buf);
	snprintf(p, sizeof(p),
		 "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:t/namespaces/1/"
		 "device_path",
		 root);
	assert_int_equal(ln_file_read(p, &dp, &e), 0);
	assert_string_equal(dp.buf, want_path);
	fx_remove(root);
	ln_test_release(&out, &err, &dp, &e);
}

static void test_agent_blockdev__free_link_records_resolved_device(void **st)
{
	(void)st;
	exported("{\"nsid\":1,\"device\":\"/dev/disk/by-id/wwn-0x5000c500a1b2c3d4\"}", "/dev/sdd\n");
}

static void test_agent_blockdev__free_partition_beside_mounted_one(void **st)
{
	(void)st;
	exported("{\"nsid\":1,\"device\":\"/dev/sda2\"}", "/dev/sda2\n");
}

/* The kernel's own in-use check: an exclusive opener of the device (on a
 * fixture root an exclusive flock stands for O_EXCL's claim) makes the
 * device refused, though sysfs and procfs show nothing. */
static int held = -1;

static void hold_sdd(const char *root)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/dev/sdd", root);
	held = open(p, O_RDONLY | O_CLOEXEC);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX | LOCK_NB), 0);
}

static void test_agent_blockdev__exclusive_opener_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/disk/by-id/wwn-0x5000c500a1b2c3d4\"}",
		"device '/dev/disk/by-id/wwn-0x5000c500a1b2c3d4' ('/dev/sdd') is in use: the "
		"kernel refuses to open it exclusively (mounted, or held by device-mapper, md or "
		"another program); refusing to export it",
		hold_sdd);
	close(held);
	held = -1;
}

/* Check and use: the device held open since the check must still be what
 * its path names when device_path is written; a device swapped in between
 * is refused. */
static void test_agent_blockdev__device_swapped_after_check_refused(void **st)
{
	char *root = build(), from[4096], to[4096];
	struct ln_buf err = LN_BUF_INIT;
	struct ln_blockdev bd;
	struct ln_agent a;

	(void)st;
	assert_int_equal(ln_agent_init(&a, root, &err), 0);
	assert_int_equal(ln_blockdev_resolve(&a, "/dev/sdd", &bd, &err), 0);
	assert_int_equal(ln_blockdev_claim(&a, &bd, "/dev/sdd", &err), 0);
	assert_int_equal(ln_blockdev_recheck(&a, &bd, "/dev/sdd", &err), 0);
	snprintf(from, sizeof(from), "%s/dev/sde", root);
	snprintf(to, sizeof(to), "%s/dev/sdd", root);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(ln_blockdev_recheck(&a, &bd, "/dev/sdd", &err), -ESTALE);
	assert_string_equal(err.buf, "device '/dev/sdd' changed between its check and its use "
				     "('/dev/sdd' is no longer the device checked); refusing to "
				     "export it");
	ln_blockdev_release(&bd);
	assert_int_equal(bd.fd, -1);
	ln_buf_release(&err);
	fx_remove(root);
}

/* The stable identity of each kind of device: WWID, a partition's disk's
 * WWID with its number, device-mapper's uuid, else a by-id name. */
static void test_agent_blockdev__stable_ids(void **st)
{
	char *root = build(), id[256];
	struct ln_buf err = LN_BUF_INIT;
	struct ln_blockdev bd;
	struct ln_agent a;
	static const char *const cases[][2] = {
		{ "/dev/sde", "scsi:wwid:naa.5000c500a1b2c3d5" },
		{ "/dev/sdd", "scsi:by-id:wwn-0x5000c500a1b2c3d4" },
		{ "/dev/sda2", "scsi:by-id:ata-QEMU_HARDDISK_QM00001-part2" },
		{ "/dev/mapper/vg0-data", "virtual:dm:LVM-Xq4bYc9dLkV3mN2pR7sT1uW5xZ8aB0cDeF6gH2iJ4kL9mN1oP3qR5sT7uV9wX1yZ" },
		{ "/dev/nvme0n1", "pcie:wwid:nvme.1b36-6465616462656566-51454d55204e564d65204374726c-00000001" },
	};
	size_t i;

	(void)st;
	assert_int_equal(ln_agent_init(&a, root, &err), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ln_blockdev_resolve(&a, cases[i][0], &bd, &err), 0);
		assert_int_equal(ln_blockdev_stable_id(&a, &bd, cases[i][0], id, sizeof(id), &err),
				 0);
		assert_string_equal(id, cases[i][1]);
	}
	/* a partition of a disk with a WWID: the disk's, and its number */
	assert_int_equal(fx_put(root, "/sys/class/block/sda/device/wwid", "naa.5000c500a1b2c3d0\n"), 0);
	assert_int_equal(ln_blockdev_resolve(&a, "/dev/sda2", &bd, &err), 0);
	assert_int_equal(ln_blockdev_stable_id(&a, &bd, "/dev/sda2", id, sizeof(id), &err), 0);
	assert_string_equal(id, "scsi:wwid:naa.5000c500a1b2c3d0/part2");
	/* nothing to know it by */
	assert_int_equal(ln_blockdev_resolve(&a, "/dev/sdc", &bd, &err), 0);
	assert_int_equal(ln_blockdev_stable_id(&a, &bd, "/dev/sdc", id, sizeof(id), &err), -ENOENT);
	assert_string_equal(err.buf, "");
	ln_buf_release(&err);
	fx_remove(root);
}

static void drop_sdf_wwid(const char *root)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/sys/class/block/sdf/device/wwid", root);
	assert_int_equal(unlink(p), 0);
}

static void test_agent_blockdev__device_without_identity_refused(void **st)
{
	(void)st;
	refused("{\"nsid\":1,\"device\":\"/dev/sdf\"}",
		"device '/dev/sdf' (/dev/sdf) has no stable identity (no WWID, serial or "
		"/dev/disk/by-id name), so llmnet could not tell it from another device after a "
		"reboot; refusing to export it", drop_sdf_wwid);
}

/* A device is recorded by its identity at first export; after a reboot
 * (configfs empty, the state kept) another disk behind the same path is
 * refused and nothing of its target is made. */
static void test_agent_blockdev__changed_device_refused(void **st)
{
	char *root = build(), p[4096];
	const char *args[] = { "apply", NULL };
	const char *ns = "{\"nsid\":1,\"device\":\"/dev/sde\"}";
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, v = LN_BUF_INIT, e = LN_BUF_INIT;

	(void)st;
	assert_int_equal(fx_agent(root, args, request(ns), &out, &err, NULL), 0);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_non_null(strstr(v.buf, "\"device_id\": \"scsi:wwid:naa.5000c500a1b2c3d5\""));
	/* the same disk: converged */
	assert_int_equal(fx_agent(root, args, request(ns), &out, &err, NULL), 0);
	assert_non_null(strstr(out.buf, "\"converged\": true"));
	/* "reboot": configfs is empty again, and sde is another disk */
	snprintf(p, sizeof(p), "rm -rf '%s/sys/kernel/config/nvmet/ports/1' "
		 "'%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:t' "
		 "'%s/sys/kernel/config/nvmet/hosts/nqn.2014-08.org.example:h1'", root, root, root);
	assert_int_equal(system(p), 0);
	assert_int_equal(fx_put(root, "/sys/class/block/sde/device/wwid", "naa.5000c500ffffffff\n"), 0);
	assert_int_equal(fx_apply_refused(root, request(ns), 1,
					  "device '/dev/sde' (/dev/sde) is not the device first "
					  "exported as 'nqn.2024-04.com.example:t/1': that was "
					  "scsi:wwid:naa.5000c500a1b2c3d5, this is "
					  "scsi:wwid:naa.5000c500ffffffff; refusing to export it", skip_agent_files), 0);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:t",
		 root);
	assert_int_equal(access(p, F_OK), -1);
	ln_test_release(&out, &err, &v, &e);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_blockdev__partition_mounted_refuses_disk),
	cmocka_unit_test(test_agent_blockdev__link_is_resolved_and_named),
	cmocka_unit_test(test_agent_blockdev__lvm_holder_refused),
	cmocka_unit_test(test_agent_blockdev__swap_refused),
	cmocka_unit_test(test_agent_blockdev__lvm_signature_refused),
	cmocka_unit_test(test_agent_blockdev__md_signature_refused),
	cmocka_unit_test(test_agent_blockdev__backing_a_configfs_namespace_refused),
	cmocka_unit_test(test_agent_blockdev__two_namespaces_one_disk_refused),
	cmocka_unit_test(test_agent_blockdev__link_out_of_dev_refused),
	cmocka_unit_test(test_agent_blockdev__directory_is_not_a_device),
	cmocka_unit_test(test_agent_blockdev__free_link_records_resolved_device),
	cmocka_unit_test(test_agent_blockdev__free_partition_beside_mounted_one),
	cmocka_unit_test(test_agent_blockdev__exclusive_opener_refused),
	cmocka_unit_test(test_agent_blockdev__device_swapped_after_check_refused),
	cmocka_unit_test(test_agent_blockdev__stable_ids),
	cmocka_unit_test(test_agent_blockdev__device_without_identity_refused),
	cmocka_unit_test(test_agent_blockdev__changed_device_refused),
)
