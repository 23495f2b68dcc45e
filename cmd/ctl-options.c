/* SPDX-License-Identifier: MIT */
/*
 * The one option table of the controller commands facts, plan, apply and
 * teardown: every option once, marked with the commands that take it, and
 * each command's usage and --help text. A command's table is the marked
 * options in this order.
 */
#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "common/util.h"

#define FACTS (1u << LN_CTL_FACTS)
#define PLAN (1u << LN_CTL_PLAN)
#define APPLY (1u << LN_CTL_APPLY)
#define TEARDOWN (1u << LN_CTL_TEARDOWN)
#define CHANGING (PLAN | APPLY | TEARDOWN)

static const char *const usage[][2] = {
	[LN_CTL_FACTS] = {
		"llmnet facts SPEC",
		"prints per node: RDMA ports (state, rate, MTU), GPUs, NVMe-oF controllers, host NQN;\n"
		"-o json gives everything the agents report; --cached answers from the facts last\n"
		"read (exit 1 when a node has none on record); --topo prints the GPU x (GPU + NIC)\n"
		"PCIe distances instead (PIX, PXB, PHB, NODE, SYS), as nvidia-smi topo -m does" },
	[LN_CTL_PLAN] = {
		"llmnet plan SPEC",
		"shows what apply would change (+ create, ~ change, - remove); a node that cannot be\n"
		"reached is shown against its last-known state (its last apply), marked as such;\n"
		"--destroy shows what teardown would remove instead (with --purge, what\n"
		"teardown --purge would); with --detailed-exitcode\n"
		"exits 0 when nothing would change and 2 when something would" },
	[LN_CTL_APPLY] = {
		"llmnet apply SPEC",
		"converges every node: targets, then initiators, then hostfiles; prints a recap;\n"
		"--batch applies the nodes in waves, --max-fail stops before the next wave;\n"
		"a run that did not converge writes the nodes to retry (--limit @FILE takes them);\n"
		"a device: namespace whose disk is not the one first exported there is refused\n"
		"unless --accept-device NODE:PATH names it;\n"
		"with --validate, a converged cluster then runs the spec's validation stages" },
	[LN_CTL_TEARDOWN] = {
		"llmnet teardown SPEC",
		"removes, in reverse order, what llmnet created for this cluster and nothing else;\n"
		"a target stays while an initiator of it in the spec did not disconnect in this run\n"
		"or a host still holds it (exit 4), unless --force names it;\n"
		"--purge also deletes the backing files it created and the agent" },
};

/* --batch and --max-fail: N or N% into the struct ln_count at opt->value. */
static int parse_count(const struct ln_option *opt, const char *value)
{
	if (ln_count_parse(value, 1000000, opt->value) < 0) {
		ln_error("--%s takes a number of nodes or a percentage (N or N%%), not '%s'",
			 opt->long_name, value);
		return -1;
	}
	return 0;
}

static const struct ln_opt_cmd *table(enum ln_ctl_cmd cmd, struct ln_ctl_opts *o,
				      struct ln_ctl_table *t)
{
	const struct {
		unsigned cmds;
		struct ln_option opt;
	} all[] = {
		{ FACTS | CHANGING, LN_CTL_OPT_PARALLEL(o) },
		{ CHANGING, LN_CTL_OPT_LIMIT(o) },
		{ FACTS | CHANGING, LN_CTL_OPT_ACCEPT(o) },
		{ FACTS, LN_OPT_BOOL(0, "cached", &o->cached,
				     "print the facts as last read, with their age; contact no node") },
		{ FACTS, LN_OPT_BOOL(0, "topo", &o->topo,
				     "print each node's GPU x (GPU + NIC) PCIe distance matrix, in "
				     "nvidia-smi topo -m's layout") },
		{ PLAN, LN_OPT_BOOL(0, "detailed-exitcode", &o->detailed,
				    "exit 0 when nothing would change, 2 when something would") },
		{ APPLY, LN_OPT_BOOL(0, "validate", &o->validate,
				     "then, if the cluster converged, run the spec's validation "
				     "stages") },
		{ APPLY, { LN_OPT_CALLBACK, 0, "batch", &o->batch, "N|N%",
			   "apply in waves of N nodes (or N% of them), targets' nodes first", 0, 0,
			   0, NULL, parse_count } },
		{ APPLY, { LN_OPT_CALLBACK, 0, "max-fail", &o->max_fail, "N|N%",
			   "stop the rollout when more than N (N%) of a wave's nodes fail (exit 6)",
			   0, 0, 0, NULL, parse_count } },
		{ PLAN | APPLY, LN_OPT_LIST("accept-device", &o->accept_device, "NODE:PATH",
				     "NODE's disk at PATH was really replaced: pin the new one",
				     "takes NODE:PATH words, comma-separated") },
		{ PLAN, LN_OPT_BOOL(0, "destroy", &o->destroy,
				    "show what teardown would remove, not what apply would change") },
		{ PLAN | TEARDOWN, LN_OPT_BOOL(0, "purge", &o->purge,
					       "also delete the backing files llmnet created and the "
					       "agent (plan: with --destroy)") },
		{ TEARDOWN, LN_OPT_LIST("force", &o->force, "NAMES",
					"remove these targets (NQNs, or nodes: all they export) even "
					"while an initiator of them did not disconnect or a host "
					"still holds them",
					"takes target NQNs or node names, comma-separated") },
	};
	const struct ln_option end = LN_OPT_END();
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(all) && n + 1 < ARRAY_SIZE(t->options); i++)
		if (all[i].cmds & 1u << cmd)
			t->options[n++] = all[i].opt;
	t->options[n] = end;
	t->cmd.usage = usage[cmd][0];
	t->cmd.about = usage[cmd][1];
	t->cmd.options = t->options;
	return &t->cmd;
}

int ln_cmd_ctl_options(enum ln_ctl_cmd cmd, struct ln_ctl_opts *o, struct ln_ctl_table *t,
		       int argc, char **argv, int *code)
{
	int r = ln_cmd_ctl_parse(table(cmd, o, t), argc, argv, o);

	*code = r > 0 ? LN_EXIT_OK : LN_EXIT_USAGE;
	return r ? -1 : 0;
}

int ln_cmd_ctl_main(enum ln_ctl_cmd cmd, int argc, char **argv,
		    int (*check)(struct ln_ctl_opts *o),
		    int (*body)(struct ln_ctl_opts *o, struct ln_run *run))
{
	struct ln_ctl_opts o = { 0 };
	struct ln_ctl_table t;
	int code;

	if (ln_cmd_ctl_options(cmd, &o, &t, argc, argv, &code) < 0)
		return code;
	if (check) {
		code = ln_cmd_ctl_load_spec(&o);
		if (code == LN_EXIT_OK)
			code = check(&o);
		if (code != LN_EXIT_OK) {
			ln_cmd_ctl_release(&o);
			return code;
		}
	}
	return ln_cmd_ctl_run(&o, body);
}
