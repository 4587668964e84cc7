#include "hwsig/fs.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "hwsig/fd.h"
#include "hwsig/error.h"
#include "hwsig/parse.h"

namespace hwsig {

std::string join_path(std::string_view root, std::string_view rel)
{
	std::string out(root);
	while (!out.empty() && out.back() == '/')
		out.pop_back();
	if (rel.empty() || rel.front() != '/')
		out.push_back('/');
	out.append(rel);
	return out;
}

FileRead read_file(const std::string &path, std::size_t max_bytes)
{
	FileRead r;
	Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd) {
		r.err = errno;
		return r;
	}
	// Pseudo-files report size 0: read until EOF in page-sized steps.
	std::string data;
	char buf[4096];
	for (;;) {
		ssize_t n = ::read(fd.get(), buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r.err = errno;
			return r;
		}
		if (n == 0)
			break;
		if (data.size() + static_cast<std::size_t>(n) > max_bytes) {
			r.err = EFBIG;
			return r;
		}
		data.append(buf, static_cast<std::size_t>(n));
	}
	r.data = std::move(data);
	return r;
}

std::vector<std::string> list_dir(const std::string &path, std::string_view prefix)
{
	std::vector<std::string> names;
	DIR *dir = ::opendir(path.c_str());
	if (!dir)
		return names;
	while (struct dirent *de = ::readdir(dir)) {
		std::string_view name(de->d_name);
		if (name == "." || name == "..")
			continue;
		if (!prefix.empty() && name.substr(0, prefix.size()) != prefix)
			continue;
		names.emplace_back(name);
	}
	::closedir(dir);
	std::sort(names.begin(), names.end());
	return names;
}

bool path_exists(const std::string &path)
{
	struct stat st;
	return ::stat(path.c_str(), &st) == 0;
}

std::optional<std::string> read_trimmed(const std::string &path)
{
	auto r = read_file(path, 64 * 1024);
	if (!r.data)
		return std::nullopt;
	return std::string(trim(*r.data));
}

// ---- FileCache ----

std::size_t kept_fd_bound(std::size_t most)
{
	struct rlimit rl;
	if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return most;
	return std::min<std::size_t>(most, static_cast<std::size_t>(rl.rlim_cur / 4));
}

namespace {

bool same_file(const struct stat &st, std::uint64_t dev, std::uint64_t ino)
{
	return static_cast<std::uint64_t>(st.st_dev) == dev && static_cast<std::uint64_t>(st.st_ino) == ino;
}

} // namespace

FileCache::FileCache(std::size_t max_open) : max_open_(max_open) {}

int FileCache::read_whole(int fd, std::size_t max_bytes, std::size_t &len, bool one_show, bool seq_file)
{
	// seq_file hands out at most a page per read: read on to EOF (0), at
	// increasing offsets, as read() would. A sysfs attribute is one show()
	// of at most a page: a read that did not fill the buffer had it all.
	// A procfs seq_file read stops short of the buffer only at the end or
	// when its next record does not fit in its page: with records under
	// half a page (every procfs file hwsig reads), a short read of less
	// than half a page was the last one, and the EOF read is saved.
	static const std::size_t half_page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) / 2;
	len = 0;
	if (buf_.size() < 4096)
		buf_.resize(4096);
	for (;;) {
		if (len == buf_.size())
			buf_.resize(std::min(buf_.size() * 2, max_bytes + 1));
		const std::size_t want = buf_.size() - len;
		ssize_t n = ::pread(fd, buf_.data() + len, want, static_cast<off_t>(len));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			return 0;
		len += static_cast<std::size_t>(n);
		if (len > max_bytes)
			return EFBIG;
		if (one_show && len < buf_.size())
			return 0;
		if (seq_file && static_cast<std::size_t>(n) < want && static_cast<std::size_t>(n) < half_page)
			return 0;
	}
}

