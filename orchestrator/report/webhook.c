/* SPDX-License-Identifier: MIT */
/*
 * POST the JSON report to an HTTP endpoint with libcurl. The whole
 * transfer is bounded, only http/https are allowed (a spec or CLI value
 * must not be able to reach file:// or other schemes), redirects are not
 * followed, and credentials in the URL never reach a message.
 */
#include <errno.h>
#include <string.h>

#include <curl/curl.h>

#include "common/error.h"
#include "orchestrator/report/report.h"

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

static size_t discard(char *ptr, size_t size, size_t nmemb, void *ud)
{
	(void)ptr;
	(void)ud;
	return size * nmemb;
}

int ln_report_post(const char *url, const char *body, size_t len, long timeout_ms,
		   struct ln_buf *err)
{
	struct ln_buf shown = LN_BUF_INIT;
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
	if (timeout_ms <= 0)
		timeout_ms = 10000;
	c = curl_easy_init();
	hdr = curl_slist_append(NULL, "Content-Type: application/json");
	if (!c || !hdr) {
		ln_buf_addf(err, "cannot post the report to '%s': out of memory", shown.buf);
		r = -ENOMEM;
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "llmnet/" LN_VERSION);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		ln_buf_addf(err, "cannot post the report to '%s': %s", shown.buf,
			    cerr[0] ? cerr : curl_easy_strerror(rc));
		r = rc == CURLE_OPERATION_TIMEDOUT ? -LN_ETIMEOUT : -LN_EUNREACH;
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status >= 300) {
		ln_buf_addf(err, "cannot post the report to '%s': the server answered HTTP %ld",
			    shown.buf, status);
		r = -LN_EPROTO;
		goto out;
	}
	r = 0;
out:
	curl_slist_free_all(hdr);
	if (c)
		curl_easy_cleanup(c);
	ln_buf_release(&shown);
	return r;
}
