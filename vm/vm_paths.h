/* SPDX-License-Identifier: MIT */
/*
 * vm_paths.h - where `faultlun vm` finds its pieces, relative to the running
 * executable: no build-tree path is compiled in.
 *
 * Run from a build tree, the binary has a marker file beside it
 * (faultlun-build-tree, written by CMake) that names the source's vm/, the
 * build's vm/ and the handler's build directory. Installed, the pieces are
 * under the same prefix as the binary: PREFIX/libexec/faultlun for the
 * scripts (mkguest.sh, agent.sh, init) and the guest programs (fl-vm-agent,
 * fl-vm-uevent), PREFIX/LIBDIR/tcmu-runner for handler_faultlun.so.
 */
#ifndef FL_VM_PATHS_H
#define FL_VM_PATHS_H

/* The pieces of the lab, by where they live. */
enum vm_piece {
	VM_SCRIPTS,  /* mkguest.sh, agent.sh, init */
	VM_PROGRAMS, /* fl-vm-agent, fl-vm-uevent */
	VM_HANDLER,  /* the directory holding handler_faultlun.so */
};

/* The directory of a piece (absolute, no trailing slash). Never NULL. */
const char *vm_path(enum vm_piece piece);

#endif
