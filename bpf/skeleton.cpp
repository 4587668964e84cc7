// libbpf glue shared by every skeleton (skeleton.h): error text, libbpf's
// log, tracefs.
#include "skeleton.h"

#include <bpf/libbpf.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

namespace hwsig::bpf_detail {

namespace {

// The last warning libbpf printed on this thread (often the verifier's or
// the kernel's reason), for the next error message.
thread_local std::string last_libbpf_warning;

int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !std::getenv("HWSIG_LIBBPF_DEBUG"))
		return 0;
	char line[512];
	va_list copy;
	va_copy(copy, args);
	int n = std::vsnprintf(line, sizeof line, fmt, copy);
	va_end(copy);
	if (n > 0 && level == LIBBPF_WARN) {
		std::string text(line);
		while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
			text.pop_back();
		if (text.rfind("libbpf: ", 0) == 0)
			text.erase(0, 8);
		// The skeleton's closing summary only repeats the error code: keep
		// the line before it, which says what failed.
		bool summary = text.find("BPF skeleton") != std::string::npos ||
			       text.find("failed to load object") != std::string::npos;
		if (!text.empty() && !summary)
			last_libbpf_warning = text;
	}
	if (std::getenv("HWSIG_LIBBPF_DEBUG"))
		return std::vfprintf(stderr, fmt, args);
	return 0;
}

const char *hint_for(int err)
{
	switch (err) {
	case EACCES:
		if (geteuid() == 0)
			return "the verifier rejected a program: HWSIG_LIBBPF_DEBUG=1 shows its log";
		return "BPF needs root (CAP_BPF+CAP_PERFMON): run as root";
	case EPERM:
		return "BPF needs root (CAP_BPF+CAP_PERFMON): run as root";
	case ENOENT:
		return "the kernel lacks a tracepoint, BTF type or helper this program uses";
	case EINVAL:
		return "the kernel rejected the program or map (verifier or unsupported feature)";
	case ENOTSUP:
		return "operation not supported by this kernel";
	case ENOMEM:
	case E2BIG:
		return "out of memory for maps (RLIMIT_MEMLOCK on kernels before 5.11?)";
	case ESRCH:
		return "no kernel BTF (/sys/kernel/btf/vmlinux): CO-RE cannot relocate";
	default:
		return nullptr;
	}
}

} // namespace

void install_libbpf_print()
{
	static std::once_flag once;
	std::call_once(once, [] { libbpf_set_print(libbpf_print); });
}

bool lacks_privilege(int err)
{
	return err == EPERM || (err == EACCES && geteuid() != 0);
}

[[noreturn]] void throw_step(std::string_view name, std::string_view step, int err)
{
	// "BPF <name>: <step> (<hint>) [libbpf: <warning>]: <strerror>", errno in err().
	std::string doing = "BPF ";
	doing += name;
	doing += ": ";
	doing += step;
	if (const char *hint = hint_for(err)) {
		doing += " (";
		doing += hint;
		doing += ")";
	}
	if (!last_libbpf_warning.empty()) {
		doing += " [libbpf: ";
		doing += last_libbpf_warning;
		doing += "]";
		last_libbpf_warning.clear();
	}
	throw Error(doing, err);
}

void ensure_tracefs()
{
	struct statfs st {};
	if (statfs("/sys/kernel/tracing", &st) == 0 && st.f_type == TRACEFS_MAGIC)
		return;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0 && errno != EBUSY)
		throw_errno("mounting tracefs on /sys/kernel/tracing (classic tracepoints need it)");
}

void before_load(struct ::bpf_object *obj)
{
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj)
	{
		if (bpf_program__autoload(prog) &&
		    bpf_program__type(prog) == BPF_PROG_TYPE_TRACEPOINT) {
			ensure_tracefs();
			return;
		}
	}
}

} // namespace hwsig::bpf_detail
