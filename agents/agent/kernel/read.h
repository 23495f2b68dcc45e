/* SPDX-License-Identifier: MIT */
/*
 * Reads of the node's files under the agent's root (read.c). A fixture
 * tree is an ordinary directory tree shaped like the real sysfs, procfs and
 * configfs, so every read is the same code on a node and under --root; no
 * read counts as a change. PATH arguments are node paths (without the
 * root). Links are followed below /sys, /proc and /dev, which only the
 * kernel makes; elsewhere a listing never goes through one (paths.h).
 */
#ifndef LN_AGENT_READ_H
#define LN_AGENT_READ_H

#include <stddef.h>

struct ln_agent;
struct ln_buf;

/* root + path into out (PATH_MAX); -ENAMETOOLONG when it does not fit. */
int ln_agent_path(const struct ln_agent *a, const char *path, char *out);

/* The file at path into out; strips one trailing newline. 0 or -errno. */
int ln_read_attr(const struct ln_agent *a, const char *path, struct ln_buf *out);
/* 1 when something is at path / a directory / a symbolic link (lstat). */
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
/* 1 when path is a mount point (ROOT/proc/mounts); its filesystem type
 * into fs (fslen bytes) unless fs is NULL. */
int ln_path_mounted(const struct ln_agent *a, const char *path, char *fs, size_t fslen);

/* Resolve the node path in through its links, each read under the root
 * (an absolute link target starts again at the root), like realpath(3) in
 * a chroot, into out (PATH_MAX). 0 or negative (-ENOENT, -ELOOP...). */
int ln_path_resolve(const struct ln_agent *a, const char *in, char *out);

#endif
