// SPDX-License-Identifier: GPL-2.0
/*
 * vhost-driver: a minimal userspace virtio-net "guest" for /dev/vhost-net,
 * the ground truth of the vhost kernel tests. It owns both virtqueues of one
 * vhost-net device whose backend is a tap, drives them in exactly known
 * patterns and waits after every action until the vhost worker has handled it
 * and gone back to sleep, so that every wake-up of the worker (and on 6.1
 * every handle_tx/handle_rx invocation) is individually accounted for.
 *
 *   vhost-driver [-name guest=NAME] [--ring N] [--viommu] [--verbose] PATTERN...
 *
 * See tests/vm/vhost/README for the interface and the ground truth of each
 * pattern.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <linux/vhost.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#define PROG			"vhost-driver"
#define COMM			"qemu-system-x86"	/* 15 chars: the whole comm */

#define VQ_RX			0	/* vhost-net queue indexes */
#define VQ_TX			1

#define PAGE_SZ			4096u
#define VRING_LEGACY_ALIGN	4096u	/* legacy layout: used ring page aligned */
#define RX_BUF_SIZE		2048u
#define TX_BUF_SIZE		128u
#define FRAME_LEN		64u	/* ethernet frame, no FCS */
#define VNET_HDR_LEN		sizeof(struct virtio_net_hdr)	/* 10 */
#define ETHERTYPE_TEST		0x88b5	/* IEEE 802 local experimental 1 */

/*
 * vhost_exceeds_weight(): after VHOST_NET_PKT_WEIGHT (256) packets in one
 * call, handle_tx/handle_rx requeue themselves and the worker runs them again
 * WITHOUT sleeping in between: one wake-up, two invocations. Stay below it.
 */
#define VHOST_NET_PKT_WEIGHT	256u
#define MAX_PER_CALL		(VHOST_NET_PKT_WEIGHT - 1)

#define WAIT_LIMIT_NS		(10ull * 1000000000ull)	/* per action */
#define POLL_NS			200000ull	/* 200 us between worker reads */
#define SETTLE_NS		50000000ull	/* 50 ms: no late extra wake-up */

enum pattern_kind { P_TX, P_RXSTALL, P_RXFILL };

struct pattern {
	enum pattern_kind kind;
	unsigned int a, b;	/* tx: B, K; rxstall: Q, T; rxfill: N, - */
	const char *text;
};

struct vq {
	unsigned int index;
	const char *name;
	unsigned int num;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint8_t *bufs;		/* num buffers of buf_size, one per ring slot */
	unsigned int buf_size;
	uint16_t avail_idx;	/* our shadow of avail->idx */
	uint16_t used_seen;	/* used entries we have already checked */
	int kick, call, err;	/* eventfds */
};

struct worker_sample {
	unsigned long nvcsw;
	char state;
};

struct driver {
	pid_t pid;
	pid_t worker;
	char worker_path[64];
	int tap;
	int vhost;
	int pkt;		/* AF_PACKET socket that injects into the tap */
	int ifindex;
	char ifname[IFNAMSIZ];
	uint8_t *area;
	size_t area_size;
	/*
	 * --viommu: the device acks VIRTIO_F_ACCESS_PLATFORM and every ring and
	 * buffer address it is given is an IOVA, translated by the IOTLB we
	 * load: IOVA = user address + iova_shift. The IOVAs of the rings are
	 * themselves user addresses of a decoy copy of the area (0xab bytes):
	 * a reader that took vq->avail for a user address would read idx
	 * 0xabab there instead of failing.
	 */
	bool viommu;
	size_t iova_shift;
	unsigned int ring;
	struct vq vq[2];
	/* What the RX side looks like now (checked against the kernel). */
	unsigned int rx_pending;	/* injected, not yet received */
	uint32_t tx_seq;		/* next TX frame sequence number */
	uint32_t inject_seq;		/* next injected frame */
	uint32_t rx_seq;		/* next frame expected in an RX buffer */
	bool verbose;
};

/* ---- errors ---- */

/* "vhost-driver: <message>[: <strerror(err)>]" and exit with status. */
static void __attribute__((noreturn))
vdie(int status, int err, const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
	exit(status);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(1, 0, fmt, ap);
}

/* "vhost-driver: <what was being done>: <strerror(errno)>" and exit 1. */
static void __attribute__((noreturn, format(printf, 1, 2)))
fail_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vdie(1, e, fmt, ap);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: " PROG " [-name guest=NAME] [--ring N] [--viommu] [--verbose] PATTERN...\n"
	      "  PATTERN: tx:BATCHES:DEPTH | rxstall:INJECTED:KICKS | rxfill:BUFFERS\n",
	      stderr);
	exit(2);
}

static void __attribute__((format(printf, 2, 3)))
debug(const struct driver *d, const char *fmt, ...)
{
	va_list ap;

	if (!d->verbose)
		return;
	fputs(PROG ": debug: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- small helpers ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static bool parse_uint(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return false;
	*out = (unsigned int)v;
	return true;
}

/* Writes a short string to a procfs/sysfs file; false if it does not exist. */
static bool write_knob(const char *path, const char *value)
{
	size_t len = strlen(value);
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return false;
		fail_errno("opening %s", path);
	}
	if (write(fd, value, len) != (ssize_t)len)
		fail_errno("writing %s to %s", value, path);
	close(fd);
	return true;
}

