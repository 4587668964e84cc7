# hwsig_bpf_skeleton(<out_var> <x.bpf.c>...): each CO-RE program ->
# x.bpf.o (clang -target bpf) -> x.skel.h (bpftool gen skeleton, struct
# hwsig_x_bpf) in ${CMAKE_CURRENT_BINARY_DIR}/gen; <out_var> is set to the
# headers. bpf/CMakeLists.txt sets the toolchain up (HWSIG_BPF_CLANG,
# HWSIG_BPFTOOL, the global properties below) before any call.
#
# The programs see vmlinux.h, bpf/'s headers (bits.bpf.h, hwsig_*.h ...)
# and libbpf's BPF-side headers (bpf_helpers.h ...).
function(hwsig_bpf_skeleton out_var)
	get_property(cflags GLOBAL PROPERTY HWSIG_BPF_CFLAGS)
	get_property(vmlinux_h GLOBAL PROPERTY HWSIG_BPF_VMLINUX_H)
	set(gen ${CMAKE_CURRENT_BINARY_DIR}/gen)
	file(MAKE_DIRECTORY ${gen})
	# What a program may include from bpf/: the .bpf.h helpers, the shared hwsig_*.h.
	file(GLOB deps ${CMAKE_SOURCE_DIR}/bpf/*.bpf.h ${CMAKE_SOURCE_DIR}/bpf/hwsig_*.h)
	set(skels)
	foreach(src ${ARGN})
		get_filename_component(file ${src} NAME)
		string(REGEX REPLACE "\\.bpf\\.c$" "" prog ${file})
		set(obj ${gen}/${prog}.bpf.o)
		set(skel ${gen}/${prog}.skel.h)
		# hwsig_bpf_vmlinux: vmlinux.h is generated in bpf/'s directory.
		add_custom_command(OUTPUT ${obj}
			COMMAND ${HWSIG_BPF_CLANG} ${cflags} -c ${src} -o ${obj}
			DEPENDS ${src} ${deps} ${vmlinux_h} hwsig_bpf_vmlinux
			COMMENT "BPF: ${prog}.bpf.o"
			VERBATIM)
		add_custom_command(OUTPUT ${skel}
			COMMAND ${HWSIG_BPFTOOL} gen skeleton ${obj} name hwsig_${prog}_bpf > ${skel}.tmp
			COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
			DEPENDS ${obj}
			COMMENT "BPF: ${prog}.skel.h"
			VERBATIM)
		list(APPEND skels ${skel})
	endforeach()
	set(${out_var} ${skels} PARENT_SCOPE)
endfunction()
