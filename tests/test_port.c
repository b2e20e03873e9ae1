/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Port strings (uxdp_dev_open): the parser's grammar and limits, the
 * parameter helpers drivers use, opening the in-tree kinds, and a kind
 * registered from outside. Every bad string gets -EINVAL (or ENODEV for an
 * unknown kind) and a message that says what is wrong.
 *
 * uxdp_port_check: for every kind, good and bad strings; a check opens,
 * creates and registers nothing (no device, no capture file); and check
 * and open agree on every string of the table: what check refuses open
 * refuses with the same errno and text, what check passes open opens or
 * fails for a reason only opening can find (a missing file or interface).
 */
#include "t_helpers.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uxdp/driver.h>
#include <uxdp/uxdp.h>

static void test_parse_ok(void **state)
{
	struct uxdp_port p;

	(void)state;
	assert_int_equal(uxdp_port_parse("null:gen0", &p), 0);
	assert_string_equal(p.kind, "null");
	assert_string_equal(p.arg, "gen0");
	assert_int_equal(p.nparams, 0);

	assert_int_equal(uxdp_port_parse("afxdp:eth0@0-3,copy,busy_poll=64,"
					 "mode=", &p), 0);
	assert_string_equal(p.kind, "afxdp");
	assert_string_equal(p.arg, "eth0@0-3");
	assert_int_equal(p.nparams, 3);
	assert_string_equal(uxdp_port_get(&p, "copy"), "");
	assert_true(uxdp_port_get_flag(&p, "copy"));
	assert_string_equal(uxdp_port_get(&p, "busy_poll"), "64");
	assert_string_equal(uxdp_port_get(&p, "mode"), "");
	assert_null(uxdp_port_get(&p, "absent"));
	assert_false(uxdp_port_get_flag(&p, "absent"));

	/* An empty argument and values with '=' and ':' in them. */
	assert_int_equal(uxdp_port_parse("pcap:,out=a=b:c", &p), 0);
	assert_string_equal(p.arg, "");
	assert_string_equal(uxdp_port_get(&p, "out"), "a=b:c");
	assert_int_equal(uxdp_port_parse("pcap:/tmp/x:y.pcap", &p), 0);
	assert_string_equal(p.arg, "/tmp/x:y.pcap");
}

static void t_bad(const char *str, const char *why)
{
	struct uxdp_port p;

	if (uxdp_port_parse(str, &p) != -EINVAL)
		fail_msg("'%s' accepted", str);
	if (!strstr(uxdp_errmsg(), why))
		fail_msg("'%s': message '%s' lacks '%s'", str, uxdp_errmsg(),
			 why);
}

static void test_parse_errors(void **state)
{
	char big[UXDP_PORT_STR_MAX + 8], buf[600];
	unsigned int i;

	(void)state;
	t_bad("", "want KIND:ARG");
	t_bad("nocolon", "want KIND:ARG");
	t_bad(":x", "want KIND:ARG");
	t_bad("Null:x", "has 'N'");
	t_bad("nu ll:x", "has ' '");
	t_bad("null:x,", "empty parameter");
	t_bad("null:x,,a", "empty parameter");
	t_bad("null:x,=v", "without a key");
	t_bad("null:x,a=1,a=2", "'a' given twice");
	t_bad("averyveryverylongkind:x", "the kind longer than");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	t_bad(big, "longer than 511");
	/* The argument, a key and a value each have a limit. */
	snprintf(buf, sizeof(buf), "null:%0300d", 0);
	t_bad(buf, "the argument longer than 255");
	snprintf(buf, sizeof(buf), "null:x,%040d=1", 0);
	t_bad(buf, "a key longer than 31");
	snprintf(buf, sizeof(buf), "null:x,k=%0300d", 0);
	t_bad(buf, "a value longer than 255");
	strcpy(buf, "null:x");
	for (i = 0; i < UXDP_PORT_PARAMS_MAX + 1; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 ",k%u", i);
	t_bad(buf, "more than 16 parameters");
	assert_int_equal(uxdp_port_parse(NULL, NULL), -EINVAL);
}

