/* Netlink fuzzer, as root: for every command of the family (and two
 * numbers past the last), NR_MSGS messages each (VMTEST_FUZZ_MSGS), half random attribute
 * streams (random types, lengths, nesting, payloads; sometimes as a dump
 * request) and half mutations of a valid CONFIGURE (bytes flipped, an
 * attribute length changed, truncated, attributes duplicated). Every
 * message must be answered (an ACK, an error or a reply) within the
 * socket's timeout. Afterwards the module still configures, samples and
 * reports, and unloads; the guest's init fails the case on any kernel
 * complaint in the log. The generator is seeded, so a failure repeats. */
#include "cases.h"
#include "common.h"

#include <linux/genetlink.h>
#include <linux/perf_event.h>
#include <sys/socket.h>
#include <sys/time.h>

enum { NR_MSGS = 10000 };

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* Random attributes into m, depth-limited nests. */
static void random_attrs(struct genl_msg *m, int depth)
{
	int n = (int)(rnd() % 6);
	for (int i = 0; i < n && m->len < 2048; i++) {
		uint16_t type = (uint16_t)(rnd() % 40);
		unsigned kind = rnd() % 8;
		if (kind == 0 && depth < 3) {
			genl_nest_start(m, type);
			random_attrs(m, depth + 1);
			genl_nest_end(m);
		} else if (kind == 1) {
			genl_put_u32(m, type, rnd());
		} else if (kind == 2) {
			genl_put_u64(m, type, ((uint64_t)rnd() << 32) | rnd());
		} else if (kind == 3) {
			char s[80];
			size_t l = rnd() % sizeof(s);
			for (size_t k = 0; k < l; k++)
				s[k] = (char)(rnd() % 2 ? 'a' + rnd() % 26 : rnd());
			genl_put(m, type, s, l);
		} else {
			unsigned char b[24];
			size_t l = rnd() % sizeof(b);
			for (size_t k = 0; k < l; k++)
				b[k] = (unsigned char)rnd();
			genl_put(m, type, b, l);
		}
	}
}

static void valid_configure(struct genl_msg *m, uint16_t family)
{
	static const uint64_t cfgs[] = { PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK,
					 PERF_COUNT_SW_CONTEXT_SWITCHES };
	genl_msg_init(m, family, HWSIG_CMD_CONFIGURE);
	genl_put_u64(m, HWSIG_ATTR_SAMPLE_INTERVAL_NS, 10000000);
	genl_put_u32(m, HWSIG_ATTR_RING_RECORDS, 64);
	genl_nest_start(m, HWSIG_ATTR_EVENTS);
	for (int i = 0; i < 3; i++) {
		genl_nest_start(m, HWSIG_ATTR_EVENT);
		genl_put_str(m, HWSIG_EVENT_ATTR_NAME, "ev");
		genl_put_u32(m, HWSIG_EVENT_ATTR_PMU_TYPE, PERF_TYPE_SOFTWARE);
		genl_put_u64(m, HWSIG_EVENT_ATTR_CONFIG, cfgs[i]);
		genl_put_u32(m, HWSIG_EVENT_ATTR_CPU, (uint32_t)HWSIG_EVENT_ALL_CPUS);
		genl_nest_end(m);
	}
	genl_nest_end(m);
}

/* Mutates the attributes of m (past the headers) in place. */
static void mutate(struct genl_msg *m)
{
	size_t hdr = NLMSG_HDRLEN + GENL_HDRLEN;
	int n = 1 + (int)(rnd() % 4);
	for (int i = 0; i < n && m->len > hdr; i++) {
		size_t at = hdr + rnd() % (m->len - hdr);
		switch (rnd() % 5) {
		case 0: /* flip a byte */
			m->buf[at] ^= (unsigned char)(1u << (rnd() % 8));
			break;
		case 1: /* a random byte */
			m->buf[at] = (unsigned char)rnd();
			break;
		case 2: /* truncate (the kernel sees a shorter message) */
			m->len = at;
			break;
		case 3: { /* an attribute length word: small random value */
			size_t a = hdr + ((at - hdr) & ~(size_t)3);
			uint16_t v = (uint16_t)(rnd() % 64);
			if (a + 2 <= m->len)
				memcpy(m->buf + a, &v, 2);
			break;
		}
		default: /* duplicate the tail */
			if (m->len + (m->len - at) < 4096) {
				memmove(m->buf + m->len, m->buf + at, m->len - at);
				m->len += m->len - at;
			}
			break;
		}
	}
}

