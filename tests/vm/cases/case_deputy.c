/* The netlink confused deputy: a socket opened by an unprivileged user and
 * handed to a privileged process (as its stdout, say) must not carry what
 * the privileged process writes to it (write(2): no destination address). The module checks the socket's opener
 * (netlink_capable), not only the writer: every command and the
 * GET_STATUS dump are refused with EPERM and an extack message, and
 * nothing changes. The same root process on a socket it opened itself is
 * served (the control). */
#define _GNU_SOURCE
#include "cases.h"
#include "common.h"

#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Child: drops to nobody with no capabilities, opens and binds a generic
 * netlink socket, resolves the family, sends the socket (and the family
 * id) to the parent over the unix socket. */
static void opener(int unix_fd)
{
	struct genl_sock s;
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(10);
	if (hw_open(&s))
		_exit(11);
	char cbuf[CMSG_SPACE(sizeof(int))];
	memset(cbuf, 0, sizeof(cbuf));
	struct iovec iov = { &s.family, sizeof(s.family) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &s.fd, sizeof(int));
	_exit(sendmsg(unix_fd, &mh, 0) < 0 ? 12 : 0);
}

static int received_socket(struct genl_sock *s)
{
	int sv[2];
	CHECK(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), "socketpair: %s", strerror(errno));
	pid_t pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(sv[0]);
		opener(sv[1]);
	}
	close(sv[1]);
	char cbuf[CMSG_SPACE(sizeof(int))];
	uint16_t family = 0;
	struct iovec iov = { &family, sizeof(family) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	ssize_t n = recvmsg(sv[0], &mh, 0);
	int st = 0;
	waitpid(pid, &st, 0);
	close(sv[0]);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the unprivileged opener failed (status %#x)", st);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	CHECK(n == sizeof(family) && c && c->cmsg_type == SCM_RIGHTS, "no socket received");
	memcpy(&s->fd, CMSG_DATA(c), sizeof(int));
	s->family = family;
	s->seq = 1000;
	/* The deputy writes, as to its stdout: no destination address. (A
	 * sender that names the kernel as destination, sendto(2), asks on its
	 * own behalf: netlink_capable() then checks the sender only.) */
	s->use_write = 1;
	return 0;
}

int case_deputy(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	static struct hw_status st;
	struct genl_sock s, own;
	struct hw_info in;

	CHECK(geteuid() == 0, "the case must run as root");
	CHECK_OK(hw_reload(), "loading hwsig.ko");
	if (received_socket(&s))
		return 1;
	CHECK(s.family != 0, "the opener did not resolve the family");

	/* Root writes; nobody opened. */
	int err = hw_get_info(&s, &in, &r);
	CHECK(err == -EPERM, "GET_INFO on nobody's socket: %s, want EPERM", strerror(-err));
	CHECK(strstr(r.extack, "opener"), "GET_INFO refused without the opener message: \"%s\"", r.extack);
	err = hw_configure(&s, 10000000, 64, hw_sw_events, 3, &r);
	CHECK(err == -EPERM, "CONFIGURE on nobody's socket: %s, want EPERM", strerror(-err));
	err = hw_start(&s, &r);
	CHECK(err == -EPERM, "START on nobody's socket: %s, want EPERM", strerror(-err));
	err = hw_stop(&s, &r);
	CHECK(err == -EPERM, "STOP on nobody's socket: %s, want EPERM", strerror(-err));
	err = hw_get_status(&s, &st, &r);
	CHECK(err == -EPERM, "GET_STATUS dump on nobody's socket: %s, want EPERM", strerror(-err));
	err = hw_get_status_doit(&s, &st, &r);
	CHECK(err == -EPERM, "GET_STATUS on nobody's socket: %s, want EPERM", strerror(-err));
	genl_close(&s);

	/* Nothing happened, and root's own socket is served. */
	CHECK_OK(hw_open(&own), "resolving the family as root");
	CHECK_OK(hw_get_info(&own, &in, &r), "GET_INFO on root's own socket");
	CHECK(in.config_generation == 0 && !in.running && in.ring_records == 0,
	      "the refused CONFIGURE/START changed the module: generation %llu running %u ring %u",
	      (unsigned long long)in.config_generation, in.running, in.ring_records);
	err = hw_configure(&own, 10000000, 64, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE on root's own socket: %s (\"%s\")", strerror(-err), r.extack);
	CHECK_OK(hw_get_status(&own, &st, &r), "GET_STATUS dump on root's own socket");
	genl_close(&own);
	vm_note("nobody's socket written by root: GET_INFO, CONFIGURE, START, STOP, GET_STATUS (dump and doit) all EPERM");
	return 0;
}
