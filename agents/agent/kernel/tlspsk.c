// SPDX-License-Identifier: MIT
/*
 * NVMe/TCP TLS: a configured PSK (the interchange format of
 * common/dhchap.h) becomes the TLS PSK the kernel looks up in its .nvme
 * keyring, derived as libnvme's nvme_insert_tls_key does for a "retained"
 * PSK (NVMe TCP transport spec 3.6.1.3, with libnvme's HKDF info layout,
 * see hkdf_label()):
 *
 *   retained = HKDF(configured, "HostNQN", hostnqn, L)
 *   identity = "NVMe0R01 <hostnqn> <subnqn>"   (02 for SHA-384)
 *   tls psk  = HKDF(retained, "nvme-tls-psk", identity, L)
 *
 * which is the identity the 6.12 kernel's nvme_tls_psk_default() asks for
 * (version 0, retained, the key's hash). Both ends insert it with
 * add_key(2) through the fsops seam, so the fixture records the insert.
 * Keys live only in stack buffers wiped before return.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "agents/agent/core/agent.h"
#include "agents/agent/core/digest.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/kernel/tlspsk.h"
#include "common/dhchap.h"

/*
 * HKDF-Extract(0, in), then HKDF-Expand with info = LE16(len) "tls13 "
 * label context: the layout libnvme writes by default (nvme-cli 2.13,
 * libnvme 1.13 and earlier; its later "non-compat" form follows RFC 8446's
 * length prefixes). Both ends of llmnet derive alike, and an nvme-cli
 * host with the same configured key finds the same key: the lab's
 * keyring read back after `nvme gen-tls-key -i` is the unit test's vector.
 */
static int hkdf_label(const unsigned char *in, size_t len, const char *label, const char *context,
		      unsigned char *out)
{
	unsigned char info[2 + 6 + 32 + LN_TLS_IDENTITY_MAX];
	size_t ll = strlen(label), cl = strlen(context), n = 0;
	int r;

	if (6 + ll + cl + 2 > sizeof(info))
		return -ENAMETOOLONG;
	info[n++] = (unsigned char)len;
	info[n++] = (unsigned char)(len >> 8);
	memcpy(info + n, "tls13 ", 6);
	n += 6;
	memcpy(info + n, label, ll);
	n += ll;
	memcpy(info + n, context, cl);
	n += cl;
	/* the PSK's length names its hash: 32 bytes SHA-256, 48 SHA-384 */
	r = ln_hkdf(len, in, len, info, n, out, len);
	explicit_bzero(info, sizeof(info));
	return r;
}

int ln_tls_psk_derive(const char *psk, const char *hostnqn, const char *subnqn,
		      char *identity, size_t idsize, unsigned char *key, size_t *keylen,
		      struct ln_buf *err)
{
	unsigned char configured[LN_TLS_KEY_MAX], retained[LN_TLS_KEY_MAX];
	int n, r;

	n = ln_tls_psk_decode(psk, configured, sizeof(configured), err);
	if (n < 0)
		return n;
	r = snprintf(identity, idsize, "NVMe0R%02d %s %s", n == 32 ? 1 : 2, hostnqn, subnqn);
	if (r < 0 || (size_t)r >= idsize) {
		ln_buf_addstr(err, "the PSK identity (host and subsystem NQN) is too long");
		r = -ENAMETOOLONG;
		goto out;
	}
	r = hkdf_label(configured, (size_t)n, "HostNQN", hostnqn, retained);
	if (r == 0)
		r = hkdf_label(retained, (size_t)n, "nvme-tls-psk", identity, key);
	if (r < 0) {
		ln_buf_addstr(err, r == -ENAMETOOLONG ? "the host or subsystem NQN is too long "
							"for a TLS PSK identity"
						      : "cannot derive the TLS PSK (HKDF)");
		goto out;
	}
	*keylen = (size_t)n;
	r = 0;
out:
	explicit_bzero(configured, sizeof(configured));
	explicit_bzero(retained, sizeof(retained));
	if (r < 0)
		explicit_bzero(key, LN_TLS_KEY_MAX);
	return r;
}

