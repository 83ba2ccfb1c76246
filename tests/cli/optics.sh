#!/usr/bin/env bash
# End-to-end exit codes of `lossless optics`: 0 healthy or watch only, 1 a link to
# quarantine (or watch with --strict), 2 bad input (nothing stored), 3 a link that
# cannot be judged and none to quarantine, plus a kill-during-ingest check through the test-only
# LOSSLESS_OPTICS_TEST_KILL_AFTER_ROWS hook.
set -u
BIN="$1"
F=tests/fixtures/optics
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lossless-optics-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail=0
expect() {  # expect RC DESCRIPTION -- command...
  local want=$1 what=$2
  shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, want $want"; cat "$TMP/out" "$TMP/err"; fail=1
  fi
}
AT=2026-03-01T12:00:00Z

# Healthy links only -> 0.
DB=$TMP/healthy.db
expect 0 "ingest healthy" -- "$BIN" optics ingest --db "$DB" --at $AT $F/sfp_healthy.txt $F/qsfp28_healthy.txt $F/qsfpdd_healthy.txt $F/mlxlink_healthy.txt $F/qsfp28_copper.txt $F/qsfp28_laser_off.txt
expect 0 "status healthy" -- "$BIN" optics status --db "$DB"
grep -q "summary: 0 quarantine, 0 watch, 0 invalid-data, 6 healthy" "$TMP/out" || { echo "FAIL: healthy summary"; cat "$TMP/out"; fail=1; }
expect 0 "quarantine none" -- "$BIN" optics quarantine --db "$DB"

# Findings -> 1; quarantine lists only the quarantined links.
DB=$TMP/bad.db
expect 0 "ingest findings" -- "$BIN" optics ingest --db "$DB" --at $AT $F/qsfp28_rx_low_alarm.txt $F/qsfp28_rx_low_warning.txt $F/mlxlink_high_ber.txt $F/qsfp28_bad_thresholds.txt
expect 1 "status findings" -- "$BIN" optics status --db "$DB" --json
python3 - "$TMP/out" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
states = {l["link"]: l["state"] for l in doc["links"]}
want = {"qsfp28_rx_low_alarm": "quarantine", "qsfp28_rx_low_warning": "watch",
        "mlx5_0/p1": "quarantine", "qsfp28_bad_thresholds": "invalid-data"}
if states != want:
    print("FAIL: states", states); sys.exit(1)
PY
expect 1 "quarantine some" -- "$BIN" optics quarantine --db "$DB" --json
python3 -c 'import json,sys; l=[x["link"] for x in json.load(open(sys.argv[1]))["links"]]; sys.exit(0 if l==["mlx5_0/p1","qsfp28_rx_low_alarm"] else print("FAIL: quarantine list", l) or 1)' "$TMP/out" || fail=1
expect 0 "looser BER flag" -- "$BIN" optics quarantine --db "$TMP/healthy.db" --ber-quarantine 1e-3

# Post-FEC deltas across two ingests.
DB=$TMP/fec.db
expect 0 "t0" -- "$BIN" optics ingest --db "$DB" --at 2026-03-01T00:00:00Z $F/mlxlink_errors_t0.txt
expect 0 "t1" -- "$BIN" optics ingest --db "$DB" --at 1772330400 $F/mlxlink_errors_t1.txt
expect 1 "post-fec quarantine" -- "$BIN" optics quarantine --db "$DB"
grep -q "+240 in 2.0 h" "$TMP/out" || { echo "FAIL: post-fec delta text"; cat "$TMP/out"; fail=1; }

# Bad input -> 2 with one "error: file:line: ..." line, and nothing stored.
DB=$TMP/input.db
for bad in empty.txt junk.bin other_kind.yaml qsfp28_truncated.txt mlxlink_truncated.txt telemetry_bad_time.csv; do
  expect 2 "bad input $bad" -- "$BIN" optics ingest --db "$DB" --at $AT $F/qsfp28_healthy.txt $F/$bad
  if [ "$(wc -l <"$TMP/err")" != 1 ] || ! grep -q "^error: $F/$bad:[0-9]*: " "$TMP/err"; then
    echo "FAIL: $bad message:"; cat "$TMP/err"; fail=1
  fi
