// Reader of bpf/vhost.bpf.c: picks the program set the kernel can attach
// (fentry, else kprobes), loads it, reads the queue map.
#include "vhost_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <cstring>
#include <fstream>
#include <set>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig_vhost.h"
#include "skeleton.h"
#include "vhost.skel.h"

namespace hwsig {

namespace {

const SkeletonOps<hwsig_vhost_bpf> kVhostOps = {
	"vhost",
	hwsig_vhost_bpf__open_opts,
	hwsig_vhost_bpf__load,
	hwsig_vhost_bpf__attach,
	hwsig_vhost_bpf__destroy,
};

static_assert(sizeof(hwsig_vhost_key) == 12, "hwsig_vhost_key has padding holes");

// The functions hooked and the module each must come from.
struct Hook {
	const char *function;
	const char *module;
};
constexpr Hook kHooks[] = {
	{"handle_tx", "vhost_net"},
	{"handle_rx", "vhost_net"},
	{"vhost_enable_notify", "vhost"},
};

// libbpf resolves fentry targets and kprobes by name, vmlinux first: a
// function of the same name elsewhere would be hooked instead. Returns why
// a hook is ambiguous or missing, or "" (also when kallsyms is unreadable:
// then the attach itself will tell).
std::string check_hooks(const std::string &root)
{
	std::ifstream in(join_path(root, "proc/kallsyms"));
	if (!in)
		return "";
	std::map<std::string, std::set<std::string>> where; // function -> modules ("vmlinux")
	std::string line;
	while (std::getline(in, line)) {
		// "ffffffffc0a01234 t handle_rx\t[vhost_net]"
		std::size_t sp1 = line.find(' ');
		if (sp1 == std::string::npos || sp1 + 3 > line.size())
			continue;
		std::size_t name_at = sp1 + 3;
		std::size_t end = line.find_first_of("\t ", name_at);
		std::string_view name(line.data() + name_at, (end == std::string::npos ? line.size() : end) - name_at);
		for (const Hook &h : kHooks) {
			if (name != h.function)
				continue;
			std::string module = "vmlinux";
			if (end != std::string::npos) {
				std::size_t lb = line.find('[', end), rb = line.find(']', end);
				if (lb != std::string::npos && rb != std::string::npos && rb > lb)
					module = line.substr(lb + 1, rb - lb - 1);
			}
			where[h.function].insert(module);
		}
	}
	for (const Hook &h : kHooks) {
		const auto &mods = where[h.function];
		if (!mods.count(h.module))
			return std::string(h.function) + " is not a function of " + h.module +
			       " in /proc/kallsyms (inlined by this kernel's build?)";
		if (mods.size() > 1) {
			std::string others;
			for (const auto &m : mods)
				if (m != h.module)
					others += (others.empty() ? "" : ", ") + m;
			return std::string(h.function) + " is also defined in " + others +
			       ": attaching by name would be ambiguous";
		}
	}
	return "";
}

Skeleton<hwsig_vhost_bpf> load(VhostAttach how)
{
	return Skeleton<hwsig_vhost_bpf>(kVhostOps, [how](hwsig_vhost_bpf &s) {
		bool fentry = how == VhostAttach::Fentry;
		bpf_program__set_autoload(s.progs.fe_handle_tx, fentry);
		bpf_program__set_autoload(s.progs.fe_handle_rx, fentry);
		bpf_program__set_autoload(s.progs.fx_handle_rx, fentry);
		bpf_program__set_autoload(s.progs.fe_enable_notify, fentry);
		bpf_program__set_autoload(s.progs.kp_handle_tx, !fentry);
		bpf_program__set_autoload(s.progs.kp_handle_rx, !fentry);
		bpf_program__set_autoload(s.progs.krp_handle_rx, !fentry);
		bpf_program__set_autoload(s.progs.kp_enable_notify, !fentry);
	});
}

std::string strip_prefix(std::string s, std::string_view prefix)
{
	if (s.rfind(prefix, 0) == 0)
		s.erase(0, prefix.size());
	return s;
}

VhostQueueCounts to_counts(const hwsig_vhost_stats &s)
{
	VhostQueueCounts c;
	c.depth = Histogram::from_slots(Histogram::Layout::LinearLog2, s.depth, HWSIG_VHOST_SLOTS);
	c.samples = s.samples;
	c.handled = s.handled;
	c.stalls = s.stalls;
	c.read_errors = s.read_errors;
	c.viommu = s.viommu;
	return c;
}

} // namespace

const char *vhost_attach_name(VhostAttach how)
{
	switch (how) {
	case VhostAttach::Fentry:
		return "fentry";
	case VhostAttach::Kprobe:
		return "kprobe";
	default:
		return "auto";
	}
}

struct VhostCollector::Impl {
	Skeleton<hwsig_vhost_bpf> skel;
	VhostAttach how;
};

VhostCollector::VhostCollector(VhostAttach how, const std::string &root)
{
	if (auto why = vhost_not_loaded_reason(root))
		throw Error("BPF vhost: " + *why, ENOENT);
	// The vhost structures are CO-RE-relocated against the modules' BTF.
	for (const char *module : {"vhost", "vhost_net"})
		if (!path_exists(join_path(root, std::string("sys/kernel/btf/") + module)))
			throw Error(std::string("BPF vhost: no BTF for module ") + module + " (/sys/kernel/btf/" +
					    module + ", CONFIG_DEBUG_INFO_BTF_MODULES): cannot relocate the vhost "
					    "structures",
				    ENOENT);
	if (std::string why = check_hooks(root); !why.empty())
		throw Error("BPF vhost: " + why, ENOTUNIQ);
	if (how != VhostAttach::Auto) {
		impl_ = std::make_unique<Impl>(Impl{load(how), how});
		return;
	}
	// fentry/fexit where the kernel has them (cheapest), else kprobes.
	std::string tried;
	int err = 0;
	for (VhostAttach set : {VhostAttach::Fentry, VhostAttach::Kprobe}) {
		try {
			impl_ = std::make_unique<Impl>(Impl{load(set), set});
			return;
		} catch (const Error &e) {
			// Not root: every set fails alike; say it once.
			if ((e.err() == EACCES && bpf_detail::lacks_privilege(EACCES)) ||
			    (e.err() == EPERM && set == VhostAttach::Kprobe && err == EPERM))
				throw;
			err = e.err();
			std::string text = strip_prefix(e.what(), "BPF vhost: ");
			// The last set's errno text comes once, at the very end.
			std::string tail = std::string(": ") + std::strerror(err);
			if (set == VhostAttach::Kprobe && err && text.size() > tail.size() &&
			    text.compare(text.size() - tail.size(), tail.size(), tail) == 0)
				text.erase(text.size() - tail.size());
			tried += std::string(tried.empty() ? "" : "; ") + vhost_attach_name(set) + ": " + text;
		}
	}
	throw Error("BPF vhost: no program set attached (" + tried + ")", err);
}

VhostCollector::~VhostCollector() = default;
VhostCollector::VhostCollector(VhostCollector &&) noexcept = default;
VhostCollector &VhostCollector::operator=(VhostCollector &&) noexcept = default;

VhostAttach VhostCollector::attached_as() const
{
	return impl_->how;
}

std::map<VhostQueueKey, VhostQueueCounts> VhostCollector::queues() const
{
	std::map<VhostQueueKey, VhostQueueCounts> out;
	const struct bpf_map *map = impl_->skel->maps.queues;
	hwsig_vhost_key key{}, next{};
	hwsig_vhost_stats stats{};
	const void *prev = nullptr;
	// Entries are only ever added by the programs (and deleted by forget()):
	// a walk sees each queue present at its start exactly once.
	while (bpf_map__get_next_key(map, prev, &next, sizeof next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof key, &stats, sizeof stats, 0)) {
			if (errno == ENOENT)
				continue; // forgotten meanwhile
			throw_errno("BPF vhost: reading the queue map");
		}
		VhostQueueKey k;
		k.owner_tgid = key.owner_tgid;
		k.worker_tid = key.worker_tid;
		k.queue = key.queue;
		k.tx = key.dir == HWSIG_VHOST_TX;
		out[k] = to_counts(stats);
	}
	return out;
}

void VhostCollector::forget(const VhostQueueKey &k)
{
	hwsig_vhost_key key{};
	key.owner_tgid = k.owner_tgid;
	key.worker_tid = k.worker_tid;
	key.queue = k.queue;
	key.dir = k.tx ? HWSIG_VHOST_TX : HWSIG_VHOST_RX;
	bpf_map__delete_elem(impl_->skel->maps.queues, &key, sizeof key, 0);
}

std::uint64_t VhostCollector::dropped() const
{
	return impl_->skel->bss->dropped;
}

std::vector<std::pair<std::string, int>> VhostCollector::programs() const
{
	std::vector<std::pair<std::string, int>> out;
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, impl_->skel->obj)
	{
		if (bpf_program__autoload(prog))
			out.emplace_back(bpf_program__name(prog), bpf_program__fd(prog));
	}
	return out;
}

} // namespace hwsig
