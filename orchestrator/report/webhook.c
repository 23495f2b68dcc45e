/* SPDX-License-Identifier: MIT */
/*
 * POST the JSON report to an HTTP endpoint with libcurl. The whole
 * transfer is bounded, only http/https are allowed (a spec or CLI value
 * must not be able to reach file:// or other schemes), redirects are not
 * followed, and credentials in the URL never reach a message.
 * Credentials come from a 0600 file (--report-url-auth-file) or
 * $LLMNET_REPORT_AUTH, never from argv (visible to every user in
 * /proc/PID/cmdline): a URL with user-info is refused on the command line
 * (ln_report_url_check), and none is ever printed or logged.
 *
 * libcurl is opened (dlopen of its soname) only here, when a report is
 * first posted: linked, its chain (TLS, LDAP, Kerberos, p11-kit) cost every
 * command several MB of start-up RSS, `llmnet lint` included. The header
 * gives the types and constants; the functions come from the table below.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/error.h"
#include "common/fileio.h"
#include "orchestrator/report/report.h"

/* The user-info of scheme://user-info@host/...: 1 when url has one. */
static int has_userinfo(const char *url)
{
	const char *p = strstr(url, "://"), *at, *end;

	if (!p)
		return 0;
	at = strchr(p + 3, '@');
	end = p + 3 + strcspn(p + 3, "/?#");
	return at && at < end;
}

int ln_report_url_check(const char *url, struct ln_buf *err)
{
	if (!has_userinfo(url))
		return 0;
	ln_buf_addstr(err, "--report-url must not carry credentials (user:password@ in the "
		      "URL): every user on this machine can read a command line in "
		      "/proc/PID/cmdline; put them in a file only you can read (chmod 600) "
		      "given with --report-url-auth-file FILE, or in the environment variable "
		      "LLMNET_REPORT_AUTH, as USER:PASSWORD or as an Authorization header value "
		      "(Bearer TOKEN)");
	return -EINVAL;
}

/* The credentials' first line from fd (path names it in messages) into
 * out, checked: a regular file of this user that no one else may read. */
static int auth_from_file(int fd, const char *path, struct ln_buf *out, struct ln_buf *err)
{
	struct ln_buf raw = LN_BUF_INIT_SECRET;
	struct stat st;
	int r = -EINVAL;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ln_buf_addf(err, "report credentials '%s' is not a regular file", path);
		goto out;
	}
	if (st.st_uid != geteuid()) {
		ln_buf_addf(err, "report credentials '%s' is owned by uid %u, not by this user (%u)",
			    path, (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	if (st.st_mode & 077) {
		ln_buf_addf(err, "report credentials '%s' is open to others (mode %04o): chmod 600 "
			    "it", path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_size > 4096) {
		ln_buf_addf(err, "report credentials '%s' is larger than 4096 bytes", path);
		goto out;
	}
	r = ln_fd_read(fd, path, &raw, err);
	if (r == 0)
		r = ln_buf_add(out, raw.buf, strcspn(raw.buf, "\r\n"));
out:
	ln_buf_release(&raw);
	return r;
}

int ln_report_auth_load(const char *file, struct ln_buf *out, struct ln_buf *err)
{
	const char *env = getenv("LLMNET_REPORT_AUTH");
	size_t i;
	int fd, r;

	if (file) {
		fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			ln_buf_addf(err, "cannot open report credentials '%s': %s", file,
				    strerror(errno));
			return -errno;
		}
		r = auth_from_file(fd, file, out, err);
		close(fd);
		if (r < 0)
			return r;
	} else if (env && *env) {
		r = ln_buf_addstr(out, env);
		if (r < 0)
			return r;
	} else {
		return 0;
	}
	for (i = 0; i < out->len; i++)
		if ((unsigned char)out->buf[i] < ' ' || (unsigned char)out->buf[i] == 0x7f)
			break;
	if (!out->len || i < out->len || (!strchr(out->buf, ':') && !strchr(out->buf, ' '))) {
		ln_buf_addf(err, "report credentials from %s%s%s are not USER:PASSWORD or an "
			    "Authorization header value (SCHEME VALUE, as Bearer TOKEN) on one "
			    "line", file ? "'" : "LLMNET_REPORT_AUTH", file ? file : "",
			    file ? "'" : "");
		ln_buf_reset(out);
		return -EINVAL;
	}
	return 0;
}

/* Hide the user-info part of scheme://user:pass@host/... behind "***". */
static void redact(const char *url, struct ln_buf *out)
{
	const char *p = strstr(url, "://"), *at, *slash;

	if (!p) {
		ln_buf_addstr(out, url);
		return;
	}
	at = strchr(p + 3, '@');
	slash = strchr(p + 3, '/');
	if (at && (!slash || at < slash)) {
		ln_buf_add(out, url, (size_t)(p + 3 - url));
		ln_buf_addstr(out, "***");
		ln_buf_addstr(out, at);
	} else {
		ln_buf_addstr(out, url);
	}
}

/* Either flavour of libcurl 4 Debian ships (OpenSSL, GnuTLS), in that
 * order; LLMNET_LIBCURL names another. */
static const char *const curl_sonames[] = { "libcurl.so.4", "libcurl-gnutls.so.4", NULL };

/* The libcurl functions this file calls, resolved once. */
static struct {
	void *handle;
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode rc);
	void (*easy_cleanup)(CURL *c);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} curl;
static pthread_mutex_t curl_lock = PTHREAD_MUTEX_INITIALIZER;

/* Open libcurl and resolve the table; a failure leaves curl.handle NULL
 * and is tried again on the next post. */
static void curl_load(struct ln_buf *why)
{
	const struct {
		const char *name;
		size_t off;
	} syms[] = {
#define SYM(f, m) { #f, offsetof(__typeof__(curl), m) }
		SYM(curl_global_init, global_init),
		SYM(curl_easy_init, easy_init),
		SYM(curl_easy_setopt, easy_setopt),
		SYM(curl_easy_perform, easy_perform),
		SYM(curl_easy_getinfo, easy_getinfo),
		SYM(curl_easy_strerror, easy_strerror),
		SYM(curl_easy_cleanup, easy_cleanup),
		SYM(curl_slist_append, slist_append),
		SYM(curl_slist_free_all, slist_free_all),
#undef SYM
	};
	const char *env = getenv("LLMNET_LIBCURL");
	const char *const *names = curl_sonames;
	const char *one[] = { env, NULL };
	void *h = NULL;
	size_t i;

	if (env && *env)
		names = one;
	for (i = 0; names[i] && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		ln_buf_addf(why, "libcurl is not installed (%s)", dlerror());
		return;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f) {
			ln_buf_addf(why, "the libcurl loaded has no %s", syms[i].name);
			dlclose(h);
			return;
		}
		memcpy((char *)&curl + syms[i].off, &f, sizeof(f));
	}
	/* Once per process, before any handle; never cleaned up, as the
	 * process ends soon after a report. */
	if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		ln_buf_addstr(why, "libcurl failed to initialise");
		dlclose(h);
		return;
	}
	curl.handle = h;
}