/* Sends m as it is (with NLM_F_DUMP sometimes), reads until the answer. */
static int send_raw(struct genl_sock *s, struct genl_msg *m, int dump)
{
	static unsigned char buf[GENL_BUF_SIZE];
	struct nlmsghdr *n = (struct nlmsghdr *)m->buf;
	n->nlmsg_len = (uint32_t)m->len;
	n->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	n->nlmsg_seq = ++s->seq;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	if (sendto(s->fd, m->buf, m->len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	for (;;) {
		ssize_t got = recv(s->fd, buf, sizeof(buf), 0);
		if (got < 0)
			return errno == EINTR ? 0 : -errno;
		size_t left = (size_t)got;
		for (struct nlmsghdr *r = (struct nlmsghdr *)buf; NLMSG_OK(r, left); r = NLMSG_NEXT(r, left))
			if (r->nlmsg_seq == s->seq && (r->nlmsg_type == NLMSG_ERROR || r->nlmsg_type == NLMSG_DONE))
				return 0;
	}
}

int case_fuzz(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_msg m;
	static struct genl_reply r;
	struct genl_sock s;
	static const uint8_t cmds[] = { HWSIG_CMD_UNSPEC, HWSIG_CMD_GET_INFO, HWSIG_CMD_CONFIGURE, HWSIG_CMD_START,
					HWSIG_CMD_STOP, HWSIG_CMD_GET_STATUS, HWSIG_CMD_MAX + 1, 200 };

	CHECK_OK(hw_reload(), "loading hwsig.ko");
	CHECK_OK(hw_open(&s), "resolving the family");
	struct timeval tv = { 5, 0 };
	setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	const int nr_msgs = (int)env_count("VMTEST_FUZZ_MSGS", NR_MSGS);
	uint64_t t0 = now_ns();
	long sent = 0;
	for (size_t c = 0; c < sizeof(cmds); c++) {
		for (int i = 0; i < nr_msgs; i++) {
			if (i % 2) {
				valid_configure(&m, s.family);
				((struct genlmsghdr *)(m.buf + NLMSG_HDRLEN))->cmd = cmds[c];
				mutate(&m);
			} else {
				genl_msg_init(&m, s.family, cmds[c]);
				random_attrs(&m, 0);
			}
			int e = send_raw(&s, &m, rnd() % 8 == 0);
			CHECK(e != -EAGAIN && e != -EWOULDBLOCK, "command %u message %d: no answer within 5 s", cmds[c], i);
			CHECK(!e, "command %u message %d: %s", cmds[c], i, strerror(-e));
			sent++;
		}
	}
	vm_note("%ld fuzzed messages (%d per command number) answered in %.1f s", sent, nr_msgs,
		(double)(now_ns() - t0) / 1e9);

	/* Still works. */
	hw_stop(&s, &r);
	int err = hw_configure(&s, 10000000, 64, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE after fuzzing: %s \"%s\"", strerror(-err), r.extack);
	CHECK_OK(hw_start(&s, &r), "START after fuzzing");
	struct hw_map map;
	CHECK_OK(hw_map_open(&map), "mapping after fuzzing");
	uint64_t h = hw_head(&map, 0);
	sleep_ms(100);
	CHECK(hw_head(&map, 0) > h, "no sampling after fuzzing");
	static struct hw_status st;
	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS after fuzzing");
	CHECK(st.nr_entries >= 3 && st.running, "GET_STATUS after fuzzing: %d entries, running %u", st.nr_entries,
	      st.running);
	hw_map_close(&map);
	genl_close(&s);
	CHECK_OK(hw_stop_and_unload(), "unloading after fuzzing");
	CHECK(!mod_loaded("hwsig"), "hwsig still loaded");
	CHECK_OK(mod_load(HWSIG_KO, ""), "loading again");
	return 0;
}