static unsigned long read_ulong_file(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail_errno("opening %s", path);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		fail_errno("reading %s", path);
	close(fd);
	buf[n] = '\0';
	return strtoul(buf, NULL, 10);
}

/* ---- the vhost worker, seen from /proc ---- */

static bool comm_is(const char *path, const char *want)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;	/* the task went away meanwhile */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strcmp(buf, want) == 0;
}

/* Numeric entries of dir whose comm is want: count, and the last one. */
static int scan_comm(const char *dir, const char *want, pid_t *found)
{
	char path[300];
	struct dirent *e;
	int n = 0;
	DIR *dp = opendir(dir);

	if (!dp)
		fail_errno("listing %s", dir);
	while ((e = readdir(dp))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, e->d_name);
		if (comm_is(path, want)) {
			*found = (pid_t)atoi(e->d_name);
			n++;
		}
	}
	closedir(dp);
	return n;
}

/*
 * The worker is named "vhost-<pid of the VHOST_SET_OWNER caller>": on 6.1 a
 * kthread (kthread_create in vhost_dev_set_owner); from 6.4 a vhost_task, a
 * thread of this process. Look in our own threads first, then everywhere.
 */
static void find_worker(struct driver *d)
{
	char want[32];
	int n;

	snprintf(want, sizeof(want), "vhost-%d", (int)d->pid);
	n = scan_comm("/proc/self/task", want, &d->worker);
	if (n == 0)
		n = scan_comm("/proc", want, &d->worker);
	if (n == 0)
		fail("finding the vhost worker after VHOST_SET_OWNER: no task named %s", want);
	if (n > 1)
		fail("finding the vhost worker after VHOST_SET_OWNER: %d tasks named %s", n, want);
	snprintf(d->worker_path, sizeof(d->worker_path), "/proc/%d/status", (int)d->worker);
}

static struct worker_sample sample_worker(const struct driver *d)
{
	struct worker_sample s = { 0, '?' };
	bool have_state = false, have_nvcsw = false;
	char buf[4096], *line, *save = NULL;
	ssize_t n;
	int fd = open(d->worker_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail_errno("opening %s (the vhost worker)", d->worker_path);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		fail_errno("reading %s", d->worker_path);
	close(fd);
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "State:", 6)) {
			const char *p = line + 6;

			while (*p == ' ' || *p == '\t')
				p++;
			s.state = *p;
			have_state = true;
		} else if (!strncmp(line, "voluntary_ctxt_switches:", 24)) {
			s.nvcsw = strtoul(line + 24, NULL, 10);
			have_nvcsw = true;
		}
	}
	if (!have_state || !have_nvcsw)
		fail("parsing %s: no State or voluntary_ctxt_switches line", d->worker_path);
	return s;
}

/* ---- the rings ---- */

static uint16_t used_idx(const struct vq *vq)
{
	/*
	 * Pairs with the smp_wmb() in vhost's __vhost_add_used_n() between
	 * writing the used elements and storing used->idx: the elements below
	 * the index we load are complete.
	 */
	return __atomic_load_n(&vq->used->idx, __ATOMIC_ACQUIRE);
}

