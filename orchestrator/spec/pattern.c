/* SPDX-License-Identifier: MIT */
/*
 * The strict patterns every string of the spec must match before it can
 * reach a path, a configfs name or a command line (see spec_impl.h's enum
 * spat and docs/spec.md). Hand-written character classes: they run on
 * every value of a 4,096-node spec, and say precisely what is wrong.
 */
#include <arpa/inet.h>
#include <string.h>

#include "common/mca_policy.h"
#include "common/nccl_env.h"
#include "common/places.h"
#include "orchestrator/spec/nqn.h"
#include "orchestrator/spec/impl.h"

const char *const spec_pattern_regex[SP_COUNT] = {
	[SP_CLUSTER] = "^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$",
	[SP_NODE] = "^(?!.*\\.\\.)[A-Za-z0-9][A-Za-z0-9._-]{0,62}$",
	[SP_USER] = "^[a-z_][a-z0-9_-]{0,31}$",
	[SP_HOST] = "^[A-Za-z0-9:.-]{1,253}$",
	[SP_IP] = "^[0-9A-Fa-f:.]{2,45}$",
	[SP_DEVICE] = "^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$",
	[SP_RAIL] = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$",
	[SP_PATH] = "^(/(?!\\.\\.?(/|$))[A-Za-z0-9._+,@=:-]+)+$",
	/* SP_PATH outside the places of common/places.c: keep the two in step */
	[SP_OWNPATH] = "^(?!/(bin|boot|dev|home|lib|lib32|lib64|libx32|proc|root|sbin|sys|usr)(/|$))"
		       "(?!/(etc|run)(/(?!llmnet/)|$))(?!/etc/llmnet/keys(/|$))(?!/var/lib/llmnet(/|$))"
		       "(?!/var(/(?!lib/nvmet/)|$))"
		       "(/(?!\\.\\.?(/|$))[A-Za-z0-9._+,@=:-]+)+$",
	[SP_LOCALPATH] = "^(~|/(?!\\.\\.?(/|$))[A-Za-z0-9._+,@=:-]+)(/(?!\\.\\.?(/|$))[A-Za-z0-9._+,@=:-]+)*$",
	[SP_DEVPATH] = "^/dev(/(?!\\.\\.?(/|$))[A-Za-z0-9._+,@=:-]+)+$",
	[SP_NQN] = "^nqn\\.[0-9]{4}-(0[1-9]|1[0-2])\\.[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+:[A-Za-z0-9._:+-]+$",
	[SP_MCA_KEY] = "^[a-z][a-z0-9_]{0,63}$",
	[SP_MCA_VALUE] = "^[A-Za-z0-9_.,:/@+^=-]{1,255}$",
	[SP_JUMP] = "^([a-z_][a-z0-9_-]{0,31}@)?[A-Za-z0-9.:-]+(:[0-9]{1,5})?$",
	[SP_NCCL_VALUE] = "^[A-Za-z0-9_.,:^=+-]{1,127}$",
	[SP_IFNAME] = "^[A-Za-z0-9_.,:^=-]{1,255}$",
};

static int in_class(char c, const char *extra)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(extra, c));
}

static int all_in(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!in_class(*s, extra))
			return 0;
	return 1;
}

/* A name: 1 to max bytes of [A-Za-z0-9] and rest, the first of
 * [A-Za-z0-9] and first; what is said after "takes" when it is not. */
struct name_rule {
	size_t max;
	const char *first, *rest;
	int no_dotdot;		/* and never ".." */
	const char *what;
};

static const struct name_rule name_rules[] = {
	[SP_CLUSTER] = { 63, "", "_-", 0, "1-63 of [A-Za-z0-9_-] starting with a letter or digit" },
	[SP_NODE] = { 63, "", "._-", 1,
		      "a node name (1-63 of [A-Za-z0-9._-], starting with a letter or digit)" },
	[SP_RAIL] = { 32, "", "_.-", 0,
		      "a rail name (1-32 of [A-Za-z0-9_.-], starting with a letter or digit)" },
	[SP_DEVICE] = { 64, "_-", "_.-", 0, "a device name (1-64 of [A-Za-z0-9_.-])" },
};

static int check_name(const struct name_rule *r, const char *key, const char *s,
		      struct ln_buf *why)
{
	size_t n = strlen(s);

	if (n >= 1 && n <= r->max && in_class(s[0], r->first) && all_in(s, r->rest) &&
	    !(r->no_dotdot && strstr(s, "..")))
		return 0;
	ln_buf_addf(why, "'%s' takes %s, not '%.100s'", key, r->what, s);
	return -1;
}

static int check_host(const char *s)
{
	unsigned char a[16];
	const char *label = s, *p;

	if (inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1)
		return 0;
	if (!*s || strlen(s) > 253)
		return -1;
	/* A host name made only of digits and dots is a broken IPv4 address. */
	if (strspn(s, "0123456789.") == strlen(s))
		return -1;
	for (p = s;; p++) {
		if (*p == '.' || !*p) {
			if (p == label || p - label > 63 || *label == '-' || p[-1] == '-')
				return -1;
			if (!*p)
				return 0;
			label = p + 1;
		} else if (!in_class(*p, "-")) {
			return -1;
		}
	}
}