static void test_get_u64(void **state)
{
	static const char *const keys[] = { "n", "m", NULL };
	struct uxdp_port p;
	uint64_t v;

	(void)state;
	assert_int_equal(uxdp_port_parse("x:y,n=3k,m=2M", &p), 0);
	assert_int_equal(uxdp_port_get_u64(&p, "n", 0, 0, 10000, &v), 0);
	assert_int_equal(v, 3000);
	assert_int_equal(uxdp_port_get_u64(&p, "m", 0, 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, 2000000);
	assert_int_equal(uxdp_port_get_u64(&p, "z", 7, 0, 10, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(uxdp_port_get_u64(&p, "m", 0, 0, 1000, &v), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "[0, 1000]"));
	assert_int_equal(uxdp_port_check_keys(&p, keys), 0);
	assert_int_equal(uxdp_port_parse("x:y,n=1x,o=-1,p=,q=99999999999999999"
					 "999", &p), 0);
	assert_int_equal(uxdp_port_get_u64(&p, "n", 0, 0, 9, &v), -EINVAL);
	assert_int_equal(uxdp_port_get_u64(&p, "o", 0, 0, 9, &v), -EINVAL);
	assert_int_equal(uxdp_port_get_u64(&p, "p", 0, 0, 9, &v), -EINVAL);
	assert_int_equal(uxdp_port_get_u64(&p, "q", 0, 0, UINT64_MAX, &v),
			 -EINVAL);
	assert_int_equal(uxdp_port_check_keys(&p, keys), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "unknown parameter 'o'"));
}

static uint64_t t_drops;

static uint32_t t_drop(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	t_drops++;
	return UXDP_DROP;
}

static void test_open_builtin(void **state)
{
	struct uxdp_prog *prog = uxdp_prog_create("d", t_drop, NULL);
	struct uxdp_dev *g, *a, *b;
	char kinds[128];

	(void)state;
	uxdp_port_kinds(kinds, sizeof(kinds));
	assert_non_null(strstr(kinds, "null"));
	assert_non_null(strstr(kinds, "veth"));
	assert_non_null(uxdp_port_usage("null"));
	assert_null(uxdp_port_usage("nosuch"));

	g = uxdp_dev_open("null:pg0,count=100,len=128,seq", NULL);
	if (!g)
		fail_msg("%s", uxdp_errmsg());
	assert_string_equal(uxdp_dev_name(g), "pg0");
	assert_string_equal(uxdp_dev_kind(g), "null");
	assert_int_equal(uxdp_dev_attach_prog(g, 0, prog), 0);
	assert_int_equal(uxdp_dev_up(g), 0);
	while (uxdp_dev_poll(g, 0, 64) > 0)
		;
	assert_int_equal(t_drops, 100);
	uxdp_dev_destroy(g);

	/* A named device overrides the argument. */
	g = uxdp_dev_open("null:ignored,sink", "pg1");
	assert_non_null(g);
	assert_string_equal(uxdp_dev_name(g), "pg1");
	assert_null(uxdp_dev_pool(g, 0));	/* a sink has no pool */

	a = uxdp_dev_open("veth:pva,peer=pvb,ring=64", NULL);
	assert_non_null(a);
	b = uxdp_dev_open("veth:pvb", NULL);	/* the existing end */
	assert_ptr_equal(b, uxdp_veth_peer(a));
	assert_null(uxdp_dev_open("veth:pg1", NULL));	/* a null device */
	assert_int_equal(errno, EEXIST);
	assert_non_null(strstr(uxdp_errmsg(), "a null device"));

	assert_null(uxdp_dev_open("nosuch:x", NULL));
	assert_int_equal(errno, ENODEV);
	assert_non_null(strstr(uxdp_errmsg(), "no driver of kind 'nosuch'"));
	assert_non_null(strstr(uxdp_errmsg(), "veth"));
	assert_null(uxdp_dev_open("null:pg2,count=abc", NULL));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "count=abc"));
	assert_null(uxdp_dev_open("null:pg2,colour=red", NULL));
	assert_non_null(strstr(uxdp_errmsg(), "unknown parameter 'colour'"));
	assert_null(uxdp_dev_open("veth:pv_with_a_long_name", NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_dev_get_by_name("pg2"));
	uxdp_dev_destroy(g);
	uxdp_dev_destroy(a);
	uxdp_dev_destroy(b);
	uxdp_prog_put(prog);
}

