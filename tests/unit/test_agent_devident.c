// SPDX-License-Identifier: MIT
/*
 * A device namespace's pinned identity (agents/agent/target/diskid.c):
 * the transport in it (pcie for the local NVMe drive, a fabric namespace
 * never), the comparison with a pin of an older llmnet without transport
 * (the same id is the same disk and is pinned again; another id, or the
 * same id now over a fabric, is refused), a replaced disk accepted by the
 * request's accept_device (apply --accept-device), and a boot-time restore
 * that makes the same check: after a "reboot" with another disk at the
 * path it refuses to export it, names both identities and changes
 * nothing, even when the stored request came from an apply that accepted
 * a replaced disk (which stores that apply's pin, never its
 * accept_device); with the same disk it restores.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/target/blockdev.h"
#include "agents/agent/target/diskid.h"
#include "common/proto.h"

#define NQN "nqn.2024-04.com.example:t"
#define WWID0 "nvme.1b36-6465616462656566-51454d55204e564d65204374726c-00000001"
#define WWID1 "nvme.1b36-6465616462656566-51454d55204e564d65204374726c-000000aa"
#define WWID2 "nvme.1b36-6465616462656566-51454d55204e564d65204374726c-000000bb"
#define STATE "/var/lib/llmnet/state.json"

static void test_agent_devident__compare(void **st)
{
	(void)st;
	assert_int_equal(ln_diskid_compare("pcie:wwid:eui.1", "pcie:wwid:eui.1"), LN_DISKID_SAME);
	assert_int_equal(ln_diskid_compare("pcie:wwid:eui.1", "pcie:wwid:eui.2"), LN_DISKID_OTHER);
	/* the same id over another transport is another disk */
	assert_int_equal(ln_diskid_compare("pcie:wwid:eui.1", "scsi:wwid:eui.1"), LN_DISKID_OTHER);
	/* an old pin: the same id, pinned again with the transport */
	assert_int_equal(ln_diskid_compare("wwid:eui.1", "pcie:wwid:eui.1"), LN_DISKID_UPGRADE);
	assert_int_equal(ln_diskid_compare("by-id:ata-X-part2", "scsi:by-id:ata-X-part2"),
			 LN_DISKID_UPGRADE);
	assert_int_equal(ln_diskid_compare("serial:S1", "virtio:serial:S1"), LN_DISKID_UPGRADE);
	assert_int_equal(ln_diskid_compare("dm:LVM-a", "virtual:dm:LVM-a"), LN_DISKID_UPGRADE);
	assert_int_equal(ln_diskid_compare("wwid:eui.1", "pcie:wwid:eui.2"), LN_DISKID_OTHER);
	/* an old pin's kind must match: "serial:X" is not "wwid:X" */
	assert_int_equal(ln_diskid_compare("serial:eui.1", "pcie:wwid:eui.1"), LN_DISKID_OTHER);
	assert_int_equal(ln_diskid_compare("wwid:eui.1", "garbage"), LN_DISKID_OTHER);
	assert_true(ln_diskid_has_transport("pcie:wwid:x"));
	assert_false(ln_diskid_has_transport("wwid:x"));
	assert_false(ln_diskid_has_transport("by-id:x"));
	assert_false(ln_diskid_has_transport("nothing"));
}

static char *tree(const char *overlay)
{
	char *root = fx_build("node-target"), cmd[1024];

	assert_non_null(root);
	if (overlay) {
		snprintf(cmd, sizeof(cmd), "%s/agent/build-tree.sh %s/agent/%s %s", FIXTURES_DIR,
			 FIXTURES_DIR, overlay, root);
		assert_int_equal(system(cmd), 0);
	}
	return root;
}

/* The transport of each kind of disk, and a fabric namespace refused by
 * the in-use gate before it could be pinned. */
