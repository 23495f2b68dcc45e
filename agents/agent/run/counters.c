// SPDX-License-Identifier: MIT
/*
 * `facts --counters DEV/PORT...`: the error counters of the named RDMA
 * ports, read-only, through a per-driver name table. Drivers name their
 * counters differently (rxe has only hw_counters/; mlx5 has the PMA's
 * counters/ beside its hw_counters/), so each table lists, per driver,
 * which file of which folder counts an error and which only informs
 * (packets, congestion notifications). A counter the table names that the
 * port lacks is null, never 0: a kernel without it has not counted zero
 * errors, it has not counted at all. The controller subtracts two reads
 * (before and after a pairwise stage's pair) and judges the errors.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/run/counters.h"
#include "common/json.h"
#include "common/util.h"

enum ctr_kind { CTR_ERROR, CTR_INFO };

struct ctr_name {
	const char *dir;	/* "hw_counters" or "counters" (the PMA's) */
	const char *name;	/* the kernel's file name */
	enum ctr_kind kind;
};

#define HW(n, k) { "hw_counters", n, k }
#define PMA(n) { "counters", n, CTR_ERROR }

/* rdma_rxe (drivers/infiniband/sw/rxe/rxe_hw_counters.c): hw_counters only. */
static const struct ctr_name rxe_names[] = {
	HW("rcvd_seq_err", CTR_ERROR),
	HW("out_of_seq_request", CTR_ERROR),
	HW("duplicate_request", CTR_ERROR),
	HW("completer_retry_err", CTR_ERROR),
	HW("retry_exceeded_err", CTR_ERROR),
	HW("rcvd_rnr_err", CTR_ERROR),
	HW("send_rnr_err", CTR_ERROR),
	HW("retry_rnr_exceeded_err", CTR_ERROR),
	HW("send_err", CTR_ERROR),
	HW("link_downed", CTR_ERROR),
	HW("sent_pkts", CTR_INFO),
	HW("rcvd_pkts", CTR_INFO),
};

/* mlx5_core: the PMA's port counters, and the driver's queue, retransmit
 * and congestion counters (drivers/infiniband/hw/mlx5/counters.c). */
static const struct ctr_name mlx5_names[] = {
	PMA("symbol_error"),
	PMA("port_rcv_errors"),
	PMA("port_rcv_remote_physical_errors"),
	PMA("port_rcv_switch_relay_errors"),
	PMA("port_xmit_discards"),
	PMA("link_error_recovery"),
	PMA("link_downed"),
	PMA("local_link_integrity_errors"),
	PMA("excessive_buffer_overrun_errors"),
	HW("out_of_buffer", CTR_ERROR),
	HW("out_of_sequence", CTR_ERROR),
	HW("duplicate_request", CTR_ERROR),
	HW("packet_seq_err", CTR_ERROR),
	HW("implied_nak_seq_err", CTR_ERROR),
	HW("local_ack_timeout_err", CTR_ERROR),
	HW("rnr_nak_retry_err", CTR_ERROR),
	HW("req_cqe_error", CTR_ERROR),
	HW("resp_cqe_error", CTR_ERROR),
	HW("req_remote_access_errors", CTR_ERROR),
	HW("resp_remote_access_errors", CTR_ERROR),
	HW("np_cnp_sent", CTR_INFO),
	HW("rp_cnp_handled", CTR_INFO),
	HW("np_ecn_marked_roce_packets", CTR_INFO),
};

static const struct {
	const char *driver;
	const struct ctr_name *names;
	size_t n;
} tables[] = {
	{ "rdma_rxe", rxe_names, ARRAY_SIZE(rxe_names) },
	{ "mlx5_core", mlx5_names, ARRAY_SIZE(mlx5_names) },
};

/* The device's driver into out: rxe devices carry a 'parent' attribute
 * (the netdev under them) and no bus device of their own driver; others
 * name theirs by the device/driver link. 0, or -ENOENT when neither says. */