FileCache::View FileCache::read(const std::string &path, std::size_t max_bytes)
{
	auto it = entries_.find(path);
	if (it != entries_.end()) {
		Entry &e = it->second;
		bool valid = true;
		if (!e.pseudo) {
			struct stat st;
			valid = ::stat(path.c_str(), &st) == 0 && same_file(st, e.dev, e.ino);
		}
		if (valid) {
			std::size_t len = 0;
			if (read_whole(e.fd.get(), max_bytes, len, e.one_show, e.seq_file) == 0 && len > 0) {
				e.used = ++tick_;
				View v;
				v.data = std::string_view(buf_.data(), len);
				return v;
			}
		}
		// Gone, replaced, failing or empty: what a fresh open says counts.
		entries_.erase(it);
	}
	return fresh(path, max_bytes);
}

FileCache::View FileCache::fresh(const std::string &path, std::size_t max_bytes)
{
	View v;
	Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd) {
		v.err = errno;
		return v;
	}
	std::size_t len = 0;
	if (int err = read_whole(fd.get(), max_bytes, len, false, false)) {
		v.err = err;
		return v;
	}
	v.data = std::string_view(buf_.data(), len);
	if (max_open_ == 0)
		return v;
	Entry e;
	struct stat st;
	struct statfs sfs;
	if (::fstat(fd.get(), &st) != 0 || ::fstatfs(fd.get(), &sfs) != 0)
		return v;
	e.dev = static_cast<std::uint64_t>(st.st_dev);
	e.ino = static_cast<std::uint64_t>(st.st_ino);
	e.pseudo = sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC;
	// sysfs gives its (text) attributes the size of a page; binary
	// attributes, read by the driver piecewise, have their own.
	static const long page = ::sysconf(_SC_PAGESIZE);
	e.one_show = sfs.f_type == SYSFS_MAGIC && S_ISREG(st.st_mode) && st.st_size == page;
	e.seq_file = sfs.f_type == PROC_SUPER_MAGIC && S_ISREG(st.st_mode);
	e.fd = std::move(fd);
	keep(path, std::move(e));
	return v;
}

void FileCache::keep(const std::string &path, Entry entry)
{
	// Past the bound, files are read uncached (no eviction: a working set
	// larger than the bound would otherwise open and close on every read,
	// plus the search for a victim).
	if (entries_.size() >= max_open_)
		return;
	entry.used = ++tick_;
	entries_.emplace(path, std::move(entry));
}

void FileCache::revalidate()
{
	for (auto it = entries_.begin(); it != entries_.end();) {
		struct stat st;
		if (::stat(it->first.c_str(), &st) != 0 || !same_file(st, it->second.dev, it->second.ino))
			it = entries_.erase(it);
		else
			++it;
	}
}

void FileCache::sweep()
{
	for (auto it = entries_.begin(); it != entries_.end();) {
		if (it->second.used <= swept_at_)
			it = entries_.erase(it);
		else
			++it;
	}
	swept_at_ = tick_;
}

const PeriodicFile::Text &PeriodicFile::read(const std::string &path)
{
	const auto now = std::chrono::steady_clock::now();
	if (!read_ || path != path_ || now - read_at_ >= period_) {
		auto r = file_.read(path);
		text_.data = r.data ? std::optional<std::string>(std::string(*r.data)) : std::nullopt;
		text_.err = r.err;
		path_ = path;
		read_ = true;
		read_at_ = now;
	}
	return text_;
}

void FileCache::clear()
{
	entries_.clear();
}

void write_file_atomically(const std::string &path, std::string_view bytes, unsigned mode)
{
	std::string tmp = path + ".tmp-XXXXXX";
	Fd fd(::mkstemp(tmp.data()));
	if (!fd)
		throw_errno("cannot create a file beside " + path);
	const char *p = bytes.data();
	std::size_t left = bytes.size();
	int err = 0;
	while (left > 0 && !err) {
		ssize_t n = ::write(fd.get(), p, left);
		if (n < 0 && errno != EINTR) {
			err = errno;
		} else if (n > 0) {
			p += n;
			left -= static_cast<std::size_t>(n);
		}
	}
	if (!err && ::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0)
		err = errno;
	if (!err && ::fsync(fd.get()) != 0)
		err = errno;
	if (!err && ::rename(tmp.c_str(), path.c_str()) != 0)
		err = errno;
	if (err) {
		::unlink(tmp.c_str());
		throw Error("writing " + path, err);
	}
}

} // namespace hwsig