static size_t discard(char *ptr, size_t size, size_t nmemb, void *ud)
{
	(void)ptr;
	(void)ud;
	return size * nmemb;
}

int ln_report_post(const char *url, const char *auth, const char *body, size_t len,
		   long timeout_ms, struct ln_buf *err)
{
	struct ln_buf shown = LN_BUF_INIT, why = LN_BUF_INIT, hval = LN_BUF_INIT_SECRET;
	struct curl_slist *hdr = NULL;
	char cerr[CURL_ERROR_SIZE] = "";
	CURL *c = NULL;
	CURLcode rc;
	long status = 0;
	int r;

	redact(url, &shown);
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		ln_buf_addf(err, "cannot post the report to '%s': only http:// and https:// URLs "
				 "are allowed", shown.buf);
		r = -EINVAL;
		goto out;
	}
	pthread_mutex_lock(&curl_lock);
	if (!curl.handle)
		curl_load(&why);
	pthread_mutex_unlock(&curl_lock);
	if (!curl.handle) {
		ln_buf_addf(err, "cannot post the report to '%s': %s", shown.buf, why.buf);
		r = -ENOSYS;
		goto out;
	}
	if (timeout_ms <= 0)
		timeout_ms = 10000;
	c = curl.easy_init();
	hdr = curl.slist_append(NULL, "Content-Type: application/json");
	/* "SCHEME VALUE" is a header; USER:PASSWORD is HTTP Basic (below) */
	if (hdr && auth && strchr(auth, ' ')) {
		struct curl_slist *h2;

		ln_buf_addf(&hval, "Authorization: %s", auth);
		h2 = curl.slist_append(hdr, hval.buf);
		if (!h2) {
			curl.slist_free_all(hdr);
			hdr = NULL;
		}
	}
	if (!c || !hdr) {
		ln_buf_addf(err, "cannot post the report to '%s': out of memory", shown.buf);
		r = -ENOMEM;
		goto out;
	}
	curl.easy_setopt(c, CURLOPT_URL, url);
	curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	if (auth && !strchr(auth, ' ')) {
		curl.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl.easy_setopt(c, CURLOPT_USERPWD, auth);
	}
	curl.easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl.easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl.easy_setopt(c, CURLOPT_USERAGENT, "llmnet/" LN_VERSION);
	rc = curl.easy_perform(c);
	if (rc != CURLE_OK) {
		ln_buf_addf(err, "cannot post the report to '%s': %s", shown.buf,
			    cerr[0] ? cerr : curl.easy_strerror(rc));
		r = rc == CURLE_OPERATION_TIMEDOUT ? -LN_ETIMEOUT : -LN_EUNREACH;
		goto out;
	}
	curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status >= 300) {
		ln_buf_addf(err, "cannot post the report to '%s': the server answered HTTP %ld",
			    shown.buf, status);
		r = -LN_EPROTO;
		goto out;
	}
	r = 0;
out:
	if (hdr)
		curl.slist_free_all(hdr);
	if (c)
		curl.easy_cleanup(c);
	ln_buf_release(&shown);
	ln_buf_release(&why);
	ln_buf_release(&hval);
	return r;
}
