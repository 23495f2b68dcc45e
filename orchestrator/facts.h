/* SPDX-License-Identifier: MIT */
/* The facts phase; for now all of it is in run.h. */
#ifndef LN_FACTS_H
#define LN_FACTS_H

#include "orchestrator/run.h"

#endif
