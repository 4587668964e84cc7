#include "genl.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

static struct nlmsghdr *hdr(struct genl_msg *m) { return (struct nlmsghdr *)m->buf; }

void genl_msg_init(struct genl_msg *m, uint16_t family, uint8_t cmd)
{
	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	struct nlmsghdr *n = hdr(m);
	n->nlmsg_type = family;
	n->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	struct genlmsghdr *g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	g->cmd = cmd;
	g->version = 1;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->depth = 0;
}

void genl_put(struct genl_msg *m, uint16_t type, const void *data, size_t len)
{
	size_t total = NLA_HDRLEN + len;
	if (m->len + NLA_ALIGN(total) > sizeof(m->buf))
		return; /* the tests never build messages near 64 KiB */
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);
	a->nla_type = type;
	a->nla_len = (uint16_t)total;
	if (len)
		memcpy(m->buf + m->len + NLA_HDRLEN, data, len);
	memset(m->buf + m->len + total, 0, NLA_ALIGN(total) - total);
	m->len += NLA_ALIGN(total);
}

void genl_put_u8(struct genl_msg *m, uint16_t type, uint8_t v) { genl_put(m, type, &v, 1); }
void genl_put_u32(struct genl_msg *m, uint16_t type, uint32_t v) { genl_put(m, type, &v, 4); }
void genl_put_u64(struct genl_msg *m, uint16_t type, uint64_t v) { genl_put(m, type, &v, 8); }
void genl_put_str(struct genl_msg *m, uint16_t type, const char *s) { genl_put(m, type, s, strlen(s) + 1); }

void genl_nest_start(struct genl_msg *m, uint16_t type)
{
	m->nest[m->depth++] = m->len;
	genl_put(m, type | NLA_F_NESTED, NULL, 0);
}

void genl_nest_end(struct genl_msg *m)
{
	size_t at = m->nest[--m->depth];
	struct nlattr *a = (struct nlattr *)(m->buf + at);
	a->nla_len = (uint16_t)(m->len - at);
}