/* A kind registered by an application or an out-of-tree driver. */
static struct uxdp_dev *t_open_mine(const struct uxdp_port *port,
				    const char *name)
{
	(void)name;
	return uxdp_dev_open("null:mine0,sink", port->arg[0] ? port->arg :
			     NULL);
}

static const struct uxdp_port_driver t_mine = {
	.kind = "mine",
	.usage = "mine:NAME  a test kind",
	.open = t_open_mine,
};

static void test_register(void **state)
{
	static const struct uxdp_port_driver bad = { .kind = "x" };
	struct uxdp_dev *d;
	char kinds[128];

	(void)state;
	assert_int_equal(uxdp_port_register(&t_mine), 0);
	assert_int_equal(uxdp_port_register(&t_mine), -EEXIST);
	assert_int_equal(uxdp_port_register(&bad), -EINVAL);
	assert_int_equal(uxdp_port_register(NULL), -EINVAL);
	uxdp_port_kinds(kinds, sizeof(kinds));
	assert_non_null(strstr(kinds, "mine"));
	assert_string_equal(uxdp_port_usage("mine"), t_mine.usage);
	d = uxdp_dev_open("mine:mine1", NULL);
	assert_non_null(d);
	assert_string_equal(uxdp_dev_name(d), "mine1");
	uxdp_dev_destroy(d);
	/* Cut, not overrun. */
	uxdp_port_kinds(kinds, 6);
	assert_int_equal(strlen(kinds), 5);
}

/* ---- uxdp_port_check --------------------------------------------------------- */

/*
 * A port string, what uxdp_port_check() says of it (0 or -errno, and a
 * piece of its message), and what uxdp_dev_open(str, NULL) then does:
 * open 0 opens it; else the errno the open fails with, a piece of its
 * message, after a check that passed. "%s" in a string is a temporary
 * directory; @made is the device the open makes (none before it).
 */
struct t_row {
	const char *str;
	int check;
	const char *why;
	int open;
	const char *open_why;
	const char *made;
};

#define T_OK(s, made)			{ s, 0, NULL, 0, NULL, made }
#define T_BAD(s, why)			{ s, -EINVAL, why, 0, NULL, NULL }
#define T_AT_OPEN(s, e, why)		{ s, 0, NULL, e, why, NULL }

static const struct t_row t_null_rows[] = {
	T_OK("null:tpn0", "tpn0"),
	T_OK("null:tpn1,count=10,len=128,pps=1k,frames=64,seq,rewrite",
	     "tpn1"),
	T_OK("null:tpn2,sink", "tpn2"),
	T_OK("null:tpn3,len=50,seq", "tpn3"),
	T_BAD("null:", "no NAME"),
	T_BAD("null:tpn_name_too_long", "longer than a device name"),
	T_BAD("null:tpn9,bogus=1", "unknown parameter 'bogus'"),
	T_BAD("null:tpn9,len=3", "len=3"),
	T_BAD("null:tpn9,len=2000", "len=2000"),
	T_BAD("null:tpn9,len=20,seq", "seq needs len=50"),
	T_BAD("null:tpn9,count=abc", "count=abc"),
	T_BAD("null:tpn9,frames=0", "frames=0"),
	T_BAD("null:tpn9,pps=2G", "pps=2G"),
};

