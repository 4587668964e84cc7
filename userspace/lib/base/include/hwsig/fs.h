// Reading procfs/sysfs. Every path is resolved under a root directory so that
// fixture trees (tests/unit/fixtures/<name>/{proc,sys}) exercise the same code.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hwsig/fd.h"

namespace hwsig {

// Writes bytes to a temporary file beside path, fsyncs it and renames it
// into place: a reader never sees half a file, and a failed write (no
// space, no permission) leaves nothing behind. Throws Error naming path.
void write_file_atomically(const std::string &path, std::string_view bytes, unsigned mode);

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

// How many fds a FileCache may keep open: a quarter of the soft
// RLIMIT_NOFILE, at most `most`, so that sockets, perf events and BPF
// objects never run short of descriptors.
std::size_t kept_fd_bound(std::size_t most);

// Keeps pseudo-files open and re-reads them with pread() from offset 0:
// procfs seq_files and sysfs (kernfs) attributes generate their content
// afresh on every read at offset 0, so a kept fd reads exactly what a fresh
// open would, without the path walk, the open and the close.
//
// A kept fd never returns stale data:
//  - any read error (ENODEV after a device's removal, ESRCH after a
//    process's exit...) or an empty read on a kept fd drops it, and the
//    file is opened afresh: that open's result, data or errno, is returned;
//  - on any other filesystem (fixture trees in tests) the path is stat()ed
//    on each read and a file replaced, deleted or recreated under it is
//    opened afresh (pread reads in-place rewrites as they are);
//  - revalidate() drops the fds whose path now names another file (a
//    device removed and re-added between two reads, a mount on top); the
//    sources call it when they rescan their layout.
// At most max_open fds are kept; past that, further files are read with a
// fresh open each time (sweep() and failures make room again).
class FileCache {
public:
	explicit FileCache(std::size_t max_open = 64);
	FileCache(FileCache &&) noexcept = default;
	FileCache &operator=(FileCache &&) noexcept = default;

	struct View {
		std::optional<std::string_view> data; // valid until the next read() on this cache
		int err = 0;                          // errno when data is nullopt
	};
	// read_file() of path (same errors, EFBIG past max_bytes), through a kept fd.
	View read(const std::string &path, std::size_t max_bytes = 4u << 20);

	void revalidate();
	// Closes the fds not read since the previous sweep(): for files of
	// processes that come and go (vCPU threads), call it after each round.
	void sweep();
	void clear();
	// fds kept open now; never more than max_open().
	std::size_t open_count() const { return entries_.size(); }
	std::size_t max_open() const { return max_open_; }

private:
	struct Entry {
		Fd fd;
		bool pseudo = false;   // procfs or sysfs: regenerated on each read
		bool one_show = false; // a sysfs text attribute: one read returns it whole
		bool seq_file = false; // procfs: a short read of under half a page was the last
		std::uint64_t dev = 0, ino = 0;
		std::uint64_t used = 0;
	};
	// Reads fd whole into buf_ (pread from 0); 0 or an errno.
	int read_whole(int fd, std::size_t max_bytes, std::size_t &len, bool one_show, bool seq_file);
	View fresh(const std::string &path, std::size_t max_bytes);
	void keep(const std::string &path, Entry entry);

	std::size_t max_open_;
	std::uint64_t tick_ = 0;
	std::uint64_t swept_at_ = 0; // tick_ at the last sweep()
	std::unordered_map<std::string, Entry> entries_;
	std::string buf_;
};

// A small file only an administrator changes (the THP mode, a sysctl):
// read at most once a period (5 s), its last text kept in between; read
// again at once when the path changes (another root).
class PeriodicFile {
public:
	struct Text {
		std::optional<std::string> data;
		int err = 0; // errno when data is nullopt
	};
	explicit PeriodicFile(std::chrono::steady_clock::duration period = std::chrono::seconds(5)) : period_(period) {}
	const Text &read(const std::string &path);

private:
	std::chrono::steady_clock::duration period_;
	std::string path_;
	bool read_ = false;
	std::chrono::steady_clock::time_point read_at_{};
	Text text_;
	FileCache file_{1};
};

} // namespace hwsig
