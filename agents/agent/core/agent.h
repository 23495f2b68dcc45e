/* SPDX-License-Identifier: MIT */
/*
 * llmnet-agent internals shared by its modules. The agent converges one
 * node; everything it touches is reached through two seams so that the
 * same code runs on a real kernel and on a fixture tree under --root:
 *
 *  - struct ln_fsops: configfs and filesystem changes (mkdir, rmdir,
 *    symlink, attribute writes, module loading, the configfs mount). The
 *    fixture implementation enforces the kernel's configfs rules itself.
 *  - struct ln_iniops: the NVMe-oF initiator (scan, connect, disconnect,
 *    host NQN generation, a discovery controller and its log page). The
 *    real one is libnvme, behind nvme_shim.c, and /dev/nvme-fabrics and
 *    the controller's ioctl (fabrics.c) for what libnvme 1.3 cannot do.
 *
 * Reads go straight to the filesystem under the root (kernel/read.h): a
 * fixture tree is an ordinary directory tree shaped like the real
 * sysfs/procfs/configfs. Every change passes through ln_agent_change()
 * (the failpoint), the file changes through kernel/fs.h.
 */
#ifndef LN_AGENT_H
#define LN_AGENT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/proto.h"
#include "common/util.h"

#define LN_NVMET "/sys/kernel/config/nvmet"

struct ln_agent;

struct ln_fsops {
	const char *name;
	int (*mkdir)(struct ln_agent *a, const char *path, struct ln_buf *err);
	int (*rmdir)(struct ln_agent *a, const char *path, struct ln_buf *err);
	/* link at linkpath pointing to the node path target */
	int (*symlink)(struct ln_agent *a, const char *target, const char *linkpath,
		       struct ln_buf *err);
	int (*unlink)(struct ln_agent *a, const char *path, struct ln_buf *err);
	int (*write_attr)(struct ln_agent *a, const char *path, const char *val,
			  struct ln_buf *err);
	/* ensure a kernel module is loaded (bounded) */
	int (*modprobe)(struct ln_agent *a, const char *module, struct ln_buf *err);
	/* unload a module (bounded); fails while it is in use */
	int (*rmmod)(struct ln_agent *a, const char *module, struct ln_buf *err);
	/* mount configfs at /sys/kernel/config */
	int (*mount_configfs)(struct ln_agent *a, struct ln_buf *err);
	/* 1 when the filesystem holding path opens files with O_DIRECT, 0 if not */
	int (*odirect_ok)(struct ln_agent *a, const char *path);
	/* mount / unmount a filesystem; a fabric one always nosuid,nodev, and
	 * noexec unless exec is 1 (the spec's mount.exec) */
	int (*mount)(struct ln_agent *a, const char *dev, const char *path, const char *fs,
		     int exec, struct ln_buf *err);
	int (*umount)(struct ln_agent *a, const char *path, struct ln_buf *err);
	/* change the per-mount flags (MS_RDONLY, MS_NOSUID, MS_NODEV,
	 * MS_NOEXEC: flags is the whole set) of the mount at path in place
	 * (MS_REMOUNT | MS_BIND): never an unmount, atime flags kept */
	int (*remount)(struct ln_agent *a, const char *path, unsigned long flags,
		       struct ln_buf *err);
	/* make a filesystem on dev (bounded) */
	int (*mkfs)(struct ln_agent *a, const char *dev, const char *fs, struct ln_buf *err);
	/* add_key(2) a TLS PSK (type "psk", description identity) to the
	 * kernel's .nvme keyring, replacing one of that identity */
	int (*add_psk)(struct ln_agent *a, const char *identity, const unsigned char *key,
		       size_t len, struct ln_buf *err);
	/* remove the .nvme keyring's PSK of that identity (none: 0) */
	int (*drop_psk)(struct ln_agent *a, const char *identity, struct ln_buf *err);
	/* Reads for the in-use gate (target/inuse.h), which change nothing. */
	/* the mount id of the mount the open fd lies in (statx STATX_MNT_ID,
	 * mountinfo's first field): 0 with id, -ENOSYS where the kernel
	 * cannot tell (older than 5.8) or the fixture's mount table is a
	 * recording that no fd lies in */
	int (*mount_id)(const struct ln_agent *a, int fd, unsigned long long *id);
	/* the backing file of loop device name ("loop3") by identity
	 * (LOOP_GET_STATUS64: lo_device, lo_inode), whatever its name has
	 * become (renamed, or " (deleted)" with another link left): 0 with
	 * dev and ino, negative when it is not attached or cannot be asked */
	int (*loop_backing)(const struct ln_agent *a, const char *name, dev_t *dev, ino_t *ino);
};

/* One operation of an ops table: .op = prefix_op. */
#define LN_OP(prefix, op) .op = prefix##_##op

/* The ops table of one implementation (the node's, the fixture's), named
 * label, whose functions are prefix_mkdir, prefix_rmdir, ...: every one
 * implements every operation, and an operation added here is missed by
 * none. */
#define LN_FSOPS(label, prefix)                                                                    \
	{                                                                                          \
		.name = (label), LN_OP(prefix, mkdir), LN_OP(prefix, rmdir),                       \
		LN_OP(prefix, symlink), LN_OP(prefix, unlink), LN_OP(prefix, write_attr),          \
		LN_OP(prefix, modprobe), LN_OP(prefix, rmmod), LN_OP(prefix, mount_configfs),      \
		LN_OP(prefix, odirect_ok), LN_OP(prefix, mount), LN_OP(prefix, umount),            \
		LN_OP(prefix, remount),                                                            \
		LN_OP(prefix, mkfs), LN_OP(prefix, add_psk), LN_OP(prefix, drop_psk),              \
		LN_OP(prefix, mount_id), LN_OP(prefix, loop_backing),                              \
	}

