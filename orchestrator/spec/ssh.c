/* SPDX-License-Identifier: MIT */
/*
 * The ssh section's one special scalar, jump: "[user@]host[:port]", split
 * and checked part by part (an IPv6 host is written in brackets).
 */
#include <errno.h>
#include <string.h>

#include "orchestrator/spec/parser.h"

/* "[user@]host[:port]"; an IPv6 host is written in brackets. */
int spec_parse_jump(struct parser *p, const struct field *f, void *obj, const char *v,
		    struct ln_mark m)
{
	struct ln_ssh_spec *ssh = obj;
	struct spec_arena *a = &p->st->arena;
	const char *at_sign = strchr(v, '@'), *host = at_sign ? at_sign + 1 : v, *end, *colon;
	long long port = 22;

	(void)f;
	ln_buf_reset(&p->why);
	if (at_sign) {
		char *user = spec_arena_strndup(a, v, (size_t)(at_sign - v));

		if (!user)
			return -ENOMEM;
		if (spec_pattern_check(SP_USER, "jump", user, &p->why) < 0) {
			spec_diag(p->spec, m, "%s", p->why.buf);
			return 0;
		}
		ssh->jump_user = user;
	}
	if (*host == '[') {
		end = strchr(host, ']');
		if (!end) {
			spec_diag(p->spec, m, "'jump' has '[' without ']' in '%.100s'", v);
			return 0;
		}
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] && !colon) {
			spec_diag(p->spec, m, "'jump' takes [user@]host[:port], not '%.100s'", v);
			return 0;
		}
		host++;
	} else {
		colon = strrchr(host, ':');
		/* An unbracketed IPv6 address has several colons: no port then. */
		if (colon && strchr(host, ':') != colon)
			colon = NULL;
		end = colon ? colon : host + strlen(host);
	}
	if (colon && (spec_parse_int(colon + 1, &port) < 0 || port < 1 || port > 65535)) {
		spec_diag(p->spec, m, "'jump' port must be from 1 to 65535, not '%.100s'", colon + 1);
		return 0;
	}
	ssh->jump_host = spec_arena_strndup(a, host, (size_t)(end - host));
	if (!ssh->jump_host)
		return -ENOMEM;
	if (spec_pattern_check(SP_HOST, "jump", ssh->jump_host, &p->why) < 0) {
		spec_diag(p->spec, m, "%s", p->why.buf);
		return 0;
	}
	ssh->jump_port = (uint16_t)port;
	return 0;
}