done
[ ! -e "$DB" ] || { echo "FAIL: bad input created the database"; fail=1; }
# A capture without a time gets the ingest time (UTC now), shown in the output.
expect 0 "no time: ingest time" -- "$BIN" optics ingest --db "$TMP/now-default.db" $F/sfp_healthy.txt
grep -Eq "^$F/sfp_healthy.txt: stored 1 reading of eth2 at 20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z \(ingest time: the capture carries none\), ethtool-sff8472" "$TMP/out" || { echo "FAIL: ingest time not shown"; cat "$TMP/out"; fail=1; }
expect 2 "bad --at" -- "$BIN" optics ingest --db "$DB" --at yesterday $F/sfp_healthy.txt
expect 2 "status without db" -- "$BIN" optics status --db "$TMP/none.db"
echo "plain text" >"$TMP/text.db"
expect 2 "db is not sqlite" -- "$BIN" optics status --db "$TMP/text.db"
expect 0 "--at now is explicit" -- "$BIN" optics ingest --db "$TMP/now.db" --at now $F/sfp_healthy.txt

# Real captures (tests/fixtures/real/SOURCES.md): each file's verdicts, exit 1 when any link
# is not healthy. --verbose lists every unused line with its number and why.
R=tests/fixtures/real/optics
real() {  # real FILE EXIT "SUMMARY"
  local db="$TMP/real-$(basename "$1" .txt).db"
  expect 0 "ingest real $1" -- "$BIN" optics ingest --db "$db" --at $AT --verbose "$R/$1"
  grep -q "^$R/$1:[0-9]*: skipped (" "$TMP/out" || { echo "FAIL: $1: no skipped lines listed"; cat "$TMP/out"; fail=1; }
  expect "$2" "status real $1" -- "$BIN" optics status --db "$db"
  grep -q "^$3\$" "$TMP/out" || { echo "FAIL: $1: want '$3'"; cat "$TMP/out"; fail=1; }
}
real ethtool_sfp_10gsr_commented.txt 0 "summary: 0 quarantine, 1 watch, 0 invalid-data, 0 healthy"
expect 1 "watch with --strict" -- "$BIN" optics status --db "$TMP/real-ethtool_sfp_10gsr_commented.db" --strict
real ethtool_sfp_10gsr_bnxt_garbage_dom.txt 3 "summary: 0 quarantine, 0 watch, 1 invalid-data, 0 healthy"
real sonic_eeprom_dom_qsfp28_aoc.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 1 healthy"
real sonic_eeprom_dom_qsfpdd_zr.txt 1 "summary: 1 quarantine, 0 watch, 0 invalid-data, 0 healthy"
real sonic_eeprom_dom_osfp_copper.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 1 healthy"
real sonic_eeprom_dom_all_ports.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 2 healthy"
real nxos_details_ntc_1.txt 1 "summary: 3 quarantine, 0 watch, 0 invalid-data, 1 healthy"
real nxos_details_ntc_2.txt 3 "summary: 0 quarantine, 0 watch, 2 invalid-data, 3 healthy"
real arista_transceiver_ntc_1.txt 3 "summary: 0 quarantine, 0 watch, 1 invalid-data, 4 healthy"
real arista_transceiver_ntc_2.txt 1 "summary: 1 quarantine, 0 watch, 1 invalid-data, 4 healthy"
real arista_transceiver_detail_ntc.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 9 healthy"
real nxos_details_genie_3.txt 3 "summary: 0 quarantine, 1 watch, 3 invalid-data, 3 healthy"
real junos_diagnostics_optics_genie_2.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 1 healthy"
real iosxr_controllers_optics_genie_2.txt 1 "summary: 1 quarantine, 0 watch, 0 invalid-data, 0 healthy"
real iosxr_controllers_optics_genie_3.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 1 healthy"
real iosxr_controllers_optics_genie_4.txt 1 "summary: 4 quarantine, 0 watch, 0 invalid-data, 0 healthy"
real mlxlink_bf3_qsfp28_dac_m_c.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 2 healthy"
real ethtool_qsfp_sr4_dark_cumulus.txt 1 "summary: 1 quarantine, 0 watch, 0 invalid-data, 0 healthy"
real ethtool_qsfp28_sr4_cumulus.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 1 healthy"
real ethtool_cmis_qsfpdd_400g_xdr4_netdev.txt 0 "summary: 0 quarantine, 1 watch, 0 invalid-data, 0 healthy"
grep -q "temperature 70.49 C at or above high warning 70.00 C" "$TMP/out" || { echo "FAIL: CMIS temperature warning"; cat "$TMP/out"; fail=1; }
real ethtool_cmis_qsfpdd_dac_netdev.txt 0 "summary: 0 quarantine, 0 watch, 0 invalid-data, 1 healthy"
expect 0 "verbose line numbers" -- "$BIN" optics ingest --db "$TMP/v.db" --at $AT --verbose $R/ethtool_sfp_10gsr_commented.txt
grep -q "^$R/ethtool_sfp_10gsr_commented.txt:1: skipped (not a 'key : value' line of ethtool -m output): #!/bin/bash$" "$TMP/out" || { echo "FAIL: verbose line 1"; cat "$TMP/out"; fail=1; }

