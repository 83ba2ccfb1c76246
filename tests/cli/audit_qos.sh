#!/usr/bin/env bash
# End-to-end checks of `lossless audit qos`: exit codes and key output.
# Usage: bash tests/cli/audit_qos.sh <path-to-lossless>   (from the repo root)
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN=${1:?usage: audit_qos.sh <lossless-binary>}
FX=tests/fixtures/qos
failures=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect <exit code> <grep pattern on stdout+stderr> <args...>
expect() {
  local want=$1 pattern=$2
  shift 2
  "$BIN" audit qos "$@" >"$out" 2>"$err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: audit qos $*: exit $got, want $want"; cat "$out" "$err"; failures=$((failures + 1)); return
  fi
  if ! cat "$out" "$err" | grep -q -- "$pattern"; then
    echo "FAIL: audit qos $*: output lacks '$pattern'"; cat "$out" "$err"; failures=$((failures + 1))
  fi
}

expect 0 'verdict: pass' $FX/sonic_healthy.json
expect 1 'verdict: fail' $FX/sonic_broken.json
expect 1 'FAIL          pfc.headroom' $FX/sonic_broken.json
expect 1 'queue 3: 1234 dropped' $FX/sonic_show_broken.txt
expect 3 'verdict: indeterminate' $FX/sonic_show_healthy.txt
expect 3 'format nvue' $FX/nvue_healthy.txt
expect 1 'ECN marking not enabled on queue 3' $FX/nvue_broken.txt
expect 3 'format onyx' $FX/onyx_healthy.txt
expect 1 '802.3x link-level pause is enabled' $FX/onyx_broken.txt
expect 3 'format eos' $FX/eos_healthy.txt
expect 1 'Kmin above Kmax' $FX/eos_broken.txt
expect 3 'CNP (DSCP 48) goes to queue 7, strict priority' $FX/nxos_healthy.txt
expect 3 'format nxos' $FX/nxos_healthy_crlf.txt
expect 1 'PFC not enabled on RoCE priority 3' $FX/nxos_broken.txt
# Onyx show output (hand-made layout): PFC oper state per port, flow control, and no ECN claim.
expect 1 'FAIL          pfc.roce-priority     \[1/2\] PFC not enabled' $FX/onyx_show_dcb_pfc.txt
expect 1 'FAIL          pause.global' $FX/onyx_show_dcb_pfc.txt
expect 1 'INDETERMINATE ecn.roce-queue .*states no ECN' $FX/onyx_show_dcb_pfc.txt
# Flags: a cell size resolves segment thresholds; headroom inputs override the config.
expect 1 'cell size 208 B from platform preset tomahawk$' $FX/eos_broken.txt --platform tomahawk
expect 1 'cell size 254 B from platform preset tomahawk4 (unverified)' $FX/eos_broken.txt --platform tomahawk4
expect 1 'headroom 55KiB < 88772B needed' $FX/sonic_healthy.json --cable-m 300
expect 0 'verdict: pass' $FX/sonic_healthy.json --port-gbps 100 --cable-m 5 --t-phy 100ns
expect 1 'PFC not enabled on RoCE priority 4' $FX/sonic_healthy.json --roce-priority 4
# JSON: one document with checks, verdict and format.
expect 1 '"verdict": "fail"' $FX/sonic_broken.json --json
expect 0 '"format": "sonic-json"' $FX/sonic_healthy.json --json
"$BIN" audit qos $FX/sonic_broken.json --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["verdict"] == "fail" and d["format"] == "sonic-json"
assert all({"id", "verdict", "message"} <= set(c) for c in d["checks"])
assert any(c["id"] == "ecn.kmin-kmax" and c["verdict"] == "fail" for c in d["checks"])
' || { echo "FAIL: --json document"; failures=$((failures + 1)); }
# Issue 16 items 15/21: '-' is stdin, --json - is stdout, --json PATH writes the file (whole)
# beside the text report, a write error is exit 2 naming the output.
tmpd=$(mktemp -d)
trap 'rm -f "$out" "$err"; rm -rf "$tmpd"' EXIT
"$BIN" audit qos - <$FX/sonic_broken.json >"$out" 2>"$err"
[ $? = 1 ] && grep -q 'QoS audit of - (format sonic-json' "$out" || { echo "FAIL: stdin"; cat "$out" "$err"; failures=$((failures + 1)); }
expect 1 '"verdict": "fail"' $FX/sonic_broken.json --json -
expect 1 '"verdict": "fail"' --json $FX/sonic_broken.json
expect 1 'verdict: fail' $FX/sonic_broken.json --json "$tmpd/q.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["verdict"] == "fail"' "$tmpd/q.json" || { echo "FAIL: --json PATH"; failures=$((failures + 1)); }
expect 1 'verdict: fail' --json "$tmpd/q2.json" $FX/sonic_broken.json
[ -s "$tmpd/q2.json" ] || { echo "FAIL: --json PATH before FILE"; failures=$((failures + 1)); }
expect 2 'no/such/q.json: --json: cannot write the file' $FX/sonic_broken.json --json "$tmpd/no/such/q.json"
"$BIN" audit qos $FX/sonic_broken.json --json >/dev/full 2>"$err"
[ $? = 2 ] && grep -q '^error: <stdout>: --json: cannot write the output' "$err" || { echo "FAIL: --json to a full disk"; cat "$err"; failures=$((failures + 1)); }
"$BIN" audit qos $FX/sonic_broken.json >/dev/full 2>"$err"
[ $? = 2 ] || { echo "FAIL: text to a full disk"; cat "$err"; failures=$((failures + 1)); }

