"""The IREE backend: its legalisation passes over the lowered module (`outline_segments`,
`pad_as_tensor_pad`, `crop_generic_inputs`, `raise_pooling`, `shallow_conv_generic`, `expand_powf`),
the `iree-compile` wrapper with its flags and on-disk cache (`compiler`), and the program that
compiles the segments into one IREE module bound into the NumPy host code (`program`)."""
