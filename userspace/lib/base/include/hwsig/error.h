// Errors carry errno and what was being done ("reading /proc/stat: ...").
#pragma once

#include <stdexcept>
#include <string>

namespace hwsig {

class Error : public std::runtime_error {
public:
	// "<doing>: <strerror(err)>"; err == 0 gives just "<doing>".
	Error(const std::string &doing, int err);
	explicit Error(const std::string &message) : Error(message, 0) {}
	int err() const noexcept { return err_; }

private:
	int err_;
};

// Throws Error(doing, errno).
[[noreturn]] void throw_errno(const std::string &doing);

} // namespace hwsig