# Several outputs in one pasted session (hand-assembled from real SONiC outputs): every block is
# read, the prompts, prose and elision are listed by --verbose with their line numbers.
expect 1 'FAIL          drops.lossless .*queue 3: 19 dropped, queue 4: 12 dropped' $FX/mixed_sonic_session.txt
expect 1 'skipped line 28: not interpretable as sonic-show' $FX/mixed_sonic_session.txt --verbose
expect 1 'skipped line 42: elision: \.\.\.' $FX/mixed_sonic_session.txt --verbose
expect 1 '8 input lines skipped' $FX/mixed_sonic_session.txt
expect 1 '"skipped": \[' $FX/mixed_sonic_session.txt --json --verbose

# Real corpus (tests/fixtures/real/SOURCES.md, section QoS): every sample parses and gets the
# verdict (exit code) and the key finding an expert would give.
R=tests/fixtures/real/qos
expect 1 'FAIL          pfc.roce-priority .*PFC priorities: none' $R/sonic_config_db_qos_t1.json
expect 1 'FAIL          ecn.roce-queue' $R/sonic_config_db_qos_t1.json
expect 0 'WARN          pfc.watchdog' $R/sonic_config_db_full_3_0_3.json
expect 0 'PASS          pfc.headroom .*headroom 177632B >= 56272B needed for priority 3 at 100 Gb/s, 40 m cable' $R/sonic_config_db_full_3_0_3.json
expect 0 'Kmax 2MiB vs PFC trigger 3957916B (dynamic threshold alpha 1/8 of pool ingress_lossless_pool' $R/sonic_config_db_full_3_0_3.json
expect 3 'headroom 32KiB, but the port speed is unknown' $R/sonic_mmuconfig_l_hbm.txt
expect 3 'ECN marking enabled on queue 3 (Kmin 1MiB, Kmax 2MiB, Pmax 5%)' $R/sonic_show_ecn.txt
expect 0 'WARN          pfc.frames .*PFC frames on priorities 0,1,2,4,5,6,7' $R/sonic_show_pfc_counters.txt
expect 0 'WARN          pfc.other-priorities .*\[Ethernet0, Ethernet4\]' $R/sonic_show_pfc_priority.txt
expect 3 'verdict: indeterminate' $R/sonic_show_pfcwd_config.txt
expect 0 'WARN          drops.lossless .*\[Ethernet0\] discards on the RoCE priority.s queue (queue 3: 19 dropped)' $R/sonic_show_queue_counters.txt
expect 3 'PASS          pfc.roce-priority .*PFC priorities: 3)' $R/nvue_show_qos_roce_cl514.txt
expect 3 'PASS          cnp.priority .*queue 6, strict priority' $R/nvue_show_qos_roce_cl56.txt
expect 0 'WARN          ecn.kmin-ratio .*lossless pool roce-reserved-ingress' $R/nvue_show_interface_qos_roce_status_cl514.txt
expect 1 'FAIL          drops.lossless .*queue 3: 663060754115 dropped' $R/nvue_show_interface_qos_roce_counters_cl514.txt
expect 0 'WARN          ecn.kmin-ratio .*PFC trigger of priority 3, dynamic threshold alpha 2 of pool iPool1' $R/onyx_roce_deployment_netarbiter.md
expect 0 'skipped line 1: comment: ## RoCE Deployment' $R/onyx_roce_deployment_netarbiter.md --verbose
expect 0 'WARN          ecn.kmin-kmax .*Kmin equals Kmax' $R/nxos_azure_local_qos_policy.md
expect 3 'no network-qos policy' $R/nxos_azure_local_disaggregated_storage.md
expect 0 'WARN          pfc.watchdog .*\[Ethernet2/5/1, Ethernet2/5/5\]' $R/eos_qos_profile_rocm_7388.txt
expect 0 'INDETERMINATE ecn.kmin-ratio .*Kmin 2000 cells' $R/eos_qos_profile_rocm_7388.txt
expect 0 'PASS          ecn.kmin-kmax .*Kmin 2000 cells vs Kmax 10000 cells' $R/eos_qos_profile_rocm_7388.txt
expect 0 'PASS          pfc.watchdog .*\[Eth1/1, Eth1/2, Eth1/3\]' $R/dell_sonic_cli_rocm_z9664f.txt
expect 0 'format dell-sonic' $R/dell_sonic_cli_rocm_z9664f.txt
expect 1 'FAIL          pfc.roce-priority .*PFC priorities: 0' $R/junos_cos_dcqcn_apstra_jvd.txt
expect 0 'WARN          pfc.watchdog' $R/junos_cos_dcqcn_apstra_jvd.txt --roce-priority 0
expect 0 'ECN marking enabled on queue 4' $R/junos_cos_dcqcn_apstra_jvd.txt --roce-priority 0
expect 0 'PASS          ecn.kmin-ratio .*Kmin is 20.0% of the queue.s buffer' $R/junos_cos_dcqcn_apstra_jvd.txt --roce-priority 0
expect 1 'FAIL          pfc.roce-priority .*PFC priorities: 1)' $R/cumulus_traffic_conf_pfc_ecn_cl40.txt
expect 3 'PASS          ecn.roce-queue .*Kmin 150000B, Kmax 1500000B, Pmax 100%' $R/cumulus_traffic_conf_pfc_ecn_cl40.txt --roce-priority 1
expect 1 'FAIL          pfc.roce-priority .*PFC priorities: none' $R/cumulus_traffic_conf_ecn_cl40.txt
expect 1 'FAIL          pfc.other-priorities .*including 0' $R/nvue_set_qos_pfc_default_global_cl514.txt
expect 1 'INDETERMINATE ecn.roce-queue .*states no ECN' $R/nvue_set_qos_pfc_default_global_cl514.txt
expect 1 'FAIL          ecn.roce-queue .*not enabled on queue 3' $R/nvue_set_qos_ecn_default_global_cl514.txt
expect 1 'FAIL          pfc.roce-priority .*PFC priorities: 2)' $R/nvue_set_qos_roce_priority2_cl514.txt
expect 3 'PASS          pfc.roce-priority .*PFC priorities: 2)' $R/nvue_set_qos_roce_priority2_cl514.txt --roce-priority 2
expect 0 'WARN          drops.lossless .*\[Ethernet0\] ingress discards on the RoCE priority.s PG (PG 3: 803 dropped)' $R/sonic_show_pg_drop_counters.txt
expect 3 'PASS          drops.lossless .*\[Ethernet-BP0, Ethernet-BP4\] no ingress discards' $R/sonic_show_pg_drop_counters_masic.txt
expect 3 'note: Ingress headroom per PG: the highest watermark is 215 B (Ethernet4 PG15)' $R/sonic_show_pg_watermark_headroom_masic.txt
expect 1 'FAIL          ecn.roce-queue .*not enabled on queue 3' $R/eos_running_config_qos_profile_yandex.txt
expect 1 'PASS          ecn.roce-queue .*queue 4 (Kmin 100000B, Kmax 200000B, Pmax 100%)' $R/eos_running_config_qos_profile_yandex.txt --roce-priority 4
expect 1 'FAIL          pfc.roce-priority .*\[all 38 ports\] PFC not enabled on RoCE priority 4' $R/eos_running_config_qos_profile_yandex.txt --roce-priority 4
expect 0 'WARN          pfc.watchdog-events .*DEADLOCK on traffic classes 2,7' $R/nvue_show_interface_qos_pfc_watchdog_cl514.txt
expect 0 'PASS          pfc.watchdog .*PFC watchdog enabled' $R/nvue_show_interface_qos_pfc_watchdog_cl514.txt
expect 1 'FAIL          ecn.roce-queue .*not enabled on queue 3' $R/nvue_show_qos_congestion_control_cl514.txt
expect 3 'PASS          ecn.roce-queue .*queue 4 (Kmin 40000B, Kmax 200000B, Pmax 100%)' $R/nvue_show_qos_congestion_control_cl514.txt --roce-priority 4
expect 1 'FAIL          pfc.roce-priority .*PFC priorities: none' $R/nvue_show_qos_roce_lossy_multi_tc_cl514.txt
expect 1 'PASS          ecn.roce-queue .*Kmin 163KiB, Kmax 234KiB, Pmax 5%' $R/nvue_show_qos_roce_lossy_multi_tc_cl514.txt
expect 1 'FAIL          pfc.other-priorities .*including 0' $R/nvue_show_qos_pfc_default_global_cl514.txt
expect 3 'PASS          pfc.roce-priority .*PFC priorities: 0)' $R/nvue_show_qos_pfc_default_global_cl514.txt --roce-priority 0
expect 1 'FAIL          pfc.roce-priority .*PFC priorities: 0)' $R/cumulus_qos_features_conf_pfc_cl514.txt
expect 1 'INDETERMINATE ecn.roce-queue .*states no ECN' $R/cumulus_qos_features_conf_pfc_cl514.txt
expect 3 'PASS          ecn.roce-queue .*\[Eth1/1\] ECN marking enabled on queue 3 (Kmin 500000B, Kmax 1550000B)' $R/onyx_show_interface_congestion_control_json_ansible.json
expect 3 'format onyx' $R/onyx_show_interface_congestion_control_json_ansible.json
expect 3 'format onyx' $R/onyx_show_interface_congestion_control_json_ansible.json --format onyx
expect 1 'FAIL          pfc.roce-priority .*\[Eth1/1, Eth1/1/2, Mpo2, Po1\] PFC not enabled' $R/onyx_pfc_interface_disabled_json_ansible.json
expect 3 'INDETERMINATE pfc.roce-priority .*\[Eth1/1, Eth1/1/2, Mpo2, Po1\]' $R/onyx_pfc_interface_enabled_json_ansible.json
# Added 2026-12-04 (SOURCES.md, QoS).
expect 3 'headroom 32KiB, but the port speed is unknown' $R/sonic_mmuconfig_l_masic.txt
expect 0 'WARN          pfc.frames .*\[all 6 ports\] PFC frames on priorities 0,1,2,4,5,6,7' $R/sonic_show_pfc_counters_masic.txt
expect 0 'WARN          drops.lossless .*\[Ethernet8\] discards on the RoCE priority.s queue (queue 3: 63 dropped)' $R/sonic_show_queue_counters_port.txt
expect 0 'WARN          drops.lossless .*\[testsw|Ethernet4\] discards on the RoCE priority.s queue (queue 3: 82 dropped)' $R/sonic_show_queue_voq_counters.txt
expect 0 'WARN          pfc.watchdog .*\[et-\*\] no PFC watchdog' $R/junos_cos_dcqcn_qfx5240_rocm.txt
expect 0 'PASS          ecn.roce-queue .*queue 4 (Kmin 45% of the queue buffer, Kmax 90% of the queue buffer, Pmax 100%)' $R/junos_cos_dcqcn_qfx5240_rocm.txt
expect 0 'WARN          ecn.kmin-ratio .*Kmin is 45.0% of the queue.s buffer' $R/junos_cos_dcqcn_qfx5240_rocm.txt
expect 3 'PASS          ecn.roce-queue .*\[Ethernet1/1/1 - 2\] ECN marking enabled on queue 3 (Kmin 950000B, Kmax 3000000B, Pmax 7%)' $R/nxos_dcqcn_n9364e_rocm.txt
expect 3 'PASS          pfc.watchdog .*PFC watchdog enabled' $R/nxos_dcqcn_n9364e_rocm.txt
expect 1 'FAIL          pfc.roce-priority .*\[1/13-1/16\] PFC not enabled on RoCE priority 3 (PFC priorities: none)' $R/onyx_roce_deployment_netarbiter_prompts.md
expect 1 'PASS          ecn.roce-queue .*Kmin 150000B, Kmax 1500000B' $R/onyx_roce_deployment_netarbiter_prompts.md
expect 0 'WARN          pfc.other-priorities .*\[Ethernet0\] PFC also enabled on priorities 4' $R/sonic_config_db_update_fragment.json
expect 0 'INDETERMINATE ecn.roce-queue .*WRED profile "AZURE_LOSSLESS" is not defined in the input' $R/sonic_config_db_update_fragment.json
expect 3 'INDETERMINATE pfc.headroom .*\[Ethernet16, Ethernet20, Ethernet24, Ethernet28\] the input states no headroom for priority 3 (cable length 5 m' $R/sonic_config_db_dump_dynamic_buffer.json
# Added 2026-12-04: the no-drop buffer in an ingress queuing policy (NX-OS), applied per port.
expect 1 'PASS          pfc.roce-priority .*\[all 32 ports\] PFC enabled on RoCE priority 3 (PFC priorities: 3)' $R/nxos_nexus3132_tor1_microsoft_sdn.cfg
expect 1 'PASS          pfc.headroom .*\[Ethernet1/3/1, .*headroom 55120B >= 24396B needed for priority 3 at 10 Gb/s, 100 m cable' $R/nxos_nexus3132_tor1_microsoft_sdn.cfg --format nxos --cable-m 100
expect 1 'FAIL          ecn.roce-queue .*\[all 32 ports\] ECN marking not enabled on queue 3' $R/nxos_nexus3132_tor1_microsoft_sdn.cfg
expect 1 'skipped line 31: pause buffer of queuing policy UNUSED-IN, which no .service-policy type queuing input. applies' $FX/nxos_ingress_queuing.txt --verbose --cable-m 100
for f in $R/*; do
  grep -q "\$R/$(basename "$f")" "$0" || { echo "FAIL: real sample $f has no check"; failures=$((failures + 1)); }
done

# A switch configuration with no QoS statement is a finding (issue 13), not bad input: a
# whole running-config fails (no PFC, no ECN), an excerpt is indeterminate.
printf '! Command: show running-config\n!\nhostname leaf1\n!\ninterface Ethernet1\n   mtu 9214\n' >"$tmpd/whole.txt"
printf 'interface Ethernet1\n   mtu 9214\n' >"$tmpd/excerpt.txt"
expect 1 'a whole running-config with no QoS statement' "$tmpd/whole.txt"
expect 3 'format switch-config' "$tmpd/excerpt.txt"

# Bad input: one line naming file and line, exit 2.
expect 2 "malformed_empty.txt:1: .*empty file" $FX/malformed_empty.txt
expect 2 "malformed_binary.bin:1: .*binary" $FX/malformed_binary.bin
expect 2 "malformed_topo.txt:1: format: not a switch QoS configuration" $FX/malformed_topo.txt
expect 2 "malformed_nccl.txt:1: format: not a switch QoS configuration" $FX/malformed_nccl.txt
expect 2 "malformed_truncated.json:4: .*truncated or invalid JSON" $FX/malformed_truncated.json
# A line whose unit cannot be read is skipped and reported (--verbose), not fatal; the
# ECN setting on it is unknown, not absent: ecn.roce-queue is indeterminate, not fail (the
# overall warn is the missing watchdog).
expect 0 "skipped line 5: not interpretable as eos: .*furlongs" $FX/malformed_eos_unit.txt --verbose
expect 0 "INDETERMINATE ecn.roce-queue .*line 5 looks like an ECN / WRED setting but was skipped" $FX/malformed_eos_unit.txt
expect 2 "malformed_sonic_value.json:1: BUFFER_PROFILE.p.xoff" $FX/malformed_sonic_value.json
expect 2 "cannot open" $FX/does_not_exist.json
expect 2 "is a directory" $FX
expect 2 "--format" $FX/sonic_healthy.json --format ios
expect 2 "no junos QoS statements" $FX/sonic_healthy.json --format junos
expect 2 "--platform" $FX/sonic_healthy.json --platform nosuchasic
expect 2 "" $FX/sonic_healthy.json --cell-bytes 96 --platform spectrum
expect 2 "" $FX/sonic_healthy.json --roce-priority 9
# A forced format that does not fit the text is bad input, not a crash.
expect 2 "error:" $FX/eos_healthy.txt --format sonic-json
n=$(cat "$err" | wc -l)
[ "$n" = 1 ] || { echo "FAIL: error is $n lines"; failures=$((failures + 1)); }

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "audit_qos CLI: all checks passed"