static void publish_avail(struct vq *vq, unsigned int count)
{
	vq->avail_idx = (uint16_t)(vq->avail_idx + count);
	/*
	 * Descriptors and avail->ring[] entries before the index: pairs with
	 * the smp_rmb() in vhost_get_vq_desc() after it reads avail->idx.
	 */
	__atomic_store_n(&vq->avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
}

static void kick(const struct vq *vq)
{
	uint64_t one = 1;

	/* The eventfd write is a full barrier: avail->idx is visible first. */
	if (write(vq->kick, &one, sizeof(one)) != sizeof(one))
		fail_errno("kicking the %s queue (eventfd write)", vq->name);
}

/* A vq_err() in vhost signals the queue's error eventfd. */
static void check_vq_errors(const struct driver *d)
{
	for (int i = 0; i < 2; i++) {
		uint64_t v;
		ssize_t n = read(d->vq[i].err, &v, sizeof(v));

		if (n == sizeof(v))
			fail("vhost reported %llu error(s) on the %s queue (vq_err: see the kernel log)",
			     (unsigned long long)v, d->vq[i].name);
		if (n < 0 && errno != EAGAIN)
			fail_errno("reading the %s queue's error eventfd", d->vq[i].name);
	}
}

/* Drains a call eventfd (we never wait on it; keep it from growing). */
static void drain_call(const struct vq *vq)
{
	uint64_t v;

	if (read(vq->call, &v, sizeof(v)) < 0 && errno != EAGAIN)
		fail_errno("reading the %s queue's call eventfd", vq->name);
}

/* ---- waiting for the worker ---- */

/*
 * After an action that wakes the worker once: poll until it has been through
 * one more voluntary context switch (it went back to sleep: on 6.1
 * vhost_worker() only sleeps when its work list is empty), is sleeping ('S'),
 * and the used ring shows `want_used` entries (if vq). Then stay a while and
 * make sure it does not wake again. Returns the number of wake-ups seen,
 * which must be 1.
 */
static unsigned long wait_handled(struct driver *d, unsigned long before,
				  const struct vq *vq, uint16_t want_used,
				  const char *what)
{
	uint64_t deadline = now_ns() + WAIT_LIMIT_NS;
	struct worker_sample s;
	uint16_t u = 0;

	for (;;) {
		s = sample_worker(d);
		if (vq) {
			u = used_idx(vq);
			if ((uint16_t)(u - vq->used_seen) > (uint16_t)(want_used - vq->used_seen))
				fail("%s: the %s used ring went to %u, expected %u",
				     what, vq->name, u, want_used);
		}
		if (s.nvcsw > before && s.state == 'S' && (!vq || u == want_used))
			break;
		if (now_ns() > deadline)
			fail("%s: timed out after %llu s waiting for the worker (voluntary_ctxt_switches %lu -> %lu, state %c%s%u%s%u)",
			     what, WAIT_LIMIT_NS / 1000000000ull, before, s.nvcsw, s.state,
			     vq ? ", used idx " : "", vq ? u : 0,
			     vq ? " of " : "", vq ? want_used : 0);
		sleep_ns(POLL_NS);
	}
	sleep_ns(SETTLE_NS);
	{
		struct worker_sample t = sample_worker(d);

		if (t.nvcsw != s.nvcsw)
			fail("%s: unexpected extra wake-up of the worker (voluntary_ctxt_switches %lu -> %lu -> %lu)",
			     what, before, s.nvcsw, t.nvcsw);
		if (vq && used_idx(vq) != want_used)
			fail("%s: the %s used ring moved to %u after the worker went idle at %u",
			     what, vq->name, used_idx(vq), want_used);
	}
	if (s.nvcsw - before != 1)
		fail("%s: the worker woke %lu times for one action (voluntary_ctxt_switches %lu -> %lu)",
		     what, s.nvcsw - before, before, s.nvcsw);
	check_vq_errors(d);
	return s.nvcsw - before;
}

/* After an action that must not wake the worker. */
static void expect_no_wakeup(struct driver *d, unsigned long before, const char *what)
{
	struct worker_sample s;

	sleep_ns(SETTLE_NS);
	s = sample_worker(d);
	if (s.nvcsw != before)
		fail("%s: the worker woke up (voluntary_ctxt_switches %lu -> %lu), expected it to stay asleep",
		     what, before, s.nvcsw);
	check_vq_errors(d);
}

/* Worker asleep and quiet for SETTLE_NS: the starting point of a measurement. */
static unsigned long wait_quiet(struct driver *d, const char *what)
{
	uint64_t deadline = now_ns() + WAIT_LIMIT_NS;
	struct worker_sample a, b;

	for (;;) {
		a = sample_worker(d);
		if (a.state == 'S') {
			sleep_ns(SETTLE_NS);
			b = sample_worker(d);
			if (b.state == 'S' && b.nvcsw == a.nvcsw)
				return b.nvcsw;
		}
		if (now_ns() > deadline)
			fail("%s: the worker did not settle within %llu s (state %c, voluntary_ctxt_switches %lu)",
			     what, WAIT_LIMIT_NS / 1000000000ull, a.state, a.nvcsw);
		sleep_ns(POLL_NS);
	}
}

/* ---- frames ---- */

/* Broadcast, locally administered source, test ethertype, tag, sequence. */
static void build_frame(uint8_t *f, pid_t pid, char dir, uint32_t seq)
{
	uint32_t be = htonl(seq);

	memset(f, 0, FRAME_LEN);
	memset(f, 0xff, 6);
	f[6] = 0x02;
	f[7] = 'h';
	f[8] = (uint8_t)(pid >> 24);
	f[9] = (uint8_t)(pid >> 16);
	f[10] = (uint8_t)(pid >> 8);
	f[11] = (uint8_t)pid;
	f[12] = ETHERTYPE_TEST >> 8;
	f[13] = ETHERTYPE_TEST & 0xff;
	memcpy(f + 14, "hwsig-vhd", 9);
	f[23] = (uint8_t)dir;
	memcpy(f + 24, &be, sizeof(be));
	for (unsigned int i = 28; i < FRAME_LEN; i++)
		f[i] = (uint8_t)(seq * 7 + i);
}

/* ---- setup ---- */

static void setup_tap(struct driver *d, unsigned int need_queue)
{
	struct ifreq ifr;
	char path[128];
	int hdr_sz = 0;
	unsigned long qlen;

	/*
	 * No IPv6 on the tap: no router solicitation, MLD or DAD packets that
	 * the kernel would send out of it on its own (into our RX queue).
	 * Without IPv6 in the kernel there is nothing to switch off.
	 */
	write_knob("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");

	d->tap = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (d->tap < 0)
		fail_errno("opening /dev/net/tun");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "vhd%d", (int)d->pid);
	/*
	 * IFF_VNET_HDR: vhost-net has no header-less mode. With no
	 * VHOST_NET_F_VIRTIO_NET_HDR the socket (the tap) must produce and
	 * consume the 10-byte struct virtio_net_hdr (vhost_net_set_features:
	 * sock_hlen = hdr_len), exactly as QEMU configures a tap.
	 */
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	if (ioctl(d->tap, TUNSETIFF, &ifr))
		fail_errno("creating tap %s (TUNSETIFF)", ifr.ifr_name);
	memcpy(d->ifname, ifr.ifr_name, IFNAMSIZ);
	d->ifname[IFNAMSIZ - 1] = '\0';
	if (ioctl(d->tap, TUNGETVNETHDRSZ, &hdr_sz))
		fail_errno("reading the vnet header size of %s (TUNGETVNETHDRSZ)", d->ifname);
	if (hdr_sz != (int)VNET_HDR_LEN)
		fail("tap %s has a %d-byte vnet header, expected %zu", d->ifname, hdr_sz, VNET_HDR_LEN);

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", d->ifname);
	write_knob(path, "1");

	d->ifindex = (int)if_nametoindex(d->ifname);
	if (!d->ifindex)
		fail_errno("looking up the ifindex of %s", d->ifname);

	snprintf(path, sizeof(path), "/sys/class/net/%s/tx_queue_len", d->ifname);
	qlen = read_ulong_file(path);
	if (qlen < need_queue)
		fail("tap %s: tx_queue_len %lu (tun's ring) cannot hold the %u packets a pattern leaves pending",
		     d->ifname, qlen, need_queue);

	/* The injector: raw frames straight to tun_net_xmit (no qdisc). */
	d->pkt = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (d->pkt < 0)
		fail_errno("creating an AF_PACKET socket");
	{
		struct sockaddr_ll sll = {
			.sll_family = AF_PACKET,
			.sll_protocol = 0,	/* send only: never receives */
			.sll_ifindex = d->ifindex,
		};
		int one = 1;

		if (bind(d->pkt, (struct sockaddr *)&sll, sizeof(sll)))
			fail_errno("binding the AF_PACKET socket to %s", d->ifname);
		if (setsockopt(d->pkt, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)))
			fail_errno("setting PACKET_QDISC_BYPASS on the AF_PACKET socket");
	}

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, d->ifname, IFNAMSIZ);
	if (ioctl(d->pkt, SIOCGIFFLAGS, &ifr))
		fail_errno("reading the flags of %s (SIOCGIFFLAGS)", d->ifname);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(d->pkt, SIOCSIFFLAGS, &ifr))
		fail_errno("bringing %s up (SIOCSIFFLAGS)", d->ifname);
}

