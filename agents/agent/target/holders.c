// SPDX-License-Identifier: MIT
/*
 * Teardown never pulls storage from under a host: before the cluster's
 * subsystems go, decide which of them stay (cv->kept, NQN -> why):
 *
 *  - those the controller names with --keep (an initiator of them in the
 *    spec did not disconnect in this run: it is the controller that knows);
 *  - those this node's own initiator failed to disconnect from just before;
 *  - those a host still holds a controller on, as far as the kernel shows
 *    it: nvmet's debugfs (CONFIG_NVME_TARGET_DEBUGFS, 6.10 and later,
 *    /sys/kernel/debug/nvmet/<subsystem>/ctrl<id>/hostnqn) names each host;
 *    without it (Debian's 6.1 and 6.12 are built without), a tcp target's
 *    established connections to its port (/proc/net/tcp, tcp6) show that
 *    some host holds a controller on one of the port's subsystems, when
 *    they are all this cluster's; an rdma target without debugfs, or a
 *    port shared with another's subsystem, shows nothing, which the answer
 *    says.
 *
 * --force NQN skips the last check (the controller's --force). A host
 * that just disconnected may take a moment to let go on the target side,
 * so a held subsystem is looked at again for up to HOLD_WAIT_MS.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/core/budget.h"
#include "agents/agent/converge/parts.h"
#include "agents/agent/kernel/read.h"
#include "common/json.h"

#define DEBUGFS_NVMET "/sys/kernel/debug/nvmet"
#define HOLD_WAIT_MS 3000
#define HOLD_STEP_MS 200

/* The first controller debugfs shows on nqn, as "host 'H' (ADDR) still
 * holds controller ctrlN" in why; 1 when there is one. */
static int debugfs_holder(struct ln_agent *a, const char *nqn, struct ln_buf *why)
{
	char dir[PATH_MAX], p[PATH_MAX], **ents = NULL;
	struct ln_buf host = LN_BUF_INIT, addr = LN_BUF_INIT;
	size_t n = 0, i;
	int found = 0;

	snprintf(dir, sizeof(dir), DEBUGFS_NVMET "/%s", nqn);
	ln_list_dir(a, dir, &ents, &n);
	for (i = 0; i < n && !found; i++) {
		if (strncmp(ents[i], "ctrl", 4))
			continue;
		snprintf(p, sizeof(p), "%s/%s/hostnqn", dir, ents[i]);
		ln_buf_reset(&host);
		if (ln_read_attr(a, p, &host) < 0)
			continue;	/* gone while we looked */
		snprintf(p, sizeof(p), "%s/%s/host_traddr", dir, ents[i]);
		ln_buf_reset(&addr);
		ln_read_attr(a, p, &addr);
		ln_buf_addf(why, "host '%s'%s%s%s still holds controller %s", host.buf,
			    addr.len ? " (" : "", addr.buf, addr.len ? ")" : "", ents[i]);
		found = 1;
	}
	ln_names_free(ents, n);
	ln_buf_release(&host);
	ln_buf_release(&addr);
	return found;
}

/* addr in /proc/net/tcp's form: each 32-bit word of the address as the
 * kernel prints it (%08X of the word in host order). 0 or -1. */
static int proc_hex(const char *addr, int v6, char *out, size_t size)
{
	unsigned char b[16];
	size_t w, n = v6 ? 4 : 1;
	uint32_t word;

	if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, b) != 1 || size < n * 8 + 1)
		return -1;
	for (w = 0; w < n; w++) {
		memcpy(&word, b + 4 * w, 4);
		snprintf(out + 8 * w, size - 8 * w, "%08X", (unsigned)word);
	}
	return 0;
}

/* The reverse, for the message. */
static void proc_unhex(const char *hex, int v6, char *out, size_t size)
{
	unsigned char b[16];
	size_t w, n = v6 ? 4 : 1;
	char word[9];

	for (w = 0; w < n; w++) {
		uint32_t x;

		memcpy(word, hex + 8 * w, 8);
		word[8] = '\0';
		x = (uint32_t)strtoul(word, NULL, 16);
		memcpy(b + 4 * w, &x, 4);
	}
	if (!inet_ntop(v6 ? AF_INET6 : AF_INET, b, out, (socklen_t)size))
		snprintf(out, size, "?");
}

/*
 * An established connection to the tcp port addr:service, from
 * /proc/net/tcp (tcp6 for an IPv6 address); its peer in why. 1 held, 0
 * not, -1 when the table cannot be read (nothing can be said).
 */
static int tcp_holder(struct ln_agent *a, const char *addr, const char *service,
		      struct ln_buf *why)
{
	int v6 = strchr(addr, ':') != NULL, found = 0;
	char want[33], any[33], lhex[33], rhex[33], peer[INET6_ADDRSTRLEN];
	unsigned lport, rport, st, port = (unsigned)strtoul(service, NULL, 10);
	struct ln_buf t = LN_BUF_INIT;
	char *line, *save = NULL;

