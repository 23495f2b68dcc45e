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
 * Reads go straight to the filesystem under the root: a fixture tree is an
 * ordinary directory tree shaped like the real sysfs/procfs/configfs.
 * Every change passes through ln_agent_change() (the failpoint).
 */
#ifndef LN_AGENT_H
#define LN_AGENT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

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
	/* mount / unmount a filesystem */
	int (*mount)(struct ln_agent *a, const char *dev, const char *path, const char *fs,
		     struct ln_buf *err);
	int (*umount)(struct ln_agent *a, const char *path, struct ln_buf *err);
	/* make a filesystem on dev (bounded) */
	int (*mkfs)(struct ln_agent *a, const char *dev, const char *fs, struct ln_buf *err);
	/* add_key(2) a TLS PSK (type "psk", description identity) to the
	 * kernel's .nvme keyring, replacing one of that identity */
	int (*add_psk)(struct ln_agent *a, const char *identity, const unsigned char *key,
		       size_t len, struct ln_buf *err);
	/* remove the .nvme keyring's PSK of that identity (none: 0) */
	int (*drop_psk)(struct ln_agent *a, const char *identity, struct ln_buf *err);
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
		LN_OP(prefix, mkfs), LN_OP(prefix, add_psk), LN_OP(prefix, drop_psk),              \
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
 * nothing more is written.
 */
extern volatile int ln_agent_stopping;

/* Set up the agent for root (NULL or "/" for the real node). */
int ln_agent_init(struct ln_agent *a, const char *root, struct ln_buf *err);

/* root + path into out (PATH_MAX); -ENAMETOOLONG when it does not fit. */
int ln_agent_path(const struct ln_agent *a, const char *path, char *out);

/* The failpoint: count one change, described by what; exits with status
 * LN_AGENT_EXIT_FAILPOINT when this is the change LLMNET_FAILPOINT names.
 * A request whose time budget ran out, or whose caller went away, is
 * answered with the `timeout` error naming the change and ends here with
 * LN_AGENT_EXIT_TIMEOUT (budget.h): nothing is committed after it.
 * In a dry run it refuses (-EROFS): a read-only verb never changes. */
int ln_agent_change(struct ln_agent *a, const char *what);

/* Guarded change operations: failpoint, then the ops table. */
int ln_fs_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err);
int ln_fs_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err);
int ln_fs_symlink(struct ln_agent *a, const char *target, const char *linkpath,
		  struct ln_buf *err);
int ln_fs_unlink(struct ln_agent *a, const char *path, struct ln_buf *err);
int ln_fs_write_attr(struct ln_agent *a, const char *path, const char *val, struct ln_buf *err);
/* Regular files under the root: atomic replace, sparse create, delete. */
int ln_fs_write_file(struct ln_agent *a, const char *path, const char *data, size_t len,
		     mode_t mode, struct ln_buf *err);
int ln_fs_create_sparse(struct ln_agent *a, const char *path, uint64_t size, struct ln_buf *err);
int ln_fs_remove_file(struct ln_agent *a, const char *path, struct ln_buf *err);

/* Reads under the root. ln_read_attr strips one trailing newline. */
int ln_read_attr(const struct ln_agent *a, const char *path, struct ln_buf *out);
int ln_path_exists(const struct ln_agent *a, const char *path);
int ln_is_dir(const struct ln_agent *a, const char *path);
int ln_is_link(const struct ln_agent *a, const char *path);
/* Sorted names in a directory (no . and ..); NULL-terminated, free with
 * ln_names_free. Missing directory: empty list and -ENOENT. */
int ln_list_dir(const struct ln_agent *a, const char *path, char ***names, size_t *n);
/* 1 when the module is loaded (ROOT/sys/module/NAME). */
int ln_module_loaded(const struct ln_agent *a, const char *module);
/* 1 when configfs is mounted at /sys/kernel/config (ROOT/proc/mounts). */
int ln_configfs_mounted(const struct ln_agent *a);
/* 1 when path is a mount point (ROOT/proc/mounts). */
int ln_path_mounted(const struct ln_agent *a, const char *path, char *fs, size_t fslen);

extern const struct ln_fsops ln_fsops_real;
extern const struct ln_fsops ln_fsops_fixture;
extern const struct ln_iniops ln_iniops_real;
extern const struct ln_iniops ln_iniops_fixture;

/* Validation of values that reach paths, configfs names or command lines. */
int ln_valid_nqn(const char *s);
/* An NQN for this node's host identity, which goes into the kernel's
 * connect option string: ln_valid_nqn and neither ',' nor '='. */
