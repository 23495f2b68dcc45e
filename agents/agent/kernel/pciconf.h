/* SPDX-License-Identifier: MIT */
/*
 * A PCI function's configuration space as sysfs gives it (the binary
 * `config` file: 4096 bytes for a PCIe function read as root, 256 for
 * conventional PCI, 64 for anyone else), read under the agent's root and
 * parsed for what placement and GPUDirect RDMA need: the PCIe capability's
 * device/port type and the ACS extended capability's control register
 * (pciconf.c). The bytes are untrusted (a corrupt device, a hostile
 * fixture): every offset is checked against the length read and every
 * capability chain is walked a bounded number of steps, each offset once.
 */
#ifndef LN_AGENT_PCICONF_H
#define LN_AGENT_PCICONF_H

#include <stddef.h>
#include <stdint.h>

struct ln_agent;

/* The most bytes read of a config file: the PCIe extended space's end. */
#define LN_PCICONF_SIZE 4096

/* ACS control register bits (PCIe base spec, ACS extended capability). */
#define LN_ACS_REQ_REDIR 0x0004
#define LN_ACS_CMPLT_REDIR 0x0008
#define LN_ACS_EGRESS_CTRL 0x0020

struct ln_pciconf {
	int header_type;	/* byte 0x0e without the multi-function bit; -1: too short */
	int pcie_type;		/* the PCIe capability's device/port type (0-15); -1: none */
	int acs;		/* 1: an ACS extended capability (0x000D) is there */
	uint16_t acs_cap;	/* its capability register (cap+4) */
	uint16_t acs_ctrl;	/* its control register (cap+6) */
};

/* Read the node file at path (a sysfs `config`) into buf, at most
 * LN_PCICONF_SIZE bytes, its length into *len; 0 or -errno. */
int ln_pciconf_read(const struct ln_agent *a, const char *path, unsigned char *buf, size_t *len);

/* Parse len bytes of config space into out. Never reads past len; a
 * chain that loops or points out of range ends there. The extended list
 * (ACS) is read only when all 4096 bytes are there. */
void ln_pciconf_parse(const unsigned char *cfg, size_t len, struct ln_pciconf *out);

/* The bridge kind facts report for c: "root_port", "upstream",
 * "downstream", "pci_bridge" (PCIe-to-PCI, PCI-to-PCIe or a PCI-to-PCI
 * bridge without a PCIe capability) or "other". */
const char *ln_pciconf_kind(const struct ln_pciconf *c);

#endif
