"""Engines: the maths behind each tab. Pure Python + PyTorch/onnxruntime; never imports gradio."""
