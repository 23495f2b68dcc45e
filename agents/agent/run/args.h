/* SPDX-License-Identifier: MIT */
/*
 * Argument typing for the `run` verb (args.c): every argument a request
 * passes to a program is checked against that program's option table, each
 * option known and its value of its option's kind, before anything runs.
 * The tables themselves are the allow-list's (allow.c).
 */
#ifndef LN_AGENT_ARGS_H
#define LN_AGENT_ARGS_H

struct ln_buf;

#define LN_ARG_DIGITS "0123456789"
#define LN_ARG_ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" LN_ARG_DIGITS

/* What an option's value must be. */
enum ln_arg_kind {
	LN_ARG_FLAG, LN_ARG_UINT, LN_ARG_ADDR, LN_ARG_WORD, LN_ARG_PATH, LN_ARG_NQN,
	LN_ARG_HCA,		/* DEV:PORT[,DEV:PORT...] */
	LN_ARG_HCA_AT,		/* HOST=DEV:PORT[,...], or HOST= */
	LN_ARG_IFNAME,		/* NCCL_SOCKET_IFNAME */
	LN_ARG_NCCL_ENV,	/* NAME=VALUE, NAME on common/nccl_env.c's allow-list */
	LN_ARG_PORT,		/* a TCP port, 1-65535 */
	LN_ARG_PCI_BUS,		/* a PCI bus id as sysfs writes it: 0000:1b:00.0 */
};

/* One option of a program's table; a NULL name ends the table. */
struct ln_arg_opt {
	const char *name;
	enum ln_arg_kind kind;
};

/* 1 when an argument may be passed to a program at all: printable ASCII
 * without shell metacharacters, at most 4096 bytes. */
int ln_arg_plain(const char *s);
/* 1 when s is not empty and every byte of it is in set. */
int ln_arg_all_of(const char *s, const char *set);
/* 1 for an absolute path with no "." or ".." part and no empty one. */
int ln_arg_clean_path(const char *p);
/* argv[*i] against opts: an option it knows, with its value (then *i is
 * moved past the value). 0, or -LN_EREQUEST with why in err. */
int ln_arg_check_opt(const char *prog, const struct ln_arg_opt *opts, int argc, char **argv,
		     int *i, struct ln_buf *err);
/* Arguments from first on: options from opts, then trailing (if not
 * LN_ARG_FLAG) as the last one. 0, or -LN_EREQUEST with why in err. */
int ln_arg_check_opts(const char *prog, const struct ln_arg_opt *opts,
		      enum ln_arg_kind trailing, int first, int argc, char **argv,
		      struct ln_buf *err);

#endif
