/* Counters are created with the configuring caller's credentials, whoever
 * opens them: also the reconcile work, which opens the counters of a CPU
 * that comes online in a kworker, long after the caller has returned.
 *
 * Without an LSM nothing in the kernel refuses a kernel counter for the
 * wrong credentials, so the case watches the credentials instead, with
 * kprobe events (tracefs): override_creds() with the words of the struct
 * cred it installs, perf_event_create_kernel_counter() with its CPU, and
 * revert_creds(). The caller is uid 1000, gid 1001 with CAP_PERFMON only;
 * every counter creation must sit, in its own task, between an
 * override_creds() of a cred holding those ids (uid, gid, suid, sgid,
 * euid, egid in a row: their offset differs between kernels, so the case
 * looks for the run) and a revert_creds(). A creation under the worker's
 * own (root) credentials has no override before it and fails the case. */
#define _GNU_SOURCE
#include "cases.h"
#include "common.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACING "/sys/kernel/tracing"
#define GROUP "hwsigcred"
#define CALLER_UID 1000
#define CALLER_GID 1001
#define CRED_WORDS 16
#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"

static int tracefs_write(const char *file, const char *s, int flags)
{
	char path[128];
	snprintf(path, sizeof(path), TRACING "/%s", file);
	return write_file_flags(path, s, flags);
}

static void probes_remove(void)
{
	tracefs_write("events/" GROUP "/enable", "0", 0);
	tracefs_write("kprobe_events", "-:" GROUP "/ovr\n", O_APPEND);
	tracefs_write("kprobe_events", "-:" GROUP "/create\n", O_APPEND);
	tracefs_write("kprobe_events", "-:" GROUP "/revert\n", O_APPEND);
}

static int probes_add(void)
{
	char ovr[512];
	int len = snprintf(ovr, sizeof(ovr), "p:" GROUP "/ovr override_creds");
	for (int i = 0; i < CRED_WORDS; i++)
		len += snprintf(ovr + len, sizeof(ovr) - len, " w%d=+%d(%%di):u32", i, 4 * i);
	snprintf(ovr + len, sizeof(ovr) - len, "\n");
	int err = tracefs_write("kprobe_events", ovr, O_APPEND);
	if (!err)
		err = tracefs_write("kprobe_events", "p:" GROUP "/create perf_event_create_kernel_counter cpu=%si:s32\n",
				    O_APPEND);
	if (!err)
		err = tracefs_write("kprobe_events", "p:" GROUP "/revert revert_creds\n", O_APPEND);
	return err;
}

/* The caller: uid 1000, gid 1001, CAP_PERFMON alone (kept across setresuid
 * by PR_SET_KEEPCAPS, then the rest dropped). Configures and starts, says
 * so on `done`, and keeps the socket open until `hold` closes. */
static void caller(int done, int hold)
{
	static struct genl_reply r;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	struct genl_sock s;
	char st = 1;

	if (prctl(PR_SET_KEEPCAPS, 1) || setgroups(0, NULL) ||
	    setresgid(CALLER_GID, CALLER_GID, CALLER_GID))
		_exit(10);
	if (setresuid(CALLER_UID, CALLER_UID, CALLER_UID))
		_exit(11);
	memset(d, 0, sizeof(d));
	d[CAP_TO_INDEX(CAP_PERFMON)].effective = d[CAP_TO_INDEX(CAP_PERFMON)].permitted = CAP_TO_MASK(CAP_PERFMON);
	if (syscall(SYS_capset, &h, d))
		_exit(12);
	if (hw_open(&s))
		_exit(13);
	if (!hw_configure(&s, 10000000ull, 64, hw_sw_events, 3, &r) && !hw_start(&s, &r))
		st = 0;
	if (write(done, &st, 1) != 1)
		_exit(14);
	if (read(hold, &st, 1) < 0)
		_exit(15);
	_exit(0);
}

struct event {
	int pid;
	char kind;		/* 'o'verride, 'c'reate, 'r'evert */
	int cpu;		/* create */
	int caller;		/* override: the cred holds the caller's ids */
	int root;		/* override: ... or root's */
};

