/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How the tools stop: SIGINT, SIGTERM and SIGHUP read from a signalfd by
 * the main thread, never delivered to a handler.
 */
#ifndef UXDP_TOOLS_SIGNALS_H
#define UXDP_TOOLS_SIGNALS_H

/*
 * Block SIGINT, SIGTERM and SIGHUP in the calling thread (call it before
 * any thread exists: they inherit the mask, so only the signalfd ever
 * takes these signals), give them a handler that never runs (so they are
 * ours also when a shell started the tool in the background with SIGINT
 * ignored), ignore SIGPIPE (a reader gone is a write error to report and
 * a clean teardown, not death with ports or sockets attached), and return
 * a non-blocking signalfd for the three, or -errno.
 */
int tool_signals_open(void);

#endif /* UXDP_TOOLS_SIGNALS_H */
