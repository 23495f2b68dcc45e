/* SPDX-License-Identifier: MIT */
/*
 * NVMe Qualified Names. An NQN becomes a configfs directory name on the
 * target (subsystems/<nqn>, hosts/<nqn>) and an argument of the connect,
 * so llmnet accepts only the two forms the NVMe base specification
 * defines, within its 223-byte limit, and only characters that are safe
 * in a path component:
 *
 *   nqn.yyyy-mm.<reverse domain>:<string>
 *   nqn.2014-08.org.nvmexpress:uuid:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
 *
 * yyyy-mm is a year from 1970 and a month 01-12; the reverse domain is
 * dot-separated labels of [A-Za-z0-9-] (no leading or trailing hyphen,
 * at least two labels); <string> is [A-Za-z0-9._:+-], not empty. The
 * discovery NQN is refused: it is not a subsystem one can own.
 */
#ifndef LN_NQN_H
#define LN_NQN_H

#include "common/buf.h"
#include "common/nvme.h"


/* 0, or -EINVAL with the broken rule in err ("nqn 'x' ..."). */
int ln_nqn_check(const char *nqn, struct ln_buf *err);

#endif
