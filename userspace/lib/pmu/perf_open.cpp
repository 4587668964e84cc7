// perf_event_open groups with group reads (scaled by multiplex.h).

#include "hwsig/perf_open.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hwsig/error.h"

namespace hwsig {

namespace {

constexpr std::uint64_t kReadFormat =
	PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

int perf_event_open(perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return static_cast<int>(::syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags));
}

std::string hex(std::uint64_t v)
{
	char b[24];
	std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
	return b;
}

} // namespace

std::string errno_name(int err)
{
	switch (err) {
	case ENOENT: return "ENOENT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	case ENOSYS: return "ENOSYS";
	case EMFILE: return "EMFILE";
	case E2BIG: return "E2BIG";
	default: return "errno " + std::to_string(err);
	}
}

std::vector<CounterReading> group_readings(const std::vector<std::uint64_t> &words, std::size_t members)
{
	if (words.size() < 3 || words[0] != members || words.size() != 3 + members)
		throw Error("perf group read: " + std::to_string(words.empty() ? 0 : words[0]) + " values for " +
				    std::to_string(members) + " events",
			    EIO);
	std::vector<CounterReading> out;
	out.reserve(members);
	for (std::size_t i = 0; i < members; i++)
		out.push_back(CounterReading{words[3 + i], words[1], words[2]});
	return out;
}

PerfGroup PerfGroup::open(const std::vector<PerfEventSpec> &events, int cpu, pid_t pid)
{
	if (events.empty())
		throw Error("opening a perf group: no events", EINVAL);
	PerfGroup g;
	for (std::size_t i = 0; i < events.size(); i++) {
		const PerfEventSpec &e = events[i];
		perf_event_attr attr;
		std::memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = e.type;
		attr.config = e.config;
		attr.config1 = e.config1;
		attr.config2 = e.config2;
		attr.read_format = kReadFormat;
		// The leader starts disabled so that members join before counting
		// starts; enable() below starts the whole group at once.
		attr.disabled = i == 0 ? 1 : 0;
		attr.inherit = 0;
		const int leader = i == 0 ? -1 : g.members_[0].get();
		Fd fd(perf_event_open(&attr, pid, cpu, leader, PERF_FLAG_FD_CLOEXEC));
		if (!fd) {
			const int err = errno;
			std::string where = pid == -1 ? "cpu " + std::to_string(cpu) : "pid " + std::to_string(pid);
			std::string hint;
			if (err == EACCES || err == EPERM)
				hint = " (needs CAP_PERFMON or kernel.perf_event_paranoid <= " +
				       std::string(pid == -1 ? "0" : "2") + ")";
			else if (err == ENOENT || err == EOPNOTSUPP)
				hint = " (this PMU does not have it)";
			throw Error("perf_event_open " + e.name + " (type " + std::to_string(e.type) + ", config " +
					    hex(e.config) + ") on " + where + hint,
				    err);
		}
		g.members_.push_back(std::move(fd));
		g.specs_.push_back(e);
	}
	g.enable();
	return g;
}

void PerfGroup::enable()
{
	if (!members_.empty() && ::ioctl(members_[0].get(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0)
		throw_errno("enabling perf group led by " + specs_[0].name);
}

void PerfGroup::disable()
{
	if (!members_.empty() && ::ioctl(members_[0].get(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) < 0)
		throw_errno("disabling perf group led by " + specs_[0].name);
}

std::vector<CounterReading> PerfGroup::read() const
{
	if (members_.empty())
		return {};
	// { nr, time_enabled, time_running, value[nr] }
	std::vector<std::uint64_t> buf(3 + members_.size());
	const std::size_t want = buf.size() * sizeof(std::uint64_t);
	ssize_t n;
	do
		n = ::read(members_[0].get(), buf.data(), want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		throw_errno("reading perf group led by " + specs_[0].name);
	if (static_cast<std::size_t>(n) != want || buf[0] != members_.size())
		throw Error("reading perf group led by " + specs_[0].name + ": short or mismatched read (" +
				    std::to_string(n) + " bytes, " + std::to_string(buf[0]) + " values)",
			    EIO);
	return group_readings(buf, members_.size());
}

} // namespace hwsig
