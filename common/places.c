/* SPDX-License-Identifier: MIT */
/*
 * Places a spec may not name (places.h). These two tables are the one list:
 * docs/spec.md ("Places a spec may not name") documents it, lint
 * (orchestrator/spec/pattern.c) and the agent's request parser
 * (agents/agent/core/request_fields.c) both call ln_place_check(). The schema's
 * spec_pattern_regex[SP_OWNPATH] (pattern.c) says the same as a regex:
 * change both together.
 */
#include <limits.h>
#include <string.h>

#include "common/places.h"
#include "common/proto.h"
#include "common/util.h"

struct place {
	const char *dir;	/* the folder and all below it */
	const char *except;	/* a folder below dir that llmnet may use, or NULL */
	const char *why;	/* said in parentheses after the path */
};

/* The places that need more words than their path, first. */
static const struct place places[] = {
	{ "/", NULL, "the root directory" },
	{ "/dev", NULL, "/dev; a namespace names a block device with 'device'" },
	/* before /etc: below /etc/llmnet, but the agent's */
	{ "/etc/llmnet/keys", NULL, "/etc/llmnet/keys, the agent's key store" },
	{ "/etc", "/etc/llmnet", "/etc outside /etc/llmnet" },
	{ "/home", NULL, "/home, the users' homes" },
	{ "/run", "/run/llmnet", "/run outside /run/llmnet" },
	/* before /var: below /var/lib, but the agent's */
	{ "/var/lib/llmnet", NULL, "/var/lib/llmnet, the agent's own state" },
	/* crontabs, dpkg's database, logs, mail: only nvmet's data folder */
	{ "/var", "/var/lib/nvmet", "/var outside /var/lib/nvmet" },
};

/* Then the system folders, whole, each said by its path alone. */
static const char *const system_dirs[] = {
	"/bin", "/boot", "/lib", "/lib32", "/lib64", "/libx32",
	"/proc", "/root", "/sbin", "/sys", "/usr",
};

int ln_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strncmp(path, dir, n))
		return 0;
	return !path[n] || path[n] == '/';
}

/* A name for the key in messages: "file" and "path" alone say little. */
static const char *label(const char *key)
{
	if (!strcmp(key, "file"))
		return "backing file";
	if (!strcmp(key, "path"))
		return "mount point";
	return key;
}

static int refuse(const char *key, const char *path, const char *place, struct ln_buf *why)
{
	ln_buf_addf(why, "%s '%.100s' is in a system location (%s): llmnet writes only paths it may own",
		    label(key), path, place);
	return -1;
}

int ln_place_check(const char *key, const char *path, struct ln_buf *why)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(places); i++) {
		const struct place *pl = &places[i];

		if (!ln_path_under(path, pl->dir))
			continue;
		/* strictly below the exception: the folder itself is not ours */
		if (pl->except && ln_path_under(path, pl->except) && strcmp(path, pl->except))
			return 0;
		return refuse(key, path, pl->why, why);
	}
	for (i = 0; i < ARRAY_SIZE(system_dirs); i++)
		if (ln_path_under(path, system_dirs[i]))
			return refuse(key, path, system_dirs[i], why);
	return 0;
}

int ln_tests_dir_check(const char *dir, struct ln_buf *why)
{
	if (ln_path_under(dir, LN_OWN_DIR)) {
		ln_buf_addf(why, "'%s' is %sllmnet's own directory (%s), which holds its own "
			    "programs and state only", dir, strcmp(dir, LN_OWN_DIR) ? "in " : "",
			    LN_OWN_DIR);
		return -1;
	}
	if (strlen(dir) + sizeof("/" LN_NCCL_TESTS_ALL_REDUCE) > PATH_MAX) {
		ln_buf_addf(why, "'%.64s...' is too long: with '/%s' it would pass the %d bytes "
			    "of a node path", dir, LN_NCCL_TESTS_ALL_REDUCE, PATH_MAX - 1);
		return -1;
	}
	return 0;
}