static void test_agent_devident__transport(void **st)
{
	static const char *const cases[][2] = {
		{ "/sys/block/nvme0n1", "pcie" },
		{ "/sys/class/block/sde", "scsi" },
		{ "/sys/class/block/sda2/..", "scsi" },
		{ "/sys/class/block/dm-0", "virtual" },
	};
	char *root = tree("disks-in-use.tree"), *fab = tree("fabric-disks.tree"), tr[64], p[4096];
	struct ln_buf err = LN_BUF_INIT;
	struct ln_agent a, b;
	size_t i;

	(void)st;
	assert_int_equal(ln_agent_init(&a, root, &err), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ln_diskid_transport(&a, cases[i][0], "x", tr, sizeof(tr), &err), 0);
		assert_string_equal(tr, cases[i][1]);
	}
	assert_string_equal(err.buf, "");
	/* a device whose bus cannot be read */
	snprintf(p, sizeof(p), "%s/sys/class/block/sde/device/subsystem", root);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(ln_diskid_transport(&a, "/sys/class/block/sde", "/dev/sde", tr,
					     sizeof(tr), &err), -ENODEV);
	assert_non_null(strstr(err.buf, "device '/dev/sde' (sde): the bus of its device cannot "
				       "be read"));
	ln_buf_reset(&err);
	assert_int_equal(ln_agent_init(&b, fab, &err), 0);
	assert_int_equal(ln_diskid_transport(&b, "/sys/block/nvme1n1", "/dev/nvme1n1", tr,
					     sizeof(tr), &err), -EBUSY);
	assert_non_null(strstr(err.buf, "over transport tcp"));
	ln_buf_reset(&err);
	assert_int_equal(ln_diskid_transport(&b, "/sys/block/nvme2n1", "/dev/nvme2n1", tr,
					     sizeof(tr), &err), -EBUSY);
	assert_int_equal(ln_diskid_transport(&b, "/sys/block/nvme0n1", "/dev/nvme0n1", tr,
					     sizeof(tr), &err), 0);
	assert_string_equal(tr, "pcie");
	ln_buf_release(&err);
	fx_remove(root);
	fx_remove(fab);
}

/* A target of cluster c exporting nvme0n1; extra: more namespace keys. */
static const char *request(int persist, const char *extra)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":%d,\"cluster\":\"c\"%s,\"targets\":[{\"nqn\":\"" NQN "\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4430,"
		 "\"hosts\":[\"nqn.2014-08.org.example:h1\"],\"namespaces\":[{\"nsid\":1,"
		 "\"device\":\"/dev/nvme0n1\",\"device_ref\":\"n1:/dev/nvme0n1\"%s}]}]}",
		 LN_PROTO_VERSION, persist ? ",\"persist\":true" : "", extra ? extra : "");
	return buf;
}

static int apply(const char *root, const char *in, struct ln_buf *out)
{
	const char *args[] = { "apply", NULL };
	struct ln_buf err = LN_BUF_INIT;
	int rc = fx_agent(root, args, in, out, &err, NULL);

	if (rc)
		fprintf(stderr, "apply rc %d: %s\n%s\n", rc, err.buf, out->buf);
	ln_buf_release(&err);
	return rc;
}

/* The agent's own bookkeeping (state, lock) may change on a refusal. */
static int skip_agent_files(const char *rel)
{
	return !strncmp(rel, "/var/lib/llmnet", 15) || !strncmp(rel, "/run/llmnet", 11);
}

/* A "reboot": configfs empty again, the state kept. */
static void reboot(const char *root)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/sys/kernel/config/nvmet/ports/1' "
		 "'%s/sys/kernel/config/nvmet/subsystems/" NQN "' "
		 "'%s/sys/kernel/config/nvmet/hosts/nqn.2014-08.org.example:h1'", root, root, root);
	assert_int_equal(system(cmd), 0);
}

static int state_has(const char *root, const char *text)
{
	struct ln_buf v = LN_BUF_INIT;
	int r;

	fx_read(root, STATE, &v);
	r = strstr(v.buf, text) != NULL;
	ln_buf_release(&v);
	return r;
}

/* Write the pin back as an llmnet before transports recorded it. */
static void old_pin(const char *root)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "sed -i 's/\"pcie:wwid:/\"wwid:/' '%s" STATE "'", root);
	assert_int_equal(system(cmd), 0);
	assert_true(state_has(root, "\"device_id\": \"wwid:" WWID0 "\""));
}

/* An old pin of the same disk is the same disk: exported, and pinned
 * again with its transport. */