int nla_parse_into(const struct nlattr **tb, int max, const void *data, size_t len)
{
	memset(tb, 0, sizeof(*tb) * (size_t)(max + 1));
	const unsigned char *p = data;
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return -EINVAL;
		int type = a->nla_type & NLA_TYPE_MASK;
		if (type <= max)
			tb[type] = a;
		size_t step = NLA_ALIGN(a->nla_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

const void *nla_payload(const struct nlattr *a) { return (const unsigned char *)a + NLA_HDRLEN; }
size_t nla_payload_len(const struct nlattr *a) { return a->nla_len - NLA_HDRLEN; }

uint8_t nla_u8v(const struct nlattr *a)
{
	return nla_payload_len(a) >= 1 ? *(const uint8_t *)nla_payload(a) : 0;
}

uint32_t nla_u32v(const struct nlattr *a)
{
	uint32_t v = 0;
	if (nla_payload_len(a) >= 4)
		memcpy(&v, nla_payload(a), 4);
	return v;
}

uint64_t nla_u64v(const struct nlattr *a)
{
	uint64_t v = 0;
	if (nla_payload_len(a) >= 8)
		memcpy(&v, nla_payload(a), 8);
	else if (nla_payload_len(a) == 4)
		v = nla_u32v(a);
	return v;
}

const struct nlattr *nla_first(const struct nlattr *nest)
{
	if (nla_payload_len(nest) < NLA_HDRLEN)
		return NULL;
	const struct nlattr *c = nla_payload(nest);
	return c->nla_len >= NLA_HDRLEN && c->nla_len <= nla_payload_len(nest) ? c : NULL;
}

const struct nlattr *nla_next(const struct nlattr *nest, const struct nlattr *cur)
{
	const unsigned char *end = (const unsigned char *)nest + nest->nla_len;
	const unsigned char *n = (const unsigned char *)cur + NLA_ALIGN(cur->nla_len);
	if (n + NLA_HDRLEN > end)
		return NULL;
	const struct nlattr *c = (const struct nlattr *)n;
	return c->nla_len >= NLA_HDRLEN && n + c->nla_len <= end ? c : NULL;
}

static int send_msg(struct genl_sock *s, struct genl_msg *m)
{
	struct nlmsghdr *n = hdr(m);
	n->nlmsg_len = (uint32_t)m->len;
	n->nlmsg_seq = ++s->seq;
	/* write(2) names no destination, as a program writing to a file
	 * descriptor it was handed (its stdout) does. */
	if (s->use_write)
		return write(s->fd, m->buf, m->len) < 0 ? -errno : 0;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	if (sendto(s->fd, m->buf, m->len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

static void parse_error(struct genl_reply *r, const struct nlmsghdr *n)
{
	const struct nlmsgerr *e = NLMSG_DATA(n);
	r->error = e->error;
	if (!(n->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* With NETLINK_CAP_ACK the echoed request is only its header. */
	size_t off = NLMSG_HDRLEN + sizeof(*e);
	if (!(n->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (off >= n->nlmsg_len)
		return;
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	nla_parse_into(tb, NLMSGERR_ATTR_MAX, (const unsigned char *)n + off, n->nlmsg_len - off);
	if (tb[NLMSGERR_ATTR_MSG]) {
		size_t l = nla_payload_len(tb[NLMSGERR_ATTR_MSG]);
		if (l >= sizeof(r->extack))
			l = sizeof(r->extack) - 1;
		memcpy(r->extack, nla_payload(tb[NLMSGERR_ATTR_MSG]), l);
		r->extack[l] = 0;
	}
	if (tb[NLMSGERR_ATTR_OFFS])
		r->extack_offs = nla_u32v(tb[NLMSGERR_ATTR_OFFS]);
}

/* Reads until the ACK (or error) of our sequence number arrives. The one
 * data reply (a doit answer) is kept in r. */
static int recv_reply(struct genl_sock *s, struct genl_reply *r, uint32_t seq)
{
	unsigned char buf[GENL_BUF_SIZE];
	for (;;) {
		ssize_t got = recv(s->fd, buf, sizeof(buf), 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		size_t left = (size_t)got;
		for (struct nlmsghdr *n = (struct nlmsghdr *)buf; NLMSG_OK(n, left); n = NLMSG_NEXT(n, left)) {
			if (n->nlmsg_seq != seq)
				continue;
			if (n->nlmsg_type == NLMSG_ERROR) {
				parse_error(r, n);
				return 0;
			}
			if (n->nlmsg_type == NLMSG_DONE)
				return 0;
			if (!r->have_payload && n->nlmsg_len <= sizeof(r->buf)) {
				memcpy(r->buf, n, n->nlmsg_len);
				r->len = n->nlmsg_len;
				r->have_payload = 1;
				size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
				if (r->len > off)
					nla_parse_into(r->attr, 63, r->buf + off, r->len - off);
			}
		}
	}
}

int genl_transact(struct genl_sock *s, struct genl_msg *m, struct genl_reply *r)
{
	memset(r->attr, 0, sizeof(r->attr));
	r->len = 0;
	r->error = 0;
	r->extack[0] = 0;
	r->extack_offs = 0;
	r->have_payload = 0;
	int err = send_msg(s, m);
	if (err) {
		r->error = err;
		return err;
	}
	err = recv_reply(s, r, s->seq);
	if (err)
		r->error = err;
	return r->error;
}

int genl_dump(struct genl_sock *s, struct genl_msg *m, genl_dump_cb cb, void *arg, struct genl_reply *r)
{
	static unsigned char buf[GENL_BUF_SIZE];
	memset(r->attr, 0, sizeof(r->attr));
	r->len = 0;
	r->error = 0;
	r->extack[0] = 0;
	r->extack_offs = 0;
	r->have_payload = 0;
	hdr(m)->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	int err = send_msg(s, m);
	if (err)
		return r->error = err;
	uint32_t seq = s->seq;
	for (;;) {
		ssize_t got = recv(s->fd, buf, sizeof(buf), 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return r->error = -errno;
		}
		size_t left = (size_t)got;
		for (struct nlmsghdr *n = (struct nlmsghdr *)buf; NLMSG_OK(n, left); n = NLMSG_NEXT(n, left)) {
			if (n->nlmsg_seq != seq)
				continue;
			if (n->nlmsg_type == NLMSG_ERROR) {
				parse_error(r, n);
				return r->error;
			}
			if (n->nlmsg_type == NLMSG_DONE) {
				/* A dump's end may carry an error (and extack). */
				if (n->nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
					int e;
					memcpy(&e, NLMSG_DATA(n), sizeof(e));
					if (e < 0)
						r->error = e;
				}
				return r->error;
			}
			if (!r->error) {
				int e = cb(n, arg);
				if (e)
					r->error = e;	/* read on to the end of the dump */
			}
		}
	}
}

int genl_simple(struct genl_sock *s, uint8_t cmd, struct genl_reply *r)
{
	static struct genl_msg m;
	genl_msg_init(&m, s->family, cmd);
	return genl_transact(s, &m, r);
}

static int resolve_family(struct genl_sock *s, const char *name)
{
	static struct genl_msg m;
	static struct genl_reply r;
	genl_msg_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	genl_put_str(&m, CTRL_ATTR_FAMILY_NAME, name);
	int err = genl_transact(s, &m, &r);
	if (err)
		return err;
	if (!r.attr[CTRL_ATTR_FAMILY_ID])
		return -ENOENT;
	s->family = *(const uint16_t *)nla_payload(r.attr[CTRL_ATTR_FAMILY_ID]);
	return 0;
}

int genl_open(struct genl_sock *s, const char *family)
{
	s->family = 0;
	s->seq = 0;
	s->use_write = 0;
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0)
		return -errno;
	int one = 1;
	setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	if (bind(s->fd, (struct sockaddr *)&local, sizeof(local)) < 0) {
		int e = -errno;
		close(s->fd);
		s->fd = -1;
		return e;
	}
	if (family && *family) {
		int err = resolve_family(s, family);
		if (err) {
			close(s->fd);
			s->fd = -1;
			return err;
		}
	}
	return 0;
}

void genl_close(struct genl_sock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
