# SPDX-License-Identifier: MIT
# The RDAC personality under the real kernel: scsi_dh_rdac and dm-multipath in
# the VM lab (docs/device-handlers/rdac.md), in the boot of vm.KERNEL.dh (above the kernel matrix, in
# CMakeLists.txt). Like the dm-multipath scenarios, their "frontends" leave
# out "vm", so the generic loops do not run them.
# vm.faultless (CMakeLists.txt) runs two without their personality or their
# fault: they must fail.
set(fl_vm_dh_rdac_scenarios dh-rdac-failover dh-rdac-not-owned dh-rdac-rebalance-pingpong
  dh-rdac-quiescence)
foreach(sc ${fl_vm_dh_rdac_scenarios})
  list(APPEND fl_vm_dh_files ${PROJECT_SOURCE_DIR}/scenarios/${sc}.json)
endforeach()