static void test_agent_devident__old_pin_upgraded(void **st)
{
	char *root = tree(NULL);
	struct ln_buf out = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request(0, NULL), &out), 0);
	assert_true(state_has(root, "\"device_id\": \"pcie:wwid:" WWID0 "\""));
	old_pin(root);
	reboot(root);
	assert_int_equal(apply(root, request(0, NULL), &out), 0);
	assert_true(fx_has_change(&out, "create", "nvmet_namespace"));
	assert_true(state_has(root, "\"device_id\": \"pcie:wwid:" WWID0 "\""));
	/* and without a reboot: the pin is upgraded on the next apply */
	old_pin(root);
	assert_int_equal(apply(root, request(0, NULL), &out), 0);
	assert_true(state_has(root, "\"device_id\": \"pcie:wwid:" WWID0 "\""));
	ln_buf_release(&out);
	fx_remove(root);
}

/* An old pin is never taken to mean "local": the same id, now a fabric
 * namespace's (its controller over tcp), is refused by the gate; another
 * id is another disk. Nothing is exported either time. */
static void test_agent_devident__old_pin_not_trusted(void **st)
{
	char *root = tree(NULL);
	struct ln_buf out = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request(0, NULL), &out), 0);
	old_pin(root);
	reboot(root);
	assert_int_equal(fx_put(root, "/sys/class/nvme/nvme0/transport", "tcp\n"), 0);
	assert_int_equal(fx_apply_refused(root, request(0, NULL), 1,
					  "is a namespace of NVMe controller nvme0 over transport tcp",
					  skip_agent_files), 0);
	assert_true(state_has(root, "\"device_id\": \"wwid:" WWID0 "\""));
	assert_int_equal(fx_put(root, "/sys/class/nvme/nvme0/transport", "pcie\n"), 0);
	assert_int_equal(fx_put(root, "/sys/block/nvme0n1/wwid", WWID1 "\n"), 0);
	assert_int_equal(fx_apply_refused(root, request(0, NULL), 1,
					  "that was wwid:" WWID0 ", this is pcie:wwid:" WWID1,
					  skip_agent_files), 0);
	ln_buf_release(&out);
	fx_remove(root);
}

/* A replaced disk: refused, with both identities and the flag, as a change
 * line; accepted by accept_device, pinned (a warning: the run log) and
 * exported, pointed at again while the namespace exists; then converged
 * without the flag. */
static void test_agent_devident__accept_replaced(void **st)
{
	char *root = tree(NULL), p[4096];
	const char *planv[] = { "plan", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request(0, NULL), &out), 0);
	assert_int_equal(fx_put(root, "/sys/block/nvme0n1/wwid", WWID1 "\n"), 0);
	assert_int_equal(fx_apply_refused(root, request(0, NULL), 1,
					  "\"detail\": \"device identity 'pcie:wwid:" WWID0
					  "' -> 'pcie:wwid:" WWID1 "'\"",
					  skip_agent_files), 0);
	assert_int_equal(fx_apply_refused(root, request(0, NULL), 1,
					  "`llmnet apply --accept-device n1:/dev/nvme0n1` pins and "
					  "exports this one", skip_agent_files), 0);
	/* plan says the same, and changes nothing */
	assert_int_equal(fx_agent(root, planv, request(0, NULL), &out, &err, NULL), 1);
	assert_non_null(strstr(out.buf, "device identity 'pcie:wwid:" WWID0 "' -> 'pcie:wwid:"
					WWID1 "'"));
	assert_true(fx_has_change(&out, "change", "nvmet_namespace"));
	/* accepted: the namespace is disabled, pointed at the disk, enabled */
	assert_int_equal(apply(root, request(0, ",\"accept_device\":true"), &out), 0);
	assert_non_null(strstr(out.buf, "\"detail\": \"device 'pcie:wwid:" WWID0 "' -> "
					"'pcie:wwid:" WWID1 "' (--accept-device)\""));
	assert_non_null(strstr(out.buf, "accepted as a replaced disk (--accept-device "
					"n1:/dev/nvme0n1): pinned pcie:wwid:" WWID1 ", was pcie:wwid:"
					WWID0));
	assert_true(state_has(root, "\"device_id\": \"pcie:wwid:" WWID1 "\""));
	snprintf(p, sizeof(p), "/sys/kernel/config/nvmet/subsystems/" NQN "/namespaces/1/enable");
	fx_read(root, p, &v);
	assert_string_equal(v.buf, "1\n");
	/* the new disk is the pin now: converged without the flag, and with
	 * it (the same disk: nothing to accept) */
	assert_int_equal(apply(root, request(0, NULL), &out), 0);
	assert_non_null(strstr(out.buf, "\"converged\": true"));
	assert_int_equal(apply(root, request(0, ",\"accept_device\":true"), &out), 0);
	assert_non_null(strstr(out.buf, "\"converged\": true"));
	assert_null(strstr(out.buf, "accepted as a replaced disk"));
	/* after a reboot, accepted: the create line says what it replaced */
	reboot(root);
	assert_int_equal(fx_put(root, "/sys/block/nvme0n1/wwid", WWID2 "\n"), 0);
	assert_int_equal(apply(root, request(0, ",\"accept_device\":true"), &out), 0);
	assert_non_null(strstr(out.buf, "pcie:wwid:" WWID2 " replacing pcie:wwid:" WWID1
					" (--accept-device)"));
	assert_true(state_has(root, "\"device_id\": \"pcie:wwid:" WWID2 "\""));
	ln_test_release(&out, &err, &v);
	fx_remove(root);
}

