#!/usr/bin/env bash
# End-to-end checks of `lossless audit nccl`: exit codes and key output.
# Usage: bash tests/cli/audit_nccl.sh <path-to-lossless>   (from the repo root)
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN=${1:?usage: audit_nccl.sh <lossless binary>}
F=tests/fixtures/nccl
OUT=$(mktemp)
ERR=$(mktemp)
trap 'rm -f "$OUT" "$ERR"' EXIT
fails=0

# check NAME EXPECTED_RC GREP_PATTERN -- ARGS...: run, compare exit code, grep stdout+stderr.
check() {
  local name=$1 want=$2 pattern=$3
  shift 4
  "$BIN" audit nccl "$@" >"$OUT" 2>"$ERR"
  local rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAIL $name: exit $rc, want $want"; cat "$OUT" "$ERR" | head -20; fails=$((fails + 1)); return
  fi
  if [[ -n $pattern ]] && ! cat "$OUT" "$ERR" | grep -Eq -- "$pattern"; then
    echo "FAIL $name: output lacks /$pattern/"; cat "$OUT" "$ERR" | head -20; fails=$((fails + 1)); return
  fi
  echo "ok   $name"
}

NDR=(--preset ib-ndr --nics-per-node 8)
check healthy_g2 0 'verdict: pass' -- $F/g2_allreduce_healthy.log "${NDR[@]}"
check healthy_g3 0 'best 94\.0%' -- $F/g3_allreduce_healthy.log "${NDR[@]}"
check legacy_g1 0 'all_gather \(inferred from the table\) \[G1 legacy\]' -- $F/g1_allgather_legacy.log "${NDR[@]}"
check noisy 0 '16 ranks on 2 nodes' -- $F/g2_noisy_srun_crlf.log --nic-gbps 400 --nics-per-node 8
check two_runs 0 'run 2 \(line 40\): all_gather' -- $F/g3_two_runs.log "${NDR[@]}"
check below 1 'FAIL: best large-message busbw is 75\.5%' -- $F/g2_below_line_rate.log "${NDR[@]}"
check below_lax 0 'verdict: pass' -- $F/g2_below_line_rate.log "${NDR[@]}" --min-efficiency 75%
check wrong 1 'FAIL: line 30: 1024 wrong elements' -- $F/g2_wrong_elements.log "${NDR[@]}"
check falling 1 'busbw falls to 290\.40 GB/s' -- $F/g2_falling_busbw.log "${NDR[@]}"
check inplace 1 'in-place busbw 210\.50 GB/s' -- $F/g2_inplace_low.log "${NDR[@]}"
check nvls 3 'INDETERMINATE: line 28: .*NVLS' -- $F/g2_above_line_rate_nvls.log "${NDR[@]}"
check single 3 'fabric is not exercised' -- $F/g2_single_node.log "${NDR[@]}"
check truncated 1 'table ends without its footer' -- $F/g2_truncated_end.log "${NDR[@]}"
check small 3 'judged only from 256MiB' -- $F/g2_small_sizes_only.log "${NDR[@]}"
check no_rate 0 'efficiency not judged' -- $F/g2_allreduce_healthy.log
check several_files 1 'overall verdict: fail' -- $F/g2_allreduce_healthy.log $F/g2_wrong_elements.log "${NDR[@]}"
check pass_and_indeterminate 3 'overall verdict: indeterminate' -- $F/g2_allreduce_healthy.log $F/g2_small_sizes_only.log "${NDR[@]}"
check stdin 0 'verdict: pass' -- - "${NDR[@]}" <$F/g2_allreduce_healthy.log

# Bad input: exit 2 with one line naming file and line.
check corrupt 2 '^error: tests/fixtures/nccl/g2_corrupt_row.log:27: busbw: expected a non-negative number, got "25O.20"$' -- $F/g2_corrupt_row.log
check columns 2 'g2_missing_columns.log:28: row: expected 13 columns' -- $F/g2_missing_columns.log
check empty 2 'empty.log:1: expected an nccl-tests log, got an empty file$' -- $F/empty.log
check binary 2 'binary.bin:1: binary data' -- $F/binary.bin
check header_only 2 'header_only.log:16: no nccl-tests result rows' -- $F/header_only.log
check topo_given 2 'nvidia-smi topo -m matrix, not nccl-tests output' -- tests/fixtures/topo/dgx_h100_8gpu_8nic.txt
check missing 2 'nope.log: cannot open' -- $F/nope.log
check directory 2 'is a directory' -- $F
check preset_typo 2 'did you mean ib-ndr' -- $F/g2_allreduce_healthy.log --preset ib-nrd --nics-per-node 8
check rate_alone 2 'go together' -- $F/g2_allreduce_healthy.log --nic-gbps 400
check bad_eff 2 'min-efficiency' -- $F/g2_allreduce_healthy.log --min-efficiency lots

# JSON contract.
check json 0 '' -- $F/g2_allreduce_healthy.log "${NDR[@]}" --json
if python3 - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"][0]
assert d["verdict"] == "pass", d["verdict"]
assert f["collective"] == "all_reduce", f["collective"]
assert abs(f["peak_busbw_gbs"] - 376.2) < 1e-9
assert f["peak_size_bytes"] == 4294967296
assert abs(f["avg_busbw_gbs"] - 265.571) < 1e-9
assert f["verdict"] == "pass"
assert f["runs"][0]["nodes"] == 2 and len(f["runs"][0]["rows"]) == 7
PY
then echo "ok   json_fields"; else echo "FAIL json_fields"; fails=$((fails + 1)); fi
check json_error 2 '"verdict": "error"' -- $F/empty.log --json

# Real logs (tests/fixtures/real/SOURCES.md): exit code and the key line each; a file in
# the folder without an entry here fails.
R=tests/fixtures/real/nccl
declare -A REAL_RC=(
  [aws_p4d_a100_2x8_efa_mpi_tagged.log]='0|all_reduce \(inferred from the table\) \[G1 legacy\], 16 ranks on 2 nodes'
  [gcp_a3mega_h100_2x8_tcpxo.log]='0|peak busbw 338\.82 GB/s'
  [oci_b4_a100_2x8_elided_ranks.log]='0|16 ranks on 2 nodes'
  [oci_mi300x_2x8_rccl.log]='0|list 4 of 16 ranks'
  [oci_gb200_32x4_cut_top.log]='1|all_reduce \[G3 current\], 128 ranks$'
  [llminsights_a40_4gpu_sys_p2p_off_table_only.log]='0|unknown \[G2 classic\], ranks unknown'
  [llminsights_dgxa100_4gpu_inplace_dip_table_only.log]='1|all_reduce \(inferred from the table\) \[G2 classic\], ranks unknown'
)
for f in "$R"/*; do
  b=$(basename "$f")
  if [[ -z ${REAL_RC[$b]+x} ]]; then echo "FAIL real_$b: no expected exit code here"; fails=$((fails + 1)); continue; fi
  check "real_$b" "${REAL_RC[$b]%%|*}" "${REAL_RC[$b]#*|}" -- "$f"
done
check real_b4_line_rate 0 'best 94\.2%' -- $R/oci_b4_a100_2x8_elided_ranks.log --nic-gbps 100 --nics-per-node 16

[[ $fails -eq 0 ]] || { echo "$fails check(s) failed"; exit 1; }
echo "all audit nccl checks passed"
