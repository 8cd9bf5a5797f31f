# SPDX-License-Identifier: MIT
# The RDAC personality under the real kernel: scsi_dh_rdac and dm-multipath in
# the VM lab (docs/device-handlers/rdac.md), in the boot of vm.KERNEL.dh (above the kernel matrix, in
# CMakeLists.txt). Like the dm-multipath scenarios, their "frontends" leave
# out "vm", so the generic loops do not run them.
# vm.dh_faultless.rdac-* runs one without its personality or its fault: it
# must fail.
set(fl_vm_dh_rdac_scenarios dh-rdac-failover dh-rdac-not-owned dh-rdac-rebalance-pingpong
  dh-rdac-quiescence)
foreach(sc ${fl_vm_dh_rdac_scenarios})
  list(APPEND fl_vm_dh_files ${PROJECT_SOURCE_DIR}/scenarios/${sc}.json)
endforeach()
foreach(c no-personality no-move)
  add_test(NAME vm.dh_faultless.rdac-${c}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test-vm-dh-rdac-faultless.sh $<TARGET_FILE:faultlun>
            ${PROJECT_SOURCE_DIR}/scenarios ${FL_VM_TIER_DIR}/dh-rdac-faultless-${c} ${c})
  set_tests_properties(vm.dh_faultless.rdac-${c} PROPERTIES LABELS vm TIMEOUT 400
    SKIP_RETURN_CODE 77 RESOURCE_LOCK vm_guest_c)
endforeach()