/* One NVMe controller as seen on the node. */
struct ln_ctrl {
	char name[32];		/* nvme1 */
	char transport[16];	/* tcp, rdma, pcie, loop */
	char traddr[64];
	char trsvcid[16];
	char subsysnqn[256];
	char hostnqn[256];
	char state[32];
};

struct ln_ctrl_list {
	struct ln_ctrl *v;
	size_t n;
};

/* Connection options for ln_iniops.connect. */
struct ln_conn {
	const char *subsysnqn;
	const char *transport;
	const char *traddr;
	const char *trsvcid;
	const char *hostnqn;
	const char *hostid;
	int nr_io_queues, queue_size, ctrl_loss_tmo, reconnect_delay; /* 0: default */
	/* DH-HMAC-CHAP secrets (NULL: none); never logged or printed */
	const char *dhchap_secret, *dhchap_ctrl_secret;
	int tls;	/* TLS 1.3 with the .nvme keyring's PSK for this host and subsystem */
	/* the source the connection is bound to (issue 27): the address and,
	 * for tcp, the netdev holding it; NULL: the route's */
	const char *host_traddr, *host_iface;
};

struct ln_iniops {
	const char *name;
	int (*scan)(struct ln_agent *a, struct ln_ctrl_list *out, struct ln_buf *err);
	/* connect; the new controller's name goes to name (size 32) */
	int (*connect)(struct ln_agent *a, const struct ln_conn *c, char *name,
		       struct ln_buf *err);
	int (*disconnect)(struct ln_agent *a, const char *name, struct ln_buf *err);
	/* a fresh host NQN (malloc'd) for this machine */
	int (*hostnqn_generate)(struct ln_agent *a, char **out, struct ln_buf *err);
	/* connect the discovery controller c names (c->subsysnqn is the
	 * discovery NQN); its name to name (size 32); disc_delete deletes it */
	int (*disc_connect)(struct ln_agent *a, const struct ln_conn *c, char *name,
			    struct ln_buf *err);
	/* len bytes at off of the discovery log page of controller name */
	int (*disc_log)(struct ln_agent *a, const char *name, uint64_t off, void *buf, size_t len,
			struct ln_buf *err);
	/* delete the discovery controller name that disc_connect made */
	int (*disc_delete)(struct ln_agent *a, const char *name, struct ln_buf *err);
};

/* The initiator ops of one implementation, as LN_FSOPS. */
#define LN_INIOPS(label, prefix)                                                                   \
	{                                                                                          \
		.name = (label), LN_OP(prefix, scan), LN_OP(prefix, connect),                      \
		LN_OP(prefix, disconnect), LN_OP(prefix, hostnqn_generate),                        \
		LN_OP(prefix, disc_connect), LN_OP(prefix, disc_log), LN_OP(prefix, disc_delete),  \
	}

struct ln_agent {
	char root[PATH_MAX];	/* "" for the real node, else the fixture root */
	int fixture;
	const struct ln_fsops *fs;
	const struct ln_iniops *ini;
	unsigned long changes;	/* changes made so far (failpoint counter) */
	unsigned long failpoint;/* stop before this change; 0: never */
	long clock_step_ms;	/* tests: each change moves the budget's clock on */
	int dry_run;		/* plan: never change anything */
	/* A session request's input (the plan/apply request), read instead
	 * of stdin when has_input is set. */
	const char *input;
	size_t input_len;
	int has_input;
};

/*
 * Raised when the session's peer is gone (its channel closed, or SIGTERM):
 * the change gate then refuses every change, the lock wait gives up and
 * bounded children are stopped, so the request in flight ends at once and
 * nothing more is written (failpoint.c; the session raises it).
 */
extern volatile int ln_agent_stopping;

/* Set up the agent for root (NULL or "/" for the real node; else
 * LLMNET_AGENT_ROOT when set): the root, the ops tables, and the test
 * knobs LLMNET_FAILPOINT and LLMNET_CLOCK_STEP_MS (agent.c). */
int ln_agent_init(struct ln_agent *a, const char *root, struct ln_buf *err);

/* The failpoint (failpoint.c): count one change, described by what; exits
 * with status LN_AGENT_EXIT_FAILPOINT when this is the change
 * LLMNET_FAILPOINT names. A request whose time budget ran out, or whose
 * caller went away, is answered with the `timeout` error naming the change
 * and ends here with LN_AGENT_EXIT_TIMEOUT (budget.h): nothing is committed
 * after it. In a dry run it refuses (-EROFS): a read-only verb never
 * changes; once the session is closed, -ECANCELED. */
int ln_agent_change(struct ln_agent *a, const char *what);
/* The hook the failpoint calls, with the exit code, before a request ends
 * the process (its budget ran out): the session installs one that sends
 * the answer captured so far (session.c). NULL: none. */
void ln_agent_on_abort(void (*fn)(int rc));

/* The implementations behind the seams: the node's (kernel/fsops.c,
 * kernel/nvme_shim.c) and the fixture's (kernel/fixture/). */
extern const struct ln_fsops ln_fsops_real;
extern const struct ln_fsops ln_fsops_fixture;
extern const struct ln_iniops ln_iniops_real;
extern const struct ln_iniops ln_iniops_fixture;

#endif
