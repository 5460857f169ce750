"""Engines: the maths behind each tab. Pure Python + PyTorch/onnxruntime; never imports gradio.

onnxruntime's telemetry (1DS) writes a session file to ``$TMPDIR/.ses`` and an event store with a
device id under ``~/.cache/Microsoft/DeveloperTools/`` as soon as it is imported, and queues events
for Microsoft's collector; ``ort.disable_telemetry_events()`` comes too late to stop either. The
showcase runs offline and sends nothing, so ``ORT_DISABLE_TELEMETRY`` is set here, before any engine
module can import onnxruntime (an explicit setting in the environment is kept).
"""
import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
