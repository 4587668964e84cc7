#include "workload.h"
#include "hwsig_client.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int child(int cpu, int rfd, int wfd, int round_trips, int starts)
{
	if (pin_to_cpu(cpu))
		_exit(3);
	char b = 'x';
	for (int i = 0; i < round_trips; i++) {
		if (starts && write(wfd, &b, 1) != 1)
			_exit(4);
		if (read(rfd, &b, 1) != 1)
			_exit(5);
		if (!starts && write(wfd, &b, 1) != 1)
			_exit(4);
	}
	_exit(0);
}

int pingpong_pinned(int cpu, int round_trips)
{
	int a[2], b[2];
	if (pipe(a) || pipe(b))
		return -errno;
	pid_t p1 = fork();
	if (p1 == 0)
		child(cpu, b[0], a[1], round_trips, 1);
	pid_t p2 = fork();
	if (p2 == 0)
		child(cpu, a[0], b[1], round_trips, 0);
	close(a[0]); close(a[1]); close(b[0]); close(b[1]);
	if (p1 < 0 || p2 < 0)
		return -ECHILD;
	int s1 = 0, s2 = 0;
	waitpid(p1, &s1, 0);
	waitpid(p2, &s2, 0);
	if (!WIFEXITED(s1) || WEXITSTATUS(s1) || !WIFEXITED(s2) || WEXITSTATUS(s2))
		return -ECHILD;
	return 0;
}

void spin_ms(unsigned ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
	while (now_ns() < end)
		;
}
