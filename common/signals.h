/* SPDX-License-Identifier: MIT */
/* Signal set-up both binaries share: their handlers only raise a flag. */
#ifndef LN_SIGNALS_H
#define LN_SIGNALS_H

/*
 * Run on() for signals a and b (without SA_RESTART: a blocked read or poll
 * returns, so the flag is seen) and ignore SIGPIPE, so that a peer closing
 * its end is an error on the write, never the end of the process.
 */
void ln_signals_catch(void (*on)(int), int a, int b);

#endif