/*
 * One anonymous mapping: for each queue the legacy vring (descriptor table,
 * avail ring, used ring on the next 4096 boundary) then its buffers. It is
 * the only memory region, with guest physical address == user address.
 */
static void setup_memory(struct driver *d)
{
	size_t off = 0, ring_off[2], buf_off[2];
	unsigned int num = d->ring;

	for (int i = 0; i < 2; i++) {
		struct vq *vq = &d->vq[i];
		size_t desc_avail = 16u * num + 2u * (3u + num);

		vq->index = (unsigned int)i;
		vq->name = i == VQ_RX ? "RX" : "TX";
		vq->num = num;
		vq->buf_size = i == VQ_RX ? RX_BUF_SIZE : TX_BUF_SIZE;
		ring_off[i] = off;
		off += align_up(desc_avail, VRING_LEGACY_ALIGN);
		off += align_up(2u * 3u + 8u * num, PAGE_SZ);
		buf_off[i] = off;
		off += align_up((size_t)num * vq->buf_size, PAGE_SZ);
	}
	d->area_size = off;
	d->iova_shift = d->viommu ? off : 0;
	d->area = mmap(NULL, d->area_size + d->iova_shift, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (d->area == MAP_FAILED)
		fail_errno("mapping %zu bytes for the rings and buffers", d->area_size);
	/*
	 * Resident and locked: the worker copies from and to it with our mm;
	 * a page fault there could sleep and count as an extra context switch.
	 */
	if (mlock(d->area, d->area_size))
		fail_errno("locking %zu bytes of rings and buffers (mlock)", d->area_size);
	memset(d->area, 0, d->area_size);
	memset(d->area + d->area_size, 0xab, d->iova_shift); /* the decoy */

	for (int i = 0; i < 2; i++) {
		struct vq *vq = &d->vq[i];
		uint8_t *base = d->area + ring_off[i];

		vq->desc = (struct vring_desc *)base;
		vq->avail = (struct vring_avail *)(base + 16u * num);
		vq->used = (struct vring_used *)(base +
			align_up(16u * num + 2u * (3u + num), VRING_LEGACY_ALIGN));
		vq->bufs = d->area + buf_off[i];
		/* Descriptor i always describes buffer i; only len varies. */
		for (unsigned int s = 0; s < num; s++) {
			vq->desc[s].addr = (uint64_t)(uintptr_t)(vq->bufs + (size_t)s * vq->buf_size) +
					   d->iova_shift;
			vq->desc[s].len = vq->buf_size;
			vq->desc[s].flags = i == VQ_RX ? VRING_DESC_F_WRITE : 0;
			vq->desc[s].next = 0;
		}
	}
}

static int new_eventfd(const char *what, const char *queue)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	if (fd < 0)
		fail_errno("creating the %s queue's %s eventfd", queue, what);
	return fd;
}

