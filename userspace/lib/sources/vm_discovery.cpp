// VM discovery from /proc (vm.h, vm_parse.h): which processes are QEMU/KVM
// guests, their names, vCPU threads, vhost workers and taps. The parsers are
// pure; discovery tolerates processes that vanish at any step.
// Documentation/vms.rst describes the rules.
#include "hwsig/vm_discovery.h"
#include "hwsig/vm_parse.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <climits>
#include <exception>
#include <iterator>
#include <map>
#include <set>

#include "hwsig/fd.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/proc_alive.h"

namespace hwsig::vmparse {

namespace {

bool all_digits(std::string_view s)
{
	return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// QemuOpts' get_opt_value(): up to the next single ',' with ",," read as a
// literal comma. Returns the value and the position of the terminating ','
// (or s.size()).
std::pair<std::string, std::size_t> opt_value(std::string_view s, std::size_t pos)
{
	std::string value;
	while (pos < s.size()) {
		char c = s[pos];
		if (c == ',') {
			if (pos + 1 < s.size() && s[pos + 1] == ',') {
				value += ',';
				pos += 2;
				continue;
			}
			break;
		}
		value += c;
		pos++;
	}
	return {value, pos};
}

// QEMU options that take an argument and whose argument could, in principle,
// be the literal string "-name" (a kernel command line, a file name...).
// Skipping them keeps "-append -name" from being read as a -name option.
// Options missing from this list only matter if their value is "-name".
constexpr std::string_view kOptionsWithArgument[] = {
	"append", "kernel", "initrd", "dtb", "bios", "L", "drive", "blockdev", "device", "netdev",
	"net", "nic", "object", "chardev", "machine", "M", "cpu", "accel", "smp", "m", "numa",
	"uuid", "qmp", "qmp-pretty", "monitor", "mon", "serial", "parallel", "debugcon", "global",
	"fw_cfg", "boot", "vnc", "display", "vga", "spice", "pidfile", "D", "d", "trace", "msg",
	"sandbox", "overcommit", "rtc", "incoming", "smbios", "loadvm", "k", "readconfig", "runas",
	"chroot", "run-with", "cdrom", "hda", "hdb", "hdc", "hdd", "fda", "fdb", "add-fd",
	"audiodev", "action",
};

bool takes_argument(std::string_view option)
{
	return std::find(std::begin(kOptionsWithArgument), std::end(kOptionsWithArgument), option) !=
	       std::end(kOptionsWithArgument);
}

} // namespace

std::vector<std::string> split_cmdline(std::string_view raw)
{
	std::vector<std::string> argv;
	std::size_t start = 0;
	while (start < raw.size()) {
		auto nul = raw.find('\0', start);
		if (nul == std::string_view::npos) {
			argv.emplace_back(raw.substr(start));
			break;
		}
		argv.emplace_back(raw.substr(start, nul - start));
		start = nul + 1;
	}
	return argv;
}

bool is_qemu_comm(std::string_view comm)
{
	return comm.starts_with("qemu-system-") || comm == "qemu-kvm" || comm == "kvm";
}

std::optional<std::string> parse_name_option(std::string_view s)
{
	std::optional<std::string> guest;
	std::size_t pos = 0;
	bool first = true;
	while (pos < s.size()) {
		std::size_t key_end = s.find_first_of("=,", pos);
		if (key_end == std::string_view::npos)
			key_end = s.size();
		std::string key;
		if (key_end == s.size() || s[key_end] == ',') {
			if (first) {
				// "-name web01,...": the implied first option is guest.
				auto [value, end] = opt_value(s, pos);
				guest = value;
				pos = end;
			} else {
				// A bare flag such as "debug-threads" (means =on).
				pos = key_end;
			}
		} else {
			key = std::string(s.substr(pos, key_end - pos));
			auto [value, end] = opt_value(s, key_end + 1);
			if (key == "guest")
				guest = value;
			pos = end;
		}
		if (pos < s.size() && s[pos] == ',')
			pos++;
		first = false;
	}
	return guest;
}

std::optional<std::string> parse_qemu_name(const std::vector<std::string> &argv)
{
	std::optional<std::string> name;
	std::size_t i = 1;
	while (i < argv.size()) {
		std::string_view arg = argv[i];
		if (arg.size() < 2 || arg[0] != '-') {
			i++; // a disk image given without an option
			continue;
		}
		std::string_view option = arg.substr(arg[1] == '-' ? 2 : 1);
		if (option == "name") {
			if (i + 1 >= argv.size())
				break;
			if (auto guest = parse_name_option(argv[i + 1]))
				name = std::move(guest);
			i += 2;
		} else if (takes_argument(option)) {
			i += 2;
		} else {
			i++;
		}
	}
	if (name && name->empty())
		return std::nullopt;
	return name;
}

std::optional<unsigned> parse_vcpu_comm(std::string_view comm)
{
	constexpr std::string_view prefix = "CPU ", suffix = "/KVM";
	if (!comm.starts_with(prefix) || !comm.ends_with(suffix) ||
	    comm.size() <= prefix.size() + suffix.size())
		return std::nullopt;
	auto digits = comm.substr(prefix.size(), comm.size() - prefix.size() - suffix.size());
	if (!all_digits(digits))
		return std::nullopt;
	auto n = parse_u64(digits);
	if (!n || *n > UINT_MAX)
		return std::nullopt;
	return static_cast<unsigned>(*n);
}

std::optional<int> parse_vhost_comm(std::string_view comm)
{
	constexpr std::string_view prefix = "vhost-";
	if (!comm.starts_with(prefix))
		return std::nullopt;
	auto digits = comm.substr(prefix.size());
	if (!all_digits(digits))
		return std::nullopt;
	auto n = parse_u64(digits);
	if (!n || *n == 0 || *n > INT_MAX)
		return std::nullopt;
	return static_cast<int>(*n);
}

std::optional<std::string> parse_tun_fdinfo(std::string_view fdinfo)
{
	for (auto line : split_lines(fdinfo)) {
		if (!line.starts_with("iff:"))
			continue;
		auto name = trim(line.substr(4));
		// dev_valid_name(): at most IFNAMSIZ-1 bytes, no '/', ':' or
		// whitespace. Anything else is not an interface name.
		if (name.empty() || name.size() > 15 || name == "." || name == "..")
			return std::nullopt;
		for (unsigned char c : name)
			if (c <= ' ' || c == '/' || c == ':' || c == 0x7f)
				return std::nullopt;
		return std::string(name);
	}
	return std::nullopt;
}

std::optional<unsigned> parse_vcpu_fd_target(std::string_view target)
{
	constexpr std::string_view prefix = "anon_inode:kvm-vcpu:";
	if (!target.starts_with(prefix))
		return std::nullopt;
	auto digits = target.substr(prefix.size());
	if (!all_digits(digits))
		return std::nullopt;
	auto n = parse_u64(digits);
	if (!n || *n > UINT_MAX)
		return std::nullopt;
	return static_cast<unsigned>(*n);
}

std::string printable_name(std::string_view name)
{
	std::string out(name);
	for (auto &c : out)
		if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
			c = '_';
	return out;
}

} // namespace hwsig::vmparse

// ---- discovery: the I/O side ----

namespace hwsig::vmparse {

// A QEMU as one listing read it.
struct Candidate {
	VmDetails details;
	std::vector<std::pair<unsigned, int>> vcpus; // (vCPU index, tid)
	std::set<int> vhost_tids;
	std::set<std::string> taps;
	std::set<unsigned> vcpu_fd_indexes;
};

namespace {

std::optional<int> parse_pid(std::string_view s)
{
	if (!all_digits(s))
		return std::nullopt;
	auto n = parse_u64(s);
	if (!n || *n == 0 || *n > INT_MAX)
		return std::nullopt;
	return static_cast<int>(*n);
}

// A small file in one read(): every /proc/PID/comm is read on each
// discovery, and read_file()'s extra read() for EOF would add a third to
// the syscalls of the scan. comm is at most 16 bytes.
std::optional<std::string> read_small(const std::string &path)
{
	Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		return std::nullopt;
	char buf[4096];
	ssize_t n;
	do
		n = ::read(fd.get(), buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return std::nullopt;
	return std::string(buf, static_cast<std::size_t>(n));
}

// comm without its newline; comm may hold spaces ("CPU 0/KVM"). Through
// kept fds when a cache is given (VmScanner): a process that exited makes
// its fd fail with ESRCH and the path is opened afresh, so a reused pid
// reads the new process's comm.
std::optional<std::string> read_comm(const std::string &path, FileCache *cache)
{
	std::optional<std::string> comm;
	if (cache) {
		auto r = cache->read(path, 4096);
		if (r.data)
			comm.emplace(*r.data);
	} else {
		comm = read_small(path);
	}
	if (!comm)
		return std::nullopt;
	if (!comm->empty() && comm->back() == '\n')
		comm->pop_back();
	return comm;
}

std::optional<std::string> read_link(const std::string &path)
{
	char buf[PATH_MAX];
	ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
	if (n < 0 || static_cast<std::size_t>(n) >= sizeof(buf))
		return std::nullopt;
	return std::string(buf, static_cast<std::size_t>(n));
}

// list_dir() cannot tell "empty" from "not allowed"; /proc/PID/fd of another
// user's process is EACCES for an unprivileged reader.
bool dir_readable(const std::string &path)
{
	DIR *d = ::opendir(path.c_str());
	if (!d)
		return false;
	::closedir(d);
	return true;
}

// Threads of a QEMU process: vCPUs, in-process vhost workers (kernel 6.4+)
// and every tid (vhost kthreads of older kernels name the thread that set
// the owner, normally the main thread). False if the process vanished.
bool scan_threads(const std::string &pid_dir, Candidate &c, std::map<int, std::size_t> &owner_of_tid,
		  std::size_t index, FileCache *comms)
{
	auto tids = list_dir(pid_dir + "/task");
	bool any = false;
	for (const auto &name : tids) {
		auto tid = parse_pid(name);
		if (!tid)
			continue;
		any = true;
		owner_of_tid.emplace(*tid, index);
		auto comm = read_comm(pid_dir + "/task/" + name + "/comm", comms);
		if (!comm)
			continue; // thread exited meanwhile
		if (auto cpu = parse_vcpu_comm(*comm))
			c.vcpus.emplace_back(*cpu, *tid);
		else if (parse_vhost_comm(*comm))
			c.vhost_tids.insert(*tid);
	}
	return any;
}

void scan_fds(const std::string &pid_dir, Candidate &c)
{
	const std::string fd_dir = pid_dir + "/fd";
	auto fds = list_dir(fd_dir);
	if (fds.empty() && !dir_readable(fd_dir)) {
		c.details.fds_readable = false;
		return;
	}
	for (const auto &fd : fds) {
		auto target = read_link(fd_dir + "/" + fd);
		if (!target)
			continue; // closed meanwhile, or not allowed
		if (*target == "/dev/net/tun") {
			auto info = read_file(pid_dir + "/fdinfo/" + fd, 64 * 1024);
			if (!info.data)
				continue;
			if (auto tap = parse_tun_fdinfo(*info.data))
				c.taps.insert(std::move(*tap));
		} else if (auto vcpu = parse_vcpu_fd_target(*target)) {
			c.vcpu_fd_indexes.insert(*vcpu);
		}
	}
}

// Two guests may carry the same -name (plain QEMU does not enforce
// uniqueness, libvirt does); scopes must stay distinct.
void make_names_unique(std::vector<Candidate> &found)
{
	std::map<std::string, unsigned> uses;
	for (const auto &c : found)
		uses[c.details.vm.name]++;
	for (auto &c : found)
		if (uses[c.details.vm.name] > 1)
			c.details.vm.name += "@" + std::to_string(c.details.vm.pid);
}

} // namespace

// What a VmScanner keeps of each QEMU it read in full (QemuMemo in
// vm_discovery.h): the candidate as read, before 6.1-style vhost kthreads
// were added to it, and every tid it had.
struct QemuMemo::Entry {
	std::uint64_t ino = 0;
	nlink_t links = 0;       // of /proc/PID/task when it was read
	unsigned reads = 0;      // full reads with these links
	unsigned seen_listing = 0;
	Candidate candidate;
	std::vector<int> tids;
};

QemuMemo::QemuMemo() = default;
QemuMemo::~QemuMemo() = default;

const QemuMemo::Entry *QemuMemo::reuse(int pid, std::uint64_t ino, nlink_t links)
{
	auto it = entries_.find(pid);
	if (it == entries_.end())
		return nullptr;
	Entry &e = *it->second;
	if (e.ino != ino || e.links != links || e.reads < 2 ||
	    (listing_ + static_cast<unsigned>(pid)) % kDeepEvery == 0)
		return nullptr;
	e.seen_listing = listing_;
	return &e;
}

void QemuMemo::note(int pid, std::uint64_t ino, nlink_t links, const Candidate &c, const std::map<int, std::size_t> &tids)
{
	auto &slot = entries_[pid];
	if (!slot)
		slot = std::make_unique<Entry>();
	Entry &e = *slot;
	if (e.ino != ino || e.links != links)
		e.reads = 0;
	e.ino = ino;
	e.links = links;
	e.reads++;
	e.seen_listing = listing_;
	e.candidate = c;
	e.tids.clear();
	for (const auto &[tid, index] : tids)
		e.tids.push_back(tid);
}

void QemuMemo::begin_listing()
{
	++listing_;
}

void QemuMemo::end_listing()
{
	for (auto it = entries_.begin(); it != entries_.end();)
		it = it->second->seen_listing == listing_ ? std::next(it) : entries_.erase(it);
}

namespace {

// proc_dir: <root>/proc kept open by a VmScanner (rewound here), or null.
struct ProcEntry {
	std::string name;
	std::uint64_t ino = 0;
};

// memo, qemus: only with proc_dir (a VmScanner's), whose entries carry
// inodes.
std::vector<VmDetails> discover(const std::string &root, FileCache *comms, DIR *proc_dir, NonVmMemo *memo,
				QemuMemo *qemus)
{
	const std::string proc = join_path(root, "proc");
	std::vector<Candidate> found;
	std::map<int, std::size_t> owner_of_tid;              // tid of a QEMU -> index in found
	std::vector<std::pair<int, int>> vhost_kthreads;       // (pid, owner tid from its name)

	std::vector<ProcEntry> entries;
	try {
		if (proc_dir) {
			// The order does not matter: the result is sorted below.
			::rewinddir(proc_dir);
			while (struct dirent *de = ::readdir(proc_dir))
				if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
					entries.push_back({de->d_name, static_cast<std::uint64_t>(de->d_ino)});
		} else {
			for (auto &name : list_dir(proc))
				entries.push_back({std::move(name), 0});
			memo = nullptr;
			qemus = nullptr;
		}
	} catch (const std::exception &) {
		return {};
	}
	for (const auto &entry : entries) {
		auto pid = parse_pid(entry.name);
		if (!pid)
			continue;
		if (memo) {
			memo->seen(*pid, entry.ino);
			int owner = 0;
			if (memo->known(*pid, entry.ino, owner)) {
				if (owner)
					vhost_kthreads.emplace_back(*pid, owner);
				continue;
			}
		}
		const std::string pid_dir = proc + "/" + entry.name;
		try {
			// comm decides: it is one small read, while reading another
			// process's cmdline takes that process's mmap lock, which is
			// slow for busy processes. Only candidates are read further.
			auto comm = read_comm(pid_dir + "/comm", comms);
			if (!comm) {
				if (memo)
					memo->forget(*pid);
				continue; // gone
			}
			if (!is_qemu_comm(*comm)) {
				// A kernel 6.1-style vhost worker is a kthread of its own.
				auto owner = parse_vhost_comm(*comm);
				if (owner)
					vhost_kthreads.emplace_back(*pid, *owner);
				if (memo)
					memo->note(*pid, entry.ino, owner ? *owner : 0);
				continue;
			}
			if (memo)
				memo->forget(*pid); // a QEMU now: never skipped
			// A QEMU read in full before, with as many threads now:
			// what it had (its threads, names and fds) without
			// reading them again (QemuMemo).
			struct stat task_dir;
			const bool links_known = qemus && ::stat((pid_dir + "/task").c_str(), &task_dir) == 0;
			if (links_known) {
				if (const auto *known = qemus->reuse(*pid, entry.ino, task_dir.st_nlink)) {
					for (int tid : known->tids)
						owner_of_tid.emplace(tid, found.size());
					found.push_back(known->candidate);
					continue;
				}
			}
			if (!process_alive(root, *pid))
				continue; // gone, or a zombie whose guest is no more
			auto cmdline = read_file(pid_dir + "/cmdline");
			std::vector<std::string> argv;
			if (cmdline.data)
				argv = split_cmdline(*cmdline.data);
			if (*comm == "kvm" && argv.empty())
				continue; // a kernel thread, not the old "kvm" QEMU binary
			Candidate c;
			c.details.vm.pid = *pid;
			if (auto name = parse_qemu_name(argv))
				c.details.vm.name = printable_name(*name);
			else
				c.details.vm.name = "pid-" + std::to_string(*pid);
			std::map<int, std::size_t> tids;
			if (!scan_threads(pid_dir, c, tids, found.size(), comms))
				continue; // vanished between reading cmdline and task/
			scan_fds(pid_dir, c);
			if (links_known)
				qemus->note(*pid, entry.ino, task_dir.st_nlink, c, tids);
			owner_of_tid.insert(tids.begin(), tids.end());
			found.push_back(std::move(c));
		} catch (const std::exception &) {
			// An unreadable or vanishing process is skipped, never fatal.
			continue;
		}
	}

	for (auto [pid, owner] : vhost_kthreads) {
		auto it = owner_of_tid.find(owner);
		if (it != owner_of_tid.end())
			found[it->second].vhost_tids.insert(pid);
	}
	make_names_unique(found);

	std::vector<VmDetails> out;
	out.reserve(found.size());
	for (auto &c : found) {
		std::sort(c.vcpus.begin(), c.vcpus.end());
		for (auto [cpu, tid] : c.vcpus)
			c.details.vm.vcpu_tids.push_back(tid);
		c.details.vm.vhost_tids.assign(c.vhost_tids.begin(), c.vhost_tids.end());
		c.details.vm.taps.assign(c.taps.begin(), c.taps.end());
		c.details.vcpu_fds = static_cast<unsigned>(c.vcpu_fd_indexes.size());
		out.push_back(std::move(c.details));
	}
	std::sort(out.begin(), out.end(), [](const VmDetails &a, const VmDetails &b) {
		return a.vm.name != b.vm.name ? a.vm.name < b.vm.name : a.vm.pid < b.vm.pid;
	});
	return out;
}

} // namespace

std::vector<VmDetails> discover_vm_details(const std::string &root)
{
	return discover(root, nullptr, nullptr, nullptr, nullptr);
}

} // namespace hwsig::vmparse

namespace hwsig {

std::vector<Vm> discover_vms(const std::string &root)
{
	std::vector<Vm> vms;
	for (auto &d : vmparse::discover_vm_details(root))
		vms.push_back(std::move(d.vm));
	return vms;
}

bool NonVmMemo::known(int pid, std::uint64_t ino, int &owner) const
{
	if (scan_ % kFullEvery == 0)
		return false;
	auto it = entries_.find(pid);
	if (it == entries_.end() || it->second.ino != ino || it->second.reads < 2)
		return false;
	owner = it->second.owner;
	return true;
}

void NonVmMemo::note(int pid, std::uint64_t ino, int owner)
{
	// seen() dropped an entry of a reused pid: a same-inode entry is this
	// process's, read again.
	Entry &e = entries_[pid];
	e.ino = ino;
	e.owner = owner;
	e.reads++;
	e.seen_scan = scan_;
}

void NonVmMemo::forget(int pid)
{
	entries_.erase(pid);
}

void NonVmMemo::seen(int pid, std::uint64_t ino)
{
	auto it = entries_.find(pid);
	if (it == entries_.end())
		return;
	if (it->second.ino != ino)
		entries_.erase(it); // the pid was reused: a new process
	else
		it->second.seen_scan = scan_;
}

void NonVmMemo::begin_scan()
{
	++scan_;
}

void NonVmMemo::end_scan()
{
	for (auto it = entries_.begin(); it != entries_.end();)
		it = it->second.seen_scan == scan_ ? std::next(it) : entries_.erase(it);
}

// comm fds kept: at most 512 (kept_fd_bound() leaves the rest of the
// fd limit to sockets, perf events and BPF objects).
constexpr std::size_t kMaxCommFds = 512;

VmScanner::VmScanner(std::string root) : VmScanner(std::move(root), kept_fd_bound(kMaxCommFds)) {}

VmScanner::VmScanner(std::string root, std::size_t max_comm_fds)
	: root_(std::move(root)), comms_(max_comm_fds), qemus_(std::make_unique<vmparse::QemuMemo>())
{
}

VmScanner::~VmScanner()
{
	if (proc_dir_)
		::closedir(proc_dir_);
}

std::optional<std::uint64_t> VmScanner::last_pid()
{
	// "0.05 0.10 0.09 1/123 4567\n": the last field.
	auto r = loadavg_.read(join_path(root_, "proc/loadavg"));
	if (!r.data)
		return std::nullopt;
	std::string_view text = *r.data;
	while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
		text.remove_suffix(1);
	const auto space = text.rfind(' ');
	if (space == std::string_view::npos)
		return std::nullopt;
	return parse_u64(text.substr(space + 1));
}

// procfs lists pid P at directory position P + 258 (fs/proc/base.c:
// TGID_OFFSET, FIRST_PROCESS_ENTRY 256 plus "self" and "thread-self"), and
// a seek to a pid that is gone starts at the next one. The layout is
// checked on every use: an entry at or below the pid sought turns this off.
constexpr std::uint64_t kProcTgidOffset = 258;

// A busy host forks all the time (cron, ssh, agents), so "a pid was
// allocated" is nearly always true, and listing /proc costs the kernel a
// dentry lookup per process: on a host with thousands of processes that is
// most of the daemon's CPU. Processes started since the last listing have
// pids above it (until the pid counter wraps, which a smaller last pid
// shows), so only they are read here, from the kept directory. A QEMU
// forked by libvirt execs after its fork: each quick check reads every
// newcomer again until the next listing, which comes at least every
// NonVmMemo::kFullEvery scans.
bool VmScanner::newcomers_are_not_vms(std::uint64_t listed_last, std::uint64_t allocated)
{
	if (!proc_dir_ || !proc_seeks_by_pid_)
		return false;
	const std::string proc = join_path(root_, "proc");
	::seekdir(proc_dir_, static_cast<long>(kProcTgidOffset + listed_last + 1));
	errno = 0;
	while (struct dirent *de = ::readdir(proc_dir_)) {
		auto pid = vmparse::parse_pid(de->d_name);
		if (!pid || static_cast<std::uint64_t>(*pid) <= listed_last) {
			proc_seeks_by_pid_ = false; // not the layout above: list in full from now on
			return false;
		}
		// Pids are handed out upwards from the last one: every process
		// started since the listing is in (listed_last, allocated]. Above
		// allocated are processes older than the pid counter's last wrap
		// (most of them, on a host up for long), or ones started after
		// allocated was read, which the next scan checks.
		if (static_cast<std::uint64_t>(*pid) > allocated)
			break;
		++newcomer_reads_;
		auto comm = vmparse::read_comm(proc + "/" + de->d_name + "/comm", nullptr);
		if (!comm)
			continue; // exited already
		if (vmparse::is_qemu_comm(*comm) || vmparse::parse_vhost_comm(*comm))
			return false;
	}
	if (errno != 0)
		return false;
	++quick_checks_;
	return true;
}

bool VmScanner::listed_vms_unchanged() const
{
	// procfs works a task directory's link count out at each stat, from
	// the process as it is now (2 + its threads); one that exited no
	// longer has its threads.
	for (const auto &t : listed_tasks_) {
		struct stat st;
		// No fd kept (the fd limit): the path, as before.
		const int got = t.dir ? ::fstat(t.dir.get(), &st)
				      : ::stat(join_path(root_, "proc/" + std::to_string(t.pid) + "/task").c_str(), &st);
		if (got != 0 || st.st_nlink != t.links)
			return false; // exited, or a thread came or went
	}
	return true;
}

std::vector<Vm> VmScanner::scan()
{
	memo_.begin_scan();
	// Read before listing: a process forked after this read changes it,
	// so the next scan lists again.
	const auto allocated = last_pid();
	if (allocated && listed_last_pid_ && !memo_.full() && listed_vms_unchanged()) {
		if (*listed_last_pid_ == *allocated)
			return listed_;
		if (*listed_last_pid_ < *allocated && newcomers_are_not_vms(*listed_last_pid_, *allocated))
			return listed_;
	}
	std::vector<Vm> vms;
	// /proc stays open between scans (rewound by each): no open, buffer
	// allocation and close per scan. Opened again after a failure, or when
	// the path names another directory now (a tree replaced under a test
	// root; a mount on top).
	const std::string proc = join_path(root_, "proc");
	if (proc_dir_) {
		struct stat kept, now;
		if (::fstat(::dirfd(proc_dir_), &kept) != 0 || ::stat(proc.c_str(), &now) != 0 ||
		    kept.st_dev != now.st_dev || kept.st_ino != now.st_ino) {
			::closedir(proc_dir_);
			proc_dir_ = nullptr;
		}
	}
	if (!proc_dir_) {
		proc_dir_ = ::opendir(proc.c_str());
		struct statfs fs;
		proc_seeks_by_pid_ = proc_dir_ && ::fstatfs(::dirfd(proc_dir_), &fs) == 0 &&
				     fs.f_type == PROC_SUPER_MAGIC;
	}
	qemus_->begin_listing();
	auto details = vmparse::discover(root_, &comms_, proc_dir_, proc_dir_ ? &memo_ : nullptr,
					 proc_dir_ ? qemus_.get() : nullptr);
	memo_.end_scan();
	qemus_->end_listing();
	++listings_;
	// Processes and threads not read in this scan are gone or settled:
	// close theirs.
	comms_.sweep();
	for (auto &d : details)
		vms.push_back(std::move(d.vm));
	listed_last_pid_ = allocated;
	listed_tasks_.clear();
	for (const auto &vm : vms) {
		struct stat st;
		const std::string task = join_path(root_, "proc/" + std::to_string(vm.pid) + "/task");
		Fd dir(::open(task.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		const bool fd_limit = !dir && (errno == EMFILE || errno == ENFILE);
		if (dir ? ::fstat(dir.get(), &st) != 0 : (!fd_limit || ::stat(task.c_str(), &st) != 0)) {
			listed_last_pid_.reset(); // gone already: list again next time
			listed_tasks_.clear();
			break;
		}
		listed_tasks_.push_back({vm.pid, std::move(dir), st.st_nlink});
	}
	listed_ = vms;
	return vms;
}

} // namespace hwsig