	if (proc_hex(addr, v6, want, sizeof(want)) < 0 ||
	    proc_hex(v6 ? "::" : "0.0.0.0", v6, any, sizeof(any)) < 0 ||
	    ln_read_attr(a, v6 ? "/proc/net/tcp6" : "/proc/net/tcp", &t) < 0) {
		ln_buf_release(&t);
		return -1;
	}
	for (line = strtok_r(t.buf, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		/* "  1: 0B004D0A:1144 0D004D0A:D2F0 01 ..."; 01 is ESTABLISHED */
		if (sscanf(line, " %*u: %32[0-9A-Fa-f]:%x %32[0-9A-Fa-f]:%x %x", lhex, &lport, rhex,
			   &rport, &st) != 5 || st != 1 || lport != port ||
		    strlen(lhex) != strlen(want) || strlen(rhex) != strlen(want))
			continue;
		if (strcasecmp(lhex, want) && strcmp(want, any))
			continue;
		proc_unhex(rhex, v6, peer, sizeof(peer));
		ln_buf_addf(why, "a host at %s still holds a connection to tcp port %s:%s (this "
			    "kernel has no nvmet debugfs to tell which subsystem)", peer, addr, service);
		found = 1;
	}
	ln_buf_release(&t);
	return found;
}

/* 1 when nvmet port id also exports a subsystem this cluster does not
 * own: a connection to the port may then be for that one. */
static int shared_port(struct ln_converge *cv, const char *id)
{
	char p[PATH_MAX], **subs = NULL;
	size_t n = 0, i;
	int shared = 0;

	if (!id)
		return 1;
	snprintf(p, sizeof(p), LN_NVMET "/ports/%s/subsystems", id);
	ln_list_dir(cv->a, p, &subs, &n);
	for (i = 0; i < n && !shared; i++)
		shared = !ln_cv_owned(cv, "nvmet_subsystem", subs[i]);
	ln_names_free(subs, n);
	return shared;
}

/* Is nqn held? 1 (why says by whom), 0, or -1 when the kernel shows
 * nothing that could tell for one of its ports (why says so). */
static int held(struct ln_converge *cv, const char *nqn, struct ln_buf *why)
{
	struct json_object *objs = ln_state_objects(&cv->st, cv->cluster);
	size_t i, n = objs ? json_object_array_length(objs) : 0;
	int blind = 0;

	if (ln_is_dir(cv->a, DEBUGFS_NVMET))
		return debugfs_holder(cv->a, nqn, why);
	/* the ports it is exported through: nvmet_port_subsystem T/A/S/N */
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);
		const char *k = ln_json_str_at(o, "kind"), *id = ln_json_str_at(o, "id");
		const char *last = id ? strrchr(id, '/') : NULL;
		char t[16], addr[64], *svc;

		if (!k || strcmp(k, "nvmet_port_subsystem") || !last || strcmp(last + 1, nqn) ||
		    sscanf(id, "%15[^/]/", t) != 1)
			continue;
		/* the middle "A/S": the address has no '/' */
		snprintf(addr, sizeof(addr), "%.*s", (int)(last - id - strlen(t) - 1),
			 id + strlen(t) + 1);
		svc = strrchr(addr, '/');
		if (strcmp(t, "tcp") || !svc) {
			blind = 1;
			continue;
		}
		*svc++ = '\0';
		if (shared_port(cv, ln_json_str_at(o, "port"))) {
			blind = 1;	/* its connections may be another's */
			continue;
		}
		switch (tcp_holder(cv->a, addr, svc, why)) {
		case 1:
			return 1;
		case -1:
			blind = 1;
			break;
		}
	}
	if (!blind)
		return 0;
	ln_buf_addf(why, "cannot see whether a host outside the spec still holds '%s': no nvmet "
		    "debugfs on this kernel (" DEBUGFS_NVMET ", CONFIG_NVME_TARGET_DEBUGFS) and no "
		    "connection table for its port (rdma, no /proc/net/tcp, or a tcp port shared "
		    "with a subsystem llmnet does not own); relied on the spec's initiators", nqn);
	return -1;
}

/* 1 when this run failed to disconnect this node's own connection to nqn. */
static int own_disconnect_failed(struct ln_converge *cv, const char *nqn)
{
	return ln_json_disconnect_failed(cv->ch.list, nqn);
}

void ln_nvmet_keep(struct ln_converge *cv, struct json_object *keep, struct json_object *force)
{
	struct json_object *objs = ln_state_objects(&cv->st, cv->cluster), *check;
	size_t i, n = objs ? json_object_array_length(objs) : 0;
	struct ln_buf why = LN_BUF_INIT;
	long waited = 0;

	cv->kept = json_object_new_object();
	check = json_object_new_object();
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);
		const char *k = ln_json_str_at(o, "kind"), *nqn = ln_json_str_at(o, "id");

		if (!k || strcmp(k, "nvmet_subsystem") || !nqn)
			continue;
		if (json_object_object_get_ex(keep, nqn, NULL))
			json_object_object_add(cv->kept, nqn, json_object_new_string(
				"an initiator of it in the spec did not disconnect (--keep)"));
		else if (own_disconnect_failed(cv, nqn))
			json_object_object_add(cv->kept, nqn, json_object_new_string(
				"this node's own initiator of it did not disconnect"));
		else if (!json_object_object_get_ex(force, nqn, NULL))
			json_object_object_add(check, nqn, NULL);
	}
	/* the held ones again, every HOLD_STEP_MS for at most HOLD_WAIT_MS */
	for (;;) {
		struct json_object *still = json_object_new_object();

		json_object_object_foreach(check, nqn, v) {
			int rc;

			(void)v;
			ln_buf_reset(&why);
			rc = held(cv, nqn, &why);
			if (rc < 0)
				ln_changes_warn(&cv->ch, "%s", why.buf);
			else if (rc > 0)
				json_object_object_add(still, nqn, json_object_new_string(why.buf));
		}
		json_object_put(check);
		check = still;
		if (!json_object_object_length(check))
			break;
		if (waited >= HOLD_WAIT_MS || ln_budget_left_ms() < 2 * HOLD_STEP_MS) {
			json_object_object_foreach(check, nqn2, v2) {
				json_object_object_add(cv->kept, nqn2, json_object_get(v2));
			}
			break;
		}
		poll(NULL, 0, HOLD_STEP_MS);
		waited += HOLD_STEP_MS;
	}
	json_object_put(check);
	ln_buf_release(&why);
}
