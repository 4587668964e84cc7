#include "terminal.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "interrupt.h"

namespace hwsigctl {

RawTerminal::RawTerminal()
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0)
		return;
	struct termios raw = saved_;
	raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	if (active_)
		std::fputs("\x1b[?25l", stdout); // hide the cursor while the screen is redrawn
}

RawTerminal::~RawTerminal()
{
	if (!active_)
		return;
	std::fputs("\x1b[?25h", stdout);
	std::fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
}

std::optional<char> RawTerminal::key_before(const struct timespec &deadline)
{
	if (!active_) {
		sleep_until(deadline);
		return std::nullopt;
	}
	while (!stop_requested()) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long ms = (static_cast<long long>(deadline.tv_sec) - now.tv_sec) * 1000 +
			       (deadline.tv_nsec - now.tv_nsec) / 1000000;
		if (ms <= 0)
			return std::nullopt;
		struct pollfd p = {STDIN_FILENO, POLLIN, 0};
		int rc = poll(&p, 1, static_cast<int>(ms));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return std::nullopt;
		char c;
		ssize_t n = read(STDIN_FILENO, &c, 1);
		if (n == 1)
			return c;
		if (n == 0) { // end of input: keys are over, keep refreshing
			sleep_until(deadline);
			return std::nullopt;
		}
	}
	return std::nullopt;
}

std::size_t RawTerminal::columns()
{
	struct winsize ws {};
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

std::size_t RawTerminal::lines()
{
	struct winsize ws {};
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	return 24;
}

void RawTerminal::redraw(const std::string &text)
{
	std::string out = "\x1b[H\x1b[2J";
	out += text;
	std::fputs(out.c_str(), stdout);
	std::fflush(stdout);
}

} // namespace hwsigctl
