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
	return alive(root, std::vector<int>{pid}).front();
}

std::vector<bool> AliveWatch::alive(const std::string &root, const std::vector<int> &pids)
{
	std::vector<bool> out(pids.size(), false);
	const bool live_proc = root.empty() || root == "/";
	std::vector<struct pollfd> fds;
	std::vector<std::size_t> asked; // fds[k] answers for pids[asked[k]]
	fds.reserve(pids.size());
	asked.reserve(pids.size());
	for (std::size_t i = 0; i < pids.size(); ++i) {
		const int pid = pids[i];
		if (!pidfds_ || !live_proc || pid <= 0) {
			out[i] = process_alive(root, pid);
			continue;
		}
		auto it = watched_.find(pid);
		if (it == watched_.end()) {
			const long fd = ::syscall(SYS_pidfd_open, pid, 0);
			if (fd < 0) {
				if (errno == ESRCH)
					continue;
				if (errno == ENOSYS || errno == EPERM)
					pidfds_ = false;
				out[i] = process_alive(root, pid);
				continue;
			}
			// A pid may have been reused since discovery listed it: the
			// first answer is the status file's, later ones the pidfd's.
			it = watched_.emplace(pid, Watched{Fd(static_cast<int>(fd)), 0}).first;
			if (!process_alive(root, pid)) {
				watched_.erase(it);
				continue;
			}
		}
		it->second.round = round_;
		fds.push_back({it->second.pidfd.get(), POLLIN, 0});
		asked.push_back(i);
	}
	if (fds.empty())
		return out;
	const int ready = ::poll(fds.data(), fds.size(), 0);
	for (std::size_t k = 0; k < fds.size(); ++k) {
		const std::size_t i = asked[k];
		if (ready < 0) {
			out[i] = process_alive(root, pids[i]);
		} else if (fds[k].revents) {
			// Exited: its pidfd says so forever, but the pid may come
			// back as another process (a new QEMU after a wrap): ask
			// afresh then. A pid listed twice was polled twice through
			// the same pidfd, closed only now.
			watched_.erase(pids[i]);
		} else {
			out[i] = true;
		}
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
