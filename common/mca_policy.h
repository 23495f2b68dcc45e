/* SPDX-License-Identifier: MIT */
/*
 * The one MCA policy, for lint and the agent alike: which Open MPI
 * parameters a spec may pass to mpirun (`--mca NAME VALUE`, run as root
 * on every node). A name passes when it is on the allow-list of the
 * node's Open MPI major version and matches no deny pattern; docs/spec.md
 * lists both tables.
 */
#ifndef LN_MCA_POLICY_H
#define LN_MCA_POLICY_H

#include <stddef.h>

#include "common/buf.h"

/* Open MPI major versions with an allow-list, as bits. */
#define LN_OMPI_4 (1u << 0)	/* 4.1: Debian 12 */
#define LN_OMPI_5 (1u << 1)	/* 5.x: Debian 13 */
#define LN_OMPI_ANY (LN_OMPI_4 | LN_OMPI_5)

/* Check an MCA parameter name for the Open MPI versions in majors (lint,
 * which does not know the nodes' version, passes LN_OMPI_ANY: a name on
 * either list; the agent passes its mpirun's). 0 when allowed; -1 with
 * the reason appended to why ("mca 'NAME' is refused: ..."). */
int ln_mca_check(const char *name, unsigned majors, struct ln_buf *why);

/* 1 when v may be an MCA value: 1-255 of [A-Za-z0-9_.,:/@+^=-]. */
int ln_mca_value_ok(const char *v);

/* The major version bit of Open MPI from `mpirun --version` output
 * ("mpirun (Open MPI) 4.1.4"); 0 when it is not Open MPI 4 or 5 (the
 * version read, or 0, in *major). */
unsigned ln_mca_ompi_version(const char *version_output, int *major);

/* The allow-list, entry i (names and the version bits they hold for);
 * NULL past the end. */
const char *ln_mca_allowed(size_t i, unsigned *majors);

/* The deny patterns (shell-style, `*` any run), entry i, and why; NULL
 * past the end. */
const char *ln_mca_denied(size_t i, const char **why);

#endif
