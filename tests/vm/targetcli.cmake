# SPDX-License-Identifier: MIT
# docs/tcmu.md "With targetcli" as written: its shell block (between the
# targetcli:begin / :end markers) runs verbatim in the guest from a `shell`
# step on the lio path: the system D-Bus, tcmu-runner with the built handler,
# targetcli-fb creating a user:faultlun backstore from the shipped
# medium-error-heal scenario and a tcm_loop LUN, reads and writes on the new
# sd disk, then the teardown. The test checks ENODATA on the bad range, the
# handler's trace of the rule, that nothing is left, and that the host's
# /etc/target and ~/.targetcli are untouched (tests/vm/test-vm-targetcli.sh).
add_test(NAME vm.targetcli
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test-vm-targetcli.sh $<TARGET_FILE:faultlun>
          ${PROJECT_SOURCE_DIR}/docs/tcmu.md ${CMAKE_CURRENT_SOURCE_DIR}/targetcli-guest.sh
          $<TARGET_FILE:handler_faultlun> ${PROJECT_SOURCE_DIR}/scenarios
          ${FL_VM_TIER_DIR}/targetcli)
set_tests_properties(vm.targetcli PROPERTIES LABELS vm TIMEOUT 600 SKIP_RETURN_CODE 77
  COST 60)