/* device_ref must name the namespace's own device; accept_device goes
 * with a device only. */
static void test_agent_devident__request_fields(void **st)
{
	char *root = tree(NULL);
	const char *args[] = { "plan", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	char bad[2048];

	(void)st;
	snprintf(bad, sizeof(bad), "%s", request(0, NULL));
	memcpy(strstr(bad, "n1:/dev/nvme0n1"), "n1:/dev/nvme0n9", 15);
	assert_int_equal(fx_agent(root, args, bad, &out, &err, NULL), LN_AGENT_EXIT_REQUEST);
	assert_non_null(strstr(out.buf, "device_ref must be NODE:PATH"));
	snprintf(bad, sizeof(bad), "%s", request(0, NULL));
	memcpy(strstr(bad, "n1:/dev/nvme0n1"), "n;:/dev/nvme0n1", 15);
	assert_int_equal(fx_agent(root, args, bad, &out, &err, NULL), LN_AGENT_EXIT_REQUEST);
	assert_int_equal(fx_agent(root, args, request(0, ",\"accept_device\":1"), &out, &err, NULL),
			 LN_AGENT_EXIT_REQUEST);
	/* the control */
	assert_int_equal(fx_agent(root, args, request(0, ",\"accept_device\":false"), &out, &err,
				  NULL), 0);
	ln_test_release(&out, &err);
	fx_remove(root);
}

/* A target tree with systemd and a pushed agent, so persist stores the
 * request and the boot unit. */
static char *persist_tree(void)
{
	char *root = tree(NULL), cmd[4096];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/var/lib/llmnet/bin %s/run/systemd/system "
		 "%s/etc/systemd/system && echo '#!pushed' > %s/var/lib/llmnet/bin/llmnet-agent",
		 root, root, root, root);
	assert_int_equal(system(cmd), 0);
	return root;
}

/* The node after a reboot: a fresh tree with root's llmnet files and
 * units, and wwid as its nvme0n1's. */
static char *booted(const char *root, const char *wwid)
{
	char *boot = persist_tree(), cmd[8192], w[128];

	snprintf(cmd, sizeof(cmd), "cp -a %s/var/lib/llmnet %s/var/lib/ && "
		 "cp -a %s/etc/systemd/system/. %s/etc/systemd/system/", root, boot, root, boot);
	assert_int_equal(system(cmd), 0);
	snprintf(w, sizeof(w), "%s\n", wwid);
	assert_int_equal(fx_put(boot, "/sys/block/nvme0n1/wwid", w), 0);
	return boot;
}

/* Run restore on boot under a 1 s boot bound; when it is still retrying
 * in the background (the target refused), stop it as systemd would. Its
 * exit code; what it printed into out. */
static int restore(const char *boot, struct ln_buf *out)
{
	char path[] = "/tmp/llmnet-restore-out.XXXXXX";
	struct ln_buf e = LN_BUF_INIT;
	int fd = mkstemp(path), status = 0, i;
	pid_t pid;

	assert_true(fd >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		unsetenv("NOTIFY_SOCKET");
		setenv("LLMNET_RESTORE_PAUSE_MS", "60000", 1);
		execl(AGENT_BIN, AGENT_BIN, "--root", boot, "--budget-ms", "1000", "restore",
		      "--cluster", "c", (char *)NULL);
		_exit(126);
	}
	for (i = 0; i < 300 && waitpid(pid, &status, WNOHANG) == 0; i++) {
		ln_buf_reset(out);
		ln_file_read(path, out, &e);
		if (strstr(out->buf, "the retries go on in the background")) {
			kill(pid, SIGTERM);
			waitpid(pid, &status, 0);
			break;
		}
		nanosleep(&(struct timespec){ 0, 100 * 1000000L }, NULL);
	}
	if (i == 300) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	ln_buf_reset(out);
	ln_file_read(path, out, &e);
	close(fd);
	unlink(path);
	ln_buf_release(&e);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int subsystem_exists(const char *root)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/" NQN, root);
	return access(p, F_OK) == 0;
}

