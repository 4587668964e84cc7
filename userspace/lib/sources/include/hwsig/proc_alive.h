// Whether a process is still there: the one answer for VM discovery, the
// BPF scheduler source and `hwsigctl stat --vm`, which must agree on when a
// QEMU has exited.
#pragma once

#include <string>
#include <string_view>

namespace hwsig {

// The State: line of a /proc/PID/status text says zombie (Z) or dead (X,
// or x: TASK_DEAD as older kernels printed it). A text without a State: line
// is not ours to judge: not dead.
bool status_is_dead(std::string_view status);

// <root>/proc/PID exists and its status says neither zombie nor dead. A
// zombie QEMU's guest is gone although its pid is still listed.
bool process_alive(const std::string &root, int pid);

} // namespace hwsig
