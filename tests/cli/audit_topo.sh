#!/usr/bin/env bash
# End-to-end checks of `lossless audit topo`: exit codes and key output.
# Usage: bash tests/cli/audit_topo.sh <path-to-lossless>   (from the repo root)
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN=${1:?usage: audit_topo.sh <lossless binary>}
F=tests/fixtures/topo
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
fails=0

# check NAME EXPECTED_RC GREP_PATTERN -- ARGS...
check() {
  local name=$1 want=$2 pattern=$3
  shift 4
  "$BIN" audit topo "$@" >"$OUT" 2>&1
  local rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAIL $name: exit $rc, want $want"; head -20 "$OUT"; fails=$((fails + 1)); return
  fi
  if [[ -n $pattern ]] && ! grep -Eq -- "$pattern" "$OUT"; then
    echo "FAIL $name: output lacks /$pattern/"; head -20 "$OUT"; fails=$((fails + 1)); return
  fi
  echo "ok   $name"
}

check dgx 0 'GPU7 +mlx5_7 +PIX +yes +1 +pass' -- $F/dgx_h100_8gpu_8nic.txt
check swapped 0 'NCCL_IB_HCA=mlx5_1,mlx5_0,mlx5_3,mlx5_2,mlx5_5,mlx5_4,mlx5_7,mlx5_6' -- $F/nic_order_swapped.txt
check bond 0 'not paired with any GPU: mlx5_bond_0, mlx5_bond_1' -- $F/ten_nics_bond.txt
check shared 0 'GPU3 +mlx5_1 x2 +PXB' -- $F/shared_nics_4gpu_2nic.txt
check old_driver 0 'GPU2 +mlx5_2 +PXB' -- $F/old_driver_named_nics.txt
check spaces 0 'verdict: pass' -- $F/spaces_not_tabs.txt
check sys 1 'GPU3 -> mlx5_3 \(NIC3\) is SYS: crosses the CPU socket' -- $F/gpu_without_local_nic.txt
check root_complex 1 'GPU2 -> mlx5_2 \(NIC2\) is NODE' -- $F/cross_root_complex.txt
check vm 3 'verdict: indeterminate' -- $F/vm_all_phb.txt
check no_nic 3 'no NICs in the matrix' -- $F/two_gpu_no_nic.txt
check stdin 0 'verdict: pass' -- - <$F/dgx_h100_8gpu_8nic.txt

check misaligned 2 '^error: tests/fixtures/topo/bad_misaligned_row.txt:4: GPU2/NIC3: expected a link' -- $F/bad_misaligned_row.txt
check unknown_token 2 'bad_unknown_token.txt:3: GPU1/NIC1: .*"PXQ"' -- $F/bad_unknown_token.txt
check diagonal 2 'bad_diagonal.txt:7: NIC1/NIC1' -- $F/bad_diagonal.txt
check asymmetric 2 'bad_asymmetric.txt:7: .*not symmetric' -- $F/bad_asymmetric.txt
check missing_row 2 'bad_missing_row.txt:5: row' -- $F/bad_missing_row.txt
check empty 2 'empty.txt:1: expected an nvidia-smi topo -m matrix, got an empty file$' -- $F/empty.txt
check nccl_given 2 'g2_allreduce_healthy.log:1: this is nccl-tests output' -- tests/fixtures/nccl/g2_allreduce_healthy.log
check binary 2 'binary.bin:1: binary data' -- tests/fixtures/nccl/binary.bin
check missing 2 'nope.txt: cannot open' -- $F/nope.txt

check json 0 '"verdict": "pass"' -- $F/dgx_h100_8gpu_8nic.txt --json
check json_fail 1 '' -- $F/gpu_without_local_nic.txt --json
if python3 - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "fail", d["verdict"]
p = d["pairs"]
assert len(p) == 4
assert p[3] == {**p[3], "gpu": "GPU3", "nic": "mlx5_3", "link": "SYS", "numa_match": False, "verdict": "fail"}, p[3]
assert p[0]["link"] == "PIX" and p[0]["numa_match"] is True and p[0]["verdict"] == "pass"
PY
then echo "ok   json_fields"; else echo "FAIL json_fields"; fails=$((fails + 1)); fi

# Real captures (tests/fixtures/real/SOURCES.md): exit code and the key line each; a file
# in the folder without an entry here fails.
R=tests/fixtures/real/topo
declare -A REAL_RC=(
  [dlperf_v100_8gpu_1nic.txt]='1|GPU4 -> mlx5_0 \(mlx5_0\) is SYS'
  [fleetx_v100_8gpu_1nic_node.txt]='1|GPU7 +mlx5_0 x8 +NODE'
  [stelline_rtx6000ada_4gpu_4nic.txt]='1|no NIC order fixes the failing pairs'
  [della_a100_2gpu_2nic_tabs.txt]='1|GPU1 +mlx5_1 +NODE +yes +1 +fail'
  [traverse_v100_4gpu_4nic_tabs.txt]='1|GPU3 +mlx5_3 +NODE +yes +8 +fail'
)
for f in "$R"/*; do
  b=$(basename "$f")
  if [[ -z ${REAL_RC[$b]+x} ]]; then echo "FAIL real_$b: no expected exit code here"; fails=$((fails + 1)); continue; fi
  check "real_$b" "${REAL_RC[$b]%%|*}" "${REAL_RC[$b]#*|}" -- "$f"
done

[[ $fails -eq 0 ]] || { echo "$fails check(s) failed"; exit 1; }
echo "all audit topo checks passed"
