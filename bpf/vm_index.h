// The index each watched VM has in a BPF program's per-VM maps, and the
// program's tgid -> index hash (`vm_of`) kept in step with it. An index is
// stable while its VM is watched; once it is not, it is reused, cleared
// first by the caller (it may hold the previous VM's counts) and only then
// published. Used by the sched (victim x culprit) and vmio collectors.
#pragma once

#include <bpf/libbpf.h>
#include <linux/types.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hwsig/error.h"

namespace hwsig::bpf_detail {

class VmIndexMap {
public:
	VmIndexMap(std::string what, std::size_t capacity) : what_(std::move(what)), tgid_at_(capacity, 0) {}

	// tgid's index, taking a free one if it has none: clear(index) first,
	// then tgid -> index into vm_of. nullopt when every index is taken.
	// Throws hwsig::Error when vm_of cannot be updated.
	template <typename Clear> std::optional<__u32> watch(const struct bpf_map *vm_of, int tgid, Clear &&clear)
	{
		if (auto it = index_of_.find(tgid); it != index_of_.end())
			return it->second;
		auto free_index = std::find(tgid_at_.begin(), tgid_at_.end(), 0);
		if (free_index == tgid_at_.end())
			return std::nullopt;
		__u32 index = static_cast<__u32>(free_index - tgid_at_.begin());
		clear(index);
		__u32 key = static_cast<__u32>(tgid);
		if (bpf_map__update_elem(vm_of, &key, sizeof key, &index, sizeof index, BPF_ANY))
			throw_errno(what_ + ": watching VM process " + std::to_string(tgid));
		*free_index = tgid;
		index_of_[tgid] = index;
		return index;
	}

	// False when tgid was not watched.
	bool unwatch(const struct bpf_map *vm_of, int tgid)
	{
		auto it = index_of_.find(tgid);
		if (it == index_of_.end())
			return false;
		__u32 key = static_cast<__u32>(tgid);
		bpf_map__delete_elem(vm_of, &key, sizeof key, 0);
		tgid_at_[it->second] = 0;
		index_of_.erase(it);
		return true;
	}

	std::optional<__u32> find(int tgid) const
	{
		auto it = index_of_.find(tgid);
		return it == index_of_.end() ? std::nullopt : std::optional<__u32>(it->second);
	}
	int tgid_at(__u32 index) const { return index < tgid_at_.size() ? tgid_at_[index] : 0; } // 0: free
	std::vector<int> tgids() const
	{
		std::vector<int> out;
		for (const auto &[tgid, index] : index_of_)
			out.push_back(tgid);
		return out;
	}
	std::size_t size() const { return index_of_.size(); }

private:
	std::string what_;
	std::map<int, __u32> index_of_;
	std::vector<int> tgid_at_; // index -> tgid; 0: free
};

} // namespace hwsig::bpf_detail
