// Reading procfs/sysfs. Every path is resolved under a root directory so that
// fixture trees (tests/unit/fixtures/<name>/{proc,sys}) exercise the same code.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwsig {

// "/" + "proc/stat" -> "/proc/stat"; "fixtures/x" + "/proc/stat" -> "fixtures/x/proc/stat".
std::string join_path(std::string_view root, std::string_view rel);

struct FileRead {
	std::optional<std::string> data; // nullopt: could not read
	int err = 0;                     // errno when data is nullopt
};

// Reads a whole pseudo-file (at most max_bytes; more is reported as EFBIG).
FileRead read_file(const std::string &path, std::size_t max_bytes = 4u << 20);

// Entries of a directory (no "." or ".."), sorted; names starting with
// prefix only when prefix is non-empty. Empty when the directory is missing.
std::vector<std::string> list_dir(const std::string &path, std::string_view prefix = {});

bool path_exists(const std::string &path);

// A one-value sysfs attribute without its surrounding whitespace (at most
// 64 KiB); nullopt when it cannot be read.
std::optional<std::string> read_trimmed(const std::string &path);

} // namespace hwsig
