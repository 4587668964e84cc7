/* An unprivileged caller is refused every command, and nobody gets a
 * writable view of the rings. */
#define _GNU_SOURCE
#include "cases.h"
#include "common.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every capability goes but CAP_SETUID, needed for the last step, which
 * then clears it too (uid 0 -> nonzero without keepcaps). Verified after. */
static int drop_privileges(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534))
		return -errno;
	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = 1u << CAP_SETUID;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	if (setresuid(65534, 65534, 65534))
		return -errno;
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return -errno;
	if (d[0].effective | d[0].permitted | d[1].effective | d[1].permitted)
		return -EPERM;
	return 0;
}

static int unprivileged_child(void)
{
	static struct genl_reply r;
	struct genl_sock s;
	CHECK_OK(drop_privileges(), "dropping capabilities and uid (or capabilities left after it)");
	CHECK(getuid() == 65534 && geteuid() == 65534, "still uid %d", geteuid());
	CHECK_OK(hw_open(&s), "resolving the family unprivileged");
	static const struct { uint8_t cmd; const char *name; } cmds[] = {
		{ HWSIG_CMD_GET_INFO, "GET_INFO" }, { HWSIG_CMD_CONFIGURE, "CONFIGURE" },
		{ HWSIG_CMD_START, "START" }, { HWSIG_CMD_STOP, "STOP" }, { HWSIG_CMD_GET_STATUS, "GET_STATUS" },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int err;
		if (cmds[i].cmd == HWSIG_CMD_CONFIGURE)
			err = hw_configure(&s, 20000000, 128, hw_sw_events, 1, &r);
		else
			err = genl_simple(&s, cmds[i].cmd, &r);
		CHECK(err == -EPERM, "%s as uid 65534 without capabilities: %s, want EPERM", cmds[i].name,
		      err ? strerror(-err) : "allowed");
	}
	int fd = open("/dev/" HWSIG_DEVICE_NAME, O_RDONLY);
	CHECK(fd < 0 && (errno == EACCES || errno == EPERM), "open /dev/hwsig unprivileged: %s",
	      fd < 0 ? strerror(errno) : "allowed");
	return 0;
}

int case_unpriv(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_info before, after;

	if (setup_running(&s, 10000000, 64, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_get_info(&s, &before, &r), "GET_INFO");
	int pipefd[2];
	CHECK(!pipe(pipefd), "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		int rc = unprivileged_child();
		if (rc)
			(void)!write(pipefd[1], vm_why(), strlen(vm_why()));
		_exit(rc);
	}
	close(pipefd[1]);
	char why[1024] = "";
	ssize_t n = read(pipefd[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = 0;
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unprivileged: %s", why[0] ? why : "child died");
	CHECK_OK(hw_get_info(&s, &after, &r), "GET_INFO");
	CHECK(after.running == 1 && after.config_generation == before.config_generation,
	      "the unprivileged attempts changed state: running %u generation %llu -> %llu", after.running,
	      (unsigned long long)before.config_generation, (unsigned long long)after.config_generation);

	/* Root cannot write the rings either. An O_RDWR open may itself be
	 * refused; if it is allowed, the mapping must not be writable. */
	long page = sysconf(_SC_PAGESIZE);
	int fd = open("/dev/" HWSIG_DEVICE_NAME, O_RDWR);
	if (fd < 0) {
		vm_note("open O_RDWR refused: %s", strerror(errno));
		fd = open("/dev/" HWSIG_DEVICE_NAME, O_RDONLY);
		CHECK(fd >= 0, "open O_RDONLY: %s", strerror(errno));
	}
	void *w = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(w == MAP_FAILED, "a PROT_WRITE MAP_SHARED mapping was allowed");
	vm_note("PROT_WRITE MAP_SHARED: %s", strerror(errno));
	/* A private writable mapping would only copy pages for its owner:
	 * reported, not required. */
	w = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	vm_note("PROT_WRITE MAP_PRIVATE: %s", w == MAP_FAILED ? strerror(errno) : "allowed (copy on write)");
	if (w != MAP_FAILED)
		munmap(w, (size_t)page);
	void *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(ro != MAP_FAILED, "read-only mapping: %s", strerror(errno));
	CHECK(mprotect(ro, (size_t)page, PROT_READ | PROT_WRITE) != 0, "mprotect to PROT_WRITE was allowed");
	vm_note("mprotect PROT_WRITE: %s", strerror(errno));
	CHECK(((const struct hwsig_control_page *)ro)->abi_version == HWSIG_ABI_VERSION, "control page unreadable");
	munmap(ro, (size_t)page);
	close(fd);
	genl_close(&s);
	return 0;
}
