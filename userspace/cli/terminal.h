// The interactive terminal of hwsigctl top: keys without Enter or echo, the
// screen redrawn in place, and the terminal given back as it was on every
// way out (RAII; a signal only sets the stop flag, the destructor runs).
#pragma once

#include <termios.h>

#include <cstddef>
#include <ctime>
#include <optional>
#include <string>

namespace hwsigctl {

class RawTerminal {
public:
	// Switches stdin to non-canonical, no-echo mode when stdin and stdout
	// are terminals; active() says whether it did.
	RawTerminal();
	~RawTerminal();
	RawTerminal(const RawTerminal &) = delete;
	RawTerminal &operator=(const RawTerminal &) = delete;

	bool active() const { return active_; }
	// Waits until the absolute CLOCK_MONOTONIC deadline for one key; the
	// key, or nullopt at the deadline, on a stop request or at end of input.
	std::optional<char> key_before(const struct timespec &deadline);
	// Columns of the terminal (80 if it cannot tell).
	static std::size_t columns();
	// Lines of the terminal (24 if it cannot tell).
	static std::size_t lines();
	// Clears the screen and writes text from its top-left corner.
	static void redraw(const std::string &text);

private:
	bool active_ = false;
	struct termios saved_ {};
};

} // namespace hwsigctl
