/* Raw generic netlink for the guest tests: no libnl, so the static test
 * binaries need nothing but the kernel. */
#ifndef VMTEST_GENL_H
#define VMTEST_GENL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>

#define GENL_BUF_SIZE 65536

/* A message under construction: nlmsghdr + genlmsghdr + attributes. */
struct genl_msg {
	unsigned char buf[GENL_BUF_SIZE];
	size_t len;
	size_t nest[8];
	int depth;
};

struct genl_sock {
	int fd;
	uint16_t family;
	uint32_t seq;
	int use_write;		/* send with write(2), no destination address */
};

/* A parsed reply: every attribute of the top level, by type. */
struct genl_reply {
	unsigned char buf[GENL_BUF_SIZE];
	size_t len;
	const struct nlattr *attr[64];
	int error;		/* 0 or -errno from the ACK/error message */
	char extack[512];	/* NLMSGERR_ATTR_MSG, "" if none */
	uint32_t extack_offs;	/* NLMSGERR_ATTR_OFFS, 0 if none */
	int have_payload;
};

/* 0 or -errno; family "" leaves family 0 (unresolved). */
int genl_open(struct genl_sock *s, const char *family);
void genl_close(struct genl_sock *s);

void genl_msg_init(struct genl_msg *m, uint16_t family, uint8_t cmd);
void genl_put(struct genl_msg *m, uint16_t type, const void *data, size_t len);
void genl_put_u8(struct genl_msg *m, uint16_t type, uint8_t v);
void genl_put_u32(struct genl_msg *m, uint16_t type, uint32_t v);
void genl_put_u64(struct genl_msg *m, uint16_t type, uint64_t v);
void genl_put_str(struct genl_msg *m, uint16_t type, const char *s);
void genl_nest_start(struct genl_msg *m, uint16_t type);
void genl_nest_end(struct genl_msg *m);

/* Sends m, collects the reply (if any) and the ACK. Returns r->error. */
int genl_transact(struct genl_sock *s, struct genl_msg *m, struct genl_reply *r);
/* Sends m as a dump request (NLM_F_DUMP) and calls cb for every message of
 * the dump (cb's non-zero return is remembered and returned at the end).
 * Returns 0 or the first -errno (the kernel's, in r with its extack, or cb's). */
typedef int (*genl_dump_cb)(const struct nlmsghdr *n, void *arg);
int genl_dump(struct genl_sock *s, struct genl_msg *m, genl_dump_cb cb, void *arg, struct genl_reply *r);
/* A command with no attributes. */
int genl_simple(struct genl_sock *s, uint8_t cmd, struct genl_reply *r);

/* Attribute access. */
int nla_parse_into(const struct nlattr **tb, int max, const void *data, size_t len);
uint32_t nla_u32v(const struct nlattr *a);
uint64_t nla_u64v(const struct nlattr *a);
uint8_t nla_u8v(const struct nlattr *a);
const void *nla_payload(const struct nlattr *a);
size_t nla_payload_len(const struct nlattr *a);
/* Iterates the children of a nest: for (c = nla_first(n); c; c = nla_next(n, c)) */
const struct nlattr *nla_first(const struct nlattr *nest);
const struct nlattr *nla_next(const struct nlattr *nest, const struct nlattr *cur);

#endif