static const struct t_row t_veth_rows[] = {
	T_OK("veth:tpv0", "tpv0"),
	T_OK("veth:tpv1,peer=tpv2,queues=2,ring=64,mtu=9000", "tpv1"),
	T_BAD("veth:", "no NAME"),
	T_BAD("veth:tpv9,ring=3", "ring_size 3: a power of two"),
	T_BAD("veth:tpv9,ring=0", "ring=0"),
	T_BAD("veth:tpv9,queues=0", "queues=0"),
	T_BAD("veth:tpv9,queues=300", "queues=300"),
	T_BAD("veth:tpv9,mtu=10", "mtu=10"),
	T_BAD("veth:tpv9,peer=", "no peer"),
	T_BAD("veth:tpv9,peer=tpv9", "two names"),
	T_BAD("veth:tpv9,peer=averyveryverylongname", "peer 'averyvery"),
	T_BAD("veth:tpv9,colour=red", "unknown parameter 'colour'"),
	/* Only making the pair needs NAME + "p": an existing end of this
	 * name would open. */
	T_AT_OPEN("veth:tpv456789012345", EINVAL, "too long to make its peer"),
};

static const struct t_row t_nic_rows[] = {
	T_OK("nic:tpc0", "tpc0"),
	T_OK("nic:tpc1,queues=2,ring=64,txring=64,threshold=16,frames=256,"
	     "flows=4,len=128,count=10,pps=1k,fifo=64,single_alloc", "tpc1"),
	T_OK("nic:tpc2,nogen", "tpc2"),
	T_BAD("nic:", "no NAME"),
	T_BAD("nic:tpc9,loop=", "no loop"),
	T_BAD("nic:tpc9,loop=tpc9", "looped to itself"),
	T_BAD("nic:tpc9,ring=100", "rx_ring 100: a power of two"),
	T_BAD("nic:tpc9,ring=64,threshold=40", "refill_threshold 40"),
	T_BAD("nic:tpc9,queues=0", "queues=0"),
	T_BAD("nic:tpc9,fifo=100", "wire_fifo 100: a power of two"),
	T_BAD("nic:tpc9,frames=1", "frames 1"),
	T_BAD("nic:tpc9,flows=0", "flows=0"),
	T_BAD("nic:tpc9,nosuch", "unknown parameter 'nosuch'"),
	/* Whether the other nic is there is known when opening only. */
	T_AT_OPEN("nic:tpc3,loop=tpcabsent", ENODEV, "no nic of that name"),
};

static const struct t_row t_pcap_rows[] = {
	T_OK("pcap:,out=%s/tp-out.pcap", "pcap0"),
	T_OK("pcap:,out=%s/tp-out.pcap,snaplen=128,frames=8", "pcap0"),
	T_BAD("pcap:", "give a file to replay (pcap:FILE) or to write"),
	T_BAD("pcap:,out=", "out= needs a file name"),
	T_BAD("pcap:%s/in.pcap,loop=y", "loop=y"),
	T_BAD("pcap:%s/in.pcap,snaplen=0", "snaplen=0"),
	T_BAD("pcap:%s/in.pcap,frames=0", "frames=0"),
	T_BAD("pcap:%s/in.pcap,pps=abc", "pps=abc"),
	T_BAD("pcap:%s/in.pcap,colour=red", "unknown parameter 'colour'"),
	/* A missing replay file: said at open, with how to capture. */
	T_AT_OPEN("pcap:%s/missing.pcap", ENOENT,
		  "to capture, use pcap:,out=FILE"),
	T_AT_OPEN("pcap:%s/missing.pcap,loop=forever,pps=10", ENOENT,
		  "No such file"),
	T_AT_OPEN("pcap:,out=%s/no/such/dir.pcap", ENOENT, "No such file"),
};

/* An interface that is not there: every string fails before anything is
 * made, at the latest when the interface is looked up. */