/* A boot-time restore makes apply's identity check: another disk at the
 * path after a reboot is refused, both identities named, nothing changed;
 * the same disk is restored. */
static void test_agent_devident__restore_checks_identity(void **st)
{
	char *root = persist_tree(), *boot;
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request(1, NULL), &out), 0);
	assert_true(fx_has_change(&out, "create", "restore_request"));
	/* another disk at /dev/nvme0n1 after the reboot */
	boot = booted(root, WWID1);
	fx_list(boot, &before, skip_agent_files);
	assert_int_equal(restore(boot, &out), LN_AGENT_EXIT_TIMEOUT);
	assert_non_null(strstr(out.buf, "is not the device first exported as '" NQN "/1': that "
					"was pcie:wwid:" WWID0 ", this is pcie:wwid:" WWID1
					"; refusing to export it"));
	fx_list(boot, &after, skip_agent_files);
	assert_string_equal(before.buf, after.buf);
	assert_false(subsystem_exists(boot));
	assert_true(state_has(boot, "\"device_id\": \"pcie:wwid:" WWID0 "\""));
	fx_remove(boot);
	/* the control: the same disk is restored */
	boot = booted(root, WWID0);
	assert_int_equal(restore(boot, &out), 0);
	assert_true(subsystem_exists(boot));
	fx_remove(boot);
	ln_test_release(&out, &before, &after);
	fx_remove(root);
}

/* The stored request of an apply that accepted a replaced disk keeps
 * that apply's decision, not its word: accept_device is not stored (the
 * request stored is the one a plain apply of the same spec stores, so a
 * plain apply after it changes nothing), and the pin the apply made is
 * what the boot checks: the disk it accepted is restored, a third is
 * refused. */
static void test_agent_devident__restore_never_accepts(void **st)
{
	char *root = persist_tree(), *boot;
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request(1, NULL), &out), 0);
	assert_int_equal(fx_put(root, "/sys/block/nvme0n1/wwid", WWID1 "\n"), 0);
	assert_int_equal(apply(root, request(1, ",\"accept_device\":true"), &out), 0);
	assert_non_null(strstr(out.buf, "accepted as a replaced disk"));
	fx_read(root, "/var/lib/llmnet/restore/c.json", &v);
	assert_null(strstr(v.buf, "accept_device"));
	assert_non_null(strstr(v.buf, "\"device_ref\""));	/* the rest of the namespace kept */
	assert_true(state_has(root, "\"device_id\": \"pcie:wwid:" WWID1 "\""));
	/* a plain apply of the same spec stores the same request */
	assert_int_equal(apply(root, request(1, NULL), &out), 0);
	assert_false(fx_has_change(&out, "change", "restore_request"));
	boot = booted(root, WWID2);
	assert_int_equal(restore(boot, &out), LN_AGENT_EXIT_TIMEOUT);
	assert_non_null(strstr(out.buf, "that was pcie:wwid:" WWID1 ", this is pcie:wwid:" WWID2));
	assert_false(subsystem_exists(boot));
	assert_true(state_has(boot, "\"device_id\": \"pcie:wwid:" WWID1 "\""));
	fx_remove(boot);
	boot = booted(root, WWID1);
	assert_int_equal(restore(boot, &out), 0);
	assert_true(subsystem_exists(boot));
	fx_remove(boot);
	ln_test_release(&out, &v);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_devident__compare),
	cmocka_unit_test(test_agent_devident__transport),
	cmocka_unit_test(test_agent_devident__old_pin_upgraded),
	cmocka_unit_test(test_agent_devident__old_pin_not_trusted),
	cmocka_unit_test(test_agent_devident__accept_replaced),
	cmocka_unit_test(test_agent_devident__request_fields),
	cmocka_unit_test(test_agent_devident__restore_checks_identity),
	cmocka_unit_test(test_agent_devident__restore_never_accepts),
)
