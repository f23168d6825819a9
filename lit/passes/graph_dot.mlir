// --graph-dot writes the dataflow graph in Graphviz's language: a cluster
// per function (compiled pieces marked), externals in their own cluster per
// block, state and weights in their own shapes, a dotted edge from each call
// to the piece it runs.
// RUN: cortex-opt %l2_static -p cortex-partition --graph-dot=%t.dot > /dev/null
// RUN: filecheck %s --input-file %t.dot

// CHECK:      digraph cortex {
// CHECK:      subgraph "cluster_fn_l2_frame" {
// CHECK:        label="@l2_frame";
// CHECK:        [[FRAME:n[0-9]+]] [label="%frame\ntensor<480x640x3xui8>", shape=invhouse
// CHECK:        [[CALL0:n[0-9]+]] [label="call @l2_frame_compiled_0\n%gray", shape=component
// CHECK:        [[STATE:n[0-9]+]] [label="state \"prev_gray\"\n%prev_gray", shape=cylinder
// CHECK:        label="else";
// CHECK:          [[WC:n[0-9]+]] [label="weight \"wc\"\n%wc", shape=note
// CHECK:          label="external (OpenCV)";
// CHECK-NEXT:       [[SCENE:n[0-9]+]] [label="scene_change\n%scene", shape=box, style="filled,bold"
// CHECK-NEXT:       [[TEXT:n[0-9]+]] [label="text_roi\n%text", shape=box, style="filled,bold"
// CHECK:        label="external (OpenCV)";
// CHECK-NEXT:     [[BLUR:n[0-9]+]] [label="blur_detector\n%sharpness"
// CHECK-NEXT:     [[ENC:n[0-9]+]] [label="encoder\n%encoded"
// CHECK:      subgraph "cluster_fn_l2_frame_compiled_0" {
// CHECK-NEXT:   label="@l2_frame_compiled_0  [compiled]";
// CHECK:        [[GRAY_ARG:n[0-9]+]] [label="%frame\ntensor<480x640x3xui8>"
// CHECK:        [[GRAY:n[0-9]+]] [label="gray\n%gray", shape=box, style="rounded,filled"
// CHECK:      [[FRAME]] -> [[CALL0]] [label="%frame"];
// CHECK:      [[CALL0]] -> [[GRAY_ARG]] [style=dotted, arrowhead=empty, lhead="cluster_fn_l2_frame_compiled_0", label="calls"];
// CHECK:      [[CALL0]] -> [[BLUR]] [label="%gray"];
// CHECK:      [[FRAME]] -> [[ENC]] [label="%frame"];
// CHECK:      }