# Issue 16 item 28: ingest prints one summary line per file, the readings with --verbose.
expect 0 "ingest summary" -- "$BIN" optics ingest --db "$TMP/sum.db" $F/telemetry_trend.csv $R/iosxr_controllers_optics_genie_4.txt
[ "$(wc -l <"$TMP/out")" = 2 ] || { echo "FAIL: ingest printed more than one line per file"; cat "$TMP/out"; fail=1; }
grep -q "^$F/telemetry_trend.csv: stored 6 readings of spine1/swp7 from 2026-03-01T00:00:00Z to 2026-03-06T00:00:00Z, telemetry$" "$TMP/out" || { echo "FAIL: summary line"; cat "$TMP/out"; fail=1; }
grep -q "^$R/iosxr_controllers_optics_genie_4.txt: stored 4 readings of 4 links at .*; 374 lines not used" "$TMP/out" || { echo "FAIL: summary of 4 links"; cat "$TMP/out"; fail=1; }
expect 0 "ingest verbose" -- "$BIN" optics ingest --db "$TMP/sum.db" --verbose $F/telemetry_trend.csv
[ "$(grep -c "^stored spine1/swp7 " "$TMP/out")" = 6 ] || { echo "FAIL: --verbose lists the readings"; cat "$TMP/out"; fail=1; }

# Issue 16 items 15/21: '-' is stdin (a link name is then needed), --json - is stdout,
# --json PATH writes the file beside the text, a write error is exit 2.
expect 2 "stdin without a link" -- bash -c "\"$BIN\" optics ingest --db \"$TMP/stdin.db\" - < $F/qsfp28_copper.txt"
expect 0 "stdin with --link" -- bash -c "\"$BIN\" optics ingest --db \"$TMP/stdin.db\" --at $AT --link leaf9/swp9 - < $F/sfp_healthy.txt"
grep -q "^-: stored 1 reading of leaf9/swp9 at $AT" "$TMP/out" || { echo "FAIL: stdin ingest"; cat "$TMP/out"; fail=1; }
expect 0 "--json -" -- "$BIN" optics status --db "$TMP/stdin.db" --json -
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" || { echo "FAIL: --json - is not JSON"; fail=1; }
expect 0 "--json PATH" -- "$BIN" optics status --db "$TMP/stdin.db" --json "$TMP/status.json"
grep -q "^summary: " "$TMP/out" && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/status.json" || { echo "FAIL: --json PATH"; fail=1; }
expect 2 "stdout write error" -- bash -c "\"$BIN\" optics status --db \"$TMP/stdin.db\" --json > /dev/full"
grep -q "^error: <stdout>: --json: cannot write the output" "$TMP/err" || { echo "FAIL: write error message"; cat "$TMP/err"; fail=1; }
expect 2 "unwritable --json" -- "$BIN" optics quarantine --db "$TMP/stdin.db" --json "$TMP/no/such/dir/q.json"

