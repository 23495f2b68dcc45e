/* SPDX-License-Identifier: MIT */
/* Signal set-up both binaries share (see signals.h). */
#include <signal.h>
#include <string.h>

#include "common/signals.h"

void ln_signals_catch(void (*on)(int), int a, int b)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on;
	sigemptyset(&sa.sa_mask);
	sigaction(a, &sa, NULL);
	sigaction(b, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
