/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the transport's local parts: known_hosts replacement
 * (used by accept-new and --accept-replaced), the command-line word check,
 * and the agent command line. The network half is exercised against real
 * sshd instances by tests/cluster/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fileio.h"
#include "orchestrator/transport/push.h"
#include "orchestrator/transport/ssh.h"

#define KEY_A "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBbnXUL0H4yPOgGDqkIsKXi1X1TVMlCDCW8Vt1v7XmV9"
#define KEY_B "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHY0QzQW7D6k4m0zpX1YqVZ6H1YJ0V5m2m8Zs3C8d8aK"
#define KEY_C "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOj8w5dC1c6NqXyE9k2O5gZ5sQnY7T1Ydq2Fv8u3kV1p"

static char *tmpfile_with(const char *content)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/llmnet-kh.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	return path;
}

/* ln_known_hosts_replace(file, host, port, line) succeeds. */
static void replace(const char *file, const char *host, int port, const char *line)
{
	struct ln_buf err = LN_BUF_INIT;

	assert_int_equal(ln_known_hosts_replace(file, host, port, line, &err), 0);
	ln_buf_release(&err);
}

/* file holds exactly want; then it is removed. */
static void assert_file_is(const char *file, const char *want)
{
	struct ln_buf err = LN_BUF_INIT, got = LN_BUF_INIT;

	assert_int_equal(ln_file_read(file, &got, &err), 0);
	assert_string_equal(got.buf, want);
	unlink(file);
	ln_test_release(&got, &err);
}

static void test_transport__replace_drops_only_that_host(void **state)
{
	char *kh;

	(void)state;
	kh = tmpfile_with("# comment stays\n"
			  "127.0.1.1 " KEY_A "\n"
			  "127.0.1.2 " KEY_B "\n"
			  "127.0.1.10 " KEY_C "\n");
	replace(kh, "127.0.1.1", 22, "127.0.1.1 " KEY_C);
	assert_file_is(kh, "# comment stays\n"
			   "127.0.1.2 " KEY_B "\n"
			   "127.0.1.10 " KEY_C "\n"
			   "127.0.1.1 " KEY_C "\n");
}

static void test_transport__replace_matches_bracketed_port(void **state)
{
	char *kh;

	(void)state;
	kh = tmpfile_with("[10.0.0.5]:2222 " KEY_A "\n10.0.0.5 " KEY_B "\n");
	replace(kh, "10.0.0.5", 2222, "[10.0.0.5]:2222 " KEY_C);
	/* port 22's entry for the same address is another host key: kept */
	assert_file_is(kh, "10.0.0.5 " KEY_B "\n[10.0.0.5]:2222 " KEY_C "\n");
}

static void test_transport__replace_creates_missing_file(void **state)
{
	char path[] = "/tmp/llmnet-kh-new.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	close(fd);
	unlink(path);
	replace(path, "127.0.1.3", 22, "127.0.1.3 " KEY_A);
	assert_file_is(path, "127.0.1.3 " KEY_A "\n");
}

static void test_transport__two_accepts_leave_no_blank_line(void **state)
{
	char *kh;

	(void)state;
	/* libssh's exported entry ends in a newline of its own */
	kh = tmpfile_with("127.0.1.2 " KEY_B "\n");
	replace(kh, "127.0.1.1", 22, "127.0.1.1 " KEY_A "\n");
	replace(kh, "127.0.1.3", 22, "127.0.1.3 " KEY_C "\n");
	assert_file_is(kh, "127.0.1.2 " KEY_B "\n"
			   "127.0.1.1 " KEY_A "\n"
			   "127.0.1.3 " KEY_C "\n");
}

/* ln_known_hosts_replace refuses file, with want in the message, and
 * leaves its bytes and mode as they were; then it is removed. */
static void refused_file(const char *file, const char *want)
{
	struct ln_buf err = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;
	struct stat a, b;

	assert_int_equal(ln_file_read(file, &before, &err), 0);
	assert_int_equal(lstat(file, &b), 0);
	assert_int_equal(ln_known_hosts_replace(file, "127.0.1.1", 22, "127.0.1.1 " KEY_A, &err),
			 -LN_EHOSTKEY);
	if (!strstr(err.buf, want) || !strstr(err.buf, file))
		fail_msg("want '%s' and the path in: %s", want, err.buf);
	assert_int_equal(ln_file_read(file, &after, &err), 0);
	assert_string_equal(before.buf, after.buf);
	assert_int_equal(lstat(file, &a), 0);
	assert_int_equal(a.st_mode, b.st_mode);
	unlink(file);
	ln_test_release(&err, &before, &after);
}

/* A file that is not known_hosts (a passwd, hosts or shell file named by
 * mistake) is never rewritten nor chmod-ed; known_hosts keeps its mode. */