static int check_path(const char *key, const char *s, const char *prefix, struct ln_buf *why)
{
	const char *p = s, *part;

	if (prefix && strncmp(s, prefix, strlen(prefix))) {
		ln_buf_addf(why, "'%s' takes a path under %s, not '%.100s'", key, prefix, s);
		return -1;
	}
	if (s[0] != '/') {
		ln_buf_addf(why, "'%s' takes an absolute path, not '%.100s'", key, s);
		return -1;
	}
	if (strlen(s) > 4095) {
		ln_buf_addf(why, "'%s' is longer than 4095 bytes", key);
		return -1;
	}
	while (*p) {
		p++;	/* past '/' */
		part = p;
		while (*p && *p != '/') {
			if (!in_class(*p, "._+,@=:-")) {
				if (*p > 0x20 && *p < 0x7f)
					ln_buf_addf(why, "'%s' path '%.100s' has '%c', which paths may not hold",
						    key, s, *p);
				else
					ln_buf_addf(why, "'%s' path '%.100s' has byte 0x%02x, which paths may not hold",
						    key, s, (unsigned char)*p);
				return -1;
			}
			p++;
		}
		if (p == part) {
			ln_buf_addf(why, "'%s' path '%.100s' has an empty part or a trailing '/'",
				    key, s);
			return -1;
		}
		if ((p - part == 1 && part[0] == '.') ||
		    (p - part == 2 && part[0] == '.' && part[1] == '.')) {
			ln_buf_addf(why, "'%s' path '%.100s' has a '%.*s' part", key, s,
				    (int)(p - part), part);
			return -1;
		}
		if (p - part > 255) {
			ln_buf_addf(why, "'%s' path has a part longer than 255 bytes", key);
			return -1;
		}
	}
	return 0;
}

int spec_pattern_check(enum spat pat, const char *key, const char *s, struct ln_buf *why)
{
	size_t n = strlen(s);
	unsigned char a[16];

	switch (pat) {
	case SP_NONE:
	case SP_FS:
	case SP_COUNT:
		return 0;
	case SP_CLUSTER:
	case SP_NODE:
	case SP_RAIL:
	case SP_DEVICE:
		return check_name(&name_rules[pat], key, s, why);
	case SP_USER:
		if (n >= 1 && n <= 32 && ((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_') &&
		    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n)
			return 0;
		ln_buf_addf(why, "'%s' takes a user name ([a-z_][a-z0-9_-]*, at most 32), not '%.100s'",
			    key, s);
		return -1;
	case SP_HOST:
		if (!check_host(s))
			return 0;
		ln_buf_addf(why, "'%s' takes an IP address or a host name, not '%.100s'", key, s);
		return -1;
	case SP_IP:
		if (inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1)
			return 0;
		ln_buf_addf(why, "'%s' takes a numeric IPv4 or IPv6 address, not '%.100s'", key, s);
		return -1;
	case SP_PATH:
		return check_path(key, s, NULL, why);
	case SP_OWNPATH:
		if (check_path(key, s, NULL, why) < 0)
			return -1;
		return ln_place_check(key, s, why);
	case SP_DEVPATH:
		return check_path(key, s, "/dev/", why);
	case SP_LOCALPATH:
		if (!strncmp(s, "~/", 2)) {
			if (!s[2]) {
				ln_buf_addf(why, "'%s' takes a file, not the home directory", key);
				return -1;
			}
			return check_path(key, s + 1, NULL, why);
		}
		return check_path(key, s, NULL, why);
	case SP_NQN:
		return ln_nqn_check(s, why) < 0 ? -1 : 0;
	case SP_MCA_KEY:
		if (n >= 1 && n <= 64 && s[0] >= 'a' && s[0] <= 'z' &&
		    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n)
			return 0;
		ln_buf_addf(why, "mca key '%.100s' is not a parameter name ([a-z][a-z0-9_]*)", s);
		return -1;
	case SP_MCA_VALUE:
		if (ln_mca_value_ok(s))
			return 0;
		ln_buf_addf(why, "mca value '%.100s' for '%s' may hold only [A-Za-z0-9_.,:/@+^=-] (1-255)",
			    s, key);
		return -1;
	case SP_JUMP:
		/* Split and checked by the ssh handler. */
		return 0;
	case SP_NCCL_VALUE:
		if (ln_nccl_value_ok(s))
			return 0;
		ln_buf_addf(why, "nccl.env value '%.100s' for '%s' may hold only [A-Za-z0-9_.,:^=+-] "
			    "(1-127)", s, key);
		return -1;
	case SP_IFNAME:
		if (ln_nccl_ifname_ok(s))
			return 0;
		ln_buf_addf(why, "'%s' takes interface names as NCCL_SOCKET_IFNAME does (1-255 of "
			    "[A-Za-z0-9_.,:^=-]), not '%.100s'", key, s);
		return -1;
	}
	return 0;
}
