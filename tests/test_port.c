/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Port strings (uxdp_dev_open): the parser's grammar and limits, the
 * parameter helpers drivers use, opening the in-tree kinds, and a kind
 * registered from outside. Every bad string gets -EINVAL (or ENODEV for an
 * unknown kind) and a message that says what is wrong.
 */
#include "t_helpers.h"

#include <errno.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_get_u64),
		cmocka_unit_test(test_open_builtin),
		cmocka_unit_test(test_register),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