static void vhost_ioctl(const struct driver *d, unsigned long req, void *arg,
			const char *what, const char *queue)
{
	if (ioctl(d->vhost, req, arg)) {
		if (queue)
			fail_errno("%s for the %s queue", what, queue);
		fail_errno("%s", what);
	}
}

/* Backend of one queue; returns the worker wake-ups it caused. */
static unsigned long set_backend(struct driver *d, unsigned int index, int fd,
				 unsigned long expect)
{
	struct vhost_vring_file f = { .index = index, .fd = fd };
	char what[96];
	unsigned long before = wait_quiet(d, "before VHOST_NET_SET_BACKEND");

	snprintf(what, sizeof(what), "VHOST_NET_SET_BACKEND %s queue -> %s",
		 d->vq[index].name, fd < 0 ? "none" : d->ifname);
	vhost_ioctl(d, VHOST_NET_SET_BACKEND, &f, "VHOST_NET_SET_BACKEND", d->vq[index].name);
	if (expect) {
		/* TX at start: tun is writable, handle_tx runs and finds nothing. */
		wait_handled(d, before, &d->vq[index], d->vq[index].used_seen, what);
	} else {
		expect_no_wakeup(d, before, what);
	}
	debug(d, "%s: %lu wake-up(s)", what, expect);
	return expect;
}

static void setup_vhost(struct driver *d)
{
	uint64_t features = 0;
	struct vhost_memory *mem;

	d->vhost = open("/dev/vhost-net", O_RDWR | O_CLOEXEC);
	if (d->vhost < 0)
		fail_errno("opening /dev/vhost-net");
	vhost_ioctl(d, VHOST_SET_OWNER, NULL, "VHOST_SET_OWNER", NULL);
	find_worker(d);
	debug(d, "worker %d (%s)", (int)d->worker, d->worker_path);

	vhost_ioctl(d, VHOST_GET_FEATURES, &features, "VHOST_GET_FEATURES", NULL);
	debug(d, "vhost-net offers features %#llx", (unsigned long long)features);
	/*
	 * None: legacy split rings, native endian, no EVENT_IDX (every kick is
	 * a kick, every used update a call), no MRG_RXBUF (one buffer per
	 * packet), no VHOST_NET_F_VIRTIO_NET_HDR (the tap adds the header).
	 */
	features = d->viommu ? 1ull << VIRTIO_F_ACCESS_PLATFORM : 0;
	vhost_ioctl(d, VHOST_SET_FEATURES, &features, "VHOST_SET_FEATURES", NULL);
	if (d->viommu) {
		/*
		 * ACCESS_PLATFORM made vhost create the device IOTLB
		 * (vhost_init_device_iotlb: vq->iotlb for every queue): load
		 * it with the whole area at its IOVAs, before any ring is
		 * touched, so that no access misses.
		 */
		struct vhost_msg msg;

		memset(&msg, 0, sizeof(msg));
		msg.type = VHOST_IOTLB_MSG;
		msg.iotlb.iova = (uint64_t)(uintptr_t)d->area + d->iova_shift;
		msg.iotlb.size = d->area_size;
		msg.iotlb.uaddr = (uint64_t)(uintptr_t)d->area;
		msg.iotlb.perm = VHOST_ACCESS_RW;
		msg.iotlb.type = VHOST_IOTLB_UPDATE;
		if (write(d->vhost, &msg, sizeof(msg)) != (ssize_t)sizeof(msg))
			fail_errno("loading the device IOTLB (VHOST_IOTLB_UPDATE)");
	}

	mem = calloc(1, sizeof(*mem) + sizeof(mem->regions[0]));
	if (!mem)
		fail_errno("allocating the vhost memory table");
	mem->nregions = 1;
	mem->regions[0].guest_phys_addr = (uint64_t)(uintptr_t)d->area;
	mem->regions[0].memory_size = d->area_size;
	mem->regions[0].userspace_addr = (uint64_t)(uintptr_t)d->area;
	vhost_ioctl(d, VHOST_SET_MEM_TABLE, mem, "VHOST_SET_MEM_TABLE", NULL);
	free(mem);

	for (unsigned int i = 0; i < 2; i++) {
		struct vq *vq = &d->vq[i];
		struct vhost_vring_state st = { .index = i, .num = vq->num };
		struct vhost_vring_addr addr = {
			.index = i,
			.flags = 0,
			.desc_user_addr = (uint64_t)(uintptr_t)vq->desc + d->iova_shift,
			.used_user_addr = (uint64_t)(uintptr_t)vq->used + d->iova_shift,
			.avail_user_addr = (uint64_t)(uintptr_t)vq->avail + d->iova_shift,
			.log_guest_addr = 0,
		};
		struct vhost_vring_file f = { .index = i };

		vhost_ioctl(d, VHOST_SET_VRING_NUM, &st, "VHOST_SET_VRING_NUM", vq->name);
		vhost_ioctl(d, VHOST_SET_VRING_ADDR, &addr, "VHOST_SET_VRING_ADDR", vq->name);
		st.num = 0;
		vhost_ioctl(d, VHOST_SET_VRING_BASE, &st, "VHOST_SET_VRING_BASE 0", vq->name);
		/* No busy polling: a handler run is exactly one wake-up. */
		st.num = 0;
		vhost_ioctl(d, VHOST_SET_VRING_BUSYLOOP_TIMEOUT, &st,
			    "VHOST_SET_VRING_BUSYLOOP_TIMEOUT 0", vq->name);
		vq->kick = new_eventfd("kick", vq->name);
		vq->call = new_eventfd("call", vq->name);
		vq->err = new_eventfd("error", vq->name);
		f.fd = vq->kick;
		vhost_ioctl(d, VHOST_SET_VRING_KICK, &f, "VHOST_SET_VRING_KICK", vq->name);
		f.fd = vq->call;
		vhost_ioctl(d, VHOST_SET_VRING_CALL, &f, "VHOST_SET_VRING_CALL", vq->name);
		f.fd = vq->err;
		vhost_ioctl(d, VHOST_SET_VRING_ERR, &f, "VHOST_SET_VRING_ERR", vq->name);
	}

	/*
	 * vhost_net_set_backend() starts polling the tap (vhost_poll_start):
	 * nothing is queued for the tap, so RX is not woken; the tap is
	 * writable, so TX is (one handle_tx that finds no descriptors).
	 */
	set_backend(d, VQ_RX, d->tap, 0);
	set_backend(d, VQ_TX, d->tap, 1);
	/* Nothing else may be going on: no spontaneous packets from the tap. */
	expect_no_wakeup(d, sample_worker(d).nvcsw, "after setup");
}

