/* SPDX-License-Identifier: MIT */
/*
 * The controls of the safety tier's lint refusals (tests/adversarial/spec):
 * each case, with the one edit that makes it safe, must lint clean, so a
 * rule that refuses every spec of that shape fails here. The refusals
 * themselves are the tier's goldens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/util.h"
#include "orchestrator/spec/spec.h"

#define ADV_DIR FIXTURES_DIR "/../adversarial/spec"

/* Case NAME with its first "from" replaced by "to": its load's code, the
 * model in *out (caller frees) and the messages in *msgs. */
static int load_edited(const char *name, const char *from, const char *to, struct ln_spec **out,
		       char **msgs)
{
	struct ln_buf text = LN_BUF_INIT, edited = LN_BUF_INIT, err = LN_BUF_INIT;
	char path[512];
	const char *at;
	int r;

	snprintf(path, sizeof(path), ADV_DIR "/%s.yaml", name);
	assert_int_equal(ln_file_read(path, &text, &err), 0);
	at = strstr(text.buf, from);
	assert_non_null(at);
	ln_buf_add(&edited, text.buf, (size_t)(at - text.buf));
	ln_buf_addstr(&edited, to);
	ln_buf_addstr(&edited, at + strlen(from));
	r = ln_spec_load_buf(path, edited.buf, edited.len, out, &err);
	*msgs = ln_buf_detach(&err, NULL);
	ln_buf_release(&text);
	ln_buf_release(&edited);
	return r;
}

static void expect_clean(const char *name, const char *from, const char *to)
{
	struct ln_spec *s = NULL;
	char *msgs = NULL;
	int r = load_edited(name, from, to, &s, &msgs);

	if (r)
		fprintf(stderr, "%s edited: unexpected errors:\n%s", name, msgs);
	assert_int_equal(r, 0);
	assert_non_null(s);
	ln_spec_free(s);
	free(msgs);
}

/* A device: namespace under a destructive io stage is accepted once
 * io.destructive_device names the risk, and the model carries it. */
/* mount.exec: true is accepted and reaches the model; without it, the
 * mount is noexec (exec 0). */
static void test_spec_safety__mount_exec_boolean(void **state)
{
	struct ln_spec *s = NULL;
	char *msgs = NULL;

	(void)state;
	assert_int_equal(load_edited("mount-exec-not-bool", "exec: sometimes", "exec: true", &s,
				     &msgs),
			 0);
	assert_true(s->initiators[0].mount.exec);
	ln_spec_free(s);
	free(msgs);
	assert_int_equal(load_edited("mount-exec-not-bool", ", exec: sometimes", "", &s, &msgs), 0);
	assert_false(s->initiators[0].mount.exec);
	ln_spec_free(s);
	free(msgs);
}

static void test_spec_safety__destructive_device_named(void **state)
{
	struct ln_spec *s = NULL;
	char *msgs = NULL;

	(void)state;
	assert_int_equal(load_edited("io-destructive-device", "destructive: true",
				     "destructive: true, destructive_device: true", &s, &msgs),
			 0);
	assert_true(s->validation.io.destructive);
	assert_true(s->validation.io.destructive_device);
	ln_spec_free(s);
	free(msgs);
	/* without destructive, a device: namespace is an ordinary io target */
	expect_clean("io-destructive-device", "{ stage: io, destructive: true }", "{ stage: io }");
	/* a file namespace was never refused */
	expect_clean("io-destructive-device", "device: /dev/nvme0n1",
		     "file: /var/lib/nvmet/d.img, size: 1GiB");
}

/* tests_dir beside the mount (a sibling whose name starts the same) and
 * on another local path are accepted: the rule is by whole components. */
static void test_spec_safety__tests_dir_off_mount(void **state)
{
	(void)state;
	expect_clean("tests-dir-on-mount", "tests_dir: /opt/nccl-tests/build",
		     "tests_dir: /opt/nccl-tests-local/build");
	expect_clean("tests-dir-on-mount", "tests_dir: /opt/nccl-tests/build",
		     "tests_dir: /usr/local/nccl-tests");
	expect_clean("tests-dir-is-mount", "path: /opt/nccl-tests,", "path: /mnt/data,");
}

/* perftest_dir, like tests_dir: off the mount (a sibling whose name
 * starts the same) it is accepted, on it refused (perftest-dir-on-mount.err). */
static void test_spec_safety__perftest_dir_off_mount(void **state)
{
	(void)state;
	expect_clean("perftest-dir-on-mount", "path: /opt/perftest,", "path: /opt/perftest-data,");
	expect_clean("perftest-dir-own", "/var/lib/llmnet/bin", "/opt/perftest/bin");
}

/* gds over rdma: accepted, in the model and its JSON; without it false
 * (gds-over-tcp.err is the refusal). */
static void test_spec_safety__gds_over_rdma(void **state)
{
	struct json_object *o = NULL;
	struct ln_buf out = LN_BUF_INIT;
	struct ln_spec *s = NULL;
	char *msgs = NULL;

	(void)state;
	assert_int_equal(load_edited("gds-over-tcp", "transport: tcp", "transport: rdma", &s,
				     &msgs), 0);
	assert_true(s->initiators[0].gds);
	assert_int_equal(ln_spec_to_json(s, &o), 0);
	assert_int_equal(ln_json_write(o, 0, &out), 0);
	assert_non_null(strstr(out.buf, "\"discovery\":false,\"gds\":true"));
	json_object_put(o);
	ln_spec_free(s);
	free(msgs);
	assert_int_equal(load_edited("gds-over-tcp", ", gds: true", "", &s, &msgs), 0);
	assert_false(s->initiators[0].gds);
	ln_spec_free(s);
	free(msgs);
	ln_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_safety__destructive_device_named),
		cmocka_unit_test(test_spec_safety__tests_dir_off_mount),
		cmocka_unit_test(test_spec_safety__perftest_dir_off_mount),
		cmocka_unit_test(test_spec_safety__gds_over_rdma),
		cmocka_unit_test(test_spec_safety__mount_exec_boolean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
