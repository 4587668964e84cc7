// RAII owner of a libbpf skeleton (what `bpftool gen skeleton` generates).
// Construction runs open -> configure -> load -> attach; each step is checked
// and a failure throws hwsig::Error naming the program, the step, errno and
// what usually causes it. Destruction detaches and frees everything.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>
#include <utility>

#include "hwsig/error.h"

struct bpf_object_open_opts;
struct bpf_object;

namespace hwsig {

namespace bpf_detail {
// Maps a failed libbpf step to an Error: "BPF <name>: <step> (<hint>)
// [libbpf: <last libbpf warning>]: <strerror>". err is a positive errno.
[[noreturn]] void throw_step(std::string_view name, std::string_view step, int err);
// Routes libbpf's own messages: warnings are remembered (the last one is
// appended to the next error), debug output is dropped unless
// HWSIG_LIBBPF_DEBUG is set in the environment.
void install_libbpf_print();
// Mounts tracefs on /sys/kernel/tracing when it is not there: classic
// tracepoint programs resolve their event ids through it.
void ensure_tracefs();
// Before load: mounts tracefs if a program that will load is a classic
// tracepoint (tp_btf and raw_tp attach by name and need no tracefs).
void before_load(struct ::bpf_object *obj);
// Whether a failed step's errno means missing privileges, so that another
// program set would fail alike. EACCES as root is the verifier rejecting a
// program (6.1 answers an unbounded access so), which another set may pass.
bool lacks_privilege(int err);
} // namespace bpf_detail

// The four generated functions of one skeleton type.
template <typename Skel> struct SkeletonOps {
	const char *name;
	Skel *(*open)(const struct bpf_object_open_opts *);
	int (*load)(Skel *);
	int (*attach)(Skel *);
	void (*destroy)(Skel *);
};

template <typename Skel> class Skeleton {
public:
	Skeleton() = default;
	// configure(Skel &) runs between open and load: set .rodata, pick which
	// programs autoload, resize maps. It may throw.
	template <typename Configure>
	Skeleton(const SkeletonOps<Skel> &ops, Configure &&configure) : ops_(ops)
	{
		bpf_detail::install_libbpf_print();
		errno = 0;
		skel_ = ops_.open(nullptr);
		if (!skel_)
			bpf_detail::throw_step(ops_.name, "open", errno ? errno : EINVAL);
		try {
			configure(*skel_);
			bpf_detail::before_load(skel_->obj);
			if (int err = ops_.load(skel_))
				bpf_detail::throw_step(ops_.name, "load", err < 0 ? -err : err);
			if (int err = ops_.attach(skel_))
				bpf_detail::throw_step(ops_.name, "attach", err < 0 ? -err : err);
		} catch (...) {
			ops_.destroy(std::exchange(skel_, nullptr));
			throw;
		}
	}
	Skeleton(const Skeleton &) = delete;
	Skeleton &operator=(const Skeleton &) = delete;
	Skeleton(Skeleton &&o) noexcept : ops_(o.ops_), skel_(std::exchange(o.skel_, nullptr)) {}
	Skeleton &operator=(Skeleton &&o) noexcept
	{
		if (this != &o) {
			reset();
			ops_ = o.ops_;
			skel_ = std::exchange(o.skel_, nullptr);
		}
		return *this;
	}
	~Skeleton() { reset(); }

	void reset() noexcept
	{
		if (skel_)
			ops_.destroy(std::exchange(skel_, nullptr));
	}
	Skel *get() const noexcept { return skel_; }
	Skel *operator->() const noexcept { return skel_; }
	explicit operator bool() const noexcept { return skel_ != nullptr; }

private:
	SkeletonOps<Skel> ops_{};
	Skel *skel_ = nullptr;
};

} // namespace hwsig
