# SPDX-License-Identifier: MIT
# The lab's long error-handling scenarios and the dm-multipath library
# scenarios on the newer kernels of the matrix: Debian 13's 6.12
# (debian:trixie) and sid's 7.2 (debian:sid), beside their 6.1 runs in
# tests/vm/CMakeLists.txt (vm.hung_lun_reset_iscsi, vm.hung_read_tcmu,
# vm.mpath.NAME). Where the kernels differ the scenarios scope their
# expectations with "kernel" (docs/kernel-differences.md). A kernel package
# that cannot be had is a SKIP (exit 77). Times: docs/vm-lab.md.
set(fl_vm_long_kernels "k6_12=debian:trixie" "k7_2=debian:sid")
set(fl_vm_long_mpath mpath-controller-failover mpath-path-loss mpath-all-paths-down
  mpath-busy-path mpath-alua-long-transition)

# fl_vm_long_test(NAME FILE PATH KERNEL TIMEOUT): `faultlun vm FILE --path PATH
# --kernel KERNEL` as vm.NAME, the guest limited to TIMEOUT seconds.
function(fl_vm_long_test name file path kernel limit)
  math(EXPR ctest_limit "${limit} + 180")
  add_test(NAME vm.${name}
    COMMAND faultlun vm ${file} --path ${path} --kernel ${kernel} --quiet
            --out ${FL_VM_TIER_DIR}/${name} --timeout ${limit})
  set_tests_properties(vm.${name} PROPERTIES LABELS vm TIMEOUT ${ctest_limit}
    SKIP_RETURN_CODE 77 RESOURCE_LOCK vm_guest)
endfunction()

foreach(k ${fl_vm_long_kernels})
  string(REPLACE "=" ";" kv ${k})
  list(GET kv 0 kname)
  list(GET kv 1 kspec)
  fl_vm_long_test(${kname}.hung_lun_reset_iscsi ${CMAKE_CURRENT_SOURCE_DIR}/hung-lun-reset.json
    iscsi ${kspec} 420)
  fl_vm_long_test(${kname}.hung_read_tcmu ${CMAKE_CURRENT_SOURCE_DIR}/hung-read-tcmu.json
    tcmu ${kspec} 420)
  foreach(mp ${fl_vm_long_mpath})
    fl_vm_long_test(${kname}.mpath.${mp} ${PROJECT_SOURCE_DIR}/scenarios/${mp}.json
      iscsi ${kspec} 300)
  endforeach()
endforeach()