static void test_transport__replace_refuses_other_files(void **state)
{
	char *kh, link[64];

	(void)state;
	kh = tmpfile_with("root:x:0:0:root:/root:/bin/bash\n");
	chmod(kh, 0644);
	refused_file(kh, "is not a known_hosts file (line 1");
	kh = tmpfile_with("# hosts\n127.0.0.1 localhost\n");
	refused_file(kh, "(line 2");
	kh = tmpfile_with("127.0.1.2 " KEY_B "\nalias ll='ls -l'\n");
	refused_file(kh, "(line 2");
	/* a link to a real known_hosts: renaming over it would cut the link */
	kh = tmpfile_with("127.0.1.2 " KEY_B "\n");
	snprintf(link, sizeof(link), "%s.link", kh);
	assert_int_equal(symlink(kh, link), 0);
	refused_file(link, "is not a regular file of this user");
	unlink(kh);
	/* hashed names, markers and comments are entries; the mode is kept */
	kh = tmpfile_with("|1|F1E1KeoE/eEWhi10WpGv4OdiO6Y=|3988QV0VE8wmZL7suNrYQLITLCg= " KEY_B
			  "\n@cert-authority *.example " KEY_C "\n  # indented comment\n\n");
	chmod(kh, 0640);
	replace(kh, "127.0.1.1", 22, "127.0.1.1 " KEY_A);
	{
		struct stat st;

		assert_int_equal(stat(kh, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0640);
	}
	unlink(kh);
}

static void test_transport__safe_word(void **state)
{
	(void)state;
	assert_true(ln_ssh_safe_word("127.0.1.1"));
	assert_true(ln_ssh_safe_word("admin@jump.example:2222"));
	assert_true(ln_ssh_safe_word("/home/u/.ssh/id_ed25519"));
	assert_false(ln_ssh_safe_word(""));
	assert_false(ln_ssh_safe_word(NULL));
	assert_false(ln_ssh_safe_word("-oProxyCommand=x"));
	assert_false(ln_ssh_safe_word("a b"));
	assert_false(ln_ssh_safe_word("a;reboot"));
	assert_false(ln_ssh_safe_word("$(id)"));
	assert_false(ln_ssh_safe_word("a'b"));
}

static void test_transport__agent_command(void **state)
{
	static const char *const ok[] = { "teardown", "--cluster", "te-lab", "--purge", NULL };
	static const char *const bad[] = { "teardown", "--cluster", "x;rm -rf /", NULL };
	struct ln_buf cmd = LN_BUF_INIT;

	(void)state;
	assert_int_equal(ln_agent_command(0, ok, &cmd), 0);
	assert_string_equal(cmd.buf, "\"${LLMNET_AGENT_ROOT%/}/var/lib/llmnet/bin/llmnet-agent\" "
				     "teardown --cluster te-lab --purge");
	ln_buf_reset(&cmd);
	assert_int_equal(ln_agent_command(1, ok, &cmd), 0);
	assert_non_null(strstr(cmd.buf, "sudo -n "));
	ln_buf_reset(&cmd);
	assert_int_equal(ln_agent_command(0, bad, &cmd), -EINVAL);
	ln_buf_release(&cmd);
}

/* The agent's budget ends before the controller's step: a fifth of the
 * step is left for the transfer, at least 250 ms, at most 5 s. */
static void test_transport__agent_budget(void **state)
{
	(void)state;
	assert_int_equal(ln_agent_budget_ms(5000), 4000);
	assert_int_equal(ln_agent_budget_ms(30000), 25000);
	assert_int_equal(ln_agent_budget_ms(60000), 55000);
	assert_int_equal(ln_agent_budget_ms(1000), 750);
	assert_int_equal(ln_agent_budget_ms(100), 1);
}

static void test_transport__sha256(void **state)
{
	char hex[65];

	(void)state;
	ln_sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* The jump hop's command: OpenSSH by absolute path, no ssh_config, the
 * spec's known_hosts only, under the spec's host-key policy. */
static void test_transport__jump_command(void **state)
{
	struct ln_ssh_opts o = { .node = "n1", .jump = "ops@bastion:2222",
				 .connect_timeout_ms = 5000 };
	struct ln_buf err = LN_BUF_INIT;
	char cmd[2048];

	(void)state;
	assert_int_equal(ln_ssh_jump_command(&o, "/kh", cmd, sizeof(cmd), &err), 0);
	assert_string_equal(cmd, "/usr/bin/ssh -F none -o BatchMode=yes "
				 "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=/kh "
				 "-o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=5 "
				 "-p 2222 -W [%h]:%p ops@bastion");
	o.policy = LN_HOSTKEY_ACCEPT_NEW;
	o.jump = "bastion";
	assert_int_equal(ln_ssh_jump_command(&o, "/kh", cmd, sizeof(cmd), &err), 0);
	assert_non_null(strstr(cmd, " -o StrictHostKeyChecking=accept-new "));
	assert_non_null(strstr(cmd, " -p 22 -W [%h]:%p bastion"));
	/* a word the shell would split is refused, not passed on */
	o.jump = "bastion;id";
	assert_int_equal(ln_ssh_jump_command(&o, "/kh", cmd, sizeof(cmd), &err), -EINVAL);
	assert_non_null(strstr(err.buf, "invalid jump host"));
	ln_buf_release(&err);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_transport__jump_command),
	cmocka_unit_test(test_transport__replace_drops_only_that_host),
	cmocka_unit_test(test_transport__replace_matches_bracketed_port),
	cmocka_unit_test(test_transport__replace_creates_missing_file),
	cmocka_unit_test(test_transport__two_accepts_leave_no_blank_line),
	cmocka_unit_test(test_transport__replace_refuses_other_files),
	cmocka_unit_test(test_transport__safe_word),
	cmocka_unit_test(test_transport__agent_command),
	cmocka_unit_test(test_transport__agent_budget),
	cmocka_unit_test(test_transport__sha256),
)