/* The run uid, gid, suid, sgid, euid, egid somewhere in the cred's words. */
static int cred_has(const unsigned long *w, unsigned long uid, unsigned long gid)
{
	for (int k = 0; k + 6 <= CRED_WORDS; k++)
		if (w[k] == uid && w[k + 1] == gid && w[k + 2] == uid && w[k + 3] == gid && w[k + 4] == uid &&
		    w[k + 5] == gid)
			return 1;
	return 0;
}

/* "  kworker/1:1-23   [001] ..... 12.3: hwsigcred/ovr: ..." or without the
 * group: the pid is the number before the first " [". */
static int parse_event(const char *line, struct event *e)
{
	const char *name;
	memset(e, 0, sizeof(*e));
	if ((name = strstr(line, " ovr: ")))
		e->kind = 'o';
	else if ((name = strstr(line, " create: ")))
		e->kind = 'c';
	else if ((name = strstr(line, " revert: ")))
		e->kind = 'r';
	else
		return 0;
	const char *br = strstr(line, " [");
	if (!br || br > name)
		return 0;
	const char *p = br;
	while (p > line && p[-1] == ' ')
		p--;
	const char *end = p;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == end || p == line || p[-1] != '-')
		return 0;
	e->pid = atoi(p);
	if (e->kind == 'c') {
		const char *c = strstr(name, "cpu=");
		if (!c)
			return 0;
		e->cpu = atoi(c + 4);
	} else if (e->kind == 'o') {
		unsigned long w[CRED_WORDS];
		for (int i = 0; i < CRED_WORDS; i++) {
			char key[8];
			snprintf(key, sizeof(key), " w%d=", i);
			const char *v = strstr(name, key);
			if (!v)
				return 0;
			w[i] = strtoul(v + strlen(key), NULL, 10);
		}
		e->caller = cred_has(w, CALLER_UID, CALLER_GID);
		e->root = cred_has(w, 0, 0);
	}
	return 1;
}

#define MAX_EVENTS 4096

/* Every create in the trace is bracketed, in its task, by an override with
 * the caller's cred and a revert. Counts the creates of the caller's task,
 * and those of any other task (the reconcile work) for CPU 1. */
static int check_trace(int caller_pid, int *by_caller, int *by_worker_cpu1, int *worker_pid)
{
	static char buf[4 << 20];
	static struct event ev[MAX_EVENTS];
	int fd = open(TRACING "/trace", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "opening " TRACING "/trace: %s", strerror(errno));
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = 0;
	CHECK(len < sizeof(buf) - 1, "the trace is larger than %zu bytes", sizeof(buf));

	int nev = 0;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (line[0] == '#')
			continue;
		CHECK(nev < MAX_EVENTS, "more than %d traced events", MAX_EVENTS);
		if (parse_event(line, &ev[nev]))
			nev++;
		else if (strstr(line, GROUP))
			FAIL("unparsed trace line: %.160s", line);
	}
	*by_caller = *by_worker_cpu1 = 0;
	*worker_pid = 0;
	for (int i = 0; i < nev; i++) {
		if (ev[i].kind != 'c')
			continue;
		int before = -1, after = -1;
		for (int j = i - 1; j >= 0 && before < 0; j--)
			if (ev[j].pid == ev[i].pid)
				before = j;
		for (int j = i + 1; j < nev && after < 0; j++)
			if (ev[j].pid == ev[i].pid)
				after = j;
		CHECK(before >= 0 && ev[before].kind == 'o',
		      "a counter on CPU %d was created by pid %d without override_creds() before it%s", ev[i].cpu,
		      ev[i].pid, ev[i].pid == caller_pid ? " (the caller)" : " (not the caller: the worker's credentials)");
		CHECK(ev[before].caller, "pid %d created a counter on CPU %d under a cred that is not the caller's (%s)",
		      ev[i].pid, ev[i].cpu, ev[before].root ? "root's" : "neither the caller's nor root's");
		CHECK(after >= 0 && ev[after].kind == 'r', "pid %d did not revert_creds() after creating a counter on CPU %d",
		      ev[i].pid, ev[i].cpu);
		if (ev[i].pid == caller_pid) {
			(*by_caller)++;
		} else if (ev[i].cpu == 1) {
			(*by_worker_cpu1)++;
			*worker_pid = ev[i].pid;
		}
	}
	return 0;
}