int ln_valid_host_nqn(const char *s);
/* A UUID, 8-4-4-4-12 hex digits (a host ID). */
int ln_valid_uuid(const char *s);
/* The node's host identity, not llmnet's: LN_HOSTNQN_FILE into nqn and
 * LN_HOSTID_FILE into id, trimmed; empty where the file is missing or
 * holds only white space. One that holds anything else than a valid host
 * NQN (ln_valid_host_nqn) or a UUID: -EINVAL, err naming the file, the
 * offset and the bad byte (or what is wrong), quoting nothing of it; nqn
 * and id empty. */
#define LN_HOSTNQN_FILE "/etc/nvme/hostnqn"
#define LN_HOSTID_FILE "/etc/nvme/hostid"
int ln_host_identity(const struct ln_agent *a, struct ln_buf *nqn, struct ln_buf *id,
		     struct ln_buf *err);
/* Element i of a JSON array when it is a string holding a valid NQN, else
 * NULL (owned by the array). */
const char *ln_nqn_at(struct json_object *arr, size_t i);
int ln_valid_abs_path(const char *s);
int ln_valid_name(const char *s, size_t max);
/* Numeric IPv4/IPv6; family gets "ipv4" or "ipv6". */
int ln_valid_addr(const char *s, const char **family);

/* The change list answer. */
struct ln_changes {
	struct json_object *list;	/* array of change objects */
	struct json_object *warnings;	/* array of strings */
	int n_create, n_change, n_remove, n_ok, n_error;
};

void ln_changes_init(struct ln_changes *c);
void ln_changes_release(struct ln_changes *c);
/* Append one change; detail and error may be NULL. */
void ln_changes_add(struct ln_changes *c, const char *action, const char *kind, const char *id,
		    const char *detail, const char *error);
void ln_changes_warn(struct ln_changes *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Build the answer object (takes the lists out of c). */
struct json_object *ln_changes_answer(struct ln_changes *c, const char *mode,
				      const char *cluster, int plan);

/* Run argv (argv[0] an absolute path) with a bound, output captured up to
 * max_output bytes. Used by `run` and for modprobe/mkfs. */
struct ln_exec_result {
	int exited;		/* 1: exit_status is valid */
	int exit_status;
	int signal;		/* when killed by a signal */
	int timed_out;
	long duration_ms;
	struct ln_buf output;
	size_t output_bytes;	/* all bytes the child wrote */
	int truncated;
	int leftovers;		/* processes it left behind, killed after it */
};
int ln_exec_bounded(const char *const argv[], unsigned timeout_s, size_t max_output,
		   struct ln_exec_result *res, struct ln_buf *err);
/* The same, but runs the program open at fd (fexecve: what was checked is
 * what runs); argv[0] is only its name. fd < 0: argv[0]'s path. */
int ln_exec_bounded_fd(int fd, const char *const argv[], unsigned timeout_s, size_t max_output,
		       struct ln_exec_result *res, struct ln_buf *err);
void ln_exec_result_release(struct ln_exec_result *res);

/* Emit an answer on stdout, or into the capture buffer while one is set. */
int ln_agent_emit(struct json_object *obj);
/* Session: answers go into b (NULL: back to stdout). */
void ln_agent_capture(struct ln_buf *b);
/* Emit an error answer and return exit_code. */
int ln_agent_fail(const char *code, const char *message, int exit_code);

/* Split a controller's sysfs address attribute into traddr and trsvcid. */
void ln_parse_ctrl_address(const char *addr, char *traddr, size_t tlen, char *trsvcid,
			   size_t slen);

/* The visible namespace block devices (not the hidden nvmeXcYnZ paths)
 * whose subsystem NQN is nqn, sorted; each entry "nvme1n1". */
int ln_nvme_blocks(const struct ln_agent *a, const char *nqn, char ***names, size_t *n);

/* Verbs. */
int ln_facts_collect(struct ln_agent *a, struct json_object **out, struct ln_buf *err);
/* `facts --counters`: the error counters of the n ports ("rxe0/1"), each
 * through its driver's name table (counters.c); nothing else is read. */
int ln_counters_collect(struct ln_agent *a, char *const *ports, size_t n,
			struct json_object **out);
/* "rxe0/1" into dev (size bytes) and port; 0, or -EINVAL. */
int ln_counters_parse_port(const char *s, char *dev, size_t size, unsigned *port);

#endif