# Issue 16 item 14: control characters from the input or a flag reach the terminal escaped.
expect 0 "escape control characters" -- "$BIN" optics ingest --db "$TMP/esc.db" --at $AT --link $'leaf\x1b[2Jx' --verbose $F/sfp_healthy.txt
if grep -q $'\x1b' "$TMP/out"; then echo "FAIL: an ESC byte reached stdout"; fail=1; fi
grep -q 'leaf\\x1b\[2Jx' "$TMP/out" || { echo "FAIL: escaped link name"; cat "$TMP/out"; fail=1; }
expect 0 "status escapes" -- "$BIN" optics status --db "$TMP/esc.db"
if grep -q $'\x1b' "$TMP/out"; then echo "FAIL: an ESC byte reached stdout (status)"; fail=1; fi

# Issue 16 item 12: a database with overwritten pages is refused (with its path) and not
# written; status does not put a schema into an empty file.
DB=$TMP/corrupt.db
expect 0 "ingest before corruption" -- "$BIN" optics ingest --db "$DB" $F/telemetry_trend.csv $F/qsfp28_healthy.txt
python3 - "$DB" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[2 * 4096 + 100:3 * 4096] = b"\x5a" * (4096 - 100)
open(sys.argv[1], "wb").write(b)
PY
sum_before=$(cksum <"$DB")
expect 2 "ingest into a corrupt db" -- "$BIN" optics ingest --db "$DB" --at $AT $F/sfp_healthy.txt
grep -q "^error: $DB: --db: the optics database is corrupt" "$TMP/err" || { echo "FAIL: corrupt db message"; cat "$TMP/err"; fail=1; }
[ "$(cksum <"$DB")" = "$sum_before" ] || { echo "FAIL: the corrupt database was written"; fail=1; }
expect 2 "status of a corrupt db" -- "$BIN" optics status --db "$DB"
grep -q "^error: $DB: --db: " "$TMP/err" || { echo "FAIL: status names the db"; cat "$TMP/err"; fail=1; }
: >"$TMP/empty.db"
expect 2 "status of an empty file" -- "$BIN" optics status --db "$TMP/empty.db"
[ ! -s "$TMP/empty.db" ] && [ ! -e "$TMP/empty.db-wal" ] || { echo "FAIL: status wrote into an empty file"; fail=1; }

# Kill during ingest: the first file stays whole, the second leaves no trace.
DB=$TMP/kill.db
expect 0 "ingest before kill" -- "$BIN" optics ingest --db "$DB" --at $AT $F/qsfp28_healthy.txt
LOSSLESS_OPTICS_TEST_KILL_AFTER_ROWS=4:kill "$BIN" optics ingest --db "$DB" --at $AT $F/qsfpdd_healthy.txt >/dev/null 2>&1
rc=$?
[ $rc -ge 128 ] || { echo "FAIL: kill hook did not kill (rc $rc)"; fail=1; }
expect 0 "status after kill" -- "$BIN" optics status --db "$DB" --json
python3 -c 'import json,sys; l=[(x["link"],x["readings"]) for x in json.load(open(sys.argv[1]))["links"]]; sys.exit(0 if l==[("leaf1/swp1",1)] else print("FAIL: after kill", l) or 1)' "$TMP/out" || fail=1

exit $fail