#define T_NOIF	"uxdptpnoif0"
static const struct t_row t_afxdp_rows[] = {
	T_AT_OPEN("afxdp:" T_NOIF, ENODEV, "no such interface"),
	T_AT_OPEN("afxdp:" T_NOIF "@0-3,copy,mode=native,busy_poll=64,"
		  "rx_size=1024,tx_size=1024,frames=4096,chunk=2048,"
		  "shared=tpg,group_frames=8192", ENODEV, "no such interface"),
	T_AT_OPEN("afxdp:" T_NOIF "@63,zerocopy,mode=skb", ENODEV,
		  "no such interface"),
	T_BAD("afxdp:", "an interface name of 1..15"),
	T_BAD("afxdp:@1", "an interface name of 1..15"),
	T_BAD("afxdp:averyveryverylongifname", "an interface name of 1..15"),
	T_BAD("afxdp:" T_NOIF "@x", "queues are @Q or @Q1-Q2"),
	T_BAD("afxdp:" T_NOIF "@1-", "queues are @Q or @Q1-Q2"),
	T_BAD("afxdp:" T_NOIF "@3-1", "queues are @Q or @Q1-Q2"),
	T_BAD("afxdp:" T_NOIF "@0-64", "65 queues: at most 64"),
	T_BAD("afxdp:" T_NOIF "@16777215", "out of range"),
	T_BAD("afxdp:" T_NOIF ",bogus=1", "unknown parameter 'bogus'"),
	T_BAD("afxdp:" T_NOIF ",copy,zerocopy", "copy and zerocopy"),
	T_BAD("afxdp:" T_NOIF ",mode=x", "mode=x"),
	T_BAD("afxdp:" T_NOIF ",rx_size=100", "rx_size=100: a power of two"),
	T_BAD("afxdp:" T_NOIF ",tx_size=32", "tx_size=32"),
	T_BAD("afxdp:" T_NOIF ",chunk=3000", "chunk=3000: 2048 or 4096"),
	T_BAD("afxdp:" T_NOIF ",frames=1", "frames=1"),
	T_BAD("afxdp:" T_NOIF ",busy_poll=0", "busy_poll=0"),
	T_BAD("afxdp:" T_NOIF ",shared=", "shared=: a group name"),
	T_BAD("afxdp:" T_NOIF ",shared=a_group_name_longer_than_31_chars",
	      "shared=: a group name"),
};

static const struct t_row t_other_rows[] = {
	{ "tpnosuch:x", -ENODEV, "no driver of kind 'tpnosuch'", 0, NULL,
	  NULL },
	T_BAD("null:x,", "empty parameter"),
	T_BAD("nocolon", "want KIND:ARG"),
};

static char t_dir[64];

/* How many devices are registered (ifindexes are slots: 1..1024). */
static unsigned int t_ndevs(void)
{
	unsigned int i, n = 0;

	for (i = 1; i <= 1024; i++)
		n += uxdp_dev_get_by_index(i) != NULL;
	return n;
}

