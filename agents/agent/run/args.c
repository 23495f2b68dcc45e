/* SPDX-License-Identifier: MIT */
/*
 * Argument typing for the `run` verb (args.h): what each kind of value may
 * hold, and the walk of a program's arguments through its option table.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/run/args.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/nccl_env.h"
#include "common/nvme.h"

int ln_arg_plain(const char *s)
{
	size_t n = strlen(s);
	const char *p;

	if (n > 4096)
		return 0;
	for (p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < ' ' || c >= 0x7f || strchr(";&|`$<>\\\"'", c))
			return 0;
	}
	return 1;
}

int ln_arg_all_of(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

/* An absolute path with no "." or ".." part and no empty one. */
int ln_arg_clean_path(const char *p)
{
	const char *c;

	if (p[0] != '/' || strlen(p) >= PATH_MAX)
		return 0;
	for (c = p; *c; c++)
		if (*c == '/' && (c[1] == '/' || c[1] == '\0' ||
				  (c[1] == '.' && (c[2] == '/' || c[2] == '\0' ||
						   (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))))
			return 0;
	return 1;
}

/* HOST=LIST: a host name (the ranks' own) and its ports, maybe none. */
static int hca_at_ok(const char *v)
{
	const char *eq = strchr(v, '=');
	char host[256];

	if (!eq || eq == v || (size_t)(eq - v) >= sizeof(host) || v[0] == '-')
		return 0;
	snprintf(host, sizeof(host), "%.*s", (int)(eq - v), v);
	return ln_arg_all_of(host, LN_ARG_ALNUM "._-") && ln_nccl_hca_ok(eq + 1, 1);
}

/* DDDD:BB:DD.F in lower-case hex, sysfs's form (what the facts carry). */
static int pci_bus_ok(const char *v)
{
	static const char form[] = "xxxx:xx:xx.x";
	size_t i;

	if (strlen(v) != sizeof(form) - 1)
		return 0;
	for (i = 0; form[i]; i++)
		if (form[i] == 'x' ? !v[i] || !strchr("0123456789abcdef", v[i]) : v[i] != form[i])
			return 0;
	return 1;
}

static int value_ok(enum ln_arg_kind k, const char *v)
{
	unsigned char bin[16];

	switch (k) {
	case LN_ARG_FLAG:
		return 0;
	case LN_ARG_UINT:
		return ln_arg_all_of(v, LN_ARG_DIGITS) && strlen(v) <= 20;
	case LN_ARG_ADDR:
		return inet_pton(AF_INET, v, bin) == 1 || inet_pton(AF_INET6, v, bin) == 1;
	case LN_ARG_WORD:
		return ln_arg_all_of(v, LN_ARG_ALNUM "_.-") && v[0] != '-' && strlen(v) <= 64;
	case LN_ARG_PATH:
		return ln_arg_clean_path(v);
	case LN_ARG_NQN:
		return !strncmp(v, "nqn.", 4) && ln_arg_all_of(v, LN_ARG_ALNUM "_.:-") &&
		       strlen(v) <= LN_NQN_MAX;
	case LN_ARG_HCA:
		return ln_nccl_hca_ok(v, 0);
	case LN_ARG_HCA_AT:
		return hca_at_ok(v);
	case LN_ARG_IFNAME:
		return ln_nccl_ifname_ok(v);
	case LN_ARG_NCCL_ENV:
		/* a name on the allow-list (no variable that writes or reads a
		 * file or loads code), a plain value */
		return ln_nccl_env_pair_ok(v);
	case LN_ARG_PORT:
		return ln_arg_all_of(v, LN_ARG_DIGITS) && strlen(v) <= 5 && atol(v) >= 1 &&
		       atol(v) <= 65535;
	case LN_ARG_PCI_BUS:
		return pci_bus_ok(v);
	}
	return 0;
}

static const char *const kind_names[] = {
	[LN_ARG_FLAG] = "no value", [LN_ARG_UINT] = "an unsigned integer",
	[LN_ARG_ADDR] = "an IP address", [LN_ARG_WORD] = "a device name",
	[LN_ARG_PATH] = "an absolute path without . or .. parts",
	[LN_ARG_NQN] = "an NQN", [LN_ARG_HCA] = "RDMA ports as DEV:PORT,...",
	[LN_ARG_HCA_AT] = "HOST=DEV:PORT,... (or HOST=)",
	[LN_ARG_IFNAME] = "interface names (1-255 of [A-Za-z0-9_.,:^=-])",
	[LN_ARG_NCCL_ENV] = "NCCL_NAME=VALUE with a name on llmnet's allow-list and a plain value",
	[LN_ARG_PORT] = "a TCP port (1-65535)",
	[LN_ARG_PCI_BUS] = "a PCI bus id (0000:1b:00.0)",
};

/* argv[*i] against opts: an option it knows, with its value. */
int ln_arg_check_opt(const char *prog, const struct ln_arg_opt *opts, int argc, char **argv,
		     int *i, struct ln_buf *err)
{
	const struct ln_arg_opt *o;

	for (o = opts; o->name; o++)
		if (!strcmp(o->name, argv[*i]))
			break;
	if (!o->name) {
		ln_buf_addf(err, "%s option '%.100s' is not allowed (llmnet passes only the "
			    "options docs/agent-protocol.md lists)", prog, argv[*i]);
		return -LN_EREQUEST;
	}
	if (o->kind == LN_ARG_FLAG)
		return 0;
	if (*i + 1 >= argc || !value_ok(o->kind, argv[*i + 1])) {
		ln_buf_addf(err, "%s option '%s' takes %s, not '%.100s'", prog, o->name,
			    kind_names[o->kind], *i + 1 < argc ? argv[*i + 1] : "nothing");
		return -LN_EREQUEST;
	}
	(*i)++;
	return 0;
}

/* Arguments from first on: options from opts, then trailing (if any). */
int ln_arg_check_opts(const char *prog, const struct ln_arg_opt *opts,
		      enum ln_arg_kind trailing, int first, int argc, char **argv,
		      struct ln_buf *err)
{
	int i, r;

	for (i = first; i < argc; i++) {
		if (trailing != LN_ARG_FLAG && i == argc - 1 && argv[i][0] != '-') {
			if (value_ok(trailing, argv[i]))
				return 0;
			ln_buf_addf(err, "%s takes %s as its last argument, not '%.100s'", prog,
				    kind_names[trailing], argv[i]);
			return -LN_EREQUEST;
		}
		r = ln_arg_check_opt(prog, opts, argc, argv, &i, err);
		if (r < 0)
			return r;
	}
	return 0;
}