static void teardown(struct driver *d)
{
	struct vhost_vring_file f;

	for (int i = 1; i >= 0; i--) {
		f.index = (unsigned int)i;
		f.fd = -1;
		vhost_ioctl(d, VHOST_NET_SET_BACKEND, &f, "VHOST_NET_SET_BACKEND -1", d->vq[i].name);
	}
	if (close(d->vhost))
		fail_errno("closing /dev/vhost-net");
	for (int i = 0; i < 2; i++) {
		close(d->vq[i].kick);
		close(d->vq[i].call);
		close(d->vq[i].err);
	}
	close(d->pkt);
	if (close(d->tap))
		fail_errno("closing the tap %s", d->ifname);
	if (munmap(d->area, d->area_size))
		fail_errno("unmapping the rings");
}

/* ---- patterns ---- */

static void run_tx(struct driver *d, unsigned int batches, unsigned int depth)
{
	struct vq *vq = &d->vq[VQ_TX];
	unsigned long wakeups = 0;
	char what[96];

	for (unsigned int b = 0; b < batches; b++) {
		uint16_t first = vq->avail_idx;
		unsigned long before;

		snprintf(what, sizeof(what), "tx:%u:%u batch %u", batches, depth, b + 1);
		for (unsigned int i = 0; i < depth; i++) {
			unsigned int slot = (uint16_t)(first + i) % vq->num;
			uint8_t *buf = vq->bufs + (size_t)slot * vq->buf_size;

			memset(buf, 0, VNET_HDR_LEN);	/* GSO_NONE, no csum */
			build_frame(buf + VNET_HDR_LEN, d->pid, 'T', d->tx_seq++);
			vq->desc[slot].len = VNET_HDR_LEN + FRAME_LEN;
			vq->avail->ring[slot] = (uint16_t)slot;
		}
		before = sample_worker(d).nvcsw;
		publish_avail(vq, depth);
		kick(vq);
		wakeups += wait_handled(d, before, vq, vq->avail_idx, what);
		/* TX used entries: in order, our heads, len 0. */
		for (uint16_t u = vq->used_seen; u != vq->avail_idx; u++) {
			struct vring_used_elem *e = &vq->used->ring[u % vq->num];
			unsigned int want = u % vq->num;

			if (e->id != want || e->len != 0)
				fail("%s: TX used entry %u is id %u len %u, expected id %u len 0",
				     what, u, e->id, e->len, want);
		}
		vq->used_seen = vq->avail_idx;
		drain_call(vq);
	}
	printf("step tx batches=%u depth=%u wakeups=%lu\n", batches, depth, wakeups);
	fflush(stdout);
}

static void inject(struct driver *d, const char *what)
{
	uint8_t frame[FRAME_LEN];
	ssize_t n;

	build_frame(frame, d->pid, 'R', d->inject_seq);
	n = send(d->pkt, frame, sizeof(frame), 0);
	if (n < 0)
		fail_errno("%s: injecting frame %u into %s (AF_PACKET send)",
			   what, d->inject_seq, d->ifname);
	if (n != (ssize_t)sizeof(frame))
		fail("%s: injecting frame %u into %s: sent %zd of %u bytes",
		     what, d->inject_seq, d->ifname, n, FRAME_LEN);
	d->inject_seq++;
	d->rx_pending++;
}

