#include "hwsig/fs.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwsig/fd.h"
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

} // namespace hwsig