int ln_tls_psk_insert(struct ln_agent *a, const char *psk, const char *hostnqn,
		      const char *subnqn, char *identity, size_t idsize, struct ln_buf *err)
{
	unsigned char key[LN_TLS_KEY_MAX];
	size_t len = 0;
	int r;

	r = ln_tls_psk_derive(psk, hostnqn, subnqn, identity, idsize, key, &len, err);
	if (r == 0)
		r = ln_agent_change(a, "tls psk");
	if (r == 0)
		r = a->fs->add_psk(a, identity, key, len, err);
	explicit_bzero(key, sizeof(key));
	return r;
}

/*
 * The serial of the key of type and description desc in ROOT/proc/keys,
 * or 0. A line reads "SERIAL FLAGS USAGE EXPIRY PERM UID GID TYPE DESC: X"
 * with X the key type's own (a keyring's "empty" or link count, a psk's
 * length); the description may hold ':' (NQNs do), so X is cut at the
 * last ": ". /proc/keys lists the keys the caller may view: root sees the
 * kernel's .nvme keyring and the psk keys in it.
 */
long ln_proc_key_serial(const struct ln_agent *a, const char *type, const char *desc)
{
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;
	long serial = 0;

	if (ln_read_attr(a, "/proc/keys", &b) < 0) {
		ln_buf_release(&b);
		return 0;
	}
	for (line = strtok_r(b.buf, "\n", &save); line && !serial;
	     line = strtok_r(NULL, "\n", &save)) {
		char id[16], t[32], *d, *cut;
		int off = 0;

		if (sscanf(line, "%15s %*s %*s %*s %*s %*s %*s %31s %n", id, t, &off) != 2 || !off ||
		    strcmp(t, type))
			continue;
		d = line + off;
		cut = strstr(d, ": ");
		while (cut && strstr(cut + 1, ": "))
			cut = strstr(cut + 1, ": ");
		if (cut)
			*cut = '\0';
		if (!strcmp(d, desc))
			serial = strtol(id, NULL, 16);
	}
	ln_buf_release(&b);
	return serial;
}

long ln_keyring_serial(const struct ln_agent *a, const char *name)
{
	return ln_proc_key_serial(a, "keyring", name);
}

/* 1 when a process named tlshd runs (ROOT/proc/PID/comm). */
int ln_tlshd_running(const struct ln_agent *a)
{
	char **names = NULL, p[64];
	size_t n = 0, i;
	int found = 0;

	if (ln_list_dir(a, "/proc", &names, &n) < 0)
		return 0;
	for (i = 0; i < n && !found; i++) {
		struct ln_buf b = LN_BUF_INIT;

		if (!names[i][0] || strspn(names[i], "0123456789") != strlen(names[i]))
			continue;
		snprintf(p, sizeof(p), "/proc/%.20s/comm", names[i]);
		found = ln_read_attr(a, p, &b) == 0 && !strcmp(b.buf, "tlshd");
		ln_buf_release(&b);
	}
	ln_names_free(names, n);
	return found;
}

int ln_tls_ready(const struct ln_agent *a, int keyring, struct ln_buf *err)
{
	if (keyring && !ln_keyring_serial(a, ".nvme")) {
		ln_buf_addstr(err, "this kernel has no NVMe TLS keyring '.nvme' in /proc/keys "
				   "(it needs NVME_TCP_TLS / NVME_TARGET_TCP_TLS and the nvme_keyring "
				   "module)");
		return -EOPNOTSUPP;
	}
	if (!ln_tlshd_running(a)) {
		ln_buf_addstr(err, "tlshd (ktls-utils) is not running: the kernel hands every TLS "
				   "handshake to it; start it with '[authenticate] keyrings = .nvme' "
				   "in /etc/tlshd.conf");
		return -ESRCH;
	}
	return 0;
}
