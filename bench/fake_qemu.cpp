// An idle stand-in for a QEMU/KVM guest, with the process shape hwsig
// discovers (Documentation/vms.rst): comm "qemu-system-x86" (what the
// kernel keeps of qemu-system-x86_64), "-name guest=NAME" on its command
// line, and one thread per vCPU named "CPU n/KVM". The threads only sleep:
// scripts/bench-daemon starts hundreds of these to measure what each VM costs
// hwsigd, not what a guest costs the host.
//
// usage: qemu-system-x86_64 -name guest=NAME -smp N   (argv[0] is the
// caller's choice: the bench passes the real name; comm is set here)
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void *vcpu(void *)
{
	for (;;)
		pause();
	return nullptr;
}

} // namespace

int main(int argc, char **argv)
{
	int vcpus = 1;
	bool named = false;
	for (int i = 1; i + 1 < argc; ++i) {
		if (std::strcmp(argv[i], "-smp") == 0)
			vcpus = std::atoi(argv[i + 1]);
		if (std::strcmp(argv[i], "-name") == 0 && std::strncmp(argv[i + 1], "guest=", 6) == 0)
			named = true;
	}
	if (!named || vcpus < 1 || vcpus > 512) {
		std::fprintf(stderr, "usage: qemu-system-x86_64 -name guest=NAME -smp N (1 .. 512)\n");
		return 2;
	}
	prctl(PR_SET_NAME, "qemu-system-x86", 0, 0, 0);
	std::vector<pthread_t> threads(static_cast<std::size_t>(vcpus));
	for (int n = 0; n < vcpus; ++n) {
		// Small stacks: 200 guests of 8 vCPUs are 1,600 threads.
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		if (pthread_create(&threads[static_cast<std::size_t>(n)], &attr, vcpu, nullptr) != 0) {
			std::perror("fake_qemu: pthread_create");
			return 1;
		}
		pthread_attr_destroy(&attr);
		char name[16];
		std::snprintf(name, sizeof(name), "CPU %d/KVM", n);
		pthread_setname_np(threads[static_cast<std::size_t>(n)], name);
	}
	for (;;)
		pause();
}
