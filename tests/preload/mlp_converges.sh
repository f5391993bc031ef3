#!/bin/sh
# examples/mlp_train under the shim's fp16 autocast: with the loss scaler it
# converges (final loss below 0.05, from about 10); without it the gradients
# underflow in fp16 and the loss stalls (above 0.5).
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
echo "mlp_converges: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
