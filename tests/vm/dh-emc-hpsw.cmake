# SPDX-License-Identifier: MIT
# Device-handler library scenarios of the EMC CLARiiON / VNX (scsi_dh_emc),
# HP active/passive (scsi_dh_hp_sw) and named-ALUA-array (scsi_dh_alua under
# multipath-tools' built-in table) personalities, under dm-multipath
# (docs/device-handlers/emc.md, hp_sw.md, alua-array.md), in the boot of
# vm.KERNEL.dh on each kernel of the matrix (CMakeLists.txt). Their
# "frontends" leave out "vm", so the generic scenario loop does not run them.
# vm.faultless (CMakeLists.txt) runs dh-emc-sp-failure with its cut or its
# personality taken out: it must fail.
set(fl_vm_dh_emc_hpsw_scenarios dh-emc-sp-failure dh-emc-not-owned dh-emc-trespass-rejected
  dh-hpsw-failover dh-hpsw-ping-pong dh-alua-pure-failover dh-alua-pure-controller-loss)
foreach(sc ${fl_vm_dh_emc_hpsw_scenarios})
  list(APPEND fl_vm_dh_files ${PROJECT_SOURCE_DIR}/scenarios/${sc}.json)
endforeach()