static int run(int *hold_w, pid_t *child)
{
	int done[2], hold[2];
	char st;

	CHECK_OK(hw_reload(), "reloading hwsig.ko");
	CHECK(!pipe2(done, O_CLOEXEC) && !pipe2(hold, O_CLOEXEC), "pipe: %s", strerror(errno));
	CHECK_OK(tracefs_write("trace", "", O_TRUNC), "clearing " TRACING "/trace");
	CHECK_OK(tracefs_write("tracing_on", "1", 0), "tracing_on");
	CHECK_OK(tracefs_write("events/" GROUP "/enable", "1", 0), "enabling the kprobe events");

	*child = fork();
	CHECK(*child >= 0, "fork: %s", strerror(errno));
	if (*child == 0) {
		close(done[0]);
		close(hold[1]);
		caller(done[1], hold[0]);
	}
	close(done[1]);
	close(hold[0]);
	*hold_w = hold[1];
	CHECK(read(done[0], &st, 1) == 1, "the caller died before configuring");
	close(done[0]);
	CHECK(st == 0, "CONFIGURE or START as uid %d with CAP_PERFMON failed", CALLER_UID);

	/* CPU 1's counters go with it and are opened again by the reconcile
	 * work when it comes back. */
	CHECK_OK(write_file_str(CPU1_ONLINE, "0"), "offlining cpu 1");
	CHECK_OK(write_file_str(CPU1_ONLINE, "1"), "onlining cpu 1");
	static struct hw_status hs;
	static struct genl_reply r;
	struct genl_sock s;
	CHECK_OK(hw_open(&s), "resolving the hwsig genl family");
	int running = 0;
	for (int tries = 0; tries < 100 && running < 3; tries++) {
		sleep_ms(50);
		int err = hw_get_status(&s, &hs, &r);
		CHECK(!err, "GET_STATUS: %s", strerror(-err));
		running = 0;
		for (uint32_t e = 0; e < 3; e++) {
			const struct hw_status_entry *en = hw_status_find(&hs, e, 1);
			running += en && en->error == 0;
		}
	}
	genl_close(&s);
	CHECK(running == 3, "cpu 1 has %d of 3 counters 5 s after coming back", running);
	/* The status may show a counter a moment before its revert_creds(). */
	sleep_ms(300);
	CHECK_OK(tracefs_write("events/" GROUP "/enable", "0", 0), "disabling the kprobe events");

	int by_caller, by_worker, worker;
	if (check_trace(*child, &by_caller, &by_worker, &worker))
		return 1;
	int cpus = possible_cpus();
	vm_note("counters created by the caller (uid %d): %d; by pid %d for cpu 1 after onlining: %d; each under "
		"the caller's cred", CALLER_UID, by_caller, worker, by_worker);
	CHECK(by_caller == 3 * cpus, "the caller created %d counters, want 3 per CPU (%d CPUs)", by_caller, cpus);
	CHECK(by_worker == 3, "the reconcile work created %d counters for cpu 1, want 3", by_worker);
	return 0;
}

int case_creds(int argc, char **argv)
{
	(void)argc; (void)argv;
	int hold_w = -1, st = 0;
	pid_t child = -1;

	CHECK(geteuid() == 0, "the case must run as root");
	if (access(CPU1_ONLINE, 0) != 0)
		FAIL("%s missing: CPU hotplug unavailable", CPU1_ONLINE);
	if (access(TRACING "/kprobe_events", W_OK) != 0)
		FAIL(TRACING "/kprobe_events: %s (this kernel has no kprobe events)", strerror(errno));
	probes_remove();
	CHECK_OK(probes_add(), "adding the kprobe events");
	int rc = run(&hold_w, &child);
	if (hold_w >= 0)
		close(hold_w);
	if (child > 0)
		waitpid(child, &st, 0);
	probes_remove();
	if (rc)
		return rc;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the caller exited with status %#x", st);
	CHECK_OK(hw_stop_and_unload(), "stopping and unloading");
	return 0;
}
