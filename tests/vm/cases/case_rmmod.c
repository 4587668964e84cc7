/* rmmod while /dev/hwsig is open or mapped must not pull the code from
 * under the open file; once everything is closed it must work. */
#include "cases.h"
#include "common.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

static int busy(int err) { return err == -EBUSY || err == -EAGAIN; }

int case_rmmod(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_map m;

	if (setup_running(&s, 5000000, 256, hw_sw_events, 3))
		return 1;
	genl_close(&s);

	/* Open, not mapped. */
	int fd = open("/dev/" HWSIG_DEVICE_NAME, O_RDONLY);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	int err = mod_unload("hwsig");
	CHECK(busy(err), "rmmod with /dev/hwsig open: %s, want EBUSY/EAGAIN", err ? strerror(-err) : "unloaded");
	CHECK(mod_loaded("hwsig"), "module gone after a refused rmmod");
	close(fd);

	/* Mapped, file descriptor closed: the mapping holds the file. */
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	uint64_t h0 = hw_head(&m, 0);
	close(m.fd);
	m.fd = -1;
	err = mod_unload("hwsig");
	CHECK(busy(err), "rmmod with /dev/hwsig mapped: %s, want EBUSY/EAGAIN", err ? strerror(-err) : "unloaded");
	sleep_ms(50);
	CHECK(hw_head(&m, 0) > h0, "sampling stopped after a refused rmmod");
	CHECK(m.ctl->abi_version == HWSIG_ABI_VERSION, "mapping unreadable after a refused rmmod");
	hw_map_close(&m);

	/* Netlink sockets do not pin the module: rmmod works while sampling. */
	CHECK_OK(hw_open(&s), "resolving the family");
	err = 0;
	for (int i = 0; i < 50; i++) {
		err = mod_unload("hwsig");
		if (!busy(err))
			break;
		sleep_ms(20);
	}
	CHECK(!err, "rmmod after closing and unmapping: %s", strerror(-err));
	CHECK(!mod_loaded("hwsig"), "hwsig still in /proc/modules");
	CHECK(access("/dev/" HWSIG_DEVICE_NAME, F_OK) != 0, "/dev/hwsig still exists after rmmod");
	/* A socket that resolved the family before rmmod now gets an error,
	 * not a crash. */
	err = genl_simple(&s, HWSIG_CMD_GET_INFO, &r);
	CHECK(err, "GET_INFO to a removed family succeeded");
	genl_close(&s);
	CHECK_OK(mod_load(HWSIG_KO, ""), "loading again");
	CHECK_OK(hw_open(&s), "resolving the family after reload");
	struct hw_info in;
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO after reload");
	CHECK(!in.running, "a reloaded module is running");
	genl_close(&s);
	return 0;
}