/* Files in the temporary directory: a check writes none. */
static unsigned int t_nfiles(void)
{
	DIR *d = opendir(t_dir);
	unsigned int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* An afxdp open of a missing interface: ENODEV as root, else EPERM (the
 * sockets are refused first). */
static int t_open_errno(const struct t_row *r)
{
	if (r->open == ENODEV && !strncmp(r->str, "afxdp:", 6) && geteuid())
		return EPERM;
	return r->open;
}

static void t_rows(const struct t_row *rows, size_t n)
{
	char str[256], msg[512];
	struct uxdp_dev *dev;
	unsigned int devs, files;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		const struct t_row *r = &rows[i];

		snprintf(str, sizeof(str), r->str, t_dir);
		devs = t_ndevs();
		files = t_nfiles();
		uxdp_set_error(EIO, "stale");
		rc = uxdp_port_check(str);
		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		if (rc != r->check)
			fail_msg("check '%s': %d (%s), want %d", str, rc, msg,
				 r->check);
		if (r->check && !strstr(msg, r->why))
			fail_msg("check '%s': '%s' lacks '%s'", str, msg,
				 r->why);
		if (!r->check && msg[0])
			fail_msg("check '%s' passed, saying '%s'", str, msg);
		/* No side effects: nothing registered, no file written. */
		if (t_ndevs() != devs)
			fail_msg("check '%s' registered a device", str);
		if (r->made && uxdp_dev_get_by_name(r->made))
			fail_msg("check '%s' made %s", str, r->made);
		if (t_nfiles() != files)
			fail_msg("check '%s' wrote a file", str);

		errno = 0;
		dev = uxdp_dev_open(str, NULL);
		if (r->check) {
			/* Refused the same way, as early. */
			if (dev)
				fail_msg("open '%s': opened what check "
					 "refused", str);
			if (errno != -r->check)
				fail_msg("open '%s': errno %d, check said %d",
					 str, errno, -r->check);
			if (strcmp(uxdp_errmsg(), msg))
				fail_msg("open '%s': '%s', check said '%s'",
					 str, uxdp_errmsg(), msg);
			if (t_ndevs() != devs || t_nfiles() != files)
				fail_msg("open '%s' left something", str);
			continue;
		}
		if (!r->open) {
			if (!dev)
				fail_msg("open '%s' (check passed): %s", str,
					 uxdp_errmsg());
			if (r->made)
				assert_string_equal(uxdp_dev_name(dev),
						    r->made);
			if (!strcmp(uxdp_dev_kind(dev), "veth"))
				uxdp_dev_destroy(uxdp_veth_peer(dev));
			uxdp_dev_destroy(dev);
		} else {
			if (dev)
				fail_msg("open '%s' opened", str);
			if (errno != t_open_errno(r))
				fail_msg("open '%s': errno %d (%s), want %d",
					 str, errno, uxdp_errmsg(),
					 t_open_errno(r));
			if (errno == r->open && !strstr(uxdp_errmsg(),
							r->open_why))
				fail_msg("open '%s': '%s' lacks '%s'", str,
					 uxdp_errmsg(), r->open_why);
		}
		assert_int_equal(t_ndevs(), devs);
	}
}

static int t_dir_setup(void **state)
{
	(void)state;
	snprintf(t_dir, sizeof(t_dir), "/tmp/uxdp-test-port-%d", getpid());
	return mkdir(t_dir, 0700);
}

static int t_dir_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", t_dir);
	return system(cmd);
}

#define T_ROWS(rows)	t_rows(rows, sizeof(rows) / sizeof(rows[0]))

static void test_check_null(void **state)
{
	(void)state;
	T_ROWS(t_null_rows);
}

static void test_check_veth(void **state)
{
	(void)state;
	T_ROWS(t_veth_rows);
}

static void test_check_nic(void **state)
{
	(void)state;
	T_ROWS(t_nic_rows);
}

static void test_check_pcap(void **state)
{
	char path[256], msg[512];
	struct uxdp_dev *dev;

	(void)state;
	if (!uxdp_port_usage("pcap")) {
		/* Built without libpcap: no such kind, said the same way. */
		assert_int_equal(uxdp_port_check("pcap:,out=x"), -ENODEV);
		skip();
	}
	T_ROWS(t_pcap_rows);
	/* The capture file the check did not write, the open did. */
	snprintf(path, sizeof(path), "pcap:,out=%s/tp-made.pcap", t_dir);
	assert_int_equal(uxdp_port_check(path), 0);
	snprintf(path, sizeof(path), "%s/tp-made.pcap", t_dir);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "pcap:,out=%s/tp-made.pcap", t_dir);
	dev = uxdp_dev_open(path, NULL);
	assert_non_null(dev);
	uxdp_dev_destroy(dev);
	snprintf(path, sizeof(path), "%s/tp-made.pcap", t_dir);
	assert_int_equal(access(path, F_OK), 0);
	/* Replaying a file that is not there: the hint names the way to
	 * capture; with out= given it would be beside the point. */
	snprintf(path, sizeof(path), "pcap:%s/out.pcap", t_dir);
	assert_null(uxdp_dev_open(path, NULL));
	assert_int_equal(errno, ENOENT);
	snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
	assert_non_null(strstr(msg, "out.pcap: No such file or directory"));
	assert_non_null(strstr(msg, "pcap:FILE replays FILE; to capture, use "
			       "pcap:,out=FILE"));
	snprintf(path, sizeof(path), "pcap:%s/out.pcap,out=%s/o.pcap", t_dir,
		 t_dir);
	assert_null(uxdp_dev_open(path, NULL));
	assert_int_equal(errno, ENOENT);
	assert_null(strstr(uxdp_errmsg(), "to capture"));
}

