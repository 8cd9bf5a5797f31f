# SPDX-License-Identifier: MIT
# The RDAC personality under the real kernel: scsi_dh_rdac and dm-multipath in
# the VM lab (docs/device-handlers/rdac.md). Like the vm.mpath.* scenarios,
# their "frontends" leave out "vm", so the generic loops do not run them.
# vm.dh_faultless.rdac-* runs one without its personality or its fault: it
# must fail.
set(fl_vm_dh_rdac_scenarios dh-rdac-failover dh-rdac-not-owned dh-rdac-rebalance-pingpong
  dh-rdac-quiescence)
foreach(sc ${fl_vm_dh_rdac_scenarios})
  string(REGEX REPLACE "^dh-" "" short ${sc})
  add_test(NAME vm.dh.${short}
    COMMAND faultlun vm ${PROJECT_SOURCE_DIR}/scenarios/${sc}.json --path iscsi --quiet
            --out ${FL_VM_TIER_DIR}/${sc} --timeout 300)
  set_tests_properties(vm.dh.${short} PROPERTIES LABELS vm TIMEOUT 400 SKIP_RETURN_CODE 77
    RESOURCE_LOCK vm_guest)
endforeach()
foreach(c no-personality no-move)
  add_test(NAME vm.dh_faultless.rdac-${c}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test-vm-dh-rdac-faultless.sh $<TARGET_FILE:faultlun>
            ${PROJECT_SOURCE_DIR}/scenarios ${FL_VM_TIER_DIR}/dh-rdac-faultless-${c} ${c})
  set_tests_properties(vm.dh_faultless.rdac-${c} PROPERTIES LABELS vm TIMEOUT 400
    SKIP_RETURN_CODE 77 RESOURCE_LOCK vm_guest)
endforeach()
