"""What a user reads about a module: the graph view (`graph_view.py`: stages with their profiled times, as a
table, a diff or a Graphviz graph) and the quantisation report (`quant_report.py`: what int8 cost, per op).

Above the passes (they read `cortex-profile`'s and `cortex-quantize`'s results), beside the lowering
(neither imports the other); cortex-opt's `--view`/`--quant-report` flags and the driver call them.
"""
