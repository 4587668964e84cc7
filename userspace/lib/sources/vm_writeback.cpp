#include "hwsig/vm_writeback.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "hwsig/fs.h"

namespace hwsig {

namespace {

bool has_word(const std::string &list, const std::string &word)
{
	std::istringstream in(list);
	for (std::string w; in >> w;)
		if (w == word)
			return true;
	return false;
}

std::string parent_of(const std::string &path)
{
	const auto slash = path.rfind('/');
	return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

} // namespace

VmWriteback vm_writeback(const std::string &root, int pid)
{
	VmWriteback w;
	const std::string proc = "/proc/" + std::to_string(pid);
	auto lines = read_file(join_path(root, proc + "/cgroup"));
	if (!lines.data) {
		w.not_attributed = "its cgroup could not be read";
		return w;
	}
	std::istringstream in(*lines.data);
	for (std::string line; std::getline(in, line);)
		if (line.rfind("0::", 0) == 0)
			w.cgroup = line.substr(3);
	if (w.cgroup.empty()) {
		w.not_attributed = "no cgroup v2 (writeback is charged to cgroups only under cgroup v2)";
		return w;
	}
	const std::string fs = join_path(root, "/sys/fs/cgroup");
	if (!path_exists(fs + "/cgroup.controllers")) {
		w.not_attributed = "cgroup v2 is not mounted at /sys/fs/cgroup (the memory and io controllers are "
				   "on cgroup v1, whose writeback is not charged per cgroup)";
		return w;
	}
	while (w.cgroup != "/" && read_trimmed(fs + w.cgroup + "/cgroup.type").value_or("") == "threaded")
		w.cgroup = parent_of(w.cgroup);
	if (w.cgroup == "/") {
		w.not_attributed = "it runs in the root cgroup, with the host's own processes";
		return w;
	}
	const std::string dir = fs + w.cgroup;
	auto controllers = read_trimmed(dir + "/cgroup.controllers");
	if (!controllers) {
		w.not_attributed = "its cgroup " + w.cgroup + " could not be read";
		return w;
	}
	std::string missing;
	for (const char *c : {"memory", "io"})
		if (!has_word(*controllers, c))
			missing += missing.empty() ? c : std::string(" and ") + c;
	if (!missing.empty()) {
		w.not_attributed = "its cgroup " + w.cgroup + " has no " + missing +
				   " controller (enable it in the parent's cgroup.subtree_control)";
		return w;
	}
	struct stat st;
	if (::stat(dir.c_str(), &st) != 0) {
		w.not_attributed = "its cgroup " + w.cgroup + " could not be read";
		return w;
	}
	w.cgroup_id = static_cast<std::uint64_t>(st.st_ino);
	return w;
}

std::vector<std::string> buffered_images(const std::string &root, int pid)
{
	std::vector<std::string> out;
	const std::string proc = join_path(root, "/proc/" + std::to_string(pid));
	for (const std::string &fd : list_dir(proc + "/fd")) {
		struct stat st;
		if (::stat((proc + "/fd/" + fd).c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
			continue;
		auto info = read_file(proc + "/fdinfo/" + fd, 64 << 10);
		if (!info.data)
			continue;
		const auto at = info.data->find("flags:");
		if (at == std::string::npos)
			continue;
		const unsigned long flags = std::strtoul(info.data->c_str() + at + 6, nullptr, 8);
		if ((flags & O_ACCMODE) != O_RDWR || (flags & O_DIRECT))
			continue;
		char target[4096];
		const ssize_t n = ::readlink((proc + "/fd/" + fd).c_str(), target, sizeof target - 1);
		out.push_back(n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "fd " + fd);
	}
	std::sort(out.begin(), out.end());
	out.erase(std::unique(out.begin(), out.end()), out.end());
	return out;
}

} // namespace hwsig
