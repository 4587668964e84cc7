// Runs a function as nobody without capabilities, in a forked child, and
// hands back what it returned: how the live BPF tests (tests/bpf) and the
// guest's vhost-check see what an unprivileged user of the library gets.
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

namespace hwsig::test {

struct AsNobody {
	int status;       // the child's wait status: 2 = could not drop to nobody
	std::string text; // what fn returned, or "threw: " and the exception
};

// uid and gid 65534 and no supplementary groups: a non-root uid keeps no
// capabilities. fn runs in the child only; an exception it throws comes
// back as text, so the caller can tell "threw" from a wrong answer.
inline AsNobody run_as_nobody(const std::function<std::string()> &fn)
{
	int report[2];
	if (pipe(report))
		throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(report[0]);
		close(report[1]);
		throw std::runtime_error(std::string("fork: ") + std::strerror(err));
	}
	if (pid == 0) {
		close(report[0]);
		if (setgroups(0, nullptr) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		std::string out;
		try {
			out = fn();
		} catch (const std::exception &e) {
			out = std::string("threw: ") + e.what();
		}
		if (write(report[1], out.data(), out.size()) != static_cast<ssize_t>(out.size()))
			_exit(3);
		_exit(0);
	}
	close(report[1]);
	AsNobody result{0, {}};
	char buf[4096];
	ssize_t n;
	while ((n = read(report[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			result.text.append(buf, static_cast<std::size_t>(n));
	close(report[0]);
	while (waitpid(pid, &result.status, 0) < 0 && errno == EINTR)
		;
	return result;
}

} // namespace hwsig::test
