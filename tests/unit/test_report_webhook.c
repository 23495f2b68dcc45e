/* SPDX-License-Identifier: MIT */
/*
 * Posting the JSON report with libcurl to a local HTTP server on
 * 127.0.0.1 (a few lines of python3 started by the test, since
 * http.server's default handler cannot take a POST): the body arrives
 * whole with its content type; an HTTP 500, a server that never answers,
 * a closed port and a non-HTTP scheme each give their own clear error;
 * and the webhook as the first row of the after-validate actions
 * (orchestrator/validate/after.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"
#include "common/error.h"
#include "common/fileio.h"
#include "orchestrator/report/report.h"
#include "orchestrator/validate/after.h"
#include "tests/unit/validate_sample.h"

static const char server_py[] =
	"import http.server, sys, time\n"
	"out = sys.argv[1]\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    def do_POST(self):\n"
	"        n = int(self.headers.get('Content-Length', '0'))\n"
	"        body = self.rfile.read(n)\n"
	"        if self.path == '/slow':\n"
	"            time.sleep(5)\n"
	"        if self.path == '/fail':\n"
	"            self.send_response(500); self.end_headers(); return\n"
	"        with open(out, 'wb') as f:\n"
	"            f.write(self.headers.get('Content-Type', '').encode() + b'\\n' + body)\n"
	"        with open(out + '.auth', 'w') as f:\n"
	"            f.write(self.headers.get('Authorization', 'none'))\n"
	"        self.send_response(204); self.end_headers()\n"
	"    def log_message(self, *a):\n"
	"        pass\n"
	"s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"print(s.server_address[1], flush=True)\n"
	"s.serve_forever()\n";

struct srv {
	pid_t pid;
	int port;
	char dir[64];
	char body[128];
};

static int start(void **state)
{
	struct srv *s = calloc(1, sizeof(*s));
	char script[128];
	int fd[2];
	FILE *f;

	assert_non_null(s);
	strcpy(s->dir, "/tmp/ln-hook-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(script, sizeof(script), "%s/server.py", s->dir);
	snprintf(s->body, sizeof(s->body), "%s/body", s->dir);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(server_py, f);
	fclose(f);
	assert_int_equal(pipe(fd), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (!s->pid) {
		dup2(fd[1], 1);
		close(fd[0]);
		execlp("python3", "python3", script, s->body, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &s->port), 1);
	fclose(f);
	*state = s;
	return 0;
}

static int stop(void **state)
{
	struct srv *s = *state;
	char cmd[128];

	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	if (system(cmd))
		return -1;
	free(s);
	return 0;
}

/* Run first, before anything loaded libcurl: a libcurl that cannot be
 * opened is a clear error naming the library, and the next post, with
 * libcurl found, works (a failed load is tried again). */
static void test_report_webhook__missing_libcurl_is_clear(void **state)
{
	struct srv *s = *state;
	struct ln_buf err = LN_BUF_INIT;
	char url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s->port);
	setenv("LLMNET_LIBCURL", "libcurl-not-here.so.4", 1);
	assert_int_equal(ln_report_post(url, NULL, "{}", 2, 5000, &err), -ENOSYS);
	assert_non_null(strstr(err.buf, "cannot post the report to 'http://127.0.0.1:"));
	assert_non_null(strstr(err.buf, "': libcurl is not installed (libcurl-not-here.so.4: "));
	unsetenv("LLMNET_LIBCURL");
	ln_buf_reset(&err);
	assert_int_equal(ln_report_post(url, NULL, "{}", 2, 5000, &err), 0);
	ln_buf_release(&err);
}

