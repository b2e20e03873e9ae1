/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --plot DIR: collect sweep points, write gnuplot data and scripts, run
 * gnuplot on each script to get an SVG (plot.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "plot.h"

#define PLOT_MAX	16
#define PLOT_SERIES	8
#define PLOT_POINTS	256

struct plot_pt {
	unsigned int series;
	double x, y;
};

struct plot {
	char name[48];
	char title[128];
	char xlabel[64];
	char ylabel[64];
	char xtics[128];
	unsigned int flags;
	char series[PLOT_SERIES][64];
	unsigned int nseries;
	struct plot_pt pts[PLOT_POINTS];
	unsigned int npts;
};

static char *plot_dir;
static struct plot *plots[PLOT_MAX];
static unsigned int nplots;

int plot_init(const char *dir)
{
	char gnuplot[4096];

	if (!bench_exe_in_path("gnuplot", gnuplot, sizeof(gnuplot))) {
		fprintf(stderr, "uxdp-bench: --plot: gnuplot not found in "
			"PATH (Debian: apt-get install gnuplot-nox)\n");
		return -1;
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "uxdp-bench: --plot: cannot create %s: %s\n",
			dir, strerror(errno));
		return -1;
	}
	plot_dir = strdup(dir);
	if (!plot_dir) {
		fprintf(stderr, "uxdp-bench: --plot: %s\n", strerror(ENOMEM));
		return -1;
	}
	return 0;
}

bool plot_enabled(void)
{
	return plot_dir != NULL;
}

struct plot *plot_get(const char *name, const char *title,
		      const char *xlabel, const char *ylabel, unsigned int flags)
{
	struct plot *p;
	unsigned int i;

	if (!plot_dir)
		return NULL;
	for (i = 0; i < nplots; i++)
		if (!strcmp(plots[i]->name, name))
			return plots[i];
	if (nplots == PLOT_MAX || !(p = calloc(1, sizeof(*p)))) {
		fprintf(stderr, "uxdp-bench: --plot: no room for plot %s\n",
			name);
		return NULL;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->title, sizeof(p->title), "%s", title);
	snprintf(p->xlabel, sizeof(p->xlabel), "%s", xlabel);
	snprintf(p->ylabel, sizeof(p->ylabel), "%s", ylabel);
	p->flags = flags;
	plots[nplots++] = p;
	return p;
}

void plot_xtics(struct plot *p, const char *tics)
{
	if (p)
		snprintf(p->xtics, sizeof(p->xtics), "%s", tics);
}

void plot_point(struct plot *p, const char *series, double x, double y)
{
	unsigned int s;

	if (!p || isnan(y) || isnan(x) || p->npts == PLOT_POINTS)
		return;
	for (s = 0; s < p->nseries; s++)
		if (!strcmp(p->series[s], series))
			break;
	if (s == p->nseries) {
		if (s == PLOT_SERIES)
			return;
		snprintf(p->series[s], sizeof(p->series[s]), "%s", series);
		p->nseries++;
	}
	p->pts[p->npts++] = (struct plot_pt){ .series = s, .x = x, .y = y };
}

static int cmp_pt(const void *a, const void *b)
{
	const struct plot_pt *x = a, *y = b;

	if (x->series != y->series)
		return x->series < y->series ? -1 : 1;
	return (x->x > y->x) - (x->x < y->x);
}

/* A string for a gnuplot double-quoted literal: no quotes, no backslash. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fputc(*s == '"' || *s == '\\' ? '\'' : *s, f);
	fputc('"', f);
}

static int write_files(struct plot *p)
{
	char path[4096];
	unsigned int i, s;
	FILE *f;

	qsort(p->pts, p->npts, sizeof(p->pts[0]), cmp_pt);
	snprintf(path, sizeof(path), "%s/%s.dat", plot_dir, p->name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "# %s: x y, one block per series\n", p->title);
	for (s = 0; s < p->nseries; s++) {
		fprintf(f, "# series %u: %s\n", s, p->series[s]);
		for (i = 0; i < p->npts; i++)
			if (p->pts[i].series == s)
				fprintf(f, "%g %g\n", p->pts[i].x, p->pts[i].y);
		fprintf(f, "\n\n");
	}
	if (fclose(f))
		return -EIO;

	snprintf(path, sizeof(path), "%s/%s.gp", plot_dir, p->name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "# uxdp-bench --plot: gnuplot %s.gp writes %s.svg\n",
		p->name, p->name);
	fprintf(f, "set terminal svg size 640,400 font \"sans,11\"\n");
	fprintf(f, "set output \"%s.svg\"\n", p->name);
	fprintf(f, "set title ");
	put_quoted(f, p->title);
	fprintf(f, "\nset xlabel ");
	put_quoted(f, p->xlabel);
	fprintf(f, "\nset ylabel ");
	put_quoted(f, p->ylabel);
	fprintf(f, "\nset grid\nset key outside bottom center horizontal\n");
	if (p->flags & PLOT_LOGX)
		fprintf(f, "set logscale x 2\n");
	if (p->flags & PLOT_YZERO)
		fprintf(f, "set yrange [0:*]\n");
	if (p->xtics[0])
		fprintf(f, "set xtics %s\n", p->xtics);
	fprintf(f, "plot ");
	for (s = 0; s < p->nseries; s++) {
		fprintf(f, "%s\"%s.dat\" index %u using 1:2 with linespoints "
			"pointtype 7 title ", s ? ", \\\n     " : "", p->name,
			s);
		put_quoted(f, p->series[s]);
	}
	fprintf(f, "\n");
	if (fclose(f))
		return -EIO;
	return 0;
}

/* gnuplot NAME.gp in the plot directory; 0 if it exited 0 and wrote a
 * non-empty SVG. */
static int run_gnuplot(const struct plot *p)
{
	char script[64], svg[4096];
	struct stat st;
	int status;
	pid_t pid;

	snprintf(script, sizeof(script), "%s.gp", p->name);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (chdir(plot_dir))
			_exit(126);
		/* gnuplot's chatter would land in a --json document. */
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	snprintf(svg, sizeof(svg), "%s/%s.svg", plot_dir, p->name);
	if (stat(svg, &st) || !st.st_size)
		return -ENOENT;
	return 0;
}

unsigned int plot_render(bool quiet)
{
	unsigned int i, failed = 0;
	int err;

	for (i = 0; i < nplots; i++) {
		struct plot *p = plots[i];

		if (!p->npts)
			continue;
		err = write_files(p);
		if (!err)
			err = run_gnuplot(p);
		if (err) {
			fprintf(stderr, "uxdp-bench: --plot: %s/%s: %s\n",
				plot_dir, p->name, err == -ECHILD ?
				"gnuplot failed" : strerror(-err));
			failed++;
		} else if (!quiet) {
			fprintf(stderr, "uxdp-bench: plot %s/%s.svg\n",
				plot_dir, p->name);
		}
	}
	for (i = 0; i < nplots; i++)
		free(plots[i]);
	nplots = 0;
	return failed;
}