static void post_rx(struct driver *d, unsigned int count)
{
	struct vq *vq = &d->vq[VQ_RX];

	for (unsigned int i = 0; i < count; i++) {
		unsigned int slot = (uint16_t)(vq->avail_idx + i) % vq->num;

		memset(vq->bufs + (size_t)slot * vq->buf_size, 0xa5, vq->buf_size);
		vq->desc[slot].len = vq->buf_size;
		vq->avail->ring[slot] = (uint16_t)slot;
	}
	publish_avail(vq, count);
}

/* Checks the RX used entries up to used idx `upto`: ids, lengths, contents. */
static void check_rx_used(struct driver *d, uint16_t upto, const char *what)
{
	struct vq *vq = &d->vq[VQ_RX];
	uint8_t want[FRAME_LEN];

	for (uint16_t u = vq->used_seen; u != upto; u++) {
		struct vring_used_elem *e = &vq->used->ring[u % vq->num];
		unsigned int slot = u % vq->num;
		const uint8_t *buf = vq->bufs + (size_t)slot * vq->buf_size;
		const struct virtio_net_hdr *h = (const void *)buf;

		if (e->id != slot)
			fail("%s: RX used entry %u is descriptor %u, expected %u", what, u, e->id, slot);
		if (e->len != VNET_HDR_LEN + FRAME_LEN)
			fail("%s: RX used entry %u has len %u, expected %zu (%zu-byte vnet header + %u-byte frame)",
			     what, u, e->len, VNET_HDR_LEN + FRAME_LEN, VNET_HDR_LEN, FRAME_LEN);
		if (h->gso_type != VIRTIO_NET_HDR_GSO_NONE)
			fail("%s: RX used entry %u: vnet header gso_type %u, expected none",
			     what, u, h->gso_type);
		build_frame(want, d->pid, 'R', d->rx_seq);
		if (memcmp(buf + VNET_HDR_LEN, want, FRAME_LEN))
			fail("%s: RX used entry %u does not hold injected frame %u", what, u, d->rx_seq);
		d->rx_seq++;
	}
	vq->used_seen = upto;
}

static void run_rxstall(struct driver *d, unsigned int injected, unsigned int kicks)
{
	struct vq *vq = &d->vq[VQ_RX];
	unsigned long before;
	char what[96];
	unsigned int received = 0;

	/* One packet, no buffers: handle_rx runs, finds no buffer: stall 1. */
	snprintf(what, sizeof(what), "rxstall:%u:%u first injection", injected, kicks);
	before = sample_worker(d).nvcsw;
	inject(d, what);
	wait_handled(d, before, vq, vq->used_seen, what);

	/*
	 * That handle_rx returned without vhost_net_enable_vq(): the tap is no
	 * longer polled, the next packets wake nobody.
	 */
	snprintf(what, sizeof(what), "rxstall:%u:%u injections 2..%u", injected, kicks, injected);
	before = sample_worker(d).nvcsw;
	for (unsigned int i = 1; i < injected; i++)
		inject(d, what);
	expect_no_wakeup(d, before, what);

	/* One buffer per kick: one packet received, then a stall on the next. */
	for (unsigned int k = 0; k < kicks; k++) {
		uint16_t want;

		snprintf(what, sizeof(what), "rxstall:%u:%u kick %u", injected, kicks, k + 1);
		post_rx(d, 1);
		want = (uint16_t)(vq->used_seen + 1);
		before = sample_worker(d).nvcsw;
		kick(vq);
		wait_handled(d, before, vq, want, what);
		check_rx_used(d, want, what);
		d->rx_pending--;
		received++;
		drain_call(vq);
	}
	printf("step rxstall injected=%u kicks=%u received=%u stalls_expected=%u depth0=1 depth1=%u silent=%u\n",
	       injected, kicks, received, 1 + kicks, kicks, injected - 1);
	fflush(stdout);
}

static void run_rxfill(struct driver *d, unsigned int buffers)
{
	struct vq *vq = &d->vq[VQ_RX];
	unsigned int received = buffers < d->rx_pending ? buffers : d->rx_pending;
	unsigned int stalls = buffers < d->rx_pending ? 1 : 0;
	uint16_t want = (uint16_t)(vq->used_seen + received);
	unsigned long before;
	char what[64];

	snprintf(what, sizeof(what), "rxfill:%u", buffers);
	post_rx(d, buffers);
	before = sample_worker(d).nvcsw;
	kick(vq);
	wait_handled(d, before, vq, want, what);
	check_rx_used(d, want, what);
	d->rx_pending -= received;
	drain_call(vq);
	printf("step rxfill buffers=%u received=%u stalls_expected=%u\n", buffers, received, stalls);
	fflush(stdout);
}

/* ---- command line and the model of the RX side ---- */

static void parse_pattern(const char *s, struct pattern *p)
{
	char buf[64], *f[4], *save = NULL, *tok;
	int n = 0;

	if (strlen(s) >= sizeof(buf))
		usage_error("pattern '%s' is too long", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ":", &save); tok && n < 4; tok = strtok_r(NULL, ":", &save))
		f[n++] = tok;
	p->text = s;
	p->b = 0;
	if (n == 3 && !strcmp(f[0], "tx"))
		p->kind = P_TX;
	else if (n == 3 && !strcmp(f[0], "rxstall"))
		p->kind = P_RXSTALL;
	else if (n == 2 && !strcmp(f[0], "rxfill"))
		p->kind = P_RXFILL;
	else
		usage_error("bad pattern '%s'", s);
	if (!parse_uint(f[1], &p->a) || (n == 3 && !parse_uint(f[2], &p->b)))
		usage_error("bad number in pattern '%s'", s);
}

