"""Gradio tabs: one module per tab, UI only. Each exposes ``build()``; the maths lives in engines/."""
