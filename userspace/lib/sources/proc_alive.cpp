#include "hwsig/proc_alive.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <utility>

#include "hwsig/fs.h"
#include "hwsig/parse.h"

namespace hwsig {

bool status_is_dead(std::string_view status)
{
	for (auto line : split_lines(status)) {
		if (!line.starts_with("State:"))
			continue;
		auto state = trim(line.substr(6));
		return !state.empty() && (state[0] == 'Z' || state[0] == 'X' || state[0] == 'x');
	}
	return false;
}

bool process_alive(const std::string &root, int pid)
{
	auto status = read_file(join_path(root, "proc/" + std::to_string(pid) + "/status"));
	return status.data && !status_is_dead(*status.data);
}

bool AliveWatch::alive(const std::string &root, int pid)
{
	return alive(root, std::vector<int>{pid}).front();
}

bool AliveWatch::collect_exits()
{
	if (!epoll_) {
		epoll_ = Fd(::epoll_create1(EPOLL_CLOEXEC));
		if (!epoll_)
			return false;
	}
	struct epoll_event events[64];
	// Each wait names exits not named before (a named pidfd leaves the
	// set), so this many waits drain them; bounded all the same, so that
	// the sampling thread never spins on a set that keeps answering.
	for (std::size_t waits = watched_.size() / 64 + 2; waits > 0; --waits) {
		const int n = ::epoll_wait(epoll_.get(), events, 64, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		for (int k = 0; k < n; ++k) {
			auto it = watched_.find(static_cast<int>(events[k].data.u64));
			if (it == watched_.end())
				continue;
			// Readable for good: out of the set, so that the next wait
			// names only new exits.
			it->second.exited = true;
			::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->second.pidfd.get(), nullptr);
		}
		if (n < 64)
			return true;
	}
	return true;
}

void AliveWatch::watch(int pid, Fd pidfd)
{
	struct epoll_event ev = {};
	ev.events = EPOLLIN;
	ev.data.u64 = static_cast<std::uint64_t>(pid);
	if (epoll_ && ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, pidfd.get(), &ev) == 0)
		watched_[pid] = Watched{std::move(pidfd), round_, false};
}

std::vector<bool> AliveWatch::alive(const std::string &root, const std::vector<int> &pids)
{
	std::vector<bool> out(pids.size(), false);
	const bool live_proc = root.empty() || root == "/";
	const bool asked = pidfds_ && live_proc && !pids.empty() && collect_exits();
	for (std::size_t i = 0; i < pids.size(); ++i) {
		const int pid = pids[i];
		if (!asked || pid <= 0) {
			out[i] = process_alive(root, pid);
			continue;
		}
		if (auto it = watched_.find(pid); it != watched_.end()) {
			if (it->second.exited) {
				// Its pidfd says so forever, but the pid may come back
				// as another process (a new QEMU after a wrap): ask
				// afresh then.
				watched_.erase(it);
				continue;
			}
			it->second.round = round_;
			out[i] = true;
			continue;
		}
		const long fd = ::syscall(SYS_pidfd_open, pid, 0);
		if (fd < 0) {
			if (errno == ESRCH)
				continue;
			if (errno == ENOSYS || errno == EPERM)
				pidfds_ = false;
			out[i] = process_alive(root, pid);
			continue;
		}
		// A pid may have been reused since discovery listed it: the first
		// answer is the status file's, later ones the epoll set's.
		Fd pidfd(static_cast<int>(fd));
		out[i] = process_alive(root, pid);
		if (out[i])
			watch(pid, std::move(pidfd));
	}
	return out;
}

void AliveWatch::sweep()
{
	for (auto it = watched_.begin(); it != watched_.end();)
		it = it->second.round == round_ ? std::next(it) : watched_.erase(it);
	++round_;
}

} // namespace hwsig
