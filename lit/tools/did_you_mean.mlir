// A misspelt op name or pass option gets the closest real one.
// RUN: not cortex-opt %s 2>&1 | filecheck %s --check-prefix=OP
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-dce{mod=power_save}' 2>&1 | filecheck %s --check-prefix=OPTION

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = cortex.rleu %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// OP:     did_you_mean.mlir:6:8: error: unknown operation 'cortex.rleu' (the 'cortex' dialect has no such op); did you mean 'cortex.relu'?
// OPTION: error: pass 'cortex-dce' has no option 'mod' (did you mean 'mode'?); its options are mode
