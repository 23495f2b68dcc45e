// SPDX-License-Identifier: MIT
/*
 * The MCA policy (see mca_policy.h). mpirun runs as root on every node,
 * and some MCA parameters make it start a program, load code or read and
 * write a file the spec names (plm_rsh_agent: /tmp/x.sh runs the script).
 * So a name must be on the allow-list of the Open MPI major version that
 * runs it (tuning only: transports, interfaces, collectives, placement;
 * none takes a path or a program) and must match none of the deny
 * patterns, which stay as a second net should a list entry ever be
 * wrong (a unit test checks that none is). lint checks against both
 * versions' lists, the agent again against its own mpirun's.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "common/mca_policy.h"
#include "common/util.h"

struct mca_allowed {
	const char *name;
	unsigned majors;
};

/* Exact names, and the Open MPI majors that know them. 5.x renamed the
 * shared-memory btl (vader -> sm, single copy moved to the smsc
 * framework), dropped openib, and moved the runtime from ORTE to PRRTE
 * (orte_* gone; mapping and binding defaults renamed). */
static const struct mca_allowed allowed[] = {
	{ "pml", LN_OMPI_ANY },
	{ "btl", LN_OMPI_ANY },
	{ "mtl", LN_OMPI_ANY },
	{ "coll", LN_OMPI_ANY },
	{ "osc", LN_OMPI_ANY },
	{ "btl_tcp_if_include", LN_OMPI_ANY },
	{ "btl_tcp_if_exclude", LN_OMPI_ANY },
	{ "btl_tcp_links", LN_OMPI_ANY },
	{ "btl_base_warn_component_unused", LN_OMPI_ANY },
	{ "oob_tcp_if_include", LN_OMPI_ANY },
	{ "oob_tcp_if_exclude", LN_OMPI_ANY },
	{ "pml_ucx_tls", LN_OMPI_ANY },
	{ "pml_ucx_devices", LN_OMPI_ANY },
	{ "coll_hcoll_enable", LN_OMPI_ANY },
	{ "coll_tuned_use_dynamic_rules", LN_OMPI_ANY },
	{ "coll_tuned_allreduce_algorithm", LN_OMPI_ANY },
	{ "btl_vader_single_copy_mechanism", LN_OMPI_4 },
	{ "btl_openib_allow_ib", LN_OMPI_4 },
	{ "btl_openib_if_include", LN_OMPI_4 },
	{ "btl_openib_warn_no_device_params_found", LN_OMPI_4 },
	{ "orte_base_help_aggregate", LN_OMPI_4 },
	{ "rmaps_base_mapping_policy", LN_OMPI_4 },
	{ "hwloc_base_binding_policy", LN_OMPI_4 },
	{ "smsc", LN_OMPI_5 },
	{ "rmaps_default_mapping_policy", LN_OMPI_5 },
	{ "hwloc_default_binding_policy", LN_OMPI_5 },
};

struct mca_denied {
	const char *pattern;
	const char *why;
};

/* The most specific first, so the message names the closest. */
static const struct mca_denied denied[] = {
	{ "plm_rsh_*", "sets how the rsh launcher starts programs on the nodes" },
	{ "orte_launch_agent", "names the program started on every node" },
	{ "prte_*launch*", "sets how PRRTE launches programs" },
	{ "mca_base_param_files", "reads more parameters from files" },
	{ "mca_base_component_path", "loads components (code) from a path" },
	{ "btl_*_backing_directory", "puts shared-memory files in a directory" },
	{ "*env*", "sets environment variables of the launched programs (LD_PRELOAD and the like)" },
	{ "*hostfile*", "makes mpirun read a host list from a file (llmnet writes the hostfile)" },
	{ "*exec*", "runs a program" },
	{ "*preload*", "loads code or copies files onto the nodes" },
	{ "*plugin*", "loads code" },
	{ "*_agent", "names a program to start" },
	{ "*_args", "passes arguments to a program" },
	{ "*_prefix", "names an install tree to run programs and load libraries from" },
	{ "*_path", "names a path to load code or files from" },
	{ "*_dir*", "names a directory on the node" },
	{ "*tmpdir*", "names the directory session files are written to" },
	{ "*_file*", "names a file on the node" },
};

const char *ln_mca_allowed(size_t i, unsigned *majors)
{
	if (i >= ARRAY_SIZE(allowed))
		return NULL;
	if (majors)
		*majors = allowed[i].majors;
	return allowed[i].name;
}

const char *ln_mca_denied(size_t i, const char **why)
{
	if (i >= ARRAY_SIZE(denied))
		return NULL;
	if (why)
		*why = denied[i].why;
	return denied[i].pattern;
}

static const char *versions(unsigned majors)
{
	switch (majors & LN_OMPI_ANY) {
	case LN_OMPI_4:
		return "Open MPI 4.1";
	case LN_OMPI_5:
		return "Open MPI 5";
	default:
		return "Open MPI 4.1 or 5";
	}
}

int ln_mca_check(const char *name, unsigned majors, struct ln_buf *why)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(denied); i++) {
		if (!fnmatch(denied[i].pattern, name, 0)) {
			ln_buf_addf(why, "mca '%.100s' is refused: it %s ('%s'); llmnet passes no "
				    "parameter that launches or loads code or touches files",
				    name, denied[i].why, denied[i].pattern);
			return -1;
		}
	}
	for (i = 0; i < ARRAY_SIZE(allowed); i++) {
		if (strcmp(allowed[i].name, name))
			continue;
		if (allowed[i].majors & majors)
			return 0;
		ln_buf_addf(why, "mca '%.100s' is an %s name, not on llmnet's allow-list for %s "
			    "(docs/spec.md lists the names)", name, versions(allowed[i].majors),
			    versions(majors));
		return -1;
	}
	ln_buf_addf(why, "mca '%.100s' is not on llmnet's allow-list for %s (docs/spec.md "
		    "lists the names, and why others are refused)", name, versions(majors));
	return -1;
}

int ln_mca_value_ok(const char *v)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "0123456789_.,:/@+^=-";
	size_t n = strlen(v);

	return n >= 1 && n <= 255 && strspn(v, set) == n;
}

unsigned ln_mca_ompi_version(const char *out, int *major)
{
	static const char tag[] = "(Open MPI) ";
	const char *p = strstr(out, tag);
	char *end;
	long v;

	*major = 0;
	if (!p)
		return 0;
	p += sizeof(tag) - 1;
	if (*p < '0' || *p > '9')
		return 0;
	v = strtol(p, &end, 10);
	if (*end != '.' || v > 99)
		return 0;
	*major = (int)v;
	return v == 4 ? LN_OMPI_4 : v == 5 ? LN_OMPI_5 : 0;
}