static void test_report_webhook__posts_json(void **state)
{
	struct srv *s = *state;
	struct ln_buf json = LN_BUF_INIT, got = LN_BUF_INIT, err = LN_BUF_INIT, want = LN_BUF_INIT;
	struct ln_results r;
	char url[128];

	sample_results(&r);
	assert_int_equal(ln_report_json(&r, 0, &json), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", s->port);
	assert_int_equal(ln_report_post(url, NULL, json.buf, json.len, 5000, &err), 0);
	assert_int_equal(ln_file_read(s->body, &got, &err), 0);
	ln_buf_addf(&want, "application/json\n%s", json.buf);
	assert_string_equal(got.buf, want.buf);
	ln_results_release(&r);
	ln_test_release(&json, &got, &want, &err);
}

static void test_report_webhook__errors_are_clear(void **state)
{
	struct srv *s = *state;
	struct ln_buf err = LN_BUF_INIT;
	char url[128];
	int closed_port;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/fail", s->port);
	assert_int_equal(ln_report_post(url, NULL, "{}", 2, 5000, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "cannot post the report to 'http://127.0.0.1:"));
	assert_non_null(strstr(err.buf, "/fail': the server answered HTTP 500"));

	ln_buf_reset(&err);
	snprintf(url, sizeof(url), "http://user:secret@127.0.0.1:%d/slow", s->port);
	assert_int_equal(ln_report_post(url, NULL, "{}", 2, 600, &err), -LN_ETIMEOUT);
	assert_non_null(strstr(err.buf, "http://***@127.0.0.1:"));
	assert_null(strstr(err.buf, "secret"));
	assert_non_null(strstr(err.buf, "timed out"));

	/* a port nobody listens on: the server's own port after it exits is
	 * racy, so take port 1 (privileged, never bound in tests) */
	closed_port = 1;
	ln_buf_reset(&err);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", closed_port);
	assert_int_equal(ln_report_post(url, NULL, "{}", 2, 2000, &err), -LN_EUNREACH);
	assert_non_null(strstr(err.buf, "cannot post the report to 'http://127.0.0.1:1/'"));

	ln_buf_reset(&err);
	assert_int_equal(ln_report_post("file:///etc/passwd", NULL, "{}", 2, 2000, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "only http:// and https:// URLs are allowed"));
	ln_buf_release(&err);
}

/* Credentials never from argv (issue 31, point 7): a URL with user-info is
 * refused naming the safe ways (a URL with an '@' past its host is not);
 * the auth file must be a regular file of this user that no one else may
 * read (a 0644 one and a link are refused, the 0600 one is read), else
 * LLMNET_REPORT_AUTH; USER:PASSWORD goes as HTTP Basic, SCHEME VALUE as the
 * Authorization header; no message holds the secret. */
static void test_report_webhook__credentials_from_file_or_env(void **state)
{
	struct srv *s = *state;
	struct ln_buf err = LN_BUF_INIT, auth = LN_BUF_INIT_SECRET, got = LN_BUF_INIT;
	char url[128], file[128], link[128], seen[160];

	assert_int_equal(ln_report_url_check("https://alice:s3cret@hooks.example/x", &err),
			 -EINVAL);
	assert_non_null(strstr(err.buf, "--report-url-auth-file FILE"));
	assert_non_null(strstr(err.buf, "LLMNET_REPORT_AUTH"));
	assert_null(strstr(err.buf, "s3cret"));
	ln_buf_reset(&err);
	assert_int_equal(ln_report_url_check("https://tok@hooks.example/", &err), -EINVAL);
	assert_int_equal(ln_report_url_check("https://hooks.example/x?by=a@b", &err), 0);
	assert_int_equal(ln_report_url_check("http://127.0.0.1:8080/hook", &err), 0);

	snprintf(file, sizeof(file), "%s/auth", s->dir);
	snprintf(link, sizeof(link), "%s/auth.link", s->dir);
	snprintf(seen, sizeof(seen), "%s.auth", s->body);
	ln_buf_reset(&err);
	assert_int_equal(ln_file_write_atomic(file, "alice:s3cret\n", 13, 0644, &err), 0);
	assert_int_equal(ln_report_auth_load(file, &auth, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "is open to others (mode 0644): chmod 600 it"));
	assert_int_equal(auth.len, 0);
	assert_int_equal(chmod(file, 0600), 0);
	assert_int_equal(symlink(file, link), 0);
	ln_buf_reset(&err);
	assert_true(ln_report_auth_load(link, &auth, &err) < 0);
	assert_int_equal(auth.len, 0);
	ln_buf_reset(&err);
	assert_int_equal(ln_report_auth_load(file, &auth, &err), 0);
	assert_string_equal(auth.buf, "alice:s3cret");
	/* HTTP Basic; a failed post names no secret */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", s->port);
	assert_int_equal(ln_report_post(url, auth.buf, "{}", 2, 5000, &err), 0);
	assert_int_equal(ln_file_read(seen, &got, &err), 0);
	assert_string_equal(got.buf, "Basic YWxpY2U6czNjcmV0");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/fail", s->port);
	assert_int_equal(ln_report_post(url, auth.buf, "{}", 2, 5000, &err), -LN_EPROTO);
	assert_null(strstr(err.buf, "s3cret"));
	/* the environment, when no file is named: a header value */
	ln_buf_reset(&auth);
	ln_buf_reset(&err);
	setenv("LLMNET_REPORT_AUTH", "Bearer t0ken-xyz", 1);
	assert_int_equal(ln_report_auth_load(NULL, &auth, &err), 0);
	assert_string_equal(auth.buf, "Bearer t0ken-xyz");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", s->port);
	assert_int_equal(ln_report_post(url, auth.buf, "{}", 2, 5000, &err), 0);
	ln_buf_reset(&got);
	assert_int_equal(ln_file_read(seen, &got, &err), 0);
	assert_string_equal(got.buf, "Bearer t0ken-xyz");
	/* neither form: refused, the value not echoed */
	ln_buf_reset(&auth);
	setenv("LLMNET_REPORT_AUTH", "t0ken-xyz", 1);
	assert_int_equal(ln_report_auth_load(NULL, &auth, &err), -EINVAL);
	assert_null(strstr(err.buf, "t0ken"));
	assert_int_equal(auth.len, 0);
	/* control: none given, none sent */
	unsetenv("LLMNET_REPORT_AUTH");
	assert_int_equal(ln_report_auth_load(NULL, &auth, &err), 0);
	assert_int_equal(auth.len, 0);
	assert_int_equal(ln_report_post(url, NULL, "{}", 2, 5000, &err), 0);
	ln_buf_reset(&got);
	assert_int_equal(ln_file_read(seen, &got, &err), 0);
	assert_string_equal(got.buf, "none");
	ln_test_release(&err, &auth, &got);
}

/* The after-validate table: no URL, no post and nothing said; a URL gets
 * the compact JSON report; a failed post is an error note and exit 1. */
static void test_report_webhook__after_validate_row(void **state)
{
	struct srv *s = *state;
	struct ln_buf json = LN_BUF_INIT, got = LN_BUF_INIT, err = LN_BUF_INIT, want = LN_BUF_INIT;
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_after_opts o = { .url = NULL, .url_timeout_s = 5 };
	struct ln_results r;
	char url[128], seen[160];

	sample_results(&r);
	unlink(s->body);
	assert_int_equal(ln_validate_after(&r, &o, &notes), LN_EXIT_OK);
	assert_int_equal(notes.n, 0);
	assert_int_not_equal(access(s->body, F_OK), 0);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", s->port);
	o.url = url;
	assert_int_equal(ln_validate_after(&r, &o, &notes), LN_EXIT_OK);
	assert_int_equal(notes.n, 0);
	assert_int_equal(ln_report_json(&r, 0, &json), 0);
	assert_int_equal(ln_file_read(s->body, &got, &err), 0);
	ln_buf_addf(&want, "application/json\n%s", json.buf);
	assert_string_equal(got.buf, want.buf);

	/* the row sends the credentials it is given */
	o.auth = "Bearer row-token";
	assert_int_equal(ln_validate_after(&r, &o, &notes), LN_EXIT_OK);
	snprintf(seen, sizeof(seen), "%s.auth", s->body);
	ln_buf_reset(&got);
	assert_int_equal(ln_file_read(seen, &got, &err), 0);
	assert_string_equal(got.buf, "Bearer row-token");
	o.auth = NULL;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/fail", s->port);
	assert_int_equal(ln_validate_after(&r, &o, &notes), LN_EXIT_FAILED);
	assert_int_equal(notes.n, 1);
	assert_int_equal(notes.v[0].level, LN_LOG_ERROR);
	assert_non_null(strstr(notes.v[0].text, "/fail': the server answered HTTP 500"));
	ln_notes_release(&notes);
	ln_results_release(&r);
	ln_test_release(&json, &got, &want, &err);
}

LN_TEST_MAIN(start, stop,
	cmocka_unit_test(test_report_webhook__missing_libcurl_is_clear),
	cmocka_unit_test(test_report_webhook__posts_json),
	cmocka_unit_test(test_report_webhook__errors_are_clear),
	cmocka_unit_test(test_report_webhook__credentials_from_file_or_env),
	cmocka_unit_test(test_report_webhook__after_validate_row),
)
