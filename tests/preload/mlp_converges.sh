#!/bin/sh
# examples/mlp_train under the shim's fp16 autocast: with the loss scaler it
# converges (final loss below 0.05, from about 10); without it the gradients
# underflow in fp16 and the loss stalls (above 0.5). The accuracy audit of
# that stalled run (every 10th call) finds the backward products' error and
# writes a policy that keeps exactly those in fp32 and lowers the forward
# ones; with that policy and no scaler the loss falls below 0.05 again, the
# forward products lowered. AMPSHIM_AUDIT=auto reaches the same in one run.
# usage: mlp_converges.sh PRELOAD MLP_TRAIN
preload=$1 mlp=$2
with=$(AMPSHIM_DTYPE=fp16 AMPSHIM_OUTPUT=round LD_PRELOAD=$preload "$mlp" | awk '/^final loss/ {print $3}')
without=$(AMPSHIM_DTYPE=fp16 AMPSHIM_OUTPUT=round LD_PRELOAD=$preload "$mlp" --no-scaler | awk '/^final loss/ {print $3}')
echo "final loss with the scaler: $with; without: $without"
passed=0 failed=0
if awk -v v="$with" 'BEGIN { exit !(v != "" && v < 0.05) }'; then passed=$((passed + 1)); else
    echo "FAIL: with the scaler the loss did not fall below 0.05"; failed=$((failed + 1)); fi
if awk -v v="$without" 'BEGIN { exit !(v != "" && v > 0.5) }'; then passed=$((passed + 1)); else
    echo "FAIL: without the scaler the loss did not stall (fp16 underflow not reproduced)"; failed=$((failed + 1)); fi
policy=$(mktemp)
AMPSHIM_DTYPE=fp16 AMPSHIM_OUTPUT=round AMPSHIM_AUDIT=follow AMPSHIM_AUDIT_SAMPLE=10 \
    AMPSHIM_AUDIT_POLICY=$policy LD_PRELOAD=$preload "$mlp" --no-scaler >/dev/null 2>&1
entries=$(grep -v '^#' "$policy" | sed 's/ *#.*//' | sort | tr '\n' ' ')
want="cpu:cblas_sgemm@mlp_train:backward=fp32 cpu:cblas_sgemm@mlp_train:layer=lower "
if [ "$entries" = "$want" ]; then passed=$((passed + 1)); else
    echo "FAIL: the audit's policy is '$entries', not '$want'"; failed=$((failed + 1)); fi
audited=$(AMPSHIM_DTYPE=fp16 AMPSHIM_OUTPUT=round AMPSHIM_POLICY_FILE=$policy AMPSHIM_REPORT=1 \
    LD_PRELOAD=$preload "$mlp" --no-scaler 2>&1)
loss=$(printf '%s\n' "$audited" | awk '/^final loss/ {print $3}')
lowered=$(printf '%s\n' "$audited" | awk '$1 == "cblas_sgemm" && $2 == "mm" {print $5}')
echo "final loss with the audit's policy, no scaler: $loss ($lowered products lowered)"
if awk -v v="$loss" 'BEGIN { exit !(v != "" && v < 0.05) }'; then passed=$((passed + 1)); else
    echo "FAIL: with the audit's policy the loss did not fall below 0.05"; failed=$((failed + 1)); fi
if [ "$lowered" = 6002 ]; then passed=$((passed + 1)); else
    echo "FAIL: $lowered products lowered, not the 6002 forward ones"; failed=$((failed + 1)); fi
# One run under AMPSHIM_AUDIT=auto, no scaler: it decides by itself, in the
# run, what the two runs above decided: the forward products lowered, the
# backward ones fp32; the loss within 10% of plain fp32's. By accuracy alone
# (AMPSHIM_AUDIT_MIN_SPEEDUP=0): these small fp16 products run emulated, which
# never pays, so auto's speed rule would keep them all fp32.
plain=$(env -u LD_PRELOAD "$mlp" --no-scaler | awk '/^final loss/ {print $3}')
auto=$(AMPSHIM_DTYPE=fp16 AMPSHIM_OUTPUT=round AMPSHIM_AUDIT=auto AMPSHIM_AUDIT_MIN_SPEEDUP=0 \
    AMPSHIM_REPORT=1 \
    LD_PRELOAD=$preload "$mlp" --no-scaler 2>&1)
loss=$(printf '%s\n' "$auto" | awk '/^final loss/ {print $3}')
layer=$(printf '%s\n' "$auto" | awk '/^[0-9].*mlp_train:layer/ {getline; print $2}' | tr -d ,)
backward=$(printf '%s\n' "$auto" | awk '/^[0-9].*mlp_train:backward/ {getline; print $2}' | tr -d ,)
echo "final loss under auto, no scaler: $loss (plain fp32: $plain); forward site $layer, backward site $backward"
if awk -v v="$loss" -v p="$plain" 'BEGIN { exit !(v != "" && p != "" && v <= 1.1 * p) }'; then
    passed=$((passed + 1)); else
    echo "FAIL: under auto the loss is not within 10% of fp32's"; failed=$((failed + 1)); fi
if [ "$layer" = lowered ] && [ "$backward" = fp32 ]; then passed=$((passed + 1)); else
    echo "FAIL: auto left the forward site $layer and the backward one $backward"
    failed=$((failed + 1)); fi
rm -f "$policy"
echo "mlp_converges: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