static int ib_driver(const struct ln_agent *a, const char *dev, char *out, size_t size)
{
	char p[PATH_MAX], real[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/parent", dev);
	if (ln_path_exists(a, p) == 1) {
		snprintf(out, size, "rdma_rxe");
		return 0;
	}
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/device/driver", dev);
	if (ln_agent_path(a, p, real) < 0)
		return -ENAMETOOLONG;
	n = readlink(real, link, sizeof(link) - 1);
	if (n <= 0)
		return -ENOENT;
	link[n] = '\0';
	base = strrchr(link, '/');
	snprintf(out, size, "%s", base ? base + 1 : link);
	return 0;
}

/* A counter file's value, or NULL when it is not there or not a number. */
static struct json_object *counter_value(const struct ln_agent *a, const char *path)
{
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *o = NULL;
	unsigned long long v;
	char *end;

	if (ln_read_attr(a, path, &b) == 0 && b.len && b.buf[0] >= '0' && b.buf[0] <= '9') {
		errno = 0;
		v = strtoull(b.buf, &end, 10);
		if (!errno && (!*end || *end == '\n') && v <= INT64_MAX)
			o = json_object_new_int64((int64_t)v);
	}
	ln_buf_release(&b);
	return o;
}

/* "rxe0/1" into dev and port; 0, or -EINVAL for anything else. */
int ln_counters_parse_port(const char *s, char *dev, size_t size, unsigned *port)
{
	const char *slash = strrchr(s, '/');
	char *end;
	unsigned long p;

	if (!slash || (size_t)(slash - s) >= size)
		return -EINVAL;
	memcpy(dev, s, (size_t)(slash - s));
	dev[slash - s] = '\0';
	if (!ln_valid_name(dev, 63) || slash[1] < '1' || slash[1] > '9')
		return -EINVAL;
	p = strtoul(slash + 1, &end, 10);
	if (*end || p > 255)
		return -EINVAL;
	*port = (unsigned)p;
	return 0;
}

/* One port's entry: its driver and two objects, errors and other, every
 * name of the driver's table with its value or null. */
static struct json_object *port_counters(const struct ln_agent *a, const char *spec)
{
	struct json_object *o = json_object_new_object(), *errs, *other;
	char dev[64], driver[64], p[PATH_MAX];
	unsigned port;
	size_t t, i;

	ln_json_add_str(o, "port", spec);
	if (ln_counters_parse_port(spec, dev, sizeof(dev), &port) < 0) {
		ln_json_add_str(o, "reason", "not DEVICE/PORT");
		return o;
	}
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%u", dev, port);
	if (ln_is_dir(a, p) != 1) {
		ln_json_add_str(o, "reason", "no such RDMA port");
		return o;
	}
	if (ib_driver(a, dev, driver, sizeof(driver)) < 0) {
		ln_json_add_str(o, "reason", "the device's driver is unknown");
		return o;
	}
	ln_json_add_str(o, "driver", driver);
	for (t = 0; t < ARRAY_SIZE(tables); t++)
		if (!strcmp(tables[t].driver, driver))
			break;
	if (t == ARRAY_SIZE(tables)) {
		ln_json_add_str(o, "reason", "no counter table for this driver");
		return o;
	}
	errs = json_object_new_object();
	other = json_object_new_object();
	for (i = 0; i < tables[t].n; i++) {
		const struct ctr_name *c = &tables[t].names[i];

		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%u/%s/%s", dev, port,
			 c->dir, c->name);
		ln_json_add(c->kind == CTR_ERROR ? errs : other, c->name, counter_value(a, p));
	}
	ln_json_add(o, "errors", errs);
	ln_json_add(o, "other", other);
	return o;
}

int ln_counters_collect(struct ln_agent *a, char *const *ports, size_t n,
			struct json_object **out)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t i;

	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "root", a->fixture ? a->root : "/");
	for (i = 0; i < n; i++)
		json_object_array_add(arr, port_counters(a, ports[i]));
	ln_json_add(o, "counters", arr);
	ln_json_add(o, "warnings", json_object_new_array());
	*out = o;
	return 0;
}
