#include "hwsig/proc_alive.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>

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
	if (!pidfds_ || (root != "/" && !root.empty()) || pid <= 0)
		return process_alive(root, pid);
	auto it = watched_.find(pid);
	if (it == watched_.end()) {
		const long fd = ::syscall(SYS_pidfd_open, pid, 0);
		if (fd < 0) {
			if (errno == ESRCH)
				return false;
			if (errno == ENOSYS || errno == EPERM)
				pidfds_ = false;
			return process_alive(root, pid);
		}
		// A pid may have been reused since discovery listed it: the
		// first answer is the status file's, later ones the pidfd's.
		it = watched_.emplace(pid, Watched{Fd(static_cast<int>(fd)), 0}).first;
		if (!process_alive(root, pid)) {
			watched_.erase(it);
			return false;
		}
	}
	it->second.round = round_;
	struct pollfd p = {it->second.pidfd.get(), POLLIN, 0};
	const int ready = ::poll(&p, 1, 0);
	if (ready < 0)
		return process_alive(root, pid);
	if (ready > 0) {
		// Exited: its pidfd says so forever, but the pid may come back
		// as another process (a new QEMU after a wrap): ask afresh then.
		watched_.erase(it);
		return false;
	}
	return true;
}

void AliveWatch::sweep()
{
	for (auto it = watched_.begin(); it != watched_.end();)
		it = it->second.round == round_ ? std::next(it) : watched_.erase(it);
	++round_;
}

} // namespace hwsig
