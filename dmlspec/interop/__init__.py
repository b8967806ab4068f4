"""Portable test vectors: export cases as DxDispatch models and ONNX node tests, run them back."""
