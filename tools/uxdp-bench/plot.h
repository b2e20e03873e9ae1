/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench --plot DIR: sweeps drawn as SVG with gnuplot.
 *
 * A command adds points (series, x, y) to named plots while it reports;
 * after the command main.c calls plot_render(), which writes, per plot,
 * DIR/NAME.dat (one data block per series), DIR/NAME.gp (the gnuplot
 * script, runnable by hand) and DIR/NAME.svg (gnuplot's output). Without
 * --plot every call here is a no-op, so commands need not check.
 */
#ifndef UXDP_BENCH_PLOT_H
#define UXDP_BENCH_PLOT_H

#include <stdbool.h>

#define PLOT_LOGX	(1U << 0)	/* x axis log2 */
#define PLOT_YZERO	(1U << 1)	/* y axis from 0 */

struct plot;

/*
 * Plots go to @dir (created if missing, one level). Fails (-1, having said
 * why on stderr) when gnuplot is not in $PATH or @dir cannot be made.
 */
int plot_init(const char *dir);

bool plot_enabled(void);

/*
 * The plot @name (a file name stem), created on first use with its title,
 * axis labels and PLOT_* flags; later calls return the same plot. NULL when
 * plotting is off (or on ENOMEM, said on stderr); plot_point(NULL, ...) is
 * a no-op.
 */
struct plot *plot_get(const char *name, const char *title,
		      const char *xlabel, const char *ylabel, unsigned int flags);

/* Optional custom x tics, gnuplot syntax: ("single" 0.5, 1, 8, 64). */
void plot_xtics(struct plot *p, const char *tics);

/* A point of @series (a line of its own, in order of first use). NaN y:
 * skipped. */
void plot_point(struct plot *p, const char *series, double x, double y);

/*
 * Write and render every plot that has points, naming each SVG on stderr
 * unless @quiet. Returns the number that failed (each said on stderr), 0
 * when all rendered or plotting is off.
 */
unsigned int plot_render(bool quiet);

#endif /* UXDP_BENCH_PLOT_H */
