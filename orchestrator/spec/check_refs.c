/* SPDX-License-Identifier: MIT */
/*
 * The check pass's bounds on references by name: a suggestion for an
 * unknown node name (an O(nodes) scan, so only while messages are still
 * kept), and the cap on host references over every target's 'hosts'
 * list, checked before any list is expanded; addresses compared as
 * addresses (inet_pton), host names without regard to case.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "orchestrator/spec/hostlist.h"
#include "orchestrator/spec/impl.h"

int spec_diags_full(const struct ln_spec *spec)
{
	return spec->store->n_diags >= SPEC_MAX_DIAGS;
}

const char *spec_near_node(const struct ln_spec *spec, const char *name)
{
	size_t i, best = (size_t)-1, bestd = 3, len;

	/* Past the message cap a suggestion would not be shown: a spec
	 * with 65,536 unknown names must not scan every node for each. */
	if (!name || spec_diags_full(spec))
		return NULL;
	len = strlen(name);
	for (i = 0; i < spec->n_nodes && i < 65536; i++) {
		const char *a = spec->nodes[i].name, *b = name;
		size_t d = 0;

		/* a node whose name was refused, or not of the same length */
		if (!a || strlen(a) != len)
			continue;
		for (; *a && d < bestd; a++, b++)
			d += *a != *b;
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best == (size_t)-1 ? NULL : spec->nodes[best].name;
}

int spec_check_host_refs(struct ln_spec *spec)
{
	struct ln_spec_store *st = spec->store;
	struct ln_buf why = LN_BUF_INIT;
	size_t k, total = 0, at = (size_t)-1;

	for (k = 0; k < st->n_hosts_raw; k++) {
		struct ln_hostlist hl;

		ln_buf_reset(&why);
		if (ln_hostlist_parse(st->hosts_raw[k].name, &hl, &why) < 0)
			continue;	/* reported when the list is resolved */
		total += hl.count;
		ln_hostlist_release(&hl);
		if (total > SPEC_MAX_HOST_REFS && at == (size_t)-1)
			at = k;
	}
	ln_buf_release(&why);
	if (at == (size_t)-1)
		return 0;
	spec_diag(spec, st->hosts_raw[at].mark,
		  "the targets' 'hosts' lists name %zu hosts in all, more than %u "
		  "(list fewer, or write 'hosts: any')",
		  total, SPEC_MAX_HOST_REFS);
	return 1;
}

const char *spec_addr_canon(const char *addr, char *buf, size_t n)
{
	unsigned char bin[16];
	size_t i;

	if (!addr)
		return NULL;
	if (inet_pton(AF_INET, addr, bin) == 1)
		return inet_ntop(AF_INET, bin, buf, (socklen_t)n) ? buf : addr;
	if (inet_pton(AF_INET6, addr, bin) == 1)
		return inet_ntop(AF_INET6, bin, buf, (socklen_t)n) ? buf : addr;
	for (i = 0; addr[i] && i + 1 < n; i++)
		buf[i] = (char)tolower((unsigned char)addr[i]);
	if (addr[i])
		return addr;	/* too long to fold: as written */
	buf[i] = '\0';
	return buf;
}

int spec_addr_eq(const char *a, const char *b)
{
	char ca[SPEC_ADDR_CANON], cb[SPEC_ADDR_CANON];

	if (!a || !b)
		return 0;
	return !strcmp(spec_addr_canon(a, ca, sizeof(ca)), spec_addr_canon(b, cb, sizeof(cb)));
}
