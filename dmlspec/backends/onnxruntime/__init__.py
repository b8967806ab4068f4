"""dmlspec.backends.onnxruntime."""