static void test_check_afxdp(void **state)
{
	(void)state;
	if (!uxdp_port_usage("afxdp")) {
		assert_int_equal(uxdp_port_check("afxdp:lo"), -ENODEV);
		skip();
	}
	T_ROWS(t_afxdp_rows);
}

static void test_check_other(void **state)
{
	(void)state;
	T_ROWS(t_other_rows);
	assert_int_equal(uxdp_port_check(NULL), -EINVAL);
}

/* Kinds from outside: one with a check op, one without (parse only). */
static unsigned int t_checked;

static int t_check_strict(const struct uxdp_port *port)
{
	t_checked++;
	if (strcmp(port->arg, "good"))
		return uxdp_set_error(EINVAL, "strict: '%s' is not good",
				      port->arg);
	return uxdp_port_check_keys(port, NULL);
}

static struct uxdp_dev *t_open_none(const struct uxdp_port *port,
				    const char *name)
{
	(void)port;
	(void)name;
	errno = -uxdp_set_error(ENOTSUP, "none: opens nothing");
	return NULL;
}

static const struct uxdp_port_driver t_strict = {
	.kind = "tpstrict",
	.usage = "tpstrict:good  a test kind with a check",
	.open = t_open_none,
	.check = t_check_strict,
};

static const struct uxdp_port_driver t_lax = {
	.kind = "tplax",
	.usage = "tplax:ANY  a test kind without a check",
	.open = t_open_none,
};

static void test_check_registered(void **state)
{
	(void)state;
	assert_int_equal(uxdp_port_register(&t_strict), 0);
	assert_int_equal(uxdp_port_register(&t_lax), 0);
	assert_int_equal(uxdp_port_check("tpstrict:good"), 0);
	assert_int_equal(t_checked, 1);
	assert_int_equal(uxdp_port_check("tpstrict:bad"), -EINVAL);
	assert_string_equal(uxdp_errmsg(), "strict: 'bad' is not good");
	assert_int_equal(uxdp_port_check("tpstrict:good,k=1"), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "unknown parameter 'k'"));
	assert_int_equal(t_checked, 3);
	/* Without a check op: the string only has to parse. */
	assert_int_equal(uxdp_port_check("tplax:anything,k=v,flag"), 0);
	assert_int_equal(uxdp_port_check("tplax:x,,"), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "empty parameter"));
}

static void test_check_name(void **state)
{
	struct uxdp_port p;

	(void)state;
	assert_int_equal(uxdp_port_parse("k:a", &p), 0);
	assert_int_equal(uxdp_port_check_name(&p, "NAME", "a"), 0);
	assert_int_equal(uxdp_port_check_name(&p, "NAME",
					      "fifteen_chars_x"), 0);
	assert_int_equal(uxdp_port_check_name(&p, "NAME",
					      "sixteen_chars_xx"), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "port k:a: NAME "
			       "'sixteen_chars_xx' is longer"));
	assert_int_equal(uxdp_port_check_name(&p, "peer", ""), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "no peer"));
	assert_int_equal(uxdp_port_check_name(&p, "peer", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_get_u64),
		cmocka_unit_test(test_open_builtin),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_check_null),
		cmocka_unit_test(test_check_veth),
		cmocka_unit_test(test_check_nic),
		cmocka_unit_test(test_check_pcap),
		cmocka_unit_test(test_check_afxdp),
		cmocka_unit_test(test_check_other),
		cmocka_unit_test(test_check_registered),
		cmocka_unit_test(test_check_name),
	};

	return cmocka_run_group_tests(tests, t_dir_setup, t_dir_teardown);
}
