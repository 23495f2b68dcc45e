/* SPDX-License-Identifier: MIT */
/*
 * PCI configuration space (pciconf.h): the standard capability list from
 * the pointer at 0x34 (0x14 for a CardBus bridge), 48 entries at most in
 * 0x40-0xff, and the extended list from 0x100, 960 entries at most in
 * 0x100-0xfff; each list visits an offset once, so a cycle ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/kernel/pciconf.h"
#include "agents/agent/kernel/read.h"

#define PCI_STATUS 0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_HEADER_TYPE 0x0e
#define PCI_CAPABILITY_LIST 0x34
#define PCI_CB_CAPABILITY_LIST 0x14
#define PCI_STD_HEADER_SIZE 0x40
#define PCI_STD_SIZE 0x100
#define PCI_CAP_ID_EXP 0x10
#define PCI_EXP_FLAGS 2
#define PCI_EXT_CAP_ID_ACS 0x000d
#define PCI_ACS_CAP 4
#define PCI_ACS_CTRL 6

/* PCIe device/port types (the PCIe capability's flags, bits 7:4) */
#define PCI_EXP_TYPE_ROOT_PORT 0x4
#define PCI_EXP_TYPE_UPSTREAM 0x5
#define PCI_EXP_TYPE_DOWNSTREAM 0x6
#define PCI_EXP_TYPE_PCI_BRIDGE 0x7
#define PCI_EXP_TYPE_PCIE_BRIDGE 0x8

int ln_pciconf_read(const struct ln_agent *a, const char *path, unsigned char *buf, size_t *len)
{
	char p[PATH_MAX];
	size_t got = 0;
	int fd, r = 0;

	*len = 0;
	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	while (got < LN_PCICONF_SIZE) {
		ssize_t n = pread(fd, buf + got, LN_PCICONF_SIZE - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return r;
}

static unsigned le16(const unsigned char *p)
{
	return p[0] | (unsigned)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The PCIe capability's device/port type, -1 without one. */
static int pcie_type(const unsigned char *cfg, size_t len, int header_type)
{
	unsigned char seen[PCI_STD_SIZE / 4] = { 0 };
	unsigned ptr;
	int i;

	if (len < PCI_STD_HEADER_SIZE || !(le16(cfg + PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return -1;
	ptr = cfg[header_type == 2 ? PCI_CB_CAPABILITY_LIST : PCI_CAPABILITY_LIST] & 0xfc;
	for (i = 0; i < (PCI_STD_SIZE - PCI_STD_HEADER_SIZE) / 4; i++) {
		if (ptr < PCI_STD_HEADER_SIZE || ptr + 4 > len || seen[ptr / 4])
			return -1;
		seen[ptr / 4] = 1;
		if (cfg[ptr] == 0xff)	/* a function that is gone reads all ones */
			return -1;
		if (cfg[ptr] == PCI_CAP_ID_EXP)
			return (int)(le16(cfg + ptr + PCI_EXP_FLAGS) >> 4 & 0xf);
		ptr = cfg[ptr + 1] & 0xfc;
	}
	return -1;
}

/* The ACS capability into out, when the extended list has one. */
static void find_acs(const unsigned char *cfg, size_t len, struct ln_pciconf *out)
{
	unsigned char seen[LN_PCICONF_SIZE / 4] = { 0 };
	unsigned off = PCI_STD_SIZE;
	int i;

	if (len < LN_PCICONF_SIZE)
		return;
	for (i = 0; i < (LN_PCICONF_SIZE - PCI_STD_SIZE) / 4; i++) {
		uint32_t h;

		if (off < PCI_STD_SIZE || off + 8 > len || seen[off / 4])
			return;
		seen[off / 4] = 1;
		h = le32(cfg + off);
		if (h == 0 || h == 0xffffffff)
			return;
		if ((h & 0xffff) == PCI_EXT_CAP_ID_ACS) {
			out->acs = 1;
			out->acs_cap = (uint16_t)le16(cfg + off + PCI_ACS_CAP);
			out->acs_ctrl = (uint16_t)le16(cfg + off + PCI_ACS_CTRL);
			return;
		}
		off = h >> 20 & 0xffc;
	}
}

void ln_pciconf_parse(const unsigned char *cfg, size_t len, struct ln_pciconf *out)
{
	memset(out, 0, sizeof(*out));
	out->header_type = -1;
	out->pcie_type = -1;
	if (len < PCI_STD_HEADER_SIZE)
		return;
	out->header_type = cfg[PCI_HEADER_TYPE] & 0x7f;
	out->pcie_type = pcie_type(cfg, len, out->header_type);
	if (out->pcie_type >= 0)
		find_acs(cfg, len, out);
}

const char *ln_pciconf_kind(const struct ln_pciconf *c)
{
	switch (c->pcie_type) {
	case PCI_EXP_TYPE_ROOT_PORT:
		return "root_port";
	case PCI_EXP_TYPE_UPSTREAM:
		return "upstream";
	case PCI_EXP_TYPE_DOWNSTREAM:
		return "downstream";
	case PCI_EXP_TYPE_PCI_BRIDGE:
	case PCI_EXP_TYPE_PCIE_BRIDGE:
		return "pci_bridge";
	case -1:
		/* conventional PCI: a type 1 header is a PCI-to-PCI bridge */
		return c->header_type == 1 ? "pci_bridge" : "other";
	default:
		return "other";
	}
}