/*
 * The patterns must leave the RX side in a state the ground truth covers:
 * rxstall needs no pending packet and no posted buffer (so the tap is polled
 * and the first packet stalls); rxfill needs no posted buffer (its depth is
 * exactly N). Returns the most packets ever pending in the tap at once.
 */
static unsigned int check_patterns(const struct pattern *p, int n, unsigned int ring)
{
	unsigned int pending = 0, posted = 0, most = 0;

	for (int i = 0; i < n; i++) {
		switch (p[i].kind) {
		case P_TX:
			if (!p[i].a || !p[i].b || p[i].b > ring || p[i].b > MAX_PER_CALL)
				usage_error("%s: need BATCHES >= 1 and 1 <= DEPTH <= min(ring %u, %u)",
					    p[i].text, ring, MAX_PER_CALL);
			break;
		case P_RXSTALL:
			if (p[i].b < 1 || p[i].a <= p[i].b || p[i].a > MAX_PER_CALL || p[i].b > ring)
				usage_error("%s: need 1 <= KICKS < INJECTED <= %u and KICKS <= ring %u",
					    p[i].text, MAX_PER_CALL, ring);
			if (pending || posted)
				usage_error("%s: needs an idle RX queue, but %u packet(s) are pending and %u buffer(s) posted by earlier patterns",
					    p[i].text, pending, posted);
			pending = p[i].a - p[i].b;
			if (p[i].a > most)
				most = p[i].a;
			break;
		case P_RXFILL:
			if (!p[i].a || p[i].a > ring)
				usage_error("%s: need 1 <= BUFFERS <= ring %u", p[i].text, ring);
			if (posted)
				usage_error("%s: %u RX buffer(s) from an earlier rxfill are still posted",
					    p[i].text, posted);
			if (p[i].a >= pending) {
				posted = p[i].a - pending;
				pending = 0;
			} else {
				pending -= p[i].a;
			}
			break;
		}
	}
	return most;
}

/* Reads stdin until a line equal to want (or EOF if eof_ok). */
static void wait_line(const char *want, bool eof_ok)
{
	char line[256];

	for (;;) {
		if (!fgets(line, sizeof(line), stdin)) {
			if (ferror(stdin))
				fail_errno("reading stdin while waiting for '%s'", want);
			if (eof_ok)
				return;
			fail("stdin closed before '%s'", want);
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (!strcmp(line, want))
			return;
		if (line[0])
			fail("unexpected line '%s' on stdin while waiting for '%s'", line, want);
	}
}

int main(int argc, char **argv)
{
	struct driver d = { .tap = -1, .vhost = -1, .pkt = -1, .ring = 256 };
	struct pattern *pat;
	int npat = 0;
	unsigned int most_pending;

	pat = calloc((size_t)argc, sizeof(*pat));
	if (!pat)
		fail_errno("allocating the pattern list");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-name")) {
			/* Only for hwsig's VM discovery, which reads our cmdline. */
			if (++i >= argc || strncmp(argv[i], "guest=", 6) || !argv[i][6])
				usage_error("-name needs guest=NAME");
		} else if (!strcmp(argv[i], "--ring")) {
			if (++i >= argc || !parse_uint(argv[i], &d.ring) || d.ring < 2 ||
			    d.ring > 32768 || (d.ring & (d.ring - 1)))
				usage_error("--ring needs a power of two from 2 to 32768");
		} else if (!strcmp(argv[i], "--viommu")) {
			d.viommu = true;
		} else if (!strcmp(argv[i], "--verbose")) {
			d.verbose = true;
		} else if (argv[i][0] == '-') {
			usage_error("unknown option %s", argv[i]);
		} else {
			parse_pattern(argv[i], &pat[npat++]);
		}
	}
	if (!npat)
		usage_error("no pattern");
	most_pending = check_patterns(pat, npat, d.ring);

	if (prctl(PR_SET_NAME, COMM, 0, 0, 0))
		fail_errno("setting the process name to %s (PR_SET_NAME)", COMM);
	setvbuf(stdout, NULL, _IOLBF, 0);
	d.pid = getpid();

	setup_tap(&d, most_pending);
	setup_memory(&d);
	setup_vhost(&d);

	printf("ready pid=%d worker=%d tap=%s\n", (int)d.pid, (int)d.worker, d.ifname);
	fflush(stdout);
	wait_line("go", false);

	for (int i = 0; i < npat; i++) {
		switch (pat[i].kind) {
		case P_TX:
			run_tx(&d, pat[i].a, pat[i].b);
			break;
		case P_RXSTALL:
			run_rxstall(&d, pat[i].a, pat[i].b);
			break;
		case P_RXFILL:
			run_rxfill(&d, pat[i].a);
			break;
		}
	}
	printf("done\n");
	fflush(stdout);
	wait_line("exit", true);

	teardown(&d);
	free(pat);
	return 0;
}
