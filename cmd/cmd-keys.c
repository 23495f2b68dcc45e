/* SPDX-License-Identifier: MIT */
/*
 * llmnet keys SPEC: create the DH-HMAC-CHAP secrets and TLS PSKs the
 * spec's targets need and that are missing, KEY_DIR/<target-node>/
 * <host-node>.key (.ctrl.key when bidirectional, .psk with tls), 0600 in
 * 0700 directories, each written
 * atomically and never over an existing file. Prints the path of every
 * file it made (stdout), never a secret. Contacts no node.
 * Exit 0 done, 1 a file could not be made, 3 invalid spec, 64 usage.
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/secrets.h"
#include "orchestrator/spec/spec.h"

int cmd_keys(int argc, char **argv)
{
	const struct ln_option options[] = {
		LN_OPT_END(),
	};
	const struct ln_opt_cmd c = {
		"llmnet keys SPEC",
		"Create the DH-HMAC-CHAP secrets and TLS PSKs SPEC's targets need that do\n"
		"not exist yet: KEY_DIR/<target-node>/<host-node>.key, .ctrl.key when\n"
		"bidirectional (DHHC-1 format, 32 random bytes), and .psk for a target\n"
		"with tls: required (the NVMe/TCP PSK, NVMeTLSkey-1 interchange format),\n"
		"0600 in 0700 directories. An existing file is never replaced. Prints\n"
		"each path made, never a secret; contacts no node.\n"
		"\n"
		"exit status: 0 done, 1 a secret could not be made, 3 invalid spec, 64 usage",
		options,
	};
	struct ln_buf err = LN_BUF_INIT, made = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	int n, r, rc;

	n = ln_cmd_parse(&c, argc, argv, &rc);
	if (n < 0)
		return rc;
	if (n != 2)
		return ln_cmd_usage(&c);
	r = ln_spec_load(argv[1], &spec, &err);
	if (r < 0) {
		ln_buf_rtrim(&err);
		fprintf(stderr, "%s\n", err.buf);
		ln_error("spec '%s' is invalid; no secret was made", argv[1]);
		rc = LN_EXIT_SPEC;
		goto out;
	}
	r = ln_secrets_make(spec, &made, &err);
	fputs(made.buf, stdout);
	if (r < 0) {
		ln_buf_rtrim(&err);
		ln_error("%s", err.buf);
		rc = LN_EXIT_FAILED;
		goto out;
	}
	if (!made.len)
		ln_info("every secret spec '%s' needs exists", argv[1]);
	rc = LN_EXIT_OK;
out:
	ln_spec_free(spec);
	ln_buf_release(&made);
	ln_buf_release(&err);
	return rc;
}
