/* SPDX-License-Identifier: MIT */
/*
 * Places a spec may not name: the system locations where a hostfile, a
 * namespace's backing file or a mount point would replace or hide the
 * node's own files (/etc/passwd, a mount over /etc). One list for both
 * binaries: lint refuses these paths in a spec (orchestrator/spec/), and
 * the agent refuses them again in a request (defence in depth). The
 * agent's own writes (its state, /etc/nvme/hostnqn) are not spec paths
 * and are listed separately in docs/operating.md.
 */
#ifndef LN_PLACES_H
#define LN_PLACES_H

#include "common/buf.h"

/*
 * 0 if path (absolute and normalized) is outside every system place;
 * else -1 with "<label> '<path>' is in a system location (<place>): ..."
 * appended to why. key is the spec key ("hostfile", "file", "path"),
 * named in the message as what it is.
 */
/* 1 when path is dir or below it, by whole components ("/" is only "/"
 * itself: every path is below it). */
int ln_path_under(const char *path, const char *dir);

int ln_place_check(const char *key, const char *path, struct ln_buf *why);

/* nccl-tests' directory (validation.nccl.tests_dir, absolute and
 * normalized): 0, or -1 with why when it is llmnet's own directory or
 * below it, or when it and the program's name would pass a node path's
 * length. Lint refuses such a spec, and the agent such a request (a name
 * over 255 bytes: the spec's path pattern, and the agent's walk). */
#define LN_OWN_DIR "/var/lib/llmnet"
int ln_tests_dir_check(const char *dir, struct ln_buf *why);

#endif
